"""Roofline page (course §3.3): every operator of a decode step and of a prefill at its arithmetic
intensity; the batch slider moves decode toward the ridge; where batching stops paying."""

import numpy as np
import streamlit as st

from calc.timing.frontier import concurrency_points
from calc.timing.operators import decode_table
from calc.sizing.scenario import memory_for
from ui.perf import figures as FP
from ui import format as F
from ui.perf import view as V
from ui import layout, shell, tables
from ui.i18n import weights_phrase
from ui.perf.explain import roofline_panels
from ui.perf.controls import RF_BATCH, ROOFLINE
from ui.state import check_query_params, render_control
from ui.why import render_panels
from ui.fit import scenario_not_fit_message

sc, t = shell.page()
for warning in check_query_params(ROOFLINE, t):
    st.warning(warning)
s = sc.serving
layout.header(t("rf.page_title"), t("rf.intro", model=sc.arch.name, gpu=t.gpu(sc.gpu), tp=s.tensor_parallel_size,
                                       weights=weights_phrase(t, dtype=s.dtype, quantization=s.quantization),
                                       kv=s.kv_cache_dtype, ctx=F.integer(sc.context_tokens),
                                       prompt=F.integer(s.input_len)))

def _body() -> None:
    """Everything below the header, run as a fragment (shell.run_fragment): the batch slider reruns only this."""
    mem = memory_for(sc.arch, sc.gpu, s, sc.efficiency, concurrency=1, context_tokens=sc.context_tokens)
    if not bool(mem.fits):
        st.error(scenario_not_fit_message(sc, mem, t, serving=s))
    else:
        batch = render_control(RF_BATCH, t)
        r = V.cached_roofline(sc.arch, sc.gpu, s, sc.efficiency, decode_batch=batch, context_tokens=sc.context_tokens,
                              prompt_tokens=s.input_len)
        kv_limit = float(mem.max_concurrency_at_context)
        d, p = r.decode, r.prefill
        cards = layout.grid("rf", 5)
        cards.metric(t("rf.metric.mfu", b=F.integer(batch)), F.percent(float(d.mfu), 2), border=True, help=t("rf.metric.mfu.help"))
        cards.metric(t("rf.metric.mbu", b=F.integer(batch)), F.percent(float(d.mbu), 1), border=True, help=t("rf.metric.mbu.help"))
        cards.metric(t("rf.metric.step", b=F.integer(batch)), f"{F.number(float(d.step_s) * 1e3, 2)} ms", border=True,
                     help=t("rf.metric.step.help", tps=F.integer(batch / float(d.step_s))))
        cards.metric(t("rf.metric.bstar"), F.number(r.critical_batch, 0), border=True, help=t("rf.metric.bstar.help"))
        cards.metric(t("rf.metric.pf_mfu"), F.percent(float(p.mfu), 1), border=True,
                     help=t("rf.metric.pf_mfu.help", p=F.integer(s.input_len)))
        if batch > kv_limit:
            st.warning(t("rf.kv_warning", b=F.integer(batch), fit=F.integer(kv_limit), ctx=F.integer(sc.context_tokens)))

        layout.chart(FP.roofline_figure(r, t, gpu_name=t.gpu(sc.gpu)), key="roofline_chart")
        st.caption(t("rf.caption"))
        rows = V.operator_rows(r)
        st.download_button(t("csv.roofline"), key="roofline_csv", on_click="ignore", file_name="roofline_operators.csv",
                           mime="text/csv", data=lambda rows=rows, batch=batch: V.operator_csv(
                               rows, batch=batch, context_tokens=sc.context_tokens, prompt_tokens=s.input_len))

        batches = concurrency_points(top=int(max(1024, 2 * kv_limit, batch)), n=96)
        sweep = decode_table(r.engine, batch=batches, context_tokens=sc.context_tokens)
        layout.chart(FP.decode_batch_figure(sweep, t, batch=batch, critical_batch=r.critical_batch, kv_limit_batch=kv_limit),
                     key="decode_batch_chart")
        st.caption(t("db.caption", cross=V.crossing_text(sweep, r.critical_batch, t), fit=F.integer(kv_limit)))
        st.download_button(t("csv.decode_batch"), key="decode_batch_csv", on_click="ignore", file_name="decode_batch_sweep.csv",
                           mime="text/csv", data=lambda sweep=sweep: V.decode_sweep_csv(sweep))  # built on click

        st.subheader(t("op.table_title"))
        # a static table: it wraps its headers to the page width instead of scrolling its last column away
        st.table(tables.arrow(V.operator_display(rows, t)), hide_index=True)

        st.subheader(t("mfu.title"))
        st.caption(t("mfu.intro", i=F.integer(s.input_len), o=F.integer(s.output_len)))
        mean_ctx = s.input_len + s.output_len / 2
        closed = V.cached_estimate(V.Variant("", s, sc.gpu, s.enable_chunked_prefill), sc.arch, sc.efficiency,
                                   np.array([1, 32])).serving
        check = V.MfuCheck(decode_mfu=decode_table(r.engine, batch=[1, 32], context_tokens=mean_ctx).mfu,
                           request_mfu=closed.mfu, output_tokens_per_s=closed.output_tokens_per_s, tpot_s=closed.tpot_s,
                           critical_batch=r.critical_batch, input_len=s.input_len, output_len=s.output_len)
        st.table(tables.arrow([{t("mfu.col.claim"): x["claim"], t("mfu.col.course"): x["course"], t("mfu.col.calc"): x["calc"],
                   t("mfu.col.why"): x["why"]} for x in V.mfu_rows(check, t)]), hide_index=True)

        st.subheader(t("why.title"))
        render_panels(roofline_panels(r, t), t)


shell.run_fragment(_body)
