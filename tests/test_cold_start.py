"""Cold start: sessions that open at the same moment on a fresh server (issue 8, item 1).

Before ui.preload, 8 sessions opening at once on a fresh server showed
``AttributeError: partially initialized module 'pandas' has no attribute 'Series'`` in 7 of 8
sessions (3 trials out of 3): one session's table was importing pandas while another's chart
found the half-imported module in ``sys.modules`` (see ui/preload.py).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import ROOT, streamlit_server

sys.path.insert(0, str(ROOT / "bench"))
from load import run_blocking  # noqa: E402  (asyncio.run in its own thread: Playwright's loop may run here)
from ws_session import open_all  # noqa: E402  (the protocol client)

def test_page_runs_import_no_library_module_for_the_first_time():
    """Deterministic half of the fix: after ``import ui.shell`` (what app.py and every page do
    first), running every page imports no module of pandas, pyarrow, Plotly or narwhals: nothing
    can be half-imported while another session's script runs. A fresh interpreter, since this
    test process has imported everything already."""
    code = textwrap.dedent(f"""
        import logging, sys, warnings
        sys.path.insert(0, {str(ROOT)!r})
        warnings.filterwarnings("ignore"); logging.disable(logging.WARNING)
        from streamlit.testing.v1 import AppTest
        import ui.shell
        from ui.preload import PACKAGES
        before = set(sys.modules)
        at = AppTest.from_file({str(ROOT / "app.py")!r}, default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        for page in [p.path for p in ui.shell.PAGES[1:]]:
            at.switch_page(page).run()
            assert not at.exception, (page, at.exception)
        new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in PACKAGES)
        print("NEW", new)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("NEW"))
    assert line == "NEW []", f"imported lazily by a page run (add them to ui/preload.py): {line}"


def test_eight_sessions_opening_at_once_on_a_fresh_server(tmp_path):
    """The reproducer: a fresh ``streamlit run app.py``, 8 sessions over the WebSocket protocol,
    all sending their first rerun at the same moment, on every page; no exception element."""
    from ui.shell import PAGES as SPECS

    names = [p.path.removeprefix("pages/").removesuffix(".py") for p in SPECS]
    pages = [names[i % len(names)] for i in range(8)]
    with streamlit_server(tmp_path) as url:
        results = run_blocking(open_all(url, pages))
    for page, r in zip(pages, results):
        assert not isinstance(r, BaseException), f"{page}: {r!r}"
        assert r.finished == "FINISHED_SUCCESSFULLY", (page, r.finished)
        assert not r.exceptions, (page, r.exceptions)
        assert "plotly_chart" in r.elements, (page, sorted(set(r.elements)))
        # the pages whose first view has a pandas-backed table (the frontier's and the load test's small
        # tables are Markdown since the first-paint work, and the planner's ranking: no Arrow scripts before the first chart)
        assert "table" in r.elements or "dataframe" in r.elements or page in ("memory", "frontier", "load_test", "planner"), \
            (page, sorted(set(r.elements)))


def test_library_objects_are_out_of_the_per_rerun_garbage_collection():
    """Streamlit collects garbage after every script run (runner.postScriptGC); ui.preload freezes
    the objects of the imported libraries so that collection skips them (~50 ms per rerun)."""
    import gc

    import ui.preload  # noqa: F401

    assert gc.get_freeze_count() > 50_000


def test_the_young_generation_is_large_enough_for_a_page_runs_temporaries():
    """ui.preload: young passes every 10,000 net allocations, not Python's 700 (a page run makes tens
    of thousands of short-lived objects; in the room of 50 full passes went from 7 to 2 per run)."""
    import gc

    import ui.preload

    assert gc.get_threshold() == ui.preload.GC_THRESHOLDS == (10_000, 10, 10)
