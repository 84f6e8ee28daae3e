""""Why this number" panels of the performance pages, scaling-book style: the formula, the bound
that applies, the values plugged in, a one-line takeaway. Numbers come from ``calc`` results; this
module only formats them (LaTeX and text). Formulas are those of :mod:`calc.timing.operators`,
:mod:`calc.timing.serving`, :mod:`calc.timing.frontier` and :mod:`calc.timing.schedule`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from calc.timing.interconnect import CUSTOM_ALLREDUCE_MAX_BYTES, allreduce_time_s
from calc.timing.operators import OperatorTable, RooflineResult
from calc.timing.schedule import ScheduleResult
from ui import format as F
from ui.memory.explain import Panel

T = Callable[..., str]


def _n(x: float, digits: int = 2) -> str:
    """A number for LaTeX (thousands separators as ``{,}``)."""
    return F.number(float(x), digits).replace(",", "{,}")


def _u(x: float, unit: str, digits: int = 2) -> str:
    return f"{_n(x, digits)}\\,\\text{{{unit}}}"


def _s(x: float) -> float:
    return float(np.ravel(x)[0])


def _g(table: OperatorTable, field: str, op: str) -> float:
    return _s(getattr(table, field)[table.operators.index(op)])


# ----------------------------------------------------------------------------- roofline page

def roofline_panels(r: RooflineResult, t: T) -> list[Panel]:
    d, p = r.decode, r.prefill
    B = int(_s(d.tokens))
    P = r.compute_peak_flops_per_s
    bw = r.hbm_bw_bytes_per_s
    bw_ = r.bytes_per_weight
    flops, nbytes, step = float(d.flops.sum()), float(d.bytes.sum()), _s(d.step_s)
    comp, mem = float(d.compute_s.sum()), float(d.memory_s.sum())
    comm, ovh = _s(d.comm_s), _s(d.overhead_s)
    mlp_ai = _g(d, "intensity_flops_per_byte", "mlp")
    att_ai = _g(d, "intensity_flops_per_byte", "attention")
    pf_flops, pf_step = float(p.flops.sum()), _s(p.step_s)
    bound = "memory" if mem >= comp else "compute"
    comm_panel = [_tp_comm_panel(r, B, comm, t)] if int(np.ravel(r.engine.tensor_parallel_size)[0]) > 1 else []
    return comm_panel + [
        Panel("decode_mfu", t("why.rf.mfu", value=F.percent(_s(d.mfu), 2)),
              r"\text{MFU} = \frac{\sum_{op} \text{FLOPs}_{op}}{t_{\text{step}} \cdot P}"
              r"\;\le\; \frac{2B/b_w \cdot BW}{P} = \frac{B}{B^*}",
              f"\\frac{{{_u(flops / 1e9, 'GFLOP')}}}{{{_u(step * 1e3, 'ms', 3)} \\cdot {_u(P / 1e12, 'TFLOP/s', 1)}}}"
              f" = {_n(_s(d.mfu) * 100, 2)}\\,\\% \\qquad \\frac{{B}}{{B^*}} = \\frac{{{B}}}{{{_n(r.critical_batch, 0)}}}"
              f" = {_n(min(B / r.critical_batch, 1) * 100, 2)}\\,\\%",
              t("why.rf.mfu.take", bound=t(f"bound.{bound}")),
              [t("why.rf.mfu.note")]),
        Panel("decode_mbu", t("why.rf.mbu", value=F.percent(_s(d.mbu), 1)),
              r"\text{MBU} = \frac{\sum_{op} \text{bytes}_{op}}{t_{\text{step}} \cdot BW}",
              f"\\frac{{{_u(nbytes / 1e9, 'GB', 3)}}}{{{_u(step * 1e3, 'ms', 3)} \\cdot {_u(bw / 1e12, 'TB/s')}}}"
              f" = {_n(_s(d.mbu) * 100, 1)}\\,\\%",
              t("why.rf.mbu.take")),
        Panel("decode_step", t("why.rf.step", value=f"{F.number(step * 1e3, 2)} ms"),
              r"t_{\text{step}} = \sum_{op} \max\!\left(\frac{F_{op}}{P\,\eta_c(N)}, \frac{B_{op}}{BW\,\eta_m}\right)"
              r" + t_{\text{comm}} + t_{\text{overhead}}",
              f"\\sum_{{op}} \\text{{compute}} = {_u(comp * 1e3, 'ms', 3)},\\;\\sum_{{op}} \\text{{memory}} = "
              f"{_u(mem * 1e3, 'ms', 3)} \\;\\Rightarrow\\; t = {_u(float(d.time_s.sum()) * 1e3, 'ms', 3)} + "
              f"{_u(comm * 1e3, 'ms', 3)} + {_u(ovh * 1e3, 'ms', 3)} = {_u(step * 1e3, 'ms', 3)}",
              t("why.rf.step.take", bound=t(f"bound.{bound}"), tps=F.integer(B / step))),
        Panel("critical_batch", t("why.rf.bstar", value=F.number(r.critical_batch, 0)),
              r"B^* = \frac{P \cdot b_w}{2 \cdot BW}\qquad (\text{MLP: } 2B \text{ FLOPs per weight of } b_w \text{ bytes})",
              f"B^* = \\frac{{{_u(P / 1e12, 'TFLOP/s', 1)} \\cdot {_u(bw_, 'B', 3)}}}{{2 \\cdot {_u(bw / 1e12, 'TB/s')}}}"
              f" = {_n(r.critical_batch, 1)}",
              t("why.rf.bstar.take", bstar=F.number(r.critical_batch, 0))),
        Panel("ridge", t("why.rf.ridge", value=F.number(r.compute_precision_ridge_flops_per_byte, 0)),
              r"I_{\text{ridge}} = \frac{P}{BW}\qquad I_{\text{MLP}} \approx \frac{2B}{b_w}\qquad"
              r" I_{\text{attn}} \approx \frac{2\,G}{b_{kv}}",
              f"\\frac{{{_u(P / 1e12, 'TFLOP/s', 1)}}}{{{_u(bw / 1e12, 'TB/s')}}} = {_n(r.compute_precision_ridge_flops_per_byte, 1)}"
              f"\\,\\text{{FLOP/B}}\\qquad I_{{\\text{{MLP}}}}(B={B}) = {_n(mlp_ai, 1)}\\qquad I_{{\\text{{attn}}}} = {_n(att_ai, 2)}",
              t("why.rf.ridge.take")),
        Panel("prefill_mfu", t("why.rf.pf_mfu", value=F.percent(_s(p.mfu), 1)),
              r"\text{MFU}_{\text{prefill}} = \frac{2 P_{\text{params}} S + 4 L H_q d \cdot S(S+1)/2}{t_{\text{step}} \cdot P}",
              f"\\frac{{{_u(pf_flops / 1e12, 'TFLOP', 3)}}}{{{_u(pf_step * 1e3, 'ms', 2)} \\cdot {_u(P / 1e12, 'TFLOP/s', 1)}}}"
              f" = {_n(_s(p.mfu) * 100, 1)}\\,\\%",
              t("why.rf.pf_mfu.take", prompt=F.integer(_s(p.tokens)))),
    ]


def _tp_comm_panel(r: RooflineResult, batch: int, comm_s: float, t: T) -> Panel:
    """Two all-reduces per layer of B·h·b_act bytes over the link this TP size crosses:
    vLLM's custom kernel or NCCL, whichever :func:`calc.timing.interconnect.allreduce_time_s` takes."""
    e = r.engine
    n = int(np.ravel(e.tensor_parallel_size)[0])
    L, h, b_act = int(e.num_layers), int(e.hidden_size), float(e.activation_bytes)
    size = batch * h * b_act
    link = float(np.ravel(e.link_bw_bytes_per_s)[0])
    factor = 2.0 * (n - 1) / n
    nccl = float(allreduce_time_s(tensor_parallel_size=n, bytes_per_allreduce=size, link_bw_bytes_per_s=link,
                                  latency_s=e.allreduce_latency_s))
    custom_ok = bool(np.ravel(e.custom_allreduce)[0]) and size < CUSTOM_ALLREDUCE_MAX_BYTES
    c_bw = min(link, float(e.custom_allreduce_bw_bytes_per_s))
    custom = float(e.custom_allreduce_latency_s) + factor * size / c_bw
    use_custom = custom_ok and custom < nccl
    alpha, bw = (float(e.custom_allreduce_latency_s), c_bw) if use_custom else (float(e.allreduce_latency_s), link)
    per = custom if use_custom else nccl
    return Panel("tp_comm", t("why.rf.comm", value=f"{F.number(comm_s * 1e3, 3)} ms"),
                 r"t_{\text{comm}} = 2L\left(\alpha + \frac{2(n-1)}{n}\cdot\frac{S}{B_{\text{link}}}\right),"
                 r"\qquad S = B\cdot h\cdot b_{\text{act}}",
                 f"S = {batch} \\cdot {h} \\cdot {_n(b_act, 0)}\\,\\text{{B}} = {_u(size / 1e3, 'kB', 1)};\\;"
                 f"2 \\cdot {L} \\left({_u(alpha * 1e6, 'µs', 1)} + {_n(factor, 2)} \\cdot "
                 f"\\frac{{{_u(size / 1e3, 'kB', 1)}}}{{{_u(bw / 1e9, 'GB/s', 1)}}}\\right)"
                 f" = 2 \\cdot {L} \\cdot {_u(per * 1e6, 'µs', 2)} = {_u(comm_s * 1e3, 'ms', 3)}",
                 t("why.rf.comm.take_custom" if use_custom else
                   "why.rf.comm.take_nccl_link" if not bool(np.ravel(e.custom_allreduce)[0]) else
                   "why.rf.comm.take_nccl_size" if not custom_ok else "why.rf.comm.take_nccl_faster",
                   n=n, nccl=F.number(nccl * 1e6, 1)),
                 [t("why.rf.comm.note")])


# ----------------------------------------------------------------------------- frontier page

def frontier_panels(s, t: T, *, ttft_slo_s: float, tpot_slo_s: float, input_len: int, output_len: int,
                    price: float | None, tp: int) -> list[Panel]:
    """Panels for the base series ``s`` (:class:`ui.perf.view.FrontierSeries`)."""
    out = []
    O = output_len
    if s.best >= 0:
        i = s.best
        c, x, ttft, tpot, e2e = (float(s.concurrency[i]), float(s.output_tokens_per_s[i]), float(s.ttft_s[i]),
                                 float(s.tpot_s[i]), float(s.e2e_s[i]))
        nxt = i + 1 if i + 1 < s.concurrency.shape[0] else i
        # the TTFT the SLA is judged on: a percentile of the closed loop (TTFT_P95) or the mean
        judged = getattr(s, "ttft_shown_s", s.ttft_s)
        q = getattr(s, "ttft_percentile", None)
        tt = r"\text{TTFT}" if q is None else f"\\text{{TTFT}}_{{\\text{{P{q:g}}}}}"
        why_next = (t("why.fr.best.next_tpot") if s.tpot_s[nxt] > tpot_slo_s else
                    t("why.fr.best.next_ttft") if judged[nxt] > ttft_slo_s else t("why.fr.best.next_flat"))
        out.append(Panel(
            "best", t("why.fr.best", value=F.integer(c)),
            f"C^* = \\arg\\max_C X(C)\\;\\text{{ s.t. }}\\; {tt}(C) \\le \\text{{SLA}}_{{\\text{{TTFT}}}},\\;"
            r"\text{TPOT}(C) \le \text{SLA}_{\text{TPOT}}",
            f"C^* = {_n(c, 0)}:\\; {tt} = {_u(float(judged[i]) * 1e3, 'ms', 1)} \\le {_u(ttft_slo_s * 1e3, 'ms', 0)},\\;"
            f"\\text{{TPOT}} = {_u(tpot * 1e3, 'ms', 2)} \\le {_u(tpot_slo_s * 1e3, 'ms', 0)}",
            t("why.fr.best.take", next=why_next, cn=F.integer(s.concurrency[nxt]),
              ttft=F.number(float(judged[nxt]) * 1e3, 1), tpot=F.number(float(s.tpot_s[nxt]) * 1e3, 2))))
        out.append(Panel(
            "throughput", t("why.fr.x", value=f"{F.integer(x)} tok/s"),
            r"X = \frac{C}{E2E}\cdot O,\qquad E2E = \text{TTFT} + (O-1)\cdot\text{TPOT}\quad(\text{Little's law})",
            f"E2E = {_u(ttft * 1e3, 'ms', 1)} + {O - 1} \\cdot {_u(tpot * 1e3, 'ms', 2)} = {_u(e2e, 's', 3)}\\qquad "
            f"X = \\frac{{{_n(c, 0)}}}{{{_u(e2e, 's', 3)}}} \\cdot {O} = {_u(x, 'tok/s', 0)}",
            t("why.fr.x.take", per_gpu=F.integer(x / tp), tp=tp)))
        out.append(Panel(
            "tpot", t("why.fr.tpot", value=f"{F.number(tpot * 1e3, 2)} ms"),
            r"\text{TPOT} = \frac{E2E - \text{TTFT}}{O - 1}\;\ge\; t_{\text{step}}(R\text{ decodes})"
            r"\;\ge\; \frac{W + R \cdot S \cdot \text{KV/token}}{BW}",
            f"\\frac{{{_u(e2e * 1e3, 'ms', 1)} - {_u(ttft * 1e3, 'ms', 1)}}}{{{O - 1}}} = {_u(tpot * 1e3, 'ms', 2)},"
            f"\\quad R = {_n(float(s.running[i]), 0)}",
            t("why.fr.tpot.take")))
        out.append(Panel(
            "ttft", t("why.fr.ttft", value=f"{F.number(ttft * 1e3, 1)} ms"),
            r"\text{TTFT} = t_{\text{queue}} + \underbrace{k \cdot t_{\text{step}}(R, \lceil I/k \rceil)}_{\text{own prefill}}"
            r" + t_{\text{others' prefills}}",
            f"I = {_n(input_len, 0)},\\; k = {_n(float(s.prefill_chunks[i]), 0)},\\; "
            f"t_{{\\text{{step}}}}(R = {_n(float(s.running[i]), 0)}\\text{{ decodes}}) = "
            f"{_u(float(s.decode_step_s[i]) * 1e3, 'ms', 2)},\\; C - R = {_n(float(s.waiting[i]), 0)}"
            f"\\;\\Rightarrow\\; \\text{{TTFT}} = {_u(ttft * 1e3, 'ms', 1)}",
            t("why.fr.ttft.take")))
        if price is not None and s.cost_per_million_usd is not None:
            cost = float(s.cost_per_million_usd[i])
            out.append(Panel(
                "cost", t("why.fr.cost", value=f"${F.number(cost, 3)}"),
                r"\$/\text{M tokens} = \frac{\text{price} \cdot N_{\text{GPU}}}{3600} \cdot \frac{10^6}{X}",
                f"\\frac{{\\${_n(price, 3)} \\cdot {tp}}}{{3600}} \\cdot \\frac{{10^6}}{{{_u(x, 'tok/s', 0)}}} = \\${_n(cost, 3)}",
                t("why.fr.cost.take")))
    else:
        out.append(Panel("best", t("why.fr.none"), r"\{C : \text{TTFT}(C) \le \text{SLA} \wedge \text{TPOT}(C) \le \text{SLA}\} = \varnothing",
                         f"\\min_C \\text{{TTFT}} = {_u(float(np.nanmin(s.ttft_s)) * 1e3, 'ms', 1)},\\;"
                         f"\\min_C \\text{{TPOT}} = {_u(float(np.nanmin(s.tpot_s)) * 1e3, 'ms', 2)}",
                         t("why.fr.none.take")))
    if s.knee >= 0:
        k = s.knee
        el = np.gradient(np.log(s.output_tokens_per_s), np.log(s.concurrency.astype(float)))
        out.append(Panel(
            "knee", t("why.fr.knee", value=F.integer(s.concurrency[k])),
            r"C_{\text{knee}} = \arg\max_C \frac{X(C)}{E2E(C)}\;\Leftrightarrow\;"
            r"\frac{d\ln X}{d\ln C} = \frac{d\ln E2E}{d\ln C} = \frac{1}{2}",
            f"C = {_n(float(s.concurrency[k]), 0)}:\\; X = {_u(float(s.output_tokens_per_s[k]), 'tok/s', 0)},\\;"
            f"E2E = {_u(float(s.e2e_s[k]), 's', 2)},\\; \\frac{{d\\ln X}}{{d\\ln C}} = {_n(float(el[k]), 2)}",
            t("why.fr.knee.take")))
    out.append(Panel(
        "wall", t("why.fr.wall", value=F.integer(s.engine_limit)),
        r"R_{\max} = \min\!\left(\texttt{max\_num\_seqs},\; \left\lfloor \frac{\text{KV pool (tokens)}}{I + O/2} \right\rfloor"
        + (r",\; \left\lfloor 1 + \frac{(O-1)\,\texttt{max\_num\_batched\_tokens}}{I + O - 1} \right\rfloor" if np.isfinite(s.token_cap) else "")
        + r"\right)",
        f"\\min({_n(s.max_num_seqs, 0)},\\; {_n(s.kv_wall, 0)}"
        + (f",\\; {_n(s.token_cap, 0)}" if np.isfinite(s.token_cap) else "") + f") = {_n(s.engine_limit, 0)}",
        t("why.fr.wall.take")))
    return out


# ----------------------------------------------------------------------------- scheduler page

def scheduler_panels(chunked: ScheduleResult, whole: ScheduleResult, t: T) -> list[Panel]:
    out = []
    for r in (chunked, whole):
        name = t(f"sc.policy.{r.policy}")
        i = int(np.nanargmax(r.ttft_s)) if np.isfinite(r.ttft_s).any() else 0
        ran = np.flatnonzero(r.tokens[:, i] > 0)
        emitted = np.flatnonzero(r.emits[:, i])
        if ran.size and emitted.size:
            first, last = int(ran[0]), int(emitted[0])
            wait = float(r.start_s[first] - r.arrival_s[i])
            durs = r.duration_s[first:last + 1] * 1e3
            steps = (" + ".join(_n(d, 1) for d in durs) if durs.size <= 6
                     else f"\\textstyle\\sum_{{{durs.size}\\;\\text{{{t('why.sc.steps')}}}}} = {_n(durs.sum(), 1)}")
            plugged = (f"\\text{{TTFT}}_{{{i + 1}}} = {_u(wait * 1e3, 'ms', 1)} + ({steps})\\,\\text{{ms}}"
                       f" = {_u(float(r.ttft_s[i]) * 1e3, 'ms', 1)}")
        else:
            plugged = r"\text{—}"
        out.append(Panel(
            f"ttft_{r.policy}", t("why.sc.ttft", policy=name, i=i + 1, value=f"{F.number(float(r.ttft_s[i]) * 1e3, 1)} ms"),
            r"\text{TTFT}_i = \underbrace{t_{\text{first step}} - t_{\text{arrival}}}_{\text{" + t("why.sc.waiting")
            + r"}} + \sum_{\text{first step}}^{\text{first token}} t_{\text{step}}",
            plugged, t(f"why.sc.ttft.take_{r.policy}")))
        j = int(np.argmax(r.duration_s)) if r.duration_s.size else 0
        out.append(Panel(
            f"gap_{r.policy}", t("why.sc.gap", policy=name, value=f"{F.number(float(np.nanmax(r.max_itl_s)) * 1e3, 1)} ms"),
            r"\text{gap}_{\max} = \max_i \max_k (t_{i,k+1} - t_{i,k}) \;\ge\; \max_j t_{\text{step},j}",
            f"\\max_j t_{{\\text{{step}},j}} = t_{{{j + 1}}} = {_u(float(r.duration_s[j]) * 1e3, 'ms', 2)}\\;"
            f"(\\text{{{t('sc.col.decode')}}}\\;{int(r.decode_tokens[j])},\\; \\text{{{t('sc.col.prefill')}}}\\;{int(r.prefill_tokens[j])})",
            t(f"why.sc.gap.take_{r.policy}")))
        tt = r.ttft_s[np.isfinite(r.ttft_s)]
        out.append(Panel(
            f"ttft_mean_{r.policy}", t("why.sc.ttft_mean", policy=name, value=f"{F.number(float(np.mean(tt)) * 1e3, 1)} ms"),
            r"\overline{\text{TTFT}} = \frac{1}{N}\sum_i \text{TTFT}_i",
            f"\\frac{{{' + '.join(_n(x * 1e3, 0) for x in tt)}}}{{{tt.size}}}\\,\\text{{ms}} = "
            f"{_u(float(np.mean(tt)) * 1e3, 'ms', 1)}",
            t(f"why.sc.ttft.take_{r.policy}")))
        tp = r.tpot_s[np.isfinite(r.tpot_s)]
        out.append(Panel(
            f"tpot_{r.policy}", t("why.sc.tpot", policy=name, value=f"{F.number(float(np.mean(tp)) * 1e3, 2) if tp.size else '—'} ms"),
            r"\text{TPOT}_i = \frac{\text{finish}_i - \text{first token}_i}{O_i - 1}",
            f"\\text{{{t('why.sc.mean')}}} = {_u(float(np.mean(tp)) * 1e3 if tp.size else float('nan'), 'ms', 2)}",
            t("why.sc.tpot.take")))
    return out
