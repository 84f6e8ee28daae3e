"""The Chinese UI's own font (static/cjk-ui*.woff2, scripts/make_cjk_font.py, ui/layout.py): a
projector machine without a CJK font and without network access still shows Chinese, not boxes.

- Every CJK character in the UI's source is in the subset (static/cjk-ui.chars.txt, written with the
  fonts): a new translation with a new character fails here until the script is rerun.
- The files are WOFF2 of a sane size, the server serves static/ (config) and the image copies it.
- The style sheet declares both faces as extra faces of Streamlit's "Source Sans" for CJK code
  points only (Latin keeps Streamlit's font), with relative URLs.
The browser side (the face is loaded on a Chinese page) is in tests/test_e2e_cjk.py.
"""

import importlib.util
import re
from pathlib import Path

from ui import layout

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("make_cjk_font", ROOT / "scripts" / "make_cjk_font.py")
make_cjk_font = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_cjk_font)


def test_every_ui_character_is_in_the_subset():
    have = set((ROOT / "static" / "cjk-ui.chars.txt").read_text(encoding="utf-8").strip())
    missing = sorted(make_cjk_font.ui_characters() - have)
    assert not missing, f"rerun scripts/make_cjk_font.py: {''.join(missing[:40])}"


def test_the_fonts_are_woff2_and_small():
    for name in ("cjk-ui.woff2", "cjk-ui-bold.woff2"):
        data = (ROOT / "static" / name).read_bytes()
        assert data[:4] == b"wOF2"
        assert 50_000 < len(data) < 600_000, name  # ~1,000 glyphs; a whole CJK font is 15+ MB
    assert "SIL OPEN FONT LICENSE" in (ROOT / "static" / "OFL-NotoSansCJK.txt").read_text()


def test_static_files_are_served_and_shipped():
    assert re.search(r"^enableStaticServing\s*=\s*true", (ROOT / ".streamlit" / "config.toml").read_text(), re.M)
    assert "COPY static/ static/" in (ROOT / "Dockerfile").read_text()


def test_style_sheet_adds_cjk_faces_to_streamlits_family():
    css = layout.CJK_FONT_CSS
    assert css.count("@font-face") == 2
    assert css.count('font-family: "Source Sans"') == 2
    assert "unicode-range: U+3000-303F, U+3400-9FFF, U+FF00-FFEF" in css
    for url in layout.CJK_FONT_URLS.values():
        assert not url.startswith(("/", "http")) and (ROOT / "static" / Path(url).name).exists()
    assert layout._BASE_CSS.startswith(css)


def test_the_ranges_cover_what_the_script_subsets():
    assert make_cjk_font.is_cjk("内") and make_cjk_font.is_cjk("，") and make_cjk_font.is_cjk("。")
    assert not make_cjk_font.is_cjk("A") and not make_cjk_font.is_cjk("é")
