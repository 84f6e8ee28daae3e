"""The dark theme keeps the frontier's "meets the target" shading visible (issue #19: dark-theme
contrast). The light theme's fill, Tol green at 13 % opacity, was #0F1E1A on the dark background
#0E1117 (contrast 1.1:1, invisible); ui.theme.DARK_INKS swaps it for one at least as visible on dark
as the original is on white."""

import re

from ui.layout import for_dark_theme
from ui.theme import FEASIBLE_FILL


def _blend(rgba: str, bg: tuple[int, int, int]) -> tuple[float, float, float]:
    r, g, b, a = (float(v) for v in re.findall(r"[\d.]+", rgba))
    return tuple(a * c + (1 - a) * k for c, k in zip((r, g, b), bg))


def _lum(rgb) -> float:
    lin = [(c / 255) / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a, b) -> float:
    la, lb = _lum(a), _lum(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def test_feasible_region_reads_on_dark_at_least_as_on_white():
    white, dark = (255, 255, 255), (0x0E, 0x11, 0x17)
    on_white = _contrast(_blend(FEASIBLE_FILL, white), white)  # ≈ 1.2:1
    fig = for_dark_theme({"data": [{"fillcolor": FEASIBLE_FILL}], "layout": {}})
    swapped = fig["data"][0]["fillcolor"]
    assert swapped != FEASIBLE_FILL
    assert _contrast(_blend(FEASIBLE_FILL, dark), dark) < 1.15  # the reason: 13 % green vanishes on dark
    assert _contrast(_blend(swapped, dark), dark) >= max(on_white, 1.5)  # ≈ 1.7:1
