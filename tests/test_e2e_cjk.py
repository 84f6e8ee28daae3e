"""Browser: the Chinese UI loads the app's own CJK font faces (tests/test_cjk_font.py has the rest).
This CI machine has no CJK font installed (scripts/test.sh installs none), so the check is real:
without the faces the characters would come from no font at all (boxes)."""

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Page  # noqa: E402

pytestmark = pytest.mark.e2e

OURS_JS = "() => [...document.fonts].filter(f => f.unicodeRange.includes('3400')).length"
LOAD_JS = """async () => {
  const pick = faces => faces.filter(f => f.unicodeRange.includes('3400')).map(f => [f.status, f.weight]);
  return [pick(await document.fonts.load('16px "Source Sans"', '内存')),
          pick(await document.fonts.load('700 16px "Source Sans"', '延迟'))];
}"""


def test_chinese_page_loads_the_bundled_cjk_faces(page: Page, streamlit_url):
    page.goto(f"{streamlit_url}/?lang=zh")
    page.get_by_text("显存").first.wait_for(timeout=45_000)
    page.wait_for_function(f"({OURS_JS})() === 2", timeout=45_000)  # the style sheet of this run
    regular, bold = page.evaluate(LOAD_JS)
    assert regular == [["loaded", "100 500"]]
    assert bold == [["loaded", "600 900"]]
