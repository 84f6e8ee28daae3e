"""scripts/screenshots.py --matrix: every page of ui/shell.py PAGES at three sizes, two languages and two
themes (the guide's look-at-the-product check, issue #19). Only the list of shots is tested here; the
browser run itself is a manual step (it needs /usr/bin/chromium)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import screenshots  # noqa: E402

from ui.shell import PAGES  # noqa: E402


def test_every_page_at_every_size_language_and_theme():
    shots = screenshots.matrix(screenshots.page_paths())
    # 11 pages x 3 sizes x 2 languages x 2 themes = 132 shots (PAGES has len(PAGES) entries)
    assert len(shots) == len(PAGES) * 3 * 2 * 2
    assert len({name for name, *_ in shots}) == len(shots)  # no file overwrites another
    assert {size for *_, size in shots} == {(1440, 900), (1920, 1080), (390, 844)}
    assert {theme for _, _, theme, _ in shots} == {"light", "dark"}
    assert ("memory_zh_dark_390", "/?lang=zh", "dark", (390, 844)) in shots
    assert ("kv_table_en_light_1920", "/kv_table?lang=en", "light", (1920, 1080)) in shots


def test_shots_grouped_so_each_browser_context_opens_once():
    keys = [(theme, size) for _, _, theme, size in screenshots.matrix(screenshots.page_paths())]
    runs = [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
    assert len(runs) == len(set(runs)) == 6  # 3 sizes x 2 themes, each one contiguous run


def test_only_filters_by_name():
    shots = screenshots.matrix(screenshots.page_paths(), only="_zh_dark_390")
    assert [name for name, *_ in shots] == [f"{screenshots.page_paths()[i][0]}_zh_dark_390" for i in range(len(PAGES))]


def test_widths_pick_sizes_in_order():
    shots = screenshots.matrix(screenshots.page_paths(), widths=(390, 1440))
    assert len(shots) == len(PAGES) * 2 * 2 * 2
    assert shots[0][3] == (390, 844) and shots[-1][3] == (1440, 900)
