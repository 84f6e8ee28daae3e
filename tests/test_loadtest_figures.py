"""ui.loadtest.figures.cdf_figure, built from plain dicts, sends what Plotly's validating calls built."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools
import pytest

from ui import charts
from ui.i18n import Translator
from ui.loadtest import figures as LF
from ui.perf.figures import full_log_ticks
from ui.theme import COLORS


def _sent(fig: go.Figure) -> dict:
    """The JSON st.plotly_chart puts in its proto (streamlit/elements/plotly_chart.py), read back."""
    return json.loads(pio.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True),
                                  validate=False))


def _cdf_figure_plotly(values_s, t, *, title, x_title, slo_s, stat, q, under=(), over=()):
    """cdf_figure as it was, through Plotly's validating API (the reference)."""
    v = np.sort(np.asarray(values_s, dtype=float))
    v = v[np.isfinite(v)] * 1e3
    fig = go.Figure()
    for tr in under:
        fig.add_trace(go.Scatter(**{k: x for k, x in tr.items() if k != "type"}))
    if v.size:
        idx = LF._thin(v.size)
        frac = (idx + 1) / v.size * 100.0
        fig.add_trace(go.Scatter(x=v[idx], y=frac, mode="lines", name=t("lt.fig.cdf_name"),
                                 line=dict(color=COLORS["decode"], width=3),
                                 hovertemplate="%{x:,.1f} ms → %{y:.1f} %<extra></extra>"))
        if stat == "mean":
            pq = float(v.mean())
            share = float(np.searchsorted(v, pq, side="right")) / v.size * 100.0
        else:
            share = float(stat.removeprefix("p"))
            pq = float(np.percentile(v, share))
        fig.add_trace(go.Scatter(x=[pq], y=[share], mode="markers", name=t("lt.fig.pq", q=q),
                                 marker=dict(size=12, color=COLORS["decode"]),
                                 hovertemplate=f"{q} = %{{x:,.1f}} ms<extra></extra>"))
        fig.add_hline(y=share, line=dict(color=COLORS["roof"], dash="dot"))
    if slo_s is not None and np.isfinite(slo_s):
        fig.add_trace(go.Scatter(x=[slo_s * 1e3, slo_s * 1e3], y=[0, 100], mode="lines",
                                 name=t("lt.fig.slo", ms=f"{slo_s * 1e3:,.0f}"),
                                 line=dict(color=COLORS["limit"], width=3, dash="dash"), hoverinfo="name"))
    extra = []
    for tr in over:
        fig.add_trace(go.Scatter(**{k: x for k, x in tr.items() if k != "type"}))
        extra += list(tr.get("x", ()))
    fig.update_xaxes(title_text=x_title, type="log", **full_log_ticks(
        np.concatenate([v, [slo_s * 1e3 if slo_s else np.nan], np.asarray(extra, dtype=float)])))
    fig.update_yaxes(title_text=t("lt.fig.share"), range=[0, 101])
    return LF._layout(fig, title)


def _band():
    return [dict(type="scatter", x=np.array([10.0, 40.0, 40.0, 10.0]), y=[0, 0, 100, 100], fill="toself",
                 fillcolor="rgba(0,0,0,0.1)", line=dict(width=0), hoverinfo="skip", showlegend=False, name="band")]


def _measured():
    return [dict(type="scatter", x=[35.0, 80.0], y=[50.0, 95.0], mode="markers", name="yours",
                 marker=dict(symbol="x", size=10), customdata=[["a"], ["b"]], hovertemplate="%{customdata[0]}")]


CASES = {
    "p95": dict(slo_s=0.2, stat="p95", q="P95"),
    "mean, band and measured": dict(slo_s=0.05, stat="mean", q="mean", under=_band(), over=_measured()),
    "no SLA": dict(slo_s=None, stat="p99", q="P99"),
    "many points (thinned)": dict(slo_s=float("inf"), stat="p50", q="P50", n=7000),
    "empty": dict(slo_s=0.2, stat="p95", q="P95", n=0),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", list(CASES))
def test_cdf_figure_sends_what_plotly_built(case, lang):
    kw = dict(CASES[case])
    n = kw.pop("n", 300)
    values = np.random.default_rng(7).gamma(2.0, 0.04, n)
    if n:
        values[3] = np.nan  # dropped by both
    t = Translator(lang)
    args = dict(title="TTFT", x_title="TTFT (ms, log)", **kw)
    ours = LF.cdf_figure(values, t, **args)
    assert isinstance(ours, charts.Figure) and "_spec" in ours.__dict__
    assert _sent(ours) == _sent(_cdf_figure_plotly(values, t, **args))
    # and as ui.layout.chart sends it (charts.sendable: arrays pre-encoded, the template shared)
    d = charts.sendable(LF.cdf_figure(values, t, **args))
    assert json.loads(pio.to_json(charts.Figure(d["data"], d["layout"], sendable=True), validate=False)) == \
        _sent(_cdf_figure_plotly(values, t, **args))
