"""Resident memory that four distinct heavy load-test links leave behind on one server (issue 18).

    .venv/bin/python bench/heavy_links_rss.py [--links 4] [--timeout 300] [--trees /work/main,.]

Starts a fresh server (``bench/load.py``'s ``single_server``: the app as deployed, its worker
processes included), opens the landing page once to warm it, then opens one kind of heavy load-test
link (:data:`LINKS`: issue 18's memory link, a closed loop of 1 client, 5,000 requests of 100 in /
100,000 out tokens; its CPU link, 5,000 Poisson requests of 100k-token prompts at 10,000 req/s; and
the heaviest run the room admits, ``bench/load.py``'s careless user) once per seed 1..N, one tab
after the other, each tab closed when its run ends; each kind on a fresh server. It samples the resident memory of the server and its children
(:func:`bench.load.rss_bytes`) every 0.2 s and prints, per tree: the RSS at rest, the peak while the
links ran, the RSS 10 s after the last tab closed, and the growth (end − rest). The issue's target:
four such links leave ≤ 400 MiB more RSS. Each link's first run is printed with what it showed
(a refusal by the per-request budget is an answer too: the link is bounded).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench.budget_urls import URLS  # noqa: E402
from bench.load import HEAVY_LOAD_TEST, rss_bytes, single_server  # noqa: E402
from bench.ws_session import Session  # noqa: E402

MIB = 2 ** 20
SETTLE_S = 10.0


# issue 18's memory link (refused up front by the step budget), its CPU link, and the heaviest run
# the room mix admits (bench/load.py's careless user: ~6 s of simulation inside the 15 s budget)
LINKS = {"memory": URLS["load_test_seed"][1], "cpu": URLS["load_test"][1],
         "admitted": dict(p.split("=", 1) for p in HEAVY_LOAD_TEST.split("&") if not p.startswith("lt_seed"))}


def link_query(kind: str, seed: int) -> str:
    """One of :data:`LINKS` with its own seed (a new seed: no cache entry to share)."""
    return urlencode({**LINKS[kind], "lt_seed": str(seed)})


async def open_link(url: str, page: str, query: str, timeout_s: float) -> str:
    """Open one tab on ``page?query``, wait for its first run, close it; what it showed, in a line."""
    async with Session(url, page, query_string=query, timeout_s=timeout_s) as s:
        t0 = time.monotonic()
        r = await s.open()
        shown = (r.exceptions or r.error_alerts or ["ok"])[0][:90]
        return f"{time.monotonic() - t0:6.1f} s  {r.finished}  {shown}"


def measure(tree: Path, kind: str, links: int, timeout_s: float) -> dict:
    """Rest / peak / end RSS (bytes) of one fresh server of ``tree`` around ``links`` heavy links."""
    with tempfile.TemporaryDirectory() as log_dir, single_server(Path(log_dir), app=tree / "app.py") as (url, pids):
        asyncio.run(open_link(url, "", "", timeout_s))  # warm: imports, the first page
        time.sleep(2.0)
        rest = rss_bytes(pids)
        peak, stop = [rest], threading.Event()

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], rss_bytes(pids))
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        for seed in range(1, links + 1):
            print(f"  link seed {seed}: {asyncio.run(open_link(url, 'load_test', link_query(kind, seed), timeout_s))}",
                  flush=True)
        time.sleep(SETTLE_S)
        stop.set()
        sampler.join()
        end = rss_bytes(pids)
    return {"rest": rest, "peak": max(peak[0], end), "end": end}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--links", type=int, default=4, help="distinct heavy links (1..8)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for one link's run")
    p.add_argument("--kinds", default="memory,cpu,admitted",
                   help="comma-separated links of LINKS, each on a fresh server")
    p.add_argument("--trees", default=str(ROOT), help="comma-separated source trees (folders with app.py)")
    a = p.parse_args(argv)
    if not 1 <= a.links <= 8:
        p.error("--links: 1..8")
    kinds = a.kinds.split(",")
    if any(k not in LINKS for k in kinds):
        p.error(f"--kinds: each one of {', '.join(LINKS)}")
    for kind in kinds:
        for tree in (Path(t).resolve() for t in a.trees.split(",")):
            if not (tree / "app.py").is_file():
                p.error(f"--trees: no app.py in {tree}")
            print(f"{tree} ({kind} link x {a.links}):", flush=True)
            m = measure(tree, kind, a.links, a.timeout)
            print(f"  RSS at rest {m['rest'] / MIB:.0f} MiB, peak {m['peak'] / MIB:.0f} MiB, "
                  f"{SETTLE_S:.0f} s after the last tab {m['end'] / MIB:.0f} MiB: "
                  f"growth {(m['end'] - m['rest']) / MIB:+.0f} MiB (peak {(m['peak'] - m['rest']) / MIB:+.0f})",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
