"""Where a change's wall time goes in the server: timestamps, not CPU.

    .venv/bin/python bench/load.py --sessions 50 --mix room --duration 60 --trace /tmp/trace   # traces each server
    .venv/bin/python bench/latency_trace.py report /tmp/trace/trace-<pid>.json /tmp/trace/client-<pid>.json

Run as the server's launcher (``python bench/latency_trace.py run app.py ...``, what ``bench/load.py
--trace DIR`` does). It records, on the system-wide monotonic clock (``time.monotonic``, the clock
the load test's client uses too, so the two files line up), per session:

- ``recv``: the rerun's ``BackMsg`` handed to the runtime by the WebSocket endpoint (event loop);
- ``start`` / ``end``: the script thread's ``_run_script`` begins / returns (with its thread CPU);
- ``handled``: the loop handles the script thread's "stopped" event (the run's messages before it
  reached the loop through the same hand-off, in order);
- ``queued``: the runtime's sender loop hands that run's ``script_finished`` to the WebSocket
  client (``Runtime._send_message``); the client's own task then writes it to the socket.

and, on the event loop's thread, every ``select`` of the selector (``epoll``) asked for with a
zero timeout (the loop had ready callbacks): such a call returns at once, so whatever wall time it
takes is the loop thread waiting to take the GIL back from a script thread (CPython releases the
GIL around every ``epoll_wait``; a thread that wants it back waits up to ``sys.getswitchinterval()``
before it asks the holder to drop it). Counted: calls, their wall time, and the loop thread's
iterations. The file is written every :data:`DUMP_EVERY_S` and at exit.

``report TRACE CLIENT`` joins each change the client timed (``bench/load.py`` writes its send time,
latency and session id) with the server's events of that session and splits the latency into:
client send -> ``recv`` (the loop reading it), ``recv`` -> ``start`` (the script runner starting:
thread start, a previous run's stop), ``start`` -> ``end`` (the page's run: its CPU, its time
runnable but waiting for a core, the rest: waiting for the GIL or a lock), ``end`` -> ``handled``
(hand_off: the loop taking the run's last events), ``handled`` -> ``queued`` (flush: the runtime's
sender loop reaching the session), ``queued`` -> client receive (deliver: the session's socket
writer, on the same loop, and the client reading it); by page group and by time since the case
started.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time
from collections import defaultdict

DUMP_EVERY_S = 5.0
EVENTS: list[tuple] = []  # (kind, session id, monotonic s, extra)
LOOP = {"thread_starts": 0, "thread_start_wall_s": 0.0, "tid": 0, "t0": 0.0, "sched0": (0.0, 0.0), "idle_s": 0.0, "iterations": 0, "select0": 0, "select0_wall_s": 0.0, "select0_over_1ms": 0, "select0_hist_ms": defaultdict(int),
        "thread_cpu_s": 0.0, "wall_s": 0.0}
_OUT = ""


def _schedstat(path: str = "/proc/thread-self/schedstat") -> tuple[float, float]:
    """(CPU s, s runnable but waiting for a core) of a thread, from the kernel's scheduler statistics;
    a thread that waits for the GIL sleeps on a condition variable: in neither."""
    try:
        with open(path) as f:
            cpu_ns, wait_ns = f.read().split()[:2]
        return int(cpu_ns) / 1e9, int(wait_ns) / 1e9
    except (OSError, ValueError):
        return float("nan"), float("nan")


def _dump() -> None:
    if not _OUT:
        return
    loop = {**LOOP, "select0_hist_ms": dict(LOOP["select0_hist_ms"])}
    if LOOP["tid"]:  # the loop thread since it was first seen: CPU, waiting for a core, wall
        cpu, runq = _schedstat(f"/proc/self/task/{LOOP['tid']}/schedstat")
        loop.update(cpu_s=cpu - LOOP["sched0"][0], runq_s=runq - LOOP["sched0"][1], wall_s=time.monotonic() - LOOP["t0"])
    tmp = _OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"events": EVENTS, "loop": loop, "switch_interval_s": sys.getswitchinterval()}, f)
    os.replace(tmp, _OUT)


def _dumper() -> None:
    while True:
        time.sleep(DUMP_EVERY_S)
        _dump()


def install() -> None:
    """Patch the four points of the module doc and the loop's selector (once the loop runs)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.runtime import Runtime
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    handle = Runtime.handle_backmsg

    def handle_backmsg(self, session_id, msg, *args, **kwargs):
        if msg.WhichOneof("type") == "rerun_script":
            EVENTS.append(("recv", session_id, time.monotonic(), None))
            _watch_selector()
        return handle(self, session_id, msg, *args, **kwargs)

    Runtime.handle_backmsg = handle_backmsg
    send = Runtime._send_message

    def send_message(self, session_info, msg):
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            EVENTS.append(("queued", session_info.session.id, time.monotonic(), int(msg.script_finished)))
        return send(self, session_info, msg)

    Runtime._send_message = send_message
    from streamlit.runtime.app_session import AppSession

    on_loop = AppSession._handle_scriptrunner_event_on_event_loop

    def handle_event(self, sender, event, *args, **kwargs):
        if getattr(event, "name", "").startswith("SCRIPT_STOPPED"):
            EVENTS.append(("handled", self.id, time.monotonic(), None))
        return on_loop(self, sender, event, *args, **kwargs)

    AppSession._handle_scriptrunner_event_on_event_loop = handle_event
    run_script = ScriptRunner._run_script

    def timed_run(self, rerun_data):
        t0, (c0, q0) = time.monotonic(), _schedstat()
        EVENTS.append(("start", self._session_id, t0, None))
        try:
            return run_script(self, rerun_data)
        finally:
            c1, q1 = _schedstat()
            EVENTS.append(("end", self._session_id, time.monotonic(), (c1 - c0, q1 - q0)))

    ScriptRunner._run_script = timed_run
    start = ScriptRunner.start

    def timed_start(self):  # on the loop: Thread.start() waits until the new thread has run
        t0 = time.monotonic()
        try:
            return start(self)
        finally:
            LOOP["thread_starts"] += 1
            LOOP["thread_start_wall_s"] += time.monotonic() - t0

    ScriptRunner.start = timed_start


_WATCHED = False


def _watch_selector() -> None:
    """Wrap the running loop's selector once (called on the loop's thread)."""
    global _WATCHED
    if _WATCHED:
        return
    import asyncio

    loop = asyncio.get_running_loop()
    selector = getattr(loop, "_selector", None)
    if selector is None:
        return
    _WATCHED = True
    LOOP["tid"], LOOP["t0"], LOOP["sched0"] = threading.get_native_id(), time.monotonic(), _schedstat()
    select = selector.select

    def timed_select(timeout=None):
        LOOP["iterations"] += 1
        if timeout is not None and timeout <= 0:
            t0 = time.perf_counter()
            try:
                return select(timeout)
            finally:
                dt = time.perf_counter() - t0
                LOOP["select0"] += 1
                LOOP["select0_wall_s"] += dt
                LOOP["select0_over_1ms"] += dt > 1e-3
                LOOP["select0_hist_ms"][min(int(dt * 1e3), 20)] += 1
        t0 = time.perf_counter()
        try:
            return select(timeout)
        finally:
            LOOP["idle_s"] += time.perf_counter() - t0  # waiting for I/O or a timer: idle

    selector.select = timed_select


def _stall_watch(stall_s: float, path: str) -> None:
    """Every 10 ms, arm faulthandler's watchdog (a C thread: it needs no GIL) for ``stall_s``: when
    this thread cannot get the GIL back that long, every thread's stack goes to ``path`` (the one
    holding the GIL is there, in the call it does not leave). Diagnosis only: the watchdog reads the
    other threads' frames while they run, and one server of four died during a dump."""
    import faulthandler

    f = open(path, "w")
    while True:
        faulthandler.dump_traceback_later(stall_s, file=f)
        t0 = time.monotonic()
        time.sleep(0.01)
        faulthandler.cancel_dump_traceback_later()
        if time.monotonic() - t0 > stall_s:
            EVENTS.append(("stall", "", t0, time.monotonic() - t0))


def run(argv: list[str]) -> None:
    """``streamlit <argv>`` in this process, traced (``LLM_CALC_TRACE_STALL_MS``: also dump every
    thread's stack when a waiting thread goes that long without the GIL)."""
    global _OUT
    _OUT = os.path.join(os.environ.get("LLM_CALC_TRACE_DIR", "/tmp"), f"trace-{os.getpid()}.json")
    if os.environ.get("LLM_CALC_TRACE_STALL_MS"):
        threading.Thread(target=_stall_watch, args=(float(os.environ["LLM_CALC_TRACE_STALL_MS"]) / 1e3,
                                                    _OUT.replace(".json", "-stalls.txt")), daemon=True).start()
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[1])))  # the app's tree, as streamlit does
    install()
    threading.Thread(target=_dumper, name="latency-trace-dump", daemon=True).start()
    atexit.register(_dump)
    from streamlit.web import cli

    sys.argv = ["streamlit", *argv]
    cli.main()


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def join(trace: dict, client: dict) -> list[dict]:
    """Each client change with its server phases (s): ``recv``, ``sched``, ``run``, ``flush``,
    ``deliver`` (module doc), its ``page`` group and ``t`` (send time since the case start)."""
    by_sid: dict[str, list[tuple]] = defaultdict(list)
    for kind, sid, t, extra in trace["events"]:
        by_sid[sid].append((t, kind, extra))
    for evs in by_sid.values():
        evs.sort()
    rows = []
    for ch in client["changes"]:
        evs = by_sid.get(ch["session_id"], [])
        t_send, t_done = ch["t_send"], ch["t_send"] + ch["latency_s"]
        window = [(t, k, x) for t, k, x in evs if t_send - 0.05 <= t <= t_done + 0.05]
        recv = next((t for t, k, _ in window if k == "recv"), None)
        starts = [t for t, k, _ in window if k == "start" and recv is not None and t >= recv]
        ends = [(t, x) for t, k, x in window if k == "end" and starts and t >= starts[-1]]
        queued = [t for t, k, _ in window if k == "queued"]
        if recv is None or not starts or not ends or not queued:
            continue
        start, (end, cpu) = starts[-1], ends[0]
        q = next((t for t in queued if t >= end), queued[-1])
        handled = next((t for t, k, _ in window if k == "handled" and t >= end), q)
        run_cpu, run_runq = cpu
        rows.append({"page": ch["page"], "t": t_send - client["start_at"], "latency": ch["latency_s"],
                     "recv": recv - t_send, "sched": start - recv, "run": end - start, "run_cpu": run_cpu,
                     "run_runq": run_runq, "run_other": end - start - run_cpu - run_runq,
                     "hand_off": handled - end, "flush": q - handled, "deliver": t_done - q, "restarts": len(starts) - 1})
    return rows


PHASES = ("recv", "sched", "run", "run_cpu", "run_runq", "run_other", "hand_off", "flush", "deliver")


def report(trace_path: str, client_path: str) -> None:
    with open(trace_path) as f:
        trace = json.load(f)
    with open(client_path) as f:
        client = json.load(f)
    rows = join(trace, client)
    print(f"# {trace_path}: {len(rows)} of {len(client['changes'])} changes joined; GIL switch interval "
          f"{1e3 * trace['switch_interval_s']:.1f} ms; client loop lag p50 / p95 / max "
          + " / ".join(f"{1e3 * x:.1f}" for x in client.get("client_lag_s", [float('nan')] * 3)) + " ms")
    lp = trace["loop"]
    print(f"# event loop: {lp['iterations']} iterations, {lp['select0']} zero-timeout selects taking "
          f"{lp['select0_wall_s']:.2f} s of wall ({lp['select0_over_1ms']} over 1 ms; ms histogram "
          f"{dict(sorted((int(k), v) for k, v in lp['select0_hist_ms'].items()))})")
    if "cpu_s" in lp:
        gil = lp["wall_s"] - lp["cpu_s"] - lp["runq_s"] - lp["idle_s"]
        print(f"# event loop thread over {lp['wall_s']:.1f} s: CPU {lp['cpu_s']:.1f} s, runnable waiting for a core "
              f"{lp['runq_s']:.1f} s, idle in select {lp['idle_s']:.1f} s, the rest (waiting for the GIL or a lock; a lower bound) "
              f"{gil:.1f} s, of which starting {lp.get('thread_starts', 0)} script threads "
              f"{lp.get('thread_start_wall_s', float('nan')):.1f} s")
    print("| page | window | n | latency p50 / p95 | " + " | ".join(f"{p} p50 / p95" for p in PHASES) + " | restarts |")
    print("|---|---|---|---|" + "---|" * len(PHASES) + "---|")
    last_first = client.get("last_first_load", float("inf"))
    for g in sorted({r["page"] for r in rows}):
        for label, keep in (("all", lambda r: True), ("before the last first load", lambda r: r["t"] < last_first),
                            ("after it", lambda r: r["t"] >= last_first)):
            sel = [r for r in rows if r["page"] == g and keep(r)]
            if not sel:
                continue
            cells = " | ".join(f"{1e3 * _pct([r[p] for r in sel], .5):.0f} / {1e3 * _pct([r[p] for r in sel], .95):.0f}"
                               for p in PHASES)
            print(f"| {g} | {label} | {len(sel)} | {1e3 * _pct([r['latency'] for r in sel], .5):.0f} / "
                  f"{1e3 * _pct([r['latency'] for r in sel], .95):.0f} | {cells} | {sum(r['restarts'] for r in sel)} |")
    slow = sorted(rows, key=lambda r: -r["latency"])[: max(1, len(rows) // 20)]  # the 5 % slowest
    if slow:
        print("# the slowest 5 %: mean ms " + ", ".join(f"{p} {1e3 * sum(r[p] for r in slow) / len(slow):.0f}"
                                                       for p in ("latency", *PHASES)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["report"]:
        report(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["run"]:
        run(sys.argv[1:])
    else:
        sys.exit(__doc__)
