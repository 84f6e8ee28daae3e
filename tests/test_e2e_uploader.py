"""Browser test of Streamlit's own uploader text in the user's language (ui.uploader, issue #19:
"Streamlit's own uploader text" stayed English in the Chinese UI). Only a browser shows it: the
English text is Streamlit's frontend's, the Chinese one a style sheet's ``::after`` content."""

import re

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from ui.i18n import Translator  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 60_000
DROPZONE = "[data-testid=stFileUploaderDropzone]"
ENGLISH = re.compile(r"Upload|per file|Drag and drop|Browse files", re.I)

# Every text the reader sees in the dropzone: each element's own text nodes at a font size above 0
# (the English ones hidden in Chinese are at font-size 0), and each ::before/::after content.
# The Material icon's ligature ("upload", drawn as an arrow) is not text.
SHOWN = """root => {
  const out = [];
  for (const el of root.querySelectorAll('*')) {
    if (el.closest('[data-testid=stIconMaterial]')) continue;
    const style = getComputedStyle(el);
    const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent.trim()).join(' ').trim();
    if (own && parseFloat(style.fontSize) > 0 && style.display !== 'none' && style.visibility !== 'hidden') out.push(own);
    for (const pseudo of ['::before', '::after']) {
      const c = getComputedStyle(el, pseudo).content;
      if (c && c !== 'none' && c !== 'normal') out.push(JSON.parse(c));
    }
  }
  return out;
}"""


def shown(page: Page, key: str) -> list[str]:
    zone = page.locator(f".st-key-{key} {DROPZONE}")
    expect(zone).to_be_visible(timeout=LOAD)
    return zone.evaluate(SHOWN)


def drag_over(page: Page, key: str) -> list[str]:
    """A file dragged over the uploader (react-dropzone's dragenter with a file in the DataTransfer)."""
    zone = page.locator(f".st-key-{key} {DROPZONE}")
    data = page.evaluate_handle("() => { const d = new DataTransfer(); d.items.add(new File(['x'], 'a.json')); return d; }")
    zone.dispatch_event("dragenter", {"dataTransfer": data})
    expect(page.locator(f".st-key-{key} {DROPZONE} > div:not([data-testid]) span")).to_be_attached(timeout=LOAD)
    texts = zone.evaluate(SHOWN)
    zone.dispatch_event("dragleave", {"dataTransfer": data})
    return texts


def open_trace_section(page: Page, title: str) -> None:
    """The load test's trace uploader is in a lazy section: drawn once it is opened."""
    section = page.get_by_test_id("stExpander").filter(has_text=title)
    expect(section).to_be_visible(timeout=LOAD)
    section.locator("summary").click()


def test_load_test_uploader_in_chinese(page: Page, streamlit_url):
    zh = Translator("zh")
    page.goto(streamlit_url + "/load_test?lang=zh")
    open_trace_section(page, zh("lt.trace_section"))
    texts = shown(page, "lt_trace")
    # the button, then the line: 2 MB is .streamlit/config.toml's server.maxUploadSize, the types the page's
    assert texts == [zh("upload.button"), "单个文件上限 2 MB • CSV, JSONL, JSON, TXT"], texts
    assert not [x for x in texts if ENGLISH.search(x)], texts
    # the Chinese text at the size of the English it replaces (0.875rem of 17 px = 14.875 px)
    size = page.locator(f".st-key-lt_trace {DROPZONE} [data-testid=stFileUploaderDropzoneInstructions] span").evaluate(
        "e => getComputedStyle(e, '::after').fontSize")
    assert size == "14.875px"
    dragged = drag_over(page, "lt_trace")
    assert zh("upload.drag") in dragged and not [x for x in dragged if ENGLISH.search(x)], dragged


def test_sidebar_uploader_in_chinese(page: Page, streamlit_url):
    """The config.json uploader of the sidebar (every page): its own types (JSON only)."""
    zh = Translator("zh")
    page.goto(streamlit_url + "/?lang=zh")
    page.get_by_test_id("stSidebar").get_by_text(zh("sidebar.custom_config")).click()
    texts = shown(page, "config_upload")
    assert texts == [zh("upload.button"), "单个文件上限 2 MB • JSON"], texts


def test_load_test_uploader_in_english(page: Page, streamlit_url):
    page.goto(streamlit_url + "/load_test?lang=en")
    open_trace_section(page, "Or your own trace (upload)")
    texts = shown(page, "lt_trace")
    assert texts == ["Upload", "2MB per file • CSV, JSONL, JSON, TXT"], texts  # Streamlit's own, untouched
    assert "Drag and drop a file here" in drag_over(page, "lt_trace")
