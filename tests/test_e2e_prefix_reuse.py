"""Browser: the reuse inputs' lazy expander (ui.prefixcache.widgets). Closed, none of its widgets is
in the page, yet the link keeps its values; opened, the widgets show them; a value changed there
survives closing it and a page switch, in the address bar too. AppTest cannot show the address bar."""

import re

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Browser, expect  # noqa: E402

from test_e2e_share import LOAD, go_to, set_number, settle  # noqa: E402

pytestmark = pytest.mark.e2e


def test_values_live_in_the_link_while_closed(browser: Browser, streamlit_url):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    try:
        page.goto(streamlit_url + "/frontier?lang=en&pc_reuse=shared&pc_prefix_len=1000")
        expect(page.locator(".js-plotly-plot .main-svg").first).to_be_visible(timeout=LOAD)
        settle(page)
        expect(page.locator(".st-key-pc_prefix_len")).to_have_count(0)  # closed: not drawn
        expect(page.get_by_text("2 changed from the defaults")).to_be_visible()
        expect(page).to_have_url(re.compile(r"pc_prefix_len=1000"))
        page.get_by_test_id("stExpander").filter(has_text="Prefix reuse").locator("summary").click()
        box = page.locator(".st-key-pc_prefix_len input")
        expect(box).to_have_value("1000", timeout=LOAD)  # opened: the link's value
        settle(page)
        set_number(page, "pc_prefix_len", "1200")
        expect(page).to_have_url(re.compile(r"pc_prefix_len=1200"))
        page.get_by_test_id("stExpander").filter(has_text="Prefix reuse").locator("summary").click()  # closed
        settle(page)
        expect(page.locator(".st-key-pc_prefix_len")).to_have_count(0, timeout=LOAD)
        expect(page).to_have_url(re.compile(r"pc_reuse=shared.*pc_prefix_len=1200|pc_prefix_len=1200.*pc_reuse=shared"))
        go_to(page, "pages/load_test.py")  # another page with the same inputs
        expect(page).to_have_url(re.compile(r"/load_test\?.*pc_prefix_len=1200"), timeout=LOAD)
        expect(page.get_by_text("2 changed from the defaults")).to_be_visible(timeout=LOAD)
    finally:
        ctx.close()
