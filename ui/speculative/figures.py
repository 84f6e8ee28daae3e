"""Plotly figures of the speculative view (pure builders, no streamlit).

Built like the performance pages' charts (:mod:`ui.perf.figures`): colours from :mod:`ui.theme`,
log axes labelled in full numbers, the legend below, and marks (break-even, KV cache full) as
traces in data coordinates. A layout shape's annotation on a log axis takes its x as log10(x), so
``add_vline(x=58, annotation_text=…)`` put the label at 10^58 and stretched the batch axis to
10^64 (issue #19's look check).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui import format as F
from ui.perf.figures import NO_HOVER, _axis, _fig, _layout, _line, _vline
from ui.theme import COLORS, FONT_SIZE, LIMIT_TEXT

SPEC = COLORS["op.mlp"]  # blue: with speculation
PLAIN = "#000000"  # black (light grey on the dark theme): without speculation, as "your scenario" elsewhere


def _fits(batch: np.ndarray, kv_full_batch: float | None) -> np.ndarray:
    """True where the batch fits the KV pool (every batch when the pool's limit is unknown)."""
    return np.ones(batch.shape, bool) if kv_full_batch is None else batch <= kv_full_batch


def speedup_figure(sw, t, kv_full_batch: float | None = None) -> go.Figure:
    """TPOT speed-up (plain / speculative) over the running batch, log x, a line at 1, and a dotted
    line where the KV pool is full (``kv_full_batch`` requests of the context: larger batches do not
    fit; their part of the curve is drawn thin)."""
    b = np.asarray(sw.batch, dtype=float)
    s = np.asarray(sw.step.speedup, dtype=float)
    y_lo = min(0.9, float(np.nanmin(s)) * 0.95)
    y_hi = max(1.1, float(np.nanmax(s)) * 1.08)
    fit = _fits(b, kv_full_batch)
    hover = t("sd.hover") + NO_HOVER
    traces = [_line([b[0], b[-1]], [1.0, 1.0], name=t("sd.break_even"), color=PLAIN, width=2, dash="dash",
                    hover=t("sd.break_even"))]
    if (~fit).any():  # past the KV wall: roofline only, thin and without markers
        k = int(np.argmax(~fit))
        traces.append(dict(type="scatter", mode="lines", x=b[k - 1 if k else 0:], y=s[k - 1 if k else 0:],
                           name=t("sd.trace.speedup"), showlegend=False, line=dict(color=SPEC, width=1.5),
                           hovertemplate=hover))
    traces.append(dict(type="scatter", mode="lines+markers", x=b[fit], y=s[fit], name=t("sd.trace.speedup"),
                       line=dict(color=SPEC, width=3), marker=dict(size=7, color=SPEC), hovertemplate=hover))
    if kv_full_batch is not None and kv_full_batch < float(b[-1]):
        name = t("sd.kv_full", n=F.integer(kv_full_batch))
        traces.append(_vline(float(kv_full_batch), y_lo, y_hi, name=name, color=COLORS["limit"], dash="dot", width=2.5))
        traces.append(dict(type="scatter", mode="text", x=[float(kv_full_batch)], y=[y_hi * 0.97],
                           text=[f" {F.integer(kv_full_batch)}"], textposition="middle right", showlegend=False,
                           textfont=dict(color=LIMIT_TEXT, size=FONT_SIZE - 1), hovertemplate=name + NO_HOVER))
    return _fig(traces, _layout(t("sd.fig.title"),
                                xaxis=_axis(t("sd.fig.x"), log=True, ticks=(float(b[0]), float(b[-1]), "pow2")),
                                yaxis=_axis(t("sd.fig.y"), range=[y_lo, y_hi])))


def tpot_figure(sw, t, kv_full_batch: float | None = None) -> go.Figure:
    """TPOT with and without speculation over the batch (ms, log-log), the KV pool's limit dotted."""
    b = np.asarray(sw.batch, dtype=float)
    plain = np.asarray(sw.step.decode_step_s, dtype=float) * 1e3
    spec = np.asarray(sw.step.tpot_s, dtype=float) * 1e3
    both = np.concatenate([plain, spec])
    lo, hi = float(np.nanmin(both)), float(np.nanmax(both))
    ms = t("sd.hover.tpot")
    traces = [dict(type="scatter", mode="lines", x=b, y=plain, name=t("sd.trace.plain"),
                   line=dict(color=PLAIN, width=3), hovertemplate=ms + NO_HOVER),
              dict(type="scatter", mode="lines", x=b, y=spec, name=t("sd.trace.spec"),
                   line=dict(color=SPEC, width=3, dash="dash"), hovertemplate=ms + NO_HOVER)]
    if kv_full_batch is not None and kv_full_batch < float(b[-1]):
        traces.append(_vline(float(kv_full_batch), lo * 0.9, hi * 1.1, name=t("sd.kv_full", n=F.integer(kv_full_batch)),
                             color=COLORS["limit"], dash="dot", width=2.5))
    return _fig(traces, _layout(t("sd.fig2.title"),
                                xaxis=_axis(t("sd.fig.x"), log=True, ticks=(float(b[0]), float(b[-1]), "pow2")),
                                yaxis=_axis(t("sd.fig2.y"), log=True, ticks=(lo, hi, "125"))))

