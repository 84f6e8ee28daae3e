"""Figures of the disaggregation page (pure Plotly builders, no streamlit)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import plotly.graph_objects as go

from calc.plan.disaggregation import SameGPUs
from ui.theme import CHART_HEIGHT, COLORS, FONT_SIZE

T = Callable[..., str]
# The legend below the whole figure, from its left edge (as every other page's charts: ui.perf.figures):
# Plotly keeps it clear of the x-axis title. At paper y = -0.2 it sat over the x-axis title, and on a
# 390-px phone, wrapped into rows, Plotly pushed the plot into the right half of the figure (the
# splits' x-axis title and last bar were cut at the edge).
LEGEND = dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
              font=dict(size=FONT_SIZE - 1), maxheight=1)
MARGIN = dict(l=70, r=30, t=70, b=80)
COLOCATED = COLORS["weights"]  # blue: one engine does both
DISAGG = COLORS["kv"]  # orange: the KV that moves


def frontier_figure(r: SameGPUs, t: T, *, rate_rps: float, chosen: int) -> go.Figure:
    """Requests/s within the SLA against the GPU count: colocated and the best split, the user's rate."""
    n = r.gpu_counts
    labels = [f"{p}P{d}D" if p else "—" for p, d in zip(r.best_prefill.tolist(), r.best_decode.tolist())]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=n, y=r.colocated_rps, name=t("dg.fig.colocated"), mode="lines+markers",
                             line=dict(color=COLOCATED, width=3, shape="hv"),
                             hovertemplate="%{x} GPUs: %{y:.2f} req/s<extra>" + t("dg.fig.colocated") + "</extra>"))
    fig.add_trace(go.Scatter(x=n, y=r.disaggregated_rps, name=t("dg.fig.disagg"), mode="lines+markers",
                             line=dict(color=DISAGG, width=3, shape="hv"), customdata=labels,
                             hovertemplate="%{x} GPUs: %{y:.2f} req/s (%{customdata})<extra></extra>"))
    fig.add_hline(y=rate_rps, line=dict(color=COLORS["limit"], dash="dash"),
                  annotation_text=t("dg.fig.rate"), annotation_position="top left")
    fig.add_vline(x=chosen, line=dict(color="#999999", dash="dot"))
    fig.update_layout(title=t("dg.fig.frontier.title"), height=CHART_HEIGHT, font=dict(size=FONT_SIZE),
                      xaxis=dict(title=t("dg.fig.frontier.x"), dtick=2 if n.size <= 32 else 4),
                      yaxis=dict(title=t("dg.fig.frontier.y"), rangemode="tozero"),
                      legend=LEGEND, margin=MARGIN, hovermode="x unified")
    return fig


def splits_figure(r: SameGPUs, t: T, *, n: int, colocated_rps: float) -> go.Figure:
    """Every P:D split of ``n`` GPUs: what each pool carries (the deployment carries the lower) and
    the colocated answer as a line."""
    p, d, rate = r.splits(n)
    x = [f"{a}:{b}" for a, b in zip(p.tolist(), d.tolist())]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=p * r.prefill_rps_per_instance, name=t("dg.fig.splits.prefill"),
                         marker_color=COLORS["activations"], opacity=0.55,
                         hovertemplate="%{x}: %{y:.2f} req/s<extra></extra>"))
    fig.add_trace(go.Bar(x=x, y=d * r.decode_rps_per_instance, name=t("dg.fig.splits.decode"),
                         marker_color=COLORS["overhead"], opacity=0.55,
                         hovertemplate="%{x}: %{y:.2f} req/s<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=rate, name=t("dg.fig.disagg"), mode="lines+markers",
                             line=dict(color=DISAGG, width=3), hovertemplate="%{x}: %{y:.2f} req/s<extra></extra>"))
    fig.add_hline(y=colocated_rps, line=dict(color=COLOCATED, width=3),
                  annotation_text=t("dg.fig.colocated"), annotation_position="top left")
    top = float(np.max(rate)) if rate.size else 0.0
    fig.update_layout(title=t("dg.fig.splits.title", n=n), height=CHART_HEIGHT, font=dict(size=FONT_SIZE),
                      barmode="group", xaxis=dict(title=t("dg.fig.splits.x")),
                      yaxis=dict(title=t("dg.fig.frontier.y"), rangemode="tozero",
                                 range=[0, 1.6 * max(top, colocated_rps, 1e-9)]),
                      legend=LEGEND, margin=MARGIN)
    return fig
