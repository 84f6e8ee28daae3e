"""bench/load.py, small: a few protocol sessions against a fresh server (bounded: ~10 s of changes).

No latency is asserted (shared machines): only that the client works as a browser would (the
server runs the page, the slider change reruns it, the content changes) and that nothing fails.
"""

import asyncio
import math
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import load  # noqa: E402
from ws_session import Session  # noqa: E402


def _check(summary: dict, n: int) -> None:
    assert summary["errors"] == [], summary["errors"]
    assert summary["sessions"] == n
    for r in summary["results"]:
        assert r.first_load_s is not None, r.page
        assert r.reruns_finished >= 2, (r.page, r.reruns_finished)  # changes every 1-3 s for ~10 s
        # Every change picked a new value: the page's content differs between reruns, on both pages
        # (the frontier's changes are in its keyed charts, which carry an id like a widget's: the
        # client's digest counts them as content; see bench/ws_session.py).
        assert len(r.page_digests) >= 2, (r.page, len(r.page_digests))
    assert summary["rss_peak_mib"] > 50  # the server's own memory was read


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with load.single_server(tmp_path_factory.mktemp("load")) as (url, pids):
        yield url, pids


def test_sessions_change_the_slider_and_pages_rerun(server):
    url, pids = server
    assert load.run_blocking(load.warm_up(url)) == []
    summary = load.run_blocking(load.run_sessions(url, 3, 10, seed=1, timeout_s=60, pids=pids))
    _check(summary, 3)
    assert {r.page for r in summary["results"]} == {"memory", "frontier"}
    # The frontend's message cache is honoured: unchanged large elements come back as references.
    assert summary["refs"] > 0


@pytest.mark.parametrize("page", ["frontier", "memory"])
def test_page_digest_follows_the_value_not_the_message_flow(server, page):
    """The client's page digest is a function of what the page shows: back at a value, the same
    digest, whether the charts came whole or as references (the second reference to a cached chart
    once resolved to nothing: the client had cached the reference in place of the chart) and whether
    a placeholder filled later arrived as one message or two."""
    url, _ = server

    async def go():
        async with Session(url, page, timeout_s=60) as s:
            await s.open()
            return [await s.rerun({"concurrency": v}) for v in (8, 64, 8, 64, 8)]

    runs = load.run_blocking(go())
    for r in runs:
        assert r.finished == "FINISHED_SUCCESSFULLY" and not r.exceptions and not r.unknown_refs, r
    d = [r.digest for r in runs]
    assert d[0] == d[2] == d[4] and d[1] == d[3] and d[0] != d[1], d
    if page == "frontier":  # its charts are large enough to be cached; later runs get references
        assert all(r.refs > 0 for r in runs[2:]), [r.refs for r in runs]


def test_sessions_opening_at_once_on_a_fresh_server(tmp_path):
    """Issue 8 item 1: sessions opening together on a cold server all get their page (no import race)."""
    with load.single_server(tmp_path) as (url, pids):
        summary = load.run_blocking(load.run_sessions(url, 6, 0.5, seed=2, timeout_s=90, pids=pids))
    assert summary["errors"] == [], summary["errors"]
    assert all(r.first_load_s is not None for r in summary["results"])


def test_room_mix_runs_the_heavy_pages_in_a_worker_process(server):
    """Issue 18's mix, small: the load test and the planner (p95) change their controls beside the
    memory page; their runs go to a worker process beside the server (ui.workers)."""
    url, pids = server
    assert load.run_blocking(load.warm_up(url)) == []
    summary = load.run_blocking(load.run_sessions(url, 3, 20, seed=3, timeout_s=90, pids=pids, mix="room"))
    assert summary["errors"] == [], summary["errors"]
    for r in summary["results"]:  # a load-test change is seconds of simulation on a busy 2-core box
        assert r.first_load_s is not None and r.reruns_finished >= 1, (r.page, r.reruns_finished)
    assert set(summary["pages"]) == {"load_test", "planner", "memory/frontier"}
    assert len(load.with_children(pids)) > len(pids)


def test_a_heavy_run_stops_when_its_tab_closes(server):
    """Issue 18: no work continues after its session closes. The 405B p99 planner link (~5 s of CPU)
    runs in the worker; the tab closes after 1 s of it; the worker's CPU stops within a poll."""
    from ui.workers import _proc_cpu_s

    url, pids = server
    worker = load.with_children(pids)[len(pids):][0]

    async def go():
        s = Session(url, "planner", query_string=load.HEAVY_PLANNER.format(rate=4321), timeout_s=60)
        await s.connect()
        run = asyncio.create_task(s.run())
        cpu0, deadline = _proc_cpu_s(worker), time.monotonic() + 60
        while _proc_cpu_s(worker) < cpu0 + 1.0 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        run.cancel()
        await s.close()

    load.run_blocking(go())
    time.sleep(2.0)  # the server notices the closed socket at the page's next progress redraw
    cpu = _proc_cpu_s(worker)
    time.sleep(2.0)
    assert _proc_cpu_s(worker) - cpu < 0.3


def test_command_line_rejects_remote_and_unbounded_runs(capsys):
    for argv in (["--url", "http://example.com"], ["--duration", "100000"], ["--sessions", "1000"],
                 ["--sessions", "a,b"], ["--replicas", "99"], ["--rounds", "9"], ["--workers", "x"],
                 ["--url", "http://127.0.0.1:1", "--workers", "0,1"]):
        with pytest.raises(SystemExit) as exc:
            load.main(argv)
        assert exc.value.code == 2, argv
    err = capsys.readouterr().err
    assert "loopback" in err and "--duration" in err


def test_steady_cpu_per_change_leaves_the_first_loads_out():
    # two memory/frontier sessions, pages back at t=10 and t=12; CPU samples (t, s): 5.0 s at t=12,
    # 7.0 s at t=22; 4 changes ended after t=12 (one at t=11 is before the window):
    # (7.0 - 5.0) s / 4 = 500 ms per change
    a = load.SessionResult("memory", first_load_at=10.0, change_ends=[11.0, 13.0, 15.0])
    b = load.SessionResult("frontier", first_load_at=12.0, change_ends=[14.0, 21.0])
    heavy = load.SessionResult("load_test", first_load_at=40.0, change_ends=[])  # not waited for
    samples = [(8.0, 1.0), (12.0, 5.0), (17.0, 6.0), (22.0, 7.0)]
    assert load.steady_cpu_per_change([a, b, heavy], samples) == pytest.approx(500.0)
    assert math.isnan(load.steady_cpu_per_change([load.SessionResult("memory")], samples))  # its page never came


def test_trees_must_hold_an_app(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        load.main(["--trees", str(tmp_path), "--sessions", "1", "--duration", "1"])
    assert exc.value.code == 2 and "--trees" in capsys.readouterr().err
