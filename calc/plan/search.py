"""Deployment planner: one vectorized evaluation of every GPU × TP × weight precision × KV
precision × max_num_seqs, the replicas each needs to carry a request rate, and which meet the SLA.

Method (every number from the functions the pages use: one source of truth):
  1. Engine numbers per (GPU, TP, weights, KV) from :func:`calc.timing.estimate.engine_numbers`,
     stacked into arrays; the memory stack from :func:`calc.sizing.scenario.memory_model` with the
     same arguments :func:`calc.sizing.scenario.memory_for` passes, broadcast over the grid.
  2. The closed loop (:func:`calc.timing.serving.closed_loop`) with C = max_num_seqs clients per
     replica: the engine runs its full batch of S sequences (fewer where the KV pool or the token
     budget caps it; then the extra clients queue and their wait lands in TTFT). That point's
     TTFT and TPOT are the worst a replica configured with ``--max-num-seqs S`` sees while it
     carries at most its capacity X(S) requests/s (latency grows with load).
  3. Replicas N = ceil(λ / X(S)), or the least N whose utilization keeps a request's wait within
     what the TTFT target leaves (:func:`calc.plan.costs.replicas_for_ttft`): on the mean, the
     mean wait for a free sequence slot (:func:`calc.plan.costs.slot_wait_s`, M/G/c); on a
     percentile, that wait's Erlang-C tail plus the queue of prompts for the prefill room, at
     the percentile (:func:`calc.plan.costs.ttft_quantile_wait_s`). The TTFT judged is the
     full-batch TTFT + that wait; GPUs = N × TP; dollars per hour = price × GPUs.
  4. Out, with the first reason that applies: does not fit (weights + activations + overhead, or one
     max_model_len request, exceed the budget), misses TTFT, misses TPOT, exceeds max GPUs,
     exceeds the budget ($/h), no price (a budget was set but the GPU has no price).
  5. Rank what is left by cost ($/h for the rate, i.e. per request; equal cost: the checkpoint's own
     precision, then the lower end-to-end latency), GPUs, or output tokens/s per GPU; per (GPU, TP, weights, KV) only its best
     max_num_seqs is listed. By default (``one_per_gpu``) the table opens with one row per GPU type,
     its best-ranked option, then the other options in rank order (:func:`distinct_first`): eight
     precision variants of the cheapest GPU no longer hide the next GPUs.

The SLA is judged on the statistic asked for: the mean (the closed loop's steady state) or a
percentile of TTFT (the full-batch TTFT + the queueing waits at that percentile; TPOT on its
full-batch value: with every request decoding in the same batches its spread is small, and the
full batch is the most a replica at that ``max_num_seqs`` runs). The request simulator
(:mod:`calc.plan.percentiles`) then re-checks the listed rows in steady state within a work budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Annotated, Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from calc.plan.costs import deployment_usd_per_hour, replicas_for_ttft, usd_per_million_tokens
from calc.sizing.memory import kv_heads_per_rank
from calc.sizing.memory import sampler_bytes_per_logit
from calc.sizing.layout import rank_numbers
from calc.spec.params import param_counts
from calc.sizing.scenario import (DEFAULT_SM_COUNT, all_to_all_nvlink, default_max_num_batched_tokens,
                                  layout_buffer_bytes, memory_model, model_numbers)
from calc.spec.nodes import node_for
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.spec.parallelism import tensor_parallel_sizes
from calc.spec.quality import PRECISION_SOURCES, PrecisionChoice, precision_choice
from calc.spec.vllm_command import serve_command
from calc.timing.attention_backend import engine_attention_scales
from calc.timing.estimate import engine_numbers
from calc.timing.serving import EngineNumbers, closed_loop
from calc.traffic.prefix_cache import PrefixReuse, check_reuse, prefix_cache
from calc.traffic.workload import covering_window_tokens, cut_lengths, length_cvs

WEIGHT_PRECISIONS: tuple[str, ...] = ("none", "fp8", "int8", "awq")  # vLLM --quantization; none = 16-bit
# Options kept after the table's rows at a percentile: the re-check lists them where it drops a row (PlanResult.spare)
SPARE_ROWS = 4
# ... and, with one row per GPU first, each listed GPU's next options: a GPU whose best row the re-check
# drops keeps its place with its next option (else it would vanish from the table's distinct rows)
SPARE_PER_GPU = 2
KV_PRECISIONS: tuple[str, ...] = ("auto", "fp8")  # vLLM --kv-cache-dtype
TP_CANDIDATES: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)  # one node; only those valid for the heads are kept
MAX_NUM_SEQS_GRID: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
PERCENTILES = ("mean", "p50", "p90", "p95", "p99")
SORTS = ("cost", "gpus", "throughput")
# Pipeline order: an option is out at the first stage it fails; the later the stage, the closer it came.
REASONS = ("does_not_fit", "misses_ttft", "misses_tpot", "exceeds_max_gpus", "exceeds_budget", "no_price", "ok")
DTYPE = "auto"  # the checkpoint's 16-bit type (bfloat16 for the catalog models)


class PlanRequest(BaseModel):
    """What the user asks for: traffic, SLA, limits. Validated at the boundary (names the field)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate_rps: Annotated[float, Field(gt=0.0, le=1e6)]
    input_len: Annotated[int, Field(ge=1, le=10_000_000)]
    output_len: Annotated[int, Field(ge=1, le=1_000_000)]
    ttft_slo_s: Annotated[float, Field(gt=0.0, le=3600.0)]
    tpot_slo_s: Annotated[float, Field(gt=0.0, le=60.0)]
    percentile: Literal["mean", "p50", "p90", "p95", "p99"] = "mean"
    max_gpus: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    budget_usd_per_hour: Annotated[float, Field(gt=0.0, le=1e9)] | None = None
    sort: Literal["cost", "gpus", "throughput"] = "cost"
    top: Annotated[int, Field(ge=1, le=1000)] = 10
    max_model_len: Annotated[int, Field(ge=2, le=100_000_000)] | None = None  # None: a window the lengths fit (model_len)
    gpu_memory_utilization: Annotated[float, Field(gt=0.0, le=1.0)] = 0.9
    enable_chunked_prefill: bool = True
    # How the request lengths vary around input_len / output_len (calc.traffic.workload.length_spec):
    # the slot queue's service-time C² and the percentile check's requests. "fixed": every request alike.
    lengths: Literal["fixed", "uniform", "lognormal"] = "fixed"
    length_spread: Annotated[float, Field(ge=0.0, le=10.0)] = 0.0
    # prefix caching (calc.traffic.prefix_cache): a shared prefix of the prompt, or a multi-turn chat
    shared_prefix_len: Annotated[int, Field(ge=0, le=10_000_000)] = 0
    num_shared_prefixes: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    turns: Annotated[int, Field(ge=1, le=1000)] = 1
    enable_prefix_caching: bool = True
    # the table's order: one row per GPU type first (its best-ranked option), then the rest in rank
    # order (distinct_first); False: every option in rank order
    one_per_gpu: bool = True

    @model_validator(mode="after")
    def _reuse(self) -> "PlanRequest":
        check_reuse(self.reuse, input_len=self.input_len, output_len=self.output_len,
                    max_model_len=self.max_model_len or 100_000_000)
        return self

    @property
    def reuse(self) -> PrefixReuse:
        return PrefixReuse(shared_prefix_len=self.shared_prefix_len, num_shared_prefixes=self.num_shared_prefixes,
                           turns=self.turns, enable_prefix_caching=self.enable_prefix_caching)

    @model_validator(mode="after")
    def _fits_len(self) -> "PlanRequest":
        if self.max_model_len is not None and self.input_len + self.output_len > self.max_model_len:
            raise ValueError(f"input_len + output_len ({self.input_len + self.output_len}) must be <= "
                             f"max_model_len ({self.max_model_len})")
        return self

    @property
    def model_len(self) -> int:
        """max_model_len: the asked one, else the window that holds the requests
        (:func:`calc.traffic.workload.covering_window_tokens`: input + output for fixed lengths, the 99.9th
        percentiles of both for spread ones, so that the plan serves its traffic whole instead of cutting
        4 in 10 requests, as input + output did at lognormal 0.5); multi-turn: the last turn holds the
        whole conversation. Not capped at a model's context: :meth:`window_tokens`."""
        if self.max_model_len is not None:
            return self.max_model_len
        return self.turns * covering_window_tokens(self.lengths, self.input_len, self.output_len, self.length_spread)

    def window_tokens(self, max_position_embeddings: int) -> int:
        """:attr:`model_len` for a model of this context: a spread window is capped there (the longest
        requests are then cut, as the simulator cuts them), never below the mean request.

        >>> r = PlanRequest(rate_rps=1, input_len=100_000, output_len=20_000, ttft_slo_s=9, tpot_slo_s=1,
        ...                 lengths="lognormal", length_spread=0.5)
        >>> r.model_len > 131_072, r.window_tokens(131_072)
        (True, 131072)
        """
        if self.max_model_len is not None:
            return self.max_model_len
        return max(min(self.model_len, int(max_position_embeddings)), self.turns * (self.input_len + self.output_len))

    def whole_share(self, max_position_embeddings: int) -> float:
        """The share of these requests that :meth:`window_tokens` holds whole (the rest are cut, as the
        simulator cuts them: :func:`calc.traffic.workload.cut_lengths`); 1 for fixed lengths.

        >>> r = PlanRequest(rate_rps=1, input_len=1792, output_len=256, ttft_slo_s=1, tpot_slo_s=1,
        ...                 lengths="lognormal", length_spread=0.5)
        >>> r.window_tokens(4096), round(r.whole_share(4096), 3)
        (4096, 0.967)
        """
        window = self.window_tokens(max_position_embeddings)
        return 1.0 - cut_lengths(self.lengths, self.input_len, self.output_len, self.length_spread, window).cut_fraction

    @property
    def quantile(self) -> float | None:
        """The SLA percentile as a fraction (p95: 0.95); None for the mean."""
        return None if self.percentile == "mean" else float(self.percentile.removeprefix("p")) / 100.0


def valid_tensor_parallel_sizes(arch: ModelArch, candidates: Sequence[int] = TP_CANDIDATES) -> tuple[int, ...]:
    """TP sizes vLLM accepts for this model, by the rule the UI and the CLI use
    (:func:`calc.spec.parallelism.tensor_parallel_sizes`: TP divides the attention heads, and
    divides the KV heads or is a multiple of them).

    Llama-2-13B has 40 heads (MHA): 1, 2, 4, 5, 8; Llama-3.1-8B (32 heads, 8 KV heads): 1, 2, 4, 8.

    >>> from calc.spec.catalog import get_model
    >>> valid_tensor_parallel_sizes(get_model("meta-llama/Llama-2-13b-hf"))
    (1, 2, 4, 5, 8)
    """
    return tensor_parallel_sizes(arch, candidates=tuple(candidates))


@dataclass(frozen=True)
class Layout:
    """One multi-GPU layout of a replica: TP × PP × DP GPUs, experts sharded (EP) or sliced by TP."""

    tensor_parallel_size: int
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    enable_expert_parallel: bool = False

    @property
    def gpus(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size * self.data_parallel_size


PP_CANDIDATES: tuple[int, ...] = (2, 4)  # stages across nodes, TP 4 or 8 inside (Llama-3.1-405B: TP 8 × PP 2)
# Pipeline layouts are searched for models whose 16-bit weights exceed half of an 8 × 80 GB node
# (Llama-3.1-405B's 810 GB, DeepSeek-V3's 1.3 TB): below that one node holds the model and its KV,
# and PP only adds GPUs and hand-overs (it never speeds up a request).
PP_MIN_MODEL_BYTES = 320e9
DP_EP_CANDIDATES: tuple[int, ...] = (2, 4, 8, 16, 32)  # DP attention + EP ranks (wide EP: 8-32 GPUs)


def default_layouts(arch: ModelArch, tps: Sequence[int]) -> tuple[Layout, ...]:
    """The layouts the planner searches: every valid TP in one node; TP 4/8 × PP 2/4 across nodes;
    for MoE models EP over TP (TP 8 + EP) and DP attention + EP (TP 1 or 2 × DP 2–32), the
    deployments practitioners run (vLLM's wide-EP guide, SGLang's large-scale EP, DeepSeek's
    EP32/EP144 units).

    >>> from calc.spec.catalog import get_model
    >>> ls = default_layouts(get_model("deepseek-ai/DeepSeek-V3"), (1, 2, 4, 8))
    >>> len(ls), Layout(1, 1, 16, True) in ls, Layout(8, 2) in ls
    (18, True, True)
    """
    out = [Layout(tp) for tp in tps]
    if param_counts(arch).total * 2 > PP_MIN_MODEL_BYTES:  # pipeline stages only where one node is tight
        out += [Layout(tp, pp) for tp in (4, 8) if tp in tps for pp in PP_CANDIDATES
                if pp <= arch.num_hidden_layers]
    if arch.moe is not None:
        out += [Layout(tp, 1, 1, True) for tp in (4, 8) if tp in tps]
        out += [Layout(1, 1, dp, True) for dp in DP_EP_CANDIDATES if 1 in tps]
        out += [Layout(2, 1, dp, True) for dp in (2, 4, 8) if 2 in tps]
    return tuple(out)


def chosen_layouts(arch: ModelArch, *, pipeline_parallel_size: int | None = None, data_parallel_size: int | None = None,
                   enable_expert_parallel: bool | None = None) -> tuple[Layout, ...]:
    """The layouts to search when the user fixes some of PP, DP, EP (``plan --pipeline-parallel-size``
    ...): those of :func:`default_layouts` that match, or, when none does, every valid TP with the
    given values. Raises :class:`InputError` where vLLM would refuse the combination (EP on a
    dense model, more stages than layers).

    >>> from calc.spec.catalog import get_model
    >>> [(l.tensor_parallel_size, l.data_parallel_size) for l in chosen_layouts(get_model("deepseek-ai/DeepSeek-V3"),
    ...     data_parallel_size=8, enable_expert_parallel=True)]
    [(1, 8), (2, 8)]
    """
    from calc.spec.untrusted import InputError  # noqa: PLC0415

    if enable_expert_parallel and arch.moe is None:
        raise InputError("enable_expert_parallel", True, allowed="false", code="ep_dense", model=arch.name)
    if pipeline_parallel_size is not None and pipeline_parallel_size > arch.num_hidden_layers:
        raise InputError("pipeline_parallel_size", pipeline_parallel_size, allowed=f"1 – {arch.num_hidden_layers}",
                         code="pp_layers", layers=arch.num_hidden_layers, model=arch.name)
    tps = valid_tensor_parallel_sizes(arch)

    def keep(lay: Layout) -> bool:
        return ((pipeline_parallel_size is None or lay.pipeline_parallel_size == pipeline_parallel_size)
                and (data_parallel_size is None or lay.data_parallel_size == data_parallel_size)
                and (enable_expert_parallel is None or lay.enable_expert_parallel == bool(enable_expert_parallel)))
    found = tuple(lay for lay in default_layouts(arch, tps) if keep(lay))
    return found or tuple(Layout(tp, pipeline_parallel_size or 1, data_parallel_size or 1, bool(enable_expert_parallel))
                          for tp in tps)


@dataclass(frozen=True)
class PlanGrid:
    """Every configuration, arrays of shape (G, T, Q, K, S): GPU, layout (TP × PP × DP, EP), weights,
    KV, max_num_seqs. ``tensor_parallel_sizes`` and the three layout tuples name the T axis."""

    gpu_ids: tuple[str, ...]
    tensor_parallel_sizes: tuple[int, ...]
    quantizations: tuple[str, ...]
    kv_cache_dtypes: tuple[str, ...]
    max_num_seqs: tuple[int, ...]
    max_num_batched_tokens: np.ndarray  # (G, 1, 1, 1, 1): vLLM's per-GPU default
    fits: np.ndarray
    running: np.ndarray  # sequences the engine holds at the SLA check (R ≤ S)
    limited_by: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    e2e_s: np.ndarray
    requests_per_s_per_replica: np.ndarray  # capacity X(S)
    slot_wait_s: np.ndarray  # wait at the SLA statistic at the chosen replicas (in ttft_s; costs.replicas_for_ttft)
    utilization: np.ndarray  # λ / (replicas · X)
    prefill_fraction: np.ndarray
    weights_bytes: np.ndarray  # per GPU
    kv_pool_bytes: np.ndarray  # per GPU
    replicas: np.ndarray
    gpus_total: np.ndarray
    price_usd_per_gpu_hour: np.ndarray  # (G, 1, 1, 1, 1); NaN: no price
    usd_per_hour: np.ndarray
    usd_per_million_input_tokens: np.ndarray
    usd_per_million_output_tokens: np.ndarray
    output_tokens_per_s: np.ndarray  # capacity of the whole deployment (replicas × X × O)
    output_tokens_per_s_per_gpu: np.ndarray
    reason: np.ndarray  # index into REASONS
    # (1, 1, Q, K, 1): where each weight precision comes from (calc.spec.quality.precision_choice),
    # its PRECISION_SOURCES index: 0 the checkpoint as shipped, 1 a published quantized checkpoint, ...
    precision_source_rank: np.ndarray | None = None
    pipeline_parallel_sizes: tuple[int, ...] | None = None  # per T entry (None: all 1)
    data_parallel_sizes: tuple[int, ...] | None = None
    expert_parallel: tuple[bool, ...] | None = None
    nodes: np.ndarray | None = None  # (G, T, 1, 1, 1): servers one replica spans

    def layout(self, ti: int) -> Layout:
        """The layout of T index ``ti``."""
        return Layout(self.tensor_parallel_sizes[ti],
                      1 if self.pipeline_parallel_sizes is None else self.pipeline_parallel_sizes[ti],
                      1 if self.data_parallel_sizes is None else self.data_parallel_sizes[ti],
                      False if self.expert_parallel is None else self.expert_parallel[ti])

    @property
    def size(self) -> int:
        return int(self.fits.size)

    @property
    def meets_slo(self) -> np.ndarray:
        return self.reason == REASONS.index("ok")


@dataclass(frozen=True)
class Deployment:
    """One ranked option (a row of the planner's table and of ``python -m calc plan``)."""

    gpu: str
    gpu_name: str
    tensor_parallel_size: int
    replicas: int
    gpus_total: int
    quantization: str
    kv_cache_dtype: str
    max_num_seqs: int
    max_num_batched_tokens: int
    max_model_len: int
    input_len: int
    output_len: int
    running: int
    limited_by: str
    ttft_s: float
    tpot_s: float
    e2e_s: float
    requests_per_s_per_replica: float
    slot_wait_s: float
    utilization: float
    output_tokens_per_s: float
    output_tokens_per_s_per_gpu: float
    usd_per_hour: float | None
    usd_per_million_input_tokens: float | None
    usd_per_million_output_tokens: float | None
    price_source: str | None
    meets_slo: bool
    slo_statistic: str
    reason: str
    vllm_command: str
    precision_source: str = "checkpoint"  # calc.spec.quality.PRECISION_SOURCES
    quality_table: str = ""  # the published quality figure that applies to this weight precision, or why none
    # Multi-GPU layout of one replica (gpus_total = replicas × TP × PP × DP); max_num_seqs is per DP rank.
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    enable_expert_parallel: bool = False
    nodes: int = 1  # servers one replica spans
    kv_pool_bytes: float = 0.0  # per GPU
    weights_bytes: float = 0.0  # per GPU


@dataclass(frozen=True)
class OptionStatus:
    """One (GPU, TP, weights, KV) option and why it is in or out (its closest max_num_seqs)."""

    gpu: str
    tensor_parallel_size: int
    quantization: str
    kv_cache_dtype: str
    reason: str
    best_ttft_s: float  # lowest over max_num_seqs (NaN when it does not fit)
    best_tpot_s: float
    fewest_gpus: float  # inf when no max_num_seqs meets the SLA
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    enable_expert_parallel: bool = False


@dataclass(frozen=True)
class PlanResult:
    request: PlanRequest
    model_id: str
    grid: PlanGrid
    ranked: list[Deployment]
    options: list[OptionStatus]
    reason_counts: dict[str, int]  # configurations (every max_num_seqs) per reason
    slo_statistic: str
    percentile_note: str  # "" or why the requested percentile was not used
    # the next options after ``ranked`` (at a percentile only): what the simulated re-check
    # (calc.plan.percentiles.check_top) lists in place of a row it drops, so the table keeps its length
    spare: list[Deployment] = field(default_factory=list)


def _stack_engines(engines: list[EngineNumbers], shape: tuple[int, ...]) -> EngineNumbers:
    """One :class:`EngineNumbers` whose fields are arrays of ``shape`` (+ a trailing axis of 1)."""
    out = {}
    for f in fields(EngineNumbers):
        vals = [getattr(e, f.name) for e in engines]
        out[f.name] = np.asarray(vals, dtype=float).reshape(shape + (1,))
    return EngineNumbers(**out)


_ENGINE_CACHE: dict[tuple, EngineNumbers] = {}
_ENGINE_CACHE_SIZE = 16


def _grid_engines(arch: ModelArch, gpus: tuple[GPUSpec, ...], layouts: tuple[Layout, ...], quantizations: tuple[str, ...],
                  kv_cache_dtypes: tuple[str, ...], efficiency: Efficiency, numbers: dict) -> EngineNumbers:
    """:func:`calc.timing.estimate.engine_numbers` of every (GPU, TP, weights, KV), stacked into
    arrays of shape (G, T, Q, K, 1).

    The KV precision changes only the KV bytes per token (the other fields do not read it), so
    engine_numbers runs once per (GPU, TP, weights) and the K axis takes each KV precision's
    bytes per token per head × the KV heads per rank, the same product engine_numbers forms
    (``tests/test_plan.py`` checks the stack against engine_numbers at every K). Memoized on
    the inputs: a page rerun with a new rate or SLA reuses the stack.
    """
    layouts = tuple(Layout(int(x)) if isinstance(x, (int, np.integer)) else x for x in layouts)  # bare TP sizes
    tps = tuple(lay.tensor_parallel_size for lay in layouts)
    key = (arch.model_dump_json(), tuple(g.model_dump_json() for g in gpus), layouts, quantizations, kv_cache_dtypes,
           efficiency)
    hit = _ENGINE_CACHE.get(key)
    if hit is not None:
        return hit
    G, T, Q, K = len(gpus), len(tps), len(quantizations), len(kv_cache_dtypes)
    k0 = kv_cache_dtypes[0]
    engines = [engine_numbers(arch, g, _layout_serving(lay, quantization=q, kv_cache_dtype=k0),
                              efficiency, numbers=numbers[(q, k0)])
               for g in gpus for lay in layouts for q in quantizations]
    eng = _stack_engines(engines, (G, T, Q, 1))
    kvh = np.asarray([kv_heads_per_rank(num_kv_heads=numbers[(quantizations[0], k0)].num_kv_heads,
                                        tensor_parallel_size=tp) for tp in tps], dtype=float).reshape(1, T, 1, 1, 1)
    per_head = np.asarray([[numbers[(q, k)].kv_bytes_per_token_per_head_full
                            + numbers[(q, k)].kv_bytes_per_token_per_head_sliding for k in kv_cache_dtypes]
                           for q in quantizations], dtype=float).reshape(1, 1, Q, K, 1)
    stacked = {f.name: getattr(eng, f.name) for f in fields(EngineNumbers)}
    stacked["kv_bytes_per_token"] = np.broadcast_to(per_head * kvh, (G, T, Q, K, 1))
    # the attention backend follows the KV dtype too (FP8 KV on Ampere/Ada: Triton; calc.timing.attention_backend)
    scales = np.asarray([[engine_attention_scales(arch, g, kv_cache_dtype=k, efficiency=efficiency) for k in kv_cache_dtypes]
                         for g in gpus], dtype=float)  # (G, K, 2)
    stacked["attention_prefill_scale"] = scales[..., 0].reshape(G, 1, 1, K, 1)
    stacked["attention_decode_scale"] = scales[..., 1].reshape(G, 1, 1, K, 1)
    eng = EngineNumbers(**{name: (v if name == "kv_bytes_per_token" else np.broadcast_to(v, (G, T, Q, K, 1)))
                           for name, v in stacked.items()})
    if len(_ENGINE_CACHE) >= _ENGINE_CACHE_SIZE:
        _ENGINE_CACHE.pop(next(iter(_ENGINE_CACHE)))
    _ENGINE_CACHE[key] = eng
    return eng


def _layout_serving(lay: Layout, **kw) -> ServingConfig:
    return ServingConfig(tensor_parallel_size=lay.tensor_parallel_size, pipeline_parallel_size=lay.pipeline_parallel_size,
                         data_parallel_size=lay.data_parallel_size, enable_expert_parallel=lay.enable_expert_parallel,
                         dtype=DTYPE, input_len=1, output_len=1, **kw)


def evaluate_grid(arch: ModelArch, gpus: Sequence[GPUSpec], req: PlanRequest, efficiency: Efficiency = Efficiency(),
                  *, prices: dict[str, float | None] | None = None,
                  tensor_parallel_sizes: Sequence[int] | None = None,
                  quantizations: Sequence[str] = WEIGHT_PRECISIONS, kv_cache_dtypes: Sequence[str] = KV_PRECISIONS,
                  max_num_seqs: Sequence[int] = MAX_NUM_SEQS_GRID, speculative=None,
                  layouts: Sequence[Layout] | None = None, nodes: int | None = None) -> PlanGrid:
    """Steps 1–4 of the module docstring over the whole grid, in one closed-loop call.

    ``prices`` overrides the catalog price per GPU id (None or absent: the catalog's).
    ``speculative`` (a :class:`calc.spec.speculative.SpeculativeConfig`; not a draft model): every
    option decodes with that drafter (:mod:`calc.timing.speculative`), its memory out of the KV pool.
    ``layouts``: the T axis (:class:`Layout`); None: :func:`default_layouts` of the valid TP sizes,
    or TP alone when ``tensor_parallel_sizes`` is given. A replica of layout TP × PP × DP runs DP
    engines of ``max_num_seqs`` sequences each (:mod:`calc.timing.layout`): its capacity is DP × a
    rank's, its GPUs TP × PP × DP, and it must split evenly over its GPU's nodes (calc/data/nodes.json).
    """
    if layouts is None:
        layouts = (tuple(Layout(tp) for tp in tensor_parallel_sizes) if tensor_parallel_sizes is not None
                   else default_layouts(arch, valid_tensor_parallel_sizes(arch)))
    layouts = tuple(layouts)
    tps = tuple(lay.tensor_parallel_size for lay in layouts)
    G, T, Q, K, S = len(gpus), len(tps), len(quantizations), len(kv_cache_dtypes), len(max_num_seqs)
    if min(G, T, Q, K, S) == 0:
        raise ValueError("gpus: the search needs at least one GPU, TP size, precision and max_num_seqs")
    L = req.window_tokens(arch.max_position_embeddings)
    # the lengths the requests have once cut to the window (calc.traffic.workload.cut_lengths: the percentile
    # check's simulations cut them so); with prefix reuse the cache model takes the asked ones
    cut = None if req.reuse.any_reuse else cut_lengths(req.lengths, req.input_len, req.output_len, req.length_spread, L)
    I, O = (cut.input_mean, cut.output_mean) if cut is not None else (req.input_len, req.output_len)
    input_cv, output_cv = (cut.input_cv, cut.output_cv) if cut is not None else length_cvs(req.lengths, req.length_spread)
    numbers = {(q, k): model_numbers(arch, dtype=DTYPE, quantization=q, kv_cache_dtype=k)
               for q in quantizations for k in kv_cache_dtypes}
    eng = _grid_engines(arch, tuple(gpus), layouts, tuple(quantizations), tuple(kv_cache_dtypes), efficiency, numbers)
    # Per layout, the heaviest GPU's share of the model (calc.sizing.layout.rank_numbers; TP alone: as is).
    ranked_numbers = {(t, q, k): rank_numbers(arch, numbers[(q, k)], tensor_parallel_size=lay.tensor_parallel_size,
                                              pipeline_parallel_size=lay.pipeline_parallel_size,
                                              data_parallel_size=lay.data_parallel_size,
                                              enable_expert_parallel=lay.enable_expert_parallel)
                      for t, lay in enumerate(layouts) for q in quantizations for k in kv_cache_dtypes}
    dp_ax = np.asarray([lay.data_parallel_size for lay in layouts], dtype=float).reshape(1, T, 1, 1, 1)
    world_ax = np.asarray([lay.gpus for lay in layouts], dtype=float).reshape(1, T, 1, 1, 1)
    per_node = np.asarray([node_for(g).gpus_per_node for g in gpus], dtype=float).reshape(G, 1, 1, 1, 1)
    nodes_ax = np.ceil(world_ax / per_node)
    splits = (world_ax <= per_node) | (np.mod(world_ax, per_node) == 0)  # vLLM needs even nodes
    if nodes is not None:  # --nodes N: replicas of exactly N servers
        splits = splits & (nodes_ax == nodes)
    layout_buffer = np.asarray([[layout_buffer_bytes(arch, g, _layout_serving(lay), efficiency) for lay in layouts]
                                for g in gpus], dtype=float).reshape(G, T, 1, 1, 1)

    # Memory: the arguments memory_for passes (calc.sizing.scenario), as arrays over the grid.
    g_ax = lambda v: np.asarray(v, dtype=float).reshape(G, 1, 1, 1, 1)  # noqa: E731
    qk = lambda attr: np.asarray([[[getattr(ranked_numbers[(t, q, k)], attr) for k in kv_cache_dtypes]  # noqa: E731
                                   for q in quantizations] for t in range(T)], dtype=float).reshape(1, T, Q, K, 1)
    tp_ax = np.asarray(tps, dtype=float).reshape(1, T, 1, 1, 1)
    seqs = np.asarray(max_num_seqs, dtype=float).reshape(1, 1, 1, 1, S)
    mnbt = g_ax([default_max_num_batched_tokens(g) for g in gpus])
    n0 = numbers[(quantizations[0], kv_cache_dtypes[0])]
    head_dim = arch.head_dim if arch.mla is None else arch.mla.qk_nope_head_dim + arch.mla.qk_rope_head_dim
    # vLLM's profile run goes through the whole budget; without chunked prefill that is max(max_model_len, default).
    profile_tokens = mnbt if req.enable_chunked_prefill else np.maximum(mnbt, L)
    mem = memory_model(
        usable_memory_bytes=g_ax([g.usable_memory_bytes for g in gpus]),
        gpu_memory_utilization=req.gpu_memory_utilization, tensor_parallel_size=tp_ax,
        sharded_weight_bytes=qk("sharded_weight_bytes"), replicated_weight_bytes=qk("replicated_weight_bytes"),
        kv_proj_bytes_per_head=qk("kv_proj_bytes_per_head"), num_kv_heads=n0.num_kv_heads,
        kv_bytes_per_token_per_head_full=qk("kv_bytes_per_token_per_head_full"),
        kv_bytes_per_token_per_head_sliding=qk("kv_bytes_per_token_per_head_sliding"),
        sliding_window=n0.sliding_window, chunked_local=n0.chunked_local, hidden_size=arch.hidden_size,
        ffn_intermediate_per_token=n0.ffn_intermediate_per_token, num_heads=arch.num_attention_heads,
        head_dim=head_dim, vocab_size=arch.vocab_size, activation_bytes=qk("activation_bytes"),
        max_model_len=L, max_num_seqs=seqs, max_num_batched_tokens=profile_tokens, block_size=16,
        non_torch_overhead_bytes=efficiency.non_torch_overhead_bytes + layout_buffer,
        nccl_overhead_bytes=efficiency.nccl_overhead_bytes,
        live_hidden_buffers=efficiency.activation_live_hidden_buffers, concurrency=1, context_tokens=L,
        sequence_tokens=req.input_len + req.output_len,
        activation_num_kv_heads=arch.num_key_value_heads if arch.mla is None else arch.num_attention_heads,
        cuda_context_and_graphs_bytes=efficiency.cuda_context_bytes + efficiency.cuda_graph_bytes,
        experts_per_token=qk("experts_per_token"), expert_intermediate_size=qk("expert_intermediate_size"),
        sampler_bytes_per_logit=sampler_bytes_per_logit(activation_bytes=qk("activation_bytes")),
        topk_scratch_rows=g_ax([g.sm_count or DEFAULT_SM_COUNT for g in gpus]),
        allocator_workspace_bytes=efficiency.allocator_workspace_bytes,
        nccl_per_peer_bytes=efficiency.nccl_per_peer_bytes,
        all_to_all_link=np.asarray([all_to_all_nvlink(g) for g in gpus]).reshape(G, 1, 1, 1, 1))

    chunked = req.enable_chunked_prefill
    # Without chunked prefill vLLM raises its default budget to max_model_len (resolve_serving): as estimate().
    budget = mnbt if chunked else np.maximum(mnbt, L)
    # A rate of independent users (not C clients started together): their requests arrive spread
    # out, so the steady state is the spread-arrival one, not the FCFS wave of synchronized clients
    # (calc.timing.serving; bench/sim_vs_analytic.py --long: E2E within 8 % of long simulations).
    kv_tokens, drafter = mem.kv_sequence_tokens, None
    if speculative is not None:  # calc.timing.speculative, over the grid's engines
        from calc.timing.speculative import drafter_for, kv_capacity_tokens_with_drafter  # noqa: PLC0415

        if speculative.method == "draft_model":
            raise ValueError("speculative_config: the planner takes ngram, eagle, eagle3 or mtp (not a draft model)")
        drafter = drafter_for(eng, speculative)
        kv_tokens = np.floor(kv_capacity_tokens_with_drafter(kv_pool_bytes=mem.kv_pool_bytes,
                                                             kv_bytes_per_token=mem.kv_bytes_per_sequence_token, drafter=drafter))
    s = closed_loop(eng, input_len=I, output_len=O, concurrency=seqs, max_num_seqs=seqs,
                    max_num_batched_tokens=budget, enable_chunked_prefill=chunked,
                    kv_capacity_tokens=kv_tokens, fits=mem.fits, uniform_lengths=False, speculative=drafter,
                    output_cv=output_cv, input_cv=input_cv)
    if req.reuse.any_reuse:  # prefix caching: the hit rate at each option's KV pool and batch, then again
        if drafter is not None:
            raise ValueError("speculative_config with a shared prefix or turns: not modelled together yet")
        I, s = _with_prefix_cache(eng, req, s, mem, seqs=seqs, budget=budget)
    shape = np.broadcast_shapes(s.ttft_s.shape, (G, T, Q, K, S))
    b = lambda x: np.broadcast_to(x, shape)  # noqa: E731
    fits = b(s.fits & splits)
    # a replica = DP engines stepping together: DP × one rank's requests/s and running sequences
    x_req = np.where(fits, b(s.requests_per_s * dp_ax), 0.0)
    ttft, tpot = b(s.ttft_s), b(s.tpot_s)
    # Replicas: enough to carry the rate, and more while the wait for a free sequence slot (a
    # replica near its capacity queues requests), and at a percentile the prefill queue's, breaks
    # the TTFT target at the statistic asked for (calc.plan.costs).
    # The queue is one DP rank's: its share of the rate, its slots (as the percentile check simulates a rank,
    # calc.plan.percentiles.simulated_percentiles; pooled slots across 8 ranks of 4 judged a DeepSeek-V3 row
    # at 0.44 s P95 that a rank's simulation puts at 4.1 s). vLLM's own balancer routes by load, which
    # queues less than a random share: the rank's queue is the conservative side.
    rank_rate = req.rate_rps / dp_ax
    replicas, wait = replicas_for_ttft(rate_rps=rank_rate, capacity_rps_per_replica=x_req / dp_ax, slots=b(s.running),
                                       ttft_s=ttft, ttft_slo_s=req.ttft_slo_s, quantile=req.quantile,
                                       prefill_s=b(s.prefill_time_per_request_s),
                                       service_cv2=output_cv ** 2)
    ttft = ttft + wait  # the TTFT a request sees: its service at full batch + its waits
    with np.errstate(invalid="ignore", divide="ignore"):  # no capacity (does not fit): NaN
        utilization = np.where(np.isfinite(replicas) & (x_req > 0), req.rate_rps / (replicas * x_req), np.nan)
    gpus_total = replicas * world_ax
    price_list = [(prices or {}).get(g.id) if (prices or {}).get(g.id) is not None else g.price_usd_per_hour
                  for g in gpus]
    price = g_ax([np.nan if p is None else p for p in price_list])
    usd_h = deployment_usd_per_hour(price_usd_per_gpu_hour=price, gpus_total=gpus_total)
    pf = b(s.prefill_fraction)
    cost_in = usd_per_million_tokens(usd_per_hour=usd_h, tokens_per_s=req.rate_rps * I, share=pf)
    cost_out = usd_per_million_tokens(usd_per_hour=usd_h, tokens_per_s=req.rate_rps * O, share=1.0 - pf)
    out_tps = np.where(np.isfinite(replicas), np.where(np.isfinite(replicas), replicas, 0.0) * x_req * O, 0.0)

    with np.errstate(invalid="ignore"):
        stage = np.full(shape, REASONS.index("ok"), dtype=np.int8)
        checks = [  # later checks first, so the earliest failing stage wins
            ("no_price", (req.budget_usd_per_hour is not None) & ~np.isfinite(usd_h)),
            ("exceeds_budget", (req.budget_usd_per_hour is not None) & (usd_h > (req.budget_usd_per_hour or np.inf))),
            ("exceeds_max_gpus", (req.max_gpus is not None) & (gpus_total > (req.max_gpus or np.inf))),
            # TPOT is undefined (NaN) for one output token: no inter-token time to miss
            ("misses_tpot", ~((tpot <= req.tpot_slo_s) | (np.isnan(tpot) & np.isfinite(ttft)))),
            ("misses_ttft", ~(ttft <= req.ttft_slo_s)),
            ("does_not_fit", ~fits | ~np.isfinite(replicas)),
        ]
        for name, mask in checks:
            stage = np.where(mask, np.int8(REASONS.index(name)), stage)
    return PlanGrid(
        gpu_ids=tuple(g.id for g in gpus), tensor_parallel_sizes=tps, quantizations=tuple(quantizations),
        kv_cache_dtypes=tuple(kv_cache_dtypes), max_num_seqs=tuple(int(x) for x in max_num_seqs),
        max_num_batched_tokens=mnbt, fits=fits, running=b(s.running), limited_by=b(s.limited_by),
        ttft_s=ttft, tpot_s=tpot, e2e_s=b(s.e2e_latency_s) + wait, requests_per_s_per_replica=x_req,
        slot_wait_s=wait, utilization=utilization,
        prefill_fraction=pf, weights_bytes=b(mem.weights_bytes), kv_pool_bytes=b(mem.kv_pool_bytes),
        replicas=replicas, gpus_total=gpus_total, price_usd_per_gpu_hour=price, usd_per_hour=usd_h,
        usd_per_million_input_tokens=cost_in, usd_per_million_output_tokens=cost_out,
        output_tokens_per_s=out_tps, output_tokens_per_s_per_gpu=np.where(gpus_total > 0, out_tps / gpus_total, 0.0),
        reason=stage,
        precision_source_rank=np.asarray([[_choice(arch, q).source_rank for _ in kv_cache_dtypes]
                                          for q in quantizations], dtype=float).reshape(1, 1, Q, K, 1),
        pipeline_parallel_sizes=tuple(lay.pipeline_parallel_size for lay in layouts),
        data_parallel_sizes=tuple(lay.data_parallel_size for lay in layouts),
        expert_parallel=tuple(lay.enable_expert_parallel for lay in layouts), nodes=np.broadcast_to(nodes_ax, (G, T, 1, 1, 1)))


def _with_prefix_cache(eng, req: PlanRequest, s, mem, *, seqs, budget):
    """(mean prompt tokens, closed loop) with the request's reuse: the cache holds what the full
    batch leaves of each option's pool (:func:`calc.traffic.prefix_cache.prefix_cache`); a replica
    keeps its conversations (session-sticky routing), about 2·R + 1 in flight at a batch of R."""
    pc = prefix_cache(reuse=req.reuse, input_len=req.input_len, output_len=req.output_len, block_size=16,
                      num_blocks=np.floor(mem.kv_sequence_tokens / 16.0), running=s.running,
                      conversations=2.0 * s.running + 1.0)
    I = pc.input_len
    s = closed_loop(eng, input_len=I, output_len=req.output_len, concurrency=seqs, max_num_seqs=seqs,
                    max_num_batched_tokens=budget, enable_chunked_prefill=req.enable_chunked_prefill,
                    kv_capacity_tokens=mem.kv_sequence_tokens, fits=mem.fits, uniform_lengths=False,
                    cached_prompt_tokens=pc.cached_tokens, output_cv=length_cvs(req.lengths, req.length_spread)[1])
    return I, s


def _choice(arch: ModelArch, quantization: str) -> PrecisionChoice:
    return precision_choice(model_id=arch.id, checkpoint_quantization=arch.checkpoint_quantization,
                            quantization=quantization)


# Options needing a quantized checkpoint that is not known to exist go last; at equal cost the checkpoint's
# own precision ranks first, then a published quantized checkpoint, then what vLLM quantizes at load
# (calc.spec.quality.PRECISION_SOURCES); past that, at equal latency (or
# GPUs, or throughput), the more accurate precision: 16-bit, then FP8 (lossless in published
# evaluations), INT8 (1-3 % degradation), 4-bit (calc/data/quantization_quality.json).
PRECISION_RANK = {"none": 0, "fp8": 1, "int8": 2, "awq": 3, "gptq": 3, "nf4": 4}


def _precision_rank(quantization: str, kv_cache_dtype: str) -> float:
    return 2.0 * PRECISION_RANK.get(quantization, 9) + (0.0 if kv_cache_dtype == "auto" else 1.0)


def sort_keys(grid: PlanGrid, sort: str) -> tuple[np.ndarray, ...]:
    """Keys for :func:`numpy.lexsort` (last key primary), best first, over the flattened grid.

    Options whose weight precision needs a quantized checkpoint not known to exist
    (``no_checkpoint_known``: vLLM cannot serve them from the checkpoint there is) go last,
    whatever they cost. Then, cost: $/h for the rate (= cost per request), then where the weights
    come from (the checkpoint's own precision first: :data:`calc.spec.quality.PRECISION_SOURCES`),
    then the lower end-to-end latency of a request, then GPUs; gpus: GPUs, then $/h, then the
    source; throughput: output tokens/s per GPU (higher first), then $/h, then the source.
    Remaining ties: the more accurate weight and KV precision (:data:`PRECISION_RANK`), then the
    lower TTFT. :func:`rank_key` orders :class:`Deployment` rows the same way.
    """
    usd = np.where(np.isfinite(grid.usd_per_hour), grid.usd_per_hour, np.inf).ravel()
    gpus = grid.gpus_total.ravel()
    ttft = np.nan_to_num(grid.ttft_s.ravel(), nan=np.inf)
    e2e = np.nan_to_num(grid.e2e_s.ravel(), nan=np.inf)
    per_gpu = -grid.output_tokens_per_s_per_gpu.ravel()
    precision = np.broadcast_to(np.asarray([[_precision_rank(q, k) for k in grid.kv_cache_dtypes]
                                            for q in grid.quantizations]).reshape(1, 1, len(grid.quantizations),
                                                                                  len(grid.kv_cache_dtypes), 1),
                                grid.fits.shape).ravel()
    source = np.broadcast_to(np.zeros(1) if grid.precision_source_rank is None else grid.precision_source_rank,
                             grid.fits.shape).ravel()
    unknown = source >= PRECISION_SOURCES.index("no_checkpoint_known")  # last, whatever they cost
    if sort == "gpus":
        return ttft, precision, source, usd, gpus, unknown
    if sort == "throughput":
        return ttft, precision, source, usd, per_gpu, unknown
    return ttft, precision, gpus, e2e, source, usd, unknown


def rank_key(d: "Deployment", sort: str) -> tuple[float, ...]:
    """The order of :func:`sort_keys` for one ranked row (for lists re-judged after the grid, e.g.
    :func:`calc.plan.percentiles.check_top`, which adds replicas and so changes a row's cost)."""
    usd = math.inf if d.usd_per_hour is None else d.usd_per_hour
    tie = (_precision_rank(d.quantization, d.kv_cache_dtype), d.ttft_s)
    source = PRECISION_SOURCES.index(d.precision_source)
    unknown = source >= PRECISION_SOURCES.index("no_checkpoint_known")
    if sort == "gpus":
        return (unknown, d.gpus_total, usd, source, *tie)
    if sort == "throughput":
        return (unknown, -d.output_tokens_per_s_per_gpu, usd, source, *tie)
    return (unknown, usd, source, d.e2e_s, d.gpus_total, *tie)


def distinct_first(groups, unknown=None) -> np.ndarray:
    """The order that puts each group's first row (rows given in rank order) before every other row,
    each part keeping the rank order; rows marked ``unknown`` (a precision with no checkpoint known:
    :func:`sort_keys`) stay after all the others. Returns the permutation (indices into ``groups``).

    >>> distinct_first(["mi300x", "mi300x", "mi325x", "mi300x", "rtx-4090"]).tolist()
    [0, 2, 4, 1, 3]
    >>> distinct_first(["a", "a", "b"], unknown=[False, False, True]).tolist()
    [0, 1, 2]
    """
    groups = np.asarray(groups)
    n = len(groups)
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    _, first_at = np.unique(groups, return_index=True)
    repeat = np.ones(n, dtype=bool)
    repeat[first_at] = False
    late = np.zeros(n, dtype=bool) if unknown is None else np.asarray(unknown, dtype=bool)
    return np.lexsort((np.arange(n), repeat, late))


def pareto_mask(*, cost, latency):
    """Points not dominated: no other point is at least as cheap and at least as fast, and
    strictly better in one. NaN points are never on the front.

    >>> pareto_mask(cost=[1.0, 2.0, 3.0, 2.0], latency=[3.0, 1.0, 0.5, 2.0]).tolist()
    [True, True, True, False]
    """
    c = np.asarray(cost, dtype=float).ravel()
    t = np.asarray(latency, dtype=float).ravel()
    ok = np.isfinite(c) & np.isfinite(t)
    mask = np.zeros(c.shape, dtype=bool)
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return mask.reshape(np.shape(cost))
    order = idx[np.lexsort((t[idx], c[idx]))]  # cheapest first, then fastest
    # On the front: faster than every point at least as cheap (those sorted before it).
    ts = t[order]
    before = np.concatenate([[np.inf], np.minimum.accumulate(ts)[:-1]])
    mask[order] = ts < before
    return mask.reshape(np.shape(cost))


def model_statistic(percentile: str) -> str:
    """What a row's SLA was judged on before any simulation.

    >>> model_statistic("mean"), model_statistic("p95")
    ('mean', 'p95 (queueing model)')
    """
    return "mean" if percentile == "mean" else f"{percentile} (queueing model)"


def _num(x) -> float | None:
    v = float(x)
    return v if math.isfinite(v) else None


def plan(arch: ModelArch, gpus: Sequence[GPUSpec], req: PlanRequest, efficiency: Efficiency = Efficiency(), *,
         prices: dict[str, float | None] | None = None, **grid_kw) -> PlanResult:
    """Evaluate the grid, rank the SLA-meeting deployments (best max_num_seqs per option), and
    say why each option is out."""
    grid = evaluate_grid(arch, gpus, req, efficiency, prices=prices, **grid_kw)
    by_id = {g.id: g for g in gpus}
    shape = grid.fits.shape
    ok = grid.meets_slo.ravel()
    keys = sort_keys(grid, req.sort)
    order = np.lexsort(keys)
    order = order[ok[order]]
    # per (GPU, TP, weights, KV) option its best max_num_seqs (the last axis), in rank order
    _, first_at = np.unique(order // shape[-1], return_index=True)
    rows = order[np.sort(first_at)]
    gi_rows = np.unravel_index(rows, shape)[0]
    if req.one_per_gpu:
        unknown = keys[-1][rows]
        rows = rows[distinct_first(gi_rows, unknown)]
        gi_rows = np.unravel_index(rows, shape)[0]
    picked = list(range(min(len(rows), req.top)))
    if req.percentile != "mean":  # spares for the re-check (check_top): the next rows, each listed GPU's next ones
        picked += list(range(req.top, min(len(rows), req.top + SPARE_ROWS)))
        if req.one_per_gpu:
            listed = {int(g) for g in gi_rows[:req.top]}
            taken = dict.fromkeys(listed, 0)
            for j in range(req.top, len(rows)):
                g = int(gi_rows[j])
                if g in listed and taken[g] < SPARE_PER_GPU:
                    taken[g] += 1
                    if j >= req.top + SPARE_ROWS:
                        picked.append(j)
                if all(v >= SPARE_PER_GPU for v in taken.values()):
                    break
    ranked = [_deployment(grid, by_id, req, arch, np.unravel_index(rows[j], shape), grid_kw.get("speculative"))
              for j in picked]
    ranked, spare = ranked[:req.top], ranked[req.top:]
    options = []
    reason = grid.reason.max(axis=-1)  # the stage the option's closest max_num_seqs reached
    # the least over what fits; NaN (a TPOT with no decode: output_len 1) counts as nothing: inf, no warning
    best_ttft = np.min(np.where(grid.fits & ~np.isnan(grid.ttft_s), grid.ttft_s, np.inf), axis=-1)
    best_tpot = np.min(np.where(grid.fits & ~np.isnan(grid.tpot_s), grid.tpot_s, np.inf), axis=-1)
    fewest = np.min(np.where(grid.meets_slo, grid.gpus_total, np.inf), axis=-1)
    for gi, gid in enumerate(grid.gpu_ids):
        for ti, tp in enumerate(grid.tensor_parallel_sizes):
            for qi, q in enumerate(grid.quantizations):
                for ki, k in enumerate(grid.kv_cache_dtypes):
                    i = (gi, ti, qi, ki)
                    lay = grid.layout(ti)
                    options.append(OptionStatus(gpu=gid, tensor_parallel_size=tp, quantization=q, kv_cache_dtype=k,
                                                pipeline_parallel_size=lay.pipeline_parallel_size,
                                                data_parallel_size=lay.data_parallel_size,
                                                enable_expert_parallel=lay.enable_expert_parallel,
                                                reason=REASONS[int(reason[i])],
                                                best_ttft_s=float(best_ttft[i]) if np.isfinite(best_ttft[i]) else math.nan,
                                                best_tpot_s=float(best_tpot[i]) if np.isfinite(best_tpot[i]) else math.nan,
                                                fewest_gpus=float(fewest[i])))
    counts = {r: int(np.count_nonzero(grid.reason == j)) for j, r in enumerate(REASONS)}
    note = "" if req.percentile == "mean" else (
        f"{req.percentile} TTFT judged with the queueing model (the full-batch TTFT + the waits for a sequence "
        "slot and for the prefill room at that percentile); TPOT at full batch")
    return PlanResult(request=req, model_id=arch.id, grid=grid, ranked=ranked, options=options,
                      reason_counts=counts, slo_statistic=req.percentile, percentile_note=note, spare=spare)


def _deployment(grid: PlanGrid, by_id: dict[str, GPUSpec], req: PlanRequest, arch: ModelArch, idx,
                speculative=None) -> Deployment:
    gi, ti, qi, ki, si = (int(i) for i in idx)
    gpu = by_id[grid.gpu_ids[gi]]
    tp, q, k, seqs = grid.tensor_parallel_sizes[ti], grid.quantizations[qi], grid.kv_cache_dtypes[ki], grid.max_num_seqs[si]
    mnbt = int(grid.max_num_batched_tokens[gi, 0, 0, 0, 0])
    window = req.window_tokens(arch.max_position_embeddings)  # as evaluate_grid's L
    budget = mnbt if req.enable_chunked_prefill else max(mnbt, window)  # as evaluate_grid, resolve_serving
    lay = grid.layout(ti)
    serving = ServingConfig(tensor_parallel_size=tp, dtype=DTYPE, quantization=q, kv_cache_dtype=k,
                            pipeline_parallel_size=lay.pipeline_parallel_size, data_parallel_size=lay.data_parallel_size,
                            enable_expert_parallel=lay.enable_expert_parallel,
                            gpu_memory_utilization=req.gpu_memory_utilization, input_len=req.input_len,
                            output_len=req.output_len, max_model_len=window)
    at = (gi, ti, qi, ki, si)
    price = float(grid.price_usd_per_gpu_hour[gi, 0, 0, 0, 0])
    choice = _choice(arch, q)
    return Deployment(
        gpu=gpu.id, gpu_name=gpu.name, tensor_parallel_size=tp, replicas=int(grid.replicas[at]),
        gpus_total=int(grid.gpus_total[at]), quantization=q, kv_cache_dtype=k, max_num_seqs=seqs,
        max_num_batched_tokens=budget,
        max_model_len=window, input_len=req.input_len, output_len=req.output_len, running=int(grid.running[at]), limited_by=str(grid.limited_by[at]),
        ttft_s=float(grid.ttft_s[at]), tpot_s=float(grid.tpot_s[at]), e2e_s=float(grid.e2e_s[at]),
        requests_per_s_per_replica=float(grid.requests_per_s_per_replica[at]),
        slot_wait_s=float(grid.slot_wait_s[at]), utilization=float(grid.utilization[at]),
        output_tokens_per_s=float(grid.output_tokens_per_s[at]),
        output_tokens_per_s_per_gpu=float(grid.output_tokens_per_s_per_gpu[at]),
        usd_per_hour=_num(grid.usd_per_hour[at]), usd_per_million_input_tokens=_num(grid.usd_per_million_input_tokens[at]),
        usd_per_million_output_tokens=_num(grid.usd_per_million_output_tokens[at]),
        price_source=gpu.price_source if math.isfinite(price) and price == gpu.price_usd_per_hour else
        ("your price" if math.isfinite(price) else None),
        meets_slo=bool(grid.meets_slo[at]), slo_statistic=model_statistic(req.percentile), reason=REASONS[int(grid.reason[at])],
        vllm_command=serve_command(model_id=arch.id, serving=serving, max_model_len=window, max_num_seqs=seqs,
                                   max_num_batched_tokens=budget,
                                   chunked=req.enable_chunked_prefill, speculative=speculative,
                                   enable_prefix_caching=req.enable_prefix_caching),
        precision_source=choice.source, quality_table=choice.quality_table,
        pipeline_parallel_size=lay.pipeline_parallel_size, data_parallel_size=lay.data_parallel_size,
        enable_expert_parallel=lay.enable_expert_parallel,
        nodes=1 if grid.nodes is None else int(grid.nodes[gi, ti, 0, 0, 0]),
        kv_pool_bytes=float(grid.kv_pool_bytes[at]), weights_bytes=float(grid.weights_bytes[at]))
