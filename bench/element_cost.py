"""Server CPU per element kind: what each Streamlit command of a rerun costs the script thread.

    .venv/bin/python bench/element_cost.py [--pages memory,frontier] [--runs 40]

Starts ``streamlit run app.py`` with this file as its launcher (``serve``): every public
``DeltaGenerator`` command (``st.expander``, ``st.page_link``, ``st.plotly_chart`` ...), ``st.navigation``
and ``st.set_page_config``, and a few of Streamlit's per-message steps (``~`` rows: ``ScriptRunContext.enqueue``,
which serializes and hashes each ForwardMsg; ``DeltaGenerator._enqueue`` / ``_block``; element ids; widget
registration; Plotly's JSON encoder; ``ui.layout.chart``) are timed by the script thread's CPU clock,
*exclusive* of the timed calls inside them, per page and per phase (``frame``: app.py's sidebar and
frame, ``page``: the page script). One session per page (bench/ws_session.py) moves the sidebar
concurrency; 5 warm-up reruns are left out. Thread CPU, not wall time: the machine is shared. The timers
cost a few microseconds a call; compare kinds, not the total with bench/bench_pages.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALUES = (8, 12, 16, 24)


def serve(argv: list[str]) -> None:
    """``streamlit <argv>`` with the timers; after each script run the totals go to $ELEMENT_COST_OUT."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[1])))
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator
    from streamlit.navigation.page import StreamlitPage
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    tls = threading.local()
    totals: dict = collections.defaultdict(lambda: collections.defaultdict(lambda: [0.0, 0]))
    runs: collections.Counter = collections.Counter()
    run_cpu: dict = collections.defaultdict(float)

    def wrap(name, fn):
        @functools.wraps(fn)
        def timed(*a, **k):
            stack = getattr(tls, "stack", None)
            if stack is None:  # not on a script thread
                return fn(*a, **k)
            t0 = time.thread_time()
            stack.append(0.0)
            try:
                return fn(*a, **k)
            finally:
                dt = time.thread_time() - t0
                inner = stack.pop()
                if stack:
                    stack[-1] += dt
                e = tls.cur[(tls.phase, name)]
                e[0] += dt - inner
                e[1] += 1
        return timed

    names = [n for n in dir(DeltaGenerator) if not n.startswith("_") and callable(getattr(DeltaGenerator, n, None))]
    for n in names:
        try:
            setattr(DeltaGenerator, n, wrap(n, getattr(DeltaGenerator, n)))
        except (AttributeError, TypeError):
            pass
    for n in names:  # st.x is bound to the main DeltaGenerator at import
        if hasattr(st, n) and hasattr(st._main, n):
            setattr(st, n, getattr(st._main, n))
    st.navigation = wrap("navigation", st.navigation)
    st.set_page_config = wrap("set_page_config", st.set_page_config)
    import _plotly_utils.utils as pu
    import streamlit.elements.layouts as layouts
    import streamlit.elements.lib.utils as elu
    import streamlit.elements.plotly_chart as pc
    import streamlit.runtime.scriptrunner_utils.script_run_context as src
    import streamlit.runtime.state.widgets as widgets

    pu.PlotlyJSONEncoder.encode = wrap("~PlotlyJSONEncoder.encode", pu.PlotlyJSONEncoder.encode)
    for mod in (elu, pc, layouts, widgets):
        for fn in ("compute_and_register_element_id", "register_widget"):
            if hasattr(mod, fn):
                setattr(mod, fn, wrap("~" + fn, getattr(mod, fn)))
    DeltaGenerator._enqueue = wrap("~DeltaGenerator._enqueue", DeltaGenerator._enqueue)
    DeltaGenerator._block = wrap("~DeltaGenerator._block", DeltaGenerator._block)
    src.ScriptRunContext.enqueue = wrap("~ScriptRunContext.enqueue", src.ScriptRunContext.enqueue)
    try:
        import ui.layout as ul

        ul.chart = wrap("~ui.layout.chart", ul.chart)
    except ImportError:
        pass

    page_run = StreamlitPage.run

    def run_page(self):
        tls.page, tls.phase = getattr(self, "url_path", "") or "?", "page"
        try:
            return page_run(self)
        finally:
            tls.phase = "frame"

    StreamlitPage.run = run_page
    run_script = ScriptRunner._run_script

    def timed_run(self, rerun_data):
        tls.page, tls.phase, tls.stack = "?", "frame", []
        tls.cur = collections.defaultdict(lambda: [0.0, 0])
        t0 = time.thread_time()
        try:
            return run_script(self, rerun_data)
        finally:
            for (phase, name), (s, n) in tls.cur.items():
                e = totals[tls.page][f"{phase}:{name}"]
                e[0] += s
                e[1] += n
            runs[tls.page] += 1
            run_cpu[tls.page] += time.thread_time() - t0
            tls.stack = None
            out = {p: {"runs": runs[p], "cpu_s": run_cpu[p], "cmds": {c: v for c, v in d.items()}}
                   for p, d in list(totals.items()) if runs[p]}
            tmp = os.environ["ELEMENT_COST_OUT"] + ".tmp"
            with open(tmp, "w") as f:
                json.dump(out, f)
            os.replace(tmp, os.environ["ELEMENT_COST_OUT"])

    ScriptRunner._run_script = timed_run
    from streamlit.web import cli

    sys.argv = ["streamlit", *argv]
    cli.main()


def measure(pages: list[str], runs: int, tree: Path) -> dict:
    """Per page: (script-thread ms per rerun, rows (ms per rerun, calls per rerun, 'phase:kind'))."""
    sys.path.insert(0, str(ROOT / "bench"))
    import load
    from ws_session import Session

    tmp = Path(tempfile.mkdtemp(prefix="element_cost_"))
    out = tmp / "totals.json"
    port = load._free_port()
    env = {**os.environ, "ELEMENT_COST_OUT": str(out), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    log = open(tmp / "server.log", "w")
    proc = subprocess.Popen([sys.executable, __file__, "serve", "run", str(tree / "app.py"), "--server.headless", "true",
                             "--server.address", "127.0.0.1", "--server.port", str(port),
                             "--server.fileWatcherType", "none"],
                            cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    result = {}
    try:
        load._wait_healthy(url, proc)

        async def drive(page: str) -> None:
            s = Session(url, page)
            await s.open()
            for i in range(5):  # warm-up
                await s.rerun({"concurrency": VALUES[i % 4]})
            before = json.loads(out.read_text()).get(page)
            for i in range(runs):
                r = await s.rerun({"concurrency": VALUES[i % 4]})
                assert not r.exceptions, r.exceptions
            await s.close()
            after = json.loads(out.read_text())[page]
            n = after["runs"] - before["runs"]
            rows = []
            for c, (sec, calls) in after["cmds"].items():
                b = before["cmds"].get(c, (0.0, 0))
                rows.append(((sec - b[0]) / n * 1e3, (calls - b[1]) / n, c))
            result[page] = ((after["cpu_s"] - before["cpu_s"]) / n * 1e3, sorted(rows, reverse=True))

        for page in pages:
            asyncio.run(drive(page))
    finally:
        load._stop(proc)
        log.close()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", default="memory,frontier")
    ap.add_argument("--runs", type=int, default=40, help="measured reruns per page (after 5 warm-up ones)")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the app's folder (default: this checkout)")
    a = ap.parse_args(argv)
    for page, (cpu_ms, rows) in measure(a.pages.split(","), a.runs, a.tree.resolve()).items():
        timed = sum(ms for ms, _, _ in rows)
        print(f"== {page}: script thread {cpu_ms:.2f} ms per rerun, {timed:.2f} ms of it in the timed calls "
              f"(exclusive; ~ = Streamlit's per-message steps)")
        print(f"   {'ms/rerun':>8} {'calls':>6} {'us each':>8}  phase:kind")
        for ms, calls, name in rows:
            if calls > 0:
                print(f"   {ms:8.3f} {calls:6.1f} {ms / calls * 1e3:8.1f}  {name}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2:])
    else:
        sys.exit(main())
