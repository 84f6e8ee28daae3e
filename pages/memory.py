"""Memory page: the per-GPU memory stack, where it stops fitting, paged vs contiguous KV."""

import streamlit as st

from ui import layout, shell, tables
from ui.i18n import weights_phrase
from ui.memory import figures, sweeps
from ui.memory import cached
from ui.memory.cached import memory_for  # memoized, shared by every session
from ui.memory import prefix as mem_prefix
from ui.memory.parallel import layout_note
from ui import format as F
from ui.controls import SWEEP_CONTEXT
from ui.state import check_query_params, render_control
from ui.why import render_panels
from ui.fit import scenario_not_fit_message
from ui import bands as B

sc, t = shell.page()
for warning in check_query_params((SWEEP_CONTEXT,), t):
    st.warning(warning)
s = sc.serving
layout.header(t("mem.title"), t("mem.intro", model=sc.arch.name, tp=s.tensor_parallel_size, gpu=t.gpu(sc.gpu),
                                    weights=weights_phrase(t, dtype=s.dtype, quantization=s.quantization),
                                    kv=s.kv_cache_dtype, ctx=F.integer(sc.context_tokens), block=s.block_size))

r = memory_for(sc.arch, sc.gpu, s, sc.efficiency, concurrency=sc.concurrency, context_tokens=sc.context_tokens)
starts = bool(r.fits)  # False: vLLM refuses to start, so it serves no request at all
fit = int(r.max_concurrency_at_context) if starts else 0

cards = layout.grid("mem", 5)
cards.metric(t("mem.metric.weights"), F.gib(r.weights_bytes), help=F.both(r.weights_bytes), border=True)
cards.metric(t("mem.metric.kv_token"), F.binary(r.kv_bytes_per_token), help=F.exact_bytes(r.kv_bytes_per_token),
             border=True)
cards.metric(t("mem.metric.kv_request"), F.gib(r.kv_bytes_per_request), help=F.both(r.kv_bytes_per_request),
             border=True)
# the KV pool (and the requests it holds) with the range vLLM's start-up logs put around it (ui.bands)
mem_basis = B.basis(sc.arch, sc.gpu, "memory")
pool_lo, pool_hi = B.limits(float(r.kv_pool_bytes), mem_basis)
pool_text = t("mem.band.pool", pool=F.gib(r.kv_pool_bytes), lo=F.gib(pool_lo), hi=F.gib(pool_hi)) if starts else ""
conc_lo, conc_hi = (float(v) for v in B.limits(float(r.kv_pool_tokens) / max(sc.context_tokens, 1), mem_basis))
B.card(cards, t, t("mem.metric.max_conc"), F.integer(fit), (min(conc_lo, fit), max(conc_hi, fit)) if starts else None,
       mem_basis, lambda v: F.integer(int(v)), presenting=layout.presenting(),
       help=t("mem.metric.max_conc.help", ctx=F.integer(sc.context_tokens), vllm=F.number(r.max_concurrency),
              mml=F.integer(sc.resolved.max_model_len)) + " " + pool_text if starts else t("mem.metric.no_start.help"))
if not starts:
    cards.metric(t("mem.metric.in_use", conc=F.integer(sc.concurrency)), "—", border=True,
                 help=t("mem.metric.no_start.help"))
else:  # the label says how many requests the value holds when not all of them fit
    in_use_label = (t("mem.metric.in_use", conc=F.integer(sc.concurrency)) if sc.concurrency <= fit
                    else t("mem.metric.in_use_partial", fit=F.integer(fit), conc=F.integer(sc.concurrency)))
    cards.metric(in_use_label, F.gib(r.kv_in_use_bytes), border=True,
                 help=t("mem.metric.in_use.help", used=F.both(r.kv_in_use_bytes), pool=F.both(r.kv_pool_bytes))
                 + " " + pool_text)

note = layout_note(sc, r, t)  # PP / DP / EP: per GPU vs per rank vs all ranks
if note:
    st.info(note)
if not starts:
    st.error(scenario_not_fit_message(sc, r, t, concurrency=sc.concurrency, context_tokens=sc.context_tokens))
elif not bool(r.concurrency_fits):
    st.warning(t("mem.conc_not_fit", conc=F.integer(sc.concurrency), ctx=F.integer(sc.context_tokens),
                 fit=F.integer(fit)))

_reuse, shared = mem_prefix.render(sc, r, t, starts)  # shared prefixes: their blocks held once (the other pages' reuse inputs)

by_context = render_control(SWEEP_CONTEXT, t)
if by_context:
    x = sweeps.context_points(chosen=sc.context_tokens, max_model_len=sc.resolved.max_model_len)
    sweep = memory_for(sc.arch, sc.gpu, s, sc.efficiency, concurrency=sc.concurrency, context_tokens=x)
    kind, chosen, x_name = "context", sc.context_tokens, "context_tokens"
else:
    x = sweeps.concurrency_points(chosen=sc.concurrency, max_fit=fit)
    sweep = memory_for(sc.arch, sc.gpu, s, sc.efficiency, concurrency=x, context_tokens=sc.context_tokens)
    kind, chosen, x_name = "concurrency", sc.concurrency, "concurrency"
fig = figures.memory_stack_figure(x, kind, sweep, t, chosen=chosen, utilization=s.gpu_memory_utilization)
layout.chart(fig, key="memory_chart")
st.download_button(t("csv.memory"), file_name="memory_sweep.csv",
                   data=lambda: tables.memory_sweep_csv(x_name, x, sweep),  # built on click
                   mime="text/csv", key="memory_csv", on_click="ignore")

layout.chart(figures.waste_figure(r, t, block_size=s.block_size, max_model_len=sc.resolved.max_model_len),
             key="waste_chart")
st.caption(t("waste.caption", mml=F.integer(sc.resolved.max_model_len), block=s.block_size))
st.download_button(t("csv.waste"), key="waste_csv", on_click="ignore", file_name="paged_vs_contiguous.csv",
                   mime="text/csv",
                   data=lambda: tables.waste_csv(r, block_size=s.block_size, max_model_len=sc.resolved.max_model_len))

st.subheader(t("why.title"))
B.render_why({t("mem.metric.max_conc"): mem_basis}, t, "mem")
render_panels(cached.memory_panels(sc, t) + [p for p in (mem_prefix.panel(r, t, shared),) if p], t)
