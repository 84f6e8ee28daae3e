"""Browser: what the look check (scripts/screenshots.py --matrix, issue #19) found cut or squeezed stays fixed.

- The sidebar's current page is drawn bold; its title was cut with an ellipsis at 1440 px
  ("Course §3.5: before vs aft"): every navigation title shows whole.
- The speculative page's speed-up chart stretched its batch axis to 10^64 (a layout annotation on a
  log axis is placed at log10(x)): the drawn axis ends at the swept batches (1,024)."""

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Browser  # noqa: E402

pytestmark = pytest.mark.e2e

CUT_NAV_JS = """() => [...document.querySelectorAll('[data-testid="stPageLink-NavLink"] > span')]
  .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.innerText)"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_navigation_titles_are_not_cut(browser: Browser, streamlit_url, lang):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = ctx.new_page()
        for path in ("/case_study", "/frontier"):  # the two longest titles, each drawn bold as the current page
            page.goto(f"{streamlit_url}{path}?lang={lang}")
            page.get_by_test_id("stPageLink-NavLink").first.wait_for(timeout=45_000)
            page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
            assert page.evaluate(CUT_NAV_JS) == [], path
    finally:
        ctx.close()


def test_speculative_batch_axis_ends_at_the_sweep(browser: Browser, streamlit_url):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = ctx.new_page()
        page.goto(f"{streamlit_url}/speculative?lang=en")
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=30_000)
        hi = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')].map(p => p._fullLayout.xaxis.range[1])")
        assert all(r < 3.5 for r in hi), hi  # log10 of the axis end: 1,024 is 3.01; 10^64 was 64
    finally:
        ctx.close()
