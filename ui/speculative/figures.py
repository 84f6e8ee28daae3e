"""Plotly figures of the speculative view (pure builders, no streamlit)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def speedup_figure(sw, t) -> go.Figure:
    """TPOT speed-up (plain / speculative) over the running batch, log x, a line at 1."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=sw.batch, y=np.asarray(sw.step.speedup), mode="lines+markers", name=t("sd.trace.speedup"),
                             hovertemplate=t("sd.hover") + "<extra></extra>"))
    fig.add_hline(y=1.0, line_dash="dash", annotation_text=t("sd.break_even"))
    fig.update_layout(title=t("sd.fig.title"), xaxis_title=t("sd.fig.x"), yaxis_title=t("sd.fig.y"), showlegend=False)
    fig.update_xaxes(type="log")
    return fig


def tpot_figure(sw, t) -> go.Figure:
    """TPOT with and without speculation over the batch (ms, log-log)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=sw.batch, y=np.asarray(sw.step.decode_step_s) * 1e3, mode="lines",
                             name=t("sd.trace.plain")))
    fig.add_trace(go.Scatter(x=sw.batch, y=np.asarray(sw.step.tpot_s) * 1e3, mode="lines", name=t("sd.trace.spec")))
    fig.update_layout(title=t("sd.fig2.title"), xaxis_title=t("sd.fig.x"), yaxis_title=t("sd.fig2.y"))
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig
