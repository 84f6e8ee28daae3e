"""The step a closed-loop request meets in flight: the simulator against calc.traffic.arrival_trains.

For one closed loop of bench/speculative_sim_vs_analytic.py, measured on the simulator's per-step
series (calc.traffic.simulator.simulate) and set beside the analytic terms of
:func:`calc.traffic.arrival_trains.step_in_flight` at the clump α that
:func:`calc.traffic.queueing.closed_loop_ttft` passes to the mixture:

* a request reaches the engine (its entry: calc.traffic.simulator.frontend_entry_s of its arrival,
  which in a closed loop is the step end that finished its client's last request) while a step is
  in flight; the step carries prompts (prefill tokens beyond the decodes' and drafts' 5·C) or not;
  its rest is the step's end less the entry;
* a clump is the requests sent at one step end; its head is the first of them (the analytic
  mixture's head, whose step in flight is ``step_in_flight``'s); the others wait behind it at the
  API server (the analytic ``_train``);
* the step in flight is the FIRST step after the head's finish (it outlasts the delay) or a later one;
* the step sequence: P(a step carries prompts | the step before did / did not).

    .venv/bin/python bench/step_in_flight_vs_sim.py                        # 8B EAGLE-3 C = 8
    .venv/bin/python bench/step_in_flight_vs_sim.py --model meta-llama/Llama-3.1-70B --spec none --concurrency 32
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import calc.traffic.arrival_trains as trains  # noqa: E402
import speculative_sim_vs_analytic as bench  # noqa: E402
from calc.traffic.queueing import closed_loop_ttft  # noqa: E402
from calc.traffic.simulator import frontend_entry_s, simulate  # noqa: E402
from calc.traffic.workload import LengthSpec, make_workload  # noqa: E402


def analytic(model, spec, C):
    """closed_loop_ttft's TTFT and the arguments it gave train_ttft_s (None: not the train path)."""
    _, gpu, tp, I, O = next(c for c in bench.CASES if c[0] == model)
    arch, g, sc, est, drafter, kv, ecfg, sim_spec = bench._setup(model, gpu, tp, I, O, spec)
    seen = {}
    orig = trains.train_ttft_s

    def spy(**kw):
        seen.update(kw)
        return orig(**kw)

    trains.train_ttft_s = spy
    try:
        a = closed_loop_ttft(est.engine, concurrency=C, output_cv=bench.CV, speculative=drafter, input_len=I,
                             output_len=O, max_num_seqs=ecfg.max_num_seqs,
                             max_num_batched_tokens=ecfg.max_num_batched_tokens, kv_capacity_tokens=kv)
    finally:
        trains.train_ttft_s = orig
    return (est, ecfg, sim_spec, sc, I, O), a, (seen or None)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-3.1-8B")
    p.add_argument("--spec", default="eagle3 k=3 a=0.7", choices=tuple(bench.SPECS))
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--measured", type=int, default=4000)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    C = args.concurrency
    (est, ecfg, sim_spec, sc, I, O), a, kw = analytic(args.model, args.spec, C)
    k = 10 * C
    w = make_workload(arrival="closed", num_requests=k + args.measured, concurrency=C,
                      input_len=LengthSpec("fixed", I), output_len=LengthSpec("lognormal", O, cv=bench.CV),
                      max_model_len=sc.max_model_len, seed=args.seed)
    r = simulate(est.engine, w, ecfg, speculative=sim_spec)
    t_api, t_req = float(est.engine.api_server_request_s), float(est.engine.request_overhead_s)
    entry, _ = frontend_entry_s(r.arrival_s, service_s=t_api, latency_s=t_req)
    st, dt = r.step_start_s, r.step_s
    end = st + dt
    prompt = r.step_prefill_tokens > 5 * C  # beyond the decodes' verify rows (≤ (k + 1)·C)
    j = np.clip(np.searchsorted(st, entry - 1e-9, side="left") - 1, 0, st.size - 1)  # started before the entry
    sel = np.arange(entry.size) >= k
    rest = np.maximum(end[j] - entry, 0.0)
    met_prompt = prompt[j] & (end[j] > entry + 1e-9)  # (an idle engine: no step in flight)
    first = np.isclose(st[j], r.arrival_s, rtol=0.0, atol=1e-9)
    rank = np.zeros(entry.size, dtype=int)
    for i in range(1, entry.size):
        rank[i] = rank[i - 1] + 1 if r.arrival_s[i] == r.arrival_s[i - 1] else 0
    head = sel & (rank == 0)
    ws = st >= r.arrival_s[k]
    P = prompt[ws]
    print(f"{args.model} {args.spec} C = {C}, {sel.sum()} requests measured (seed {args.seed}); "
          f"delay t_api + t_req = {(t_api + t_req) * 1e3:.1f} ms")
    print(f"TTFT mean / P95: simulated {r.ttft_s[sel].mean() * 1e3:.1f} / {np.percentile(r.ttft_s[sel], 95) * 1e3:.1f} ms,"
          f" analytic {float(a.ttft_s) * 1e3:.1f} / {float(a.ttft_percentile_s) * 1e3:.1f} ms")
    print(f"steps: {P.mean():.3f} carry prompts ({dt[ws][P].sum() / dt[ws].sum():.3f} of the time); "
          f"P(prompts | the step before had) {P[1:][P[:-1]].mean():.3f}, P(prompts | it had not) {P[1:][~P[:-1]].mean():.3f}")
    sim = dict(prompt=met_prompt[head].mean(), first=(first & met_prompt)[head].mean(),
               rest=rest[head].mean(), rest_prompt=rest[head & met_prompt].mean(),
               mates=1.0 - head.sum() / sel.sum())
    sim["later"] = (sim["prompt"] - sim["first"]) / max(1.0 - sim["first"], 1e-12)
    names = dict(prompt="meet a step with prompts", first="... the first step after their finish",
                 later="... a later one (given the first ended)", rest="rest of the step met (ms)",
                 rest_prompt="... of a step with prompts (ms)", mates="requests not their clump's head")
    print(f"{'clump heads':44s} simulated   analytic")
    if kw is None:
        for key, name in names.items():
            print(f"  {name:42s} {sim[key] * (1e3 if key.startswith('rest') else 1.0):9.3f}")
        print("  (not the arrival-train path: no analytic terms)")
        return
    alpha = float(np.asarray(kw["clump"]).ravel()[0])
    T = np.array([float(np.asarray(kw["step_s"](n)).ravel()[0]) for n in range(trains.MAX_PROMPTS + 1)])
    u = 1.0 + float(kw.get("input_cv", 0.0)) ** 2
    delay = float(np.asarray(kw["delay_s"]).ravel()[0])
    h = float(trains.delay_half_width_s(delay_s=delay))
    pn = trains.step_chain_pmf(step_s=T, mean=alpha / u, delay_lo_s=max(delay - h, 0.0), delay_hi_s=delay + h)
    f, rf_lo, rf_hi, lat, rl = trains.step_in_flight(step_s=T, prompt_pmf=pn, delay_s=delay, delay_half_s=h)
    rf = 0.5 * (rf_lo + rf_hi)
    ana = dict(prompt=f[1:].sum() + lat[1:].sum(), first=f[1:].sum(), rest=(f * rf).sum() + (lat * (rl + T) / 2).sum(),
               rest_prompt=((f * rf)[1:].sum() + (lat * (rl + T) / 2)[1:].sum()) / max(f[1:].sum() + lat[1:].sum(), 1e-12),
               mates=1.0 - (1.0 - np.exp(-alpha)) / alpha)
    ana["later"] = lat[1:].sum() / max(lat.sum(), 1e-12)
    for key, name in names.items():
        scale = 1e3 if key.startswith("rest") else 1.0
        print(f"  {name:42s} {sim[key] * scale:9.3f} {ana[key] * scale:10.3f}")
    print(f"analytic α (others' completions per step) {alpha:.4f}; T_n (ms) {np.round(T * 1e3, 2).tolist()}")


if __name__ == "__main__":
    main()
