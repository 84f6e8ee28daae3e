"""Plotly figures of the speculative view (pure builders, no streamlit)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def speedup_figure(sw, t, kv_full_batch: float | None = None) -> go.Figure:
    """TPOT speed-up (plain / speculative) over the running batch, log x, a line at 1, and a dotted
    line where the KV pool is full (``kv_full_batch`` requests of the context: larger batches do not fit)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=sw.batch, y=np.asarray(sw.step.speedup), mode="lines+markers", name=t("sd.trace.speedup"),
                             hovertemplate=t("sd.hover") + "<extra></extra>"))
    fig.add_hline(y=1.0, line_dash="dash", annotation_text=t("sd.break_even"))
    if kv_full_batch is not None and kv_full_batch < float(sw.batch[-1]):
        fig.add_vline(x=kv_full_batch, line_dash="dot", annotation_text=t("sd.kv_full", n=f"{int(kv_full_batch):,}"))
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
