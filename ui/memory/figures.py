"""Plotly figure builders: ``figure = f(calc result, labels)``. Pure: no ``st.*``, no physics.

Every chart has a title, axis titles with units, one colour per concept (:mod:`ui.theme`) and
hover texts with exact values (GiB and GB). ``t`` is a :class:`ui.i18n.Translator`.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import plotly.graph_objects as go

from calc.sizing.scenario import MemoryResult
from calc.spec.units import GiB, MiB
from ui import charts
from ui import format as F
from ui.theme import CHART_HEIGHT, COLORS, FONT_SIZE, LIMIT_TEXT, PRINTED_PATTERN, STACK_ORDER, TITLE_SIZE, WASTE_PATTERN

T = Callable[..., str]

# MemoryResult field behind each concept of the stacked bar.
STACK_FIELDS = {
    "weights": "weights_bytes",
    "activations": "activation_bytes",
    "overhead": "overhead_bytes",
    "kv": "kv_in_use_bytes",
    "free": "kv_free_bytes",
    "reserved": "reserved_bytes",
}


def _fig(traces: list[dict], layout: dict) -> go.Figure:
    """A figure from plain dicts, without Plotly's per-property validation: validating these
    figures cost about 70 ms of server CPU per rerun of the memory page (most of the page); the
    tests check what validation would (names, axes, types) and that the specs are unchanged."""
    return charts.Figure(traces, layout)


def _layout(title: str, *, height: int = CHART_HEIGHT, **kw) -> dict:
    """The common layout; axes get the common fonts in :func:`_axis`."""
    return dict(
        title=dict(text=title, font=dict(size=TITLE_SIZE)),
        font=dict(size=FONT_SIZE),
        height=height,
        margin=dict(l=70, r=30, t=80, b=70),
        # Legend at the bottom of the whole figure (not of the plot area): Plotly reserves room for it
        # below the x-axis title, so the two never overlap, however many rows the legend wraps into.
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
                    font=dict(size=FONT_SIZE - 1)),
        hoverlabel=dict(font=dict(size=FONT_SIZE - 1)),
    ) | kw


def _axis(title: str | None = None, **kw) -> dict:
    axis_title = dict(font=dict(size=FONT_SIZE)) | ({} if title is None else dict(text=title))
    return dict(tickfont=dict(size=FONT_SIZE - 1), title=axis_title, **({"automargin": True} | kw))


def memory_stack_figure(x: Sequence[int], x_kind: str, r: MemoryResult, t: T, *, chosen: int,
                        utilization: float) -> go.Figure:
    """Stacked per-GPU memory (weights, activations, overhead, KV in use, free KV, reserved)
    for each point of a sweep, against the GPU's capacity and vLLM's budget.

    ``x_kind`` is ``"concurrency"`` or ``"context"``; ``r`` was computed over ``x``.
    Points where ``r.concurrency_fits`` is false are shaded as "does not fit".
    """
    x = [int(v) for v in x]
    n = len(x)
    labels = [F.integer(v) if x_kind == "concurrency" else F.tokens_short(v) for v in x]
    traces = []
    for concept in STACK_ORDER:
        values = np.broadcast_to(np.asarray(getattr(r, STACK_FIELDS[concept]), dtype=float), (n,))
        name = t(f"part.{concept}")
        traces.append(dict(
            type="bar", x=labels, y=values / GiB, name=name, marker=dict(color=COLORS[concept]),
            customdata=[F.both(v) for v in values],
            hovertemplate=f"{name}: %{{customdata}}<extra>%{{x}}</extra>",
        ))
    capacity = float(np.max(r.usable_memory_bytes))
    budget = float(np.max(r.budget_bytes))
    # Limits are line traces (in the legend, with their value) rather than annotations over the bars.
    for name, value, dash, width in ((t("mem.chart.capacity", value=F.gib(capacity)), capacity, "solid", 3),
                                     (t("mem.chart.budget", util=f"{utilization:.2f}", value=F.gib(budget)),
                                      budget, "dash", 2)):
        traces.append(dict(type="scatter", x=labels, y=[value / GiB] * n, mode="lines", name=name,
                           line=dict(color=COLORS["limit"], dash=dash, width=width),
                           hovertemplate=f"{name}: {F.both(value)}<extra></extra>"))
    # Positions on a category axis are category indices (numeric-looking labels would be read as numbers).
    fits = np.broadcast_to(np.asarray(r.concurrency_fits, dtype=bool), (n,))
    shapes, annotations = [], []
    if not fits.all():
        first_bad = int(np.argmin(fits))
        shapes.append(dict(type="rect", xref="x", yref="y domain", x0=first_bad - 0.5, x1=n - 0.5, y0=0, y1=1,
                           fillcolor=COLORS["limit"], opacity=0.12, line=dict(width=0)))
        edge = t("mem.chart.max", value=labels[first_bad - 1]) + " │ " if first_bad > 0 else ""
        annotations.append(dict(x=first_bad - 0.5, y=1, yref="paper", yanchor="bottom", xanchor="center",
                                showarrow=False, text=f"<b>{edge}{t('mem.chart.no_fit')} ▶</b>",
                                font=dict(color=LIMIT_TEXT, size=FONT_SIZE)))  # text: the darker vermillion
    # The user's setting: a starred, bold tick label.
    ticktext = [f"<b>{lab} ★</b>" if v == chosen else lab for v, lab in zip(x, labels)]
    title_key = "mem.chart.title_conc" if x_kind == "concurrency" else "mem.chart.title_ctx"
    ctx = int(np.max(r.context_tokens))
    conc = int(np.max(r.concurrency))
    layout = _layout(t(title_key, ctx=F.integer(ctx), conc=F.integer(conc)),
                     xaxis=_axis(t("mem.chart.x_conc" if x_kind == "concurrency" else "mem.chart.x_ctx")
                                 + f"<br>(★ {t('mem.chart.yours')})", tickmode="array", tickvals=labels,
                                 ticktext=ticktext, type="category"),
                     yaxis=_axis(t("mem.chart.y"), rangemode="tozero"),
                     barmode="stack", bargap=0.15)
    layout["legend"]["traceorder"] = "normal"
    layout["margin"]["t"] = 100
    if shapes:
        layout["shapes"], layout["annotations"] = shapes, annotations
    return _fig(traces, layout)


def waste_figure(r: MemoryResult, t: T, *, block_size: int, max_model_len: int) -> go.Figure:
    """Paged vs contiguous KV allocation: waste per request (left) and requests that fit (right)."""
    ctx = int(np.max(r.context_tokens))
    schemes = [t("waste.paged"), t("waste.contiguous")]
    waste = [float(np.max(r.paged_waste_bytes)), float(np.max(r.contiguous_waste_bytes))]
    starts = bool(np.all(r.fits))  # False: vLLM refuses to start and serves no request in either scheme
    fit = [int(np.max(r.max_concurrency_at_context)), int(np.max(r.contiguous_max_sequences))] if starts else [0, 0]
    fit_text = [F.integer(f) for f in fit] if starts else [t("waste.no_start")] * 2
    traces = [
        dict(type="bar", x=schemes, y=[w / MiB for w in waste], xaxis="x", yaxis="y",
             marker=dict(color=COLORS["kv"], pattern=dict(shape=WASTE_PATTERN)), name=t("waste.left"),
             showlegend=False, customdata=[F.both(w) for w in waste], hovertemplate="%{x}: %{customdata}<extra></extra>",
             text=[F.binary(w) for w in waste], textposition="outside", cliponaxis=False),
        dict(type="bar", x=schemes, y=fit, xaxis="x2", yaxis="y2", marker=dict(color=COLORS["kv"]),
             name=t("waste.right"), showlegend=False, hovertemplate="%{x}: %{y:,}<extra></extra>",
             text=fit_text, textposition="outside", cliponaxis=False),
    ]
    # Two subplots side by side, as plotly.subplots.make_subplots(rows=1, cols=2, horizontal_spacing=0.2)
    # lays them out (each column (1 − 0.2) / 2 wide), titles centred above each column.
    left, right = (0.0, 0.4), (0.6, 1.0)
    titles = [dict(text=text, x=(lo + hi) / 2, y=1.0, xref="paper", yref="paper", xanchor="center",
                   yanchor="bottom", showarrow=False, font=dict(size=FONT_SIZE))
              for text, (lo, hi) in ((t("waste.left"), left),
                                     (t("waste.right") if starts else t("waste.right_no_start"), right))]
    layout = _layout(t("waste.title", block=block_size, ctx=F.integer(ctx)), height=420, annotations=titles,
                     xaxis=_axis(anchor="y", domain=list(left)), xaxis2=_axis(anchor="y2", domain=list(right)),
                     yaxis=_axis("MiB", anchor="x", domain=[0.0, 1.0], rangemode="tozero"),
                     # no y title on the right: its subplot title names it, and a title there sat on the bars
                     yaxis2=_axis(anchor="x2", domain=[0.0, 1.0], rangemode="tozero",
                                  **({} if starts else {"range": [0, 1], "showticklabels": False})))
    layout["margin"]["t"] = 110
    return _fig(traces, layout)


def printed_vs_computed_figure(rows: Sequence[dict], t: T) -> go.Figure:
    """Grouped bars per course figure: printed (hatched) beside computed (solid), in GiB.

    ``rows``: dicts with ``label``, ``concept`` ("weights" or "kv"), ``printed_bytes``, ``computed_bytes``.
    """
    labels = [r["short"] for r in rows]
    colors = [COLORS[r["concept"]] for r in rows]
    printed = [float(r["printed_bytes"]) for r in rows]
    computed = [float(r["computed_bytes"]) for r in rows]
    traces = [
        dict(type="bar", x=labels, y=[v / GiB for v in printed], name=t("kv.chart.printed"),
             marker=dict(color=colors, pattern=dict(shape=PRINTED_PATTERN, fillmode="replace"),
                         line=dict(color=colors, width=2)),
             customdata=[F.both(v) for v in printed],
             hovertemplate=t("kv.chart.printed") + ": %{customdata}<extra>%{x}</extra>"),
        dict(type="bar", x=labels, y=[v / GiB for v in computed], name=t("kv.chart.computed"),
             marker=dict(color=colors, line=dict(color=colors, width=2)),
             customdata=[F.both(v) for v in computed],
             hovertemplate=t("kv.chart.computed") + ": %{customdata}<extra>%{x}</extra>"),
    ]
    layout = _layout(t("kv.chart.title"), height=560, barmode="group",
                     # upright: at -45° the 13 labels ran into each other on a 390-pixel phone, and Plotly's
                     # autotickangles=[-45, -90] still chose -45° there
                     xaxis=_axis(tickangle=-90, automargin=True),
                     yaxis=_axis(t("kv.chart.y"), type="log", tickmode="array",
                                 tickvals=[0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500]))
    layout["margin"] |= dict(b=150, t=110)
    layout["legend"] |= dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0)
    return _fig(traces, layout)
