"""Load-test page (course §3.6, P50/P95/P99): a request-level simulation of vLLM's scheduler under
an arrival process; latency distributions against the SLA, goodput and tail latency against the
rate with the highest sustainable rate, the engine's timeline, and the analytic mean beside."""

import dataclasses
import hashlib

import numpy as np
import streamlit as st

from calc.timing.estimate import estimate
from calc.plan.percentiles import steady_state_statistic, warmup_requests
from calc.traffic.slo import steady_means, summarize
from calc.traffic.workload import MAX_TRACE_BYTES, WorkloadError, cut_lengths, sample_cv
from calc.traffic.queueing import near_capacity
from ui import format as F
from ui import background, budget, command_block, labelled, layout, mirror, shell, tables, uploader
from ui.loadtest import controls as LC
from ui.loadtest import figures as LF
from ui.loadtest import messages as LM
from ui.loadtest import runs
from ui.loadtest.explain import loadtest_panels
from ui.fit import scenario_not_fit_message
from ui.safe import user_text
from ui.speculative.inputs import speculative_inputs
from ui.prefixcache.widgets import prefix_inputs
from ui.state import check_query_params, forget_upload, keep_upload, kept_upload, render_control
from ui.traffic import stat_label
from ui.why import render_panels
from ui.perf import view as V
from ui.perf.controls import Variant
from ui import bands as B
from ui import measured as M

sc, t = shell.page()
for warning in check_query_params(LC.LOADTEST, t):
    st.warning(warning)
s = sc.serving
layout.header(t("lt.page_title"), t("lt.intro", model=sc.arch.name, gpu=t.gpu(sc.gpu), tp=s.tensor_parallel_size))

# Presenter mode: the settings folded (one line), so the cards and the first chart fit a 1920x1080 projector.
settings = st.expander(t("lt.settings"), expanded=False) if layout.presenting() else st.container()
# The arrivals' column is wider: its options ("Poisson (independent users)") were cut at 1440 px.
cols = [*settings.columns([1.7, 1, 1, 1]), *settings.columns(5), *settings.columns(5)]
v = {ctl.key: None for ctl in LC.LAYOUT}
for col, ctl in zip(cols, LC.LAYOUT):  # the arrivals first: what applies to them is drawn enabled
    off = not LC.applies(ctl.key, v[LC.LT_ARRIVAL.key])
    with col:
        if ctl is LC.CLIENTS and v[LC.LT_ARRIVAL.key] != "closed":  # open arrivals: the client's cap here
            v[LC.LT_CAP.key] = render_control(LC.LT_CAP, t)
            v[ctl.key] = mirror.value(ctl)
        elif ctl is LC.CLIENTS:  # the sidebar's concurrency, one number with the memory and frontier pages
            v[ctl.key] = mirror.number(ctl, t, "ctl.lt_clients", disabled=off)
        elif ctl.key in LC.TRANSLATED:
            v[ctl.key] = labelled.render(ctl, t, lambda o, k=ctl.key: t(f"opt.{k}.{o}"))
        else:
            v[ctl.key] = render_control(ctl, t, disabled=off)
# The trace's bytes are kept in the session by the uploader's callback: uploads are released after
# every run (ui.state.release_uploads), and the trace must stay in use on later runs and pages.
# In a lazy section (ui.layout.lazy_expander): the uploader is drawn only while it is open, not in the first
# view of every visit (its drop zone cost the browser's main thread before the first chart, bench/first_paint.py).
if (trace_box := layout.lazy_expander(settings, t("lt.trace_section"), "sec_lt_trace")).open:
    uploader.file_uploader(trace_box, t, t("lt.trace"), type=["csv", "jsonl", "json", "txt"], key="lt_trace",
                           help=t("lt.trace.help"), on_change=keep_upload, args=("lt_trace", MAX_TRACE_BYTES))
kept = kept_upload("lt_trace")
trace_name, trace = kept or ("", None)
if trace is None:
    st.caption(t("lt.lengths", i=F.integer(s.input_len), o=F.integer(s.output_len)))
stat = v["sla_stat"]  # the shared SLA (ui.traffic): p50 … p99 or mean
q = stat_label(stat, t("word.mean"))
ttft_slo, tpot_slo = v["sla_ttft_ms"] / 1e3, v["sla_tpot_ms"] / 1e3
# One replica of the deployment is simulated, at its share of the shared rate (as the planner's check);
# the prompt and output lengths are the sidebar's, as on every page.
replicas = int(v["replicas"] or 1) if LC.applies("replicas", v["lt_arrival"]) else 1
load = runs.Load(arrival=v["lt_arrival"], rate_per_s=float(v["rate"] or LC.RATE.default) / replicas, cv=float(v["lt_cv"]),
                 concurrency=int(v["concurrency"] or 1), num_requests=int(v["lt_requests"]), lengths=v["lengths"],
                 max_concurrency=int(v[LC.LT_CAP.key]) if v.get(LC.LT_CAP.key) else None,  # drawn for open arrivals only
                 input_len=s.input_len, output_len=s.output_len, spread=float(v["length_spread"]), seed=int(v["lt_seed"] or 0),
                 speculative=speculative_inputs(t),  # speculative decoding (ui.speculative.inputs)
                 reuse=prefix_inputs(t, input_len=s.input_len, where=cols[len(LC.LOADTEST)]))  # the free 14th column
if load.speculative is not None and load.reuse is not None and load.reuse.any_reuse:
    st.caption(t("pc.with_spec", what=t("pc.what.load_test")))
    load = dataclasses.replace(load, reuse=None)
est = estimate(sc.arch, sc.gpu, s, sc.efficiency, concurrency=load.concurrency)
key = (sc.arch.model_dump_json(), sc.gpu.model_dump_json(), s.model_dump_json(), sc.efficiency.model_dump_json())
if not bool(est.memory.fits):  # what vLLM would say, and what would fit: the frontier's message for the same setup
    st.error(scenario_not_fit_message(sc, est.memory, t, serving=s, concurrency=sc.concurrency,
                                      context_tokens=s.input_len + s.output_len))
    st.stop()
lim = budget.limits()
command = runs.cli_command(sc.arch, sc.gpu, s, load)  # what runs it on one's own machine
try:  # the budget (ui.budget): a run that surely passes it is refused, with the command that runs it
    need = runs.work(*key, load, trace)
except ValueError:  # a bad trace or a request larger than the pool: said below, where the run fails
    need = None
if need is not None and (need.cpu_s > lim.cpu_s or need.peak_bytes > lim.run_bytes):
    st.error(t("lt.over_budget", steps=F.integer(need.steps), passes=F.integer(need.passes), cpu=F.number(need.cpu_s, 0),
               mib=F.integer(need.peak_bytes / budget.MIB), cpu_limit=F.number(lim.cpu_s, 0),
               mib_limit=F.integer(lim.run_bytes / budget.MIB)))
    command_block.render(command, t)
    st.caption(t("lt.over_budget.caption"))
    st.stop()
running = t("lt.running", n=F.integer(load.num_requests))
sweep_args = dict(ttft_slo_s=ttft_slo, tpot_slo_s=tpot_slo, percentile=0 if stat == "mean" else int(stat[1:]),
                  cpu_limit_s=lim.cpu_s)
sweep_job = None  # the rate search: queued with the run when it will be shown (ui.background.submit_ahead)
# the rate search asks what the engine sustains: without the benchmark client's cap (its TTFT starts after the cap)
sweep_load = dataclasses.replace(load, max_concurrency=None)
if trace is None and load.arrival in ("poisson", "gamma") and v["lt_sweep"] and stat != "mean":
    if (sweep_job := runs.sweep_within(sc.arch, sc.gpu, s, sc.efficiency, sweep_load, **sweep_args)) is not None:
        background.submit_ahead(sweep_job)
try:  # in a worker process, cancelled when the inputs change or the tab closes (ui.background)
    r = background.result(runs.run_job(*key, load, trace), t, label=running, command=command)
except WorkloadError as exc:  # user text: shown as plain text, never Markdown
    st.error(t("lt.trace_error"))
    st.text(LM.localize(str(exc), t)[:300])
    trace = None
    r = background.result(runs.run_job(*key, load, None), t, label=running, command=command)
except ValueError as exc:
    st.error(t("lt.too_big", msg=""))
    st.text(LM.localize(str(exc), t)[:300])
    st.stop()
if trace is not None:
    st.caption(t("lt.trace_used", name=user_text(trace_name), n=F.integer(r.num_requests), span=F.number(r.makespan_s, 1)))
if kept is not None and st.session_state.get("lt_trace") is None:  # kept from an earlier visit, uploader empty
    st.button(t("lt.trace_forget"), on_click=forget_upload, args=("lt_trace",), key="lt_trace_forget")
stats = summarize(r, ttft_slo_s=ttft_slo, tpot_slo_s=tpot_slo)
ms = F.duration  # ms below 10 s, s below 10 min, min above
pt, pp, steady_state = runs.judged(r, stats, stat=stat, arrival=load.arrival, trace=trace is not None)
partial = {"done": F.integer(stats["finished_requests"]), "n": F.integer(r.num_requests)}
if r.truncated:  # cut at the simulator's step cap: say so where the numbers are, and which are partial
    st.warning(t("lt.truncated", steps=F.integer(r.step_s.size), q=q, **partial))
if replicas > 1 and trace is None:
    st.caption(t("lt.per_replica", n=F.integer(replicas), rate=F.number(float(v["rate"]), 2),
                 per=F.number(load.rate_per_s, 3)))
cards = layout.grid("lt", 6 if layout.presenting() else 3)
# each number with the range real servers would likely show in this load's regime (ui.bands)
band_arrival = "poisson" if trace is not None else load.arrival
busy = B.condition(stats["requests_per_s"], sc.efficiency, sc.arch)  # the simulated requests/s: who sets the pace
lt_bases = {key: B.basis(sc.arch, sc.gpu, group, arrival=band_arrival, concurrency=load.concurrency, condition=busy)
            for key, group in (("ttft", "ttft"), ("tpot", "tpot"), ("x", "throughput"))}
presenting = layout.presenting()
B.card(cards, t, t("lt.metric.ttft", q=q), ms(pt), B.limits(pt, lt_bases["ttft"]), lt_bases["ttft"],
       lambda x: F.duration_like(x, pt),
       presenting=presenting, delta=t("lt.metric.vs_slo", delta=ms(pt - ttft_slo)), delta_color="inverse")
B.card(cards, t, t("lt.metric.tpot", q=q), ms(pp), B.limits(pp, lt_bases["tpot"]), lt_bases["tpot"],
       lambda x: F.duration_like(x, pp),
       presenting=presenting, delta=t("lt.metric.vs_slo", delta=ms(pp - tpot_slo)) if np.isfinite(pp) else None,
       delta_color="inverse")
good, xput = float(stats["goodput_requests_per_s"]), float(stats["output_tokens_per_s"])
B.card(cards, t, t("lt.metric.goodput"), f"{F.number(good, 2)} {t('lt.unit.req_s')}", B.limits(good, lt_bases["x"]),
       lt_bases["x"], lambda v: F.number(v, 2), unit=t("lt.unit.req_s"), presenting=presenting)
B.card(cards, t, t("lt.metric.throughput"), f"{F.number(xput, 0)} tok/s", B.limits(xput, lt_bases["x"]), lt_bases["x"],
       lambda v: F.number(v, 0), unit="tok/s", presenting=presenting)
cards.metric(t("lt.metric.attainment"), F.percent(stats["slo_attainment"]), border=True)
cards.metric(t("lt.metric.preemptions"), F.integer(stats["preemptions"]), border=True)
ok = pt <= ttft_slo and (not np.isfinite(pp) or pp <= tpot_slo)
if steady_state:
    st.caption(t("lt.steady_state", q=q))
if r.truncated:
    st.warning(t("lt.verdict.truncated", q=q))
else:
    (st.success if ok else st.warning)(t("lt.verdict.pass" if ok else "lt.verdict.fail", q=q))

# Only the open tab is drawn (ui.layout.lazy_tabs): hidden charts cost the first paint (bench/first_paint.py).
dist, sweep, timeline, table = layout.lazy_tabs([t("lt.tab.dist"), t("lt.tab.sweep"), t("lt.tab.timeline"),
                                                 t("lt.tab.table")], key="lt_tabs")
with dist:
    if dist.open:
        if r.truncated:
            st.caption(t("lt.truncated.short", **partial))
        c1, c2 = st.columns(2)
        points, _ = M.current(sc)  # the user's own measurements (ui.measured): where each falls in the prediction
        layout.chart(LF.cdf_figure(r.ttft_s, t, title=t("lt.fig.ttft_title"), x_title=t("lt.fig.ttft_x"), slo_s=ttft_slo, stat=stat, q=q,
                                   under=B.cdf_region(r.ttft_s, lt_bases["ttft"], t, presenting=presenting),
                                   over=M.cdf_traces(points, r.ttft_s, "ttft_s", t)),
                     key="lt_cdf_ttft", where=c1)  # titles as HTML above the plot: they wrap on a phone
        layout.chart(LF.cdf_figure(r.tpot_s, t, title=t("lt.fig.tpot_title"), x_title=t("lt.fig.tpot_x"), slo_s=tpot_slo, stat=stat, q=q,
                                   under=B.cdf_region(r.tpot_s, lt_bases["tpot"], t, presenting=presenting),
                                   over=M.cdf_traces(points, r.tpot_s, "tpot_s", t)),
                     key="lt_cdf_tpot", where=c2)
        # how sure a run of this many requests is (sectioning: calc.traffic.slo.statistic_interval); under the
        # charts of the percentiles, not above them (the presenter's first chart stays above a projector's fold)
        if steady_state and not r.truncated:
            n_judged, (t_lo, t_hi), (p_lo, p_hi) = runs.judged_intervals(r, stat)
            if runs.finite(t_lo):
                close = [what for what, lo, hi, slo in (("TTFT", t_lo, t_hi, ttft_slo), ("TPOT", p_lo, p_hi, tpot_slo))
                         if runs.finite(lo) and lo <= slo <= hi]
                st.caption(t("lt.sampling", q=q, n=F.integer(n_judged), t_lo=ms(t_lo), t_hi=ms(t_hi),
                             p_lo=ms(p_lo) if runs.finite(p_lo) else "—", p_hi=ms(p_hi) if runs.finite(p_hi) else "—")
                           + (" " + t("lt.sampling.close", what=" / ".join(close)) if close else ""))
        if points:
            st.caption(t("ms.cdf_note"))
        M.render(sc, t, key="lt")
with sweep:
    if sweep.open:
        if trace is not None or load.arrival not in ("poisson", "gamma"):
            st.info(t("lt.sweep_only_open"))
        elif not v["lt_sweep"]:
            st.info(t("lt.sweep_off"))
        elif stat == "mean":
            st.info(t("lt.sweep_needs_percentile"))
        elif (sweep_job := sweep_job or runs.sweep_within(sc.arch, sc.gpu, s, sc.efficiency, sweep_load,
                                                          **sweep_args)) is None:
            st.info(t("lt.sweep_over_budget", cpu=F.number(runs.sweep_work(*key, sweep_load).cpu_s, 1),
                      cpu_limit=F.number(lim.cpu_s, 0)))
        else:
            search = background.result(sweep_job, t, label=t("lt.sweeping"), command=command)
            if load.max_concurrency is not None:
                st.caption(t("lt.sweep_without_cap", c=F.integer(load.max_concurrency)))
            if np.isfinite(search.rate_per_s):
                st.markdown(t("lt.sweep_result", q=q, ttft=F.integer(v["sla_ttft_ms"]), tpot=F.integer(v["sla_tpot_ms"]),
                              rate=F.number(search.rate_per_s, 2), n=len(search.rates_per_s)))
            else:
                st.warning(t("lt.sweep_none", rate=F.number(float(search.rates_per_s.min()), 2), q=q))
            open_bases = [B.basis(sc.arch, sc.gpu, g, arrival="poisson") for g in ("throughput", "ttft")]
            busy_bases = {c: tuple(B.basis(sc.arch, sc.gpu, g, arrival="poisson", condition=c) for g in ("throughput", "ttft"))
                          for c in ("api_shared", "api_server")}  # calc.timing.bands.CONDITIONS but the engine's
            layout.chart(LF.sweep_figure(search, t, ttft_slo_s=ttft_slo,
                                         bands=B.sweep_regions(*open_bases, t, presenting=presenting, busy=busy_bases,
                                                               api_server_s=B.api_server_time_s(sc.arch, sc.efficiency))),
                         key="lt_sweep_fig")
            if replicas > 1:
                st.caption(t("lt.sweep_per_replica", n=F.integer(replicas)))
with timeline:
    if timeline.open:
        layout.chart(LF.timeline_figure(r, t), key="lt_timeline")
with table:
    if table.open:
        if r.truncated:
            st.caption(t("lt.truncated.short", **partial))
        st.dataframe([{t("lt.col.metric"): t(f"lt.row.{name}"), t("lt.col.mean"): ms(stats[f"{name}_mean"]),
                       **{f"P{p}": ms(stats[f"{name}_p{p}"]) for p in (50, 90, 95, 99)}}
                      for name in ("ttft_s", "tpot_s", "itl_s", "e2e_latency_s", "queue_wait_s")], hide_index=True)
c1, c2 = st.columns(2)
c1.download_button(t("csv.lt_requests"), lambda: LF.requests_csv(r), file_name="load_test_requests.csv", mime="text/csv",
                   key="lt_csv_requests", on_click="ignore")
c2.download_button(t("csv.lt_steps"), lambda: LF.steps_csv(r), file_name="load_test_timeline.csv", mime="text/csv",
                   key="lt_csv_steps", on_click="ignore")

# The analytic model beside: Poisson arrivals the open loop at the rate (below); else the closed loop at the
# clients of a closed loop or at the mean requests in the system (Little's law), same mean lengths; identical
# requests of clients started together get the FCFS wave, spread-out arrivals the steady state the frontier draws.
closed = trace is None and load.arrival == "closed"
# a closed loop starts with all C prompts at once: the steady state is after the first C requests
steady = slice(load.concurrency, None) if closed and r.num_requests > 2 * load.concurrency else slice(None)
sim_mean = steady_means(r, skip=steady.start or 0)
# Poisson arrivals of the named traffic: the open-loop queueing model at the run's rate, the frontier's answer to
# the same rate (ui.perf.view.open_loop_at_rate; the planner's and `estimate --rate`'s), mean and percentile
open_arrivals = trace is None and load.arrival == "poisson" and not (load.reuse is not None and load.reuse.any_reuse) \
    and load.max_concurrency is None  # a client's cap: the closed loop at Little's law's concurrency (below)
pct = 95.0 if stat == "mean" else float(stat.removeprefix("p"))  # the percentile row: the SLA's, P95 beside a mean
if open_arrivals:
    ol = V.open_loop_at_rate(Variant("", s, sc.gpu, bool(s.enable_chunked_prefill), load.speculative, load.lengths,
                                     0.0 if load.lengths == "fixed" else load.spread, sc.arch.max_position_embeddings),
                             sc.arch, sc.efficiency, rate_rps=load.rate_per_s, percentile=pct)
    # the simulated side in steady state, as the cards above and the planner's check judge it (the first quarter of
    # the requests, which arrive at an idle engine, left out): the same P95 on the card and in the table
    sim_mean = steady_means(r, skip=warmup_requests(int(np.size(r.ttft_s))))
    st.subheader(t("lt.analytic.open_title"))
    st.caption(t("lt.analytic.open_caption", rate=F.number(load.rate_per_s, 2), q=f"P{int(pct)}"))
    rows = [(t("lt.row.ttft_s"), ol.ttft_s, sim_mean["ttft_s"]),
            (t("lt.metric.ttft", q=f"P{int(pct)}"), ol.ttft_percentile_s, steady_state_statistic(r, f"p{int(pct)}")[0]),
            (t("lt.row.tpot_s"), ol.tpot_s, sim_mean["tpot_s"]),
            (t("lt.row.e2e_latency_s"), ol.e2e_latency_s, sim_mean["e2e_latency_s"])]
    st.markdown(tables.markdown([{t("lt.col.metric"): label, t("lt.col.analytic_open"): ms(float(a)) if bool(ol.stable) else "—",
                                  t("lt.col.simulated"): ms(x)} for label, a, x in rows]))
    if r.truncated:
        st.caption(t("lt.truncated.short", **partial))
    if not bool(ol.stable):
        st.info(t("lt.analytic.open_over"))
    elif not bool(ol.budget_drains):
        st.info(t("lt.analytic.no_drain"))
    elif not bool(ol.closed_form):
        st.info(t("lt.analytic.sim_needed"))
    elif bool(near_capacity(ol.budget_utilization)):  # steep in the rate, runs differ by seed (calc.traffic.queueing)
        st.info(t("lt.analytic.near_capacity", busy=F.integer(100.0 * float(ol.budget_utilization))))
    analytic = {"open": True, "rate_rps": load.rate_per_s, "ttft_s": float(ol.ttft_s), "sim_ttft_s": sim_mean["ttft_s"],
                "closed_form": bool(ol.closed_form) and bool(ol.stable)}
else:  # the closed-loop model at the clients (or at Little's law's concurrency of other arrivals)
    in_system = stats["requests_per_s"] * stats["e2e_latency_s_mean"]  # NaN when a cut run finished no request
    c_eq = load.concurrency if closed else max(1, int(round(in_system)) if np.isfinite(in_system) else 1)
    uniform = closed and load.lengths == "fixed"
    # the lengths' spread as the frontier takes it from the same traffic (calc.traffic.workload.cut_lengths);
    # a trace's own
    cut = None if trace is not None else cut_lengths(load.lengths, load.input_len, load.output_len, load.spread,
                                                     est.max_model_len)  # the named lengths after the cut, as drawn
    in_cv, out_cv = ((sample_cv(r.input_len), sample_cv(r.output_len)) if cut is None else (cut.input_cv, cut.output_cv))
    a = estimate(sc.arch, sc.gpu, s, sc.efficiency, concurrency=c_eq, input_len=int(np.mean(r.input_len)),
                 output_len=int(np.mean(r.output_len)), uniform_lengths=uniform, output_cv=out_cv, input_cv=in_cv).serving
    st.subheader(t("lt.analytic.title"))
    st.caption(t("lt.analytic.caption", c=F.integer(c_eq), how=t("lt.analytic.closed" if closed else "lt.analytic.little")))
    if closed:
        st.caption(t("lt.analytic.steady", n=F.integer(load.concurrency)))
    # A Markdown table: its cells wrap on a phone (a dataframe cut the last column in Chinese), and st.table
    # loaded its Arrow script (0.9 MB) before the first chart (bench/first_paint.py)
    rows = [(t(f"lt.row.{name}"), float(getattr(a, name)), sim_mean[name]) for name in ("ttft_s", "tpot_s", "e2e_latency_s")]
    if closed and not uniform and (load.reuse is None or not load.reuse.any_reuse):
        # the closed loop's percentile, as the frontier judges it and `estimate` reports it (ttft_p95_s), beside the
        # simulated one over the same steady requests as the means
        p_ttft = V.closed_loop_percentile_at(sc.arch, sc.gpu, s, sc.efficiency, concurrency=c_eq,
                                             input_len=int(np.mean(r.input_len)), output_len=int(np.mean(r.output_len)),
                                             input_cv=in_cv, output_cv=out_cv, percentile=pct)
        done = np.asarray(r.ttft_s, dtype=float)[steady]
        done = done[np.isfinite(done)]
        rows.insert(1, (t("lt.metric.ttft", q=f"P{int(pct)}"), p_ttft, float(np.percentile(done, pct)) if done.size else np.nan))
    st.markdown(tables.markdown([{t("lt.col.metric"): label, t("lt.col.analytic"): ms(x), t("lt.col.simulated"): ms(y)}
                                 for label, x, y in rows]))
    if r.truncated:
        st.caption(t("lt.truncated.short", **partial))
    if not bool(a.closed_form):
        st.info(t("lt.analytic.sim_needed"))
    analytic = {"concurrency": F.integer(c_eq), "wave": uniform, "wave_steps": float(a.wave_steps) if uniform else 0.0,
                "ttft_s": float(a.ttft_s), "closed_form": bool(a.closed_form), "sim_ttft_s": sim_mean["ttft_s"]}
st.subheader(t("why.title"))
B.render_why({t("lt.metric.ttft", q=q): lt_bases["ttft"], t("lt.metric.tpot", q=q): lt_bases["tpot"],
              t("lt.metric.throughput"): lt_bases["x"]}, t, "lt")
if stat != "mean":
    st.caption(t("band.pct_note"))
api_burst = ((float(est.engine.api_server_request_s), float(est.engine.api_server_final_share))
             if load.arrival == "burst" and trace is None else None)  # the API server's turns (frontend_entry_s)
render_panels(loadtest_panels(r, {**stats, f"ttft_s_{stat}": pt, f"tpot_s_{stat}": pp}, t, ttft_slo_s=ttft_slo,
                              tpot_slo_s=tpot_slo, stat=stat, analytic=analytic, api_burst=api_burst), t)
