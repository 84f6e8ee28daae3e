"""When a scenario does not fit: vLLM's estimated maximum model length, and what would fit instead.

vLLM refuses to start when its KV pool cannot hold one request of ``max_model_len`` tokens
(``vllm/v1/core/kv_cache_utils.py`` ``check_enough_kv_cache_memory``)::

    ValueError: To serve at least one request with the models's max seq len (131072), (16.0 GiB KV
    cache is needed, which is larger than the available KV cache memory (10.8 GiB). Based on the
    available memory, the estimated maximum model length is 88128. Try increasing
    `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.

Its ``estimate_max_model_len`` binary-searches L in [1, max_model_len] for the largest L whose KV
(``cdiv(L, block_size)`` blocks per layer) fits the available KV memory, so the answer is a whole
number of blocks: 88128 = 5508 · 16. :func:`max_model_len_that_fits` does the same search with
the whole memory model (:func:`calc.sizing.scenario.memory_for`) re-evaluated at each L, so the
activation peak follows L where it depends on it (chunked prefill off: the token budget is
max(L, default)); vLLM keeps the pool it measured at the asked L, which is the same answer with
chunked prefill on and a slightly smaller one without.

:func:`what_would_fit` then checks, with the same memory model, the changes a user can make:
a higher ``gpu_memory_utilization`` (≤ :data:`MAX_GPU_MEMORY_UTILIZATION`), a lighter weight or
KV precision, a larger tensor-parallel size, a shorter ``max_model_len``; each says how many
requests of the asked length it holds (vLLM's "Maximum concurrency").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from calc.sizing.scenario import MemoryResult, effective_quantization, memory_for, resolve_serving
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.spec.parallelism import tensor_parallel_sizes
from calc.spec.precision import linear_weight_bytes_per_param
from calc.spec.units import GiB

# The highest gpu_memory_utilization offered: above it the reserve (1 − u) of an 80 GiB GPU is
# under 1.6 GiB, and vLLM's own docs never go past 0.95–0.98; the reserve must also hold the CUDA
# context and graphs (MemoryResult.reserve_ok), which rules out more on small GPUs.
MAX_GPU_MEMORY_UTILIZATION = 0.98
UTILIZATION_STEP = 0.01  # the suggested value is rounded up to whole hundredths
# Tensor-parallel sizes tried (one node; those the heads allow, as calc.plan.search).
TP_CANDIDATES: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)
# Precision changes in order of expected quality cost (calc/data/quantization_quality.json: FP8
# weights and FP8 KV near lossless, INT8 1–3 %, 4-bit more): (quantization, kv_cache_dtype);
# None keeps the scenario's own.
PRECISION_CHANGES: tuple[tuple[str | None, str | None], ...] = (
    ("fp8", None), (None, "fp8"), ("fp8", "fp8"), ("int8", None), ("int8", "fp8"), ("awq", None), ("awq", "fp8"))


def precision_supported(gpu: GPUSpec, precision: str) -> bool:
    """Whether vLLM runs weights (or the KV cache, for ``fp8``) in ``precision`` on ``gpu``.

    FP8: GPUs with FP8 tensor cores (Ada, Hopper, Blackwell, CDNA3), and NVIDIA Ampere, where vLLM
    runs FP8 checkpoints weight-only (Marlin W8A16) and stores an FP8 KV cache; INT8 (W8A8): INT8
    tensor cores; AWQ: every catalog GPU (CUDA sm75+ and ROCm kernels).

    >>> from calc.spec.catalog import get_gpu
    >>> precision_supported(get_gpu("a100-80gb"), "fp8"), precision_supported(get_gpu("h100-sxm"), "int8")
    (True, True)
    """
    if precision == "fp8":
        return gpu.fp8_flops_per_s is not None or (gpu.vendor == "nvidia" and gpu.architecture == "ampere")
    if precision == "int8":
        return gpu.int8_ops_per_s is not None
    return precision in ("awq", "none", "auto")


def _largest_true(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """Largest n in [lo, hi] with ``pred(n)`` for a predicate true up to some point; lo − 1 if none.
    At most ceil(log2(hi − lo + 2)) evaluations (vLLM's binary search)."""
    best = lo - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if pred(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def _memory(arch, gpu, serving, efficiency, *, context_tokens=None, **changes) -> MemoryResult:
    # model_copy skips validation on purpose: a trial max_model_len may be below input + output,
    # which the memory model does not use.
    return memory_for(arch, gpu, serving.model_copy(update=changes), efficiency, concurrency=1,
                      context_tokens=context_tokens)


def max_model_len_that_fits(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig = ServingConfig(),
                            efficiency: Efficiency = Efficiency()) -> int:
    """vLLM's "estimated maximum model length": the largest L ≤ the asked max_model_len whose
    memory stack fits (``MemoryResult.fits``: weights + activations + overhead within the budget
    and one request of L tokens in the KV pool), by binary search over L; 0 when nothing fits.

    With chunked prefill on, the activation peak does not depend on L, so the answer is the KV pool
    in whole blocks: L = floor(pool / (block_size · KV bytes per token)) · block_size.
    Llama-3.1-70B, TP 2 on H100 SXM at u = 0.9: pool 1.54 GiB, 163,840 B per token per GPU,
    1.54 GiB / (16 · 163,840 B) = 631 blocks → 631 · 16 = 10,096.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> max_model_len_that_fits(get_model("meta-llama/Llama-3.1-70B"), get_gpu("h100-sxm"),
    ...                         ServingConfig(tensor_parallel_size=2, max_model_len=32768))
    10096
    """
    asked = resolve_serving(arch, gpu, serving).max_model_len
    found = _largest_true(lambda n: bool(_memory(arch, gpu, serving, efficiency, max_model_len=n).fits), 1, asked)
    return max(found, 0)


@dataclass(frozen=True)
class FitAlternative:
    """One change that makes the scenario fit, checked with the memory model."""

    change: str  # the option changed: gpu_memory_utilization, quantization, kv_cache_dtype, ...
    value: float | int | str
    vllm_flags: str  # the change as vllm serve flags
    max_model_len: int
    max_concurrency: float  # vLLM's "Maximum concurrency": KV pool / one request of max_model_len
    requests_at_context: int  # whole requests of the asked context that fit at once
    meets_goal: bool  # serves the asked context and holds the asked concurrency


@dataclass(frozen=True)
class DoesNotFit:
    """Why a scenario does not fit and what would (vLLM's start-up check, then alternatives)."""

    max_model_len: int  # asked
    context_tokens: int  # tokens per request the user wants served (default max_model_len)
    concurrency: int | None  # requests wanted at once (None: one)
    kv_needed_bytes: float  # per GPU, one request of max_model_len (vLLM's start-up figure)
    kv_available_bytes: float  # per GPU, the KV pool (negative: the weights etc. exceed the budget)
    max_model_len_that_fits: int  # 0: not even the weights fit
    alternatives: tuple[FitAlternative, ...]
    message: str


def _alternative(arch, gpu, serving, efficiency, change, value, flags, *, context_tokens, concurrency,
                 **changes) -> FitAlternative:
    r = _memory(arch, gpu, serving, efficiency, context_tokens=context_tokens, **changes)
    at_context = int(r.max_concurrency_at_context) if bool(r.fits) else 0
    return FitAlternative(change=change, value=value, vllm_flags=flags,
                          max_model_len=int(changes.get("max_model_len", resolve_serving(arch, gpu, serving).max_model_len)),
                          max_concurrency=float(r.max_concurrency) if bool(r.fits) else 0.0,
                          requests_at_context=at_context, meets_goal=bool(r.fits) and at_context >= (concurrency or 1))


def _first(options, arch, gpu, serving, efficiency, **goal) -> FitAlternative | None:
    """The first option that meets the goal, else the first that fits at all, else None."""
    made = [_alternative(arch, gpu, serving, efficiency, *o[:3], **goal, **o[3]) for o in options]
    fitting = [a for a in made if a.max_concurrency > 0]
    return next((a for a in fitting if a.meets_goal), fitting[0] if fitting else None)


def what_would_fit(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig = ServingConfig(),
                   efficiency: Efficiency = Efficiency(), *, concurrency: int | None = None,
                   context_tokens: int | None = None) -> DoesNotFit | None:
    """None when the scenario fits (one request of max_model_len), else the figures of vLLM's
    refusal and up to four alternatives, each the cheapest of its kind that meets the goal (the
    asked max_model_len, and ``concurrency`` requests of ``context_tokens`` when given) or, when
    none does, the cheapest that fits at all:

    (a) the smallest gpu_memory_utilization (hundredths, ≤ 0.98, reserve holding the CUDA context
        and graphs); (b) the first precision change of :data:`PRECISION_CHANGES` the GPU runs
        that is lighter than the scenario's own; (c) the smallest larger TP size the heads allow;
    (d) max_model_len = :func:`max_model_len_that_fits` (meets the goal only when the asked
        context, if shorter than max_model_len, still fits with the asked concurrency).

    Llama-3.1-70B on 2 × H100 SXM at 32k (the issue's example): 10,096 tokens fit; FP8 weights
    hold 6.7 requests of 32k, TP 4 13.7.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> d = what_would_fit(get_model("meta-llama/Llama-3.1-70B"), get_gpu("h100-sxm"),
    ...                    ServingConfig(tensor_parallel_size=2, max_model_len=32768))
    >>> [(a.change, a.value, round(a.max_concurrency, 1)) for a in d.alternatives]
    [('gpu_memory_utilization', 0.95, 1.1), ('quantization', 'fp8', 6.7), ('tensor_parallel_size', 4, 13.7), ('max_model_len', 10096, 1.0)]
    """
    rs = resolve_serving(arch, gpu, serving)
    length = rs.max_model_len
    context = length if context_tokens is None else int(context_tokens)
    base = _memory(arch, gpu, serving, efficiency, context_tokens=length)
    if bool(base.fits):
        return None
    goal = dict(context_tokens=min(context, length), concurrency=concurrency)
    alts: list[FitAlternative] = []

    # (a) gpu_memory_utilization: monotone in u, so bisect over whole hundredths.
    step = round(1 / UTILIZATION_STEP)
    lo, hi = int(serving.gpu_memory_utilization * step + 1e-9) + 1, round(MAX_GPU_MEMORY_UTILIZATION * step)

    def util_ok(n: int, need_goal: bool) -> bool:
        r = _memory(arch, gpu, serving, efficiency, context_tokens=goal["context_tokens"], gpu_memory_utilization=n / step)
        ok = bool(r.fits) and bool(r.reserve_ok)
        return ok and (not need_goal or int(r.max_concurrency_at_context) >= (concurrency or 1))

    for need_goal in (True, False):
        # the predicate is "not ok" up to the smallest ok hundredth: bisect its complement
        n = _largest_true(lambda k: not util_ok(k, need_goal), lo, hi) + 1
        if lo <= n <= hi:
            u = n / step
            alts.append(_alternative(arch, gpu, serving, efficiency, "gpu_memory_utilization", u,
                                     f"--gpu-memory-utilization {u:.2f}", gpu_memory_utilization=u, **goal))
            break

    # (b) precision: lighter than the scenario's own, supported by the GPU.
    quant = effective_quantization(arch, serving.quantization)
    own_bytes = linear_weight_bytes_per_param(dtype=serving.dtype, quantization=quant)
    kv_is_8bit = serving.kv_cache_dtype.startswith("fp8")
    options = []
    for q, k in PRECISION_CHANGES:
        if q is not None and (not precision_supported(gpu, q)
                              or linear_weight_bytes_per_param(dtype=serving.dtype, quantization=q) >= own_bytes):
            continue
        if k is not None and (kv_is_8bit or not precision_supported(gpu, k)):
            continue
        changes = {**({"quantization": q} if q else {}), **({"kv_cache_dtype": k} if k else {})}
        flags = " ".join(f"--{name.replace('_', '-')} {v}" for name, v in changes.items())
        options.append((",".join(changes), ",".join(changes.values()), flags, changes))
    best = _first(options, arch, gpu, serving, efficiency, **goal)
    if best is not None:
        alts.append(best)

    # (c) tensor parallelism: the smallest larger size the heads allow.
    tps = [t for t in tensor_parallel_sizes(arch, TP_CANDIDATES) if t > serving.tensor_parallel_size]
    best = _first([("tensor_parallel_size", t, f"--tensor-parallel-size {t}", {"tensor_parallel_size": t})
                   for t in tps], arch, gpu, serving, efficiency, **goal)
    if best is not None:
        alts.append(best)

    # (d) a shorter max_model_len (vLLM's suggestion).
    fit_len = max_model_len_that_fits(arch, gpu, serving, efficiency)
    if fit_len > 0:
        r = _memory(arch, gpu, serving, efficiency, context_tokens=min(context, fit_len), max_model_len=fit_len)
        at_context = int(r.max_concurrency_at_context) if context <= fit_len else 0
        alts.append(FitAlternative(change="max_model_len", value=fit_len, vllm_flags=f"--max-model-len {fit_len}",
                                   max_model_len=fit_len, max_concurrency=float(r.max_concurrency),
                                   requests_at_context=at_context, meets_goal=at_context >= (concurrency or 1)))
    needed = float(base.kv_bytes_per_request_startup)
    available = float(base.kv_pool_bytes)
    return DoesNotFit(max_model_len=length, context_tokens=context, concurrency=concurrency,
                      kv_needed_bytes=needed, kv_available_bytes=available, max_model_len_that_fits=fit_len,
                      alternatives=tuple(alts), message=does_not_fit_message(
                          max_model_len=length, kv_needed_bytes=needed, kv_available_bytes=available,
                          max_model_len_that_fits=fit_len, alternatives=alts, context_tokens=context))


def does_not_fit_message(*, max_model_len: int, kv_needed_bytes: float, kv_available_bytes: float,
                         max_model_len_that_fits: int, alternatives, context_tokens: int) -> str:
    """One line in the manner of vLLM's refusal, then the alternatives and what each holds.

    >>> does_not_fit_message(max_model_len=32768, kv_needed_bytes=5 * 2**30, kv_available_bytes=1.54 * 2**30,
    ...                      max_model_len_that_fits=10096, alternatives=[], context_tokens=32768)
    'To serve one request of max_model_len 32,768, 5.00 GiB of KV cache per GPU is needed, more than the 1.54 GiB available; the estimated maximum model length is 10,096.'
    """
    if kv_available_bytes <= 0:
        head = (f"The weights, activations and overhead exceed the memory budget per GPU by "
                f"{-kv_available_bytes / GiB:,.2f} GiB: no max_model_len fits.")
    else:
        head = (f"To serve one request of max_model_len {max_model_len:,}, {kv_needed_bytes / GiB:,.2f} GiB of KV cache "
                f"per GPU is needed, more than the {kv_available_bytes / GiB:,.2f} GiB available; ")
        head += (f"the estimated maximum model length is {max_model_len_that_fits:,}." if max_model_len_that_fits
                 else "not even one block fits.")
    if not alternatives:
        return head
    parts = [f"{a.vllm_flags} ({a.max_concurrency:,.1f} requests of {a.max_model_len:,} tokens"
             + (", meets the goal)" if a.meets_goal else ")") for a in alternatives]
    return f"{head} Alternatives: " + "; ".join(parts) + "."
