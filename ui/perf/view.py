"""What the performance pages show, gathered from ``calc``: frontier series, the course checks
(§3.3 MFU, §3.5 case study), the vLLM command line and the CSV behind every chart.

No model maths here: every number comes from a ``calc`` call; this module only selects, labels
and formats. No streamlit either (unit-testable).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from calc.spec.catalog import get_gpu, get_model
from calc.plan.costs import deployment_usd_per_hour, usd_per_million_tokens
from calc.timing.estimate import Estimate, engine_numbers, estimate
from calc.timing.speculative import drafter_and_kv_capacity as speculative_drafter
from calc.timing.frontier import (best_feasible, concurrency_points, cost_per_million_tokens_usd, knee_index,
                           sla_feasible)
from calc.spec.inputs import Efficiency, ModelArch, ServingConfig
from calc.timing.operators import OperatorTable, RooflineResult, roofline
from calc.sizing.scenario import check_token_budget, memory_for, resolve_serving
from calc.timing.schedule import PHASE_NAMES, ScheduleResult, simulate
from calc.spec.units import GB, MiB
from calc.spec.vllm_command import serve_command
from calc.timing.bands import BandBasis, BandKey, band, band_basis, gpu_family, load_regime
from calc.traffic.queueing import (OpenLoop, closed_loop_percentile_s, closed_loop_ttft, interpolate_log_c, open_loop,
                                   percentile_nodes)
from ui import format as F
from ui.budget import shared_memo
from ui.perf.controls import Variant
from ui.tables import to_csv

T = Callable[..., str]
SWEEP_POINTS = 256
MIN_SWEEP_TOP = 64
SWEEP_BEYOND_WALL = 4  # sweep to 4× the engine's limit: the plateau and the queue are visible


# ----------------------------------------------------------------------------- frontier

@dataclass(frozen=True)
class FrontierSeries:
    """One scenario's concurrency sweep, with its SLA mask, best point, knee and walls."""

    label: str
    color: str
    variant: Variant
    concurrency: np.ndarray  # clients C
    output_tokens_per_s: np.ndarray  # whole tensor-parallel group
    output_tokens_per_s_per_gpu: np.ndarray
    total_tokens_per_s: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    e2e_s: np.ndarray
    running: np.ndarray
    waiting: np.ndarray  # clients queued for a sequence slot: C − R
    decode_step_s: np.ndarray  # one decode step of the running batch
    prefill_chunks: np.ndarray  # steps one prompt takes (1 without chunked prefill)
    limited_by: np.ndarray
    mfu: np.ndarray
    feasible: np.ndarray
    best: int  # index into the sweep; -1 when no point meets the SLA
    knee: int
    kv_wall: float  # sequences of mean context whose KV fits
    token_cap: float  # chunked prefill: sequences the token budget sustains (inf without)
    max_num_seqs: float
    max_num_batched_tokens: float
    chosen: int  # index of the sidebar's concurrency
    cost_per_million_usd: np.ndarray | None  # None when the GPU has no price (all of it on output tokens)
    fits: bool
    # The bill split by engine time (prefill share on input tokens, the rest on output tokens).
    cost_per_million_input_usd: np.ndarray | None = None
    cost_per_million_output_split_usd: np.ndarray | None = None
    price_usd_per_gpu_hour: float | None = None
    # Where the closed-form model matches the request simulator (calc.timing.serving.closed_loop);
    # False: the page shows the simulated closed loop beside it.
    closed_form: np.ndarray | None = None
    # The TTFT the SLA is judged on: the closed loop's ``ttft_percentile``-th percentile
    # (closed_loop_percentile), or the mean (ttft_s) where ttft_percentile is None.
    ttft_judged_s: np.ndarray | None = None
    ttft_percentile: float | None = None

    @property
    def ttft_shown_s(self) -> np.ndarray:
        """The TTFT the charts and cards show: the one the SLA is judged on."""
        return self.ttft_s if self.ttft_judged_s is None else self.ttft_judged_s

    @property
    def engine_limit(self) -> float:
        return float(min(self.kv_wall, self.max_num_seqs, self.token_cap))


class _ByJson:
    """A pydantic model as a cache key by its JSON (GPUSpec holds lists, so it is not hashable)."""

    __slots__ = ("model", "key")

    def __init__(self, model):
        self.model, self.key = model, model.model_dump_json()

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ByJson) and self.key == other.key


def array_key(x) -> tuple:
    """An array-like as a hashable cache key (dtype, shape, bytes); None stays None (:func:`array_of_key`)."""
    if x is None:
        return (None,)
    a = np.asarray(x)
    return (a.dtype.str, a.shape, a.tobytes())


def array_of_key(key: tuple):
    """The array (a scalar for shape ()) :func:`array_key` was made from; None for None."""
    if key == (None,):
        return None
    dtype, shape, raw = key
    a = np.frombuffer(raw, dtype=dtype).reshape(shape)
    return a if shape else a[()]


ESTIMATE_CACHE_SIZE = 64  # ~80 kB each (a 257-point sweep): a few MB, shared by every session


@shared_memo(ESTIMATE_CACHE_SIZE)
def _estimate_cached(arch: ModelArch, gpu: _ByJson, serving: ServingConfig, eff: Efficiency, chunked: bool,
                     conc_key: tuple, speculative=None, output_cv: float = 0.0, input_cv: float = 0.0) -> Estimate:
    conc = np.frombuffer(conc_key[2], dtype=conc_key[0]).reshape(conc_key[1]) if conc_key[1] else np.nan
    return estimate(arch, gpu.model, serving, eff, concurrency=conc, enable_chunked_prefill=chunked,
                    speculative=speculative, output_cv=output_cv, input_cv=input_cv)


def cached_estimate(v: Variant, arch: ModelArch, eff: Efficiency, concurrency) -> Estimate:
    """:func:`calc.timing.estimate.estimate` of a variant over ``concurrency`` (``nan``: as many as
    fit), memoized by every input: what the frontier page computes is the same for everyone who
    shows the same scenario, and a slider that does not change the sweep (the SLA targets, the
    per-GPU toggle) recomputes nothing. ``serving.concurrency`` is not an input here (the sweep
    is), so moving the concurrency slider reuses the probes. The variant's length spread (the shared
    traffic, :attr:`ui.perf.controls.Variant.length_cvs`, after the cut) is the model's ``input_cv``
    and ``output_cv``. Results are shared: do not modify them.
    """
    c = np.asarray(concurrency)
    conc_key = (c.dtype.str, c.shape, c.tobytes()) if c.ndim else ("<f8", (), b"")
    input_cv, output_cv = (float(x) for x in v.length_cvs)
    serving = v.analytic_serving  # the mean lengths after the cut to max_model_len (Variant.cut)
    if not c.ndim and not np.isnan(c):
        return estimate(arch, v.gpu, serving, eff, concurrency=concurrency, enable_chunked_prefill=v.chunked,
                        speculative=v.speculative, output_cv=output_cv, input_cv=input_cv)
    return _estimate_cached(arch, _ByJson(v.gpu), serving.model_copy(update={"concurrency": None}), eff,
                            bool(v.chunked), conc_key, v.speculative, output_cv, input_cv)


@shared_memo(32)
def _schedule_cached(arch: ModelArch, gpu: _ByJson, serving: ServingConfig, eff: Efficiency, requests: tuple,
                     chunked: bool, kw: tuple) -> ScheduleResult:
    return simulate(engine_numbers(arch, gpu.model, serving, eff), requests, enable_chunked_prefill=chunked,
                    **dict(kw))


def schedule_runs(arch: ModelArch, gpu, serving: ServingConfig, eff: Efficiency, requests: Sequence, *,
                  max_num_seqs: int, max_num_batched_tokens: int,
                  kv_capacity_tokens: float) -> dict[str, ScheduleResult]:
    """The scheduler page's two runs (chunked prefill, whole prefills) of
    :func:`calc.timing.schedule.simulate`, memoized by every input like :func:`cached_estimate`
    (the sidebar's concurrency is not one: moving it recomputes nothing). Shared: do not modify."""
    key = (arch, _ByJson(gpu), serving.model_copy(update={"concurrency": None}), eff, tuple(requests))
    kw = (("max_num_seqs", int(max_num_seqs)), ("max_num_batched_tokens", int(max_num_batched_tokens)),
          ("kv_capacity_tokens", float(kv_capacity_tokens)))
    return {"chunked": _schedule_cached(*key, True, kw), "whole": _schedule_cached(*key, False, kw)}


@shared_memo(32)
def _roofline_cached(arch: ModelArch, gpu: _ByJson, serving: ServingConfig, eff: Efficiency, decode_batch: int,
                     context_tokens: int, prompt_tokens: int) -> RooflineResult:
    return roofline(arch, gpu.model, serving, eff, decode_batch=decode_batch, context_tokens=context_tokens,
                    prompt_tokens=prompt_tokens)


def cached_roofline(arch: ModelArch, gpu, serving: ServingConfig, eff: Efficiency, *, decode_batch: int,
                    context_tokens: int, prompt_tokens: int) -> RooflineResult:
    """:func:`calc.timing.operators.roofline` for one batch and prompt, memoized by every input like
    :func:`cached_estimate` (the sidebar's concurrency is not one). Shared: do not modify."""
    return _roofline_cached(arch, _ByJson(gpu), serving.model_copy(update={"concurrency": None}), eff,
                            int(decode_batch), int(context_tokens), int(prompt_tokens))


def check_variant(v: Variant, arch: ModelArch) -> None:
    """vLLM's start-up rule for this variant's token budget and chunked-prefill switch
    (:func:`calc.sizing.scenario.check_token_budget`): raises ``InputError`` where vLLM would refuse."""
    check_token_budget(v.serving, resolve_serving(arch, v.gpu, v.serving).max_model_len, enable_chunked_prefill=v.chunked)


def probe(v: Variant, arch: ModelArch, eff: Efficiency) -> Estimate:
    """One scalar estimate (as many clients as fit) to learn the variant's walls before sweeping."""
    return cached_estimate(v, arch, eff, np.nan)


def sweep_concurrency(probes: Sequence[Estimate], chosen: int) -> np.ndarray:
    """The shared concurrency axis: 1 to 4× the largest engine limit (at least 64), about 256
    geometric points, plus the sidebar's concurrency."""
    limits = [float(np.max(p.serving.running)) for p in probes if bool(p.serving.fits)]
    top = int(min(max(MIN_SWEEP_TOP, SWEEP_BEYOND_WALL * max(limits, default=0.0)), 1_000_000))
    pts, c = _sweep_points(top), int(chosen)
    i = int(np.searchsorted(pts, c))  # np.union1d(pts, [c]) without its sort: pts is sorted and unique
    return pts.copy() if i < pts.size and pts[i] == c else np.insert(pts, i, c)


@shared_memo(64)  # a few tops in use (one per engine limit); ~0.3 ms of geomspace/unique each rerun
def _sweep_points(top: int) -> np.ndarray:
    pts = concurrency_points(top=top, n=SWEEP_POINTS)
    pts.setflags(write=False)  # shared between reruns and sessions
    return pts


class _VariantKey:
    """A :class:`Variant` as a cache key (its GPU by JSON, as :class:`_ByJson`)."""

    __slots__ = ("variant", "key")

    def __init__(self, v: Variant):
        self.variant, self.key = v, (v.token, v.serving, v.gpu.model_dump_json(), bool(v.chunked), v.speculative,
                                     v.lengths, v.length_spread, v.model_window)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return isinstance(other, _VariantKey) and self.key == other.key


SERIES_CACHE_SIZE = 64  # ~60 kB each (the arrays are the cached estimate's, shared)


def frontier_series(v: Variant, arch: ModelArch, eff: Efficiency, *, concurrency: np.ndarray, label: str, color: str,
                    ttft_slo_s: float, tpot_slo_s: float, chosen: int, price: float | None = None,
                    reuse=None, percentile: float | None = None) -> FrontierSeries:
    """One vectorized :func:`calc.timing.estimate.estimate` over the sweep, then the frontier functions.
    ``reuse`` (:class:`calc.traffic.prefix_cache.PrefixReuse`): the prompt tokens the prefix cache
    serves are not prefilled (:func:`ui.prefixcache.sweeps.frontier_estimate`).
    ``percentile`` (e.g. 95): the TTFT target is judged on that percentile of the closed loop
    (:func:`closed_loop_percentile`, ``ttft_judged_s``), TPOT on its mean; None (or with prefix
    reuse, which has no percentile model yet): both on the means.

    Memoized by every input (without prefix reuse): the SLA check, the best point, the knee and
    the costs over ~257 points are the same for every session that shows the same scenario and
    targets (~0.3 ms per series per rerun). Results are shared: do not modify them."""
    if reuse is not None and reuse.any_reuse:
        return _frontier_series(v, arch, eff, concurrency=concurrency, label=label, color=color, ttft_slo_s=ttft_slo_s,
                                tpot_slo_s=tpot_slo_s, chosen=chosen, price=price, reuse=reuse)
    return _series_cached(_VariantKey(v), arch, eff, array_key(concurrency), label, color,
                          float(ttft_slo_s), float(tpot_slo_s), int(chosen), None if price is None else float(price),
                          None if percentile is None else float(percentile))


@shared_memo(SERIES_CACHE_SIZE)
def _series_cached(vk: _VariantKey, arch: ModelArch, eff: Efficiency, conc_key: tuple, label: str, color: str,
                   ttft_slo_s: float, tpot_slo_s: float, chosen: int, price: float | None,
                   percentile: float | None) -> FrontierSeries:
    return _frontier_series(vk.variant, arch, eff, concurrency=array_of_key(conc_key), label=label, color=color, ttft_slo_s=ttft_slo_s,
                            tpot_slo_s=tpot_slo_s, chosen=chosen, price=price, percentile=percentile)


def _frontier_series(v: Variant, arch: ModelArch, eff: Efficiency, *, concurrency: np.ndarray, label: str, color: str,
                     ttft_slo_s: float, tpot_slo_s: float, chosen: int, price: float | None = None,
                     reuse=None, percentile: float | None = None) -> FrontierSeries:
    if reuse is not None and reuse.any_reuse:
        from ui.prefixcache.sweeps import frontier_estimate  # noqa: PLC0415

        r = frontier_estimate(v, arch, eff, np.asarray(concurrency), reuse)
        percentile = None  # no percentile model with prefix reuse yet: the means
    else:
        r = cached_estimate(v, arch, eff, np.asarray(concurrency))
    s = r.serving
    # every GPU the layout uses (TP × PP × DP): the cost of the throughput
    tp = v.serving.tensor_parallel_size * v.serving.pipeline_parallel_size * v.serving.data_parallel_size
    judged = s.ttft_s if percentile is None else closed_loop_percentile(v, arch, eff, concurrency=concurrency,
                                                                       mean_s=s.ttft_s, percentile=percentile)
    ok = sla_feasible(ttft_s=judged, tpot_s=s.tpot_s, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s)
    best, _ = best_feasible(throughput=s.output_tokens_per_s, feasible=ok)
    knee = knee_index(throughput=s.output_tokens_per_s, latency_s=s.e2e_latency_s)
    price = v.gpu.price_usd_per_hour if price is None else price  # the user's price, else the catalog's
    cost = None if price is None else cost_per_million_tokens_usd(price_usd_per_gpu_hour=price, num_gpus=tp,
                                                                  tokens_per_s=s.output_tokens_per_s)
    usd_h = None if price is None else deployment_usd_per_hour(price_usd_per_gpu_hour=price, gpus_total=tp)
    pf = np.broadcast_to(s.prefill_fraction, np.shape(s.output_tokens_per_s))
    cost_in = None if usd_h is None else usd_per_million_tokens(usd_per_hour=usd_h, tokens_per_s=s.total_tokens_per_s
                                                               - s.output_tokens_per_s, share=pf)
    cost_out = None if usd_h is None else usd_per_million_tokens(usd_per_hour=usd_h, tokens_per_s=s.output_tokens_per_s,
                                                                share=1.0 - pf)
    n = concurrency.shape[0]
    return FrontierSeries(
        label=label, color=color, variant=v, concurrency=np.asarray(concurrency),
        output_tokens_per_s=s.output_tokens_per_s, output_tokens_per_s_per_gpu=s.output_tokens_per_s / tp,
        total_tokens_per_s=s.total_tokens_per_s, ttft_s=s.ttft_s, tpot_s=s.tpot_s, e2e_s=s.e2e_latency_s,
        running=np.broadcast_to(s.running, (n,)), waiting=np.broadcast_to(s.waiting, (n,)),
        decode_step_s=np.broadcast_to(s.decode_step_s, (n,)), prefill_chunks=np.broadcast_to(s.prefill_chunks, (n,)),
        limited_by=np.broadcast_to(s.limited_by, (n,)), mfu=s.mfu,
        feasible=ok, best=int(best), knee=int(knee), kv_wall=float(np.max(s.kv_sequences_at_mean_context)),
        token_cap=float(np.max(s.token_budget_cap)),
        max_num_seqs=float(np.max(r.max_num_seqs)), max_num_batched_tokens=float(np.max(r.max_num_batched_tokens)),
        chosen=int(np.searchsorted(concurrency, chosen)), cost_per_million_usd=cost,
        fits=bool(np.all(s.fits)), cost_per_million_input_usd=cost_in, cost_per_million_output_split_usd=cost_out,
        price_usd_per_gpu_hour=price, closed_form=np.broadcast_to(s.closed_form, (n,)),
        ttft_judged_s=np.broadcast_to(judged, (n,)), ttft_percentile=percentile)


def token_label(token: str, t: T) -> str:
    """Legend text of a variant token: "your scenario" for "", else the one thing that changes."""
    if not token:
        return t("fr.series.base")
    kind, _, value = token.partition(":")
    if kind == "gpu":
        return t("fr.variant.gpu", name=get_gpu(value).name)
    worded = kind in ("chunked", "preset") or (kind, value) in (("kv", "auto"), ("quant", "none"))
    return t(f"fr.variant.{kind}", value=t(f"fr.value.{kind}_{value}" if kind in ("kv", "quant") else f"fr.value.{value}")
             if worded else value)


def frontier_csv(series: Sequence[FrontierSeries]) -> str:
    header = ["scenario", "concurrency", "running", "limited_by", "ttft_ms", "tpot_ms", "e2e_ms", "output_tokens_per_s",
              "output_tokens_per_s_per_gpu", "total_tokens_per_s", "mfu", "meets_sla", "best", "knee",
              "usd_per_million_output_tokens", "sla_ttft_ms", "sla_ttft_statistic"]
    rows = []
    for s in series:
        stat = "mean" if s.ttft_percentile is None else f"p{s.ttft_percentile:g}"  # what meets_sla judged TTFT on
        for i, c in enumerate(s.concurrency):
            cost = "" if s.cost_per_million_usd is None else _r(s.cost_per_million_usd[i], 4)
            rows.append([s.label, int(c), _r(s.running[i], 0), str(s.limited_by[i]), _r(s.ttft_s[i] * 1e3, 3),
                         _r(s.tpot_s[i] * 1e3, 3), _r(s.e2e_s[i] * 1e3, 3), _r(s.output_tokens_per_s[i], 3),
                         _r(s.output_tokens_per_s_per_gpu[i], 3), _r(s.total_tokens_per_s[i], 3), _r(s.mfu[i], 5),
                         bool(s.feasible[i]), i == s.best, i == s.knee, cost, _r(s.ttft_shown_s[i] * 1e3, 3), stat])
    return to_csv(header, rows)


def _r(x: Any, digits: int) -> Any:
    x = float(x)
    return "" if not np.isfinite(x) else round(x, digits)


def vllm_command(*, model_id: str, serving: ServingConfig, max_model_len: int, max_num_seqs: int,
                 max_num_batched_tokens: int, chunked: bool, speculative=None, enable_prefix_caching: bool = True) -> str:
    """The ``vllm serve`` line of a scenario (:func:`calc.spec.vllm_command.serve_command`).

    >>> vllm_command(model_id="m", serving=ServingConfig(), max_model_len=4096, max_num_seqs=8,
    ...              max_num_batched_tokens=2048, chunked=False).splitlines()[-1].strip()
    '--no-enable-chunked-prefill'
    >>> vllm_command(model_id="m", serving=ServingConfig(), max_model_len=4096, max_num_seqs=8,
    ...              max_num_batched_tokens=2048, chunked=True, enable_prefix_caching=False).splitlines()[-1].strip()
    '--no-enable-prefix-caching'
    """
    return serve_command(model_id=model_id, serving=serving, max_model_len=max_model_len, max_num_seqs=max_num_seqs,
                         max_num_batched_tokens=max_num_batched_tokens, chunked=chunked, speculative=speculative,
                         enable_prefix_caching=enable_prefix_caching)


# ----------------------------------------------------------------------------- course checks

CASE_MODEL = "meta-llama/Llama-2-7b-hf"
CASE_GPU = "a100-80gb"
CASE_INPUT, CASE_OUTPUT = 1792, 256  # "context length 2048": prompt 1,792 + output 256 (our reading)
CASE_BEFORE = dict(concurrency=16, enable_chunked_prefill=False)
CASE_AFTER = dict(concurrency=32, enable_chunked_prefill=True, max_num_batched_tokens=512, kv_cache_dtype="fp8")
# course §3.5, as printed: (before, after)
CASE_COURSE = {"ttft_ms": (850.0, 420.0), "tpot_ms": (45.0, 52.0), "tokens_per_s": (320.0, 680.0),
               "memory_gb": (38.0, 41.0)}


@dataclass(frozen=True)
class CaseStudy:
    """Course §3.5 before/after, computed: Llama-2-7B FP16 on one A100 80GB."""

    before: Estimate
    after: Estimate
    memory_before_bytes: float  # weights + activations + overhead + KV of the running requests
    memory_after_bytes: float
    budget_bytes: float  # what vLLM preallocates: usable × gpu_memory_utilization
    bound_tpot_before_s: float  # weights + KV of 16 requests at full bandwidth


@shared_memo(8)  # fixed inputs: the same for every rerun with the same efficiencies
def case_study(eff: Efficiency = Efficiency()) -> CaseStudy:
    arch, gpu = get_model(CASE_MODEL), get_gpu(CASE_GPU)
    out = []
    for kw in (CASE_BEFORE, CASE_AFTER):
        s = ServingConfig(dtype="float16", input_len=CASE_INPUT, output_len=CASE_OUTPUT, **kw)
        r = estimate(arch, gpu, s, eff)
        m = memory_for(arch, gpu, s, eff, concurrency=s.concurrency, context_tokens=CASE_INPUT + CASE_OUTPUT)
        out.append((r, float(m.weights_bytes + m.activation_bytes + m.overhead_bytes + m.kv_in_use_bytes),
                    float(m.budget_bytes), float(m.weights_bytes), float(m.kv_bytes_per_token)))
    (b, mb, budget, w, kv_tok), (a, ma, _, _, _) = out
    # Memory-bandwidth floor of one decode step at 16 requests of mean context I + O/2 (physics.md A3).
    floor = (w + 16 * (CASE_INPUT + CASE_OUTPUT / 2) * kv_tok) / gpu.hbm_bw_bytes_per_s
    return CaseStudy(before=b, after=a, memory_before_bytes=mb, memory_after_bytes=ma, budget_bytes=budget,
                     bound_tpot_before_s=floor)


CASE_SLA_S = (0.5, 0.05)  # course §3.4's chat targets (TTFT < 500 ms, TPOT < 50 ms), the case's yardstick


def case_variants() -> tuple[Variant, Variant]:
    """The §3.5 before and after as frontier variants (Llama-2-7B FP16 on one A100 80GB)."""
    gpu = get_gpu(CASE_GPU)
    out = []
    for kw in (CASE_BEFORE, CASE_AFTER):
        s = ServingConfig(dtype="float16", input_len=CASE_INPUT, output_len=CASE_OUTPUT, **kw)
        out.append(Variant("", s, gpu, bool(kw["enable_chunked_prefill"])))
    return out[0], out[1]


def case_series(eff: Efficiency, labels: tuple[str, str], colors: tuple[str, str]) -> list[FrontierSeries]:
    """Both §3.5 scenarios over one concurrency sweep (the shared axis of :func:`sweep_concurrency`,
    with 16 and 32 on it), each marked at its own clients, judged against :data:`CASE_SLA_S`."""
    arch = get_model(CASE_MODEL)
    variants = case_variants()
    conc = np.union1d(sweep_concurrency([probe(v, arch, eff) for v in variants], CASE_BEFORE["concurrency"]),
                      [CASE_AFTER["concurrency"]])
    return [frontier_series(v, arch, eff, concurrency=conc, label=label, color=color, ttft_slo_s=CASE_SLA_S[0],
                            tpot_slo_s=CASE_SLA_S[1], chosen=int(v.serving.concurrency))
            for v, label, color in zip(variants, labels, colors)]


def _pct(new: float, old: float) -> str:
    return "—" if not (np.isfinite(new) and np.isfinite(old) and old) else f"{100 * (new / old - 1):+.0f} %"


def case_rows(c: CaseStudy, t: T) -> list[dict[str, str]]:
    """The §3.5 table: course says / calculator says / why, one row per metric."""
    b, a = c.before.serving, c.after.serving
    calc = {"ttft_ms": (float(b.ttft_s) * 1e3, float(a.ttft_s) * 1e3),
            "tpot_ms": (float(b.tpot_s) * 1e3, float(a.tpot_s) * 1e3),
            "tokens_per_s": (float(b.output_tokens_per_s), float(a.output_tokens_per_s)),
            "memory_gb": (c.memory_before_bytes / GB, c.memory_after_bytes / GB)}
    units = {"ttft_ms": "ms", "tpot_ms": "ms", "tokens_per_s": "tok/s", "memory_gb": "GB"}
    why_values = dict(
        k=int(np.max(a.prefill_chunks)), floor=F.number(c.bound_tpot_before_s * 1e3, 1),
        little_before=F.integer(16 / 0.045), little_after=F.integer(32 / 0.052),
        calc_little_before=F.integer(16 / float(b.tpot_s)), calc_little_after=F.integer(32 / float(a.tpot_s)),
        budget=F.number(c.budget_bytes / GB, 1),
        calc_before=F.number(float(b.output_tokens_per_s), 0), calc_after=F.number(float(a.output_tokens_per_s), 0),
        ttft_before=F.number(float(b.ttft_s) * 1e3, 0), ttft_after=F.number(float(a.ttft_s) * 1e3, 0))
    rows = []
    for key, (cb, ca) in CASE_COURSE.items():
        xb, xa = calc[key]
        u = units[key]
        rows.append({
            "metric": t(f"case.metric.{key}"),
            "course": f"{F.number(cb, 0)} → {F.number(ca, 0)} {u} ({_pct(ca, cb)})",
            "calc": f"{F.number(xb, 0)} → {F.number(xa, 0)} {u} ({_pct(xa, xb)})",
            "why": t(f"case.why.{key}" + ("_drop" if key == "ttft_ms" and xa < xb else ""), **why_values),
            "course_before": cb, "course_after": ca, "calc_before": xb, "calc_after": xa, "key": key,
        })
    return rows


@dataclass(frozen=True)
class MfuCheck:
    """Course §3.3: MFU, throughput and latency at 1 and at 32 concurrent requests."""

    decode_mfu: np.ndarray  # decode step alone at batch 1 and 32 (calc.timing.operators)
    request_mfu: np.ndarray  # whole requests, prefill included (closed loop, calc.timing.serving)
    output_tokens_per_s: np.ndarray
    tpot_s: np.ndarray
    critical_batch: float
    input_len: int
    output_len: int


def mfu_rows(m: MfuCheck, t: T) -> list[dict[str, str]]:
    """Course says / calculator says / why, for the §3.3 claims."""
    d1, d32 = (float(x) for x in m.decode_mfu)
    r1, r32 = (float(x) for x in m.request_mfu)
    x1, x32 = (float(x) for x in m.output_tokens_per_s)
    l1, l32 = (float(x) * 1e3 for x in m.tpot_s)
    vals = dict(bstar=F.number(m.critical_batch, 0), cap1=F.percent(1 / m.critical_batch, 2),
                cap32=F.percent(32 / m.critical_batch, 0), i=F.integer(m.input_len), o=F.integer(m.output_len))
    return [
        {"claim": t("mfu.claim.one"), "course": "8–12 %",
         "calc": t("mfu.calc.mfu", decode=F.percent(d1, 1), request=F.percent(r1, 1)), "why": t("mfu.why.one", **vals)},
        {"claim": t("mfu.claim.many"), "course": "25–35 %",
         "calc": t("mfu.calc.mfu", decode=F.percent(d32, 1), request=F.percent(r32, 1)),
         "why": t("mfu.why.many", **vals)},
        {"claim": t("mfu.claim.throughput"), "course": "3–5×",
         "calc": f"{F.number(x32 / x1, 1)}× ({F.integer(x1)} → {F.integer(x32)} tok/s)", "why": t("mfu.why.throughput")},
        {"claim": t("mfu.claim.latency"), "course": "50 → 200 ms",
         "calc": f"{F.number(l1, 0)} → {F.number(l32, 0)} ms (TPOT)", "why": t("mfu.why.latency")},
    ]


# ----------------------------------------------------------------------------- roofline tables

def operator_rows(r: RooflineResult) -> list[dict[str, Any]]:
    """One row per (phase, operator) of a scalar roofline (one batch, one prompt length)."""
    rows = []
    for table in (r.decode, r.prefill):
        for i, op in enumerate(table.operators):
            row = {"phase": table.phase, "operator": op}
            for name in ("flops", "weight_bytes", "kv_bytes", "activation_bytes", "bytes", "intensity_flops_per_byte",
                         "achieved_flops_per_s", "attainable_flops_per_s", "time_s", "time_share"):
                row[name] = float(np.asarray(getattr(table, name))[i])
            row["bound"] = str(np.asarray(table.bound)[i])
            rows.append(row)
    return rows


def operator_display(rows: Sequence[dict[str, Any]], t: T) -> list[dict[str, str]]:
    """The operator table as the page shows it (translated headers, units in the headers)."""
    return [{t("op.col.phase"): t(f"phase.{r['phase']}"), t("op.col.operator"): t(f"op.{r['operator']}"),
             # bytes in MiB (2^20), the binary units of every other page (GiB, MiB), not MB
             t("op.col.flops"): F.number(r["flops"] / 1e9, 2), t("op.col.weights"): F.number(r["weight_bytes"] / MiB, 1),
             t("op.col.kv"): F.number(r["kv_bytes"] / MiB, 1), t("op.col.act"): F.number(r["activation_bytes"] / MiB, 1),
             t("op.col.intensity"): F.number(r["intensity_flops_per_byte"], 1), t("op.col.bound"): t(f"bound.{r['bound']}"),
             t("op.col.time"): F.number(r["time_s"] * 1e6, 1), t("op.col.share"): F.percent(r["time_share"], 1)}
            for r in rows]


def operator_csv(rows: Sequence[dict[str, Any]], *, batch: int, context_tokens: int, prompt_tokens: int) -> str:
    header = ["phase", "operator", "decode_batch", "context_tokens", "prompt_tokens", "flops", "weight_bytes",
              "kv_bytes", "activation_bytes", "bytes", "intensity_flops_per_byte", "achieved_flops_per_s",
              "attainable_flops_per_s", "bound", "time_s", "time_share"]
    return to_csv(header, [[r["phase"], r["operator"], batch, context_tokens, prompt_tokens,
                            *(r[h] for h in header[5:])] for r in rows])


def decode_sweep_csv(table: OperatorTable) -> str:
    """Decode step over a batch sweep: time split, tokens/s, MFU, MBU."""
    header = ["batch", "step_s", "compute_s", "memory_s", "tokens_per_s", "mfu", "mbu"]
    b = np.ravel(table.tokens)
    step = np.ravel(table.step_s)
    comp, mem = table.compute_s.sum(axis=0), table.memory_s.sum(axis=0)
    return to_csv(header, [[int(b[i]), float(step[i]), float(comp[i]), float(mem[i]), float(b[i] / step[i]),
                            float(table.mfu[i]), float(table.mbu[i])] for i in range(b.shape[0])])


# ----------------------------------------------------------------------------- scheduler

def schedule_steps_csv(results: Sequence[ScheduleResult]) -> str:
    n = results[0].tokens.shape[1] if results else 0
    header = ["policy", "step", "start_ms", "duration_ms", "decode_tokens", "prefill_tokens",
              *(f"r{i + 1}_tokens" for i in range(n)), *(f"r{i + 1}_phase" for i in range(n))]
    rows = []
    for r in results:
        for j in range(r.start_s.shape[0]):
            rows.append([r.policy, j + 1, round(float(r.start_s[j]) * 1e3, 4), round(float(r.duration_s[j]) * 1e3, 4),
                         int(r.decode_tokens[j]), int(r.prefill_tokens[j]), *(int(x) for x in r.tokens[j]),
                         *(PHASE_NAMES[int(p)] for p in r.phase[j])])
    return to_csv(header, rows)


def schedule_requests_csv(results: Sequence[ScheduleResult]) -> str:
    header = ["policy", "request", "arrival_ms", "prompt_tokens", "output_tokens", "ttft_ms", "tpot_ms",
              "max_inter_token_gap_ms", "finish_ms"]
    rows = []
    for r in results:
        for i in range(r.arrival_s.shape[0]):
            rows.append([r.policy, i + 1, _r(r.arrival_s[i] * 1e3, 3), int(r.prompt_tokens[i]), int(r.output_tokens[i]),
                         _r(r.ttft_s[i] * 1e3, 3), _r(r.tpot_s[i] * 1e3, 3), _r(r.max_itl_s[i] * 1e3, 3),
                         _r(r.finish_s[i] * 1e3, 3)])
    return to_csv(header, rows)


# ----------------------------------------------------------------------------- error bands (issue 20)

def headline_bands(arch: ModelArch, gpu, *, concurrency: float, values: dict[str, float],
                   arrival: str = "closed", condition: str = "engine") -> dict[str, tuple[float, float, BandBasis]]:
    """(low, high, basis) of each headline number (``values``: metric group -> predicted value, e.g.
    ``{"ttft": 0.2, "tpot": 0.03, "throughput": 550.0}``) from how far the calculator has been from
    measurements in the same regime (:mod:`calc.timing.bands`: load shape and its ``condition``, GPU
    family, dense or MoE)."""
    regime = load_regime(arrival, concurrency)
    family, moe = gpu_family(gpu.architecture), arch.moe is not None
    out = {}
    for group, v in values.items():
        b = band_basis(BandKey(regime, family, moe, group, condition))
        lo, hi = band(v, b)
        out[group] = (float(lo), float(hi), b)
    return out


@shared_memo(ESTIMATE_CACHE_SIZE)
def _open_loop_cached(arch: ModelArch, gpu: _ByJson, serving: ServingConfig, eff: Efficiency, chunked: bool,
                      rate_rps: float, percentile: float, speculative=None, lengths: tuple = ("fixed", 0.0, None)) -> OpenLoop:
    v = Variant("", serving, gpu.model, chunked, speculative, *lengths)
    est = probe(v, arch, eff)
    drafter, kv_tokens = speculative_drafter(est, speculative, gpu=gpu.model, serving=serving, efficiency=eff)
    cut = v.cut  # the lengths after the cut to max_model_len, as the load test draws them
    return open_loop(est.engine, input_len=cut.input_mean, output_len=cut.output_mean, rate_rps=rate_rps,
                     max_num_seqs=est.max_num_seqs, max_num_batched_tokens=est.max_num_batched_tokens,
                     kv_capacity_tokens=kv_tokens, enable_chunked_prefill=chunked, input_cv=cut.input_cv,
                     output_cv=cut.output_cv, percentile=percentile, speculative=drafter,
                     input_quantile_tokens=v.input_quantile_tokens(percentile))


@shared_memo(ESTIMATE_CACHE_SIZE)
def _closed_loop_excess_cached(arch: ModelArch, gpu: _ByJson, serving: ServingConfig, eff: Efficiency, chunked: bool,
                               speculative, lengths: tuple, top: int, percentile: float) -> tuple[np.ndarray, np.ndarray]:
    v = Variant("", serving, gpu.model, chunked, speculative, *lengths)
    est = probe(v, arch, eff)
    drafter, kv_tokens = speculative_drafter(est, speculative, gpu=gpu.model, serving=serving, efficiency=eff)
    cut = v.cut  # the lengths after the cut to max_model_len, as the load test draws them
    nodes = percentile_nodes(top=top, wall=float(np.max(est.serving.running)))
    r = closed_loop_ttft(est.engine, input_len=cut.input_mean, output_len=cut.output_mean, concurrency=nodes,
                         max_num_seqs=est.max_num_seqs, max_num_batched_tokens=est.max_num_batched_tokens,
                         kv_capacity_tokens=kv_tokens, enable_chunked_prefill=chunked, input_cv=cut.input_cv,
                         output_cv=cut.output_cv, percentile=percentile, speculative=drafter,
                         input_quantile_tokens=v.input_quantile_tokens(percentile))
    excess = np.array(r.excess_s, dtype=float)
    nodes.setflags(write=False)
    excess.setflags(write=False)
    return nodes, excess


def closed_loop_percentile(v: Variant, arch: ModelArch, eff: Efficiency, *, concurrency, mean_s, percentile: float) -> np.ndarray:
    """The P-th percentile TTFT of a closed loop of C clients over the frontier's sweep (issue 17:
    the frontier judges its SLA lines at the chosen percentile): the mean the page shows
    (``mean_s``, :func:`cached_estimate`) plus the percentile's excess over the mean in
    :func:`calc.traffic.queueing.closed_loop_ttft` (the model ``bench/sim_vs_analytic.py --shapes``
    holds to the long-run simulator; its mean is within ~1–5 % of estimate's), on the engine,
    limits and lengths (after the cut, spread as the shared traffic says) this variant has. The
    excess is worked out at :func:`calc.traffic.queueing.percentile_nodes` (the engine's limit
    among them) and read in between by :func:`calc.traffic.queueing.interpolate_log_c`. Memoized
    by the variant, the sweep's top and the percentile (~50–90 ms of CPU a call), so moving the
    sidebar's concurrency or an SLA target recomputes nothing; shared, do not modify."""
    c = np.asarray(concurrency, dtype=float)
    nodes, excess = _closed_loop_excess_cached(
        arch, _ByJson(v.gpu), v.serving.model_copy(update={"concurrency": None}), eff, bool(v.chunked), v.speculative,
        (v.lengths, float(v.length_spread), v.model_window), int(np.ceil(np.max(c))), float(percentile))
    return np.asarray(mean_s, dtype=float) + interpolate_log_c(nodes=nodes, values=excess, at=c)


@shared_memo(ESTIMATE_CACHE_SIZE)
def _closed_loop_point_cached(arch: ModelArch, gpu: _ByJson, serving: ServingConfig, eff: Efficiency, concurrency: float,
                              input_len: int, output_len: int, input_cv: float, output_cv: float, percentile: float) -> float:
    est = estimate(arch, gpu.model, serving, eff, concurrency=concurrency, input_len=input_len, output_len=output_len,
                   output_cv=output_cv, input_cv=input_cv)
    _, kv_tokens = speculative_drafter(est, None, gpu=gpu.model, serving=serving, efficiency=eff)
    return float(closed_loop_percentile_s(est, input_len=input_len, output_len=output_len, kv_capacity_tokens=kv_tokens,
                                          input_cv=input_cv, output_cv=output_cv,
                                          enable_chunked_prefill=serving.enable_chunked_prefill, percentile=percentile))


def closed_loop_percentile_at(arch: ModelArch, gpu, serving: ServingConfig, eff: Efficiency, *, concurrency: float,
                              input_len: int, output_len: int, input_cv: float, output_cv: float,
                              percentile: float) -> float:
    """The P-th percentile TTFT of a closed loop of ``concurrency`` clients whose lengths spread (the
    load test's analytic row beside its simulated percentile): ``estimate``'s mean there plus
    :func:`calc.traffic.queueing.closed_loop_ttft`'s excess (:func:`calc.traffic.queueing.closed_loop_percentile_s`,
    the number ``estimate`` reports as ``ttft_p95_s`` and the frontier judges its SLA on). Memoized
    by every input (~40 ms of CPU a call); fixed lengths of clients started together are the FCFS
    wave instead, which has no percentile here."""
    return _closed_loop_point_cached(arch, _ByJson(gpu), serving.model_copy(update={"concurrency": None}), eff,
                                     float(concurrency), int(input_len), int(output_len), float(input_cv),
                                     float(output_cv), float(percentile))


def open_loop_at_rate(v: Variant, arch: ModelArch, eff: Efficiency, *, rate_rps: float, percentile: float) -> OpenLoop:
    """The frontier's answer to a rate (issue 17: the frontier gets the traffic choice): one replica
    receiving ``rate_rps`` Poisson requests, the analytic open loop of :func:`calc.traffic.queueing.open_loop`
    (mean and percentile TTFT, TPOT) on the engine, token budget, sequence limit and KV pool this
    variant has, its lengths spread as the shared traffic says (``input_cv`` / ``output_cv``:
    :attr:`ui.perf.controls.Variant.length_cvs`); the same model ``python -m calc estimate --rate
    --input-len-cv --output-len-cv`` reports. Memoized like :func:`cached_estimate` (about 44 ms of
    CPU a call: the batch bisection); shared, do not modify."""
    return _open_loop_cached(arch, _ByJson(v.gpu), v.serving.model_copy(update={"concurrency": None}), eff,
                             bool(v.chunked), float(rate_rps), float(percentile), v.speculative,
                             (v.lengths, float(v.length_spread), v.model_window))


def memory_compute_crossing(sweep: OperatorTable) -> dict[str, float]:
    """Where a decode step's compute time (every operator's FLOPs at the achievable peak) first
    reaches its memory time (bytes at the achievable bandwidth) over a batch sweep, so the roofline
    page's caption says what its chart shows. B* (the ridge in batch terms) counts the weights
    only; each sequence's own KV read moves the crossing later, at a long MHA context past any
    batch (Llama-2-7B at 2,048 tokens on an A100: never up to 1,024).

    ``cross``: the first batch with compute ≥ memory (NaN: none in the sweep); ``last``: the
    sweep's largest batch; ``mem_ms_per_seq`` and ``compute_ms_per_seq``: what one more sequence
    adds to each at the sweep's end (the slope between its last two points)."""
    b = np.ravel(sweep.tokens).astype(float)
    mem = np.asarray(sweep.memory_s, dtype=float).sum(axis=0).ravel()
    comp = np.asarray(sweep.compute_s, dtype=float).sum(axis=0).ravel()
    at = np.flatnonzero(comp >= mem)
    db = b[-1] - b[-2] if b.size > 1 else 1.0
    return dict(cross=float(b[at[0]]) if at.size else float("nan"), last=float(b[-1]),
                mem_ms_per_seq=float(mem[-1] - mem[-2]) / db * 1e3 if b.size > 1 else float("nan"),
                compute_ms_per_seq=float(comp[-1] - comp[-2]) / db * 1e3 if b.size > 1 else float("nan"))


def crossing_text(sweep: OperatorTable, critical_batch: float, t) -> str:
    """The roofline caption's sentence on :func:`memory_compute_crossing`, numbers formatted."""
    c = memory_compute_crossing(sweep)
    bstar = F.number(critical_batch, 0)
    if c["cross"] == c["cross"]:
        return t("db.cross.at", x=F.integer(c["cross"]), bstar=bstar)
    return t("db.cross.none", last=F.integer(c["last"]), bstar=bstar, mem=F.number(c["mem_ms_per_seq"], 2),
             comp=F.number(c["compute_ms_per_seq"], 3))
