"""SVG ``scatter`` against WebGL ``scattergl``: the browser main thread's CPU to draw N markers.

    .venv/bin/python bench/scatter_crossover.py --points 250,500,1000,2000,4000 --traces 17 --reps 3

Each draw is a fresh page (a new browser context, so WebGL's context is created as on a first
visit) with Plotly's own bundle (the plotly Python package's ``plotly.min.js``: the same library
Streamlit bundles in its Plotly chunk) loaded first and not counted; then ``Plotly.newPlot`` of N
markers split over ``--traces`` traces (as the planner's one trace per GPU, log axes, a hover
template and customdata), timed as the main thread's CPU (CDP ``Performance.getMetrics``
ThreadTime) from just before ``newPlot`` to two animation frames after it resolved (the frame
that shows the points). Headless Chromium with ``--disable-gpu`` (as bench/first_paint.py): WebGL
runs on SwiftShader, a software renderer, so context creation costs what a machine without a GPU
pays; a desktop with a GPU pays less for the context, more per SVG marker on a slow CPU.
Prints the median per (N, type) and the crossover: the smallest N where scattergl is cheaper.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from first_paint import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

DRAW = """async ([n, traces, type]) => {
  const data = [];
  let seed = 1; const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (let k = 0; k < traces; k++) {
    const m = Math.floor(n / traces) + (k < n % traces ? 1 : 0);
    const x = new Float64Array(m), y = new Float64Array(m), cd = [];
    for (let i = 0; i < m; i++) { x[i] = Math.exp(4 * rnd()); y[i] = Math.exp(3 * rnd()); cd.push([i, 2 * i, 0.5]); }
    data.push({type, mode: 'markers', name: 'GPU ' + k, x, y, customdata: cd, text: x.map(() => 0),
               hovertemplate: 'TP %{customdata[0]} x %{customdata[1]}<br>%{x:.2f} s, $%{y:.3f}/M<extra></extra>',
               marker: {size: 7, opacity: 0.6}});
  }
  const div = document.createElement('div'); div.style.width = '1200px'; div.style.height = '650px';
  document.body.appendChild(div);
  await Plotly.newPlot(div, data, {xaxis: {type: 'log'}, yaxis: {type: 'log'}, legend: {orientation: 'h'}});
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}"""


def draw_cpu_ms(browser, bundle: Path, n: int, traces: int, kind: str) -> float:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = ctx.new_page()
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(bundle))
        cdp = ctx.new_cdp_session(page)
        cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
        before = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}["ThreadTime"]
        page.evaluate(DRAW, [n, traces, kind])
        after = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}["ThreadTime"]
        return (after - before) * 1e3
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--points", default="250,500,1000,2000,4000")
    p.add_argument("--traces", type=int, default=17)
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args(argv)
    import plotly
    from playwright.sync_api import sync_playwright

    bundle = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    points = [int(x) for x in a.points.split(",")]
    med: dict[tuple[int, str], float] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        draw_cpu_ms(browser, bundle, 100, 1, "scattergl")  # warm the browser process
        rows: dict[tuple[int, str], list[float]] = {}
        for _ in range(a.reps):
            for n in points:
                for kind in ("scatter", "scattergl"):
                    rows.setdefault((n, kind), []).append(draw_cpu_ms(browser, bundle, n, a.traces, kind))
        browser.close()
    print(f"| markers ({a.traces} traces) | scatter (SVG) CPU ms | scattergl (WebGL) CPU ms |\n|---|---|---|")
    for n in points:
        med[(n, "scatter")] = statistics.median(rows[(n, "scatter")])
        med[(n, "scattergl")] = statistics.median(rows[(n, "scattergl")])
        print(f"| {n} | {med[(n, 'scatter')]:.0f} | {med[(n, 'scattergl')]:.0f} |")
    cross = next((n for n in points if med[(n, "scattergl")] < med[(n, "scatter")]), None)
    print(json.dumps({"crossover_points": cross}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
