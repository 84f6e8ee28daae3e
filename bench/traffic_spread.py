"""The shared traffic's length spread in the analytic answers, before and after (issues 17, 19).

The pages share one traffic description (ui.traffic: LENGTHS, default lognormal, LENGTH_SPREAD 0.5);
the load test draws its requests so. Before, the frontier's models took fixed lengths whatever it
said; now they take its coefficients of variation (calc.traffic.workload.length_cvs). This compares,
on the same engines, both against long simulations of lognormal lengths (both prompt and output
drawn, as the load test does):

* closed loop of C clients: the frontier's mean TTFT / TPOT (calc.timing.estimate.estimate,
  ``output_cv`` 0 before, the spread after), steady state after the first quarter of the requests;
* open loop at a share of capacity (the frontier's answer to the shared rate,
  calc.traffic.queueing.open_loop, ``input_cv`` / ``output_cv`` 0 before, the spread after):
  mean and P95 TTFT, mean TPOT, the first quarter dropped.

    .venv/bin/python bench/traffic_spread.py [--spread 0.5] [--requests 4000]
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
from calc.traffic.workload import length_cvs, length_spec, make_workload  # noqa: E402

# (model, GPU, I, O, max_num_batched_tokens or None, closed-loop clients, open-loop shares of capacity)
CASES = (("meta-llama/Llama-3.1-8B", "h100-sxm", 1024, 256, None, (8, 64, 128), (0.3, 0.6, 0.9)),
         ("meta-llama/Llama-3.1-8B", "h100-sxm", 2500, 256, 1024, (8, 32, 64), (0.3, 0.6, 0.85)),
         ("meta-llama/Llama-2-7b-hf", "a100-80gb", 2048, 128, None, (4, 16, 32), (0.3, 0.6, 0.9)),
         ("Qwen/Qwen2.5-7B", "a100-80gb", 2048, 128, None, (8, 32), (0.3, 0.6, 0.9)))
WARMUP = 0.25


def _setup(model, gpu, I, O, budget, spread):
    arch, g = get_model(model), get_gpu(gpu)
    mml = min(int(arch.max_position_embeddings), 8 * (I + O))  # room for the lognormal tail
    sc = ServingConfig(input_len=I, output_len=O, max_model_len=mml, max_num_batched_tokens=budget)
    est = estimate(arch, g, sc, concurrency=np.nan)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.kv_sequence_blocks), block_size=sc.block_size)
    return arch, g, sc, est, cfg, mml


def _sim(est, cfg, mml, I, O, spread, n, **arrival):
    w = make_workload(input_len=length_spec("lognormal", I, spread), output_len=length_spec("lognormal", O, spread),
                      max_model_len=mml, seed=1, num_requests=n, **arrival)
    r = simulate(est.engine, w, cfg)
    k = int(WARMUP * n)
    ttft, tpot = np.asarray(r.ttft_s[k:]), np.asarray(r.tpot_s[k:])
    # the mean lengths after the cut at max_model_len (as the load test's analytic row and --shapes take them)
    lengths = round(float(np.mean(r.input_len))), round(float(np.mean(r.output_len)))
    return ttft[np.isfinite(ttft)], tpot[np.isfinite(tpot)], int(r.total_preemptions), lengths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spread", type=float, default=0.5, help="lognormal CV of both lengths (the shared default 0.5)")
    ap.add_argument("--requests", type=int, default=4000)
    args = ap.parse_args()
    s, n = args.spread, args.requests
    in_cv, out_cv = length_cvs("lognormal", s)
    pct = lambda a, b: 100.0 * (a / b - 1.0)  # noqa: E731
    errs = {"closed": [], "open_mean": [], "open_p95": []}
    print(f"lognormal lengths, CV {s} (prompt and output); {n} requests, first {WARMUP:.0%} dropped\n")
    print("| model | GPU | I / O | budget | load | sim TTFT mean | P95 | before | after | sim TPOT | before | after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for model, gpu, I, O, budget, cs, loads in CASES:
        arch, g, sc, est, cfg, mml = _setup(model, gpu, I, O, budget, s)
        name, b = arch.name, int(est.max_num_batched_tokens)
        for C in cs:
            ttft, tpot, pre, (i_m, o_m) = _sim(est, cfg, mml, I, O, s, max(n, 30 * C), arrival="closed", concurrency=C)
            x = [estimate(arch, g, sc, concurrency=C, input_len=i_m, output_len=o_m, output_cv=cv).serving
                 for cv in (0.0, out_cv)]
            m, t = ttft.mean(), tpot.mean()
            ok = all(bool(a.closed_form) for a in x) and not pre
            if ok:
                errs["closed"].append((abs(pct(float(x[0].ttft_s), m)), abs(pct(float(x[1].ttft_s), m))))
            print(f"| {name} | {gpu} | {I} / {O} | {b} | C = {C}{'' if ok else ' (sim regime)'} | {m * 1e3:.0f} ms | "
                  f"{np.percentile(ttft, 95) * 1e3:.0f} ms | {pct(float(x[0].ttft_s), m):+.1f} % | "
                  f"{pct(float(x[1].ttft_s), m):+.1f} % | {t * 1e3:.1f} ms | {pct(float(x[0].tpot_s), t):+.1f} % | "
                  f"{pct(float(x[1].tpot_s), t):+.1f} % |", flush=True)
        cap = float(est.serving.requests_per_s)
        for share in loads:
            ttft, tpot, pre, (i_m, o_m) = _sim(est, cfg, mml, I, O, s, n, arrival="poisson", rate_per_s=share * cap)
            kw = dict(input_len=i_m, output_len=o_m, rate_rps=share * cap, max_num_seqs=est.max_num_seqs,
                      max_num_batched_tokens=est.max_num_batched_tokens, kv_capacity_tokens=est.memory.kv_sequence_tokens)
            x = [open_loop(est.engine, input_cv=ci, output_cv=co, **kw) for ci, co in ((0.0, 0.0), (in_cv, out_cv))]
            m, q, t = ttft.mean(), np.percentile(ttft, 95), tpot.mean()
            ok = all(bool(a.closed_form) and bool(a.stable) for a in x) and not pre
            if ok:
                errs["open_mean"].append((abs(pct(float(x[0].ttft_s), m)), abs(pct(float(x[1].ttft_s), m))))
                errs["open_p95"].append((abs(pct(float(x[0].ttft_percentile_s), q)),
                                         abs(pct(float(x[1].ttft_percentile_s), q))))
            print(f"| {name} | {gpu} | {I} / {O} | {b} | {share:.0%} of capacity{'' if ok else ' (sim regime)'} | "
                  f"{m * 1e3:.0f} ms | {q * 1e3:.0f} ms | mean {pct(float(x[0].ttft_s), m):+.1f} %, "
                  f"P95 {pct(float(x[0].ttft_percentile_s), q):+.1f} % | mean {pct(float(x[1].ttft_s), m):+.1f} %, "
                  f"P95 {pct(float(x[1].ttft_percentile_s), q):+.1f} % | {t * 1e3:.1f} ms | "
                  f"{pct(float(x[0].tpot_s), t):+.1f} % | {pct(float(x[1].tpot_s), t):+.1f} % |", flush=True)
    print()
    for key, v in errs.items():
        a = np.asarray(v)
        if a.size:
            print(f"{key}: |TTFT error| median {np.median(a[:, 0]):.1f} → {np.median(a[:, 1]):.1f} %, "
                  f"max {a[:, 0].max():.1f} → {a[:, 1].max():.1f} %, within 15 %: {np.mean(a[:, 0] <= 15) * 100:.0f} → "
                  f"{np.mean(a[:, 1] <= 15) * 100:.0f} % (n = {len(a)})")


if __name__ == "__main__":
    main()
