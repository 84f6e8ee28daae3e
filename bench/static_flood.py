"""A room opening the link at once, the part bench/load.py leaves out: the frontend's files.

    .venv/bin/python bench/static_flood.py --clients 50                 # one process, then nginx + 2 (deploy/)
    .venv/bin/python bench/static_flood.py --clients 10 --url http://127.0.0.1:8080 --pids 123,456

A fresh browser fetches about a hundred content-hashed files under ``/static/`` (the JS chunks, CSS
and fonts of Streamlit's frontend, ~7.7 MB) before and while its first page draws. The list is
taken once from a real first visit in headless Chromium (Playwright, ``/usr/bin/chromium`` or
$CHROMIUM_PATH): the requests it made under ``/static/``. Then ``--clients`` clients fetch all of
them at the same moment, each over 6 connections (a browser's limit per host) and with
``Accept-Encoding: gzip``. Prints, per target: wall time until every client is done, per-client
p50/max, bytes per client, and the CPU the Streamlit processes spent (what their pages wait for).
Without ``--url``: one fresh process directly, then ``deploy/run-replicas.sh`` with 2 processes
behind nginx, whose cache is cold on the first round and warm on the second. Loopback only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402  (server start/stop, loopback check)

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CONNECTIONS = 6  # Chromium's HTTP/1.1 connections per host
MAX_CLIENTS = 200
TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def first_visit_files(url: str, timeout_s: float = 90) -> list[str]:
    """Paths under /static/ that a fresh Chromium session requests until the first chart is drawn."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    seen: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.on("request", lambda r: seen.append(r.url))
            page.goto(url + "/")
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=timeout_s * 1000)
            page.wait_for_timeout(1000)
        finally:
            browser.close()
    return sorted({"/" + u.split("/", 3)[3] for u in seen if "/static/" in u})


def cpu_s(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total * TICK_S


def _get(url: str) -> int:
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return len(r.read())


def flood(url: str, files: list[str], clients: int, pids: list[int]) -> dict:
    """Every client fetches every file, all at once; returns the timings, bytes and server CPU."""

    def client(_: int) -> tuple[float, int]:
        t = time.perf_counter()
        with ThreadPoolExecutor(CONNECTIONS) as pool:
            size = sum(pool.map(lambda p: _get(url + p), files))
        return time.perf_counter() - t, size

    c0, t0 = cpu_s(pids), time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, range(clients)))
    wall, cpu = time.perf_counter() - t0, cpu_s(pids) - c0
    times = [r[0] for r in results]
    return {"wall_s": wall, "p50_s": statistics.median(times), "max_s": max(times),
            "bytes_per_client": results[0][1], "server_cpu_s": cpu}


def print_row(label: str, clients: int, files: int, r: dict) -> None:
    print(f"| {label} | {clients} | {files} | {r['wall_s']:.2f} s | {r['p50_s']:.2f} s | {r['max_s']:.2f} s | "
          f"{r['bytes_per_client'] / 1e6:.1f} MB | {r['server_cpu_s']:.2f} s |", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=50, help=f"clients at once (1 - {MAX_CLIENTS})")
    p.add_argument("--url", help="an existing server or front on a loopback address")
    p.add_argument("--pids", default="", help="with --url: comma-separated Streamlit pids whose CPU to report")
    p.add_argument("--replicas", type=int, default=2, help="processes behind nginx in the second target (0: none)")
    a = p.parse_args(argv)
    if not 1 <= a.clients <= MAX_CLIENTS:
        p.error(f"--clients must be in 1 - {MAX_CLIENTS}")
    if a.url and not load._is_loopback(a.url):
        p.error("--url must be a loopback address: this tool only loads local servers")
    print("| target | clients | files | all done | per client p50 | max | bytes per client | Streamlit CPU |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    if a.url:
        files = first_visit_files(a.url)
        pids = [int(x) for x in a.pids.split(",") if x.strip()]
        print_row(a.url, a.clients, len(files), flood(a.url, files, a.clients, pids))
        return 0
    log_dir = Path(os.environ.get("LOAD_LOG_DIR", "/tmp")) / f"static-flood-{os.getpid()}"
    log_dir.mkdir(parents=True, exist_ok=True)
    with load.single_server(log_dir) as (url, pids):
        files = first_visit_files(url)
        print_row("1 process", a.clients, len(files), flood(url, files, a.clients, pids))
    if a.replicas:
        with load.replicas_behind_nginx(a.replicas, log_dir) as (url, pids):
            for label in ("cold cache", "warm cache"):
                print_row(f"nginx + {a.replicas}, {label}", a.clients, len(files), flood(url, files, a.clients, pids))
    return 0


if __name__ == "__main__":
    sys.exit(main())
