"""Where the browser's main thread spends its CPU to the first chart shown, by Chromium trace event.

    .venv/bin/python bench/paint_trace.py --page frontier --reps 3
    .venv/bin/python bench/paint_trace.py --apps main=/work/main/app.py,new=app.py --page planner
    .venv/bin/python bench/paint_trace.py --elements selectbox,metric,markdown   # what one element costs

Per app and repetition a fresh browser context (headless Chromium, as bench/first_paint.py) is
opened with Chromium's tracing on (``devtools.timeline``, ``v8.execute``, ``blink``) until the first
chart is *shown* (first_paint.py's ``visible_chart`` mark: Streamlit's second draw). The trace's
complete events on the renderer's main thread are nested by time, and each event's *thread time*
(``tdur``: CPU, not wall time, so the load of a shared machine counts far less than in
bench/paint_profile.py's wall-time samples) less its children's is added to its name:
``v8.evaluateModule`` (evaluating a script module: Plotly's chunk), ``FunctionCall`` and
``RunMicrotasks`` (JavaScript: React's render and effects, emotion's styles, Plotly's draws),
``MessagePort::Accept`` (React's scheduler), ``Document::recalcStyle`` and
``LocalFrameView::performLayout`` (style and layout). Medians over repetitions; the first visit of
each server (cold) is not counted. ``TOTAL`` is the sum, within a few per cent of first_paint.py's
``main_cpu_visible``; the last line gives each app's total / the minimal app's.

``--elements KIND,...`` adds, per kind, a synthetic app: the minimal app with 20 elements of that
kind between its title and its chart (``ELEMENTS``); (its total - the minimal's) / 20 is what one
such element adds to a first chart, its JavaScript chunk's first use included.

Apps share the machine and are visited in turn, each first in turn. Exit status 0 always (a benchmark).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402
from first_paint import CHROMIUM, CHROMIUM_ARGS, MINIMAL_APP, OBSERVER  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = ["devtools.timeline", "v8.execute", "blink"]
# One element of each kind, the i-th (keys for the widgets): the same text lengths as the app's own.
ELEMENTS = {
    "markdown": 'st.markdown(f"**Bold** text {i} with a [link](https://example.org) and a few more words.")',
    "caption": 'st.caption(f"A caption {i}: 8,192 tokens, 40 GiB, a few more words of text.")',
    "html": 'st.html(f"<b>Bold</b> text {i} with a <a href=\'https://example.org\'>link</a> and more words.")',
    "metric": 'st.metric(f"Metric {i}", f"{i * 3.1:.2f} GiB", help="help text", border=True)',
    "selectbox": 'st.selectbox(f"Select {i}", ["a", "b", "c"], key=f"w{i}")',
    "number_input": 'st.number_input(f"Number {i}", 0, 100, 5, key=f"w{i}")',
    "toggle": 'st.toggle(f"Toggle {i}", key=f"w{i}")',
    "radio": 'st.radio(f"Radio {i}", ["a", "b"], horizontal=True, key=f"w{i}")',
    "expander": 'st.expander(f"Section {i}", on_change="rerun", key=f"w{i}")',
    "button": 'st.button(f"Button {i}", key=f"w{i}")',
    "download_button": 'st.download_button(f"Download {i}", data="x", key=f"w{i}")',
}
N_ELEMENTS = 20


def synthetic_app(kind: str) -> str:
    """The minimal app with ``N_ELEMENTS`` elements of ``kind`` before its chart."""
    head, chart = MINIMAL_APP.rsplit("st.plotly_chart", 1)
    return f"{head}for i in range({N_ELEMENTS}):\n    {ELEMENTS[kind]}\nst.plotly_chart{chart}"


def self_thread_ms(trace: dict, until_ms: float) -> dict[str, float]:
    """Thread ms per event name on the renderer main thread (the one with most events), each event's
    own time less its children's, for events starting within ``until_ms`` of the thread's first."""
    events = trace["traceEvents"]
    mains = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
             and e["args"].get("name") == "CrRendererMain"}
    by_thread: dict[tuple, list] = defaultdict(list)
    for e in events:
        if (e.get("pid"), e.get("tid")) in mains and e.get("ph") == "X" and "dur" in e:
            by_thread[(e["pid"], e["tid"])].append(e)
    if not by_thread:
        return {}
    main = sorted(max(by_thread.values(), key=len), key=lambda e: (e["ts"], -e["dur"]))
    t0 = main[0]["ts"]
    stack: list[list] = []  # [event, own thread µs]
    own: list[list] = []
    for e in main:
        if e["ts"] - t0 > until_ms * 1e3:
            break
        while stack and stack[-1][0]["ts"] + stack[-1][0]["dur"] <= e["ts"]:
            stack.pop()
        cpu = e.get("tdur", e["dur"])
        if stack:
            stack[-1][1] -= cpu
        rec = [e, cpu]
        stack.append(rec)
        own.append(rec)
    out: dict[str, float] = defaultdict(float)
    for e, us in own:
        out[e["name"]] += us / 1e3
    return out


def visit(browser, url: str, timeout_s: float) -> dict[str, float]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = ctx.new_page()
        page.add_init_script(OBSERVER)
        browser.start_tracing(page=page, categories=CATEGORIES)
        page.goto(url, wait_until="commit")
        page.wait_for_function("window.__marks && 'visible_chart' in window.__marks", timeout=timeout_s * 1e3,
                               polling=10)
        shown = page.evaluate("window.__marks.visible_chart")
        return self_thread_ms(json.loads(browser.stop_tracing()), shown)
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--apps", default=f"app={ROOT / 'app.py'}",
                   help="name=path/to/app.py,... (default: this checkout); the minimal app is always added")
    p.add_argument("--page", default="", help="page path of the apps (default: their default page)")
    p.add_argument("--elements", default="", help="synthetic apps: " + ",".join(ELEMENTS))
    p.add_argument("--reps", type=int, default=3, help="fresh sessions per app (1-20)")
    p.add_argument("--top", type=int, default=8, help="event names printed")
    p.add_argument("--timeout", type=float, default=120)
    a = p.parse_args(argv)
    if not 1 <= a.reps <= 20:
        p.error("--reps must be in 1-20")
    kinds = [k.strip() for k in a.elements.split(",") if k.strip()]
    if bad := [k for k in kinds if k not in ELEMENTS]:
        p.error(f"--elements: unknown {bad}; known: {', '.join(ELEMENTS)}")
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found (apt-get install chromium)", file=sys.stderr)
        return 2
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="paint-trace-")))
        apps: dict[str, tuple[Path, str]] = {}
        for item in a.apps.split(","):
            name, _, path = item.partition("=")
            apps[name.strip()] = (Path(path.strip()).resolve(), a.page)
        for kind in ["minimal", *kinds]:
            d = tmp / kind
            d.mkdir()
            (d / "app.py").write_text(MINIMAL_APP if kind == "minimal" else synthetic_app(kind))
            apps[kind if kind == "minimal" else f"{N_ELEMENTS} {kind}"] = (d / "app.py", "")
        bases = {name: stack.enter_context(load.single_server(tmp, app=path))[0] for name, (path, _) in apps.items()}
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.callback(browser.close)
        load_before = os.getloadavg()[0]
        rows: dict[str, list[dict[str, float]]] = defaultdict(list)
        names = list(apps)
        for rep in range(a.reps + 1):
            k = rep % len(names)
            for name in names[k:] + names[:k]:
                r = visit(browser, f"{bases[name]}/{apps[name][1]}", a.timeout)
                if rep:  # the first visit of each server is its cold start
                    rows[name].append(r)
        load_after = os.getloadavg()[0]

    def med(name: str, key: str | None = None) -> float:
        return statistics.median([(sum(r.values()) if key is None else r.get(key, 0.0)) for r in rows[name]])

    first = names[0]
    events = sorted({e for rs in rows.values() for r in rs for e in r}, key=lambda e: -med(first, e))[:a.top]
    print(f"# main-thread CPU (ms of trace thread time) to the first chart shown, median of {a.reps} fresh sessions; "
          f"load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} CPUs")
    print("| event | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for e in events:
        print(f"| {e} | " + " | ".join(f"{med(n, e):.0f}" for n in names) + " |")
    print("| TOTAL | " + " | ".join(f"{med(n):.0f}" for n in names) + " |")
    print("| TOTAL / minimal | " + " | ".join(f"{med(n) / med('minimal'):.2f}" for n in names) + " |")
    for kind in kinds:
        name = f"{N_ELEMENTS} {kind}"
        print(f"one {kind}: {(med(name) - med('minimal')) / N_ELEMENTS:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
