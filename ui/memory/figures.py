"""Plotly figure builders: ``figure = f(calc result, labels)``. Pure: no ``st.*``, no physics.

Every chart has a title, axis titles with units, one colour per concept (:mod:`ui.theme`) and
hover texts with exact values (GiB and GB). ``t`` is a :class:`ui.i18n.Translator`.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from calc.sizing.scenario import MemoryResult
from calc.spec.units import GiB, MiB
from ui import format as F
from ui.theme import CHART_HEIGHT, COLORS, FONT_SIZE, PRINTED_PATTERN, STACK_ORDER, TITLE_SIZE, WASTE_PATTERN

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


def _layout(fig: go.Figure, title: str, *, height: int = CHART_HEIGHT) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, font=dict(size=TITLE_SIZE)),
        font=dict(size=FONT_SIZE),
        height=height,
        margin=dict(l=70, r=30, t=80, b=70),
        legend=dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0, font=dict(size=FONT_SIZE - 1)),
        hoverlabel=dict(font_size=FONT_SIZE - 1),
    )
    fig.update_xaxes(tickfont=dict(size=FONT_SIZE - 1), title_font=dict(size=FONT_SIZE))
    fig.update_yaxes(tickfont=dict(size=FONT_SIZE - 1), title_font=dict(size=FONT_SIZE))
    return fig


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
    fig = go.Figure()
    for concept in STACK_ORDER:
        values = np.broadcast_to(np.asarray(getattr(r, STACK_FIELDS[concept]), dtype=float), (n,))
        name = t(f"part.{concept}")
        fig.add_bar(
            x=labels, y=values / GiB, name=name, marker_color=COLORS[concept],
            customdata=[F.both(v) for v in values],
            hovertemplate=f"{name}: %{{customdata}}<extra>%{{x}}</extra>",
        )
    capacity = float(np.max(r.usable_memory_bytes))
    budget = float(np.max(r.budget_bytes))
    # Limits are line traces (in the legend, with their value) rather than annotations over the bars.
    for name, value, dash, width in ((t("mem.chart.capacity", value=F.gib(capacity)), capacity, "solid", 3),
                                     (t("mem.chart.budget", util=f"{utilization:.2f}", value=F.gib(budget)),
                                      budget, "dash", 2)):
        fig.add_scatter(x=labels, y=[value / GiB] * n, mode="lines", name=name,
                        line=dict(color=COLORS["limit"], dash=dash, width=width),
                        hovertemplate=f"{name}: {F.both(value)}<extra></extra>")
    # Positions on a category axis are category indices (numeric-looking labels would be read as numbers).
    fits = np.broadcast_to(np.asarray(r.concurrency_fits, dtype=bool), (n,))
    if not fits.all():
        first_bad = int(np.argmin(fits))
        fig.add_vrect(x0=first_bad - 0.5, x1=n - 0.5, fillcolor=COLORS["limit"], opacity=0.12, line_width=0)
        edge = t("mem.chart.max", value=labels[first_bad - 1]) + " │ " if first_bad > 0 else ""
        fig.add_annotation(x=first_bad - 0.5, y=1, yref="paper", yanchor="bottom", xanchor="center",
                           showarrow=False, text=f"<b>{edge}{t('mem.chart.no_fit')} ▶</b>",
                           font=dict(color=COLORS["limit"], size=FONT_SIZE))
    # The user's setting: a starred, bold tick label.
    ticktext = [f"<b>{lab} ★</b>" if v == chosen else lab for v, lab in zip(x, labels)]
    fig.update_xaxes(tickmode="array", tickvals=labels, ticktext=ticktext)
    title_key = "mem.chart.title_conc" if x_kind == "concurrency" else "mem.chart.title_ctx"
    ctx = int(np.max(r.context_tokens))
    conc = int(np.max(r.concurrency))
    _layout(fig, t(title_key, ctx=F.integer(ctx), conc=F.integer(conc)))
    fig.update_layout(barmode="stack", bargap=0.15, legend_traceorder="normal", margin=dict(t=100))
    fig.update_xaxes(title_text=t("mem.chart.x_conc" if x_kind == "concurrency" else "mem.chart.x_ctx")
                     + f"   (★ {t('mem.chart.yours')})", type="category")
    fig.update_yaxes(title_text=t("mem.chart.y"), rangemode="tozero")
    return fig


def waste_figure(r: MemoryResult, t: T, *, block_size: int, max_model_len: int) -> go.Figure:
    """Paged vs contiguous KV allocation: waste per request (left) and requests that fit (right)."""
    ctx = int(np.max(r.context_tokens))
    schemes = [t("waste.paged"), t("waste.contiguous")]
    waste = [float(np.max(r.paged_waste_bytes)), float(np.max(r.contiguous_waste_bytes))]
    fit = [int(np.max(r.max_concurrency_at_context)), int(np.max(r.contiguous_max_sequences))]
    fig = make_subplots(rows=1, cols=2, subplot_titles=(t("waste.left"), t("waste.right")), horizontal_spacing=0.15)
    fig.add_bar(x=schemes, y=[w / MiB for w in waste], marker=dict(color=COLORS["kv"],
                pattern=dict(shape=WASTE_PATTERN)), name=t("waste.left"), showlegend=False,
                customdata=[F.both(w) for w in waste], hovertemplate="%{x}: %{customdata}<extra></extra>",
                text=[F.binary(w) for w in waste], textposition="outside", cliponaxis=False, row=1, col=1)
    fig.add_bar(x=schemes, y=fit, marker_color=COLORS["kv"], name=t("waste.right"), showlegend=False,
                hovertemplate="%{x}: %{y:,}<extra></extra>", text=[F.integer(f) for f in fit],
                textposition="outside", cliponaxis=False, row=1, col=2)
    _layout(fig, t("waste.title", block=block_size, ctx=F.integer(ctx)), height=420)
    fig.update_yaxes(title_text="MiB", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text=t("mem.chart.x_conc"), rangemode="tozero", row=1, col=2)
    fig.update_annotations(font_size=FONT_SIZE)
    fig.update_layout(margin=dict(t=110))
    return fig


def printed_vs_computed_figure(rows: Sequence[dict], t: T) -> go.Figure:
    """Grouped bars per course figure: printed (hatched) beside computed (solid), in GiB.

    ``rows``: dicts with ``label``, ``concept`` ("weights" or "kv"), ``printed_bytes``, ``computed_bytes``.
    """
    labels = [r["short"] for r in rows]
    colors = [COLORS[r["concept"]] for r in rows]
    printed = [float(r["printed_bytes"]) for r in rows]
    computed = [float(r["computed_bytes"]) for r in rows]
    fig = go.Figure()
    fig.add_bar(x=labels, y=[v / GiB for v in printed], name=t("kv.chart.printed"),
                marker=dict(color=colors, pattern=dict(shape=PRINTED_PATTERN, fillmode="replace"),
                            line=dict(color=colors, width=2)),
                customdata=[F.both(v) for v in printed],
                hovertemplate=t("kv.chart.printed") + ": %{customdata}<extra>%{x}</extra>")
    fig.add_bar(x=labels, y=[v / GiB for v in computed], name=t("kv.chart.computed"),
                marker=dict(color=colors, line=dict(color=colors, width=2)),
                customdata=[F.both(v) for v in computed],
                hovertemplate=t("kv.chart.computed") + ": %{customdata}<extra>%{x}</extra>")
    _layout(fig, t("kv.chart.title"), height=560)
    fig.update_layout(barmode="group", margin=dict(b=150, t=110),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0))
    fig.update_yaxes(title_text=t("kv.chart.y"), type="log", tickmode="array",
                     tickvals=[0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500])
    fig.update_xaxes(tickangle=-45, automargin=True)
    return fig
