"""Where the browser's main thread spends its CPU before the first chart of a page.

    .venv/bin/python bench/paint_profile.py --pages memory,frontier,load_test,planner --reps 3

One server of this checkout (bench/load.py); per page and repetition a fresh browser context
(Chromium, headless, as bench/first_paint.py) with the V8 sampling profiler (CDP ``Profiler``, 200 us)
running from navigation to the first chart's SVG. The samples up to that moment are attributed to
buckets by the innermost matching frame of their stack (``BUCKETS``: Plotly's trace modules by
their function names, which survive Streamlit's minification as property names, JSON parsing,
Streamlit's React render); time with no JavaScript on the stack ("(program)": layout, style, paint,
compile; "(garbage collector)") is reported as such. Medians over repetitions, ms of samples: the
sampler runs on wall time, so on a loaded machine the buckets add up to more than the main
thread's CPU (printed beside them, CDP ``Performance.getMetrics`` ThreadTime): compare buckets
with one another and with another checkout's (``--app``), not with the CPU. Also prints each chart's
trace types and the size of ``JSON.stringify`` of its data and layout as Plotly holds them (typed
arrays spelled out: larger than what was sent; the sent size is the ``plotly_chart`` element's spec).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402
from first_paint import CHROMIUM, CHROMIUM_ARGS, main_thread_ms, open_to_first_chart  # noqa: E402

# (bucket, regex on "functionName url") checked from the innermost frame outwards; first hit wins.
BUCKETS = [
    ("webgl: context + regl", r"getContext|createRegl|regl|webgl|WebGL|glContext|fboResize|_glcanvas|glplot"),
    ("plotly: scattergl", r"scattergl|sceneUpdate|scene\.|marker2d|line2d|error2d"),
    ("plotly: SVG scatter draw", r"plotOne|plotPoints|drawPoints|selectPoints|singlePointStyle|pointStyle|Drawing\.|styleOnSelect"),
    ("plotly: autorange/ticks", r"autorange|calcTicks|tickText|doAutoRange|findExtremes|padExtremes"),
    ("plotly: legend", r"legend|Legend"),
    ("plotly: calc", r"calcdata|doCalcdata|\.calc\b|calc"),
    ("plotly: supplyDefaults", r"supplyDefaults|coerce|supplyTraceDefaults|supplyLayout"),
    ("plotly: draw other", r"drawFramework|drawData|drawAxes|doTicks|lsInner|plot|Plotly|drawMain"),
    ("JSON.parse", r"JSON|parse"),
    ("react/streamlit", r"react|commit|render|Fiber|useEffect|useState"),
]
COMPILED = [(name, re.compile(rx)) for name, rx in BUCKETS]


def _webgl_context_frames(profile: dict) -> set[tuple[str, int, int]]:
    """(url, line, column) of regl's ``getContext`` wrapper in Streamlit's Plotly chunk: minified to a
    one-letter name, found by its body (``return e.getContext(n,t)``)."""
    out = set()
    for url in {n["callFrame"]["url"] for n in profile["nodes"] if "PlotlyChart" in n["callFrame"]["url"]}:
        path = next(Path(sys.prefix).glob("lib/python3*/site-packages/streamlit/static/static/js/" + url.rsplit("/", 1)[-1]), None)
        if path is None:
            continue
        for i, line in enumerate(path.read_text().split("\n")):
            for m in re.finditer(r"function [A-Za-z_$]{1,2}\(([a-z])\)\{try\{return [a-z]\.getContext\(", line):
                out.add((url, i, m.start() + len("function ") + 0))
    return out


def attribute(profile: dict, until_us: float) -> dict[str, float]:
    """ms of samples per bucket, up to ``until_us`` after the profile's start."""
    gl = _webgl_context_frames(profile)
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {}
    for n in profile["nodes"]:
        for c in n.get("children", []):
            parent[c] = n["id"]
    cache: dict[int, str] = {}

    def bucket(nid: int) -> str:
        if nid in cache:
            return cache[nid]
        top = nodes[nid]["callFrame"]["functionName"]
        if top in ("(program)", "(garbage collector)", "(idle)"):
            cache[nid] = top
            return top
        cur = nid
        while cur is not None:
            cf = nodes[cur]["callFrame"]
            if any(cf["url"] == u and cf["lineNumber"] == ln and abs(cf["columnNumber"] - c) < 4 for u, ln, c in gl):
                cache[nid] = "webgl: getContext"
                return cache[nid]
            for name, rx in COMPILED:
                if rx.search(cf["functionName"]):
                    cache[nid] = name
                    return name
            cur = parent.get(cur)
        url = nodes[nid]["callFrame"]["url"].rsplit("/", 1)[-1].split(".")[0] or "(native)"
        cache[nid] = "other js: " + url
        return cache[nid]

    out: dict[str, float] = defaultdict(float)
    t = 0.0
    for sid, dt in zip(profile["samples"], profile["timeDeltas"]):
        t += dt
        if t > until_us:
            break
        out[bucket(sid)] += dt / 1e3
    return out


def top_functions(profile: dict, until_us: float, n: int = 25) -> list[tuple[str, float]]:
    nodes = {x["id"]: x for x in profile["nodes"]}
    self_ms: dict[str, float] = defaultdict(float)
    t = 0.0
    for sid, dt in zip(profile["samples"], profile["timeDeltas"]):
        t += dt
        if t > until_us:
            break
        cf = nodes[sid]["callFrame"]
        self_ms[f"{cf['functionName'] or '(anon)'} @{cf['url'].rsplit('/', 1)[-1][:30]}:{cf['lineNumber']}:{cf['columnNumber']}"] += dt / 1e3
    return sorted(self_ms.items(), key=lambda kv: -kv[1])[:n]


def visit(browser, url: str, timeout_s: float) -> tuple[dict, dict]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        def start_profiler(cdp) -> None:
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 200})
            cdp.send("Profiler.start")

        page, cdp = open_to_first_chart(ctx, url, timeout_s, before=start_profiler)
        cpu = main_thread_ms(cdp)
        prof = cdp.send("Profiler.stop")["profile"]
        marks = page.evaluate("window.__marks")
        marks["main_cpu"] = cpu
        marks["figure_kB"] = page.evaluate(
            "(() => { let n = 0; document.querySelectorAll('.js-plotly-plot').forEach(e => {"
            " n += JSON.stringify({d: e.data, l: e.layout}).length; }); return n / 1e3; })()")
        marks["traces"] = page.evaluate(
            "[...document.querySelectorAll('.js-plotly-plot')].map(e => (e.data || []).map(t => t.type + ':' + "
            "((t.x && t.x.length) || 0)).join(' '))")
        return prof, marks
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", default="memory,frontier,load_test,planner")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--app", type=Path, default=None, help="another checkout's app.py")
    p.add_argument("--top", type=int, default=0, help="also print the N functions with most self time (last rep)")
    a = p.parse_args(argv)
    pages = [x.strip() for x in a.pages.split(",") if x.strip()]
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, load.single_server(Path(tmp), app=a.app) as (base, _), \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for page in pages:  # cold server visit, not counted
            visit(browser, f"{base}/{'' if page == 'memory' else page}", 120)
        for page in pages:
            buckets: dict[str, list[float]] = defaultdict(list)
            marks_all = []
            for _ in range(a.reps):
                prof, marks = visit(browser, f"{base}/{'' if page == 'memory' else page}", 120)
                # the profile starts just before navigation; the chart mark is ms since navigation start
                b = attribute(prof, marks["chart"] * 1e3 + 20_000)
                for k in set(b) | set(buckets):
                    buckets[k].append(b.get(k, 0.0))
                marks_all.append(marks)
            med = {k: statistics.median(v + [0.0] * (a.reps - len(v))) for k, v in buckets.items()}
            print(f"\n## /{page}: chart at {statistics.median(m['chart'] for m in marks_all):.0f} ms, main-thread CPU "
                  f"{statistics.median(m['main_cpu'] for m in marks_all):.0f} ms, figure JSON in the page "
                  f"{marks_all[-1]['figure_kB']:.0f} kB; traces {marks_all[-1]['traces']}")
            for k, v in sorted(med.items(), key=lambda kv: -kv[1]):
                if v >= 5:
                    print(f"  {v:7.0f} ms  {k}")
            if a.top:
                for name, ms in top_functions(prof, marks["chart"] * 1e3 + 20_000, a.top):
                    print(f"    {ms:6.1f} ms self  {name}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
