""""Why this number" panels of the load-test page: goodput at the SLA, the percentile that judges,
Little's law on the run, and the analytic mean beside the simulated one. Numbers come from
:mod:`calc.traffic` and :mod:`calc.timing.serving`; here they are only formatted."""

from __future__ import annotations

from typing import Callable

import numpy as np

from calc.traffic.simulator import SimResult, frontend_entry_s
from calc.traffic.slo import littles_law, meets_slo
from ui import format as F
from ui.memory.explain import Panel

T = Callable[..., str]


def _n(x: float, digits: int = 2) -> str:
    return F.number(x, digits).replace(",", "{,}")


def _ms(x: float) -> str:
    """A latency in LaTeX, in the unit of :func:`ui.format.duration` (ms, s or min)."""
    text = F.duration(x)
    if " " not in text:
        return "-"
    value, unit = text.rsplit(" ", 1)
    return value.replace(",", "{,}") + rf"\,\text{{{unit}}}"


def loadtest_panels(r: SimResult, s: dict, t: T, *, ttft_slo_s: float, tpot_slo_s: float, stat: str,
                    analytic: dict | None, api_burst: tuple[float, float] | None = None) -> list[Panel]:
    """The why panels; the percentile panel only when the SLA statistic (``stat``) is a percentile; the API
    server's turns when ``api_burst`` (its time per request and the share after its last wait,
    :func:`calc.traffic.simulator.frontend_entry_s`) is given for a burst."""
    ok = meets_slo(r, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s)
    n_ok, n = int(ok.sum()), r.num_requests
    span = s["duration_s"]
    panels = [Panel(
        key="goodput", title=t("lt.why.goodput.title"),
        formula=r"\text{goodput} = \frac{\#\{\text{TTFT} \le T_{\text{TTFT}} \wedge \text{TPOT} \le T_{\text{TPOT}}\}}"
                r"{t_{\text{last finish}} - t_{\text{first arrival}}}",
        plugged=rf"\frac{{{n_ok}\ \text{{of}}\ {n}}}{{{_n(span, 1)}\,\text{{s}}}} = {_n(s['goodput_requests_per_s'], 2)}"
                rf"\,\text{{req/s}}\quad(T_{{\text{{TTFT}}}} = {_ms(ttft_slo_s)},\ T_{{\text{{TPOT}}}} = {_ms(tpot_slo_s)})",
        takeaway=t("lt.why.goodput.takeaway", share=F.percent(n_ok / max(n, 1)),
                   thr=F.number(s["requests_per_s"], 2), good=F.number(s["goodput_requests_per_s"], 2)),
        notes=[t("lt.why.goodput.note")])]
    pt, pp = s[f"ttft_s_{stat}"], s[f"tpot_s_{stat}"]
    verdict = t("lt.why.pass") if (pt <= ttft_slo_s and (not np.isfinite(pp) or pp <= tpot_slo_s)) else t("lt.why.fail")
    q = int(stat.removeprefix("p")) if stat != "mean" else None
    if q is not None:  # the mean needs no "why not the mean"
        panels.append(Panel(
            key="percentile", title=t("lt.why.percentile.title", q=f"P{q}"),
            formula=rf"P_{{{q}}} = \text{{the value {q}\,\% of requests stay at or under (linear interpolation)}}",
            plugged=rf"P_{{{q}}}(\text{{TTFT}}) = {_ms(pt)}\ \text{{vs}}\ {_ms(ttft_slo_s)},\quad "
                    rf"P_{{{q}}}(\text{{TPOT}}) = {_ms(pp) if np.isfinite(pp) else '-'}\ \text{{vs}}\ {_ms(tpot_slo_s)}",
            takeaway=t("lt.why.percentile.takeaway", q=f"P{q}", verdict=verdict, mean=F.duration(s["ttft_s_mean"]),
                       pq=F.duration(pt)),
            notes=[t("lt.why.percentile.note")]))
    area, total = littles_law(r)
    L = area / span if span > 0 else float("nan")
    panels.append(Panel(
        key="little", title=t("lt.why.little.title"),
        formula=r"L = \lambda \cdot W:\quad \frac{1}{T}\int_0^T N(t)\,dt = \frac{N_{\text{req}}}{T}\cdot \overline{\text{E2E}}",
        plugged=rf"{_n(L, 2)} = {_n(s['requests_per_s'], 3)}\,\text{{req/s}} \times {_n(s['e2e_latency_s_mean'], 3)}\,\text{{s}}"
                rf" = {_n(s['requests_per_s'] * s['e2e_latency_s_mean'], 2)}",
        takeaway=t("lt.why.little.takeaway", L=F.number(L, 1), running=F.number(float(np.mean(r.step_running)), 1)),
        notes=[t("lt.why.little.note", area=F.number(area, 1), total=F.number(total, 1))]))
    if api_burst is not None and api_burst[0] > 0 and n > 1:
        panels.append(_api_burst_panel(r, t, n, *api_burst))
    if analytic is not None and analytic.get("open"):  # Poisson arrivals: the open-loop queueing model at the rate
        panels.append(Panel(
            key="analytic", title=t("lt.why.analytic.title"),
            formula=(r"\text{TTFT} = t_{\text{api}} + W_{\text{api}} + t_{\text{request}} + T_{\text{in flight}}/2"
                     r" + W_{\text{budget}} + W_{\text{slot}} + \text{own}(W)"),
            plugged=(rf"\lambda = {_n(analytic['rate_rps'], 3)}\,\text{{req/s}}:\ "
                     rf"\text{{TTFT}}_{{\text{{analytic}}}} = {_ms(analytic['ttft_s'])}\ \text{{vs simulated}}\ {_ms(analytic['sim_ttft_s'])}"),
            takeaway=t("lt.why.analytic.takeaway" if analytic["closed_form"] else "lt.why.analytic.sim",
                       an=F.duration(analytic["ttft_s"]), sim=F.duration(analytic["sim_ttft_s"])),
            notes=[t("lt.why.analytic.open_note")]))
    elif analytic is not None:
        panels.append(Panel(
            key="analytic", title=t("lt.why.analytic.title"),
            formula=(r"\text{TTFT} = T_{\text{arrive}} + k\,T_H,\quad W = \frac{R\,I}{h}" if analytic["wave"]
                     else r"\text{TTFT} = S + D_{\text{TTFT}} + t_{\text{request}} + \text{wait}"),
            plugged=(rf"C = {analytic['concurrency']},\ W = {_n(analytic['wave_steps'], 1)}:\ "
                     rf"\text{{TTFT}}_{{\text{{analytic}}}} = {_ms(analytic['ttft_s'])}\ \text{{vs simulated}}\ {_ms(analytic['sim_ttft_s'])}"),
            takeaway=t("lt.why.analytic.takeaway" if analytic["closed_form"] else "lt.why.analytic.sim",
                       an=F.duration(analytic["ttft_s"]), sim=F.duration(analytic["sim_ttft_s"])),
            notes=[t("lt.why.analytic.note")]))
    return panels


def _api_burst_panel(r: SimResult, t: T, n: int, t_api: float, f: float) -> Panel:
    """A burst of ``n`` at the API server: none through before n·(1 − f)·t_api, then one every f·t_api
    (the simulator's own entry times, :func:`calc.traffic.simulator.frontend_entry_s`)."""
    d, _ = frontend_entry_s(np.zeros(n), service_s=t_api, final_share=f)
    first, gap, last = float(d[0]), float(d[1] - d[0]), float(d[-1])
    return Panel(
        key="api_burst", title=t("lt.why.api_burst.title"),
        formula=r"d_i = N\,(1 - f)\,t_{\text{api}} + (i + 1)\,f\,t_{\text{api}},\quad i = 0 \ldots N - 1",
        plugged=(rf"\begin{{gathered}}N = {n},\ t_{{\text{{api}}}} = {_ms(t_api)},\ f = {_n(f, 2)}:\\"
                 rf"d_0 = {_ms(first)},\ d_{{i+1}} - d_i = {_ms(gap)},\ d_{{N-1}} = {_ms(last)}\end{{gathered}}"),
        takeaway=t("lt.why.api_burst.takeaway", n=F.integer(n), first=F.duration(first), gap=F.duration(gap),
                   last=F.duration(last), ttft=F.duration(float(np.nanmin(r.ttft_s)))),
        notes=[t("lt.why.api_burst.note")])
