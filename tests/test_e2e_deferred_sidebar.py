"""Browser test of ui.deferred_sidebar: a fresh session's sidebar is drawn after the page's first chart,
with the link's values, and a page view without a chart still gets its sidebar."""

import re

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Browser, expect  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 60_000  # ms

# performance.now() when the first chart's SVG and the sidebar's model select first appear
MARKS = """(() => {
  window.__marks = {};
  const marks = {chart: ".js-plotly-plot .main-svg", model: ".st-key-model"};
  new MutationObserver(() => {
    for (const [name, sel] of Object.entries(marks))
      if (!(name in window.__marks) && document.querySelector(sel)) window.__marks[name] = performance.now();
  }).observe(document, {subtree: true, childList: true});
})();"""


def test_the_sidebar_comes_after_the_first_chart_with_the_links_values(browser: Browser, streamlit_url):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    page.add_init_script(MARKS)
    try:
        page.goto(streamlit_url + "/frontier?lang=en&model=meta-llama%2FLlama-3.1-70B&tp=4&concurrency=8")
        expect(page.locator(".st-key-model input")).to_have_value("meta-llama/Llama-3.1-70B", timeout=LOAD)
        expect(page.locator(".st-key-concurrency input")).to_have_value("8")
        marks = page.evaluate("window.__marks")
        assert marks["chart"] <= marks["model"], marks
        assert re.search(r"tp=4", page.url) and re.search(r"concurrency=8", page.url)  # the link is kept
        expect(page.locator(".st-key-sidebar_later")).to_have_count(0)  # the trigger is gone
        # a page view with no chart (no deployment meets a 1 ms TPOT): the sidebar comes when the run ends
        page2 = ctx.new_page()
        page2.goto(streamlit_url + "/planner?lang=en&sla_tpot_ms=1")
        expect(page2.locator(".st-key-model input")).to_be_visible(timeout=LOAD)
        expect(page2.get_by_test_id("stAlert").filter(has_text="No deployment meets")).to_be_visible()
    finally:
        ctx.close()
