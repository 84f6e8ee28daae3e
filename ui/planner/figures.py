"""Plotly figure of the planner: cost against latency for every SLA-meeting configuration, the
Pareto front marked. Pure (no ``st.*``); ``t`` is a :class:`ui.i18n.Translator`."""

from __future__ import annotations

from typing import Callable

import numpy as np
import plotly.graph_objects as go

from calc.plan.costs import usd_per_million_tokens
from calc.plan.search import PlanGrid, pareto_mask
from ui import charts
from ui.overlap import first_per_cell
from ui.perf.figures import full_log_ticks
from ui.theme import CHART_HEIGHT, COLORS, FONT_SIZE, TITLE_SIZE

T = Callable[..., str]
MAX_POINTS = 2000  # the cheapest points; the front is drawn in full
# Of one GPU's points falling in one cell of this grid over the plotted span (log axes), only the
# cheapest is drawn (ui.overlap): ~2.5 px by ~2.5 px on a 1440-px-wide screen, under a 7-px marker;
# on the default plan ~500 of 2,000 points sit exactly on another (max_num_seqs above what the rate
# needs changes neither cost nor latency) and ~90 more within the cell.
CELLS_X, CELLS_Y = 400, 200
# Up to this many markers SVG ``scatter`` draws the first view with less of the browser's main thread
# than WebGL ``scattergl``, whose context and shaders cost a fixed start-up: bench/scatter_crossover.py,
# 17 traces, headless Chromium, median main-thread CPU ms SVG / WebGL: 300 179/280, 1,000 198/287,
# 2,000 283/363, 3,000 375/342 (crossover between 2,000 and 3,000). MAX_POINTS keeps the default chart
# below it; a larger cap would switch to WebGL above it.
SVG_MAX_POINTS = 2000
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
    order = np.argsort(p["cost"], kind="stable")[:MAX_POINTS]
    span_x = (float(np.min(p["e2e_s"][order])), float(np.max(p["e2e_s"][order]))) if order.size else None
    span_y = (float(np.min(p["cost"][order])), float(np.max(p["cost"][order]))) if order.size else None
    per_gpu = []
    for gi in range(len(grid.gpu_ids)):
        sel = order[idx[order, 0] == gi]
        if sel.size:  # cheapest first: the one kept in a cell is its cheapest
            sel = sel[first_per_cell(p["e2e_s"][sel], p["cost"][sel], cells_x=CELLS_X, cells_y=CELLS_Y,
                                     span_x=span_x, span_y=span_y)]
        per_gpu.append(sel)
    kind = "scatter" if sum(s.size for s in per_gpu) <= SVG_MAX_POINTS else "scattergl"
    hover = _hovertemplate(t, per_trace_name=True)
    for gi, (gid, sel) in enumerate(zip(grid.gpu_ids, per_gpu)):
        if sel.size == 0:
            continue
        traces.append(dict(type=kind, mode="markers", name=gpu_names.get(gid, gid),
                           # float32 coordinates: sub-pixel exact, half the bytes (the hover prints 2 and 3 decimals)
                           x=p["e2e_s"][sel].astype(np.float32), y=p["cost"][sel].astype(np.float32),
                           customdata=_customdata(grid, idx[sel]), text=_text(grid, idx[sel], None),  # the GPU is the trace's name (in the hover template)
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
                  height=CHART_HEIGHT + 200, margin=dict(l=80, r=30, t=90, b=40),  # 17 GPUs: ~6 legend rows at 1440 px; a phone adds its own (ui.phone)
                  xaxis=dict(title=dict(text=t("pl.pareto.x")), type="log", automargin=True,
                             **full_log_ticks(p["e2e_s"])),  # every point: the front is drawn in full
                  yaxis=dict(title=dict(text=t("pl.pareto.y")), type="log", automargin=True,
                             **full_log_ticks(p["cost"])),
                  # below the axis title at any width; maxheight 1: the whole list of GPUs, never a
                  # scrolled box (Plotly's default for a legend below is half the figure's height)
                  legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
                              font=dict(size=FONT_SIZE - 2), maxheight=1,
                              # "normal": the GPUs in columns side by side; the error band's legendgroup
                              # made plotly.js group the legend, the 17 ungrouped GPUs one column of
                              # 17 rows under a ~180-px plot at 1440 px (issue 19 look check)
                              traceorder="normal"))
    # ui.charts.Figure: the same figure without building Plotly's trace objects, and its ~2,000 hover
    # texts copied as lists, not visited one call each (ui.charts.encode_arrays on a go.Figure)
    return charts.Figure(traces, layout)



_FIELDS = ("tp", "s", "replicas", "gpus", "usd", "ttft", "tpot")  # numeric customdata columns
_FORMATS = (".0f", ".0f", ".0f", ".0f", ".2f", ".0f", ".1f")  # decimals each is rounded to (d3-format)


def _customdata(grid: PlanGrid, idx: np.ndarray) -> np.ndarray:
    """Per point (numbers only, sent as one binary array): TP, max_num_seqs, replicas, GPUs, $/h,
    TTFT ms, TPOT ms. GPU, weights and KV precision go in ``text``. float32: half the bytes of
    float64, every integer below 2**24 exact, and the hover prints each with a fixed number of
    decimals (``_FORMATS``), so a float32's trailing digits never show."""
    at = tuple(idx.T)
    return np.column_stack([np.asarray(grid.tensor_parallel_sizes, dtype=float)[idx[:, 1]],
                            np.asarray(grid.max_num_seqs, dtype=float)[idx[:, 4]], grid.replicas[at],
                            grid.gpus_total[at], np.round(grid.usd_per_hour[at], 2),
                            np.round(grid.ttft_s[at] * 1e3, 0), np.round(grid.tpot_s[at] * 1e3, 1)]).astype(np.float32)


def _text(grid: PlanGrid, idx: np.ndarray, gpu_names: dict[str, str] | None) -> list[str]:
    """Per point: "weights / KV kv-dtype", with the GPU's name first when ``gpu_names`` is given
    (the front mixes GPUs; a GPU's own trace has its name once, in the hover template)."""
    q = np.asarray(grid.quantizations, dtype=object)[idx[:, 2]]
    kv = np.asarray(grid.kv_cache_dtypes, dtype=object)[idx[:, 3]]
    what = q + " / KV " + kv
    if gpu_names is not None:
        what = np.asarray([gpu_names.get(g, g) for g in grid.gpu_ids], dtype=object)[idx[:, 0]] + ", " + what
    return what.tolist()


def _hovertemplate(t: T, *, per_trace_name: bool = False) -> str:
    """The translated hover line with plotly placeholders (GPU, weights / KV in the text; with
    ``per_trace_name`` the GPU is the trace's name, ``%{fullData.name}``, and the text only weights / KV)."""
    marks = {name: f"%{{customdata[{i}]:{fmt}}}" for i, (name, fmt) in enumerate(zip(_FIELDS, _FORMATS))}
    marks["what"] = "%{fullData.name}, %{text}" if per_trace_name else "%{text}"  # GPU, weights / KV
    return t("pl.pareto.hover", **marks) + "<br>%{x:.2f} s, $%{y:.3f}/M<extra></extra>"
