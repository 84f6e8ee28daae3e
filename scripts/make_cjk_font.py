"""Build static/cjk-ui.woff2 and cjk-ui-bold.woff2: the Chinese characters the UI uses, cut from Noto Sans CJK SC.

The dashboard is used on projector machines without network access and often without a CJK font;
there the Chinese UI would show boxes. The app serves this subset itself (Streamlit static serving,
``app/static/cjk-ui.woff2``) as extra faces of Streamlit's own "Source Sans" family, limited by
``unicode-range`` to CJK code points, so Latin text keeps Streamlit's font and no page fetches
anything from the internet (:mod:`ui.layout`).

Characters: every CJK character in the UI's source (ui/, pages/, calc/, app.py), CJK punctuation
(U+3000–303F) and full-width forms (U+FF00–FFEF). ``static/cjk-ui.chars.txt`` lists them; a test
(tests/test_cjk_font.py) fails when a translation uses a character the font lacks: rerun this.

Needs the Debian package fonts-noto-cjk (or its .deb, ``apt-get download fonts-noto-cjk`` and
``dpkg-deb -x``) and, only here, fontTools and brotli (``pip install fonttools==4.68.0 brotli`` in a
scratch environment; not dependencies of the app):

    python scripts/make_cjk_font.py [--fonts /usr/share/fonts/opentype/noto]

Font: Noto Sans CJK SC (Adobe / Google), SIL Open Font License 1.1 (static/OFL-NotoSansCJK.txt).
"""

from __future__ import annotations

import argparse
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = {"Regular": ROOT / "static" / "cjk-ui.woff2", "Bold": ROOT / "static" / "cjk-ui-bold.woff2"}
CHARS = ROOT / "static" / "cjk-ui.chars.txt"
SC_INDEX = 2  # NotoSansCJK-Regular.ttc: 0 JP, 1 KR, 2 SC, 3 TC, 4 HK (the SC face has the mainland shapes)
RANGES = ((0x3000, 0x303F), (0xFF00, 0xFFEF))


def is_cjk(ch: str) -> bool:
    """A code point the subset serves: CJK unified ideographs (and extension A), CJK punctuation,
    full-width forms."""
    o = ord(ch)
    return 0x3400 <= o <= 0x9FFF or any(lo <= o <= hi for lo, hi in RANGES)


def ui_characters() -> set[str]:
    """Every CJK character in the UI's source files."""
    files = [*ROOT.glob("ui/**/*.py"), *ROOT.glob("pages/*.py"), *ROOT.glob("calc/**/*.py"), ROOT / "app.py"]
    return {ch for f in files for ch in f.read_text(encoding="utf-8") if is_cjk(ch)}


def subset_face(ttc: pathlib.Path, out: pathlib.Path, chars: set[str]) -> set[str]:
    """Write the SC face of ``ttc`` cut to ``chars`` as WOFF2; the characters it has."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection

    font = TTCollection(str(ttc)).fonts[SC_INDEX]
    cmap = font.getBestCmap()
    chars = {c for c in chars if ord(c) in cmap}
    opts = subset.Options()
    opts.flavor = "woff2"
    opts.layout_features = ["*"]
    opts.name_IDs = ["*"]  # keep the copyright and license records (OFL)
    opts.notdef_outline = True
    sub = subset.Subsetter(opts)
    sub.populate(unicodes=sorted(ord(c) for c in chars))
    sub.subset(font)
    out.parent.mkdir(exist_ok=True)
    font.flavor = "woff2"
    font.save(out)
    print(f"{out.relative_to(ROOT)}: {len(chars)} characters, {out.stat().st_size / 1024:.0f} KiB")
    return chars


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fonts", default="/usr/share/fonts/opentype/noto", help="folder of NotoSansCJK-*.ttc")
    args = ap.parse_args()
    wanted = ui_characters() | {chr(c) for lo, hi in RANGES for c in range(lo, hi + 1)}
    have = [subset_face(pathlib.Path(args.fonts) / f"NotoSansCJK-{w}.ttc", out, wanted) for w, out in OUT.items()]
    CHARS.write_text("".join(sorted(set.intersection(*have))) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
