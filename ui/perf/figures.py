"""Plotly figure builders of the performance pages: ``figure = f(calc result, labels)``.

Pure: no ``st.*`` and no model maths (only unit conversion for display: s → ms, FLOP/s →
TFLOP/s). Every chart has a title, axis titles with units, log axes where ranges span decades,
colours from :mod:`ui.theme` and hover texts with exact values. ``t`` is a
:class:`ui.i18n.Translator`.

Two implementation choices:
- Lines, walls and shaded regions are scatter traces (not layout shapes): they live in data
  coordinates on log axes, carry hover texts and can be checked by tests.
- Traces and layout are plain dicts handed to ``go.Figure(..., _validate=False)``: the frontier
  has ~70 traces of 256 points, and plotly's per-property validation alone took ~70 ms per rerun
  (10× the build time without it); the tests check what validation would (names, axes, types).
"""

from __future__ import annotations

import re

from typing import Callable, Sequence

import numpy as np
import plotly.graph_objects as go

from calc.timing.operators import OperatorTable, RooflineResult
from calc.timing.schedule import DECODE, PREFILL, QUEUED, STALLED, ScheduleResult, Segments
from ui import charts
from ui import format as F
from ui.theme import CHART_HEIGHT, COLORS, FEASIBLE_FILL, FONT_SIZE, LIMIT_TEXT, TEXT_INK, TITLE_SIZE

T = Callable[..., str]
TERA = 1e12
MS = 1e3  # milliseconds per second (display only)
PRECISION_LABEL = {"fp16": "FP16/BF16", "bf16": "BF16", "fp8": "FP8", "int8": "INT8"}
ROOF_DASH = {"fp16": "solid", "bf16": "solid", "fp8": "dash", "int8": "dot"}
PHASE_SYMBOL = {"decode": "circle", "prefill": "diamond"}
OPERATOR_ORDER = ("qkv_proj", "attention", "o_proj", "mlp", "lm_head", "elementwise")
GANTT_PHASES = ((QUEUED, "queued"), (STALLED, "stalled"), (PREFILL, "prefill"), (DECODE, "decode"))
NO_HOVER = "<extra></extra>"


def _fig(traces: list[dict], layout: dict) -> go.Figure:
    return charts.Figure(traces, layout)


def _layout(title: str, *, height: int = CHART_HEIGHT, legend_below: bool = True, **axes) -> dict:
    # Below: at the bottom of the whole figure, so Plotly keeps it clear of the x-axis title.
    # maxheight 1 (the whole figure): Plotly's default for a legend below is half the figure's
    # height, past which it scrolls; on a 390-pixel phone the roofline's 13 entries wrap into
    # more rows than that (issue 11), so the legend takes the room it needs and the plot shrinks.
    legend = (dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
                   font=dict(size=FONT_SIZE - 1), maxheight=1)
              if legend_below else dict(font=dict(size=FONT_SIZE - 1)))
    return dict(title=dict(text=title, font=dict(size=TITLE_SIZE)), font=dict(size=FONT_SIZE), height=height,
                margin=dict(l=80, r=30, t=90, b=80), hoverlabel=dict(font_size=FONT_SIZE - 1), legend=legend, **axes)


def _axis(title: str, *, log: bool = False, ticks: tuple[float, float, str] | None = None, **kw) -> dict:
    """An axis with a title; ``ticks=(lo, hi, kind)`` labels a log axis in full numbers."""
    ax = dict(title=dict(text=title), type="log" if log else "linear", automargin=True, **kw)
    if ticks is not None:
        ax["tickvals"], ax["ticktext"] = log_ticks(*ticks)
    return ax


def log_ticks(lo: float, hi: float, kind: str) -> tuple[list[float], list[str]]:
    """Tick values and labels for a log axis, written out in full (no "2, 5" abbreviations):
    ``pow2`` (batch sizes, clients: 1, 2, 4, …), ``125`` (1, 2, 5, 10, 20, …) or ``pow10``.

    >>> log_ticks(1, 40, "pow2")[1]
    ['1', '2', '4', '8', '16', '32']
    >>> log_ticks(3, 600, "125")[1]
    ['5', '10', '20', '50', '100', '200', '500']
    >>> log_ticks(50, 200_000, "125")[1]
    ['100', '1,000', '10,000', '100,000']
    >>> log_ticks(0.018, 5.3, "125")[1]
    ['0.05', '0.1', '0.5', '1', '5']
    """
    lo, hi = max(float(lo), 1e-12), max(float(hi), float(lo))
    if kind == "pow2":
        vals = [2.0 ** k for k in range(int(np.floor(np.log2(lo))), int(np.ceil(np.log2(hi))) + 1)]
    else:
        mult = (1, 2, 5) if kind == "125" else (1,)
        vals = [m * 10.0 ** k for k in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1) for m in mult]
    vals = [v for v in vals if lo <= v <= hi]
    if len(vals) > 7 and kind == "125":  # too many for a projector: 1, 5, 10, 50, … then 1, 10, 100, …
        vals = [v for v in vals if f"{v:.0e}"[0] in "15"]  # the leading digit (0.05 → 5, not 0)
        if len(vals) > 5:
            vals = [v for v in vals if f"{v:.0e}"[0] == "1"]
    while len(vals) > 12:
        vals = vals[::2]
    return vals, [f"{v:g}" if v < 1 else F.integer(v) for v in vals]


def full_log_ticks(values) -> dict:
    """Log-axis ticks written out (0.05, 0.1, 0.2, 0.5, 1 … 5, 10, 20, 50 …) instead of Plotly's own
    labels between powers of ten ("2", "5": read as whole numbers, squeezed on a phone); empty when
    there is nothing to span. For the load-test and planner charts."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return {}
    vals, text = log_ticks(float(v.min()), float(v.max()), "125")
    return dict(tickvals=vals, ticktext=text) if len(vals) >= 2 else {}


def _fewer(ticks: tuple[list[float], list[str]], most: int = 4) -> tuple[list[float], list[str]]:
    """At most ``most`` ticks, evenly picked from the first (unrotated labels in half a phone's width).

    >>> _fewer(log_ticks(1, 1024, "pow2"))[1]
    ['1', '8', '64', '512']
    """
    vals, text = ticks
    step = -(-len(vals) // most)
    return vals[::step], text[::step]


def _subtitle(text: str, x: float, y: float = 1.0, xanchor: str = "center") -> dict:
    return dict(text=text, x=x, y=y, xref="paper", yref="paper", xanchor=xanchor, yanchor="bottom", showarrow=False,
                font=dict(size=FONT_SIZE))


def _line(x, y, *, name: str, color: str, width: float = 3, dash: str = "solid", hover: str | None = None,
          xaxis: str = "x", yaxis: str = "y", **kw) -> dict:
    tr = dict(type="scatter", mode="lines", x=x, y=y, name=name, line=dict(color=color, width=width, dash=dash),
              xaxis=xaxis, yaxis=yaxis, **kw)
    if hover is not None:
        tr["hovertemplate"] = hover + NO_HOVER
    return tr


def _vline(x: float, y0: float, y1: float, **kw) -> dict:
    """A vertical line as a two-point trace (data coordinates, fine on log axes, hoverable)."""
    kw.setdefault("hover", kw["name"])
    return _line([x, x], [y0, y1], **kw)


def _legend_marker(name: str, symbol: str, *, color: str = "#666666", line: str | None = None) -> dict:
    """A legend-only entry explaining a marker symbol."""
    return dict(type="scatter", mode="markers", x=[None], y=[None], name=name, hoverinfo="skip",
                marker=dict(symbol=symbol, size=15, color=color, line=dict(width=2, color=line or color)))


# ----------------------------------------------------------------------------- roofline

def roofline_figure(r: RooflineResult, t: T, *, gpu_name: str) -> go.Figure:
    """Log–log roofline of the GPU with every operator of a decode step (circles) and of a
    prefill step (diamonds) at its arithmetic intensity and modelled FLOP/s. ``r`` is scalar
    (one decode batch, one prompt length)."""
    bw = r.hbm_bw_bytes_per_s
    ai = np.concatenate([np.ravel(r.decode.intensity_flops_per_byte), np.ravel(r.prefill.intensity_flops_per_byte)])
    ai = ai[ai > 0]
    ridges = [roof.ridge_flops_per_byte for roof in r.roofs]
    lo = 10 ** np.floor(np.log10(min(ai.min() / 2, 0.5)))
    hi = 10 ** np.ceil(np.log10(max(ai.max() * 2, max(ridges) * 8)))
    bw_t = F.number(bw / TERA, 2)
    traces = [_line([lo, max(ridges)], [lo * bw / TERA, max(ridges) * bw / TERA], name=t("rf.trace.bandwidth", bw=bw_t),
                    color=COLORS["roof"], hover=t("rf.hover.bandwidth", bw=bw_t))]
    for roof in r.roofs:
        p = roof.peak_flops_per_s / TERA
        label = PRECISION_LABEL.get(roof.precision, roof.precision.upper())
        unit = "TOPS" if roof.precision == "int8" else "TFLOP/s"
        traces.append(_line([roof.ridge_flops_per_byte, hi], [p, p],
                            name=t("rf.trace.roof", precision=label, peak=F.number(p, 1), unit=unit),
                            color=COLORS["roof"], dash=ROOF_DASH.get(roof.precision, "solid"),
                            hover=t("rf.hover.roof", precision=label, peak=F.number(p, 1), unit=unit,
                                    ridge=F.number(roof.ridge_flops_per_byte, 0))))
    ridge, peak = r.compute_precision_ridge_flops_per_byte, r.compute_peak_flops_per_s / TERA
    traces.append(dict(
        type="scatter", x=[ridge], y=[peak], mode="markers+text", name=t("rf.trace.ridge", ridge=F.number(ridge, 0)),
        marker=dict(symbol="x-thin", size=20, line=dict(width=4, color=COLORS["limit"])),
        text=[t("rf.ridge_label", ridge=F.number(ridge, 0), bstar=F.number(r.critical_batch, 0))],
        textposition="top left", textfont=dict(color=LIMIT_TEXT, size=FONT_SIZE), cliponaxis=False,
        hovertemplate=t("rf.hover.ridge", ridge=F.number(ridge, 1), bstar=F.number(r.critical_batch, 1)) + NO_HOVER))
    # (the label is two lines: on one, left of the ridge, it ran off a phone-wide plot)
    points = []
    for table in (r.decode, r.prefill):
        for i, op in enumerate(table.operators):
            x = float(np.ravel(table.intensity_flops_per_byte[i])[0])
            y = float(np.ravel(table.achieved_flops_per_s[i])[0]) / TERA
            share = float(np.ravel(table.time_share[i])[0])
            if x <= 0 or y <= 0:
                continue
            hover = t("rf.hover.op", op=t(f"op.{op}"), phase=t(f"phase.{table.phase}"),
                      flops=F.number(float(np.ravel(table.flops[i])[0]) / 1e9, 3),
                      bytes=F.number(float(np.ravel(table.bytes[i])[0]) / 1e6, 2), ai=F.number(x, 2),
                      achieved=F.number(y, 2),
                      roof=F.number(float(np.ravel(table.attainable_flops_per_s[i])[0]) / TERA, 2),
                      bound=t(f"bound.{np.ravel(table.bound[i])[0]}"),
                      time=F.number(float(np.ravel(table.time_s[i])[0]) * 1e6, 1), share=F.percent(share, 1))
            # Marker area grows with the operator's share of its step: what matters is big; points
            # that coincide (every decode operator sits near 1 FLOP/B at batch 1) nest as rings.
            size = 12 + 30 * np.sqrt(max(share, 0.0))
            points.append((size, dict(
                type="scatter", x=[x], y=[y], mode="markers", name=t(f"op.{op}"), legendgroup=op,
                showlegend=table.phase == "decode",
                marker=dict(symbol=PHASE_SYMBOL[table.phase], size=size, color=COLORS[f"op.{op}"],
                            line=dict(width=2, color="#FFFFFF" if table.phase == "decode" else "#000000")),
                hovertemplate=hover + NO_HOVER)))
    # Largest first, so smaller markers stay visible on top; legend order stays by operator.
    for rank, (_, tr) in enumerate(sorted(points, key=lambda p: -p[0])):
        tr["legendrank"] = 100 + OPERATOR_ORDER.index(tr["legendgroup"])
        traces.append(tr)
    batch = int(np.ravel(r.decode.tokens)[0])
    prompt = int(np.ravel(r.prefill.tokens)[0])
    annotations = []
    for table, text, op, ax, ay in ((r.decode, t("rf.legend.decode", batch=F.integer(batch)), "attention", 110, 45),
                                    (r.prefill, t("rf.legend.prefill", prompt=F.integer(prompt)), "mlp", -70, 95)):
        # Name each cluster with an arrow: decode at its attention point (always the leftmost: every
        # sequence reads its own KV), prefill at its MLP point. Annotation x/y on log axes are log10.
        i = table.operators.index(op)
        x = float(np.ravel(table.intensity_flops_per_byte[i])[0])
        y = float(np.ravel(table.achieved_flops_per_s[i])[0]) / TERA
        annotations.append(dict(x=np.log10(x), y=np.log10(y), text=f"<b>{text}</b>", showarrow=True, arrowhead=2,
                                arrowwidth=1.5, arrowcolor="#333333", ax=ax, ay=ay,  # (auto anchors: plotly
                                font=dict(size=FONT_SIZE, color="#333333")))           # skips fixed-anchor arrows)
    traces.append(_legend_marker(t("rf.legend.decode", batch=F.integer(batch)), PHASE_SYMBOL["decode"]))
    traces.append(_legend_marker(t("rf.legend.prefill", prompt=F.integer(prompt)), PHASE_SYMBOL["prefill"]))
    y_lo = lo * bw / TERA
    y_hi = max(roof.peak_flops_per_s for roof in r.roofs) / TERA * 2
    return _fig(traces, _layout(
        t("rf.title", gpu=gpu_name, batch=F.integer(batch), prompt=F.integer(prompt)), height=720,  # legend: 12 rows on a phone
        annotations=annotations,
        xaxis=_axis(t("rf.x"), log=True, range=[np.log10(lo), np.log10(hi)], ticks=(lo, hi, "pow10")),
        yaxis=_axis(t("rf.y"), log=True, range=[np.log10(y_lo), np.log10(y_hi)], ticks=(y_lo, y_hi, "pow10"))))


def decode_batch_figure(sweep: OperatorTable, t: T, *, batch: int, critical_batch: float,
                        kv_limit_batch: float) -> go.Figure:
    """Decode step over a batch sweep: time split into compute and memory (left), tokens/s
    (right), with the critical batch B* and the KV-cache limit. ``sweep`` is 1-D in the batch."""
    b = np.ravel(sweep.tokens).astype(float)
    step_ms = np.ravel(sweep.step_s) * MS
    comp_ms = sweep.compute_s.sum(axis=0) * MS
    mem_ms = sweep.memory_s.sum(axis=0) * MS
    tok_s = b / np.ravel(sweep.step_s)
    traces = []
    hover_t = t("db.hover.time", b="%{x:,}", v="%{y:.2f}")
    for y, name, color, dash in ((step_ms, t("db.trace.step"), "#000000", "solid"),
                                 (mem_ms, t("db.trace.memory"), COLORS["weights"], "dash"),
                                 (comp_ms, t("db.trace.compute"), COLORS["prefill"], "dot")):
        traces.append(_line(b, y, name=name, color=color, dash=dash, hover=f"{name}: {hover_t}"))
    traces.append(_line(b, tok_s, name=t("db.trace.tokens"), color=COLORS["decode"], xaxis="x2", yaxis="y2",
                        hover=t("db.hover.tokens", b="%{x:,}", v="%{y:,.0f}")))
    ranges = {("x", "y"): (float(np.nanmin(comp_ms)) / 1.5, float(np.nanmax(step_ms)) * 1.5),
              ("x2", "y2"): (float(np.nanmin(tok_s)) / 1.5, float(np.nanmax(tok_s)) * 1.5)}
    for k, ((xa, ya), (y0, y1)) in enumerate(ranges.items()):
        traces.append(_vline(critical_batch, y0, y1, name=t("db.trace.bstar", v=F.number(critical_batch, 0)),
                             color=COLORS["roof"], width=2.5, dash="dash", xaxis=xa, yaxis=ya, legendgroup="bstar",
                             showlegend=k == 0, hover=t("db.trace.bstar", v=F.number(critical_batch, 1))))
        if np.isfinite(kv_limit_batch) and kv_limit_batch >= 1:
            traces.append(_vline(kv_limit_batch, y0, y1, name=t("db.trace.kv", v=F.integer(kv_limit_batch)),
                                 color=COLORS["limit"], width=2.5, dash="dot", xaxis=xa, yaxis=ya, legendgroup="kv",
                                 showlegend=k == 0))
    i = int(np.argmin(np.abs(b - batch)))
    for k, (xa, ya, y) in enumerate((("x", "y", step_ms[i]), ("x2", "y2", tok_s[i]))):
        traces.append(dict(type="scatter", mode="markers", x=[b[i]], y=[y], xaxis=xa, yaxis=ya,
                           name=t("db.trace.yours", b=F.integer(b[i])), legendgroup="yours", showlegend=k == 0,
                           marker=dict(size=16, color=COLORS["decode"], line=dict(width=2, color="#FFFFFF")),
                           hovertemplate=t("db.trace.yours", b=F.integer(b[i])) + ": %{y:,.2f}" + NO_HOVER))
    bx = _fewer(log_ticks(b[0], b[-1], "pow2"))  # 1, 8, 64, 512: readable in half a phone's width
    layout = _layout(t("db.title"), height=580,
                     xaxis=_axis(t("db.x"), log=True, domain=[0.0, 0.44], anchor="y", tickvals=bx[0], ticktext=bx[1]),
                     yaxis=_axis(t("db.y_left"), log=True, anchor="x", ticks=(*ranges[("x", "y")], "125")),
                     xaxis2=_axis(t("db.x"), log=True, domain=[0.56, 1.0], anchor="y2", tickvals=bx[0], ticktext=bx[1]),
                     yaxis2=_axis(t("db.y_right"), log=True, anchor="x2", ticks=(*ranges[("x2", "y2")], "125"),
                                  side="right"),  # its title never lands on the left plot
                     # no subplot titles: the two y-axis titles say what each plot shows, and on a
                     # phone two titles side by side would run into each other
                     )
    return _fig(traces, layout)


# ----------------------------------------------------------------------------- frontier

def _y(s, per_gpu: bool) -> np.ndarray:
    return np.asarray(s.output_tokens_per_s_per_gpu if per_gpu else s.output_tokens_per_s, dtype=float)


def _series_hover(s, t: T) -> tuple[np.ndarray, str]:
    cost = (np.full(s.concurrency.shape, np.nan) if s.cost_per_million_usd is None
            else np.asarray(s.cost_per_million_usd, dtype=float))
    # float32: what the hover shows (at most 7 significant digits) at half the bytes sent per rerun
    q = getattr(s, "ttft_percentile", None)
    custom = np.stack([s.concurrency.astype(float), s.ttft_s * MS, s.tpot_s * MS, s.output_tokens_per_s,
                       s.output_tokens_per_s_per_gpu, np.asarray(s.running, dtype=float), cost]
                      + ([] if q is None else [np.asarray(s.ttft_judged_s, dtype=float) * MS]),
                      axis=-1).astype(np.float32)
    # the mean, and beside it the percentile the SLA is judged on: "TTFT 320.0 (P95 540.0) ms"
    ttft = "%{customdata[1]:,.1f}" + ("" if q is None else f" (P{q:g} %{{customdata[7]:,.1f}})")
    tmpl = t("fr.hover", name=s.label, c="%{customdata[0]:,.0f}", ttft=ttft,
             tpot="%{customdata[2]:,.2f}", x="%{customdata[3]:,.0f}", xg="%{customdata[4]:,.0f}",
             r="%{customdata[5]:,.0f}", cost="%{customdata[6]:,.3f}") + NO_HOVER
    return custom, tmpl


def _series_traces(s, x: np.ndarray, y: np.ndarray, t: T, *, xaxis: str = "x", yaxis: str = "y",
                   showlegend: bool = True) -> list[dict]:
    """Thin line over the whole sweep, thick where the SLA is met, a star at the best point and
    an open diamond at the knee. The thin line carries the hover for every point; the thick one,
    drawn over the same points, none (its copy of the hover data was a third of the page's bytes).
    Coordinates as float32: sub-pixel exact, half the bytes."""
    custom, tmpl = _series_hover(s, t)
    ok = np.asarray(s.feasible, dtype=bool)
    x, y = np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32)
    out = [dict(type="scatter", mode="lines", x=x, y=y, name=s.label, legendgroup=s.label, showlegend=False,
                line=dict(color=s.color, width=1.5), opacity=0.6, customdata=custom, hovertemplate=tmpl,
                xaxis=xaxis, yaxis=yaxis),
           dict(type="scatter", mode="lines", x=np.where(ok, x, np.nan), y=np.where(ok, y, np.nan), name=s.label,
                legendgroup=s.label, showlegend=showlegend, line=dict(color=s.color, width=5), connectgaps=False,
                hoverinfo="skip", xaxis=xaxis, yaxis=yaxis)]
    if s.best >= 0:
        out.append(dict(type="scatter", mode="markers", x=[x[s.best]], y=[y[s.best]], name=t("fr.trace.best"),
                        legendgroup=s.label, showlegend=False, xaxis=xaxis, yaxis=yaxis,
                        marker=dict(symbol="star", size=26, color=s.color, line=dict(width=2.5, color=COLORS["feasible"])),
                        customdata=custom[[s.best]], hovertemplate=t("fr.hover.best") + "<br>" + tmpl))
    if s.knee >= 0:
        out.append(dict(type="scatter", mode="markers", x=[x[s.knee]], y=[y[s.knee]], name=t("fr.trace.knee"),
                        legendgroup=s.label, showlegend=False, xaxis=xaxis, yaxis=yaxis,
                        marker=dict(symbol="diamond-open", size=18, color=s.color, line=dict(width=3)),
                        customdata=custom[[s.knee]], hovertemplate=t("fr.hover.knee") + "<br>" + tmpl))
    return out


def _marker_legend(t: T) -> list[dict]:
    return [_legend_marker(t("fr.trace.best"), "star", line=COLORS["feasible"]),
            _legend_marker(t("fr.trace.knee"), "diamond-open")]


def frontier_concurrency_figure(series: Sequence, t: T, *, per_gpu: bool, chosen: int,
                                under: Sequence[dict] = ()) -> go.Figure:
    """Throughput against concurrency (log axis) per scenario, with each engine limit (KV cache
    full, or max_num_seqs) as a dotted wall, the best SLA-meeting point and the knee. ``under``:
    traces below the curves (the error band, :mod:`ui.bands`)."""
    ys = [_y(s, per_gpu) for s in series]
    y_max = max((float(np.nanmax(y)) for y in ys if np.isfinite(y).any()), default=1.0) * 1.1
    traces = list(under)
    for s, y in zip(series, ys):
        traces += _series_traces(s, s.concurrency.astype(float), y, t)
    for k, s in enumerate(series):
        limit = s.engine_limit
        if np.isfinite(limit) and limit >= 1:
            key = "fr.trace.wall_kv" if s.kv_wall <= s.max_num_seqs else "fr.trace.wall_seqs"
            name = t(key, name=s.label, v=F.integer(limit))
            traces.append(_vline(limit, 0, y_max, name=name, color=s.color, dash="dot", width=2.5,
                                 legendgroup=s.label, showlegend=False))
            # the wall's value beside it, staggered so walls at the same place stay readable
            traces.append(dict(type="scatter", mode="text", x=[limit], y=[y_max * (0.96 - 0.065 * k)],
                               text=[f" {F.integer(limit)}"], textposition="middle right", showlegend=False,
                               # the text ink, not the series colour: orange or sky blue text is under 3:1
                               # on white, blue under 4.5:1 on the dark background (the wall itself is coloured)
                               textfont=dict(color=TEXT_INK, size=FONT_SIZE - 1), legendgroup=s.label,
                               hovertemplate=name + NO_HOVER))
    base = series[0]
    if 0 <= base.chosen < base.concurrency.shape[0]:
        c = base.chosen
        name = t("fr.trace.yours", c=F.integer(chosen))
        traces.append(dict(type="scatter", mode="markers", x=[base.concurrency[c]], y=[ys[0][c]], name=name,
                           marker=dict(symbol="circle", size=15, color="#FFFFFF", line=dict(width=3, color="#000000")),
                           hovertemplate=name + NO_HOVER))
    traces += _marker_legend(t)
    traces.append(dict(type="scatter", mode="lines", x=[None], y=[None], name=t("fr.trace.wall_legend"), hoverinfo="skip",
                       line=dict(color="#666666", dash="dot", width=2.5)))
    return _fig(traces, _layout(t("fr.title.concurrency"), height=560,
                                xaxis=_axis(t("fr.x.concurrency"), log=True,
                                            ticks=(1, float(max(s.concurrency[-1] for s in series)), "pow2")),
                                yaxis=_axis(t("fr.y.per_gpu" if per_gpu else "fr.y.total"), range=[0, y_max])))


def frontier_sla_figure(series: Sequence, t: T, *, ttft_slo_s: float, tpot_slo_s: float, per_gpu: bool,
                        traffic: tuple[float, str] | None = None, mark_chosen: bool = False,
                        title: str | None = None, under: Sequence[dict] = (), over: Sequence[dict] = ()) -> go.Figure:
    """Throughput against TPOT (left) and TTFT (right), log latency axes, with the SLA targets
    as vertical lines and the region that meets each target shaded. ``traffic``: the offered
    load as (output tokens/s on the y axis, its name), a horizontal line: the points above it
    carry that load. ``mark_chosen``: a filled circle in each series' colour at its own
    concurrency (``s.chosen``; the §3.5 case's 16 and 32). ``under``: traces drawn below the
    curves (error bands, :mod:`ui.bands`); ``over``: above them (measured points, :mod:`ui.measured`),
    which widen the axes to show them. Both on axes x/y (TPOT panel) or x2/y2 (TTFT panel)."""
    ys = [_y(s, per_gpu) for s in series]
    over_y = [float(v) for tr in over for v in tr.get("y", ()) if v is not None and np.isfinite(v)]
    y_top = max([float(np.nanmax(y)) for y in ys if np.isfinite(y).any()] + ([traffic[0]] if traffic else []) + over_y,
                default=1.0)
    y_max = y_top * 1.08
    traces, axes = [], {}
    # the TTFT panel shows the TTFT the SLA is judged on (a percentile of the closed loop, or the mean)
    q = next((s.ttft_percentile for s in series if getattr(s, "ttft_percentile", None) is not None), None)
    for k, (attr, slo, key, domain) in enumerate((("tpot_s", tpot_slo_s, "tpot", [0.0, 0.47]),
                                                  ("ttft_shown_s", ttft_slo_s, "ttft", [0.53, 1.0]))):
        xa, ya = ("x", "y") if k == 0 else ("x2", "y2")
        xs = [np.asarray(getattr(s, attr), dtype=float) * MS for s in series]
        slo_ms = slo * MS
        extra = np.array([v for tr in over if tr.get("xaxis", "x") == xa for v in tr.get("x", ()) if v is not None],
                         dtype=float)
        finite = np.concatenate([x[np.isfinite(x) & (x > 0)] for x in xs] + [np.array([slo_ms]),
                                                                              extra[np.isfinite(extra) & (extra > 0)]])
        x_lo, x_hi = float(finite.min()) / 1.6, float(finite.max()) * 1.6
        traces.append(dict(type="scatter", mode="lines", x=[x_lo, slo_ms, slo_ms, x_lo, x_lo], y=[0, 0, y_max, y_max, 0],
                           fill="toself", fillcolor=FEASIBLE_FILL, line=dict(width=0), name=t("fr.trace.feasible"),
                           legendgroup="feasible", showlegend=k == 0, xaxis=xa, yaxis=ya,
                           hovertemplate=t(f"fr.hover.region_{key}", v=F.number(slo_ms, 0)) + NO_HOVER))
        traces.append(_vline(slo_ms, 0, y_max, name=t(f"fr.trace.sla_{key}", v=F.number(slo_ms, 0)),
                             color=COLORS["limit"], width=3.5, xaxis=xa, yaxis=ya))
        if traffic is not None:
            traces.append(_line([x_lo, x_hi], [traffic[0], traffic[0]], name=traffic[1], color=COLORS["traffic"],
                                dash="dash", hover=traffic[1], xaxis=xa, yaxis=ya, legendgroup="traffic",
                                showlegend=k == 0))
        traces += [tr for tr in under if tr.get("xaxis", "x") == xa]
        for s, x, y in zip(series, xs, ys):
            traces += _series_traces(s, x, y, t, xaxis=xa, yaxis=ya, showlegend=k == 0)
        if mark_chosen:
            for s, x, y in zip(series, xs, ys):
                c = int(s.concurrency[s.chosen])
                who = re.split(r"[:：]", s.label, maxsplit=1)[0]  # "A: before (…)" -> "A"
                name = t("fr.trace.chosen", label=who, c=F.integer(c))
                traces.append(dict(type="scatter", mode="markers", x=[x[s.chosen]], y=[y[s.chosen]], name=name,
                                   legendgroup=f"chosen{c}", showlegend=k == 0, xaxis=xa, yaxis=ya,
                                   marker=dict(symbol="circle", size=15, color=s.color, line=dict(width=2.5, color="#FFFFFF")),
                                   hovertemplate=name + NO_HOVER))
        label = t("fr.x.ttft_q", q=f"P{q:g}") if key == "ttft" and q is not None else t(f"fr.x.{key}")
        axes["xaxis" if k == 0 else "xaxis2"] = _axis(label, log=True, domain=domain, anchor=ya,
                                                      range=[np.log10(x_lo), np.log10(x_hi)], ticks=(x_lo, x_hi, "125"))
        axes["yaxis" if k == 0 else "yaxis2"] = _axis(t("fr.y.per_gpu" if per_gpu else "fr.y.total") if k == 0 else "",
                                                      range=[0, y_max], anchor=xa,
                                                      **({} if k == 0 else dict(matches="y", showticklabels=False)))
    traces += list(over)
    traces += _marker_legend(t)
    layout = _layout(title or t("fr.title.sla", ttft=F.number(ttft_slo_s * MS, 0), tpot=F.number(tpot_slo_s * MS, 0)),
                     height=580, annotations=[_subtitle(t("fr.sub.tpot"), 0.0, xanchor="left"),
                                              _subtitle(t("fr.sub.ttft"), 1.0, xanchor="right")],
                     **axes)
    # On a phone (ui.phone) the two panels are stacked, each the full width: side by side the TTFT
    # panel was ~90 px wide at 390 px, its tick labels turned on end. The lower panel gets its own
    # tick labels and y title (the shared ones sit on the upper one).
    layout["meta"] = dict(phone=dict(
        height=860, xaxis=dict(domain=[0.0, 1.0]), xaxis2=dict(domain=[0.0, 1.0]),
        yaxis=dict(domain=[0.6, 1.0]), yaxis2=dict(domain=[0.0, 0.4], showticklabels=True, title=axes["yaxis"]["title"]),
        annotations=[_subtitle(t("fr.sub.tpot"), 0.0, 1.0, xanchor="left"),
                     _subtitle(t("fr.sub.ttft"), 0.0, 0.4, xanchor="left")]))
    return _fig(traces, layout)


# ----------------------------------------------------------------------------- scheduler

def request_labels(r: ScheduleResult, t: T) -> list[str]:
    return [t("sc.request", i=i + 1, p=F.integer(p)) for i, p in enumerate(r.prompt_tokens)]


def schedule_figure(r: ScheduleResult, seg: Segments, t: T, *, title: str, x_max_ms: float | None = None) -> go.Figure:
    """Engine steps over time: tokens per step against the budget (top), and per request a
    Gantt bar for each stretch of one phase: queued, stalled, a prefill chunk, decoding (bottom)."""
    mid = (r.start_s + r.duration_s / 2) * MS
    width = r.duration_s * MS
    dec = r.decode_tokens.astype(float)
    pf = r.prefill_tokens.astype(float)
    custom = np.stack([np.arange(1, r.start_s.shape[0] + 1), r.start_s * MS, width, dec, pf], axis=-1)
    tmpl = t("sc.hover.step", j="%{customdata[0]}", s="%{customdata[1]:,.2f}", d="%{customdata[2]:,.2f}",
             dec="%{customdata[3]:,.0f}", pf="%{customdata[4]:,.0f}") + NO_HOVER
    traces = [dict(type="bar", x=mid, y=dec, width=width, name=t("phase.decode"), legendgroup="decode",
                   marker=dict(color=COLORS["decode"], line=dict(width=0)), customdata=custom, hovertemplate=tmpl,
                   xaxis="x", yaxis="y2"),
              dict(type="bar", x=mid, y=pf, base=dec, width=width, name=t("phase.prefill"), legendgroup="prefill",
                   marker=dict(color=COLORS["prefill"], line=dict(width=0)), customdata=custom, hovertemplate=tmpl,
                   xaxis="x", yaxis="y2")]
    end_ms = float((r.start_s[-1] + r.duration_s[-1]) * MS) if r.start_s.size else 1.0
    x_hi = x_max_ms or end_ms
    budget = t("sc.trace.budget", v=F.integer(r.token_budget))
    traces.append(_line([0, x_hi], [r.token_budget] * 2, name=budget, color=COLORS["limit"], dash="dash", width=2.5,
                        hover=budget, xaxis="x", yaxis="y2"))
    labels = request_labels(r, t)
    for code, name in GANTT_PHASES:
        m = seg.phase == code
        if not m.any():
            continue
        seg_custom = np.stack([seg.start_s[m] * MS, seg.end_s[m] * MS, seg.tokens[m], seg.steps[m]], axis=-1)
        traces.append(dict(
            type="bar", orientation="h", y=[labels[i] for i in seg.request[m]], x=(seg.end_s[m] - seg.start_s[m]) * MS,
            base=seg.start_s[m] * MS, name=t(f"phase.{name}"), legendgroup=name, showlegend=name in ("queued", "stalled"),
            marker=dict(color=COLORS[name], line=dict(width=1.5, color="#FFFFFF")), customdata=seg_custom,
            hovertemplate="%{y}<br>" + t(f"phase.{name}") + ": " + t(
                "sc.hover.segment", s="%{customdata[0]:,.2f}", e="%{customdata[1]:,.2f}", n="%{customdata[2]:,}",
                k="%{customdata[3]:,}") + NO_HOVER, xaxis="x", yaxis="y"))
    ok = np.isfinite(r.first_token_s)
    traces.append(dict(
        type="scatter", mode="markers", x=r.first_token_s[ok] * MS, y=[labels[i] for i in np.flatnonzero(ok)],
        name=t("sc.trace.first"), marker=dict(symbol="line-ns", size=24, line=dict(width=4, color="#000000")),
        customdata=np.stack([r.ttft_s[ok] * MS], axis=-1), xaxis="x", yaxis="y",
        hovertemplate="%{y}<br>" + t("sc.hover.first", v="%{customdata[0]:,.1f}") + NO_HOVER))
    layout = _layout(title, height=640, barmode="overlay", bargap=0.25,
                     xaxis=_axis(t("sc.x"), range=[0, x_hi * 1.02], anchor="y"),
                     yaxis=dict(domain=[0.0, 0.64], autorange="reversed", categoryorder="array", categoryarray=labels,
                                type="category", anchor="x"),
                     yaxis2=_axis(t("sc.y.tokens"), domain=[0.76, 1.0], rangemode="tozero", anchor="x"),
                     annotations=[_subtitle(t("sc.sub.tokens"), 0.5, 1.0), _subtitle(t("sc.sub.gantt"), 0.5, 0.65)])
    # On a phone (ui.phone): "#2 · 2,048" for "Request 2 (2,048 tok)", whose labels took half a
    # 390-px plot; the hover still names the request in full.
    short = [t("sc.request.short", i=i + 1, p=F.integer(p)) for i, p in enumerate(r.prompt_tokens)]
    layout["meta"] = dict(phone=dict(yaxis=dict(tickmode="array", tickvals=labels, ticktext=short)))
    return _fig(traces, layout)
