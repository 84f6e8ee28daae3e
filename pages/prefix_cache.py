"""Prefix-cache page: the hit rate of a shared prefix or a multi-turn chat against the number of
distinct prefixes and the load (the KV pool the running requests leave, LRU), and TTFT against the
arrival rate with the cache and without (calc.traffic.prefix_cache; the simulator on request)."""

import numpy as np
import streamlit as st

from calc.cli.simulate import simulate_record
from calc.traffic.prefix_cache import published_checks
from ui import format as F
from ui import checks, labelled, layout, shell
from ui.prefixcache import figures as FP
from ui.prefixcache import sweeps as SW
from ui.prefixcache.controls import (PC_CACHING, PC_KIND, PC_PREFIX_LEN, PC_PREFIXES, PC_RATE, PC_SIMULATE,
                                     PC_TURNS, PREFIX_CACHE, reuse_of)
from ui.prefixcache.explain import prefix_cache_panels
from ui.state import check_query_params, render_control
from ui.why import render_panels

sc, t = shell.page()
for warning in check_query_params(PREFIX_CACHE, t):
    st.warning(warning)
s = sc.serving
layout.header(t("pc.page_title"), t("pc.intro", model=sc.arch.name, gpu=t.gpu(sc.gpu), tp=s.tensor_parallel_size,
                                    input=F.integer(s.input_len), output=F.integer(s.output_len), bs=s.block_size))


@st.cache_data(max_entries=32, show_spinner=False)
def _point(_sc_key, arch, gpu, serving, efficiency, reuse, rates):
    return SW.open_loop_with_cache(arch, gpu, serving, efficiency, reuse, np.asarray(rates))


@st.cache_data(max_entries=16, show_spinner=False)
def _simulated(options: dict):
    return simulate_record(options)


def _body() -> None:
    with layout.grid("pc", 4):
        kind = labelled.render(PC_KIND, t, lambda o: t(f"opt.pc_kind.{o}"))
        plen = render_control(PC_PREFIX_LEN, t, disabled=kind != "shared")
        nprefix = render_control(PC_PREFIXES, t, disabled=kind != "shared")
        turns = render_control(PC_TURNS, t, disabled=kind != "chat")
    with layout.grid("pc2", 3):
        rate = render_control(PC_RATE, t)
        caching = render_control(PC_CACHING, t)
        simulate = render_control(PC_SIMULATE, t)
    reuse = reuse_of(kind, plen, nprefix, turns, caching, input_len=s.input_len)
    if kind == "shared" and plen > s.input_len:
        st.info(t("pc.prefix_cut", n=F.integer(s.input_len)))
    last = s.input_len + (reuse.turns - 1) * (s.input_len + s.output_len) + s.output_len
    if reuse.turns > 1 and last > sc.resolved.max_model_len:
        st.error(t("pc.too_long", n=F.integer(last), mml=F.integer(sc.resolved.max_model_len)))
        return
    rates = tuple(sorted({float(rate)} | {float(x) for x in np.geomspace(rate / 20.0, rate * 8.0, 25)}))
    pt = _point(repr(sc.values), sc.arch, sc.gpu, s, sc.efficiency, reuse, rates)
    i = rates.index(float(rate))
    ms = lambda x: f"{F.number(float(x) * 1e3, 0)} ms"  # noqa: E731
    cards = layout.grid("pc_cards", 4)
    cards.metric(t("pc.metric.hit"), F.percent(float(pt.hit_rate[i]), 1), border=True, help=t("pc.metric.hit.help"))
    cards.metric(t("pc.metric.uncached"), t("pc.tokens", n=F.integer(float(pt.input_len[i] - pt.cached_tokens[i]))),
                 border=True)
    cards.metric(t("pc.metric.held"), t("pc.of", k=F.expected_count(float(pt.cached_items[i])),
                                        n=F.number(float(pt.items[i]), 0)), border=True, help=t("pc.metric.held.help"))
    if bool(pt.stable[i]):
        cards.metric(t("pc.metric.ttft"), ms(pt.ttft_s[i]), border=True, delta_color="inverse",
                     delta=t("pc.metric.vs_off", delta=ms(pt.ttft_s[i] - pt.ttft_off_s[i]))
                     if bool(pt.stable_off[i]) else None)
    else:
        st.warning(t("pc.unstable", rate=F.number(rate, 2)))
    sim_hit = sim_ttft = None
    if simulate and reuse.any_reuse:
        rec = _simulated(dict(model=sc.arch.id, gpu=sc.gpu.id, tensor_parallel_size=s.tensor_parallel_size,
                              input_len=s.input_len, output_len=s.output_len, rate=float(rate), arrival="poisson",
                              num_requests=1500, shared_prefix_len=reuse.shared_prefix_len,
                              num_shared_prefixes=reuse.num_shared_prefixes, turns=reuse.turns,
                              enable_prefix_caching=reuse.enable_prefix_caching))
        sim_hit = (float(pt.items[i]), float(rec["prefix_cache_hit_rate"]))
        sim_ttft = (float(rate), float(rec["ttft_s_mean"]), float(rec["ttft_s_p95"]))
        st.caption(t("pc.sim_note", rate=F.number(rate, 2), hit=F.percent(sim_hit[1], 1), ttft=F.number(sim_ttft[1] * 1e3, 0),
                     p95=F.number(sim_ttft[2] * 1e3, 0), ahit=F.percent(float(pt.hit_rate[i]), 1),
                     attft=F.number(float(pt.ttft_s[i]) * 1e3, 0), ap95=F.number(float(pt.ttft_p95_s[i]) * 1e3, 0)))
    if reuse.any_reuse:
        stable = [j for j in range(len(rates)) if bool(pt.stable[j])]
        loads = sorted({stable[0], i, stable[-1]}) if stable and bool(pt.stable[i]) else [i]  # light, chosen, heaviest
        items = SW.item_points(int(pt.items[i]))
        running = np.asarray([float(pt.running[j]) for j in loads])
        curves = SW.hit_rate_curves(reuse=reuse, input_len=s.input_len, output_len=s.output_len,
                                    block_size=s.block_size, num_blocks=pt.num_blocks, running_by_load=running,
                                    items=items)
        labels = [t("pc.fig.load", rate=F.number(rates[j], 2), r=F.number(float(pt.running[j]), 0)) for j in loads]
        held = [float(pt.cache_blocks[j]) / max(float(pt.item_blocks[j]), 1.0) for j in loads]
        layout.chart(FP.hit_rate_figure(items, curves, labels, chosen=float(pt.items[i]), held=held, t=t,
                                        chat=reuse.turns > 1, simulated=sim_hit), key="pc_hit")
        st.caption(t("pc.caption.hit"))
    layout.chart(FP.ttft_figure(pt, t, chosen_rate=float(rate), simulated=sim_ttft), key="pc_ttft")
    st.caption(t("pc.caption.ttft"))
    if reuse.any_reuse and bool(pt.stable[i]):
        st.subheader(t("why.title"))
        render_panels(prefix_cache_panels(pt, i, reuse=reuse, block_size=s.block_size, t=t), t)
    checks.render(t, key="pc_checks", title=t("pc.checks.title"), load=published_checks,
                  caption=lambda c: t("pc.checks.caption", all=checks.percent(c["median_abs_error"]), n=c["n"],
                                      medium=checks.percent(c["median_abs_error_medium"]), nm=c["n_medium"],
                                      effect=checks.percent(c["effect_median_abs_error"]), ne=c["n_effect"]))


shell.run_fragment(_body)
