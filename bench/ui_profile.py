"""Where the Streamlit (UI) process spends its CPU: a CPU-weighted sampling profiler for the server.

    .venv/bin/python bench/load.py --sessions 50 --mix room --duration 45 --profile /tmp/prof   # profiles each server
    .venv/bin/python bench/ui_profile.py report /tmp/prof/ui-profile-<pid>.json                  # shares by activity

Run as the server's launcher (``python bench/ui_profile.py run app.py ...``, what ``bench/load.py
--profile DIR`` does): a daemon thread wakes every :data:`INTERVAL_S`, reads each thread's own CPU
clock (``time.pthread_getcpuclockid``: user + system seconds of that one thread, from the kernel,
so a thread blocked in a wait costs nothing), and charges the CPU each thread used since the last
wake to the Python stack that thread shows now. No package is needed (py-spy is not installed):
``sys._current_frames`` and the thread CPU clocks are the standard library's. Also counted: the
garbage collector's pauses (``gc.callbacks``, by generation) and the process's CPU
(``os.times``), so the sampled share can be checked against the whole. The sampler's own CPU is
its thread's clock, reported apart. Every :data:`DUMP_EVERY_S` and at exit the totals go to
``$LLM_CALC_PROFILE_DIR/ui-profile-<pid>.json`` (stacks folded root-first, ``;``-joined, CPU s).

Settings (environment): ``LLM_CALC_PROFILE_TIMERS=0`` leaves the functions unwrapped (script runs
still timed); ``LLM_CALC_PROFILE_STACKS=0`` reads only each thread's CPU (every 50 ms, no
stacks: the light mode for before/after runs); ``LLM_CALC_PROFILE_EVERY=N`` runs one script run in N
under ``cProfile`` with the thread's CPU clock as its timer (``*-<page>.pstats``, and the event
loop's thread for the whole run: exact but call-heavy code is inflated); ``LLM_CALC_PROFILE_SWITCH_S``
shortens the GIL switch interval (samples less biased towards GIL-releasing calls).

``compare label=file.json …`` prints one row per label (before/after). ``report`` prints the CPU by thread, by activity (:data:`ACTIVITIES`: the first rule that matches a
frame of the stack, leaf first), and the heaviest functions (self and inclusive).
"""

from __future__ import annotations

import atexit
import cProfile
import gc
import json
import os
import sys
import threading
import time
from collections import defaultdict

INTERVAL_S = 0.005
DUMP_EVERY_S = 5.0
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _short(path: str) -> str:
    for mark in ("site-packages/", "lib/python3"):
        if mark in path:
            return path.split(mark, 1)[1]
    return os.path.relpath(path, ROOT) if path.startswith("/") else path


class Sampler:
    def __init__(self, out_dir: str) -> None:
        self.out = os.path.join(out_dir, f"ui-profile-{os.getpid()}.json")
        self.stacks: dict[tuple[str, str], float] = defaultdict(float)  # (thread kind, folded stack) -> CPU s
        self.last: dict[int, float] = {}
        self.clocks: dict[int, int] = {}
        self.gc_s: dict[int, float] = defaultdict(float)
        self.gc_n: dict[int, int] = defaultdict(int)
        self._gc_t0: dict[int, float] = {}
        self.t0, self.cpu0 = time.monotonic(), os.times()
        self.samples = 0
        self.timed: dict[str, list] = {}
        self.thread = threading.Thread(target=self._loop, name="ui-profile-sampler", daemon=True)

    def start(self) -> None:
        gc.callbacks.append(self._gc)
        self.thread.start()
        atexit.register(self.dump)

    def _gc(self, phase: str, info: dict) -> None:
        tid = threading.get_ident()
        if phase == "start":
            self._gc_t0[tid] = time.thread_time()
        elif tid in self._gc_t0:
            self.gc_s[info["generation"]] += time.thread_time() - self._gc_t0.pop(tid)
            self.gc_n[info["generation"]] += 1

    @staticmethod
    def _kind(name: str) -> str:
        for prefix in ("ScriptRunner.scriptThread", "llm-calc-worker", "MainThread", "ui-profile-sampler"):
            if name.startswith(prefix):
                return prefix
        return name.rstrip("0123456789-_ ") or "other"

    def _loop(self) -> None:
        me = threading.get_ident()
        next_dump = time.monotonic() + DUMP_EVERY_S
        stacks = os.environ.get("LLM_CALC_PROFILE_STACKS", "1") != "0"  # 0: CPU per thread only, every 50 ms
        while True:
            time.sleep(INTERVAL_S if stacks else 0.05)
            frames = sys._current_frames()
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in frames.items():
                try:
                    clock = self.clocks.get(ident)
                    if clock is None:
                        clock = self.clocks[ident] = time.pthread_getcpuclockid(ident)
                    cpu = time.clock_gettime(clock)
                except (OSError, OverflowError):
                    continue
                prev = self.last.get(ident)
                self.last[ident] = cpu
                if prev is None or cpu <= prev:
                    continue
                kind = self._kind(names.get(ident, "other"))
                if ident == me:
                    self.stacks[(kind, "sampler")] += cpu - prev
                    continue
                if not stacks:
                    self.stacks[(kind, kind)] += cpu - prev
                    continue
                parts = []
                f = frame
                while f is not None:
                    code = f.f_code
                    parts.append(f"{_short(code.co_filename)}:{code.co_name}")
                    f = f.f_back
                parts.append(kind)
                self.stacks[(kind, ";".join(reversed(parts)))] += cpu - prev
            alive = set(frames)
            for ident in [i for i in self.last if i not in alive]:
                self.last.pop(ident, None)
                self.clocks.pop(ident, None)
            self.samples += 1
            if time.monotonic() >= next_dump:
                self.dump()
                next_dump = time.monotonic() + DUMP_EVERY_S

    def dump(self, final: bool = False) -> None:
        now = os.times()
        if final:  # what a full collection walks: the tracked objects of the old generation, by type
            counts: dict[str, int] = defaultdict(int)
            for obj in gc.get_objects(generation=2):
                counts[f"{type(obj).__module__}.{type(obj).__qualname__}"] += 1
            self.old = {"total": sum(counts.values()), **dict(sorted(counts.items(), key=lambda kv: -kv[1])[:40])}
        old = getattr(self, "old", {})  # kept: the sampler's later periodic dumps must not drop it
        data = {"pid": os.getpid(), "wall_s": time.monotonic() - self.t0, "samples": self.samples,
                "process_cpu_s": (now.user - self.cpu0.user) + (now.system - self.cpu0.system),
                "gc_s": {str(g): s for g, s in self.gc_s.items()}, "gc_n": {str(g): n for g, n in self.gc_n.items()},
                "stacks": [[k, s, v] for (k, s), v in list(self.stacks.items())],
                "timed": dict(self.timed), "runs": list(RUNS), "old_generation": old,
                "frozen": gc.get_freeze_count()}
        with _PROFILES_LOCK:
            for page, stats in PROFILES.items():
                stats.dump_stats(self.out.replace(".json", f"-{page or 'app'}.pstats"))
        tmp = self.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, self.out)


# ---- the report ---------------------------------------------------------------------------------

# (activity, substrings: the first rule with a substring in a frame wins, frames scanned leaf first)
ACTIVITIES = (
    ("gc", ("gc:collect",)),
    ("profiler", ("ui_profile.py",)),
    ("worker pool: pipes and pickles", ("ui/workers.py:_run", "ui/workers.py:_read", "ui/workers.py:_proc_cpu_s")),
    ("websocket / tornado I/O", ("tornado/",)),
    ("protobuf serialization", ("SerializeToString", "google/protobuf", "forward_msg_cache", "populate_hash_if_needed",
                                "message_cache", "serialize_forward_msg")),
    ("plotly figure -> JSON", ("plotly/io/_json", "_plotly_utils/utils", "plotly_chart.py")),
    ("plotly figure building", ("plotly/", "_plotly_utils/")),
    ("dataframe / arrow", ("pyarrow", "pandas/", "dataframe_util", "arrow.py", "narwhals")),
    ("waiting for a worker (progress polls)", ("ui/background.py:result",)),
    ("result cache", ("ui/budget.py",)),
    ("session state", ("session_state", "state/session_state")),
    ("streamlit runtime (messages, queues)", ("streamlit/runtime/app_session", "streamlit/runtime/runtime.py",
                                              "forward_msg_queue", "streamlit/runtime/websocket_session_manager",
                                              "streamlit/web/server/browser_websocket_handler")),
    ("asyncio loop", ("asyncio/",)),
)
PAGE_SCRIPTS = ("pages/", "app.py")


def activity(stack: str) -> str:
    frames = stack.split(";")
    for frame in reversed(frames):
        for name, marks in ACTIVITIES:
            if any(m in frame for m in marks):
                return name
    for frame in frames:
        if frame.startswith(PAGE_SCRIPTS):
            return f"script {frame.split(':')[0]} (other)"
    return "other"


def page_of(stack: str) -> str:
    for frame in stack.split(";"):
        if frame.startswith("pages/") or frame.startswith("app.py"):
            return frame.split(":")[0]
    return "-"


def report(paths: list[str], top: int = 25) -> None:
    for path in paths:
        with open(path) as f:
            d = json.load(f)
        stacks = [(k, s, v) for k, s, v in d["stacks"]]
        sampled = sum(v for _, _, v in stacks)
        total = d["process_cpu_s"]
        print(f"## {path}\nwall {d['wall_s']:.0f} s, process CPU {total:.1f} s ({total / d['wall_s']:.2f} cores), "
              f"sampled {sampled:.1f} s in {d['samples']} samples; GC pauses "
              + ", ".join(f"gen {g}: {d['gc_s'][g]:.2f} s / {d['gc_n'][g]}" for g in sorted(d["gc_s"])))

        def table(title: str, key) -> None:
            acc: dict[str, float] = defaultdict(float)
            for k, s, v in stacks:
                acc[key(k, s)] += v
            print(f"\n| {title} | CPU s | share of sampled |\n|---|---|---|")
            for name, v in sorted(acc.items(), key=lambda kv: -kv[1])[:top]:
                print(f"| {name} | {v:.2f} | {100 * v / sampled:.1f} % |")

        print("\n| exact: function | CPU s | calls | ms per call |\n|---|---|---|---|")
        for label, (cpu, n) in sorted(d.get("timed", {}).items(), key=lambda kv: -kv[1][0]):
            print(f"| {label} | {cpu:.2f} | {n} | {1e3 * cpu / max(n, 1):.2f} |")
        runs: dict = defaultdict(list)
        for page, kind, cpu, wall in d.get("runs", []):
            runs[(page, kind)].append((cpu, wall))
        print("\n| exact: script runs (page, kind) | runs | CPU s | CPU per run p50 / p95 / max ms | wall p50 / p95 s |"
              "\n|---|---|---|---|---|")
        for (page, kind), xs in sorted(runs.items(), key=lambda kv: -sum(c for c, _ in kv[1])):
            c = sorted(x[0] for x in xs)
            w = sorted(x[1] for x in xs)
            q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))]  # noqa: E731
            print(f"| {page} {kind} | {len(xs)} | {sum(c):.2f} | {1e3 * q(c, .5):.0f} / {1e3 * q(c, .95):.0f} / "
                  f"{1e3 * c[-1]:.0f} | {q(w, .5):.2f} / {q(w, .95):.2f} |")
        table("thread", lambda k, s: k)
        table("activity", lambda k, s: activity(s))
        table("page script (script threads)", lambda k, s: page_of(s) if k.startswith("ScriptRunner") else f"({k})")
        table("page x activity", lambda k, s: f"{page_of(s)} / {activity(s)}")
        table("self (leaf frame)", lambda k, s: s.split(";")[-1])
        incl: dict[str, float] = defaultdict(float)
        for _, s, v in stacks:
            for frame in set(s.split(";")[1:]):
                incl[frame] += v
        print("\n| inclusive | CPU s | share |\n|---|---|---|")
        for name, v in sorted(incl.items(), key=lambda kv: -kv[1])[:top * 2]:
            print(f"| {name} | {v:.2f} | {100 * v / sampled:.1f} % |")
        print()


# Exact CPU (the calling thread's clock around the call, outermost call only) of a few functions
# the sampled stacks cannot weigh without bias: the sampler takes the GIL where a thread lets it go
# (a socket write, a lock), so its leaf frames lean towards such calls.
TIMED = (
    ("streamlit.runtime.scriptrunner_utils.script_run_context", "ScriptRunContext", "enqueue", "enqueue a ForwardMsg"),
    ("streamlit.runtime.scriptrunner.script_runner", "ScriptRunner", "_enqueue_forward_msg", "script runner -> app session"),
    ("streamlit.elements.plotly_chart", "PlotlyMixin", "plotly_chart", "st.plotly_chart"),
    ("streamlit.runtime.app_session", "AppSession", "handle_backmsg", "handle a BackMsg (event loop)"),
    ("streamlit.runtime.app_session", "AppSession", "_handle_scriptrunner_event_on_event_loop", "script event on the loop"),
    ("streamlit.runtime.forward_msg_queue", "ForwardMsgQueue", "enqueue", "ForwardMsgQueue.enqueue"),
    ("ui.background", None, "result", "ui.background.result (wait + polls)"),
    ("ui.workers", "_Slot", "_run", "worker slot (pipes, pickles, polls)"),
    ("ui.budget", "ResultCache", "get", "result cache get"),
    ("ui.layout", None, "chart", "ui.layout.chart (figure -> message)"),
    ("ui.state", None, "render_control", "ui.state.render_control (widgets)"),
    ("ui.shell", None, "page", "ui.shell.page (frame, sidebar)"),
    ("streamlit.runtime.runtime", "Runtime", "_send_message", "Runtime._send_message (loop -> websocket)"),
    ("streamlit.runtime.runtime", "Runtime", "_enqueued_some_message", "Runtime._enqueued_some_message"),
    ("streamlit.web.server.starlette.starlette_websocket", None, "write_forward_msg", "write_forward_msg"),
    ("asyncio.base_events", "BaseEventLoop", "call_soon_threadsafe", "call_soon_threadsafe (self-pipe write)"),
)
RUNS: list = []  # (page, kind, thread CPU s, wall s)
DETERMINISTIC_EVERY = int(os.environ.get("LLM_CALC_PROFILE_EVERY", "0"))  # 1 script run in N under cProfile (0: none)
PROFILES: dict = {}  # page -> pstats.Stats of its profiled runs
_PROFILES_LOCK = threading.Lock()


def _add_profile(page: str, prof) -> None:
    import pstats

    with _PROFILES_LOCK:
        if page in PROFILES:
            PROFILES[page].add(prof)
        else:
            PROFILES[page] = pstats.Stats(prof)
_tls = threading.local()


def _wrap(owner, attr: str, label: str, totals: dict) -> None:
    import functools

    fn = getattr(owner, attr)

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        if getattr(_tls, "in_" + label, False):
            return fn(*args, **kwargs)
        setattr(_tls, "in_" + label, True)
        t0 = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            setattr(_tls, "in_" + label, False)
            tot = totals.setdefault(label, [0.0, 0])
            tot[0] += time.thread_time() - t0
            tot[1] += 1

    setattr(owner, attr, timed)


def install_timers(totals: dict) -> None:
    import importlib

    for module, cls, attr, label in TIMED if os.environ.get("LLM_CALC_PROFILE_TIMERS", "1") != "0" else ():
        try:
            mod = importlib.import_module(module)
            _wrap(getattr(mod, cls) if cls else mod, attr, label, totals)
        except (ImportError, AttributeError):
            pass
    from streamlit.runtime.state.session_state import SessionState

    if os.environ.get("LLM_CALC_PROFILE_TIMERS", "1") != "0":
        holder = type("P", (), {"get": SessionState.filtered_state.fget})
        _wrap(holder, "get", "SessionState.filtered_state (widgets with a key)", totals)
        SessionState.filtered_state = property(holder.get)
    from streamlit.navigation.page import StreamlitPage
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    page_run = StreamlitPage.run

    def run_page(self):
        _tls.page = getattr(self, "url_path", "") or getattr(self, "title", "?")
        return page_run(self)

    StreamlitPage.run = run_page
    run_script = ScriptRunner._run_script

    def timed_run(self, rerun_data):
        _tls.page = "?"
        prof = None
        if DETERMINISTIC_EVERY and len(RUNS) % DETERMINISTIC_EVERY == DETERMINISTIC_EVERY - 1:
            prof = cProfile.Profile(time.thread_time)  # this thread only, CPU time: exact, no GIL bias
            prof.enable()
        t0, w0 = time.thread_time(), time.monotonic()
        try:
            return run_script(self, rerun_data)
        finally:
            cpu, wall = time.thread_time() - t0, time.monotonic() - w0
            if prof is not None:
                prof.disable()
                _add_profile(_tls.page, prof)
            else:  # a profiled run is slower: left out of the run table
                RUNS.append((_tls.page, "fragment" if rerun_data.fragment_id_queue else "full", cpu, wall))

    ScriptRunner._run_script = timed_run


def compare(args: list[str]) -> None:
    """One row per ``label=profile.json`` (several files of one label pooled): the UI process's CPU
    per memory/frontier change, the other pages' runs, the messages and event-loop hand-offs per
    page run, the collector."""
    rows: dict[str, list[dict]] = defaultdict(list)
    for arg in args:
        label, path = arg.split("=", 1)
        with open(path) as f:
            rows[label].append(json.load(f))
    print("| tree | memory/frontier page runs: n, CPU mean / p50 / p95 ms | load test / planner run CPU mean ms | "
          "waits: CPU per wait ms | messages per page run | self-pipe writes per message | event-loop thread CPU "
          "per page run ms | GC: passes, CPU s, full passes, mean full pause ms | process CPU per page run ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, ds in rows.items():
        runs = [r for d in ds for r in d.get("runs", [])]
        mf = sorted(c for p, k, c, _ in runs if p in ("memory", "frontier"))  # first loads included (~1 in 8)
        heavy = {p: [c for q, k, c, _ in runs if q == p] for p in ("load_test", "planner")}
        timed = defaultdict(lambda: [0.0, 0])
        for d in ds:
            for name, (cpu, n) in d.get("timed", {}).items():
                timed[name][0] += cpu
                timed[name][1] += n
        n_runs = max(len(runs), 1)
        msgs = timed["enqueue a ForwardMsg"][1]
        pipe = timed["call_soon_threadsafe (self-pipe write)"][1]
        wait = timed["ui.background.result (wait + polls)"]
        main = sum(v for d in ds for k, _, v in d["stacks"] if k == "MainThread")
        gc_n = sum(n for d in ds for n in d["gc_n"].values())
        gc_s = sum(v for d in ds for v in d["gc_s"].values())
        full_n = sum(d["gc_n"].get("2", 0) for d in ds)
        full_s = sum(d["gc_s"].get("2", 0.0) for d in ds)
        proc = sum(d["process_cpu_s"] for d in ds)
        q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))] if v else float("nan")  # noqa: E731
        mean = lambda v: sum(v) / len(v) if v else float("nan")  # noqa: E731
        print(f"| {label} | {len(mf)}, {1e3 * mean(mf):.1f} / {1e3 * q(mf, .5):.1f} / {1e3 * q(mf, .95):.1f} | "
              f"{1e3 * mean(heavy['load_test']):.0f} / {1e3 * mean(heavy['planner']):.0f} | "
              f"{1e3 * wait[0] / max(wait[1], 1):.0f} | {msgs / n_runs:.0f} | {pipe / max(msgs, 1):.2f} | "
              f"{1e3 * main / n_runs:.1f} | {gc_n}, {gc_s:.2f}, {full_n}, {1e3 * full_s / max(full_n, 1):.0f} | "
              f"{1e3 * proc / n_runs:.1f} |")


def run(argv: list[str]) -> None:
    """``streamlit <argv>`` in this process with the sampler running."""
    if os.environ.get("LLM_CALC_PROFILE_SWITCH_S"):  # a short GIL switch interval: samples less biased
        sys.setswitchinterval(float(os.environ["LLM_CALC_PROFILE_SWITCH_S"]))
    sampler = Sampler(os.environ.get("LLM_CALC_PROFILE_DIR", "/tmp"))
    sampler.start()
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[1])))  # the app's tree (its ui/), as streamlit does
    import ui.background  # noqa: F401

    install_timers(sampler.timed)
    from streamlit.web import cli

    sys.argv = ["streamlit", *argv]
    main = cProfile.Profile(time.thread_time) if DETERMINISTIC_EVERY else None  # the event loop's thread, whole run
    if main is not None:
        main.enable()
    try:
        cli.main()
    finally:
        if main is not None:
            main.disable()
            main.dump_stats(sampler.out.replace(".json", "-MainThread.pstats"))
        sampler.dump(final=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["report"]:
        report(sys.argv[2:])
    elif sys.argv[1:2] == ["compare"]:
        compare(sys.argv[2:])
    elif sys.argv[1:2] == ["run"]:
        run(sys.argv[1:])
    else:
        sys.exit(__doc__)
