"""Page controls of the performance pages (roofline, frontier, scheduler) and the scenario
variants the frontier overlays. Specs only (the widgets are drawn by :func:`ui.state.render_control`);
nothing here imports streamlit, so it is unit-testable.

Every key is page-local and bound to the query string; none clashes with the shared sidebar
(:mod:`ui.controls`). The SLA is the one every page shares (:mod:`ui.traffic`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pydantic import ValidationError

from calc.spec.catalog import get_gpu, gpu_ids
from calc.spec.inputs import GPUSpec, ServingConfig, describe_validation_error
from calc.traffic.workload import CutLengths, cut_serving, cut_serving_input_quantile
from ui.controls import Control
from ui.traffic import REPLICAS, SLA

# roofline page
RF_BATCH = Control("rf_batch", "slider", 1, lo=1, hi=1024, step=1)
ROOFLINE = (RF_BATCH,)

# frontier page
CHUNKED = Control("chunked_prefill", "toggle", True)
PER_GPU = Control("per_gpu", "toggle", False)
MAX_OVERLAYS = 4

# course §3.4 presets: (max_num_seqs, max_num_batched_tokens)
PRESETS: dict[str, tuple[int, int]] = {"low_latency": (8, 2048), "high_throughput": (256, 8192)}


def variant_tokens() -> tuple[str, ...]:
    """Every variant the user may overlay, as ``kind:value`` tokens (the URL spelling)."""
    return (("kv:fp8", "kv:auto", "tp:1", "tp:2", "tp:4", "tp:8", "quant:none", "quant:fp8", "quant:awq",
             "chunked:off", "chunked:on", "preset:low_latency", "preset:high_throughput")
            + tuple(f"gpu:{g}" for g in gpu_ids()))


OVERLAYS = Control("overlays", "multi", ("kv:fp8",), options=variant_tokens)
PRICE = Control("price_usd", "number", None, lo=0.01, hi=10_000.0, step=0.1, integer=False, optional=True)
FRONTIER = (*SLA, CHUNKED, PER_GPU, OVERLAYS, PRICE, REPLICAS)

# scheduler page
SCHED_REQUESTS = Control("sched_requests", "slider", 6, lo=2, hi=8, step=1)
SCHED_LONG = Control("sched_long_prompt", "slider", 2048, lo=256, hi=16384, step=256)
SCHED_SHORT = Control("sched_short_prompt", "slider", 128, lo=16, hi=2048, step=16)
SCHED_OUTPUT = Control("sched_output", "slider", 64, lo=8, hi=512, step=8)
SCHED_GAP_MS = Control("sched_gap_ms", "slider", 50, lo=0, hi=1000, step=10)
SCHED_BUDGET = Control("sched_budget", "slider", 512, lo=64, hi=8192, step=64)
SCHED_MAX_SEQS = Control("sched_max_seqs", "slider", 8, lo=1, hi=16, step=1)
SCHEDULER = (SCHED_REQUESTS, SCHED_LONG, SCHED_SHORT, SCHED_OUTPUT, SCHED_GAP_MS, SCHED_BUDGET, SCHED_MAX_SEQS)

ALL = ROOFLINE + FRONTIER + SCHEDULER


@dataclass(frozen=True)
class Variant:
    """One scenario on the frontier: engine options, GPU, chunked prefill, and how it is named."""

    token: str  # "" for your scenario
    serving: ServingConfig
    gpu: GPUSpec
    chunked: bool
    speculative: object = None  # a calc.spec.speculative.SpeculativeConfig, or None (ui.speculative.inputs)
    # The shared traffic's length distribution (ui.traffic LENGTHS / LENGTH_SPREAD) around the serving
    # config's input and output lengths: the models take its coefficients of variation
    # (calc.traffic.workload.length_cvs), the simulated closed loop draws its requests so.
    lengths: str = "fixed"
    length_spread: float = 0.0
    # The window the requests are cut to where serving.max_model_len is None: the model's own
    # (max_position_embeddings); None: not cut there
    model_window: int | None = None

    @property
    def cut(self) -> CutLengths:
        """The lengths the requests have once cut to max_model_len, as the simulator runs them
        (:func:`calc.traffic.workload.cut_serving`; max_model_len None: :attr:`model_window`)."""
        return cut_serving(self.serving, self.lengths, self.length_spread, self.model_window)[1]

    @property
    def length_cvs(self) -> tuple[float, float]:
        """(input_cv, output_cv) of :attr:`lengths` / :attr:`length_spread`, after the cut (:attr:`cut`)."""
        c = self.cut
        return c.input_cv, c.output_cv

    def input_quantile_tokens(self, percentile: float) -> float | None:
        """The prompt length at ``percentile`` (0-100) of the requests once cut, as the simulator runs
        them (:func:`calc.traffic.workload.cut_input_quantile`): the models' own prompt at that percentile;
        None where nothing is cut."""
        return cut_serving_input_quantile(self.serving, self.lengths, self.length_spread, self.model_window,
                                          percentile / 100.0)

    @property
    def analytic_serving(self) -> ServingConfig:
        """:attr:`serving` with the mean prompt and output the requests have after the cut (:attr:`cut`):
        what the analytic models take."""
        return cut_serving(self.serving, self.lengths, self.length_spread, self.model_window)[0]


def apply_variant(base: Variant, token: str) -> Variant:
    """``base`` with one change; ``ValueError`` (naming the field) if the result is invalid.

    >>> from calc.spec.catalog import get_gpu
    >>> b = Variant("", ServingConfig(), get_gpu("a100-80gb"), True)
    >>> v = apply_variant(b, "tp:2"); v.serving.tensor_parallel_size, v.token
    (2, 'tp:2')
    >>> apply_variant(b, "preset:low_latency").serving.max_num_seqs
    8
    """
    kind, _, value = token.partition(":")
    update: dict = {}
    gpu, chunked = base.gpu, base.chunked
    if kind == "kv":
        update["kv_cache_dtype"] = value
    elif kind == "tp":
        update["tensor_parallel_size"] = int(value)
    elif kind == "quant":
        update["quantization"] = value
    elif kind == "chunked":
        chunked = value == "on"
    elif kind == "preset":
        update["max_num_seqs"], update["max_num_batched_tokens"] = PRESETS[value]
    elif kind == "gpu":
        gpu = get_gpu(value)
    else:
        raise ValueError(f"overlays: unknown variant {token!r}")
    try:
        serving = ServingConfig(**{**base.serving.model_dump(), **update})
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None
    return dataclasses.replace(base, token=token, serving=serving, gpu=gpu, chunked=chunked)


def same_as(a: Variant, b: Variant) -> bool:
    """True when two variants compute the same thing (an overlay equal to your scenario)."""
    return (a.serving == b.serving and a.gpu.id == b.gpu.id and a.chunked == b.chunked
            and a.length_cvs == b.length_cvs)
