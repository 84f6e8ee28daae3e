"""Browser tests of the first view (ui.first_view, static/first-view.js): a fresh tab draws the page
down to its first chart, then the whole page once that chart is shown, without the page jumping and
with the link intact; a person can press the button if the script does not run."""

import re

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Page, expect  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 30_000  # ms: first load of a page, server warm-up included
SHOWN = ".js-plotly-plot:not([style*='visibility: hidden']) .main-svg"  # Streamlit's second, shown draw
# Installed before any script of the page runs: when the first chart is shown and when the sidebar's
# model select arrives (the whole page), and where the chart's top was at each.
WATCH = """
(() => {
  window.__fv = {};
  const look = () => {
    const m = window.__fv, now = performance.now();
    const chart = document.querySelector(%r);
    if (chart && !('chart' in m)) { m.chart = now; m.chart_top = chart.getBoundingClientRect().top + scrollY;
                                    m.model_then = !!document.querySelector('.st-key-model');
                                    window.__fvChart = chart.closest('.js-plotly-plot'); }
    if (document.querySelector('.st-key-model') && !('whole' in m)) m.whole = now;
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true});
})();
""" % SHOWN
LINK = "/frontier?lang=en&concurrency=40&kv_cache_dtype=fp8&sla_ttft_ms=800"


def test_a_fresh_tab_shows_the_chart_first_then_the_whole_page_in_place(page: Page, streamlit_url):
    page.add_init_script(WATCH)
    page.goto(streamlit_url + LINK)
    expect(page.locator(".st-key-model")).to_be_visible(timeout=LOAD)  # the whole page came
    expect(page.locator(".st-key-first_view_more")).to_have_count(0)
    marks = page.evaluate("window.__fv")
    assert not marks["model_then"] and marks["chart"] < marks["whole"]  # the chart came first, alone
    # the link kept every value, and the page reads them: its SLA box, the sidebar's KV precision
    expect(page).to_have_url(re.compile(r"concurrency=40.*kv_cache_dtype=fp8|kv_cache_dtype=fp8.*concurrency=40"))
    expect(page.locator(".st-key-sla_ttft_ms input")).to_have_value("800")
    expect(page.locator(".st-key-concurrency input")).to_have_value("40")
    # the chart stayed where it was drawn (the boxes above it had their blanks), within a line
    top = page.evaluate("document.querySelector(%r).getBoundingClientRect().top + scrollY" % SHOWN)
    assert abs(top - marks["chart_top"]) < 40, (marks["chart_top"], top)
    assert page.evaluate("document.querySelector('.js-plotly-plot') === window.__fvChart")  # not mounted again


def test_without_the_script_the_button_loads_the_whole_page(page: Page, streamlit_url):
    page.route("**/first-view.js", lambda route: route.abort())
    page.goto(streamlit_url + "/?lang=en&concurrency=24")
    page.locator(SHOWN).first.wait_for(timeout=LOAD)
    button = page.locator(".st-key-first_view_more button")
    expect(button).to_have_text("Loading the controls…")
    expect(page.locator(".st-key-model")).to_have_count(0)
    button.click()
    expect(page.locator(".st-key-concurrency input")).to_have_value("24", timeout=LOAD)
    expect(page.locator(".st-key-first_view_more")).to_have_count(0)
