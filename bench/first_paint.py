"""First chart of a fresh browser session: this app vs a minimal app, side by side in one run.

    .venv/bin/python bench/first_paint.py --reps 7

The minimal app is one ``st.title`` and one Plotly line chart (``st.plotly_chart``), served by the
same Streamlit with the same server flags. Both servers are started fresh; their first visit is
reported apart ("cold server") and not counted. Then each repetition opens a NEW browser context
(empty cache, no cookies: what a newcomer's tab gets) on each app, alternating which goes first,
and records in the page, with a MutationObserver installed before any script of the page runs,
``performance.now()`` (ms since navigation start) when:
  - the app shell is drawn (``[data-testid=stApp]``),
  - the first element of the script arrives (``[data-testid=stElementContainer]``),
  - the first Plotly chart has drawn its SVG (``.js-plotly-plot .main-svg``): the figure we compare.
Headless Debian Chromium (/usr/bin/chromium, or $CHROMIUM_PATH) through Playwright.

Server side, the same first run is timed over Streamlit's protocol (bench/ws_session.py): rerun
sent -> first chart element received -> script finished, to split a slow first paint between the
server's first run (imports, sidebar, page) and the browser (JS, Plotly).

Prints medians and the ratio app / minimal (target: at most 1.3). Exit status 0 always (a
benchmark, not a test); tests/test_first_paint.py runs it small.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402  (server start/stop)
from ws_session import Session  # noqa: E402  (the protocol client)

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
MINIMAL_APP = '''import plotly.graph_objects as go
import streamlit as st

st.title("Minimal app")
st.plotly_chart(go.Figure(go.Scatter(x=list(range(50)), y=[i * i for i in range(50)], mode="lines")))
'''
MARKS = {"shell": "[data-testid=stApp]", "first_element": "[data-testid=stElementContainer]",
         "chart": ".js-plotly-plot .main-svg"}
OBSERVER = """
(() => {
  const marks = %s;
  window.__marks = {};
  const check = () => {
    for (const [name, sel] of Object.entries(marks)) {
      if (!(name in window.__marks) && document.querySelector(sel)) window.__marks[name] = performance.now();
    }
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true});
})();
""" % (str(MARKS).replace("'", '"'))


def browser_visit(browser, url: str, timeout_s: float) -> dict[str, float]:
    """One fresh context (no cache, no cookies): ms from navigation start to each mark."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = ctx.new_page()
        page.add_init_script(OBSERVER)
        page.goto(url, wait_until="commit")
        page.wait_for_function("window.__marks && 'chart' in window.__marks", timeout=timeout_s * 1000)
        return page.evaluate("window.__marks")
    finally:
        ctx.close()


async def protocol_first_run(url: str, page: str) -> dict[str, float]:
    """Server side of a first visit: rerun sent -> first element, first chart, script finished (s)."""
    async with Session(url, page, timeout_s=120) as s:
        r = await s.open()
    marks = {"first_element_s": r.first_element_s, "chart_s": r.first_chart_s, "finished_s": r.elapsed_s}
    return {k: v for k, v in marks.items() if v is not None}


def _median(rows: list[dict[str, float]], key: str) -> float:
    values = [r[key] for r in rows if key in r]
    return statistics.median(values) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=7, help="fresh browser sessions per app (1-50)")
    p.add_argument("--page", default="", help="app page path to open (default: the default page, memory)")
    p.add_argument("--timeout", type=float, default=120, help="seconds to wait for one first chart")
    a = p.parse_args(argv)
    if not 1 <= a.reps <= 50:
        p.error("--reps must be in 1-50")
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found (apt-get install chromium)", file=sys.stderr)
        return 2
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="first-paint-")))
        minimal_dir = tmp / "minimal"
        minimal_dir.mkdir()
        (minimal_dir / "minimal_app.py").write_text(MINIMAL_APP)
        app_url, _ = stack.enter_context(load.single_server(tmp))
        minimal_url, _ = stack.enter_context(load.single_server(tmp, app=minimal_dir / "minimal_app.py"))
        bases, pages = {"app": app_url, "minimal": minimal_url}, {"app": a.page, "minimal": ""}
        urls = {name: f"{bases[name]}/{pages[name]}" for name in bases}
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.callback(browser.close)

        print(f"# first paint: {a.reps} fresh browser sessions per app, alternating; {os.cpu_count()} CPUs "
              "(shared machines: compare the ratio, not the milliseconds)")
        cold = {name: browser_visit(browser, url, a.timeout) for name, url in urls.items()}
        for name, marks in cold.items():
            print(f"cold server, first visit: {name:8s} chart at {marks['chart']:.0f} ms")
        rows: dict[str, list[dict[str, float]]] = {"app": [], "minimal": []}
        for rep in range(a.reps):
            order = ("app", "minimal") if rep % 2 == 0 else ("minimal", "app")
            for name in order:
                rows[name].append(browser_visit(browser, urls[name], a.timeout))
            print(f"rep {rep + 1}: app {rows['app'][-1]['chart']:.0f} ms, minimal {rows['minimal'][-1]['chart']:.0f} ms",
                  flush=True)
        server = {name: load.run_blocking(protocol_first_run(bases[name], pages[name])) for name in bases}

    print("\n| median over fresh sessions | app | minimal | app / minimal |")
    print("|---|---|---|---|")
    for key, label in (("shell", "app shell drawn"), ("first_element", "first element"),
                       ("chart", "**first chart**")):
        x, y = _median(rows["app"], key), _median(rows["minimal"], key)
        print(f"| {label} | {x:.0f} ms | {y:.0f} ms | {x / y:.2f} |")
    for key, label in (("first_element_s", "server: first element sent"), ("chart_s", "server: first chart sent"),
                       ("finished_s", "server: script finished")):
        x, y = server["app"].get(key, float("nan")), server["minimal"].get(key, float("nan"))
        print(f"| {label} (one warm first run) | {x * 1e3:.0f} ms | {y * 1e3:.0f} ms | {x / y:.2f} |")
    ratio = _median(rows["app"], "chart") / _median(rows["minimal"], "chart")
    verdict = "within" if ratio <= 1.3 else "ABOVE"
    print(f"\nfirst chart ratio app / minimal = {ratio:.2f} ({verdict} the 1.3x target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
