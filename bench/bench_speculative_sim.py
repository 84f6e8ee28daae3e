"""Benchmark: the simulator with speculative decoding (EAGLE-3, k = 3, acceptance 0.7) on 1,000
requests of Llama-3.1-8B on one H100 SXM at low load (Poisson 1 request/s, prompt / output
lognormal 1024 / 256, CV 0.5, seed 0), with the speculative fast-forward of pure-decode runs
(``calc.traffic.simulator._SPEC_FAST_FORWARD``) on and off, side by side: CPU seconds, steps,
loop passes (and the same run without speculation), and the means / P95 of TPOT, TTFT, ITL and E2E of both. A report, not a test.

    .venv/bin/python bench/bench_speculative_sim.py [--requests 1000] [--rate 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.spec.speculative import parse_speculative_config  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.timing.speculative import drafter_from_config  # noqa: E402
from calc.traffic import simulator  # noqa: E402
from calc.traffic.simulator import EngineConfig, simulate  # noqa: E402
from calc.traffic.workload import LengthSpec, make_workload  # noqa: E402


def setup(requests: int, rate: float, seed: int = 0):
    arch, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
    sc = ServingConfig()
    spec = parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7)
    est = estimate(arch, gpu, sc, speculative=spec)
    drafter = drafter_from_config(est.engine, spec, gpu=gpu, serving=sc, efficiency=Efficiency())
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks))
    w = make_workload(arrival="poisson", rate_per_s=rate, num_requests=requests,
                      input_len=LengthSpec("lognormal", 1024, cv=0.5), output_len=LengthSpec("lognormal", 256, cv=0.5),
                      seed=seed)
    return est.engine, w, cfg, (drafter, spec.accepted_at_position)


def run(fast: bool, requests: int, rate: float):
    e, w, cfg, sp = setup(requests, rate)
    old = getattr(simulator, "_SPEC_FAST_FORWARD", True)
    simulator._SPEC_FAST_FORWARD = fast
    try:
        c0 = time.process_time()
        r = simulate(e, w, cfg, speculative=sp)
        cpu = time.process_time() - c0
    finally:
        simulator._SPEC_FAST_FORWARD = old
    return r, cpu


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=1.0)
    a = ap.parse_args()
    rows = {}
    for fast in (False, True):
        r, cpu = run(fast, a.requests, a.rate)
        rows[fast] = r
        print(f"fast-forward {'on ' if fast else 'off'}: CPU {cpu:.2f} s, {r.step_s.size} steps, {r.passes} passes")
    e, w, cfg, _ = setup(a.requests, a.rate)
    c0 = time.process_time()
    r = simulate(e, w, cfg)
    print(f"no speculation  : CPU {time.process_time() - c0:.2f} s, {r.step_s.size} steps, {r.passes} passes")
    for name in ("tpot_s", "ttft_s", "e2e_latency_s", "itl_s"):
        x, y = (np.asarray(getattr(rows[f], name), float) for f in (False, True))
        x, y = x[np.isfinite(x)], y[np.isfinite(y)]
        print(f"{name:14s} mean {x.mean() * 1e3:9.3f} -> {y.mean() * 1e3:9.3f} ms   "
              f"P95 {np.percentile(x, 95) * 1e3:9.3f} -> {np.percentile(y, 95) * 1e3:9.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
