"""Page controls of the planner (URL-bound specs; widgets drawn by :func:`ui.state.render_control`)
and the parser of the user's own prices. No streamlit here (unit-testable)."""

from __future__ import annotations

import math
import re
from urllib.parse import urlencode

from calc.plan.search import SORTS, Deployment, PlanRequest
from calc.spec.catalog import gpu_ids
from ui.controls import CONCURRENCY, Control, ControlValueError
from ui.traffic import LENGTH_SPREAD, LENGTHS, RATE, SLA_STAT, SLA_TPOT_MS, SLA_TTFT_MS

PL_SORT = Control("pl_sort", "select", "cost", options=SORTS)
PL_TOP = Control("pl_top", "slider", 10, lo=1, hi=50, step=1)
PL_MAX_GPUS = Control("pl_max_gpus", "number", None, lo=1, hi=100_000, step=1, optional=True)
PL_BUDGET = Control("pl_budget", "number", None, lo=0.01, hi=1e7, step=10.0, integer=False, optional=True)
PL_GPUS = Control("pl_gpus", "multi", (), options=lambda: tuple(gpu_ids()))
PL_ONE_PER_GPU = Control("pl_one_per_gpu", "toggle", True)  # calc.plan.search.PlanRequest.one_per_gpu
# The rate and the SLA are the ones every page shares (ui.traffic).
PLANNER = (RATE, SLA_TTFT_MS, SLA_TPOT_MS, SLA_STAT, LENGTHS, LENGTH_SPREAD, PL_SORT, PL_TOP, PL_ONE_PER_GPU, PL_MAX_GPUS,
           PL_BUDGET, PL_GPUS)
PRICES_KEY = "pl_prices"  # text "gpu=usd, gpu=usd": the user's own $/GPU-hour (URL-bound text input)


class TextControl:
    """A URL-bound free-text control (for the share link): written when not empty."""

    kind = "text"

    def __init__(self, key: str) -> None:
        self.key, self.default = key, ""

    def url_value(self, value) -> str | None:
        return value if isinstance(value, str) and value.strip() else None


PL_PRICES = TextControl(PRICES_KEY)
MAX_PRICES_TEXT = 2000
_PAIR = re.compile(r"^\s*([A-Za-z0-9._-]{1,100})\s*=\s*([^,;\s]{1,40})\s*$")


def parse_prices(text: str | None) -> dict[str, float]:
    """``"h100-sxm=2.49, a100-80gb=1.2"`` → ``{"h100-sxm": 2.49, "a100-80gb": 1.2}``.

    Raises :class:`ControlValueError` naming the field for an unknown GPU, a non-number, or a
    price outside (0, 10,000] $/GPU-hour. Empty text: no override.

    >>> parse_prices("H100-SXM = 2.49; a100-80gb=1.2")
    {'h100-sxm': 2.49, 'a100-80gb': 1.2}
    >>> try:
    ...     parse_prices("h100-sxm=free")
    ... except ControlValueError as e:
    ...     print(e.allowed)
    GPU=USD pairs separated by commas, USD a number > 0 and <= 10,000, GPU one of the catalog ids
    """
    allowed = "GPU=USD pairs separated by commas, USD a number > 0 and <= 10,000, GPU one of the catalog ids"
    if text is None or not str(text).strip():
        return {}
    raw = str(text)
    if len(raw) > MAX_PRICES_TEXT:
        raise ControlValueError(PRICES_KEY, raw[:40] + "…", allowed)
    ids = {g.lower(): g for g in gpu_ids()}
    out: dict[str, float] = {}
    for part in re.split(r"[,;]", raw):
        if not part.strip():
            continue
        m = _PAIR.match(part)
        if not m or m.group(1).lower() not in ids:
            raise ControlValueError(PRICES_KEY, part.strip()[:40], allowed)
        try:
            v = float(m.group(2))
        except ValueError:
            raise ControlValueError(PRICES_KEY, part.strip()[:40], allowed) from None
        if not (math.isfinite(v) and 0 < v <= 10_000):
            raise ControlValueError(PRICES_KEY, part.strip()[:40], allowed)
        out[ids[m.group(1).lower()]] = v
    return out


def scenario_link(d: Deployment, *, model_id: str, page: str = "frontier", lang: str = "en",
                  request: PlanRequest | None = None) -> str:
    """Relative link that opens this deployment in another page (the sidebar's URL parameters):
    model, GPU, TP, precisions, context = input + output, concurrency = max_num_seqs; its replicas;
    with the ``request``, the traffic and the SLA every page shares (:mod:`ui.traffic`: rate,
    targets, statistic, length distribution), so the load test opened with it simulates what the planner checked.

    >>> from calc.plan.search import PlanRequest, plan
    >>> from calc.spec.catalog import get_gpu, get_model
    >>> r = plan(get_model("meta-llama/Llama-3.1-8B"), [get_gpu("h100-sxm")],
    ...          PlanRequest(rate_rps=1, input_len=1000, output_len=200, ttft_slo_s=1, tpot_slo_s=0.05, top=1))
    >>> scenario_link(r.ranked[0], model_id="meta-llama/Llama-3.1-8B").startswith("/frontier?model=meta-llama")
    True
    """
    params = {"model": model_id, "gpu": d.gpu, "tp": d.tensor_parallel_size, "dtype": "auto",
              "quantization": d.quantization, "kv_cache_dtype": d.kv_cache_dtype, "context": d.input_len + d.output_len,
              "output_len": d.output_len, "max_model_len": d.max_model_len,
              "concurrency": min(d.max_num_seqs, int(CONCURRENCY.hi)), "max_num_seqs": d.max_num_seqs, "replicas": d.replicas}
    # the layout (sidebar "Multi-GPU layout"): only where it is not TP alone, so old links stay the same
    params |= {k: v for k, v in (("pp", d.pipeline_parallel_size), ("dp", d.data_parallel_size)) if v != 1}
    if d.enable_expert_parallel:
        params["ep"] = "true"
    if request is not None:
        params |= {RATE.key: f"{request.rate_rps:g}", SLA_TTFT_MS.key: f"{request.ttft_slo_s * 1e3:g}",
                   SLA_TPOT_MS.key: f"{request.tpot_slo_s * 1e3:g}", SLA_STAT.key: request.percentile,
                   LENGTHS.key: request.lengths}  # the lengths it was sized and checked with
        if request.lengths != "fixed":
            params[LENGTH_SPREAD.key] = f"{request.length_spread:g}"
    return f"/{page}?{urlencode(params | {'lang': lang})}"

