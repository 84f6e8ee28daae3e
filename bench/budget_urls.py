"""CPU seconds and peak RSS of one AppTest run of a heavy URL (issue 18's budget links).

    .venv/bin/python bench/budget_urls.py planner|load_test|load_test_seed [--timeout 600]

Prints one line: the page, CPU s (user + system of this process), wall s, peak RSS MiB, and the
first error / warning text the page showed. Run one at a time: the box has 2 cores."""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

URLS = {
    "planner": ("pages/planner.py", {
        "model": "meta-llama/Llama-3.1-405B", "pl_percentile": "p99", "pl_rate": "100000", "pl_top": "50",
        "context": "131072", "max_model_len": "131072", "output_len": "65536", "pl_ttft_ms": "600000",
        "pl_tpot_ms": "10000"}),
    "load_test": ("pages/load_test.py", {
        "model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "max_model_len": "131072", "context": "131072",
        "max_num_batched_tokens": "16", "lt_arrival": "poisson", "lt_rate": "10000", "lt_requests": "5000",
        "lt_lengths": "fixed", "lt_input_len": "100000", "lt_output_len": "16", "lt_sweep": "false"}),
    # closed loop, 1 client, 5,000 x 100k output tokens (the ~620 MiB cache entry)
    "load_test_seed": ("pages/load_test.py", {
        "model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "lt_arrival": "closed", "lt_concurrency": "1",
        "lt_requests": "5000", "lt_lengths": "fixed", "lt_input_len": "100", "lt_output_len": "100000",
        "max_model_len": "131072", "context": "131072", "lt_seed": "7", "lt_sweep": "false"}),
    # MI325X TP 8, 4,096 clients, 100k output tokens each (the 8.2 GiB inter-token-latency array)
    "load_test_mi325x": ("pages/load_test.py", {
        "model": "meta-llama/Llama-3.1-8B", "gpu": "mi325x", "tp": "8", "lt_arrival": "closed", "lt_concurrency": "4096",
        "lt_requests": "4096", "lt_lengths": "fixed", "lt_input_len": "100", "lt_output_len": "100000",
        "max_model_len": "131072", "context": "131072", "lt_sweep": "false"}),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url", choices=sorted(URLS))
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    from streamlit.testing.v1 import AppTest

    from conftest import APP
    page, query = URLS[a.url]
    at = AppTest.from_file(APP, default_timeout=a.timeout)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    at.switch_page(page).run()
    r1, w1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    msgs = [e.value for e in list(at.error) + list(at.warning)][:2]
    print(f"{a.url}: cpu {cpu:.1f} s, wall {w1 - w0:.1f} s, peak RSS {r1.ru_maxrss / 1024:.0f} MiB, "
          f"exception {bool(at.exception)}, messages {[m[:160] for m in msgs]}", flush=True)
    at.run()  # the same link again (another visitor, a rerun): the cached result
    r2 = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{a.url} rerun: cpu {(r2.ru_utime + r2.ru_stime) - (r1.ru_utime + r1.ru_stime):.1f} s", flush=True)


if __name__ == "__main__":
    main()
