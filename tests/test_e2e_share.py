"""Browser: a share link made on one page carries every page's settings touched in the session
(ui.session_view) and the user's own model (ui.config_link); opened in a fresh browser, every page
shows them. The share box's copy button puts the link on the clipboard. AppTest cannot show the
address bar a real page switch leaves, nor the clipboard."""

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Browser, Page, expect  # noqa: E402

from ui.i18n import Translator  # noqa: E402
from ui.shell import PAGES  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 45_000
NAV = {p.path: Translator("en")(p.title_key) for p in PAGES}
TINY = {"_name_or_path": "tiny-share-test", "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
        "max_position_embeddings": 8192}


def go_to(page: Page, path: str):
    page.get_by_test_id("stSidebar").locator(".st-key-app_nav").get_by_role("link", name=NAV[path]).click()
    page.wait_for_load_state("networkidle")
    settle(page)


def settle(page: Page):
    """Wait for the script run to end (Streamlit's running indicator gone): a number typed while the
    page's first run is still drawing can be reset by it (seen once in a full e2e run on 2 cores)."""
    page.wait_for_timeout(300)
    expect(page.get_by_test_id("stStatusWidgetRunningIcon")).to_have_count(0, timeout=LOAD)


def set_number(page: Page, key: str, value: str, shown: str | None = None):
    box = page.locator(f".st-key-{key} input")
    box.fill(value)
    box.press("Enter")
    expect(box).to_have_value(shown or value, timeout=LOAD)
    page.wait_for_load_state("networkidle")
    settle(page)


def choose(page: Page, key: str, option: str):
    page.locator(f".st-key-{key} input").click()
    page.get_by_role("option", name=option, exact=True).click()
    page.wait_for_load_state("networkidle")


def open_section(page: Page, title: str):
    """Open a lazy section (ui.lazy_inputs: its widgets are drawn only while it is open)."""
    page.get_by_test_id("stExpander").filter(has_text=title).locator("summary").first.click()


def test_a_link_made_on_the_planner_opens_every_page_as_it_was(browser: Browser, streamlit_url, tmp_path):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    page = ctx.new_page()
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(TINY))
    try:
        page.goto(f"{streamlit_url}/load_test?lang=en&lt_requests=200&lt_sweep=false")
        expect(page.locator("h1").first).to_be_visible(timeout=LOAD)
        choose(page, "lt_arrival", "Gamma (bursty)")
        set_number(page, "rate", "3.5", "3.50")
        go_to(page, "pages/frontier.py")
        open_section(page, "Price, replicas, rate and lengths")
        set_number(page, "replicas", "3")
        # the user's own model (the sidebar's upload): the link carries it too
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_text("Your own model (config.json)").click()
        sidebar.locator(".st-key-config_upload input[type=file]").set_input_files(str(cfg))
        expect(page.get_by_test_id("stAlert").filter(has_text="tiny-share-test")).to_be_visible(timeout=LOAD)
        go_to(page, "pages/planner.py")
        open_section(page, "Search options")
        choose(page, "pl_sort", "Fewest GPUs")
        sidebar.get_by_text("Share and save").click()
        link_box = sidebar.locator(".st-key-share_link input")
        expect(link_box).to_have_value(re.compile("pl_sort=gpus"), timeout=LOAD)
        link = link_box.input_value()
        q = parse_qs(urlsplit(link).query)
        assert q["lt_arrival"] == ["gamma"] and q["rate"] == ["3.5"] and q["replicas"] == ["3"], q
        assert q["model"] == ["custom"] and q["model_config"], q
        assert urlsplit(link).path.endswith("/planner")
        sidebar.get_by_role("button", name="Copy link").click()
        expect(sidebar.get_by_role("button", name="Copied")).to_be_visible()
        assert page.evaluate("navigator.clipboard.readText()") == link
        page.set_viewport_size({"width": 1440, "height": 900})
        page.screenshot(path=tmp_path / "share_box.png")
    finally:
        ctx.close()

    fresh = browser.new_context(viewport={"width": 1440, "height": 900})  # another browser: nothing in common
    page = fresh.new_page()
    try:
        page.goto(link)
        open_section(page, "Search options")  # closed in a fresh session: the link's values apply all the same
        expect(page.locator(".st-key-pl_sort input")).to_have_value("Fewest GPUs", timeout=LOAD)
        expect(page.get_by_test_id("stSidebar").get_by_text(re.compile(r"^tiny-share-test: "))).to_be_visible()
        go_to(page, "pages/load_test.py")
        expect(page.locator(".st-key-lt_arrival input")).to_have_value("Gamma (bursty)", timeout=LOAD)
        expect(page.locator(".st-key-rate input")).to_have_value("3.50")
        go_to(page, "pages/frontier.py")
        open_section(page, "Price, replicas, rate and lengths")
        expect(page.locator(".st-key-replicas input")).to_have_value("3", timeout=LOAD)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        page.reload()  # a reload keeps the user's own model
        expect(page.get_by_test_id("stSidebar").get_by_text(re.compile(r"^tiny-share-test: "))).to_be_visible(timeout=LOAD)
    finally:
        fresh.close()
