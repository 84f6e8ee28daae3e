"""TTFT measured under load (the calibration rows with several requests at once) against the
analytic closed loop (spread arrivals, as bench/calibration_report.py scores it; and with the FCFS
wave of identical requests) and the request-level simulator.

    .venv/bin/python bench/calibration_load.py

Rows (../shared/calibration/measurements.csv, load_shape static_batch or closed_loop, ttft_s given):
* static_batch (LMDeploy): N prompts submitted together, once. Simulated as a burst of N requests
  at t = 0 with fixed lengths (the batch itself); the mean TTFT over the N.
* closed_loop (LMDeploy profile_throughput over a ShareGPT-like dataset): C clients; lengths
  lognormal with the row's means and CV 1 (heterogeneous), 3,000 requests as in the source, the
  mean over requests after the first C.
Engine settings as the calibration report uses them (no chunked prefill; vLLM's defaults
otherwise). LMDeploy is not vLLM: its scheduler differs, so this shows what the request-level
view changes, not a fit. A report, not a test.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_report import CSV_PATH, serving_for_row  # noqa: E402
from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.traffic.simulator import EngineConfig, simulate  # noqa: E402
from calc.traffic.workload import LengthSpec, make_workload  # noqa: E402


def rows():
    with open(CSV_PATH, newline="") as fh:
        for r in csv.DictReader(fh):
            if r["ttft_s"] and r["load_shape"] in ("static_batch", "closed_loop"):
                yield r


def main() -> None:
    print("| row | load | model | I / O | N or C | measured TTFT | analytic (spread) | analytic (wave) | simulated |")
    print("|---|---|---|---|---|---|---|---|---|")
    errs = {"spread": [], "wave": [], "sim": []}
    for r in rows():
        arch, gpu, sc = get_model(r["model"]), get_gpu(r["gpu"]), serving_for_row(r)
        spread = estimate(arch, gpu, sc, uniform_lengths=False)
        wave = estimate(arch, gpu, sc, uniform_lengths=True).serving
        cfg = EngineConfig(max_num_seqs=int(spread.max_num_seqs), max_num_batched_tokens=int(spread.max_num_batched_tokens),
                           enable_chunked_prefill=sc.enable_chunked_prefill, num_blocks=int(spread.memory.num_blocks),
                           block_size=sc.block_size)
        n = int(r["concurrency"])
        if r["load_shape"] == "static_batch":
            w = make_workload(arrival="burst", num_requests=n, input_len=LengthSpec("fixed", sc.input_len),
                              output_len=LengthSpec("fixed", sc.output_len))
            sim = float(np.mean(simulate(spread.engine, w, cfg).ttft_s))
        else:
            w = make_workload(arrival="closed", concurrency=n, num_requests=3000,
                              input_len=LengthSpec("lognormal", sc.input_len, cv=1.0),
                              output_len=LengthSpec("lognormal", sc.output_len, cv=1.0), max_model_len=spread.max_model_len)
            sim = float(np.mean(simulate(spread.engine, w, cfg).ttft_s[n:]))
        meas = float(r["ttft_s"])
        vals = {"spread": float(spread.serving.ttft_s), "wave": float(wave.ttft_s), "sim": sim}
        for k, v in vals.items():
            errs[k].append(abs(v / meas - 1))
        cell = lambda v: f"{v:.3g} s ({100 * (v / meas - 1):+.0f} %)"  # noqa: E731
        print(f"| {r['id']} | {r['load_shape']} | {arch.name} TP{sc.tensor_parallel_size} | {sc.input_len} / {sc.output_len} | "
              f"{n} | {meas:.3g} s | {cell(vals['spread'])} | {cell(vals['wave'])} | {cell(vals['sim'])} |", flush=True)
    print("\nmedian |error|: " + ", ".join(f"{k} {100 * np.median(v):.0f} %" for k, v in errs.items()))


if __name__ == "__main__":
    main()
