"""How many times Plotly draws each chart of a fresh page, when, at what size, and for how long.

    .venv/bin/python bench/plotly_draws.py --pages memory,frontier,load_test,planner --reps 2

One server of this checkout (bench/load.py) and one of the minimal app (bench/first_paint.py's); per
page and repetition a fresh browser context (headless Chromium, as bench/first_paint.py) that gets
Streamlit's Plotly chunk with one call instrumented: the ``Plotly.react`` that Streamlit's Plotly
component (react-plotly's ``updatePlotly``) runs for every draw of a chart, its first one included.
Each call is logged with its start (ms since navigation start), the synchronous time it took on the
main thread (most of a draw: Plotly's SVG draw finishes inside it), the layout's width and height
and the number of traces. A call with a new width or height is a second full draw of a chart that
was already drawn: Streamlit sizes a chart from its container (a ResizeObserver) and redraws it
whenever that size changes. Prints the calls up to ``--settle`` seconds after the first chart.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402
from first_paint import CHROMIUM, CHROMIUM_ARGS, MINIMAL_APP, main_thread_ms, open_to_first_chart  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ui.preload_chart import plotly_chunk  # noqa: E402

# The one call in Streamlit 1.67's PlotlyChart chunk through which every draw goes (react-plotly).
CALL = "return e.react(_.current,{data:t,layout:n,config:r,frames:i})"
LOGGED = ("{let __t=performance.now(),__p=e.react(_.current,{data:t,layout:n,config:r,frames:i});"
          "(window.__draws=window.__draws||[]).push([__t,performance.now()-__t,n.width,n.height,t.length,"
          "(_.current.closest('[data-testid=stElementContainer]')||{}).className||'']);return __p}")


def instrumented_chunk() -> bytes | None:
    """The Plotly chunk with its draw call logged, or None when this Streamlit's chunk has no such call."""
    name = plotly_chunk()
    if name is None:
        return None
    import streamlit as st

    text = (Path(st.__file__).parent / "static" / "static" / "js" / name).read_text()
    if text.count(CALL) != 1:
        return None
    return text.replace(CALL, LOGGED).encode()


def visit(browser, url: str, chunk: bytes, settle_s: float, timeout_s: float) -> dict:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        ctx.route("**/PlotlyChart.*.js", lambda route: route.fulfill(
            status=200, body=chunk, headers={"content-type": "text/javascript"}))
        page, cdp = open_to_first_chart(ctx, url, timeout_s)
        cpu = main_thread_ms(cdp)
        page.wait_for_timeout(settle_s * 1000)
        out = page.evaluate("({marks: window.__marks, draws: window.__draws || [],"
                            " charts: document.querySelectorAll('.js-plotly-plot').length,"
                            " elements: document.querySelectorAll('[data-testid=stElementContainer]').length,"
                            " scroll: document.scrollingElement.scrollHeight})")
        out["main_cpu"] = cpu
        return out
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", default="memory,frontier,load_test,planner")
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--settle", type=float, default=3.0, help="seconds to keep logging after the first chart")
    p.add_argument("--app", type=Path, default=None, help="another checkout's app.py")
    a = p.parse_args(argv)
    chunk = instrumented_chunk()
    if chunk is None:
        print("this Streamlit's Plotly chunk has no react-plotly draw call to log", file=sys.stderr)
        return 2
    pages = [x.strip() for x in a.pages.split(",") if x.strip()]
    from playwright.sync_api import sync_playwright

    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="plotly-draws-")))
        (tmp / "minimal").mkdir()
        (tmp / "minimal" / "minimal_app.py").write_text(MINIMAL_APP)
        app = stack.enter_context(load.single_server(tmp, app=a.app))[0]
        mini = stack.enter_context(load.single_server(tmp, app=tmp / "minimal" / "minimal_app.py"))[0]
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.callback(browser.close)
        targets = [("minimal", mini + "/")] + [(pg, f"{app}/{'' if pg == 'memory' else pg}") for pg in pages]
        for _, url in targets:  # cold servers: not counted
            visit(browser, url, chunk, 0.0, 180)
        for name, url in targets:
            runs = [visit(browser, url, chunk, a.settle, 180) for _ in range(a.reps)]
            counts = [len(r["draws"]) for r in runs]
            print(f"\n## {name}: {statistics.median(counts):g} draws (per visit {counts}), "
                  f"{runs[-1]['charts']} charts, {runs[-1]['elements']} elements, main-thread CPU to the first "
                  f"chart {statistics.median(r['main_cpu'] for r in runs):.0f} ms; last visit, chart at "
                  f"{runs[-1]['marks']['chart']:.0f} ms:")
            for t0, ms, w, h, n, cls in runs[-1]["draws"]:
                key = next((c.removeprefix("st-key-") for c in cls.split() if c.startswith("st-key-")), "")
                print(f"  {t0:7.0f} ms  {ms:6.1f} ms sync  {w}x{h}  {n} traces  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
