"""Plotly figure of the planner: cost against latency for every SLA-meeting configuration, the
Pareto front marked. Pure (no ``st.*``); ``t`` is a :class:`ui.i18n.Translator`."""

from __future__ import annotations

from typing import Callable

import numpy as np
import plotly.graph_objects as go

from calc.plan.costs import usd_per_million_tokens
from calc.plan.search import PlanGrid, pareto_mask
from ui import charts
from ui.perf.figures import full_log_ticks
from ui.theme import CHART_HEIGHT, COLORS, FONT_SIZE, TITLE_SIZE

T = Callable[..., str]
MAX_POINTS = 2000  # the cheapest points; the front is drawn in full
GPU_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
              "#999999", "#332288", "#117733", "#882255", "#44AA99", "#AA4499", "#DDCC77", "#88CCEE", "#661100")


def pareto_points(grid: PlanGrid, *, rate_rps: float, input_len: int, output_len: int) -> dict[str, np.ndarray]:
    """The SLA-meeting configurations with a price, flattened: cost per million tokens (input +
    output, the whole bill), end-to-end latency, the Pareto mask and the grid indices."""
    ok = grid.meets_slo & np.isfinite(grid.usd_per_hour)
    idx = np.argwhere(ok)
    cost = usd_per_million_tokens(usd_per_hour=grid.usd_per_hour[ok], tokens_per_s=rate_rps * (input_len + output_len))
    e2e = grid.e2e_s[ok]
    dp = np.asarray(grid.data_parallel_sizes or (1,) * len(grid.tensor_parallel_sizes), dtype=float)
    engines = np.broadcast_to(grid.replicas, ok.shape)[ok] * dp[idx[:, 1]]  # engines sharing the rate
    return {"idx": idx, "cost": np.asarray(cost, dtype=float), "e2e_s": np.asarray(e2e, dtype=float),
            "front": pareto_mask(cost=cost, latency=e2e), "engines": np.asarray(engines, dtype=float)}


def pareto_figure(grid: PlanGrid, t: T, *, rate_rps: float, input_len: int, output_len: int,
                  gpu_names: dict[str, str], bands: Callable | None = None) -> go.Figure:
    """Scatter of cost ($/M tokens) against end-to-end latency (s), one colour per GPU, the
    Pareto front as a line; log axes (both span decades). ``bands(e2e_s, cost, gpu_ids, engines)`` of the
    front's points: traces drawn below everything (the error band, :mod:`ui.bands`)."""
    p = pareto_points(grid, rate_rps=rate_rps, input_len=input_len, output_len=output_len)
    idx = p["idx"]
    traces: list[dict] = []
    order = np.argsort(p["cost"])[:MAX_POINTS]
    hover = _hovertemplate(t)
    for gi, gid in enumerate(grid.gpu_ids):
        sel = order[idx[order, 0] == gi]
        if sel.size == 0:
            continue
        traces.append(dict(type="scattergl", mode="markers", name=gpu_names.get(gid, gid),
                           x=p["e2e_s"][sel], y=p["cost"][sel], customdata=_customdata(grid, idx[sel]),
                           text=_text(grid, idx[sel], gpu_names),
                           hovertemplate=hover, marker=dict(size=7, color=GPU_COLORS[gi % len(GPU_COLORS)], opacity=0.6)))
    front = np.flatnonzero(p["front"])
    front = front[np.argsort(p["e2e_s"][front])]
    if bands is not None and front.size:
        traces = bands(p["e2e_s"][front], p["cost"][front], [grid.gpu_ids[int(g)] for g in idx[front, 0]],
                       p["engines"][front]) + traces
    traces.append(dict(type="scatter", mode="lines+markers", name=t("pl.pareto.front"),
                       x=p["e2e_s"][front], y=p["cost"][front], customdata=_customdata(grid, idx[front]),
                       text=_text(grid, idx[front], gpu_names),
                       hovertemplate=hover, line=dict(color=COLORS["feasible"], width=3, shape="hv"),
                       marker=dict(size=11, color=COLORS["feasible"], symbol="diamond")))
    layout = dict(title=dict(text=t("pl.pareto.title"), font=dict(size=TITLE_SIZE)), font=dict(size=FONT_SIZE),
                  height=CHART_HEIGHT + 200, margin=dict(l=80, r=30, t=90, b=40),  # room for 17 GPUs on a phone
                  xaxis=dict(title=dict(text=t("pl.pareto.x")), type="log", automargin=True,
                             **full_log_ticks(p["e2e_s"])),  # every point: the front is drawn in full
                  yaxis=dict(title=dict(text=t("pl.pareto.y")), type="log", automargin=True,
                             **full_log_ticks(p["cost"])),
                  # below the axis title at any width; maxheight 1: the whole list of GPUs, never a
                  # scrolled box (Plotly's default for a legend below is half the figure's height)
                  legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
                              font=dict(size=FONT_SIZE - 2), maxheight=1))
    # ui.charts.Figure: the same figure without building Plotly's trace objects, and its ~2,000 hover
    # texts copied as lists, not visited one call each (ui.charts.encode_arrays on a go.Figure)
    return charts.Figure(traces, layout)



_FIELDS = ("tp", "s", "replicas", "gpus", "usd", "ttft", "tpot")  # numeric customdata columns


def _customdata(grid: PlanGrid, idx: np.ndarray) -> np.ndarray:
    """Per point (numbers only, sent as one binary array): TP, max_num_seqs, replicas, GPUs, $/h,
    TTFT ms, TPOT ms. GPU, weights and KV precision go in ``text``."""
    at = tuple(idx.T)
    return np.column_stack([np.asarray(grid.tensor_parallel_sizes, dtype=float)[idx[:, 1]],
                            np.asarray(grid.max_num_seqs, dtype=float)[idx[:, 4]], grid.replicas[at],
                            grid.gpus_total[at], np.round(grid.usd_per_hour[at], 2),
                            np.round(grid.ttft_s[at] * 1e3, 0), np.round(grid.tpot_s[at] * 1e3, 1)])


def _text(grid: PlanGrid, idx: np.ndarray, gpu_names: dict[str, str]) -> list[str]:
    names = np.asarray([gpu_names.get(g, g) for g in grid.gpu_ids], dtype=object)[idx[:, 0]]
    q = np.asarray(grid.quantizations, dtype=object)[idx[:, 2]]
    kv = np.asarray(grid.kv_cache_dtypes, dtype=object)[idx[:, 3]]
    return (names + ", " + q + " / KV " + kv).tolist()


def _hovertemplate(t: T) -> str:
    """The translated hover line with plotly placeholders (GPU, weights / KV in the text)."""
    marks = {name: f"%{{customdata[{i}]}}" for i, name in enumerate(_FIELDS)}
    marks["what"] = "%{text}"  # GPU, weights / KV
    return t("pl.pareto.hover", **marks) + "<br>%{x:.2f} s, $%{y:.3f}/M<extra></extra>"
