"""Browser tests of the layout on a laptop (1440×900), a phone (390×844) and a projector (1920×1080).

Few browser sessions (one context per screen size, every page visited in turn): the whole e2e
suite runs on 2-core CI machines.
- Laptop: no metric value or label, nor a widget's label, is cut (an element's scrollWidth never exceeds its clientWidth),
  in both languages, on every page of ui.shell.PAGES.
- Phone: the sidebar starts collapsed; no chart title, axis title, tick label, legend entry or
  annotation is outside its chart; no legend scrolls; legends, axis titles and subplot titles do not overlap each other or
  another subplot's plot area.
- Projector, presenter mode: the first chart is entirely on the first screen.
"""

import re

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Browser, Page, expect  # noqa: E402

from ui.shell import PAGES  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 45_000  # ms


def _path(spec) -> str:
    return "/" if spec.default else "/" + spec.path.removeprefix("pages/").removesuffix(".py")


PATHS = [_path(p) for p in PAGES]

TRUNCATED_JS = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('[data-testid="stMetric"], [data-testid="stMetric"] *, '
                                            + '[data-testid="stWidgetLabel"], [data-testid="stWidgetLabel"] *')) {
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1)
      bad.push(`${el.tagName}.${el.getAttribute('data-testid') || ''} "${el.textContent.trim().slice(0, 50)}" `
               + `${el.scrollWidth} > ${el.clientWidth}`);
  }
  return bad;
}"""

# Every text of every chart inside its chart and the window; legend, axis titles and annotations
# (subplot titles) not overlapping each other, and axis titles not over another subplot's plot area.
CHART_JS = """() => {
  const bad = [], box = e => e.getBoundingClientRect();
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const name = e => (e.textContent || '').trim().slice(0, 40);
  document.querySelectorAll('.chart-title').forEach(el => {
    if (el.scrollWidth > el.clientWidth + 1) bad.push(`chart title cut: ${name(el)}`);
  });
  document.querySelectorAll('.js-plotly-plot').forEach((plot, i) => {
    const svg = box(plot.querySelector('.main-svg'));
    if (svg.right > window.innerWidth + 1) bad.push(`chart ${i} wider than the window`);
    const texts = plot.querySelectorAll('.g-xtitle text, .g-ytitle text, .g-x2title text, .g-y2title text, '
      + '.xtick text, .ytick text, .x2tick text, .y2tick text, .annotation-text, .textpoint text');
    texts.forEach(t => {
      const b = box(t);
      if (b.width === 0) return;
      if (b.left < svg.left - 1 || b.right > svg.right + 1 || b.top < svg.top - 1 || b.bottom > svg.bottom + 1)
        bad.push(`chart ${i}: "${name(t)}" outside its chart`);
    });
    const legend = plot.querySelector('.legend');
    const scroll = plot.querySelector('.legend .scrollbar');  // Plotly scrolls a legend taller than its maxheight
    if (scroll && box(scroll).height > 0) bad.push(`chart ${i}: the legend scrolls`);
    const titles = [...plot.querySelectorAll('[class^="g-x"][class$="title"] text, [class^="g-y"][class$="title"] text')];
    const annots = [...plot.querySelectorAll('.annotation')].filter(a => box(a).width > 0);
    const areas = [...plot.querySelectorAll('.draglayer .nsewdrag')].map(box);
    for (const t of titles) {
      if (legend && hit(box(legend), box(t))) bad.push(`chart ${i}: legend on axis title "${name(t)}"`);
      for (const a of areas) if (hit(a, box(t))) bad.push(`chart ${i}: axis title "${name(t)}" over a plot area`);
    }
    for (let j = 0; j < annots.length; j++)
      for (let k = j + 1; k < annots.length; k++)
        if (hit(box(annots[j]), box(annots[k]))) bad.push(`chart ${i}: "${name(annots[j])}" on "${name(annots[k])}"`);
  });
  return bad;
}"""


def _open(page: Page, url: str) -> None:
    page.goto(url)
    page.locator(".js-plotly-plot, [data-testid=stAlert]").first.wait_for(timeout=LOAD)
    page.wait_for_timeout(1200)  # Plotly lays out after the element appears


def test_laptop_no_metric_truncated(browser: Browser, streamlit_url):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = ctx.new_page()
        found = {}
        for lang in ("en", "zh"):
            for path in PATHS + ["/?model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&tp=2&dtype=bfloat16"]:
                sep = "&" if "?" in path else "?"
                _open(page, f"{streamlit_url}{path}{sep}lang={lang}")
                bad = page.evaluate(TRUNCATED_JS)
                if bad:
                    found[f"{path} {lang}"] = bad
        assert not found, found
    finally:
        ctx.close()


def test_phone_sidebar_collapsed_and_charts_not_clipped(browser: Browser, streamlit_url):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        found = {}
        for k, path in enumerate(PATHS):
            lang = "zh" if k % 2 else "en"  # both languages over the pages, one visit each
            _open(page, f"{streamlit_url}{path}?lang={lang}")
            box = page.get_by_test_id("stSidebar").bounding_box()
            assert box is None or box["x"] + box["width"] <= 1, box  # collapsed: off screen
            bad = page.evaluate(CHART_JS)
            if bad:
                found[f"{path} {lang}"] = bad
        assert not found, found
    finally:
        ctx.close()


def test_presenter_mode_first_chart_above_the_fold(browser: Browser, streamlit_url):
    ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = ctx.new_page()
        for path in ("/frontier", "/", "/scheduler", "/load_test"):
            _open(page, f"{streamlit_url}{path}?present=1&lang=en")
            box = page.get_by_test_id("stSidebar").bounding_box()
            assert box is None or box["x"] + box["width"] <= 1, box  # folded away for the projector
            expect(page).to_have_url(re.compile(r"[?&]present=1"))
            chart = page.locator(".js-plotly-plot").first.bounding_box()
            assert chart is not None and chart["y"] + chart["height"] <= 1080, (path, chart)
            ticks = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.js-plotly-plot "
                                  ".xtick text')).fontSize)")
            assert ticks >= 18, ticks  # 15 px in normal mode; larger for the back of the room
        page.get_by_test_id("stExpandSidebarButton").click()
        page.get_by_test_id("stSidebar").get_by_text("Presenter mode").click()  # the switch turns it off
        expect(page).not_to_have_url(re.compile(r"[?&]present="), timeout=LOAD)
    finally:
        ctx.close()


# A selectbox shows its value in an <input> that clips it without overflowing (scrollWidth says
# nothing): measure the text with the input's font against the room inside its padding.
SELECT_VALUE_CUT_JS = """() => {
  const c = document.createElement('canvas').getContext('2d'), bad = [];
  for (const i of document.querySelectorAll('[data-testid="stMain"] [data-testid="stSelectbox"] input')) {
    if (i.clientWidth === 0) continue;
    const s = getComputedStyle(i);
    c.font = s.font;
    const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    const w = c.measureText(i.value).width;
    if (w > room + 1) bad.push(`"${i.value}" ${Math.round(w)} > ${Math.round(room)}`);
  }
  return bad;
}"""


def test_laptop_load_test_arrivals_not_cut(browser: Browser, streamlit_url):
    """Issue #19: at 1440 px the arrivals select showed "Poisson (independe…"; its column is wider now."""
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = ctx.new_page()
        found = {}
        for lang in ("en", "zh"):
            for arrival in ("poisson", "gamma", "closed", "burst"):
                _open(page, f"{streamlit_url}/load_test?lt_arrival={arrival}&lt_requests=200&lt_sweep=false&lang={lang}")
                page.get_by_test_id("stSelectbox").first.wait_for(timeout=LOAD)
                bad = page.evaluate(SELECT_VALUE_CUT_JS) + page.evaluate(TRUNCATED_JS)
                if bad:
                    found[f"{arrival} {lang}"] = bad
        assert not found, found
    finally:
        ctx.close()


# A phone's browser (iOS Safari's User-Agent: what ui.layout.chart reads) at an iPhone's 390 × 844.
PHONE_UA = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            "Version/17.5 Mobile/15E148 Safari/604.1")
PLOT_HEIGHTS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(p => {
  const r = p.querySelector('.nsewdrag');  // the first subplot's drag area: its plot area
  return {plot: r ? Math.round(r.getBoundingClientRect().height) : 0,
          modebar: !!p.querySelector('.modebar-container .modebar') &&
                   getComputedStyle(p.querySelector('.modebar-container .modebar')).opacity !== '0'};
})"""


def test_phone_charts_keep_their_plot_under_the_legend(browser: Browser, streamlit_url):
    """Issue #19: at 390 px the memory stack's plot was ~110 px under its 8 legend rows and a touch
    screen kept Plotly's mode bar up over the subplot titles (ui.phone)."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                              user_agent=PHONE_UA)
    try:
        page = ctx.new_page()
        for path, lang in (("/", "en"), ("/", "zh"), ("/scheduler", "en")):
            _open(page, f"{streamlit_url}{path}?lang={lang}")
            page.wait_for_timeout(1500)
            charts = page.evaluate(PLOT_HEIGHTS_JS)
            assert charts and charts[0]["plot"] >= 180, (path, lang, charts)  # ~200 at 1440 px; was ~110 here
            assert not any(c["modebar"] for c in charts), (path, charts)
    finally:
        ctx.close()


# Every keyed element (class st-key-…) that takes room on the page, counted by key.
SHOWN_TWICE_JS = """() => { const n = {};
  document.querySelectorAll('[data-testid=stMain] [class*="st-key-"]').forEach(e => {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || getComputedStyle(e).display === 'none') return;
    for (const c of e.classList) if (c.startsWith('st-key-')) n[c] = (n[c] || 0) + 1; });
  return Object.entries(n).filter(([k, v]) => v > 1).map(([k, v]) => k + ' x' + v); }"""


def test_laptop_load_test_shows_no_element_twice_while_it_runs(browser: Browser, streamlit_url):
    """Issue #19: "no stale duplicate widgets while a run is in progress". While a new run is on its way
    (the sidebar's context changed: a new simulation), every keyed element (widgets, the two CDF charts,
    the cards' grid) is shown once. Streamlit does keep the old chart's node next to the new one for
    the rest of the run (a chart's element id follows its data), but hidden (display: none, 0 × 0):
    counted here as the user sees them, every 50 ms."""
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = ctx.new_page()
        _open(page, f"{streamlit_url}/load_test?lt_requests=2000&lang=en")
        page.locator("[data-testid=stSidebar] .st-key-input_tokens input").wait_for(timeout=LOAD)
        page.locator("[data-test-script-state=notRunning]").wait_for(timeout=LOAD)
        twice, samples = set(), 0
        for value in ("2500", "2200", "2600"):
            box = page.locator("[data-testid=stSidebar] .st-key-input_tokens input")
            box.fill(value)
            box.press("Enter")
            page.wait_for_timeout(150)
            for _ in range(400):  # up to 20 s
                twice.update(page.evaluate(SHOWN_TWICE_JS))
                samples += 1
                if page.locator("[data-test-script-state=notRunning]").count():
                    break
                page.wait_for_timeout(50)
            page.locator(".st-key-lt_cdf_ttft .js-plotly-plot").first.wait_for(timeout=LOAD)
        assert samples > 3 and not twice, twice
    finally:
        ctx.close()
