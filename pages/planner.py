"""Planner page: the deployments (GPU, TP, precisions, max_num_seqs, replicas) that serve a request
rate within an SLA, ranked; cost against latency; why the others are out; vLLM commands."""

import dataclasses
import time

import streamlit as st
from pydantic import ValidationError

from calc.plan.search import PlanRequest
from calc.spec.catalog import get_gpu, list_gpus
from calc.spec.inputs import describe_validation_error
from ui import format as F
from ui import background, command_block, labelled, layout, lazy_inputs, shell, tables
from ui.budget import limits
from ui.controls import ControlValueError
from ui.i18n import current_language
from ui.planner import explain as X
from ui.planner import figures as FP
from ui.planner import runs as pl_runs
from ui.prefixcache.widgets import prefix_inputs
from ui.speculative.inputs import speculative_inputs
from ui.planner.controls import (PL_BUDGET, PL_GPUS, PL_MAX_GPUS, PL_ONE_PER_GPU, PL_SORT, PL_TOP, PL_PRICES, PLANNER,
                                 PRICES_KEY, parse_prices)
from ui.safe import describe, md_escape
from ui.state import check_query_params, render_control
from ui.traffic import LENGTH_SPREAD, LENGTHS, RATE, SLA_STAT, SLA_TPOT_MS, SLA_TTFT_MS
from ui import bands as B

sc, t = shell.page()
lang = current_language()
for warning in check_query_params(PLANNER, t):
    st.warning(warning)
s = sc.serving
st.title(t("pl.title"))

c1, c2, c3, c4 = st.columns(4)
with c1:
    rate = render_control(RATE, t)
with c2:
    ttft_ms = render_control(SLA_TTFT_MS, t)  # the SLA every page shares (ui.traffic)
with c3:
    tpot_ms = render_control(SLA_TPOT_MS, t)
names = {g.id: t.gpu(g) for g in list_gpus()}
with c4:  # translated options, the link keeps the tokens (ui.labelled)
    percentile = labelled.render(SLA_STAT, t, lambda o: t(f"opt.sla_stat.{o}"))
c5, c6, c7 = st.columns([1, 1, 2], vertical_alignment="bottom")  # the closed section level with the boxes
with c5:  # the load test's length distribution (ui.traffic): the slot queue's C_s² and the percentile check
    lengths = labelled.render(LENGTHS, t, lambda o: t(f"opt.lengths.{o}"))
with c6:
    spread = render_control(LENGTH_SPREAD, t, disabled=lengths == "fixed")


def _search_options() -> None:
    """The search's sort, size, GPUs and prices: drawn only while their section is open (ui.lazy_inputs)."""
    a, b = st.columns(2)
    lazy_inputs.selectbox(PL_SORT, t, lambda o: t(f"opt.pl_sort.{o}"), a)
    render_control(PL_TOP, t, b, bound=False)
    render_control(PL_ONE_PER_GPU, t, bound=False)
    a, b = st.columns(2)
    render_control(PL_MAX_GPUS, t, a, bound=False)
    render_control(PL_BUDGET, t, b, bound=False)
    lazy_inputs.selectbox(PL_GPUS, t, names.__getitem__, placeholder=t("pl.gpus.placeholder"))  # names shown, ids in the link
    st.text_input(t("ctl.pl_prices"), key=PRICES_KEY, help=t("ctl.pl_prices.help"), max_chars=2000,
                  placeholder="h100-sxm=2.49", persist_state="session")


# the first view draws less (each select or number box ~20-30 ms of the browser's main thread before the chart)
opts = lazy_inputs.section(t, t("pl.search_options"), "sec_pl_search",
                           (PL_SORT, PL_TOP, PL_ONE_PER_GPU, PL_MAX_GPUS, PL_BUDGET, PL_GPUS, PL_PRICES), _search_options,
                           where=c7)
sort, top, max_gpus, budget = opts[PL_SORT.key], opts[PL_TOP.key], opts[PL_MAX_GPUS.key], opts[PL_BUDGET.key]
one_per_gpu = bool(opts[PL_ONE_PER_GPU.key])
allowed, prices_text = opts[PL_GPUS.key], opts[PRICES_KEY]
c11, c12 = st.columns([1, 2])  # the drafter's three inputs need the wider side
with c11:  # the workload's prefix reuse and the drafter: the frontier's and load test's inputs (same URL keys)
    reuse = prefix_inputs(t, input_len=s.input_len, where=c11)
with c12:
    spec = speculative_inputs(t, where=c12)
prefix_caching = reuse.enable_prefix_caching  # a server flag: the commands say it, whatever the reuse
if spec is not None and reuse.any_reuse:
    st.caption(t("pc.with_spec", what=t("pc.what.planner")))
    reuse = None
try:
    prices = parse_prices(prices_text)
except ControlValueError as exc:
    st.warning(t("pl.bad_prices", reason=describe(exc, t)))  # user text: escaped, cut (ui.safe)
    prices = {}

st.caption(t("pl.intro", model=sc.arch.name, rate=F.number(rate, 2), i=F.integer(s.input_len), o=F.integer(s.output_len)))
try:
    req = PlanRequest(rate_rps=rate, input_len=s.input_len, output_len=s.output_len, ttft_slo_s=ttft_ms / 1e3,
                      tpot_slo_s=tpot_ms / 1e3, percentile=percentile, max_gpus=max_gpus, budget_usd_per_hour=budget,
                      sort=sort, top=top, one_per_gpu=one_per_gpu, gpu_memory_utilization=s.gpu_memory_utilization,
                      lengths=lengths,
                      length_spread=0.0 if lengths == "fixed" else float(spread),
                      **({"enable_prefix_caching": prefix_caching} if reuse is None else dataclasses.asdict(reuse)))
except ValidationError as exc:
    st.error(md_escape(describe_validation_error(exc)))
    st.stop()
if lengths != "fixed":  # the window the plan sets (calc.plan.search.PlanRequest.window_tokens) and what it holds
    st.caption(t("pl.window", n=F.integer(req.window_tokens(sc.arch.max_position_embeddings)),
                 share=F.percent(req.whole_share(sc.arch.max_position_embeddings), 1)))
gpus = [get_gpu(g) for g in allowed] if allowed else list_gpus()
t0 = time.perf_counter()
command = pl_runs.cli_command(sc.arch, list(allowed or []), req, prices, 10 * pl_runs.work_units(), spec)
# cached by its inputs and the budget, in bytes (ui.budget); the percentile check simulates: in a
# worker process, cancelled when the inputs change or the tab closes (ui.background)
result = background.result(pl_runs.planned_job(sc.arch, gpus, req, sc.efficiency, prices, spec), t,
                           label=t("pl.running"), command=command, in_worker=percentile != "mean")
elapsed = time.perf_counter() - t0
budget_limits = limits()

ok = int(result.grid.meets_slo.sum())
cards = layout.grid("pl", 3)
cards.metric(t("pl.metric.configs"), F.integer(result.grid.size), border=True)
cards.metric(t("pl.metric.meeting"), F.integer(ok), border=True)
best = result.ranked[0] if result.ranked else None
cards.metric(t("pl.metric.best"), "—" if best is None else f"{best.gpus_total} × {F.gpu_short(best.gpu_name)}", border=True,
             help=None if best is None else t("pl.metric.best.help", replicas=t.count("replica", best.replicas), tp=best.tensor_parallel_size,
                                              gpu=best.gpu_name, q=X.precision_label(best.quantization, t),
                                              kv=best.kv_cache_dtype, s=best.max_num_seqs))
if best is not None and (why := X.layout_why(best, t)):  # PP / DP / EP: why this layout carries the rate
    st.info(why)
# how long it took: a footnote, not a result (under a millisecond: the answer was already cached, by this
# session or another asking the same question)
st.caption(t("pl.search_time", time=F.duration(elapsed)) if elapsed >= 1e-3 else t("pl.search_cached"))
st.caption(t("pl.statistic.mean") if percentile == "mean" else
           t("pl.statistic.simulated", p=percentile.upper()) if result.slo_statistic == percentile else
           t("pl.statistic.fallback", p=percentile.upper()))

if skipped := pl_runs.not_simulated(result):  # the budget ran out: say so, and how to run it in full
    st.warning(t("pl.over_budget", n=F.integer(skipped), p=percentile.upper(), cpu_limit=F.number(budget_limits.cpu_s, 0)))
    command_block.render(command, t)
if best is None:
    reasons = ", ".join(f"{t(f'pl.reason.{k}')}: {F.integer(v)}" for k, v in result.reason_counts.items() if v)
    st.warning(t("pl.none", n=F.integer(result.grid.size), reasons=reasons))
else:
    st.subheader(t("pl.table.title"))
    if one_per_gpu and (distinct := len({d.gpu for d in result.ranked})) < len(result.ranked):
        st.caption(t("pl.order.one_per_gpu", n=distinct))  # where the two parts meet (calc.plan.search.distinct_first)
    ranked = X.ranked_rows(result, t, lang=lang)
    # Markdown, not a data grid, on the first view: the grid's 1.5 MB of Arrow and grid scripts were
    # loaded and run in the browser's one main thread before the first chart (bench/first_paint.py).
    # Its decisive columns; every column, sortable (search, CSV download), in a grid drawn when opened.
    with st.container(key="md_compact"):  # ui.layout's style: smaller cells
        st.markdown(tables.markdown(X.ranked_summary(ranked, result, t), links={t("pl.col.open"): t("pl.open")}))
    st.caption(t("pl.table.caption"))
    if (grid := layout.lazy_expander(st, t("pl.table.grid"), "pl_ranked_grid")).open:
        with grid:
            st.dataframe(ranked, hide_index=True, key="planner_table",
                         column_config={t("pl.col.open"): st.column_config.LinkColumn(display_text=t("pl.open"))})
    best_bases = B.render_best(best, sc.arch, get_gpu(best.gpu), t, rate_rps=req.rate_rps,
                               tokens=req.input_len + req.output_len, efficiency=sc.efficiency)  # with ranges
    layout.chart(FP.pareto_figure(result.grid, t, rate_rps=req.rate_rps, input_len=req.input_len,
                                  output_len=req.output_len, gpu_names=names,
                                  bands=B.pareto_regions(sc.arch, get_gpu, t, presenting=layout.presenting(),
                                                         rate_rps=req.rate_rps, efficiency=sc.efficiency)),
                 key="planner_pareto")
    if B.ENABLED:
        st.caption(t("band.pareto_note"))
    B.render_why(best_bases, t, "pl")
    st.subheader(t("pl.cmd.title"))
    # the option as the ranking names it (GPU count × catalog name, not the catalog id)
    labels = [f"#{k} {d.gpus_total} × {F.gpu_short(d.gpu_name)}, TP {d.tensor_parallel_size}{X.layout_label(d)}"
              f" {X.precision_label(d.quantization, t)}"
              f" / KV {d.kv_cache_dtype}" for k, d in enumerate(result.ranked, 1)]
    pick = st.selectbox(t("pl.cmd.pick"), range(len(labels)), format_func=lambda i: labels[i], key="pl_cmd_pick")
    d = result.ranked[pick]
    command_block.render(d.vllm_command, t)
    st.caption(t("pl.cmd.caption", replicas=t.count("replica", d.replicas), gpus=t.count("gpu", d.tensor_parallel_size * d.pipeline_parallel_size
                                                                            * d.data_parallel_size)))

st.subheader(t("pl.out.title"))
st.markdown(tables.markdown(X.reason_summary(result, t)))  # Markdown: no table script to load (ui.tables.markdown)
# Drawn only while open (ui.layout.lazy_expander): closed, a plain expander still sent and mounted its
# data grid and table, in the browser's one main thread before the first chart (bench/first_paint.py).
if (out := layout.lazy_expander(st, t("pl.out.caption"), "pl_out")).open:
    with out:
        st.dataframe(X.out_rows(result, t, names), hide_index=True, key="planner_out")

st.subheader(t("pl.quality.title"))
shown = sorted({d.quantization for d in result.ranked} | {"fp8", "int8", "awq"})
for line in X.quality_lines(sc.arch.id, sc.arch.name, shown, t):
    st.caption(line)
if (price_box := layout.lazy_expander(st, t("pl.prices.title"), "pl_prices_used")).open:
    with price_box:
        st.table(X.price_rows([g.id for g in gpus], prices, t, names), hide_index=True)
