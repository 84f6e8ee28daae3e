"""How often the load test's "how sure this run is" interval holds the long run (issue 19).

The load test judges a run's steady-state requests (the first quarter dropped) and gives each judged
number's 95 % interval by sectioning (calc.traffic.slo.statistic_interval, 10 consecutive sections).
This runs the page's own simulation (ui.loadtest.runs.run) of the default scenario (Llama-2-7B on
one A100 80GB, 1,792 + 256 tokens lognormal 0.5, Poisson) ``--runs`` times per case with seeds
0, 1, …, and once long (``--long`` requests in each of three seeds 100-102, pooled after their warm-ups)
as the truth; per case it prints how many intervals hold the long run's statistic, the median
half-width and the runs' own spread (the standard deviation of their statistic ÷ the truth).

    .venv/bin/python bench/interval_coverage.py [--runs 30] [--stat p95] [--long 20000]
        [--cases 1:1000,2:1000,2.5:1000,2:3000]      (rate req/s : requests a run)

Measured 2026-12-05 (P95 TTFT, 30 runs a case): see the table this prints, quoted in the README. Runs of 400
requests (30 a section) held the long run in only 21-25 of 30: the page gives no interval below 50 requests a
section (calc.traffic.slo.MIN_PER_SECTION).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.plan.percentiles import warmup_requests  # noqa: E402
from calc.traffic.slo import statistic, statistic_interval  # noqa: E402
from ui.loadtest import runs  # noqa: E402
from ui.state import default_scenario  # noqa: E402


def steady_ttft(key, s, *, rate: float, n: int, seed: int) -> np.ndarray:
    """The steady-state TTFTs (arrival order) of one load-test run of ``n`` Poisson requests at ``rate``."""
    load = runs.Load(arrival="poisson", rate_per_s=rate, cv=1.0, concurrency=16, num_requests=n, lengths="lognormal",
                     input_len=s.input_len, output_len=s.output_len, spread=0.5, seed=seed)
    x = np.asarray(runs.run(*key, load, None).ttft_s, dtype=float)[warmup_requests(n):]
    return x[np.isfinite(x)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--stat", default="p95", help="mean, p50, p90, p95, p99")
    ap.add_argument("--long", type=int, default=20_000, help="requests in each of the two long runs")
    ap.add_argument("--cases", default="1:1000,2:1000,2.5:1000,2:3000")
    args = ap.parse_args(argv)
    sc = default_scenario()
    s = sc.serving
    key = (sc.arch.model_dump_json(), sc.gpu.model_dump_json(), s.model_dump_json(), sc.efficiency.model_dump_json())
    truths: dict[float, float] = {}
    print(f"| rate (req/s) | requests a run | long-run {args.stat} TTFT | inside the interval | median half-width "
          "| runs' spread |")
    print("|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        rate, n = float(case.split(":")[0]), int(case.split(":")[1])
        if rate not in truths:
            truths[rate] = statistic(np.concatenate([steady_ttft(key, s, rate=rate, n=args.long, seed=100 + i)
                                                         for i in range(3)]), args.stat)
        truth = truths[rate]
        inside, halves, points = 0, [], []
        for seed in range(args.runs):
            x = steady_ttft(key, s, rate=rate, n=n, seed=seed)
            lo, hi = statistic_interval(x, args.stat)
            point = statistic(x, args.stat)
            inside += int(lo <= truth <= hi)
            halves.append((hi - lo) / 2 / point)
            points.append(point)
        print(f"| {rate:g} | {n:,} | {truth * 1e3:.0f} ms | {inside} / {args.runs} | {100 * np.median(halves):.1f} % "
              f"| {100 * np.std(points) / truth:.1f} % |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
