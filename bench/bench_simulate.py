"""Benchmark: the request-level simulator (calc.traffic.simulator) on 2,000 requests of an 8B model
at moderate load; target ≤ 1 s on the 2-core machine.

    .venv/bin/python bench/bench_simulate.py [--requests 2000] [--rate 10] [--repeat 3]

Workload: Llama-3.1-8B on one H100 SXM, vLLM defaults (chunked prefill, budget 8192), Poisson
arrivals at 10 requests/s (about half of what the engine sustains at these lengths), prompt and
output lengths lognormal with means 1024 / 256 and CV 0.5, seed 0. Reports wall and CPU time
(best of --repeat; the CPU time is less disturbed by other processes on a shared machine), engine
steps simulated, and side by side on a smaller sample the same simulation with every step timed by
a direct ``engine_step`` call instead of the precomputed StepTimer (the results must be identical;
exit status 1 otherwise). A report, not a test: nothing asserts a timing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.timing.serving import engine_step  # noqa: E402
from calc.traffic.simulator import EngineConfig, simulate  # noqa: E402
from calc.traffic.steptime import StepTimer  # noqa: E402
from calc.traffic.workload import LengthSpec, make_workload  # noqa: E402


class DirectTimer:
    """engine_step called once per step (the slow reference)."""

    def __init__(self, e):
        self.e = e

    def __call__(self, d, ctx, p, pairs, cached, logits):
        return float(engine_step(self.e, decode_tokens=float(d), decode_context_tokens_sum=ctx, prefill_tokens=float(p),
                                 prefill_attention_pairs=pairs, prefill_cached_tokens=cached,
                                 logits_tokens=float(logits)).step_s)

    def decode_run(self, batch, ctx0, steps):
        ctx = ctx0 + batch * np.arange(steps, dtype=float)
        return np.broadcast_to(engine_step(self.e, decode_tokens=float(batch), decode_context_tokens_sum=ctx,
                                           prefill_tokens=0.0, prefill_attention_pairs=0.0, prefill_cached_tokens=0.0,
                                           logits_tokens=float(batch)).step_s, ctx.shape)


def setup(requests: int, rate: float):
    est = estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), ServingConfig())
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks), block_size=16)
    w = make_workload(arrival="poisson", rate_per_s=rate, num_requests=requests,
                      input_len=LengthSpec("lognormal", 1024, cv=0.5), output_len=LengthSpec("lognormal", 256, cv=0.5),
                      seed=0)
    return est, cfg, w


def timed(fn, repeat: int):
    best_wall = best_cpu = float("inf")
    out = None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return out, best_wall, best_cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sample", type=int, default=200, help="requests for the side-by-side with direct engine_step")
    args = ap.parse_args(argv)
    est, cfg, w = setup(args.requests, args.rate)
    t0 = time.perf_counter()
    timer = StepTimer(est.engine, max_tokens=cfg.max_num_batched_tokens + cfg.max_num_seqs)
    t_timer = time.perf_counter() - t0
    r, wall, cpu = timed(lambda: simulate(est.engine, w, cfg, timer=timer), args.repeat)
    steps = r.step_s.size
    print(f"{args.requests} requests, Poisson {args.rate:g}/s, Llama-3.1-8B on H100: {steps:,} engine steps, "
          f"{r.makespan_s:.0f} s simulated, mean running {r.step_running.mean():.0f}, preemptions {r.total_preemptions}")
    print(f"simulate: wall {wall:.3f} s, CPU {cpu:.3f} s (best of {args.repeat}); StepTimer setup {t_timer:.3f} s; "
          f"{steps / cpu:,.0f} steps per CPU second")
    # side by side: StepTimer vs a direct engine_step per step, on a smaller sample
    _, cs, ws = setup(args.sample, args.rate)
    fast, _, cpu_fast = timed(lambda: simulate(est.engine, ws, cs, timer=timer), 1)
    slow, _, cpu_slow = timed(lambda: simulate(est.engine, ws, cs, timer=DirectTimer(est.engine)), 1)
    same = np.allclose(fast.ttft_s, slow.ttft_s, rtol=1e-12) and np.allclose(fast.e2e_latency_s, slow.e2e_latency_s, rtol=1e-12)
    print(f"side by side, {args.sample} requests: StepTimer CPU {cpu_fast:.3f} s vs engine_step per step "
          f"{cpu_slow:.3f} s ({cpu_slow / cpu_fast:.1f}x); results identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
