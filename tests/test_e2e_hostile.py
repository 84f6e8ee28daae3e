"""Browser check of ui.safe: Markdown in a URL parameter renders as text, never as a link or an image."""

import re

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Page, expect  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 30_000


def test_injected_markdown_renders_as_text(page: Page, streamlit_url):
    fetched = []
    page.on("request", lambda r: None if r.url.startswith(streamlit_url) else fetched.append(r.url))
    query = ("?lang=en&concurrency=%60%5Bclick%20me%5D(https%3A%2F%2Fevil.example%2Fphish)%60"
             "&gpu=x%60%20!%5Bt%5D(http%3A%2F%2F127.0.0.1%3A9%2Fpixel.png)%20%60&max_model_len=1e309")
    page.goto(streamlit_url + "/" + query)
    alerts = page.get_by_test_id("stAlert")
    # shown as typed (a zero-width space after the scheme keeps GFM from autolinking it)
    expect(alerts.filter(has_text=re.compile(r"\[click me\]\(https\u200b?://evil\.example/phish\)"))).to_be_visible(
        timeout=LOAD)
    expect(alerts.filter(has_text=re.compile(r"!\[t\]\(http\u200b?://127\.0\.0\.1:9/pixel\.png\)"))).to_be_visible()
    expect(alerts.filter(has_text="max_model_len=1e309")).to_be_visible()
    links = [a.evaluate("e => e.outerHTML") for a in alerts.locator("a").all()]
    assert links == [] and alerts.locator("img").count() == 0
    assert page.get_by_test_id("stException").count() == 0
    assert fetched == []
