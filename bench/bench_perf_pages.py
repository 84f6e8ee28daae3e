"""Benchmark: CPU time of a rerun of each performance page (AppTest, no browser, no server), the
frontier with a 256-point concurrency sweep of your scenario plus four overlaid variants, against
a minimal app (bench/minimal_app.py: title, slider, one Plotly chart) measured in the same run.

    .venv/bin/python bench/bench_perf_pages.py [--runs 15] [--budget-ms 40]

For each page: a warm AppTest session, then ``--runs`` reruns with unchanged inputs and ``--runs``
reruns that move the page's own slider (a new value every run). Each sample is the process CPU time
of one rerun (``time.process_time``: every thread, so the script thread is included; less noisy than
wall time on a shared machine); median, p90 and max in ms, and the median over the minimal app's.
AppTest compiles every script on every run, which a server does once: the scripts' bytecode is
cached here as the server caches it. The server's own costs (WebSocket, its GC after each run) are
not in these numbers: ``bench/bench_pages.py`` measures a real server.

A report, not a test: the exit status is 0 either way; lines over the budget say OVER.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import streamlit.testing.v1.app_test as _app_test  # noqa: E402
import streamlit.testing.v1.local_script_runner as _runner  # noqa: E402
from streamlit.runtime.scriptrunner.script_cache import ScriptCache  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

_SCRIPT_CACHE = ScriptCache()  # compile each script once, as a server does
_app_test.ScriptCache = _runner.ScriptCache = lambda: _SCRIPT_CACHE

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from ui.perf import view as V  # noqa: E402
from ui.perf.controls import Variant, apply_variant  # noqa: E402

OVERLAYS = ["kv:fp8", "tp:2", "gpu:h100-sxm", "preset:low_latency"]
PAGES = [  # (page, query, widget key, values the widget alternates between: a slider or a number box)
    ("pages/roofline.py", {}, "rf_batch", (16, 32)),
    ("pages/frontier.py", {"overlays": OVERLAYS}, "sla_tpot_ms", (45, 50)),  # the shared SLA (ui.traffic)
    ("pages/scheduler.py", {}, "sched_budget", (448, 512)),
]


def _stats(samples: list[float]) -> tuple[float, float, float]:
    s = sorted(samples)
    return statistics.median(s), s[int(0.9 * (len(s) - 1))], s[-1]


def time_page(page: str, query: dict, key: str, values: tuple, runs: int,
              app: Path = ROOT / "app.py") -> dict[str, tuple[float, float, float]]:
    at = AppTest.from_file(str(app), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    if "overlays" in query:  # really five scenarios on the charts
        assert len(at.table[0].value) == 1 + len(query["overlays"]), at.table[0].value
    for _ in range(3):  # warm-up
        at.run()
    plain = []
    for _ in range(runs):
        t0 = time.process_time()
        at.run()
        plain.append((time.process_time() - t0) * 1e3)
    moved = []
    for i in range(runs):
        (at.number_input(key=key) if key.startswith("sla_") else at.slider(key=key)).set_value(values[i % 2])
        t0 = time.process_time()
        at.run()
        moved.append((time.process_time() - t0) * 1e3)
    assert not at.exception, at.exception
    return {"rerun": _stats(plain), "slider": _stats(moved)}


def frontier_calc_ms(runs: int) -> tuple[float, float, float, int]:
    """The frontier's calc work alone: probes + 5 vectorized sweeps + frontier functions."""
    arch, gpu, eff = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"), Efficiency()
    base = Variant("", ServingConfig(dtype="float16", input_len=1792, output_len=256, concurrency=16), gpu, True)
    variants = [base] + [apply_variant(base, tok) for tok in OVERLAYS]
    out, n = [], 0
    for _ in range(runs + 2):
        V._estimate_cached.cache_clear()  # the computation itself, not the page's memo
        t0 = time.perf_counter()
        probes = [V.probe(v, arch, eff) for v in variants]
        conc = V.sweep_concurrency(probes, 16)
        for v in variants:
            V.frontier_series(v, arch, eff, concurrency=conc, label="", color="#000000", ttft_slo_s=0.5,
                              tpot_slo_s=0.05, chosen=16)
        out.append((time.perf_counter() - t0) * 1e3)
        n = conc.shape[0]
    return (*_stats(out[2:]), n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--budget-ms", type=float, default=40.0)
    args = ap.parse_args()
    print(f"AppTest reruns, {args.runs} each: process CPU ms, median / p90 / max, and median over the minimal "
          f"app's; budget {args.budget_ms:.0f} ms (median). Shared machine: compare ratios.")
    print(f"{'page':<22}{'case':<10}{'median':>9}{'p90':>9}{'max':>9}{'x minimal':>11}")
    minimal = time_page("", {}, "concurrency", (12, 16), args.runs, app=ROOT / "bench" / "minimal_app.py")
    for case, (med, p90, mx) in minimal.items():
        print(f"{'minimal app':<22}{case:<10}{med:9.1f}{p90:9.1f}{mx:9.1f}{1:10.2f}x")
    for page, query, key, values in PAGES:
        for case, (med, p90, mx) in time_page(page, query, key, values, args.runs).items():
            flag = "OK" if med < args.budget_ms else "OVER"
            ratio = med / minimal[case][0] if minimal[case][0] > 0 else float("nan")
            print(f"{Path(page).stem:<22}{case:<10}{med:9.1f}{p90:9.1f}{mx:9.1f}{ratio:10.2f}x  {flag}")
    med, p90, mx, n = frontier_calc_ms(args.runs)
    print(f"frontier calc only: 5 scenarios x {n} concurrency points: median {med:.1f} ms, p90 {p90:.1f}, max {mx:.1f}")
    print(f"numpy {np.__version__}; cores {len(__import__('os').sched_getaffinity(0))}")


if __name__ == "__main__":
    main()
