"""Benchmark: the planner's default search (every catalog GPU x valid TP x 4 weight x 2 KV
precisions x 11 max_num_seqs) in ONE vectorized evaluation, against evaluating configurations
one by one with the scalar path the pages use (calc.timing.estimate.estimate + replicas).

    .venv/bin/python bench/bench_plan.py [--model meta-llama/Llama-3.1-8B] [--sample 200] [--repeat 5] [--page-runs 5]

The one-by-one loop runs a random sample and is extrapolated per configuration; its answers
must equal the grid's (TTFT, TPOT, requests/s, replicas), else the exit status is 1.
A report, not a test: nothing asserts a timing. Timings on a shared machine are noisy; the
ratio is measured side by side in one run. ``--page-runs N`` also times N reruns of the planner
page (AppTest, whole app: sidebar, search, table, chart serialized) with a new request rate each run.

``--compare REF`` (e.g. ``--compare main``) also times, in a detached git worktree of REF and in
this tree, alternately in fresh processes (``--rounds`` each), the default search (warm, the
request above) and the percentile check of the same request at P95 (``check_top`` on ``plan``'s
result, the CLI's default work budget), and prints each tree's best time and the ratios.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.plan.costs import replicas_for_ttft  # noqa: E402
from calc.plan.search import PlanRequest, evaluate_grid, plan  # noqa: E402
from calc.spec.catalog import get_model, list_gpus  # noqa: E402
from calc.spec.inputs import ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402

REQUEST = PlanRequest(rate_rps=40, input_len=1000, output_len=200, ttft_slo_s=1.0, tpot_slo_s=0.05)


def one_by_one(arch, gpus, grid, req, idx) -> tuple[float, float, float, float]:
    gi, ti, qi, ki, si = idx
    seqs = grid.max_num_seqs[si]
    s = ServingConfig(tensor_parallel_size=grid.tensor_parallel_sizes[ti], dtype="auto",
                      quantization=grid.quantizations[qi], kv_cache_dtype=grid.kv_cache_dtypes[ki],
                      input_len=req.input_len, output_len=req.output_len, max_model_len=req.model_len,
                      max_num_seqs=seqs, concurrency=seqs)
    r = estimate(arch, gpus[gi], s, uniform_lengths=False).serving  # the planner's spread arrivals
    x = float(r.requests_per_s) if bool(r.fits) else 0.0
    replicas, wait = replicas_for_ttft(rate_rps=req.rate_rps, capacity_rps_per_replica=x, slots=float(r.running),
                                       ttft_s=float(r.ttft_s), ttft_slo_s=req.ttft_slo_s)
    return float(r.ttft_s) + float(wait), float(r.tpot_s), x, float(replicas)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="meta-llama/Llama-3.1-8B")
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--page-runs", type=int, default=0)
    ap.add_argument("--compare", metavar="REF", default=None, help="also time REF (a git ref) beside this tree")
    ap.add_argument("--rounds", type=int, default=3, help="--compare: alternating runs per tree")
    args = ap.parse_args(argv)
    arch, gpus = get_model(args.model), list_gpus()
    plan(arch, gpus, REQUEST)  # warm-up (imports)
    import calc.plan.search as search  # noqa: PLC0415

    search._ENGINE_CACHE.clear()  # cold: the engine numbers of every (GPU, TP, weights) built
    t0 = time.perf_counter()
    plan(arch, gpus, REQUEST)
    cold_s = time.perf_counter() - t0
    times = []  # warm: a rerun with another rate or SLA reuses the memoized engine stack
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        result = plan(arch, gpus, REQUEST)
        times.append(time.perf_counter() - t0)
    grid = result.grid
    n = grid.size
    vec_s = min(times)
    rng = np.random.default_rng(args.seed)
    picks = [tuple(int(rng.integers(d)) for d in grid.fits.shape) for _ in range(args.sample)]
    t0 = time.perf_counter()
    loop = [one_by_one(arch, gpus, grid, REQUEST, i) for i in picks]
    loop_per_config_s = (time.perf_counter() - t0) / len(picks)
    mismatches = 0
    for i, (ttft, tpot, x, rep) in zip(picks, loop):
        same = (np.allclose([ttft, tpot], [grid.ttft_s[i], grid.tpot_s[i]], rtol=1e-12, equal_nan=True)
                and math.isclose(x, float(grid.requests_per_s_per_replica[i]), rel_tol=1e-12)
                and rep == float(grid.replicas[i]))
        mismatches += not same
    print(f"model {arch.id}; grid {len(grid.gpu_ids)} GPUs x TP {grid.tensor_parallel_sizes} x "
          f"{len(grid.quantizations)} weight x {len(grid.kv_cache_dtypes)} KV precisions x "
          f"{len(grid.max_num_seqs)} max_num_seqs = {n:,} configurations")
    print(f"vectorized plan(): best of {args.repeat}: {vec_s * 1e3:,.1f} ms "
          f"(median {sorted(times)[len(times) // 2] * 1e3:,.1f} ms) = {n / vec_s:,.0f} configurations/s "
          f"(ranking and reasons included; cold, building the engine stack: {cold_s * 1e3:,.1f} ms "
          f"= {n / cold_s:,.0f} configurations/s)")
    print(f"one by one (estimate() per configuration, {len(picks)} sampled): {loop_per_config_s * 1e3:,.2f} ms each "
          f"= {1 / loop_per_config_s:,.0f} configurations/s; the whole grid would take {n * loop_per_config_s:,.1f} s")
    print(f"ratio: {loop_per_config_s * n / vec_s:,.0f}x faster vectorized warm, {loop_per_config_s * n / cold_s:,.0f}x "
          f"cold (measured side by side in this run)")
    print(f"{len(picks) - mismatches} of {len(picks)} sampled configurations identical")
    if args.page_runs:
        page_reruns(args.page_runs)
    if args.compare:
        compare(args.compare, args.model, max(args.repeat, 20), args.rounds)  # the search is ~25 ms: more repeats
    return 1 if mismatches else 0


# Run in a fresh process in either tree: only names both the old and the new planner have.
_TIMING = """
import json, sys, time
sys.path.insert(0, ".")
from calc.plan.percentiles import check_top
from calc.plan.search import PlanRequest, plan
from calc.spec.catalog import get_model, list_gpus
arch, gpus = get_model(MODEL), list_gpus()
req = PlanRequest(rate_rps=40, input_len=1000, output_len=200, ttft_slo_s=1.0, tpot_slo_s=0.05)
plan(arch, gpus, req)
search = []
for _ in range(REPEAT):
    t0 = time.perf_counter(); plan(arch, gpus, req); search.append(time.perf_counter() - t0)
p95 = req.model_copy(update={"percentile": "p95"})
base = plan(arch, gpus, p95)
t0 = time.perf_counter(); r = check_top(base, arch, gpus); check = time.perf_counter() - t0
print(json.dumps({"search_s": min(search), "check_s": check, "rows": len(r.ranked),
                  "simulated": sum("(simulated" in d.slo_statistic for d in r.ranked)}))
"""


def timings(root: str, model: str, repeat: int) -> dict:
    code = _TIMING.replace("MODEL", repr(model)).replace("REPEAT", str(int(repeat)))
    out = subprocess.run([sys.executable, "-c", code], cwd=root, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def compare(ref: str, model: str, repeat: int, rounds: int) -> None:
    here = str(Path(__file__).resolve().parents[1])
    with tempfile.TemporaryDirectory() as tmp:
        base = str(Path(tmp) / "base")
        subprocess.run(["git", "worktree", "add", "--detach", "-q", base, ref], cwd=here, check=True)
        try:
            runs: dict[str, list[dict]] = {ref: [], "this tree": []}
            for _ in range(rounds):  # alternate, so both see the same machine load
                runs[ref].append(timings(base, model, repeat))
                runs["this tree"].append(timings(here, model, repeat))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", base], cwd=here, check=True)
    best = {k: {f: min(r[f] for r in v) for f in ("search_s", "check_s")} | {"rows": v[-1]["rows"],
                                                                             "simulated": v[-1]["simulated"]}
            for k, v in runs.items()}
    for k, b in best.items():
        print(f"{k:>10}: default search {b['search_s'] * 1e3:,.1f} ms; P95 check {b['check_s']:,.2f} s "
              f"({b['simulated']} of {b['rows']} rows simulated); best of {rounds}")
    a, b = best[ref], best["this tree"]
    print(f"ratio this tree / {ref}: search {b['search_s'] / a['search_s']:.2f}x, P95 check "
          f"{b['check_s'] / a['check_s']:.2f}x (side by side in this run)")


def page_reruns(runs: int) -> None:
    import warnings  # noqa: PLC0415

    warnings.filterwarnings("ignore")
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
    at.run()
    t0 = time.perf_counter()
    at.switch_page("pages/planner.py").run()
    first = time.perf_counter() - t0
    samples = []
    for k in range(runs):
        t0 = time.perf_counter()
        at.number_input(key="pl_rate").set_value(10.0 + k + 1).run()
        samples.append(time.perf_counter() - t0)
    assert not at.exception
    samples.sort()
    print(f"planner page (AppTest, whole app): first open {first * 1e3:,.0f} ms; rerun with a new rate: "
          f"median {samples[len(samples) // 2] * 1e3:,.0f} ms, max {samples[-1] * 1e3:,.0f} ms over {runs} runs")


if __name__ == "__main__":
    raise SystemExit(main())
