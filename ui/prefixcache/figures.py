"""Plotly figures of the prefix-cache page. Pure (no ``st.*``); ``t`` is a :class:`ui.i18n.Translator`.
Colours: cached = the KV orange (what the cache serves), computed prefill = prefill rose, no cache =
the capacity vermillion, the simulator's points = decode indigo."""

from __future__ import annotations

from typing import Callable

import numpy as np
import plotly.graph_objects as go

from ui.perf.figures import full_log_ticks
from ui.theme import CHART_HEIGHT, COLORS, FONT_SIZE, TITLE_SIZE

T = Callable[..., str]
DASHES = ("solid", "dash", "dot", "dashdot")


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, *, x_log: bool, y_log: bool = False) -> go.Figure:
    fig.update_layout(title=dict(text=title, font=dict(size=TITLE_SIZE)), font=dict(size=FONT_SIZE),
                      height=CHART_HEIGHT, margin=dict(l=60, r=30, t=70, b=80), hovermode="closest",
                      legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
                                  font=dict(size=FONT_SIZE - 1)))
    fig.update_xaxes(title_text=x_title, type="log" if x_log else "linear", **(_ticks(fig, "x") if x_log else {}))
    fig.update_yaxes(title_text=y_title, type="log" if y_log else "linear", **(_ticks(fig, "y") if y_log else {}))
    return fig


def _ticks(fig: go.Figure, axis: str) -> dict:
    """A log axis labelled in full numbers over the traces' values (1, 2, 5, 10, … 1,000; not Plotly's
    small "2 3 4 … 9" between decades nor "10k"), as on the other pages."""
    values = [np.asarray(getattr(tr, axis), dtype=float) for tr in fig.data if getattr(tr, axis) is not None]
    return full_log_ticks(np.concatenate(values)) if values else {}


def hit_rate_figure(items, curves, load_labels, *, chosen: float, held, t: T, chat: bool,
                    simulated: tuple[float, float] | None = None) -> go.Figure:
    """Hit rate (% of prompt tokens from the cache) against distinct prefixes (conversations in
    flight for a chat), one line per load; a dotted line where the cache stops holding them all,
    the chosen count marked; the simulator's answer at the chosen point when there is one."""
    x = np.asarray(items, dtype=float)
    fig = go.Figure()
    what = t("pc.fig.conversations") if chat else t("pc.fig.prefixes")
    for j, (row, label) in enumerate(zip(np.asarray(curves, dtype=float), load_labels)):
        fig.add_trace(go.Scatter(x=x, y=row * 100.0, mode="lines", name=label,
                                 line=dict(color=COLORS["kv"], width=3, dash=DASHES[j % len(DASHES)]),
                                 hovertemplate=f"%{{x:,.0f}} {what} → %{{y:.1f}} %<extra>{label}</extra>"))
    for j, h in enumerate(np.atleast_1d(held)):
        if np.isfinite(h) and h >= 1:
            fig.add_vline(x=float(h), line=dict(color=COLORS["limit"], dash=DASHES[j % len(DASHES)], width=1))
    fig.add_vline(x=float(chosen), line=dict(color=COLORS["roof"], dash="dot"))
    if simulated is not None:
        fig.add_trace(go.Scatter(x=[simulated[0]], y=[simulated[1] * 100.0], mode="markers", name=t("pc.fig.simulated"),
                                 marker=dict(size=14, color=COLORS["decode"], symbol="diamond"),
                                 hovertemplate="%{y:.1f} %<extra></extra>"))
    fig.update_yaxes(range=[0, 100])
    return _layout(fig, t("pc.fig.hit_title"), t("pc.fig.hit_x_chat" if chat else "pc.fig.hit_x"),
                   t("pc.fig.hit_y"), x_log=True)


def ttft_figure(point, t: T, *, chosen_rate: float, simulated: tuple[float, float, float] | None = None) -> go.Figure:
    """Mean and P95 TTFT (ms, log) against the arrival rate, with the cache and without; unstable
    rates (past capacity) are left out, so where a line stops the engine can no longer keep up."""
    r = np.asarray(point.rate_rps, dtype=float)
    fig = go.Figure()
    for key, ys, ok, color, dash in (
            ("pc.fig.on_mean", point.ttft_s, point.stable, COLORS["kv"], "solid"),
            ("pc.fig.on_p95", point.ttft_p95_s, point.stable, COLORS["kv"], "dash"),
            ("pc.fig.off_mean", point.ttft_off_s, point.stable_off, COLORS["limit"], "solid"),
            ("pc.fig.off_p95", point.ttft_p95_off_s, point.stable_off, COLORS["limit"], "dash")):
        y = np.where(np.asarray(ok) & np.isfinite(ys), np.asarray(ys, dtype=float) * 1e3, np.nan)
        fig.add_trace(go.Scatter(x=r, y=y, mode="lines", name=t(key), line=dict(color=color, width=3, dash=dash),
                                 hovertemplate="%{x:,.2f} req/s → %{y:,.1f} ms<extra>" + t(key) + "</extra>"))
    fig.add_vline(x=float(chosen_rate), line=dict(color=COLORS["roof"], dash="dot"))
    if simulated is not None:
        fig.add_trace(go.Scatter(x=[simulated[0], simulated[0]], y=[simulated[1] * 1e3, simulated[2] * 1e3],
                                 mode="markers", name=t("pc.fig.simulated"),
                                 marker=dict(size=13, color=COLORS["decode"], symbol="diamond"),
                                 hovertemplate="%{y:,.1f} ms<extra></extra>"))
    return _layout(fig, t("pc.fig.ttft_title"), t("pc.fig.rate_x"), t("pc.fig.ttft_y"), x_log=True, y_log=True)
