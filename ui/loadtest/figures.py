"""Plotly figures of the load-test page: latency distributions with the SLA, goodput and tail
latency against the arrival rate, and the engine's timeline. Pure (no ``st.*``); ``t`` is a
:class:`ui.i18n.Translator`. Colours: the app's concepts (queue = queued grey, running = decode
indigo, KV = the KV orange, prefill rose, SLA = limit vermillion, goodput = feasible green)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import plotly.graph_objects as go

from calc.traffic.simulator import SimResult
from calc.traffic.slo import RateSearch
from ui import charts
from ui.perf.figures import full_log_ticks
from ui.theme import CHART_HEIGHT, COLORS, FONT_SIZE, TITLE_SIZE

T = Callable[..., str]
MAX_POINTS = 3000  # points per trace: a browser and a websocket handle that without effort


def _layout(fig: go.Figure, title: str) -> go.Figure:
    fig.update_layout(title=dict(text=title, font=dict(size=TITLE_SIZE)), font=dict(size=FONT_SIZE),
                      height=CHART_HEIGHT, margin=dict(l=60, r=30, t=70, b=80), hovermode="closest",
                      # at the bottom of the whole figure (as ui.perf.figures): clear of the x-axis title
                      legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
                                  font=dict(size=FONT_SIZE - 1)))
    return fig


def _scatter(trace: dict) -> go.Scatter:
    """A trace given as a dict (ui.bands, ui.measured) as a Scatter."""
    return go.Scatter(**{k: v for k, v in trace.items() if k != "type"})


def _thin(n: int) -> np.ndarray:
    """Indices of at most MAX_POINTS evenly spread samples of n."""
    return np.unique(np.linspace(0, n - 1, MAX_POINTS).astype(int)) if n > MAX_POINTS else np.arange(n)


def _layout_dict(title: str) -> dict:
    """:func:`_layout`'s settings as a plain layout dict (for :class:`ui.charts.Figure`)."""
    return dict(title=dict(text=title, font=dict(size=TITLE_SIZE)), font=dict(size=FONT_SIZE),
                height=CHART_HEIGHT, margin=dict(l=60, r=30, t=70, b=80), hovermode="closest",
                legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
                            font=dict(size=FONT_SIZE - 1)))


def cdf_figure(values_s, t: T, *, title: str, x_title: str, slo_s: float | None, stat: str, q: str,
               under: list[dict] | tuple = (), over: list[dict] | tuple = ()) -> go.Figure:
    """Empirical CDF of a latency (ms, log axis: tails span decades), the SLA as a vertical line and
    the judging statistic (``stat``: ``p95`` … or ``mean``, shown as ``q``) as a marker on a
    horizontal line at its share of requests; where they cross tells pass or fail. ``under``:
    traces below the curve (the error band, :mod:`ui.bands`); ``over``: above it (measured
    points, :mod:`ui.measured`), included in the axis range.

    Plain dicts (:class:`ui.charts.Figure`): what Plotly's validating calls (``add_trace``,
    ``add_hline``, ``update_*axes``, ``update_layout``) built before, without them: two of these a
    load-test run were ~40 % of its page script's CPU (cProfile in issue 18's room);
    ``tests/test_pages_load_test.py`` checks the JSON sent is the same."""
    v = np.sort(np.asarray(values_s, dtype=float))
    v = v[np.isfinite(v)] * 1e3
    traces = [{**tr, "type": "scatter"} for tr in under]
    shapes = []
    if v.size:
        idx = _thin(v.size)
        frac = (idx + 1) / v.size * 100.0
        traces.append(dict(type="scatter", x=v[idx], y=frac, mode="lines", name=t("lt.fig.cdf_name"),
                           line=dict(color=COLORS["decode"], width=3),
                           hovertemplate="%{x:,.1f} ms → %{y:.1f} %<extra></extra>"))
        if stat == "mean":  # the mean, at the share of requests at or under it
            pq = float(v.mean())
            share = float(np.searchsorted(v, pq, side="right")) / v.size * 100.0
        else:
            share = float(stat.removeprefix("p"))
            pq = float(np.percentile(v, share))
        traces.append(dict(type="scatter", x=[pq], y=[share], mode="markers", name=t("lt.fig.pq", q=q),
                           marker=dict(size=12, color=COLORS["decode"]),
                           hovertemplate=f"{q} = %{{x:,.1f}} ms<extra></extra>"))
        # Plotly's add_hline on a figure without subplots
        shapes.append(dict(line=dict(color=COLORS["roof"], dash="dot"), type="line", x0=0, x1=1, xref="x domain",
                           y0=share, y1=share, yref="y"))
    if slo_s is not None and np.isfinite(slo_s):
        # the SLA as a trace (data coordinates: exact on the log axis, and hoverable)
        traces.append(dict(type="scatter", x=[slo_s * 1e3, slo_s * 1e3], y=[0, 100], mode="lines",
                           name=t("lt.fig.slo", ms=f"{slo_s * 1e3:,.0f}"),
                           line=dict(color=COLORS["limit"], width=3, dash="dash"), hoverinfo="name"))
    extra = []
    for tr in over:
        traces.append({**tr, "type": "scatter"})
        extra += list(tr.get("x", ()))
    layout = dict(xaxis=dict(title=dict(text=x_title), type="log", **full_log_ticks(
                      np.concatenate([v, [slo_s * 1e3 if slo_s else np.nan], np.asarray(extra, dtype=float)]))),
                  yaxis=dict(title=dict(text=t("lt.fig.share")), range=[0, 101]), **_layout_dict(title))
    if shapes:
        layout["shapes"] = shapes
    return charts.Figure(traces, layout)


def sweep_figure(search: RateSearch, t: T, *, ttft_slo_s: float,
                 bands: Callable[[np.ndarray, np.ndarray, np.ndarray], list[dict]] | None = None) -> go.Figure:
    """Goodput (left axis, requests/s) and P95 / P99 TTFT (right axis, ms, log) at each arrival rate
    the search tried; the highest rate that meets the SLA marked. ``bands(rates, goodput, ttft_p95_ms)``:
    traces below the curves (error bands, :mod:`ui.bands`)."""
    order = np.argsort(search.rates_per_s)
    x = search.rates_per_s[order]
    rps = t("lt.unit.req_s")
    # two y axes by layout (plotly.subplots is not imported: ui/preload keeps page runs import-free)
    fig = go.Figure()
    if bands is not None and x.size:
        for tr in bands(x, search.goodput_requests_per_s[order], np.asarray(search.ttft_p95_s)[order] * 1e3):
            fig.add_trace(_scatter(tr))
    fig.add_trace(go.Scatter(x=x, y=search.goodput_requests_per_s[order], mode="lines+markers", name=t("lt.fig.goodput"),
                             line=dict(color=COLORS["feasible"], width=3),
                             hovertemplate=f"%{{x:,.2f}} {rps} → %{{y:,.2f}} {rps}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=x, mode="lines", name=t("lt.fig.offered"), line=dict(color=COLORS["roof"], dash="dot"),
                             hoverinfo="skip"))
    for name, arr, dash in (("P95", search.ttft_p95_s, "solid"), ("P99", search.ttft_p99_s, "dash")):
        fig.add_trace(go.Scatter(x=x, y=np.asarray(arr)[order] * 1e3, mode="lines+markers", name=t("lt.fig.ttft_p", p=name),
                                 line=dict(color=COLORS["prefill"], dash=dash), yaxis="y2",
                                 hovertemplate=f"%{{x:,.2f}} {rps} → {name} %{{y:,.0f}} ms<extra></extra>"))
    if x.size:
        fig.add_trace(go.Scatter(x=[x.min(), x.max()], y=[ttft_slo_s * 1e3] * 2, mode="lines", yaxis="y2",
                                 name=t("lt.fig.slo", ms=f"{ttft_slo_s * 1e3:,.0f}"),
                                 line=dict(color=COLORS["limit"], dash="dash"), hoverinfo="name"))
    if np.isfinite(search.rate_per_s):
        top = float(np.nanmax(np.concatenate([search.goodput_requests_per_s, x]))) if x.size else 1.0
        fig.add_trace(go.Scatter(x=[search.rate_per_s] * 2, y=[0, top], mode="lines",
                                 name=t("lt.fig.best", rate=f"{search.rate_per_s:,.2f}", p=search.percentile),
                                 line=dict(color=COLORS["feasible"], width=4), hoverinfo="name"))
    fig.update_layout(xaxis=dict(title=dict(text=t("lt.fig.rate")), type="log", **full_log_ticks(x)),
                      yaxis=dict(title=dict(text=t("lt.fig.goodput_axis")), rangemode="tozero"),
                      # automargin: the right axis's labels widen its margin (they were cut at a phone's edge)
                      yaxis2=dict(title=dict(text=t("lt.fig.ttft_axis")), type="log", overlaying="y", side="right",
                                  automargin=True, **full_log_ticks(np.concatenate(
                                      [np.asarray(search.ttft_p95_s), np.asarray(search.ttft_p99_s), [ttft_slo_s]]) * 1e3)))
    return _layout(fig, t("lt.fig.sweep_title", p=search.percentile))


def timeline_figure(r: SimResult, t: T) -> go.Figure:
    """Requests waiting and running per engine step (top), KV blocks in use (% of the pool) and the
    step time (bottom), against simulated time."""
    idx = _thin(r.step_s.size)
    x = r.step_start_s[idx]
    fig = go.Figure()  # two panels by axis domains (top: counts, bottom: KV % and step time)
    fig.add_trace(go.Scatter(x=x, y=r.step_waiting[idx], name=t("lt.fig.waiting"), line=dict(color=COLORS["queued"], width=2),
                             fill="tozeroy", hovertemplate="%{x:,.2f} s: %{y} <extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=r.step_running[idx], name=t("lt.fig.running"), line=dict(color=COLORS["decode"], width=2),
                             hovertemplate="%{x:,.2f} s: %{y}<extra></extra>"))
    kv = r.step_kv_blocks[idx] / max(r.num_blocks, 1) * 100.0
    fig.add_trace(go.Scatter(x=x, y=kv, name=t("lt.fig.kv"), line=dict(color=COLORS["kv"], width=2), yaxis="y2",
                             hovertemplate="%{x:,.2f} s: %{y:.1f} %<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=r.step_s[idx] * 1e3, name=t("lt.fig.step"), mode="markers", yaxis="y3",
                             marker=dict(color=COLORS["prefill"], size=3),
                             hovertemplate="%{x:,.2f} s: %{y:,.1f} ms<extra></extra>"))
    fig.update_layout(xaxis=dict(title=dict(text=t("lt.fig.time")), anchor="y2"),
                      yaxis=dict(title=dict(text=t("lt.fig.requests")), domain=[0.55, 1.0], rangemode="tozero"),
                      yaxis2=dict(title=dict(text=t("lt.fig.kv_axis")), domain=[0.0, 0.45], range=[0, 101]),
                      yaxis3=dict(title=dict(text=t("lt.fig.step_axis")), type="log", overlaying="y2", side="right",
                                  automargin=True, **full_log_ticks(r.step_s[idx] * 1e3)))
    fig = _layout(fig, t("lt.fig.timeline_title"))
    fig.update_layout(height=int(CHART_HEIGHT * 1.3))
    return fig


def requests_csv(r: SimResult) -> str:
    """Per-request results (seconds) as CSV."""
    rows = ["request,arrival_s,input_len,output_len,queue_wait_s,ttft_s,tpot_s,e2e_latency_s,preemptions"]
    for i in range(r.num_requests):
        rows.append(f"{i},{r.arrival_s[i]:.6f},{r.input_len[i]},{r.output_len[i]},{r.queue_wait_s[i]:.6f},"
                    f"{r.ttft_s[i]:.6f},{r.tpot_s[i]:.6f},{r.e2e_latency_s[i]:.6f},{r.preemptions[i]}")
    return "\n".join(rows) + "\n"


def steps_csv(r: SimResult) -> str:
    """Per-step time series as CSV."""
    rows = ["step,start_s,step_s,waiting,running,kv_blocks,prefill_tokens,decode_tokens"]
    for j in range(r.step_s.size):
        rows.append(f"{j},{r.step_start_s[j]:.6f},{r.step_s[j]:.6f},{r.step_waiting[j]},{r.step_running[j]},"
                    f"{r.step_kv_blocks[j]},{r.step_prefill_tokens[j]},{r.step_decode_tokens[j]}")
    return "\n".join(rows) + "\n"
