"""Frontier page (course §3.4–3.5): throughput against TPOT and TTFT over a concurrency sweep,
the SLA region, the best SLA-meeting point, the knee, the KV wall; overlays; the vLLM command."""

import numpy as np
import streamlit as st

from calc.sizing.scenario import effective_quantization
from calc.traffic.queueing import near_capacity
from ui.perf import figures as FP
from ui import format as F
from ui.perf import view as V
from ui import background, command_block, compare, labelled, layout, lazy_inputs, shell, tables
from ui.perf.explain import frontier_panels
from ui.perf.controls import CHUNKED, FRONTIER, PER_GPU, PRESETS, PRICE, REPLICAS, Variant, apply_variant, same_as
from ui.planner.explain import quality_short
from ui.safe import describe
from ui.speculative.inputs import speculative_inputs
from ui.state import check_query_params, render_control
from ui.traffic import LENGTH_SPREAD, LENGTHS, RATE, SLA_STAT, SLA_TPOT_MS, SLA_TTFT_MS, stat_label
from ui.theme import SERIES_COLORS
from ui.why import render_panels
from ui.fit import scenario_not_fit_message
from ui.loadtest.runs import closed_loop_job, closed_loop_summary
from ui import bands as B
from ui import measured as M
from ui.prefixcache.widgets import prefix_inputs


def _preset(name: str | None) -> None:
    seqs, tokens = PRESETS[name] if name else (None, None)
    st.session_state["max_num_seqs"], st.session_state["max_num_batched_tokens"] = seqs, tokens
    shell.request_app_rerun()  # sidebar values: the whole app reruns, not only the page's fragment


sc, t = shell.page()
for warning in check_query_params(FRONTIER, t):
    st.warning(warning)
s = sc.serving
layout.header(t("fr.page_title"), t("fr.intro", model=sc.arch.name, gpu=t.gpu(sc.gpu), tp=s.tensor_parallel_size,
                                       i=F.integer(s.input_len), o=F.integer(s.output_len)))

def _body() -> None:
    """Everything below the header, run as a fragment (shell.run_fragment): the page's own controls
    (SLA targets, per-GPU, price, replicas, overlays, chunked prefill) rerun only this."""
    # Two dense rows of controls (presets and switches; SLA sliders and overlays), so the metric
    # cards and the first chart fit on a 1080-pixel screen.
    with st.container(horizontal=True, key="fr_buttons", vertical_alignment="center"):
        st.button(t("fr.preset.low_latency"), on_click=_preset, args=("low_latency",), key="preset_low",
                  help=t("fr.preset.help"))
        st.button(t("fr.preset.high_throughput"), on_click=_preset, args=("high_throughput",), key="preset_high",
                  help=t("fr.preset.help"))
        st.button(t("fr.preset.default"), on_click=_preset, args=(None,), key="preset_default", help=t("fr.preset.help"))
        chunked = render_control(CHUNKED, t)
        per_gpu = render_control(PER_GPU, t)
    controls = layout.grid("fr_sla", 5)
    with controls:
        ttft_slo_s = render_control(SLA_TTFT_MS, t) / 1000  # the SLA every page shares (ui.traffic)
        tpot_slo_s = render_control(SLA_TPOT_MS, t) / 1000
        stat = labelled.render(SLA_STAT, t, lambda o: t(f"opt.sla_stat.{o}"))
    tokens = compare.render_overlays(t, controls)  # translated chips; the link keeps the tokens (kv:fp8, tp:2 …)
    reuse = prefix_inputs(t, input_len=s.input_len, where=controls)  # shared prefix or chat: prefill what the cache lacks
    prefix_caching = reuse.enable_prefix_caching  # a server flag: the command says it, whatever the reuse

    def cost_inputs() -> None:
        a, b, c = st.columns(3)  # one row
        render_control(PRICE, t, a, bound=False, placeholder=t("fr.price.catalog", price=F.number(sc.gpu.price_usd_per_hour, 3))
                       if sc.gpu.price_usd_per_hour else t("fr.price.none"))
        render_control(REPLICAS, t, b, bound=False)
        render_control(RATE, t, c, bound=False)  # the traffic the load test and the planner carry, drawn as a line
        a, b = st.columns(2)  # the shared traffic's length distribution (ui.traffic), as on the load test and planner
        kind = lazy_inputs.selectbox(LENGTHS, t, lambda o: t(f"opt.lengths.{o}"), a)
        render_control(LENGTH_SPREAD, t, b, bound=False, disabled=kind == "fixed")

    # price, replicas, rate and lengths: drawn only while their section is open (ui.lazy_inputs; the first
    # view draws less)
    cost = lazy_inputs.section(t, t("fr.cost_section"), "sec_fr_cost", (PRICE, REPLICAS, RATE, LENGTHS, LENGTH_SPREAD),
                               cost_inputs, where=controls)
    price, replicas, rate = cost[PRICE.key], cost[REPLICAS.key], cost[RATE.key]
    lengths = cost[LENGTHS.key] if cost[LENGTHS.key] in LENGTHS.choices() else LENGTHS.default
    spread = 0.0 if lengths == "fixed" else float(cost[LENGTH_SPREAD.key])

    # speculative decoding (ui.speculative.inputs); the lengths spread as the shared traffic says: the model's
    # input_cv / output_cv (calc.traffic.workload.length_cvs), the simulated closed loop's draws
    base = Variant("", s, sc.gpu, chunked, speculative_inputs(t), lengths, spread, sc.arch.max_position_embeddings)
    if base.speculative is not None and reuse is not None and reuse.any_reuse:
        st.caption(t("pc.with_spec", what=t("pc.what.frontier")))
        reuse = None
    try:
        V.check_variant(base, sc.arch)  # e.g. chunked prefill off with a token budget below max_model_len
    except ValueError as exc:
        st.error(describe(exc, t))
        return
    variants = [base]
    for tok in tokens:
        try:
            v = apply_variant(base, tok)
            V.check_variant(v, sc.arch)
        except ValueError as exc:
            st.warning(t("fr.overlay_invalid", name=V.token_label(tok, t), reason=describe(exc, t)))
            continue
        if not any(same_as(v, w) for w in variants):
            variants.append(v)
    probes = [V.probe(v, sc.arch, sc.efficiency) for v in variants]
    if not bool(probes[0].serving.fits):
        m = probes[0].memory
        st.error(scenario_not_fit_message(sc, m, t, serving=s, concurrency=sc.concurrency,
                                          context_tokens=s.input_len + s.output_len))
    else:
        for v, p in zip(variants[1:], probes[1:]):
            if not bool(p.serving.fits):
                st.caption(t("fr.overlay_not_fit", name=V.token_label(v.token, t)))
        kept = [(v, p) for v, p in zip(variants, probes) if bool(p.serving.fits)]
        conc = V.sweep_concurrency([p for _, p in kept], sc.concurrency)
        series = [V.frontier_series(v, sc.arch, sc.efficiency, concurrency=conc, label=V.token_label(v.token, t),
                                    color=SERIES_COLORS[k], ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s,
                                    chosen=sc.concurrency, price=price if v.gpu.id == sc.gpu.id else None,
                                    reuse=reuse, percentile=None if stat == "mean" else float(stat.removeprefix("p")))
                  for k, (v, _) in enumerate(kept)]
        f = series[0]
        tp = s.tensor_parallel_size
        # the projector is wide and the sidebar folded: one row of six
        cards = layout.grid("fr", 6 if layout.presenting() else 3)
        if f.best >= 0:
            i = f.best
            cards.metric(t("fr.metric.best"), F.integer(f.concurrency[i]), border=True, help=t("fr.metric.best.help"))
            x_shown = float(f.output_tokens_per_s_per_gpu[i] if per_gpu else f.output_tokens_per_s[i])  # as the charts
            # each number with the range real servers would likely show (ui.bands; presenter mode: one line per card)
            busy = str(B.conditions_along(f, sc.efficiency, sc.arch)[i])  # who sets the pace (ui.bands)
            bx = B.basis(sc.arch, sc.gpu, "throughput", concurrency=float(f.concurrency[i]), condition=busy)
            B.card(cards, t, t("fr.metric.x_gpu" if per_gpu else "fr.metric.x"), f"{F.integer(x_shown)} tok/s",
                   B.limits(x_shown, bx), bx, F.integer, unit="tok/s", presenting=layout.presenting(),
                   help=t("fr.metric.x.help", per_gpu=F.integer(f.output_tokens_per_s_per_gpu[i]), tp=tp,
                          total=F.integer(f.total_tokens_per_s[i])))
            if f.cost_per_million_usd is None:
                cards.metric(t("fr.metric.cost"), "—", border=True, help=t("fr.metric.cost.none"))
            else:
                cost = float(f.cost_per_million_usd[i])
                B.card(cards, t, t("fr.metric.cost"), f"${F.number(cost, 3)}", B.inverse_limits(cost, bx), bx,
                       lambda v: f"${F.number(v, 3)}", presenting=layout.presenting(), help=t("fr.metric.cost.help"))
            shown_bases = {t("fr.metric.x"): bx}
            for key, digits in (("ttft", 0), ("tpot", 1)):
                b = B.basis(sc.arch, sc.gpu, key, concurrency=float(f.concurrency[i]), condition=busy)
                v = float(f.ttft_shown_s[i] if key == "ttft" else f.tpot_s[i]) * 1e3  # TTFT: the statistic judged
                label = (t("fr.metric.ttft_q", q=stat_label(stat, t("word.mean"))) if key == "ttft" and f.ttft_percentile
                         else t(f"fr.metric.{key}"))
                slo_ms = (ttft_slo_s if key == "ttft" else tpot_slo_s) * 1e3  # a value at its target shows the deciding digit
                B.card(cards, t, label, f"{F.number_against(v, slo_ms, digits)} ms", B.limits(v, b), b,
                       lambda x, d=digits: F.number(x, d), unit="ms", presenting=layout.presenting(),
                       help=t("fr.metric.ttft_q.help", mean=F.number(float(f.ttft_s[i]) * 1e3, 0))
                       if key == "ttft" and f.ttft_percentile else None)
                shown_bases[label] = b
            if f.cost_per_million_input_usd is not None and not layout.presenting():  # a detail, not for the projector
                st.caption(t("fr.cost.split", cin=F.number(float(f.cost_per_million_input_usd[i]), 4),
                             cout=F.number(float(f.cost_per_million_output_split_usd[i]), 4),
                             price=F.number(f.price_usd_per_gpu_hour, 3), gpus=t.count("gpu", tp)))
            sim_slot = st.empty()  # always drawn: a conditional element would shift the elements below it
            if f.closed_form is not None and not bool(f.closed_form[i]):
                # Outside the regime the closed form matches: the request simulator at this point instead.
                # in a worker process, like the load test's runs (issue 18: no simulation in the server)
                c = int(f.concurrency[i])
                with sim_slot.container():
                    sim = closed_loop_summary(background.result(closed_loop_job(sc.arch, f.variant, sc.efficiency, c), t,
                                                                label=t("fr.sim.running")), c)
                sim_slot.info(t("fr.sim.instead", c=F.integer(f.concurrency[i]), ttft=F.number(sim["ttft_s"] * 1e3, 0),
                          tpot=F.number(sim["tpot_s"] * 1e3, 1), e2e=F.number(sim["e2e_latency_s"], 2),
                          ttft95=F.number(sim["ttft_s_p95"] * 1e3, 0), n=F.integer(sim["num_requests"])))
            st.caption(t("fr.replicas.total", replicas=t.count("replica", replicas), gpus=t.count("gpu", replicas * tp),
                         x=F.integer(float(f.output_tokens_per_s[i]) * replicas),
                         usd="—" if f.price_usd_per_gpu_hour is None else F.number(f.price_usd_per_gpu_hour * tp * replicas, 2)))
        else:
            st.warning(t("fr.none_feasible", ttft=F.number(ttft_slo_s * 1e3, 0), tpot=F.number(tpot_slo_s * 1e3, 0),
                         min_ttft=F.number(float(np.nanmin(f.ttft_s)) * 1e3, 0),
                         min_tpot=F.number(float(np.nanmin(f.tpot_s)) * 1e3, 1)))
            cards.metric(t("fr.metric.best"), "—", border=True, help=t("fr.metric.best.help"))
        cards.metric(t("fr.metric.knee"), F.integer(f.concurrency[f.knee]) if f.knee >= 0 else "—", border=True,
                     help=t("fr.metric.knee.help"))

        need = float(rate or RATE.default) / replicas * s.output_len / (tp if per_gpu else 1)  # output tok/s per replica
        traffic = (need, t("fr.trace.traffic_gpu" if per_gpu else "fr.trace.traffic", rate=F.number(float(rate or RATE.default), 2),
                           replicas=t.count("replica", replicas),
                           x=F.integer(need)))
        band_sla, band_conc = B.frontier_regions(f, sc.arch, sc.gpu, t, per_gpu=per_gpu, presenting=layout.presenting(),
                                                 efficiency=sc.efficiency)
        points, _ = M.current(sc)  # the user's own measurements (ui.measured), kept in the session
        layout.chart(FP.frontier_sla_figure(series, t, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s, per_gpu=per_gpu,
                                            traffic=traffic, under=band_sla,
                                            over=M.frontier_traces(points, t, per_gpu=per_gpu)), key="frontier_sla_chart")
        st.caption((t("fr.caption.sla_q", q=stat_label(stat, t("word.mean"))) if f.ttft_percentile else t("fr.caption.sla"))
                   + (" " + t("ms.frontier_note") if points else ""))
        M.render(sc, t, key="fr")
        if stat != "mean" and not f.ttft_percentile:  # prefix reuse: no percentile model, say what is judged
            st.caption(t("fr.sla_stat_mean", q=stat_label(stat, t("word.mean"))))
        # The shared rate, answered by the open-loop queueing model (the planner's and `estimate --rate`'s)
        r_rps = float(rate or RATE.default)
        pct = 95.0 if stat == "mean" else float(stat.removeprefix("p"))
        ol = V.open_loop_at_rate(base, sc.arch, sc.efficiency, rate_rps=r_rps / replicas, percentile=pct)
        if bool(ol.stable):
            q_ttft = float(ol.ttft_percentile_s)
            judged = (float(ol.ttft_s), float(ol.tpot_s)) if stat == "mean" else (q_ttft, float(ol.tpot_s))
            ok = judged[0] <= ttft_slo_s and judged[1] <= tpot_slo_s
            # a value that rounds to its target shows the digit the verdict turns on (500.4 ms misses 500 ms)
            st.info(t("fr.open_loop", rate=F.number(r_rps, 2), replicas=t.count("replica", replicas),
                      ttft=F.number_against(float(ol.ttft_s) * 1e3, ttft_slo_s * 1e3), q=f"P{int(pct)}",
                      ttft_q=F.number_against(q_ttft * 1e3, ttft_slo_s * 1e3),
                      tpot=F.number_against(float(ol.tpot_s) * 1e3, tpot_slo_s * 1e3, 1), running=F.number(float(ol.running), 1),
                      verdict=t("fr.open_loop.meets" if ok else "fr.open_loop.misses"))
                    + ("" if bool(ol.closed_form) else " " + t("fr.open_loop.kv_wall" if bool(ol.budget_drains)
                                                                else "fr.open_loop.no_drain"))
                    + (" " + t("fr.open_loop.near_capacity", busy=F.integer(100.0 * float(ol.budget_utilization)))
                       if bool(near_capacity(ol.budget_utilization)) else ""))
            if B.ENABLED and not layout.presenting():  # the open loop's numbers with their ranges (ui.bands)
                busy = B.condition(r_rps / replicas / s.data_parallel_size, sc.efficiency, sc.arch)
                ob = {g: B.basis(sc.arch, sc.gpu, g, arrival="poisson", condition=busy) for g in ("ttft", "tpot")}
                rng = lambda v, g, d: t("band.range", **dict(zip(("lo", "hi"), (F.number(float(x) * 1e3, d)  # noqa: E731
                                                                               for x in B.limits(v, ob[g])))))
                st.caption(t("band.open_loop", ttft=rng(float(ol.ttft_s), "ttft", 0), q=f"P{int(pct)}",
                             ttft_q=rng(q_ttft, "ttft", 0), tpot=rng(float(ol.tpot_s), "tpot", 1),
                             note=B.own_text(ob["ttft"], t)))
        else:
            st.warning(t("fr.open_loop.over", rate=F.number(r_rps, 2), replicas=t.count("replica", replicas)))
        layout.chart(FP.frontier_concurrency_figure(series, t, per_gpu=per_gpu, chosen=sc.concurrency, under=band_conc),
                     key="frontier_conc_chart")
        st.caption(t("fr.caption.conc", wall=F.integer(f.engine_limit)))
        st.download_button(t("csv.frontier"), key="frontier_csv", on_click="ignore", file_name="frontier.csv",
                           mime="text/csv", data=lambda series=series: V.frontier_csv(series))  # built on click

        st.subheader(t("fr.compare"))
        # Markdown, not st.table: its Arrow script (0.9 MB) loaded before the first chart (bench/first_paint.py)
        st.markdown(tables.markdown([{t("fr.col.scenario"): x.label,
                   t("fr.col.best"): F.integer(x.concurrency[x.best]) if x.best >= 0 else "—",
                   t("fr.col.x"): F.integer(x.output_tokens_per_s[x.best]) if x.best >= 0 else "—",
                   t("fr.col.x_gpu"): F.integer(x.output_tokens_per_s_per_gpu[x.best]) if x.best >= 0 else "—",
                   t("fr.col.knee"): F.integer(x.concurrency[x.knee]) if x.knee >= 0 else "—",
                   t("fr.col.wall"): F.integer(x.engine_limit),
                   t("fr.col.cost"): ("—" if x.cost_per_million_usd is None or x.best < 0
                                      else f"${F.number(float(x.cost_per_million_usd[x.best]), 3)}")}
                  for x in series]))

        st.subheader(t("fr.cmd.title"))
        seqs = int(f.concurrency[f.best]) if f.best >= 0 else int(f.max_num_seqs)
        command_block.render(V.vllm_command(model_id=sc.arch.id, serving=s, max_model_len=sc.resolved.max_model_len,
                                            max_num_seqs=seqs, max_num_batched_tokens=int(f.max_num_batched_tokens),
                                            chunked=chunked, speculative=base.speculative,
                                            enable_prefix_caching=prefix_caching), t)
        st.caption(t("fr.cmd.caption" if f.best >= 0 else "fr.cmd.caption_none", c=F.integer(seqs)))
        st.caption(t("fr.cmd.replicas", replicas=t.count("replica", replicas), gpus=t.count("gpu", tp)) + " " +
                   t("fr.quality", q=s.quantization,  # auto: the checkpoint's own format (16-bit here, FP8 for DeepSeek-V3)
                         value=quality_short(sc.arch.id, effective_quantization(sc.arch, s.quantization), t)))

        # The course's fixed case (not the sidebar's scenario) has its own page: A and B side by side.
        st.page_link("pages/case_study.py", label=t("cs.link"), icon=":material/school:")

        st.subheader(t("why.title"))
        if f.best >= 0:
            B.render_why(shown_bases, t, "fr")
        render_panels(frontier_panels(f, t, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s, input_len=s.input_len,
                                      output_len=s.output_len, price=f.price_usd_per_gpu_hour, tp=tp), t)


shell.run_fragment(_body)
