"""Speculative decoding page: the TPOT speed-up over the running batch for one drafter (EAGLE,
EAGLE-3, MTP, n-gram), where it stops paying, and why (calc.timing.speculative)."""

import streamlit as st

from calc.sizing.scenario import memory_for
from calc.timing.speculative import published_checks
from ui import checks, layout, shell
from ui import format as F
from ui.speculative import figures as FS
from ui.speculative.controls import SPEC_ACCEPTANCE, SPEC_K, SPEC_METHOD, SPECULATIVE
from ui.speculative.explain import outcome_text, speculative_panels
from ui.speculative.view import published, speculative_config, speedup_sweep
from ui.state import check_query_params, render_control
from ui.why import render_panels

sc, t = shell.page()
for warning in check_query_params(SPECULATIVE, t):
    st.warning(warning)
layout.header(t("sd.page_title"), t("sd.intro", model=sc.arch.name, gpu=t.gpu(sc.gpu), ctx=F.integer(sc.context_tokens)))


def _body() -> None:
    cols = st.columns(3)
    method = render_control(SPEC_METHOD, t, cols[0])
    k = render_control(SPEC_K, t, cols[1])
    acceptance = render_control(SPEC_ACCEPTANCE, t, cols[2])
    tau_pub, a1 = published(method, k)
    st.caption(t("sd.published", method=method, k=k, tau=F.number(tau_pub, 2), a1=F.number(a1, 2)))
    sw = speedup_sweep(sc.arch, sc.gpu, sc.serving, sc.efficiency, speculative_config(method, k, acceptance),
                       context_tokens=sc.context_tokens)
    cards = layout.grid("sd", 4)
    cards.metric(t("sd.metric.tau"), F.number(sw.drafter.tokens_per_step, 2), border=True)
    cards.metric(t("sd.metric.speedup1"), f"{F.number(float(sw.step.speedup[0]), 2)}×", border=True)
    cross = sw.crossover_batch
    # the largest batch of whole requests of this context the KV pool holds: past it the sweep is roofline only
    fit = float(memory_for(sc.arch, sc.gpu, sc.serving, sc.efficiency, concurrency=1,
                           context_tokens=sc.context_tokens).max_concurrency_at_context)
    fit = fit if fit == fit and fit >= 1 else None
    top = int(min(sw.batch[-1], fit or sw.batch[-1]))
    cards.metric(t("sd.metric.cross"), t("sd.metric.cross.none", n=F.integer(top)) if cross != cross or cross > top
                 else F.integer(cross), border=True,
                 help=None if fit is None or fit >= sw.batch[-1] else t("sd.metric.cross.fit", n=F.integer(fit)))
    cards.metric(t("sd.metric.memory"), f"{F.number(sw.drafter.weight_bytes / 2**30, 2)} GiB", border=True)
    st.caption(outcome_text(sw, fit, t))  # what the chart shows, computed (the intro gives the mechanism)
    layout.chart(FS.speedup_figure(sw, t, kv_full_batch=fit), key="sd_speedup_chart")
    layout.chart(FS.tpot_figure(sw, t, kv_full_batch=fit), key="sd_tpot_chart")
    st.caption(t("sd.caption"))
    st.subheader(t("why.title"))
    render_panels(speculative_panels(sw, t), t)
    checks.render(t, key="sd_checks", title=t("sd.checks.title"), load=published_checks,
                  caption=lambda c: t("sd.checks.caption", all=checks.percent(c["median_abs_error"], 1), n=c["n"]))


shell.run_fragment(_body)
