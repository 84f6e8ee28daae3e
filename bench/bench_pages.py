"""Server CPU per rerun of each page on a real ``streamlit run`` server, against a minimal app
measured side by side in the same run.

    .venv/bin/python bench/bench_pages.py [--runs 30] [--pages memory,frontier]

One server per app (this one, and ``bench/minimal_app.py``: one title, one slider, one Plotly
line chart). One session per page speaks Streamlit's WebSocket protocol (``bench/ws_session.py``,
with the frontend's message cache), moves a slider, waits for ``script_finished``; the CPU time
the server process used (user + system, from ``/proc/<pid>/stat``, all its threads) over a batch
of reruns, divided by the batch size, is one sample. Reported: median and p90 in ms per page, and the ratio of the median to
the minimal app's. CPU time rather than wall time: the machine is shared, and CPU time is what a
rerun costs the server whatever else runs (the issue's target: at most 40 ms per slider change
on the memory and frontier pages). A report, not a test: the exit status is 0 either way.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import single_server  # noqa: E402
from ws_session import Session  # noqa: E402

TARGET_MS = 40.0
# page -> (slider key, values it alternates between): the shared concurrency slider everywhere
# (what the load test moves), plus each performance page's own slider.
CASES = [
    ("memory", "concurrency", (8, 12, 16, 24)),
    ("frontier", "concurrency", (8, 12, 16, 24)),
    ("frontier", "sla_tpot_ms", (40, 45, 50, 55)),
    ("kv_table", "concurrency", (8, 12, 16, 24)),
    ("roofline", "concurrency", (8, 12, 16, 24)),
    ("roofline", "rf_batch", (8, 16, 32, 64)),
    ("scheduler", "concurrency", (8, 12, 16, 24)),
    ("scheduler", "sched_budget", (448, 512, 576, 640)),
]
MINIMAL = ("", "concurrency", (8, 12, 16, 24))
TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (all threads), from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S


async def measure(url: str, pid: int, page: str, key: str, values: tuple, runs: int, batch: int,
                  warmup: int = 3) -> list[float]:
    """CPU ms per rerun, one sample per ``batch`` consecutive reruns (the kernel counts CPU time in
    10 ms ticks: a batch of 5 resolves 2 ms)."""
    return (await measure_side_by_side([(url, pid)], page, key, values, runs, batch, warmup))[0]


async def measure_side_by_side(servers: list[tuple[str, int]], page: str, key: str, values: tuple, runs: int,
                               batch: int, warmup: int = 3) -> list[list[float]]:
    """:func:`measure` on several servers (url, pid) in lockstep: one batch on each in turn, so that
    a burst of load on the shared machine falls on all of them alike (measured one after the
    other, a case's ratio moved by ±15 % between runs on 2 busy cores, even on pages with no band)."""
    sessions = [Session(url, page) for url, _ in servers]
    try:
        for s in sessions:
            first = await s.open()
            assert not first.exceptions, first.exceptions
            for i in range(warmup):
                await s.rerun({key: values[i % len(values)]})
        samples: list[list[float]] = [[] for _ in servers]
        for b in range(max(1, runs // batch)):
            for k, (s, (_, pid)) in enumerate(zip(sessions, servers)):
                await asyncio.sleep(0.05)  # the server has sent everything of the previous rerun
                c0 = cpu_s(pid)
                for i in range(batch):
                    r = await s.rerun({key: values[(b * batch + i) % len(values)]})
                    assert not r.exceptions and r.finished in ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"), \
                        (page, r.exceptions, r.finished)
                await asyncio.sleep(0.05)
                samples[k].append((cpu_s(pid) - c0) * 1e3 / batch)
        return samples
    finally:
        for s in sessions:
            await s.close()


def _stats(xs: list[float]) -> tuple[float, float]:
    s = sorted(xs)
    return statistics.median(s), s[int(0.9 * (len(s) - 1))]


# --compare-bands: the same app without its error bands (ui.bands: CALC_BANDS=0), and the pages
# whose numbers carry bands that CASES does not move (the load test re-judges a kept simulation).
BAND_CASES = [("load_test", "sla_ttft_ms", (400, 450, 500, 550))]


def run(runs: int, pages: set[str] | None, rounds: int, batch: int = 5,
        baseline: Path | None = None, compare_bands: bool = False,
        pairs: int = 1) -> list[tuple[str, str, float, float, float, float | None, list[float]]]:
    """Rows (page, slider, median ms, p90 ms, ratio to the minimal app, baseline median ms or None,
    the app's mean CPU per rerun over the baseline's in each server pair).
    ``compare_bands``: the baseline is this app with its error bands off. The app and its baseline are
    measured in lockstep, one batch each in turn (:func:`measure_side_by_side`). ``pairs``: that many
    fresh pairs of servers, one after the other, the one started first alternating: two processes of
    the very same tree differ by a few per cent (0.96x, 4 of 4 runs of one pair, 2 cores), which one
    pair cannot tell from the change measured."""
    tmp = Path(tempfile.mkdtemp(prefix="bench_pages_"))
    cases = [c for c in CASES + (BAND_CASES if compare_bands else []) if pages is None or c[0] in pages]
    apps = {"app": (ROOT / "app.py", None)} | ({"baseline": (baseline / "app.py", None)} if baseline else {}) \
        | ({"baseline": (ROOT / "app.py", {"CALC_BANDS": "0"})} if compare_bands else {})
    baseline = baseline or (ROOT if compare_bands else None)
    samples: dict[tuple[str, str, str], list[float]] = {}
    per_pair: dict[tuple[str, str], list[float]] = {}
    minimal: list[float] = []
    for pair in range(max(1, pairs)):
        order = list(apps.items()) if pair % 2 == 0 else list(reversed(apps.items()))
        got_pair: dict[tuple[str, str, str], list[float]] = {}
        with ExitStack() as stack:
            murl, (mpid,) = stack.enter_context(single_server(tmp, app=ROOT / "bench" / "minimal_app.py", cwd=ROOT))
            servers = {name: stack.enter_context(single_server(tmp, app=path, env=env)) for name, (path, env) in order}
            for _ in range(rounds):  # interleaved rounds: every app sees the same machine load
                minimal += asyncio.run(measure(murl, mpid, *MINIMAL, runs=runs, batch=batch))
                for page, key, values in cases:  # the app and its baseline in lockstep, batch by batch
                    names = list(servers)
                    got = asyncio.run(measure_side_by_side([(url, pid) for url, (pid,) in servers.values()], page, key,
                                                           values, runs, batch))
                    for name, xs in zip(names, got):
                        got_pair.setdefault((name, page, key), []).extend(xs)
        for k, xs in got_pair.items():
            samples.setdefault(k, []).extend(xs)
        if baseline:
            for page, key, _ in cases:
                # means, not medians: a mean over all the pair's reruns resolves far below the 10 ms tick
                before = statistics.mean(got_pair[("baseline", page, key)])
                per_pair.setdefault((page, key), []).append(
                    statistics.mean(got_pair[("app", page, key)]) / before if before > 0 else float("nan"))
    base = statistics.median(minimal)
    rows = [("minimal app", "concurrency", *_stats(minimal), 1.0, None, [])]
    for page, key, _ in cases:
        med, p90 = _stats(samples[("app", page, key)])
        before = statistics.median(samples[("baseline", page, key)]) if baseline else None
        rows.append((page, key, med, p90, med / base if base > 0 else float("nan"), before, per_pair.get((page, key), [])))
    return rows


def _geomean(xs: list[float]) -> float:
    return math.exp(statistics.mean(math.log(x) for x in xs)) if xs and all(x > 0 for x in xs) else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="reruns per page per round")
    ap.add_argument("--batch", type=int, default=5, help="reruns per CPU sample")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds over all pages")
    ap.add_argument("--pages", default="", help="comma-separated page names (default: all)")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="another checkout of this app (e.g. a git worktree of an older commit), measured side by side")
    ap.add_argument("--pairs", type=int, default=1,
                    help="with --baseline or --compare-bands: fresh server pairs, one after the other (the one started "
                         "first alternating); prints the ratio of mean CPU per rerun in each pair and their geometric mean")
    ap.add_argument("--compare-bands", action="store_true",
                    help="measure the app with and without its error bands (CALC_BANDS=0) side by side")
    args = ap.parse_args()
    pages = set(args.pages.split(",")) if args.pages else None
    rows = run(args.runs, pages, args.rounds, args.batch, args.baseline, args.compare_bands, args.pairs)
    if args.compare_bands:
        args.baseline = "this app without bands (CALC_BANDS=0)"
    print(f"Server CPU per rerun (user+system, ms; median over samples of {args.batch} reruns), "
          f"{args.rounds}x{args.runs} reruns per row; target "
          f"{TARGET_MS:.0f} ms on memory and frontier. Shared machine: compare ratios, not absolutes.")
    print(f"{'page':<14}{'slider':<15}{'median':>8}{'p90':>8}{'x minimal':>11}"
          + (f"{'baseline':>10}{'x baseline':>12}" if args.baseline else "")
          + ("   per pair (geometric mean)" if args.baseline and args.pairs > 1 else ""))
    for page, key, med, p90, ratio, before, pair_ratios in rows:
        flag = "" if page not in ("memory", "frontier") else ("  ok" if med <= TARGET_MS else "  OVER")
        extra = f"{before:10.1f}{med / before:11.2f}x" if before else (" " * 22 if args.baseline else "")
        if len(pair_ratios) > 1:
            extra += "   " + " ".join(f"{r:.3f}" for r in pair_ratios) + f" ({_geomean(pair_ratios):.3f})"
        print(f"{page:<14}{key:<15}{med:8.1f}{p90:8.1f}{ratio:10.2f}x{extra}{flag}")
    if args.baseline:
        print(f"baseline: {args.baseline}" + (f"; {args.pairs} server pairs" if args.pairs > 1 else ""))
    print(f"cores {len(os.sched_getaffinity(0))}; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
