"""What the planner page shows, from a :class:`calc.plan.search.PlanResult`: the ranked table,
why options are out, published accuracy per precision, the prices used. Selection and
formatting only (no model maths, no streamlit)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from calc.plan.search import PlanResult
from calc.spec.catalog import gpu_prices
from calc.spec.quality import quality_notes
from ui import format as F
from ui.planner.controls import scenario_link

T = Callable[..., str]


def precision_label(q: str, t: T) -> str:
    return t("pl.prec.none") if q == "none" else q


def _money(x: float | None, digits: int) -> str:
    return "—" if x is None else f"${F.number(x, digits)}"


def quality_short(model_id: str, quantization: str, t: T) -> str:
    """The first published figure for this model and weight format, e.g. ``98.9 % OpenLLM v1``;
    ``none`` (the 16-bit original) is 100 %. ``quantization`` is the format vLLM loads, not ``auto``
    (:func:`calc.sizing.scenario.effective_quantization`): ``auto`` has no published figure."""
    notes = quality_notes(model_id=model_id, quantization=quantization)
    if quantization == "none":
        return t("pl.quality.original")
    if not notes:
        return "—"
    n = notes[0]
    return f"{F.number(n.recovery_percent, 1)} % {n.metric}" if n.recovery_percent is not None else n.claim[:60]


def ranked_rows(r: PlanResult, t: T, *, lang: str) -> list[dict[str, Any]]:
    """One row per ranked deployment, translated headers; the last column a link to the frontier."""
    rows = []
    for k, d in enumerate(r.ranked, 1):
        rows.append({
            t("pl.col.rank"): k, t("pl.col.gpu"): d.gpu_name, t("pl.col.tp"): d.tensor_parallel_size,
            # the multi-GPU layout of one replica (calc.plan.search.Layout)
            t("planner.col.pp"): d.pipeline_parallel_size, t("planner.col.dp"): d.data_parallel_size,
            t("planner.col.ep"): "✓" if d.enable_expert_parallel else "", t("planner.col.nodes"): d.nodes,
            t("pl.col.replicas"): d.replicas, t("pl.col.gpus"): d.gpus_total,
            t("pl.col.weights"): precision_label(d.quantization, t), t("pl.col.kv"): d.kv_cache_dtype,
            t("pl.col.seqs"): d.max_num_seqs, t("pl.col.ttft"): round(d.ttft_s * 1e3, 1),
            t("pl.col.tpot"): round(d.tpot_s * 1e3, 2), t("pl.col.usd_h"): _money(d.usd_per_hour, 2),
            t("pl.col.usd_in"): _money(d.usd_per_million_input_tokens, 4),
            t("pl.col.usd_out"): _money(d.usd_per_million_output_tokens, 4),
            t("pl.col.quality"): quality_short(r.model_id, d.quantization, t), t("pl.col.statistic"): d.slo_statistic,
            t("pl.col.open"): scenario_link(d, model_id=r.model_id, lang=lang, request=r.request),
        })
    return rows


def ranked_summary(rows: list[dict[str, Any]], r: PlanResult, t: T) -> list[dict[str, Any]]:
    """The ranked table's first view (a Markdown table): the columns that decide, short cells, from
    ``rows`` (:func:`ranked_rows`, the same ranking; its other columns are in the sortable grid).

    >>> from types import SimpleNamespace as N
    >>> d = N(gpus_total=4, gpu_name="NVIDIA H100 SXM5 80GB", tensor_parallel_size=2, pipeline_parallel_size=1,
    ...       data_parallel_size=1, enable_expert_parallel=False, replicas=2, quantization="fp8", kv_cache_dtype="auto")
    >>> row = {"#": 1, "max_num_seqs": 64, "TTFT": 120.5, "TPOT": 20.25, "$/h": "$9.96", "$/M out": "$0.34", "Open": "/frontier?x=1"}
    >>> keys = {k: k for k in ("pl.col.rank", "pl.col.seqs", "pl.col.ttft", "pl.col.tpot", "pl.col.usd_h", "pl.col.open")}
    >>> keys |= {"pl.col.usd_out": "$/M out", "pl.col.ttft": "TTFT", "pl.col.tpot": "TPOT", "pl.col.usd_h": "$/h",
    ...          "pl.col.rank": "#", "pl.col.seqs": "max_num_seqs", "pl.col.open": "Open"}
    >>> t = lambda k, **kw: keys.get(k, k).format(**kw)
    >>> ranked_summary([row], N(ranked=[d]), t)[0]["pl.col.deployment"]
    '4 × H100 SXM5 80GB'
    >>> ranked_summary([row], N(ranked=[d]), t)[0]["pl.col.replica"]
    'TP 2 ×2'
    """
    out = []
    for row, d in zip(rows, r.ranked):
        out.append({
            t("pl.col.rank"): row[t("pl.col.rank")],
            t("pl.col.deployment"): f"{d.gpus_total} × {F.gpu_short(d.gpu_name)}",
            t("pl.col.replica"): f"TP {d.tensor_parallel_size}{layout_label(d)} ×{d.replicas}",
            t("pl.col.precisions"): f"{precision_label(d.quantization, t)} / {d.kv_cache_dtype}",
            **{t(k): row[t(k)] for k in ("pl.col.seqs", "pl.col.ttft", "pl.col.tpot", "pl.col.usd_h", "pl.col.usd_out",
                                         "pl.col.open")},
        })
    return out


def reason_summary(r: PlanResult, t: T) -> list[dict[str, Any]]:
    """Options (GPU × TP × weights × KV) that are out, per reason, closest-to-meeting first. The
    options that meet the SLA are in the ranked table, not here ("meets the SLA" is no reason to be out)."""
    counts = Counter(o.reason for o in r.options)
    order = ("no_price", "exceeds_budget", "exceeds_max_gpus", "misses_tpot", "misses_ttft", "does_not_fit")
    return [{t("pl.col.reason"): t(f"pl.reason.{k}"), t("pl.col.count"): counts[k]} for k in order if counts[k]]


def out_rows(r: PlanResult, t: T, gpu_names: dict[str, str]) -> list[dict[str, Any]]:
    """Every option that is out, with its reason and the best latencies it reached."""
    rows = []
    for o in r.options:
        if o.reason == "ok":
            continue
        rows.append({t("pl.col.gpu"): gpu_names.get(o.gpu, o.gpu), t("pl.col.tp"): o.tensor_parallel_size,
                     t("planner.col.pp"): o.pipeline_parallel_size, t("planner.col.dp"): o.data_parallel_size,
                     t("planner.col.ep"): "✓" if o.enable_expert_parallel else "",
                     t("pl.col.weights"): precision_label(o.quantization, t), t("pl.col.kv"): o.kv_cache_dtype,
                     t("pl.col.reason"): t(f"pl.reason.{o.reason}"),
                     t("pl.col.ttft"): None if o.best_ttft_s != o.best_ttft_s else round(o.best_ttft_s * 1e3, 1),
                     t("pl.col.tpot"): None if o.best_tpot_s != o.best_tpot_s else round(o.best_tpot_s * 1e3, 2)})
    return rows


def quality_lines(model_id: str, model_name: str, quantizations: list[str], t: T) -> list[str]:
    """One line per published result for the precisions shown (or that none was found)."""
    lines = []
    for q in quantizations:
        if q == "none":
            continue
        notes = quality_notes(model_id=model_id, quantization=q)
        if not notes:
            lines.append(t("pl.quality.none", model=model_name, q=q))
        for n in notes:
            value = (f"{F.number(n.recovery_percent, 1)} % recovery" if n.recovery_percent is not None
                     else f"“{n.claim}”")
            lines.append(t("pl.quality.row", q=q, checkpoint=n.checkpoint, value=value, metric=n.metric,
                           source=n.source))
    return lines


def price_rows(gpu_ids: list[str], user_prices: dict[str, float], t: T, gpu_names: dict[str, str]) -> list[dict]:
    """The price each GPU was costed at, its source, and the other providers' quotes (the spread)."""
    rows = []
    table = gpu_prices()
    for gid in gpu_ids:
        p = table.get(gid, {})
        mine = user_prices.get(gid)
        price = mine if mine is not None else p.get("usd_per_gpu_hour")
        source = t("pl.prices.yours") if mine is not None else (
            f"{p.get('provider')}, {p.get('date')}: {p.get('source')}" if p.get("usd_per_gpu_hour") is not None
            else t("pl.prices.none"))
        quotes = [q["usd_per_gpu_hour"] for q in p.get("other_quotes", [])]
        rows.append({t("pl.prices.col.gpu"): gpu_names.get(gid, gid),
                     t("pl.prices.col.price"): "—" if price is None else f"${F.number(price, 3)}",
                     t("pl.prices.col.source"): source,
                     t("pl.prices.col.spread"): ", ".join(f"${F.number(v, 2)}" for v in sorted(quotes)) or "—"})
    return rows


def layout_label(d) -> str:
    """" × PP 2", " × DP 8 EP" … after "TP n" (empty for TP alone).

    >>> from types import SimpleNamespace as N
    >>> layout_label(N(pipeline_parallel_size=1, data_parallel_size=8, enable_expert_parallel=True))
    ' × DP 8 EP'
    """
    out = f" × PP {d.pipeline_parallel_size}" if d.pipeline_parallel_size > 1 else ""
    out += f" × DP {d.data_parallel_size}" if d.data_parallel_size > 1 else ""
    return out + (" EP" if d.enable_expert_parallel else "")


def layout_why(d, t: T) -> str | None:
    """Why the best option's multi-GPU layout serves the rate: its GPUs and nodes, what each GPU holds
    (weights, KV pool) and how many sequences all its DP ranks run at once (None for TP alone)."""
    if d.pipeline_parallel_size == 1 and d.data_parallel_size == 1 and not d.enable_expert_parallel:
        return None
    return t("layout.why", layout=f"TP {d.tensor_parallel_size}{layout_label(d)}",
             gpus=d.tensor_parallel_size * d.pipeline_parallel_size * d.data_parallel_size, nodes=d.nodes,
             weights=F.gib(d.weights_bytes), kv=F.gib(d.kv_pool_bytes), dp=d.data_parallel_size,
             seqs=d.max_num_seqs, running=F.integer(d.running * d.data_parallel_size),
             tpot=F.number(d.tpot_s * 1e3, 1))
