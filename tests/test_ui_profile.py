"""bench/ui_profile.py: the sampler charges each thread's own CPU to its stack; report and compare read it."""

import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import ui_profile  # noqa: E402


def _spin_until(stop: threading.Event, used: list, leave: threading.Event) -> None:
    t0 = time.thread_time()
    x = 0
    while not stop.is_set():
        x += 1
    used.append(time.thread_time() - t0)
    leave.wait()  # alive (and idle) until the sampler has read its clock once more


def test_the_sampler_charges_a_busy_threads_cpu_to_its_own_function_and_not_an_idle_one(tmp_path):
    s = ui_profile.Sampler(str(tmp_path))
    stop, leave, used = threading.Event(), threading.Event(), []
    busy = threading.Thread(target=_spin_until, args=(stop, used, leave), name="busy")
    idle = threading.Thread(target=stop.wait, name="idle")
    s.thread.start()  # not start(): no atexit hook and no GC callback left behind in the test process
    busy.start(), idle.start()
    time.sleep(0.5)
    stop.set()
    time.sleep(0.1)  # the sampler reads the busy thread's clock again after it stopped spinning
    leave.set()
    busy.join(), idle.join()
    s.dump()
    d = json.loads(Path(s.out).read_text())
    by_kind = {}
    for kind, stack, cpu in d["stacks"]:
        by_kind[kind] = by_kind.get(kind, 0.0) + cpu
    spin = sum(cpu for kind, stack, cpu in d["stacks"] if "test_ui_profile.py:_spin_until" in stack)
    # what the thread used spinning, by its own clock, is charged to the spinning function (a shared
    # machine gives it some part of 0.5 s; the first read of a thread's clock is a baseline: ~one interval)
    assert used[0] > 0.01
    assert spin >= 0.8 * used[0] - 2 * ui_profile.INTERVAL_S, (spin, used)
    assert by_kind.get("idle", 0.0) < 0.02  # a thread blocked in a wait costs nothing
    assert d["samples"] > 10


def test_activities_take_the_first_rule_from_the_leaf(tmp_path):
    assert ui_profile.activity("MainThread;asyncio/base_events.py:_run_once;tornado/x.py:write") == "websocket / tornado I/O"
    assert ui_profile.activity("ScriptRunner.scriptThread;pages/memory.py:<module>;ui/background.py:result") == \
        "waiting for a worker (progress polls)"
    assert ui_profile.activity("ScriptRunner.scriptThread;pages/memory.py:<module>;calc/x.py:f") == \
        "script pages/memory.py (other)"


def test_report_and_compare_read_a_profile(tmp_path, capsys):
    # two memory runs of 30 and 50 ms, one load-test run of 200 ms; 40 ForwardMsgs, 10 self-pipe writes
    d = {"pid": 1, "wall_s": 10.0, "samples": 100, "process_cpu_s": 0.5, "gc_s": {"2": 0.05}, "gc_n": {"2": 1},
         "stacks": [["MainThread", "MainThread;x.py:f", 0.1], ["ScriptRunner.scriptThread", "S;pages/memory.py:<module>", 0.28]],
         "timed": {"enqueue a ForwardMsg": [0.01, 40], "call_soon_threadsafe (self-pipe write)": [0.001, 10]},
         "runs": [["memory", "full", 0.03, 0.1], ["memory", "full", 0.05, 0.2], ["load_test", "full", 0.2, 5.0]]}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(d))
    ui_profile.report([str(path)])
    ui_profile.compare([f"t={path}"])
    out = capsys.readouterr().out
    assert "| memory full | 2 | 0.08 |" in out
    # memory mean (30 + 50) / 2 = 40.0 ms; 40 messages / 3 runs = 13; 10 / 40 = 0.25 writes per message;
    # main thread 0.1 s / 3 runs = 33.3 ms; process 0.5 s / 3 = 166.7 ms; 1 full pass of 50 ms
    assert "| t | 2, 40.0 / 50.0 / 50.0 | 200 / nan | 0 | 13 | 0.25 | 33.3 | 1, 0.05, 1, 50 | 166.7 |" in out
