"""Disaggregation page: colocated engines against P prefill + D decode instances on the same GPUs
(the sidebar's model, GPU and TP; the shared rate and SLA), with why-panels."""

import streamlit as st

from calc.plan.disaggregation import same_gpus
from calc.timing.estimate import estimate
from calc.traffic.disaggregation import (kv_descriptor_s, kv_descriptors, kv_links, kv_regions_per_layer,
                                         published_checks)
from ui import format as F
from calc.traffic.workload import cut_serving, cut_serving_input_quantile, length_cvs
from ui import checks, command_block, labelled, layout, lazy_inputs, shell
from ui.disagg import explain as X
from ui.disagg import figures as FD
from ui.disagg.controls import DG_BW, DG_GPUS, DG_LINK, DISAGG
from ui.fit import scenario_not_fit_message
from ui.safe import md_escape
from ui.state import check_query_params, render_control
from ui.traffic import LENGTH_SPREAD, LENGTHS, RATE, SLA_STAT, SLA_TPOT_MS, SLA_TTFT_MS


@st.cache_data(max_entries=64, show_spinner=False)
def _same_gpus(arch, gpu, serving, efficiency, top, ttft_s, tpot_s, stat, bw, lat, cvs, input_q=None):
    return same_gpus(arch, gpu, serving, efficiency, gpu_counts=range(1, top + 1), ttft_slo_s=ttft_s, tpot_slo_s=tpot_s,
                     percentile=stat, link_bw_bytes_per_s=bw, link_latency_s=lat, input_cv=cvs[0], output_cv=cvs[1],
                     input_quantile_tokens=input_q)


def _length_inputs() -> None:
    a, b = st.columns(2)  # the shared traffic's length distribution (ui.traffic), as on the frontier, load test, planner
    kind = lazy_inputs.selectbox(LENGTHS, t, lambda o: t(f"opt.lengths.{o}"), a)
    render_control(LENGTH_SPREAD, t, b, bound=False, disabled=kind == "fixed")


sc, t = shell.page()
for warning in check_query_params(DISAGG, t):
    st.warning(warning)
s = sc.serving
st.title(t("dg.title"))
c1, c2, c3, c4 = st.columns(4)
with c1:
    rate = render_control(RATE, t)
with c2:
    ttft_ms = render_control(SLA_TTFT_MS, t)
with c3:
    tpot_ms = render_control(SLA_TPOT_MS, t)
with c4:
    stat = labelled.render(SLA_STAT, t, lambda o: t(f"opt.sla_stat.{o}"))
c5, c6, c7 = st.columns(3)
with c5:
    n = render_control(DG_GPUS, t)
with c6:
    link_id = labelled.render(DG_LINK, t, lambda o: t(f"opt.dg_link.{o}"))
link = kv_links()[link_id]
with c7:  # empty: the preset's bandwidth, shown in the box (an empty box said nothing of what is used)
    bw_gb = render_control(DG_BW, t, placeholder=t("dg.bw_preset", v=F.number(link.effective_bytes_per_s() / 1e9, 1)))
bw = bw_gb * 1e9 if bw_gb else link.effective_bytes_per_s()
# the lengths' spread the other pages judge with: the models take their coefficients of variation
lens = lazy_inputs.section(t, t("dg.lengths_section"), "sec_dg_lengths", (LENGTHS, LENGTH_SPREAD), _length_inputs)
lengths = lens[LENGTHS.key] if lens[LENGTHS.key] in LENGTHS.choices() else LENGTHS.default
# the lengths once cut to max_model_len, as the load test draws them (calc.traffic.workload.cut_serving)
analytic, cut = cut_serving(s, lengths, lens[LENGTH_SPREAD.key], sc.arch.max_position_embeddings)
cvs = (cut.input_cv, cut.output_cv)
# the prompt at the statistic: the cut lengths' own quantile (as the frontier's; None: nothing cut, or the mean)
input_q = None if stat == "mean" else cut_serving_input_quantile(
    s, lengths, lens[LENGTH_SPREAD.key], sc.arch.max_position_embeddings, float(stat.removeprefix("p")) / 100.0)
asked = length_cvs(lengths, lens[LENGTH_SPREAD.key])  # what the simulate command draws (and cuts itself)
tp = s.tensor_parallel_size
n = max(tp * 2, n - n % tp)  # whole engines: a multiple of TP, at least one prefill and one decode instance
st.caption(t("dg.intro", model=sc.arch.name, gpu=t.gpu(sc.gpu), tp=tp, i=F.integer(s.input_len),
             o=F.integer(s.output_len), stat=t(f"opt.sla_stat.{stat}")))  # "P95", as the select box writes it
top = min(DG_GPUS.hi, max(16, 2 * n))  # the chart's GPU counts: twice the chosen one, at least 16
r = _same_gpus(sc.arch, sc.gpu, analytic, sc.efficiency, top, ttft_ms / 1e3, tpot_ms / 1e3, stat, bw, link.latency_s, cvs,
               input_q)
if r.kv_bytes_per_token_per_rank == 0:  # the model does not fit this GPU at this TP and context
    mem = estimate(sc.arch, sc.gpu, s, sc.efficiency).memory
    if not bool(mem.fits):  # what vLLM would say and what would fit: the frontier's message for the same setup
        st.error(scenario_not_fit_message(sc, mem, t, serving=s, concurrency=sc.concurrency,
                                          context_tokens=s.input_len + s.output_len))
    else:  # it starts, but its pool holds less than one request of these lengths
        st.warning(t("dg.unfit", model=md_escape(sc.arch.name), gpu=t.gpu(sc.gpu), tp=tp))
    st.stop()

co, dis, label = X.at(r, n)
need_co, need_dis = X.gpus_needed(r, rate)
cards = layout.grid("dg", 3)
cards.metric(t("dg.metric.colocated", n=n), t("dg.metric.rps", rate=F.number(co, 1)) if co > 0 else t("dg.metric.none"),
             border=True)
cards.metric(t("dg.metric.disagg", n=n), t("dg.metric.rps", rate=F.number(dis, 1)) + f" ({label})" if dis > 0
             else t("dg.metric.none"), border=True)  # no split within the SLA: not "0 req/s (—)"
cards.metric(t("dg.metric.gpus_needed", rate=F.number(rate, 2)),
             t("dg.metric.gpus_pair", co=need_co or "—", dis=need_dis or "—"), border=True)
(st.success if dis > co else st.info)(X.verdict(r, n, t))
layout.chart(FD.frontier_figure(r, t, rate_rps=rate, chosen=n), key="dg_frontier")
layout.chart(FD.splits_figure(r, t, n=n, colocated_rps=co), key="dg_splits")
with st.expander(t("dg.why.title"), expanded=False):
    for line in X.why(r, t, n=n, input_len=s.input_len, output_len=s.output_len, ttft_slo_s=ttft_ms / 1e3,
                      tpot_slo_s=tpot_ms / 1e3, kv_bytes_per_token=r.kv_bytes_per_token_per_rank, link_bw_bytes_per_s=bw, link_latency_s=link.latency_s, decode_batch=r.decode_batch,
                      descriptors=float(kv_descriptors(prompt_tokens=s.input_len, num_layers=sc.arch.num_hidden_layers,
                                                       block_size=s.block_size, regions_per_layer=kv_regions_per_layer(sc.arch))),
                      descriptor_s=kv_descriptor_s(), stat=stat, input_quantile_tokens=input_q):
        st.markdown(line)
checks.render(t, key="dg_checks", title=t("dg.checks.title"), load=published_checks,
              caption=lambda c: t("dg.checks.caption", held=checks.percent(c["median_abs_error_held_out"]), nh=c["n_held_out"],
                                  all=checks.percent(c["median_abs_error_all"]), n=c["n_all"], vllm=checks.percent(c["median_abs_error_vllm"]),
                                  nv=c["n_vllm"], fit=", ".join(f["row"] for f in c["engine_fits"]),
                                  ratio=checks.percent(c["ratio_median_abs_error"]), nr=c["n_ratio"]))
st.caption(t("dg.cli"))
p = max(int(label.split("P")[0]), 1) if label != "—" else 1
d = max(int(label.split("P")[1].rstrip("D")), 1) if label != "—" else 1
command_block.render(f"python -m calc simulate --model {sc.arch.id} --gpu {sc.gpu.id} -tp {tp} --input-len {s.input_len} "
                     f"--output-len {s.output_len} --rate {rate:g} --prefill-instances {p} --decode-instances {d} "
                     f"--kv-transfer-gb-per-s {bw / 1e9:g} --ttft-slo-ms {ttft_ms:g} --tpot-slo-ms {tpot_ms:g} "
                     + (f"--input-len-cv {asked[0]:.3g} --output-len-cv {asked[1]:.3g} " if any(asked) else "") + "--format json",
                     t)
