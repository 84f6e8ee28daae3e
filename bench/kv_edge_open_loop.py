"""Open loops whose sequence slots are the KV pool's, against long simulations (issue 17).

calc.traffic.queueing.open_loop waits for a free sequence slot with c = min(max_num_seqs, KV pool
tokens / tokens a running sequence holds); near the pool's edge that wait was seen too large
(Llama-3.1-8B H100, 3,000 + 500 tokens lognormal 0.5, window 4,096, 4 req/s: mean TTFT +23 %). This
grid holds only KV-bound engines (c set by the pool, not max_num_seqs), fixed and lognormal 0.5 / 1.0
lengths, 30-90 % of capacity, and prints beside the outcome (mean and P95 TTFT, mean TPOT) the
mechanism, model against simulator:

* z: the peakedness Var(R)/E[R] of the running sequences, the simulator's time-weighted over its
  steps (steady window: from the first kept request's arrival to the last arrival);
* P(wait): the model's share of arrivals that wait for a slot (its Erlang C, ``slot_wait_probability``)
  and its normal tail of the batch (``slots_full_probability``), against the simulator's share of
  time the KV pool blocks admission (a request waits after the step's admission although the token
  budget and max_num_seqs had room: by PASTA the share of Poisson arrivals that meet a full pool);
* preemptions (the simulator's; the model does not follow them) and the model's own ``closed_form``
  flag (cells it says it cannot answer in closed form are marked and summarised apart).

The lengths are asked as the pages ask them: the simulator draws lognormal lengths of the asked means
cut to max_model_len (:func:`calc.traffic.workload.make_workload`), the model takes the cut lengths'
means and CVs (:func:`calc.traffic.workload.cut_lengths`) and their own P95 prompt
(:func:`calc.traffic.workload.cut_input_quantile`). Capacity: :func:`calc.timing.estimate.estimate`'s
full-batch throughput at those cut lengths (at 90 % of it Llama-3.1-8B H100 runs 67 of its 150 slots:
the throughput flattens near the full batch, so 95 % is in the grid too, summarised apart). 4,000 requests per run, the first 25 % dropped; at 80 % of
capacity and more, the mean over three seeds (one seed's sample of arrivals moves the load).

    .venv/bin/python bench/kv_edge_open_loop.py [--requests 4000] [--seeds 3] [--quick]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.traffic.queueing import open_loop  # noqa: E402
from calc.traffic.simulator import EngineConfig, simulate  # noqa: E402
from calc.traffic.workload import cut_input_quantile, cut_lengths, length_spec, make_workload  # noqa: E402

# (model, GPU, I, O, max_model_len): every one KV-bound (slots from the pool, well under max_num_seqs)
CASES = (("meta-llama/Llama-3.1-8B", "h100-sxm", 3000, 500, 4096),   # the case, c ≈ 136-166
         ("Qwen/Qwen2.5-7B", "a10g", 1500, 300, 2048),               # 24 GB, c ≈ 55-67
         ("meta-llama/Llama-2-7b-hf", "a100-40gb", 2000, 400, 4096))  # no GQA, c ≈ 20
SPREADS = (0.0, 0.5, 1.0)  # 0: fixed lengths; else lognormal CV of prompt and output
LOADS = (0.3, 0.5, 0.7, 0.8, 0.9, 0.95)  # 95 %: past the range, where the pool is reached (summarised apart)
NEAR = 0.8  # from this share of capacity on, several seeds
WARMUP = 0.25
QUICK = ((CASES[0], (0.5,), (0.9, 4.0 / 4.243)),)  # the case: 4 req/s


def measure(r, k: int, cfg: EngineConfig) -> dict:
    """The simulator's TTFT / TPOT over the requests from ``k`` on, and over its steps between the
    k-th and the last arrival: the time-weighted mean and peakedness of the running sequences and the
    time share of steps whose admission the KV pool blocked."""
    ttft, tpot = np.asarray(r.ttft_s[k:]), np.asarray(r.tpot_s[k:])
    t0, t1 = float(r.arrival_s[k]), float(np.nanmax(r.arrival_s))
    sel = (r.step_start_s >= t0) & (r.step_start_s < t1)
    w = r.step_s[sel]
    run = r.step_running[sel].astype(float)
    mean_r = float(np.sum(w * run) / np.sum(w))
    var_r = float(np.sum(w * (run - mean_r) ** 2) / np.sum(w))
    tokens = r.step_prefill_tokens[sel] + r.step_decode_tokens[sel]
    blocked = (r.step_waiting[sel] > 0) & (r.step_running[sel] < cfg.max_num_seqs) & (tokens < cfg.max_num_batched_tokens)
    return dict(ttft=ttft[np.isfinite(ttft)], tpot=tpot[np.isfinite(tpot)], running=mean_r, z=var_r / mean_r,
                p_block=float(np.sum(w[blocked]) / np.sum(w)), preempt=int(r.preemptions[k:].sum()),
                kv_use=float(np.sum(w * r.step_kv_blocks[sel]) / np.sum(w) / r.num_blocks))


def cell(model, gpu, I, O, mml, spread, load, *, n, seeds):
    arch, g = get_model(model), get_gpu(gpu)
    kind = "fixed" if spread == 0 else "lognormal"
    cut = cut_lengths(kind, I, O, spread, mml)
    sc = ServingConfig(input_len=I, output_len=O, max_model_len=mml)
    est = estimate(arch, g, sc, concurrency=np.nan)
    cap_est = estimate(arch, g, sc, concurrency=np.nan, input_len=round(cut.input_mean),
                       output_len=round(cut.output_mean), output_cv=cut.output_cv)
    cap = float(cap_est.serving.requests_per_s)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.kv_sequence_blocks), block_size=sc.block_size)
    rate = load * cap
    runs = []
    for seed in range(1, 1 + (seeds if load >= NEAR else 1)):
        w = make_workload(input_len=length_spec(kind, I, spread), output_len=length_spec(kind, O, spread),
                          max_model_len=mml, seed=seed, num_requests=n, arrival="poisson", rate_per_s=rate)
        runs.append(measure(simulate(est.engine, w, cfg), int(WARMUP * n), cfg))
    q95 = cut_input_quantile(kind, I, O, spread, mml, 0.95) if cut.cut_fraction > 0 else None
    a = open_loop(est.engine, input_len=cut.input_mean, output_len=cut.output_mean, rate_rps=rate,
                  max_num_seqs=est.max_num_seqs, max_num_batched_tokens=est.max_num_batched_tokens,
                  kv_capacity_tokens=est.memory.kv_sequence_tokens, input_cv=cut.input_cv, output_cv=cut.output_cv,
                  input_quantile_tokens=q95)
    sim = dict(mean=float(np.mean([x["ttft"].mean() for x in runs])),
               p95=float(np.mean([np.percentile(x["ttft"], 95) for x in runs])),
               tpot=float(np.mean([x["tpot"].mean() for x in runs])),
               **{key: float(np.mean([x[key] for x in runs])) for key in ("running", "z", "p_block", "kv_use")},
               preempt=int(sum(x["preempt"] for x in runs)), seeds=len(runs))
    model_ = dict(mean=float(a.ttft_s), p95=float(a.ttft_percentile_s), tpot=float(a.tpot_s), c=float(a.slots),
                  running=float(a.running), z=float(a.batch_peakedness), p_wait=float(a.slot_wait_probability),
                  p_full=float(a.slots_full_probability), w_slot=float(a.slot_wait_s),
                  closed_form=bool(a.closed_form), stable=bool(a.stable))
    return dict(model=arch.name, gpu=gpu, I=I, O=O, mml=mml, spread=spread, load=load, rate=rate,
                max_num_seqs=int(est.max_num_seqs), sim=sim, a=model_)


def pct(a: float, b: float) -> float:
    return 100.0 * (a / b - 1.0)


def row(d: dict) -> str:
    s, a = d["sim"], d["a"]
    flag = "" if a["closed_form"] else (" (not closed form)" if a["stable"] else " (past capacity)")
    lengths = "fixed" if d["spread"] == 0 else f"lognormal {d['spread']}"
    return (f"| {d['model']} | {d['gpu']} | {d['I']} / {d['O']} ({lengths}) | {d['load']:.0%}{flag} | "
            f"{d['rate']:.2f} | {a['c']:.0f} / {d['max_num_seqs']} | {s['running']:.1f} / {a['running']:.1f} | "
            f"{s['z']:.1f} / {a['z']:.1f} | {100 * s['p_block']:.2f} % | {100 * a['p_wait']:.2f} % | "
            f"{100 * a['p_full']:.2f} % | {s['preempt']} | {s['mean'] * 1e3:.0f} ms | {pct(a['mean'], s['mean']):+.1f} % | "
            f"{s['p95'] * 1e3:.0f} ms | {pct(a['p95'], s['p95']):+.1f} % | {s['tpot'] * 1e3:.1f} ms | "
            f"{pct(a['tpot'], s['tpot']):+.1f} % | {s['seeds']} |")


def summary(rows: list[dict]) -> str:
    out = []
    for name, sel in (("closed form", [d for d in rows if d["a"]["closed_form"]]),
                      ("not closed form (stable)", [d for d in rows if d["a"]["stable"] and not d["a"]["closed_form"]]),
                      ("all stable", [d for d in rows if d["a"]["stable"]]),
                      ("all stable, loads up to 90 %", [d for d in rows if d["a"]["stable"] and d["load"] <= 0.9 + 1e-9])):
        if not sel:
            out.append(f"{name}: no cells")
            continue
        parts = []
        for key, label in (("mean", "mean TTFT"), ("p95", "P95 TTFT"), ("tpot", "mean TPOT")):
            e = np.abs([pct(d["a"][key], d["sim"][key]) for d in sel])
            sgn = np.median([pct(d["a"][key], d["sim"][key]) for d in sel])
            parts.append(f"{label} median / max |error| {np.median(e):.1f} / {np.max(e):.1f} % "
                         f"(median signed {sgn:+.1f} %), within 15 %: {np.mean(e <= 15) * 100:.0f} %")
        both = np.mean([abs(pct(d["a"]["mean"], d["sim"]["mean"])) <= 15 and abs(pct(d["a"]["p95"], d["sim"]["p95"])) <= 15
                        for d in sel]) * 100
        out.append(f"{name} (n = {len(sel)}): " + "; ".join(parts) + f"; mean and P95 both within 15 %: {both:.0f} %")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--seeds", type=int, default=3, help="seeds averaged from 80 %% of capacity on")
    ap.add_argument("--quick", action="store_true", help="the issue's case only, 90 %% and 4 req/s")
    args = ap.parse_args()
    grid = ([(c, s, x) for c, ss, xs in QUICK for s in ss for x in xs] if args.quick
            else [(c, s, x) for c in CASES for s in SPREADS for x in LOADS])
    print(f"{args.requests} requests per run, first {WARMUP:.0%} dropped; from {NEAR:.0%} of capacity the mean of "
          f"{args.seeds} seeds. sim / model for the batch R and its peakedness z; P(wait): the simulator's time share of "
          "KV-blocked admission, the model's Erlang C (its W_slot's) and its normal tail of the batch.\n")
    print("| model | GPU | I / O | load | req/s | c / max_num_seqs | R sim / model | z sim / model | "
          "P(wait) sim | model | normal tail | preempt | sim TTFT mean | error | sim P95 | error | sim TPOT | error | seeds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for (model, gpu, I, O, mml), spread, load in grid:
        d = cell(model, gpu, I, O, mml, spread, load, n=args.requests, seeds=args.seeds)
        rows.append(d)
        print(row(d), flush=True)
    print()
    print(summary(rows))


if __name__ == "__main__":
    main()
