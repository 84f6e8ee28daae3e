"""Script rerun time of each page in AppTest (no browser): median of warm reruns.

Usage: .venv/bin/python bench/bench_pages.py [--runs 20]
Target: under 100 ms per rerun. A rerun is what a slider move costs on the server (the browser's
own rendering comes on top). Each rerun changes a shared control so no element is cached.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from ui.shell import PAGES  # noqa: E402

TARGET_S = 0.100


def bench(page: str, runs: int) -> tuple[float, float, float]:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    if page != PAGES[0].path:
        at.switch_page(page).run()
    for _ in range(3):  # warm-up: imports, catalog caches
        at.run()
    times = []
    for i in range(runs):
        at.slider(key="concurrency").set_value(8 + i % 32)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
    return statistics.median(times), min(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print(f"{'page':<24} {'median':>9} {'min':>9} {'max':>9}  target {TARGET_S * 1e3:.0f} ms")
    for spec in PAGES:
        med, lo, hi = bench(spec.path, max(args.runs, 10))
        flag = "ok" if med < TARGET_S else "SLOW"
        print(f"{spec.path:<24} {med * 1e3:7.1f}ms {lo * 1e3:7.1f}ms {hi * 1e3:7.1f}ms  {flag}")


if __name__ == "__main__":
    main()
