"""Load test: N sessions speaking Streamlit's own WebSocket protocol, all opening at once.

    .venv/bin/python bench/load.py --sessions 1,10,25,50 --duration 60            # one fresh process per N
    .venv/bin/python bench/load.py --sessions 50 --replicas 4 --duration 60       # nginx + 4 processes (deploy/)
    .venv/bin/python bench/load.py --sessions 10 --url http://127.0.0.1:8080      # an existing server or front
    .venv/bin/python bench/load.py --sessions 50 --mix room --workers 0,1 --rounds 2   # issue 18's room, before/after
    .venv/bin/python bench/load.py --sessions 10 --heavy 0,1 --workers 0,1            # ten beside one heavy link
    .venv/bin/python bench/load.py --sessions 50 --mix room --trees /path/to/main,. --rounds 2   # two versions, alternating
    .venv/bin/python bench/load.py --sessions 50 --mix room --profile /tmp/prof        # where the UI process's CPU goes

What one session does (what a browser tab does, minus drawing; the protocol client is
bench/ws_session.py):
1. ``GET /<page>`` and ``GET /_stcore/health`` with its own cookie jar (so a cookie-affinity front such
   as ``deploy/nginx.conf`` pins it to one replica, as it pins a browser);
2. opens ``/_stcore/stream`` (sub-protocol ``streamlit``) and sends a ``BackMsg.rerun_script`` with
   the page name, like the frontend on connect; reads ``ForwardMsg``s up to ``script_finished``;
3. then, until the time is up: waits 1-3 s, sets the sidebar ``concurrency`` entry to a new value
   (a ``WidgetState`` with ``int_value``, an integer number_input's wire format), sends a rerun with the
   current page hash (from the ``navigation`` message), the query string the server last set
   (``page_info_changed``) and the hashes of the cacheable messages it holds (the frontend's
   message cache: the server then sends ``ref_hash`` references instead of repeating large charts);
   latency = rerun sent -> ``script_finished``.
Sessions alternate pages: even sessions on ``memory``, odd ones on ``frontier`` (``--mix ordinary``).
``--mix room`` is issue 18's room: 1 session in 8 on the load test (its defaults; each change is a new
simulation and rate search), 1 in 8 on the planner opened at ``sla_stat=p95`` changing its rate
(each change a new percentile check), the rest on memory/frontier. ``--heavy 1`` adds one careless
user who opens, waiting for each, issue 18's 405B p99 planner link (~5 s of CPU) and a load test of
5,000 requests x 2,000 output tokens (~6 s, inside the budget) in turn, each time at another rate or
seed (no cache helps). ``--workers 0,1`` runs each case on fresh servers
with ``LLM_CALC_WORKERS`` 0 (runs in the server process, as before the worker pool) and 1, one after
the other in each of ``--rounds`` rounds (a noisy machine drifts: compare the ratios). Latencies are
reported per page group.
Each session waits for the page before its next change (closed loop: a room of people who look at
the result before moving the slider again), so an overloaded server shows up as latency, not as a
growing queue. Widgets the session did not touch are not re-sent: the server keeps their values
(``SessionState`` compacts the previous run's widget states), as it does for a browser.

Errors: an ``exception`` element in any ForwardMsg, a script that finished with a compile error,
a connection that dropped, no ``script_finished`` within ``--timeout`` seconds (no message for
that long while a run is under way).
Server memory: resident set size of the server processes (sampled every 0.5 s; peak and at the end).
Server CPU: the UI (Streamlit) process's own CPU seconds over the case, per page run (first loads
included) and per change once every memory/frontier session has its page (:func:`steady_cpu_per_change`),
its worker processes' apart, and this client's; with the load average, since on a shared machine
CPU per change is steadier than latency. ``--trees`` runs each case on other source trees in turn
(each its own ``app.py`` and ``.streamlit/``, this Python); ``--profile DIR`` runs each server under
``bench/ui_profile.py`` (CPU by thread and activity, exact CPU per script run and per function).

Bounded: at most ``--max-sessions`` (100) sessions, ``--duration`` at most 600 s, loopback addresses
only; every server it starts is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import websockets
from ws_session import RunResult, Session  # bench/ is on sys.path (this script's folder, or the tests')

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("memory", "frontier")
CONTROL_KEY = "concurrency"  # the sidebar number entry: every page redraws with it
REFUSED = ("The server is busy", "Stopped at this server's budget", "failed in its worker")  # ui.background, EN
PAGE_CONTROL = {"planner": "rate"}  # the planner ignores the concurrency: its request rate changes the plan
ROOM = {0: ("load_test", ""), 1: ("planner", "sla_stat=p95")}  # session i % 8 -> (page, query); others PAGES
HEAVY_PLANNER = ("model=meta-llama%2FLlama-3.1-405B&sla_stat=p99&pl_top=50&context=131072&max_model_len=131072"
                 "&output_len=65536&sla_ttft_ms=600000&sla_tpot_ms=10000&rate={rate}")  # issue 18's link, any rate
# 5,000 Poisson requests x 2,000 output tokens: ~6 s of simulation, inside the 15 s budget; any seed
HEAVY_LOAD_TEST = "lt_requests=5000&output_len=2000&rate=50&lt_sweep=false&lt_seed={seed}"
CONTROL_VALUES = tuple(range(1, 257))
MAX_SESSIONS = 100
LAG_PROBE_S = 0.01  # the client's loop-lag probe (bench/load.py's own latency to notice a ready message)
MAX_DURATION_S = 600
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


@dataclass
class SessionResult:
    page: str
    first_load_s: float | None = None
    latencies_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    page_digests: set[str] = field(default_factory=set)  # distinct page contents seen after changes
    reruns_finished: int = 0
    bytes_in: int = 0  # ForwardMsg bytes received after the first load
    refs: int = 0  # ref_hash messages (cached charts the server did not resend)
    refused: int = 0  # changes answered "the server is busy" or "stopped at the budget" (ui.background)
    first_load_at: float | None = None  # monotonic time the first load ended
    change_ends: list[float] = field(default_factory=list)  # monotonic time each change ended
    session_id: str = ""  # the server's id of the session (bench/latency_trace.py joins on it)


def _is_loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in LOOPBACK


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen | None, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode}")
        time.sleep(0.1)
    raise RuntimeError(f"{url} not healthy after {timeout_s:.0f} s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def single_server(log_dir: Path, app: Path | None = None, cwd: Path | None = None, env: dict[str, str] | None = None,
                  profile_dir: Path | None = None, trace_dir: Path | None = None):
    """A fresh ``streamlit run app.py`` (or ``app``, run from ``cwd``, by default its own folder: the
    ``.streamlit/config.toml`` there applies) on a free loopback port, with ``env`` added to the
    environment; yields (url, [pid]). With ``profile_dir`` the server runs under bench/ui_profile.py's
    sampler, which writes ``ui-profile-<pid>.json`` there; with ``trace_dir`` under bench/latency_trace.py,
    which writes ``trace-<pid>.json`` there."""
    app = Path(app) if app else ROOT / "app.py"
    port = _free_port()
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "STREAMLIT_SERVER_HEADLESS": "true",
           **({"LLM_CALC_PROFILE_DIR": str(profile_dir)} if profile_dir else {}),
           **({"LLM_CALC_TRACE_DIR": str(trace_dir)} if trace_dir else {}), **(env or {})}
    launcher = ([str(Path(__file__).resolve().parent / "ui_profile.py")] if profile_dir else
                [str(Path(__file__).resolve().parent / "latency_trace.py")] if trace_dir else ["-m", "streamlit"])
    cmd = [sys.executable, *launcher, "run", str(app), "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none"]
    log = open(log_dir / f"streamlit-{port}.log", "w")
    proc = subprocess.Popen(cmd, cwd=cwd or app.parent, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc)
        yield url, [proc.pid]
    finally:
        _stop(proc)
        log.close()


@contextmanager
def replicas_behind_nginx(k: int, log_dir: Path):
    """``deploy/run-replicas.sh`` (K processes + nginx) on free loopback ports; yields (url, pids)."""
    port = _free_port()
    run_dir = log_dir / f"replicas-{k}-{port}"
    env = {**os.environ, "REPLICAS": str(k), "PORT": str(port), "RUN_DIR": str(run_dir),
           "PYTHON": sys.executable}
    log = open(log_dir / f"replicas-{k}-{port}.log", "w")
    proc = subprocess.Popen(["bash", str(ROOT / "deploy" / "run-replicas.sh")], cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, timeout_s=120)
        deadline = time.monotonic() + 60  # nginx answers as soon as one replica does: wait for all
        while not (run_dir / "ready").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("replicas did not all start")
            time.sleep(0.1)
        pids = [int(p) for p in (run_dir / "streamlit.pids").read_text().split()]
        yield url, pids
    finally:
        _stop(proc)
        log.close()


def with_children(pids: list[int]) -> list[int]:
    """The pids and their direct children (the worker processes of ui.workers)."""
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid in pids:
                kids.append(int(entry.name))
    return [*pids, *kids]


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds the pids have used so far (Linux ``/proc``; 0 where unreadable)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
    return total


def rss_bytes(pids: list[int]) -> int:
    """Resident bytes of the pids and their children (a server's worker processes included)."""
    total = 0
    for pid in with_children(pids) if pids else []:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


async def run_session(base_url: str, page: str, rng: random.Random, timeout_s: float, start_at: float,
                      end_at: float, query: str = "") -> SessionResult:
    """One session (bench/ws_session.py): opens ``page?query`` at ``start_at``, changes the page's
    control (:data:`PAGE_CONTROL`, else the sidebar concurrency) until ``end_at``."""
    result = SessionResult(page)
    s = Session(base_url, page, query_string=query, timeout_s=timeout_s)
    control = PAGE_CONTROL.get(page, CONTROL_KEY)

    def collect(r: RunResult) -> None:
        result.errors += [f"exception: {e}" for e in r.exceptions]
        result.refused += any(m in a for a in r.error_alerts for m in REFUSED)
        result.errors += [f"unknown ref_hash {h}" for h in r.unknown_refs]
        if r.finished == "FINISHED_WITH_COMPILE_ERROR":
            result.errors.append("script finished with a compile error")
        result.refs += r.refs

    try:
        await s.fetch_cookie()
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))  # all sessions open at once
        await s.connect()
        r = await s.first_run()  # a first view and the whole page, as a browser has them (ui.first_view)
        collect(r)
        result.first_load_s = r.elapsed_s
        result.first_load_at = time.monotonic()
        result.session_id = s.session_id
        if control not in s.widget_ids:
            result.errors.append(f"no {control} widget on {page}")
            return result
        value = None
        while True:
            think = rng.uniform(1.0, 3.0)
            if time.monotonic() + think >= end_at:
                break
            await asyncio.sleep(think)
            value = rng.choice([v for v in CONTROL_VALUES if v != value])
            r = await s.rerun({control: value})
            collect(r)
            result.bytes_in += r.bytes_in
            result.latencies_s.append(r.elapsed_s)
            result.change_ends.append(time.monotonic())
            result.page_digests.add(r.digest)
            result.reruns_finished += 1
    except asyncio.TimeoutError:
        collect(s.current)  # what the unfinished run showed before it stalled
        result.errors.append(f"no script_finished within {timeout_s:.0f} s")
    except websockets.ConnectionClosed as exc:
        collect(s.current)
        result.errors.append(f"connection dropped: {exc}")
    except OSError as exc:
        result.errors.append(f"connection failed: {exc}")
    except websockets.InvalidHandshake as exc:  # e.g. a front answering 429 or 502 to the upgrade
        result.errors.append(f"WebSocket refused: {exc}")
    finally:
        await s.close()
    return result


async def run_heavy(base_url: str, rng: random.Random, timeout_s: float, start_at: float, end_at: float) -> SessionResult:
    """The careless user: opens :data:`HEAVY_PLANNER` at a new rate, then :data:`HEAVY_LOAD_TEST` with
    a new seed, and so on until ``end_at``, waiting for each (each a fresh tab; its latency is the
    link's first run; a new rate or seed: no cache helps)."""
    result = SessionResult("heavy")
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    k = 0
    while time.monotonic() < end_at:
        k += 1
        page, query = (("planner", HEAVY_PLANNER.format(rate=rng.randint(1000, 100_000))) if k % 2 else
                       ("load_test", HEAVY_LOAD_TEST.format(seed=rng.randint(1, 1_000_000))))
        s = Session(base_url, page, query_string=query, timeout_s=timeout_s)
        try:
            r = await s.open()
            result.errors += [f"exception: {e}" for e in r.exceptions]
            result.refused += any(m in a for a in r.error_alerts for m in REFUSED)
            result.latencies_s.append(r.elapsed_s)
            result.reruns_finished += 1
        except (asyncio.TimeoutError, websockets.ConnectionClosed, OSError, websockets.InvalidHandshake) as exc:
            result.errors.append(f"heavy link: {type(exc).__name__}")
        finally:
            await s.close()
    return result


def session_plan(n: int, mix: str) -> list[tuple[str, str]]:
    """(page, query) of each of N sessions: ``ordinary`` alternates :data:`PAGES`; ``room`` puts
    session i on :data:`ROOM`'s page for ``i % 8`` where it has one."""
    return [ROOM[i % 8] if mix == "room" and i % 8 in ROOM else (PAGES[i % 2], "") for i in range(n)]


async def run_sessions(url: str, n: int, duration_s: float, *, seed: int = 0, timeout_s: float = 60,
                       pids: list[int] | None = None, mix: str = "ordinary", heavy: bool = False) -> dict:
    """N sessions (:func:`session_plan`) against ``url`` for ``duration_s``, with the heavy user
    beside them if ``heavy``; returns the summary (see :func:`summarize`)."""
    rng = random.Random(seed)
    start_at = time.monotonic() + 1.0 + 0.02 * n  # time for every session's HTTP requests first
    end_at = start_at + duration_s
    rngs = [random.Random(rng.random()) for _ in range(n)]
    peak = [rss_bytes(pids or [])]
    ui_cpu_at: list[tuple[float, float]] = []  # (monotonic, the server process's CPU s)

    async def sample_rss():
        while True:
            peak[0] = max(peak[0], rss_bytes(pids or []))
            ui_cpu_at.append((time.monotonic(), cpu_s(pids or [])))
            await asyncio.sleep(0.5)

    lags: list[float] = []  # this client's own loop lag: how late a 10 ms sleep wakes up

    async def sample_lag():
        while True:
            t = time.monotonic()
            await asyncio.sleep(LAG_PROBE_S)
            if t >= start_at:
                lags.append(time.monotonic() - t - LAG_PROBE_S)

    ui_cpu0 = cpu_s(pids or [])
    client0 = os.times()
    kids0 = {p: cpu_s([p]) for p in with_children(pids)[len(pids):]} if pids else {}
    sampler = asyncio.create_task(sample_rss())
    lagger = asyncio.create_task(sample_lag())
    sessions = [run_session(url, page, rngs[i], timeout_s, start_at, end_at, query)
                for i, (page, query) in enumerate(session_plan(n, mix))]
    if heavy:
        sessions.append(run_heavy(url, random.Random(rng.random()), timeout_s, start_at, end_at))
    try:
        results = await asyncio.gather(*sessions)
    finally:
        sampler.cancel()
        lagger.cancel()
    wall = max(time.monotonic() - start_at, 1e-9)
    client1 = os.times()
    ui_cpu = cpu_s(pids or []) - ui_cpu0  # the server process itself (its worker processes apart)
    steady = steady_cpu_per_change(results, ui_cpu_at + [(time.monotonic(), ui_cpu0 + ui_cpu)])
    kids = with_children(pids)[len(pids):] if pids else []
    worker_cpu = sum(cpu_s([p]) - kids0.get(p, 0.0) for p in kids)
    summary = summarize(results, wall_s=wall, rss_peak=peak[0], rss_end=rss_bytes(pids or []), ui_cpu_s=ui_cpu,
                        worker_cpu_s=worker_cpu)
    summary["steady_ui_ms_per_change"] = steady
    summary["client_cpu_s"] = (client1.user - client0.user) + (client1.system - client0.system)
    summary["client_lag_s"] = (_pct(lags, 0.5), _pct(lags, 0.95), max(lags, default=float("nan")))
    summary["start_at"] = start_at
    return summary


def steady_cpu_per_change(results: list[SessionResult], cpu_at: list[tuple[float, float]]) -> float:
    """The server process's CPU per change (ms) once every memory/frontier session has its page
    (the first loads, ~3x a change each, all at once, left out): the CPU sample taken at or after
    the last of those first loads, to the end, over the changes that ended in that window. It
    includes what the other pages' sessions cost the process meanwhile (their waits and draws)."""
    firsts = [r.first_load_at for r in results if r.page in PAGES]
    if not firsts or None in firsts or not cpu_at:
        return float("nan")
    t1 = max(firsts)
    after = [(t, c) for t, c in cpu_at if t >= t1]
    if len(after) < 2:
        return float("nan")
    changes = sum(t > after[0][0] for r in results if r.page != "heavy" for t in r.change_ends)
    return 1e3 * (after[-1][1] - after[0][1]) / changes if changes else float("nan")


def run_blocking(coro):
    """``asyncio.run(coro)`` in a thread of its own: works where this thread already runs an event
    loop (Playwright's sync API, pytest-playwright's fixtures)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def warm_up(url: str, timeout_s: float = 60) -> list[str]:
    """One session loads each page once (no changes); returns its errors."""
    errors = []
    for page in PAGES:
        now = time.monotonic()
        errors += (await run_session(url, page, random.Random(0), timeout_s, now, now)).errors
    return errors


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def page_group(page: str) -> str:
    return "memory/frontier" if page in PAGES else page


def by_page(results: list[SessionResult]) -> dict[str, list[float]]:
    """Change latencies per page group (memory and frontier together: the ordinary pages)."""
    out: dict[str, list[float]] = {}
    for r in results:
        out.setdefault(page_group(r.page), []).extend(r.latencies_s)
    return out


def last_first_load(results: list[SessionResult]) -> float:
    """Monotonic time the last memory/frontier session got its first page (inf if one never did)."""
    firsts = [r.first_load_at for r in results if r.page in PAGES]
    return float("inf") if not firsts or None in firsts else max(firsts)


def split_by_first_loads(results: list[SessionResult]) -> tuple[list[float], list[float]]:
    """Memory/frontier change latencies that ended before / after the last of their sessions' first
    loads (the first-load storm: 50 first pages, ~3x a change each, at once)."""
    t1 = last_first_load(results)
    before, after = [], []
    for r in results:
        if r.page in PAGES:
            for lat, end in zip(r.latencies_s, r.change_ends):
                (before if end < t1 else after).append(lat)
    return before, after


def client_changes(s: dict) -> dict:
    """Each change's session id, page group, send time (monotonic) and latency, for
    bench/latency_trace.py's report (it joins them with the server's trace)."""
    changes = [{"session_id": r.session_id, "page": page_group(r.page), "t_send": end - lat, "latency_s": lat}
               for r in s["results"] if r.session_id for lat, end in zip(r.latencies_s, r.change_ends)]
    return {"changes": changes, "start_at": s["start_at"], "client_lag_s": s["client_lag_s"],
            "last_first_load": last_first_load(s["results"]) - s["start_at"]}


def refused_by_page(results: list[SessionResult]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in results:
        out[page_group(r.page)] = out.get(page_group(r.page), 0) + r.refused
    return out


def summarize(results: list[SessionResult], *, wall_s: float, rss_peak: int, rss_end: int, ui_cpu_s: float = float("nan"),
              worker_cpu_s: float = float("nan")) -> dict:
    lat = [x for r in results if r.page != "heavy" for x in r.latencies_s]
    first = [r.first_load_s for r in results if r.first_load_s is not None]
    errors = [e for r in results for e in r.errors]
    return {
        "sessions": sum(r.page != "heavy" for r in results), "changes": len(lat), "changes_per_s": len(lat) / wall_s,
        "p50_s": _pct(lat, 0.5), "p95_s": _pct(lat, 0.95), "max_s": max(lat, default=float("nan")),
        "first_p50_s": _pct(first, 0.5), "first_max_s": max(first, default=float("nan")),
        "kib_per_change": sum(r.bytes_in for r in results) / max(len(lat), 1) / 1024,
        "refs": sum(r.refs for r in results),
        "errors": errors, "rss_peak_mib": rss_peak / 2**20, "rss_end_mib": rss_end / 2**20,
        "results": results, "pages": by_page(results), "refused": refused_by_page(results),
        "wall_s": wall_s, "ui_cpu_s": ui_cpu_s, "worker_cpu_s": worker_cpu_s,
        "ui_cpu_per_change_ms": 1e3 * ui_cpu_s / max(len(lat) + len(first), 1),
        "load_avg": os.getloadavg(),
    }


def _ms(x: float) -> str:
    return "—" if x != x else f"{x * 1e3:.0f} ms" if x < 1 else f"{x:.2f} s"


def print_row(label: str, s: dict) -> None:
    print(f"| {label} | {s['sessions']} | {s['changes']} | {s['changes_per_s']:.2f} | {_ms(s['p50_s'])} | "
          f"{_ms(s['p95_s'])} | {_ms(s['max_s'])} | {_ms(s['first_p50_s'])} / {_ms(s['first_max_s'])} | "
          f"{s['kib_per_change']:.0f} KiB | {len(s['errors'])} | {s['rss_peak_mib']:.0f} / {s['rss_end_mib']:.0f} MiB |",
          flush=True)
    if len(s["pages"]) > 1:
        print("    " + "; ".join(f"{g}: p50 {_ms(_pct(x, 0.5))}, p95 {_ms(_pct(x, 0.95))} ({len(x)}"
                                  + (f", {s['refused'][g]} refused" if s["refused"].get(g) else "") + ")"
                                  for g, x in s["pages"].items()), flush=True)
    before, after = split_by_first_loads(s["results"])
    if before and after:
        print(f"    memory/frontier changes ending before the last first load: p50 {_ms(_pct(before, 0.5))}, p95 "
              f"{_ms(_pct(before, 0.95))} ({len(before)}); after it: p50 {_ms(_pct(after, 0.5))}, p95 "
              f"{_ms(_pct(after, 0.95))} ({len(after)})", flush=True)
    if "client_lag_s" in s:
        print("    this client's loop lag (a 10 ms sleep's overshoot) p50 / p95 / max "
              + " / ".join(_ms(x) for x in s["client_lag_s"]), flush=True)
    if s.get("ui_cpu_s", float("nan")) == s.get("ui_cpu_s"):
        la = s["load_avg"]
        print(f"    UI process CPU {s['ui_cpu_s']:.1f} s ({s['ui_cpu_s'] / s['wall_s']:.2f} cores, "
              f"{s['ui_cpu_per_change_ms']:.1f} ms per page run; after the first loads "
              f"{s.get('steady_ui_ms_per_change', float('nan')):.1f} ms per change), workers {s['worker_cpu_s']:.1f} s, "
              f"this client {s.get('client_cpu_s', float('nan')):.1f} s; load average {la[0]:.2f} / {la[1]:.2f}",
              flush=True)
    for e in sorted(set(s["errors"]))[:10]:
        print(f"    error ({s['errors'].count(e)}x): {e}", flush=True)


def print_ratios(cases: dict[tuple, dict[str, list[float]]]) -> None:
    """Per case and page group: p50 / p95 with LLM_CALC_WORKERS=0 and with the pool, all rounds
    pooled, and the ratio (after / before)."""
    print("\n| case | page | before p50 / p95 | after p50 / p95 | after / before p50, p95 |")
    print("|---|---|---|---|---|")
    for (n, mix, heavy, w), pages in cases.items():
        if w == 0:
            continue
        before = cases.get((n, mix, heavy, 0), {})
        for g, after in pages.items():
            b = before.get(g, [])
            r50 = _pct(after, 0.5) / _pct(b, 0.5) if b else float("nan")
            r95 = _pct(after, 0.95) / _pct(b, 0.95) if b else float("nan")
            print(f"| {n} {mix}{' + heavy' if heavy else ''}, workers {w} | {g} | {_ms(_pct(b, 0.5))} / {_ms(_pct(b, 0.95))} | "
                  f"{_ms(_pct(after, 0.5))} / {_ms(_pct(after, 0.95))} | {r50:.2f}, {r95:.2f} |", flush=True)


def _ints(text: str, lo: int, hi: int) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text[:40]!r}") from None
    if not values or any(v < lo or v > hi for v in values):
        raise argparse.ArgumentTypeError(f"each value must be in {lo} - {hi}")
    return values


def _int_list(text: str) -> list[int]:
    return _ints(text, 1, MAX_SESSIONS)


def _flag_list(text: str) -> list[int]:
    return _ints(text, 0, 16)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=_int_list, default=[1, 10, 25, 50], help="comma-separated N (default 1,10,25,50)")
    p.add_argument("--duration", type=float, default=60, help=f"seconds of changes per N (<= {MAX_DURATION_S})")
    p.add_argument("--url", help="an existing server or front on a loopback address (not restarted between N)")
    p.add_argument("--pids", default="",
                   help="with --url: comma-separated server pids whose memory to report")
    p.add_argument("--replicas", type=int, default=0,
                   help="start deploy/run-replicas.sh with this many processes behind nginx (fresh per N)")
    p.add_argument("--mix", choices=("ordinary", "room"), default="ordinary",
                   help="ordinary: memory/frontier; room: 1 in 8 on the load test, 1 in 8 on the planner (p95)")
    p.add_argument("--heavy", type=_flag_list, default=[0],
                   help="comma-separated 0/1: without / with one user opening heavy planner links (default 0)")
    p.add_argument("--workers", type=_flag_list, default=None,
                   help="comma-separated LLM_CALC_WORKERS values, each on a fresh server in turn (before/after: 0,1)")
    p.add_argument("--rounds", type=int, default=1, help="repeat every case this many times, interleaved (<= 5)")
    p.add_argument("--timeout", type=float, default=60, help="seconds to wait for one script_finished")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--trees", default="",
                   help="comma-separated source trees (folders with app.py) to run each case on in turn, e.g. "
                        "/work/main,. (before/after side by side, alternating; default this tree)")
    p.add_argument("--trace", type=Path, default=None,
                   help="folder: run each server under bench/latency_trace.py (where a change's wall time goes: "
                        "`bench/latency_trace.py report DIR/trace-<pid>.json DIR/client-<pid>.json`)")
    p.add_argument("--profile", type=Path, default=None,
                   help="folder: run each server under bench/ui_profile.py's sampler (its CPU by activity; "
                        "`bench/ui_profile.py report DIR/ui-profile-*.json`)")
    a = p.parse_args(argv)
    trees = [Path(x).resolve() for x in a.trees.split(",") if x.strip()] or [None]
    if any(t is not None and not (t / "app.py").is_file() for t in trees):
        p.error("--trees: each folder must hold an app.py")
    if a.url and (a.trees or a.profile or a.trace):
        p.error("--url excludes --trees, --profile and --trace (it does not start servers)")
    if a.profile and a.trace:
        p.error("--profile and --trace each run the server under their own launcher: one at a time")
    if not 0 < a.duration <= MAX_DURATION_S:
        p.error(f"--duration must be in (0, {MAX_DURATION_S}]")
    if a.url and not _is_loopback(a.url):
        p.error("--url must be a loopback address (127.0.0.1, localhost, ::1): this tool only loads local servers")
    if a.url and (a.replicas or a.workers):
        p.error("--url excludes --replicas and --workers (it does not start servers)")
    if not 0 <= a.replicas <= 16:
        p.error("--replicas must be in 0 - 16")
    if not 1 <= a.rounds <= 5:
        p.error("--rounds must be in 1 - 5")
    pids = [int(x) for x in a.pids.split(",") if x.strip()] if a.pids else []
    target = a.url or (f"nginx + {a.replicas} replicas" if a.replicas else "one fresh process")
    print(f"# load: {target}; {a.duration:.0f} s per case; mix {a.mix}; control changed every 1-3 s after the page "
          f"is back; {os.cpu_count()} CPUs", flush=True)
    print("| target | sessions | changes | changes/s | p50 | p95 | max | first load p50 / max | sent per change | "
          "errors | server RSS peak / end |")
    print("|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    log_dir = Path(os.environ.get("LOAD_LOG_DIR", "/tmp")) / f"load-{os.getpid()}"
    log_dir.mkdir(parents=True, exist_ok=True)
    total_errors = 0
    cases: dict[tuple, dict[str, list[float]]] = {}
    for _ in range(a.rounds):
        for n in a.sessions:
            for heavy in a.heavy:
                for w, tree in [(w, tree) for w in a.workers or [None] for tree in trees]:
                    kw = dict(seed=a.seed, timeout_s=a.timeout, mix=a.mix, heavy=bool(heavy))
                    if a.url:
                        s = run_blocking(run_sessions(a.url, n, a.duration, pids=pids, **kw))
                        label = a.url
                    else:
                        env = None if w is None else {"LLM_CALC_WORKERS": str(w)}
                        app = None if tree is None else tree / "app.py"
                        for d in (a.profile, a.trace):
                            if d:
                                d.mkdir(parents=True, exist_ok=True)
                        ctx = (replicas_behind_nginx(a.replicas, log_dir) if a.replicas else
                               single_server(log_dir, app=app, env=env, profile_dir=a.profile, trace_dir=a.trace))
                        with ctx as (url, server_pids):
                            s = run_blocking(run_sessions(url, n, a.duration, pids=server_pids, **kw))
                        if a.trace and not a.replicas:
                            (a.trace / f"client-{server_pids[0]}.json").write_text(json.dumps(client_changes(s)))
                        label = f"nginx + {a.replicas}" if a.replicas else "1 process"
                        if tree is not None:
                            label += f" ({tree})"
                        if a.profile and not a.replicas:
                            label += f", profile {a.profile}/ui-profile-{server_pids[0]}.json"
                        if a.trace and not a.replicas:
                            label += f", trace {a.trace}/trace-{server_pids[0]}.json"
                    label += (" + heavy link" if heavy else "") + ("" if w is None else f", workers {w}")
                    print_row(label, s)
                    if a.trace and not a.replicas and not a.url:
                        import latency_trace  # bench/ is on sys.path

                        latency_trace.report(str(a.trace / f"trace-{server_pids[0]}.json"),
                                             str(a.trace / f"client-{server_pids[0]}.json"))
                    for g, x in s["pages"].items():
                        cases.setdefault((n, a.mix if tree is None else f"{a.mix} {tree.name}", heavy, w or 0), {}).setdefault(g, []).extend(x)
                    total_errors += len(s["errors"])
    if a.workers and 0 in a.workers and len(a.workers) > 1:
        print_ratios(cases)
    print(f"# server logs: {log_dir}")
    return 1 if total_errors else 0


if __name__ == "__main__":
    sys.exit(main())
