"""First chart of a fresh browser session: this app vs a minimal app, side by side in one run.

    .venv/bin/python bench/first_paint.py --reps 7
    .venv/bin/python bench/first_paint.py --reps 3 --pages memory,frontier,load_test,planner \
        --baseline /work/main --profile      # before (another checkout) and after, in one run

The minimal app is one ``st.title`` and one Plotly line chart (``st.plotly_chart``), served by the
same Streamlit with the same server flags. Both servers are started fresh; their first visit is
reported apart ("cold server") and not counted. Then each repetition opens a NEW browser context
(empty cache, no cookies: what a newcomer's tab gets) on each app, alternating which goes first,
and records in the page, with a MutationObserver installed before any script of the page runs,
``performance.now()`` (ms since navigation start) when:
  - the app shell is drawn (``[data-testid=stApp]``),
  - the first element of the script arrives (``[data-testid=stElementContainer]``),
  - the first Plotly chart has drawn its SVG (``.js-plotly-plot .main-svg``): the figure we compare;
  - the first chart is shown (``visible_chart``): Streamlit 1.67 draws every chart twice, first hidden
    (``visibility: hidden`` while its container's width is unmeasured, at Plotly's own autosize), then
    shown at the measured width (bench/plotly_draws.py), and every chart of the page has had its
    hidden draw before the first is shown. The reader sees the chart at this mark, the minimal app's too.
Headless Debian Chromium (/usr/bin/chromium, or $CHROMIUM_PATH) through Playwright.

Besides the time, the CPU time of the page's main thread until the first chart, and until it is
shown (Chromium's ``Performance.getMetrics`` ThreadTime): on a machine shared with other work the milliseconds swing
with the load, the main thread's CPU much less, and on few CPUs it is what the chart waits for.

Server side, the same first run is timed over Streamlit's protocol (bench/ws_session.py): rerun
sent -> first chart element received -> script finished, to split a slow first paint between the
server's first run (imports, sidebar, page) and the browser (JS, Plotly).

``--baseline DIR`` serves another checkout of the app (its own folder and config) beside this one,
visited in turn with it: before and after a change on the same machine at the same time.
``--pages`` visits several pages on the same servers, interleaved. ``--profile`` prints, for the
last repetition, the scripts fetched before the first chart (each element type's JavaScript is a
chunk loaded on its first use) and the elements drawn by then: on a machine with few CPUs every
element's JavaScript and layout shares the one main thread with Plotly's.

Prints medians and the ratio app / minimal (target: at most 1.3). Exit status 0 always (a
benchmark, not a test); tests/test_first_paint.py runs it small.
"""

from __future__ import annotations

import argparse
import json
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
         "chart": ".js-plotly-plot .main-svg",
         # Streamlit 1.67 draws every chart first hidden (``visibility: hidden`` on the plot's div while its
         # container's width is unmeasured), then again at the measured width, shown (bench/plotly_draws.py)
         "visible_chart": ".js-plotly-plot:not([style*='visibility: hidden']) .main-svg"}
OBSERVER = """
(() => {
  const marks = %s;
  window.__marks = {};
  const check = () => {
    for (const [name, sel] of Object.entries(marks)) {
      if (!(name in window.__marks) && document.querySelector(sel)) window.__marks[name] = performance.now();
    }
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ['style']});
})();
""" % json.dumps(MARKS)


def open_to_first_chart(ctx, url: str, timeout_s: float, before=None):
    """A new page of browser context ``ctx`` with the marks' observer, opened at ``url`` and waited on
    until its first chart is drawn; ``before(cdp)`` runs just before navigation. Returns (page, cdp)."""
    page = ctx.new_page()
    page.add_init_script(OBSERVER)
    cdp = ctx.new_cdp_session(page)
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    if before is not None:
        before(cdp)
    page.goto(url, wait_until="commit")
    page.wait_for_function("window.__marks && 'chart' in window.__marks", timeout=timeout_s * 1000, polling=10)
    return page, cdp


def main_thread_ms(cdp) -> float:
    """CPU ms the page's main thread has used so far (Chromium's ThreadTime): robust to other load."""
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}["ThreadTime"] * 1e3


def browser_visit(browser, url: str, timeout_s: float, profile: bool = False) -> dict:
    """One fresh context (no cache, no cookies): ms from navigation start to each mark, and
    ``main_cpu``, the CPU ms the page's main thread had used when the chart was seen (read within
    ~10 ms of it: a little of the work after the chart may count). With
    ``profile``, also what the page had when its first chart appeared: ``chunks``, the scripts and
    style sheets fetched before it (name, kB, start and end ms), and ``kinds``, the elements drawn."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page, cdp = open_to_first_chart(ctx, url, timeout_s)
        marks = page.evaluate("window.__marks")
        marks["main_cpu"] = main_thread_ms(cdp)
        page.wait_for_function("'visible_chart' in window.__marks", timeout=timeout_s * 1000, polling=10)
        marks["main_cpu_visible"] = main_thread_ms(cdp)
        marks = {**page.evaluate("window.__marks"), **marks}
        if profile:
            marks["chunks"] = page.evaluate(PROFILE_CHUNKS, marks["chart"])
            marks["kinds"] = page.evaluate(PROFILE_KINDS)
        return marks
    finally:
        ctx.close()


# The scripts and style sheets a page fetched before its first chart: [name, kB, start ms, end ms].
PROFILE_CHUNKS = """chart => performance.getEntriesByType('resource')
  .filter(e => e.startTime < chart && /[.](js|css)$/.test(e.name))
  .map(e => [e.name.split('/').pop(), Math.round(e.encodedBodySize / 1e3), Math.round(e.startTime), Math.round(e.responseEnd)])"""
# The element kinds in the page now (data-testid of each element container's child), counted.
PROFILE_KINDS = """(() => { const n = {};
  document.querySelectorAll('[data-testid=stElementContainer] > [data-testid]').forEach(e => { n[e.dataset.testid] = (n[e.dataset.testid] || 0) + 1; });
  return n; })()"""


async def protocol_first_run(url: str, page: str) -> dict[str, float]:
    """Server side of a first visit: rerun sent -> first element, first chart, script finished (s)."""
    async with Session(url, page, timeout_s=120) as s:
        r = await s.open()
    marks = {"first_element_s": r.first_element_s, "chart_s": r.first_chart_s, "finished_s": r.elapsed_s}
    return {k: v for k, v in marks.items() if v is not None}


def _median(rows: list[dict[str, float]], key: str) -> float:
    values = [r[key] for r in rows if key in r]
    return statistics.median(values) if values else float("nan")


def _print_profile(name: str, page: str, marks: dict) -> None:
    big = [c for c in marks["chunks"] if c[1] >= 50]
    print(f"profile {name} /{page}: chart at {marks['chart']:.0f} ms; chunks of 50 kB or more fetched before it: "
          + ", ".join(f"{n.split('.')[0]} {kb} kB ({t0}-{t1} ms)" for n, kb, t0, t1 in big))
    kinds = marks["kinds"]
    print(f"  {sum(kinds.values())} elements drawn by then: "
          + ", ".join(f"{k.removeprefix('st')} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=7, help="fresh browser sessions per app (1-50)")
    p.add_argument("--page", default="", help="app page path to open (default: the default page, memory)")
    p.add_argument("--pages", default="", help="several pages, comma-separated (memory,frontier,load_test,planner); "
                                               "the servers are shared, the visits interleaved")
    p.add_argument("--baseline", type=Path, default=None,
                   help="another checkout of this app (its folder) served the same way beside this one, "
                        "e.g. /work/main: before and after in one run")
    p.add_argument("--profile", action="store_true",
                   help="print, per app and page, the JS/CSS chunks fetched before the first chart and the elements "
                        "drawn by then (from the last repetition)")
    p.add_argument("--timeout", type=float, default=120, help="seconds to wait for one first chart")
    a = p.parse_args(argv)
    if not 1 <= a.reps <= 50:
        p.error("--reps must be in 1-50")
    if a.baseline is not None and not (a.baseline / "app.py").is_file():
        p.error(f"--baseline: no app.py in {a.baseline}")
    page_list = [x.strip() for x in a.pages.split(",") if x.strip()] if a.pages else [a.page]
    page_list = ["" if x == "memory" else x for x in page_list]  # the default page
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found (apt-get install chromium)", file=sys.stderr)
        return 2
    load_before = os.getloadavg()
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="first-paint-")))
        minimal_dir = tmp / "minimal"
        minimal_dir.mkdir()
        (minimal_dir / "minimal_app.py").write_text(MINIMAL_APP)
        bases = {"app": stack.enter_context(load.single_server(tmp))[0]}
        if a.baseline is not None:
            bases["baseline"] = stack.enter_context(load.single_server(tmp, app=a.baseline.resolve() / "app.py"))[0]
        bases["minimal"] = stack.enter_context(load.single_server(tmp, app=minimal_dir / "minimal_app.py"))[0]
        names = list(bases)
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.callback(browser.close)

        def url(name: str, page: str) -> str:
            return f"{bases[name]}/{'' if name == 'minimal' else page}"

        print(f"# first paint: {a.reps} fresh browser sessions per app and page, interleaved; {os.cpu_count()} CPUs, "
              f"load average {load_before[0]:.2f} (shared machines: compare the ratio, not the milliseconds)")
        for name in names:
            for page in (page_list if name != "minimal" else [""]):
                marks = browser_visit(browser, url(name, page), a.timeout)
                print(f"cold server, first visit: {name:8s} /{page:10s} chart at {marks['chart']:.0f} ms")
        rows: dict[tuple[str, str], list[dict]] = {}
        for rep in range(a.reps):
            for page in page_list:
                k = rep % len(names)
                order = names[k:] + names[:k]  # each app goes first in turn
                for name in order:
                    key = (name, "" if name == "minimal" else page)
                    rows.setdefault(key, []).append(browser_visit(browser, url(name, page), a.timeout,
                                                                  profile=a.profile and rep == a.reps - 1))
                print(f"rep {rep + 1} /{page}: " + ", ".join(f"{n} {rows[(n, '' if n == 'minimal' else page)][-1]['chart']:.0f} ms"
                                                             for n in names), flush=True)
        server = {(name, page): load.run_blocking(protocol_first_run(bases[name], "" if name == "minimal" else page))
                  for name in names for page in (page_list if name != "minimal" else [""])}
    load_after = os.getloadavg()
    if a.profile:
        print()
        for (name, page), r in rows.items():
            _print_profile(name, page, r[-1])

    mini = rows[("minimal", "")]
    ratios = {}
    for page in page_list:
        app = rows[("app", page)]
        print(f"\n## /{page or 'memory (default page)'}")
        print("\n| median over fresh sessions | app | minimal | app / minimal |" if a.baseline is None else
              "\n| median over fresh sessions | app | baseline | minimal | app / minimal | baseline / minimal |")
        print("|---|---|---|---|" if a.baseline is None else "|---|---|---|---|---|---|")
        for key, label in (("shell", "app shell drawn"), ("first_element", "first element"),
                           ("chart", "**first chart**"), ("main_cpu", "browser main-thread CPU to the first chart"),
                           ("visible_chart", "first chart shown (its second draw)"),
                           ("main_cpu_visible", "browser main-thread CPU to the chart shown")):
            x, y = _median(app, key), _median(mini, key)
            if a.baseline is None:
                print(f"| {label} | {x:.0f} ms | {y:.0f} ms | {x / y:.2f} |")
            else:
                b = _median(rows[("baseline", page)], key)
                print(f"| {label} | {x:.0f} ms | {b:.0f} ms | {y:.0f} ms | {x / y:.2f} | {b / y:.2f} |")
        for key, label in (("first_element_s", "server: first element sent"), ("chart_s", "server: first chart sent"),
                           ("finished_s", "server: script finished")):
            x, y = server[("app", page)].get(key, float("nan")), server[("minimal", "")].get(key, float("nan"))
            if a.baseline is None:
                print(f"| {label} (one warm first run) | {x * 1e3:.0f} ms | {y * 1e3:.0f} ms | {x / y:.2f} |")
            else:
                b = server[("baseline", page)].get(key, float("nan"))
                print(f"| {label} (one warm first run) | {x * 1e3:.0f} ms | {b * 1e3:.0f} ms | {y * 1e3:.0f} ms "
                      f"| {x / y:.2f} | {b / y:.2f} |")
        ratios[page] = _median(app, "chart") / _median(mini, "chart")
    print(f"\nload average (1 min) {load_before[0]:.2f} at the start, {load_after[0]:.2f} at the end")
    for page in page_list:
        ratio = ratios[page]
        verdict = "within" if ratio <= 1.3 else "ABOVE"
        where = "" if len(page_list) == 1 else f" /{page or 'memory'}"
        extra = (f"; main-thread CPU {_median(rows[('app', page)], 'main_cpu') / _median(mini, 'main_cpu'):.2f}"
                 f"; to the chart shown {_median(rows[('app', page)], 'main_cpu_visible') / _median(mini, 'main_cpu_visible'):.2f}")
        if a.baseline is not None:
            base = rows[("baseline", page)]
            extra += (f"; baseline {_median(base, 'chart') / _median(mini, 'chart'):.2f}, "
                      f"main-thread CPU {_median(base, 'main_cpu') / _median(mini, 'main_cpu'):.2f}, "
                      f"to the chart shown {_median(base, 'main_cpu_visible') / _median(mini, 'main_cpu_visible'):.2f}")
        print(f"first chart ratio app / minimal{where} = {ratio:.2f} ({verdict} the 1.3x target){extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
