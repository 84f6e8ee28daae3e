"""Charts on a phone: the same figure, its plot kept as tall as on a wide screen.

On a 390-pixel phone (an iPhone 12–15's viewport: 390 × 844) a horizontal legend below the plot
wraps into one row per entry, and Plotly takes those rows out of the figure's fixed height: the
memory stack's plot shrank to ~110 px under its 8 legend rows, the planner's under 17 GPUs, the
scheduler's Gantt beside its request labels (issue 19). The server cannot see the viewport's
width; a phone's browser says what it is in its User-Agent ("Mobile" in iOS Safari and Android
Chrome, absent from desktop and tablet browsers), which :func:`ui.layout.chart` reads.

:func:`for_phone` is the one phone rule for every chart (pure, on the sent figure dict):

- a horizontal legend starts at the figure's left edge (on a wide screen: the plot's);
- the figure grows by the legend rows the phone adds:
  ``height += (rows(PHONE_PLOT_PX) − rows(WIDE_PLOT_PX)) × row_px``, so the plot keeps the height
  its builder chose for a wide screen;
- no mode bar (:func:`chart_config`);
- what a builder wants different on a phone it puts in ``layout.meta.phone`` (a dict merged into
  the layout, one level into each sub-dict: the Gantt's short request labels); ``meta`` never
  reaches the browser.

Legend rows follow plotly.js: all entries on one row when they fit, else a grid of columns as
wide as the widest entry; a grouped legend (a trace with a ``legendgroup``) a column per group (so one long entry, "vLLM budget: × 0.90 (71.24 GiB)", puts the memory
stack's 8 entries one to a row on a phone). Text widths are estimated, not measured: a Latin character 0.55 em (DejaVu Sans / Noto Sans
average on the UI's strings), a CJK or full-width character 1 em; a legend entry adds
``ENTRY_PAD_PX`` for its symbol and gaps (Plotly: 40 px item width + 8 px text gap, measured on
the memory stack at 390 px). Close enough: a row too many costs ``row_px`` of white space.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ui.theme import FONT_SIZE

PHONE_PLOT_PX = 358  # a 390-px viewport less Streamlit's 1 rem padding each side
WIDE_PLOT_PX = 820  # the plot of a 1440-px screen (sidebar open): measured, the memory legend in 2 columns of ~290 px
ENTRY_PAD_PX = 48
ROW_EM = 1.5  # a legend row: 1.5 × the legend's font size (22.5 px at 15 px, measured 22–23 px)
_TAG = re.compile(r"<[^>]+>")


def is_phone(user_agent: str | None) -> bool:
    """A phone's browser: "Mobile" in its User-Agent (iOS Safari, Android Chrome, Firefox for
    Android); tablets (iPad, Android without "Mobile") and desktops get the wide layout.

    >>> is_phone("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    ...          "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1")
    True
    >>> is_phone("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36")
    False
    """
    return bool(user_agent) and "Mobi" in user_agent


def chart_config(phone: bool) -> dict:
    """Plotly's config for a chart: no Plotly logo; on a phone no mode bar either. plotly.js shows
    the mode bar for good on a touch screen (not on hover), where it sat on the subplot titles (the
    scheduler's "Tokens in each step" at 390 px); on a phone its zoom and pan tools fight the page's
    scrolling, and a double tap still resets the axes.

    >>> chart_config(False), chart_config(True)
    ({'displaylogo': False}, {'displaylogo': False, 'displayModeBar': False})
    """
    return {"displaylogo": False} | ({"displayModeBar": False} if phone else {})


def text_width_px(text: str, font_px: float) -> float:
    """Estimated width of ``text`` (HTML tags dropped): 1 em per wide (CJK) character, 0.55 em else."""
    plain = _TAG.sub("", text or "")
    return sum(font_px if unicodedata.east_asian_width(c) in "WF" else 0.55 * font_px for c in plain)


def legend_entries(fig: dict) -> list[tuple[str, str]]:
    """(name, legend group) of what a figure's legend shows: traces with a name and ``showlegend``
    not false (Plotly draws no legend for a single trace unless the layout asks)."""
    layout = fig.get("layout") or {}
    if layout.get("showlegend") is False:
        return []
    data = fig.get("data") or []
    out = [(tr["name"], tr.get("legendgroup") or "") for tr in data
           if tr.get("name") and tr.get("showlegend", True) is not False]
    return out if len(data) > 1 or layout.get("showlegend") else []


def legend_names(fig: dict) -> list[str]:
    """The names a figure's legend shows (:func:`legend_entries`)."""
    return [name for name, _ in legend_entries(fig)]


def grouped(fig: dict) -> bool:
    """plotly.js lays the legend out by groups: ``traceorder`` says "grouped", or is unset and a
    trace has a ``legendgroup`` (plotly.js's default then)."""
    order = ((fig.get("layout") or {}).get("legend") or {}).get("traceorder")
    if order is not None:
        return "grouped" in order
    return any(group for _, group in legend_entries(fig))


def legend_rows(names: list[str], width_px: float, font_px: float) -> int:
    """Rows a horizontal legend wraps ``names`` into at ``width_px``, as plotly.js lays it out
    (``computeLegendDimensions``): one row if every entry fits side by side; else a grid whose
    columns are all as wide as the widest entry.

    >>> legend_rows(["a", "b"], 400, 15), legend_rows(["a", "b", "c" * 40], 400, 15)
    (1, 3)
    """
    if not names:
        return 0
    widths = [ENTRY_PAD_PX + text_width_px(n, font_px) for n in names]
    if sum(widths) < width_px:
        return 1
    per_row = max(1, int(width_px // max(widths)))
    return -(-len(names) // per_row)


def grouped_legend_rows(entries: list[tuple[str, str]], width_px: float, font_px: float) -> int:
    """Rows of a grouped horizontal legend (plotly.js): each group a column of its entries (every
    trace without a group in one), the groups side by side, wrapping; a line of groups is as tall
    as its longest.

    >>> grouped_legend_rows([("a", ""), ("b", ""), ("c", "g")], 400, 15)  # a, b stacked beside c
    2
    """
    blocks: dict[str, list[float]] = {}
    for name, group in entries:
        blocks.setdefault(group, []).append(ENTRY_PAD_PX + text_width_px(name, font_px))
    rows, line, used = 0, 0, 0.0
    for widths in blocks.values():
        w = max(widths)
        if used and used + w > width_px:
            rows, line, used = rows + line, 0, 0.0
        line, used = max(line, len(widths)), used + w
    return rows + line


def _rows(fig: dict, width_px: float, font_px: float) -> int:
    if grouped(fig):
        return grouped_legend_rows(legend_entries(fig), width_px, font_px)
    return legend_rows(legend_names(fig), width_px, font_px)


def _legend_font_px(layout: dict) -> float:
    legend = layout.get("legend") or {}
    return float(((legend.get("font") or {}).get("size")) or ((layout.get("font") or {}).get("size")) or FONT_SIZE)


def extra_height_px(fig: dict) -> int:
    """Pixels the legend's wrapping adds on a phone: (rows at the phone's width − rows at a wide
    screen's) × row height; 0 for a vertical legend (it sits beside the plot) or none."""
    layout = fig.get("layout") or {}
    if (layout.get("legend") or {}).get("orientation") != "h":
        return 0
    font = _legend_font_px(layout)
    added = _rows(fig, PHONE_PLOT_PX, font) - _rows(fig, WIDE_PLOT_PX, font)
    return round(max(added, 0) * ROW_EM * font)


def for_phone(fig: dict) -> dict:
    """The figure dict for a phone: taller by :func:`extra_height_px`, ``layout.meta.phone`` merged
    in. Copies the layout (and the dicts it merges into); the traces are shared."""
    layout = dict(fig.get("layout") or {})
    meta = layout.pop("meta", None)
    phone = meta.get("phone", {}) if isinstance(meta, dict) else {}
    if isinstance(meta, dict) and set(meta) - {"phone"}:
        layout["meta"] = {k: v for k, v in meta.items() if k != "phone"}
    out = dict(fig, layout=layout)
    legend = layout.get("legend")
    if isinstance(legend, dict) and legend.get("orientation") == "h" and legend.get("x", 0) == 0:
        # from the figure's left edge, not the plot's: the y-axis margin (70–80 px) is a fifth of a phone
        layout["legend"] = dict(legend, xref="container", x=0)
    for key, value in phone.items():  # first: a phone ``height`` is the base the legend's rows add to
        layout[key] = dict(layout.get(key) or {}, **value) if isinstance(value, dict) else value
    layout["height"] = int(layout.get("height") or 450) + extra_height_px(out)
    return out


def without_phone_meta(fig: dict) -> dict:
    """The figure dict for a wide screen: ``layout.meta.phone`` dropped (it is for phones only)."""
    layout = fig.get("layout") or {}
    meta = layout.get("meta")
    if not (isinstance(meta, dict) and "phone" in meta):
        return fig
    layout = dict(layout)
    rest = {k: v for k, v in meta.items() if k != "phone"}
    if rest:
        layout["meta"] = rest
    else:
        layout.pop("meta")
    return dict(fig, layout=layout)
