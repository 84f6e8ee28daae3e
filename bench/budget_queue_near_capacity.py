"""Mean and P95 TTFT of a closed loop whose prompts queue for the token budget, near its capacity:
the analytic model (``estimate``, ``closed_loop_ttft``) against long simulations (3 seeds of 30·C
requests, the first 10·C dropped). Llama-3.1-8B on an H100, 2,500-token prompts, lognormal outputs of
mean 256 and CV 0.5, max_num_batched_tokens 1,024, C = 48 … 95 clients (issue #17's P95 check).

    PYTHONPATH=. .venv/bin/python bench/budget_queue_near_capacity.py
"""

from __future__ import annotations

import numpy as np

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import ServingConfig
from calc.timing.estimate import estimate
from calc.traffic.queueing import closed_loop_ttft
from calc.traffic.simulator import EngineConfig, simulate
from calc.traffic.workload import LengthSpec, make_workload

MODEL, GPU = "meta-llama/Llama-3.1-8B", "h100-sxm"
INPUT_LEN, OUTPUT_LEN, OUTPUT_CV, BUDGET = 2500, 256, 0.5, 1024
CLIENTS, SEEDS = (48, 64, 80, 90, 95), (1, 2, 3)


def main() -> None:
    arch, gpu = get_model(MODEL), get_gpu(GPU)
    I, O = INPUT_LEN, OUTPUT_LEN
    for C in CLIENTS:
        sc = ServingConfig(input_len=I, output_len=O, concurrency=C, max_model_len=I + 4 * O,
                           max_num_batched_tokens=BUDGET)
        est = estimate(arch, gpu, sc, uniform_lengths=False, output_cv=OUTPUT_CV)
        p = closed_loop_ttft(est.engine, input_len=I, output_len=O, concurrency=C, max_num_seqs=int(est.max_num_seqs),
                             max_num_batched_tokens=BUDGET, kv_capacity_tokens=est.memory.kv_sequence_tokens,
                             output_cv=OUTPUT_CV)
        cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                           enable_chunked_prefill=True, num_blocks=int(est.memory.kv_sequence_blocks),
                           block_size=sc.block_size)
        means, p95s = [], []
        for seed in SEEDS:
            w = make_workload(arrival="closed", num_requests=30 * C, concurrency=C, input_len=LengthSpec("fixed", I),
                              output_len=LengthSpec("lognormal", O, cv=OUTPUT_CV), max_model_len=sc.max_model_len,
                              seed=seed)
            t = simulate(est.engine, w, cfg).ttft_s[10 * C:]  # warm-up dropped
            means.append(t.mean())
            p95s.append(np.percentile(t, 95))
        sm, sq = np.mean(means), np.mean(p95s)
        mean_a, p95_a = float(est.serving.ttft_s), float(p.ttft_percentile_s)
        print(f"C={C} simulated mean {sm * 1e3:.0f} ms ({min(means) * 1e3:.0f}-{max(means) * 1e3:.0f}) "
              f"P95 {sq * 1e3:.0f} ({min(p95s) * 1e3:.0f}-{max(p95s) * 1e3:.0f}) | estimate mean {mean_a * 1e3:.0f} "
              f"({100 * (mean_a / sm - 1):+.1f} %), closed_loop_ttft P95 {p95_a * 1e3:.0f} ({100 * (p95_a / sq - 1):+.1f} %), "
              f"budget load {float(est.serving.budget_queue_load):.3f}", flush=True)


if __name__ == "__main__":
    main()
