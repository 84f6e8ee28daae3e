"""Analytic closed loop vs the request-level simulator over a grid of models, GPUs, prompt/output
lengths and concurrencies (1 up to and past the KV wall), before and after the FCFS-wave
correction (calc.timing.serving.fcfs_wave).

    .venv/bin/python bench/sim_vs_analytic.py            # markdown table on stdout
    .venv/bin/python bench/sim_vs_analytic.py --quick    # the bounded grid tests/test_serving_wave.py holds

Simulated: C clients started together (vLLM's benchmark with --max-concurrency C, fixed lengths),
6·C requests (at least 200), means over the requests after the first C (the initial burst is a
transient the steady-state formula does not describe). "before" = the spread-arrival model
(uniform_lengths=False), "after" = the default. ok = the result's closed_form flag.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.traffic.simulator import EngineConfig, simulate  # noqa: E402
from calc.traffic.workload import LengthSpec, make_workload  # noqa: E402

MODELS = (("meta-llama/Llama-3.1-8B", "h100-sxm"), ("meta-llama/Llama-2-7b-hf", "a100-80gb"), ("Qwen/Qwen2.5-7B", "l40s"))
SHAPES = ((128, 128), (1024, 256), (2048, 128), (512, 8), (4096, 1024), (2048, 1))  # O = 1: prefill-only requests
CONCURRENCY = (1, 4, 16, 64, 256)
QUICK = ((MODELS[0], (1024, 256), (1, 16, 64, 128)), (MODELS[0], (512, 8), (4, 16)),
         (MODELS[1], (2048, 128), (1, 16)), (MODELS[2], (128, 128), (16, 256)),
         (MODELS[0], (2048, 1), (4, 64)), (MODELS[1], (173, 1), (256,)))  # one output token: W prompts per cycle


def compare(model: str, gpu: str, I: int, O: int, C: int, chunked: bool) -> dict:
    arch, g = get_model(model), get_gpu(gpu)
    sc = ServingConfig(input_len=I, output_len=O, concurrency=C, enable_chunked_prefill=chunked)
    # the engine alone (an offline engine's 2 ms hand-off, no API server): clients reach it all at once
    eff = Efficiency(api_server_request_s=0.0, request_overhead_s=2e-3)
    after = estimate(arch, g, sc, eff)
    before = estimate(arch, g, sc, eff, uniform_lengths=False).serving
    cfg = EngineConfig(max_num_seqs=int(after.max_num_seqs), max_num_batched_tokens=int(after.max_num_batched_tokens),
                       enable_chunked_prefill=chunked, num_blocks=int(after.memory.num_blocks), block_size=sc.block_size)
    w = make_workload(arrival="closed", num_requests=max(6 * C, 200), concurrency=C,
                      input_len=LengthSpec("fixed", I), output_len=LengthSpec("fixed", O))
    r = simulate(after.engine, w, cfg)
    a = after.serving
    return dict(model=arch.name, gpu=gpu, I=I, O=O, C=C, chunked=chunked,
                sim_ttft_s=float(np.mean(r.ttft_s[C:])), sim_e2e_s=float(np.mean(r.e2e_latency_s[C:])),
                before_ttft_s=float(before.ttft_s), before_e2e_s=float(before.e2e_latency_s),
                after_ttft_s=float(a.ttft_s), after_e2e_s=float(a.e2e_latency_s), wave_steps=float(a.wave_steps),
                closed_form=bool(a.closed_form), kv_wall=float(a.kv_sequences_at_mean_context), preemptions=r.total_preemptions)


def grid(quick: bool):
    if quick:
        for (model, gpu), (I, O), cs in QUICK:
            for C in cs:
                yield compare(model, gpu, I, O, C, True)
        return
    for chunked in (True, False):
        for model, gpu in MODELS:
            for I, O in SHAPES:
                for C in CONCURRENCY:
                    yield compare(model, gpu, I, O, C, chunked)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    pct = lambda a, b: f"{100 * (a / b - 1):+.0f} %"  # noqa: E731
    print("| model | GPU | chunked | I / O | C | sim TTFT | before | after | sim E2E | before | after | W | closed form | preempt |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errs_t, errs_e = [], []
    for d in grid(args.quick):
        print(f"| {d['model']} | {d['gpu']} | {'on' if d['chunked'] else 'off'} | {d['I']} / {d['O']} | {d['C']} | "
              f"{d['sim_ttft_s'] * 1e3:.0f} ms | {pct(d['before_ttft_s'], d['sim_ttft_s'])} | "
              f"{pct(d['after_ttft_s'], d['sim_ttft_s'])} | {d['sim_e2e_s']:.2f} s | {pct(d['before_e2e_s'], d['sim_e2e_s'])} | "
              f"{pct(d['after_e2e_s'], d['sim_e2e_s'])} | {d['wave_steps']:.1f} | {'yes' if d['closed_form'] else 'NO'} | "
              f"{d['preemptions']} |", flush=True)
        if d["closed_form"] and np.isfinite(d["after_ttft_s"]):  # NaN: the analytic engine does not start
            errs_t.append(abs(d["after_ttft_s"] / d["sim_ttft_s"] - 1))
            errs_e.append(abs(d["after_e2e_s"] / d["sim_e2e_s"] - 1))
    if errs_t:
        print(f"\nclosed-form rows with an estimate: {len(errs_t)}; TTFT |error| median {100 * np.median(errs_t):.1f} %, "
              f"max {100 * np.max(errs_t):.1f} %, within 15 %: {np.mean(np.array(errs_t) <= 0.15) * 100:.0f} %; "
              f"E2E |error| median {100 * np.median(errs_e):.1f} %, max {100 * np.max(errs_e):.1f} %, "
              f"within 5 %: {np.mean(np.array(errs_e) <= 0.05) * 100:.0f} %")


if __name__ == "__main__":
    main()
