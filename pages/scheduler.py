"""Scheduler page (course §3.4): engine steps of a few requests, chunked prefill riding along the
decodes under the token budget vs whole prefills that stall them; TTFT and TPOT per request."""

import numpy as np
import streamlit as st

from calc.sizing.scenario import memory_for
from calc.timing.schedule import mixed_workload, segments
from ui.perf import figures as FP
from ui import format as F
from ui.perf import view as V
from ui import layout, shell, tables
from ui.perf.explain import scheduler_panels
from ui.perf.controls import (SCHED_BUDGET, SCHED_GAP_MS, SCHED_LONG, SCHED_MAX_SEQS, SCHED_OUTPUT, SCHED_REQUESTS,
                              SCHED_SHORT, SCHEDULER)
from ui.state import check_query_params, render_control
from ui.why import render_panels
from ui.fit import scenario_not_fit_message

sc, t = shell.page()
for warning in check_query_params(SCHEDULER, t):
    st.warning(warning)
s = sc.serving
layout.header(t("sc.page_title"), t("sc.intro", model=sc.arch.name, gpu=t.gpu(sc.gpu), tp=s.tensor_parallel_size))

def _body() -> None:
    """Everything below the header, run as a fragment (shell.run_fragment): the page's own controls rerun only this."""
    controls = (SCHED_BUDGET, SCHED_MAX_SEQS, SCHED_REQUESTS, SCHED_GAP_MS, SCHED_LONG, SCHED_SHORT, SCHED_OUTPUT)
    with layout.grid("sc", 4):
        values = [render_control(ctl, t) for ctl in controls]
    budget, max_seqs, n_req, gap_ms, long_p, short_p, out = values

    mem = memory_for(sc.arch, sc.gpu, s, sc.efficiency, concurrency=1, context_tokens=sc.context_tokens)
    mml = sc.resolved.max_model_len
    if not bool(mem.fits):
        st.error(scenario_not_fit_message(sc, mem, t, serving=s))
    elif max(long_p, short_p) + out > mml:
        st.error(t("sc.too_long", p=F.integer(max(long_p, short_p)), o=F.integer(out), mml=F.integer(mml)))
    else:
        reqs = mixed_workload(n_requests=n_req, long_prompt_tokens=long_p, short_prompt_tokens=short_p,
                              output_tokens=out, arrival_gap_s=gap_ms / 1000)
        runs = V.schedule_runs(sc.arch, sc.gpu, s, sc.efficiency, reqs, max_num_seqs=max_seqs, max_num_batched_tokens=budget,
                               kv_capacity_tokens=float(mem.kv_sequence_tokens))
        if any(r.truncated for r in runs.values()):
            st.warning(t("sc.truncated"))
        ms = lambda x: f"{F.number(float(x) * 1e3, 0)} ms"  # noqa: E731
        # Presenter mode: the step charts first (on a 1920x1080 projector's first screen), the cards after.
        first, cards_area, last = st.container(), st.container(), st.container()
        chart_area = first if layout.presenting() else last
        for name, r in runs.items():
            other = runs["whole" if name == "chunked" else "chunked"]
            cards_area.markdown(f"#### {t(f'sc.policy.{name}')}")
            with cards_area:
                cards = layout.grid(f"sc_{name}", 4)
            cards.metric(t("sc.metric.ttft_mean"), ms(np.nanmean(r.ttft_s)), border=True,
                         delta=ms(np.nanmean(r.ttft_s) - np.nanmean(other.ttft_s)), delta_color="inverse")
            cards.metric(t("sc.metric.ttft_max"), ms(np.nanmax(r.ttft_s)), border=True,
                         delta=ms(np.nanmax(r.ttft_s) - np.nanmax(other.ttft_s)), delta_color="inverse")
            cards.metric(t("sc.metric.tpot"), f"{F.number(float(np.nanmean(r.tpot_s)) * 1e3, 1)} ms", border=True,
                         delta=f"{F.number(float(np.nanmean(r.tpot_s) - np.nanmean(other.tpot_s)) * 1e3, 1)} ms",
                         delta_color="inverse")
            cards.metric(t("sc.metric.gap"), ms(np.nanmax(r.max_itl_s)), border=True,
                         delta=ms(np.nanmax(r.max_itl_s) - np.nanmax(other.max_itl_s)), delta_color="inverse",
                         help=t("sc.metric.gap.help"))
        cards_area.caption(t("sc.delta_caption"))
        x_max = max(r.makespan_s for r in runs.values()) * 1e3
        with chart_area:
            for name, r in runs.items():
                title = t(f"sc.title.{name}", budget=F.integer(r.token_budget), seqs=max_seqs)
                layout.chart(FP.schedule_figure(r, segments(r), t, title=title, x_max_ms=x_max), key=f"schedule_{name}")
                st.caption(t(f"sc.caption.{name}"))
        st.download_button(t("csv.schedule_steps"), key="schedule_steps_csv", on_click="ignore",
                           file_name="schedule_steps.csv", mime="text/csv", data=lambda runs=runs: V.schedule_steps_csv(list(runs.values())))  # built on click

        st.subheader(t("sc.table_title"))
        ch, wh = runs["chunked"], runs["whole"]
        ms0 = lambda x: F.number(float(x) * 1e3, 1)  # noqa: E731
        st.table(tables.arrow([{t("sc.col.request"): i + 1, t("sc.col.arrival"): ms0(ch.arrival_s[i]),
                       t("sc.col.prompt"): F.integer(ch.prompt_tokens[i]), t("sc.col.output"): F.integer(ch.output_tokens[i]),
                       t("sc.col.ttft_chunked"): ms0(ch.ttft_s[i]), t("sc.col.ttft_whole"): ms0(wh.ttft_s[i]),
                       t("sc.col.tpot_chunked"): ms0(ch.tpot_s[i]), t("sc.col.tpot_whole"): ms0(wh.tpot_s[i]),
                       t("sc.col.gap_chunked"): ms0(ch.max_itl_s[i]), t("sc.col.gap_whole"): ms0(wh.max_itl_s[i])}
                      for i in range(len(reqs))]), hide_index=True)
        st.download_button(t("csv.schedule_requests"), key="schedule_requests_csv", on_click="ignore",
                           file_name="schedule_requests.csv", mime="text/csv",
                           data=V.schedule_requests_csv(list(runs.values())))

        st.subheader(t("why.title"))
        render_panels(scheduler_panels(ch, wh, t), t)


shell.run_fragment(_body)
