"""This checkout against another (e.g. the session's starting commit), side by side in one run: the
million-configuration closed-loop timing of bench/bench_frontier.py and the planner's default search
of bench/bench_plan.py, each run alternately in both checkouts (fresh processes, same Python), so the
ratio holds on a shared, noisy machine where the milliseconds do not.

    git worktree add /tmp/base <commit>
    .venv/bin/python bench/against_baseline.py --baseline /tmp/base [--reps 3]

Prints the median of each figure per checkout and the ratio this / baseline (issue 17: "no slower").
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = {  # name: (script and arguments, regex of the figure in its output, unit)
    "frontier, s per million configurations": (["bench/bench_frontier.py", "--sample", "20", "--estimate-sample", "0"],
                                               r"vectorized per million:\s+([\d.]+) s", "s"),
    "planner default search, ms (best of 3)": (["bench/bench_plan.py", "--sample", "5", "--repeat", "3"],
                                               r"best of \d+: ([\d.]+) ms", "ms"),
}


def measure(checkout: Path, args: list[str], pattern: str) -> float:
    out = subprocess.run([sys.executable, *args], cwd=checkout, capture_output=True, text=True, timeout=1800)
    m = re.search(pattern, out.stdout)
    if m is None:
        raise SystemExit(f"{checkout}: no figure in the output of {' '.join(args)}:\n{out.stdout[-800:]}{out.stderr[-800:]}")
    return float(m.group(1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, type=Path, help="another checkout of this repository")
    ap.add_argument("--reps", type=int, default=3)
    opts = ap.parse_args(argv)
    print(f"| figure | this ({ROOT.name}) | baseline ({opts.baseline}) | this / baseline |\n|---|---|---|---|")
    for name, (args, pattern, unit) in FIGURES.items():
        this, base = [], []
        for rep in range(opts.reps):  # alternate which goes first
            pair = [(ROOT, this), (opts.baseline, base)]
            for checkout, into in (pair if rep % 2 == 0 else pair[::-1]):
                into.append(measure(checkout, args, pattern))
        a, b = statistics.median(this), statistics.median(base)
        print(f"| {name} | {a:.3f} {unit} | {b:.3f} {unit} | {a / b:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
