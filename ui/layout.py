"""Page layout shared by every view: the style sheet, presenter mode, page headers and charts.

- :func:`apply_style` injects one small style sheet per run (nothing fetched from the internet; the
  only fonts are the app's own subsets of Noto Sans CJK SC, ``static/cjk-ui*.woff2``, for the Chinese UI
  on machines without a CJK font, see :data:`CJK_FONT_CSS`):
  metric values and labels wrap instead of being cut with an ellipsis, tables and charts keep
  their width on a phone, the page header is compact, and sidebar controls a page does not use
  are dimmed (``.st-key-<control key>``, see :func:`apply_style`).
- Presenter mode (``?present=1`` or the sidebar switch, kept in the address bar as ``?present=1``):
  larger type, larger chart text, a denser header (intro caption folded away) so the main chart
  is on the first screen of a 1920×1080 projector.
- :func:`chart` draws a Plotly figure the same way on every page, scaled for presenter mode.
"""

from __future__ import annotations

import html
import re
from typing import Any, Iterable

import plotly.graph_objects as go
import streamlit as st

from ui import charts, first_view, phone
from ui.theme import DARK_INKS, FONT_SIZE, TEXT_INK


PRESENT_PARAM = "present"  # ?present=1
_SWITCH = "ui_present"
PRESENT_FONT_SCALE = 1.35  # chart text in presenter mode (16 px ticks → ~22 px on a projector)
PRESENT_HEIGHT_SCALE = 0.9  # a little lower: the header shrinks too, so the chart stays on the first screen

# The Chinese UI on a projector machine without a CJK font (and without network access): extra faces
# of Streamlit's own body font family "Source Sans", limited to CJK code points, served by this app
# (Streamlit static serving: static/ -> app/static/). Latin text keeps Streamlit's font; charts use
# the same family. The subsets hold every character of the UI's strings (scripts/make_cjk_font.py,
# tests/test_cjk_font.py), a regular face for weights up to 500 and a bold one above (headings); a
# browser fetches them only when a page shows CJK text. Relative URLs, so a proxy's path prefix works.
CJK_FONT_URLS = {"100 500": "app/static/cjk-ui.woff2", "600 900": "app/static/cjk-ui-bold.woff2"}
CJK_UNICODE_RANGE = "U+3000-303F, U+3400-9FFF, U+FF00-FFEF"
CJK_FONT_CSS = "".join(
    f'@font-face {{ font-family: "Source Sans"; font-style: normal; font-weight: {weights}; font-display: swap; '
    f'src: url("{url}") format("woff2"); unicode-range: {CJK_UNICODE_RANGE}; }}\n'
    for weights, url in CJK_FONT_URLS.items())

_BASE_CSS = CJK_FONT_CSS + """
/* Metric cards: values and labels wrap (value + unit always visible), never an ellipsis. */
/* The value's size follows its card's width (container query units), so five or eight cards in a
   row keep "12.55 GiB" whole; a longer value still wraps at its space. */
[data-testid="stMetric"] { container-type: inline-size; }
[data-testid="stMetricValue"] { font-size: clamp(1rem, 14cqi, 2.4rem); }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] *, [data-testid="stMetricLabel"],
[data-testid="stMetricLabel"] *, [data-testid="stMetricDelta"], [data-testid="stMetricDelta"] * {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
  overflow-wrap: anywhere; }
[data-testid="stMetricValue"] > div { line-height: 1.15; }
/* Compact page header: less empty space above the title, a title that fits one line at 1440 px. */
.stMainBlockContainer, [data-testid="stMainBlockContainer"] { padding-top: 4rem; }
.stMain h1 { font-size: clamp(1.5rem, 0.9rem + 1.2vw, 2.3rem); padding-top: 0.25rem; }
/* Grids (ui.layout.grid): N items to a row on a wide screen, two (or one) on a phone. */
[class*="st-key-grid3_"] > div { flex: 1 1 calc(33.3% - 1rem); min-width: 10rem; }
[class*="st-key-grid4_"] > div { flex: 1 1 calc(25% - 1rem); min-width: 10rem; }
[class*="st-key-grid5_"] > div { flex: 1 1 calc(20% - 1rem); min-width: 10rem; }
[class*="st-key-grid6_"] > div { flex: 1 1 calc(16.6% - 1rem); min-width: 9rem; }
/* Cards in a grid row are as tall as the tallest (a label that wraps). */
[class*="st-key-grid"]:has(> div > [data-testid="stMetric"]) { align-items: stretch; }
[class*="st-key-grid"] > div > [data-testid="stMetric"] { height: 100%; }
/* The frontier's SLA row: the compare chips get the most room, the replicas box the least. */
.st-key-grid5_fr_sla > div { flex: 1 1 0; min-width: 9rem; }
/* (each also for a first view's blank of that box, ui.first_view.slot: a keyed box inside a wrapper) */
.st-key-grid5_fr_sla > .st-key-price_usd, .st-key-grid5_fr_sla > div:has(> .st-key-price_usd) { flex-grow: 0.8; }
.st-key-grid5_fr_sla > .st-key-replicas, .st-key-grid5_fr_sla > div:has(> .st-key-replicas) {
  flex-grow: 0.6; min-width: 7rem; }
.st-key-grid5_fr_sla > .st-key-overlays, .st-key-grid5_fr_sla > div:has(> .st-key-overlays) {
  flex-grow: 1.6; min-width: 14rem; }
/* The chart preload script (ui.preload_chart): no room, nothing shown. */
.st-key-chart_preload { display: none; }
/* A wide Markdown table (the planner's ranking): smaller type and cells, as a data grid's. */
.st-key-md_compact table { font-size: 0.875rem; }
.st-key-md_compact th, .st-key-md_compact td { padding: 0.3rem 0.5rem; }
.st-key-md_compact td a { white-space: nowrap; }
/* Tables: scroll inside their own box instead of cutting columns. */
[data-testid="stTable"] { overflow-x: auto; }
/* The published-checks tables (ui.checks): no column narrower than a three-character Chinese word (检验,
   可信度 broke one character to a line at 390 px: the table squeezed those columns to one character). */
[class*="_checks_table"] [data-testid="stTable"] :is(th, td) { min-width: 4.6em; }
/* Markdown tables (ui.tables.markdown) too: a block box that scrolls sideways on a phone. */
[data-testid="stMarkdownContainer"] table { display: block; overflow-x: auto; max-width: 100%; }
/* Sidebar navigation: a page title wraps instead of ending in an ellipsis (the current page's bold
   title "Course §3.5: before vs after" was cut to "before vs aft" at 1440 px). */
[data-testid="stPageLink-NavLink"] > span { white-space: normal; overflow: visible; text-overflow: clip; }
/* Chart titles are HTML (they wrap on a phone); see ui.layout.chart. */
.chart-title { font-weight: 600; font-size: 1.15rem; line-height: 1.3; margin: 0.6rem 0 -0.4rem 0; }
@media (max-width: 640px) {
  .stMainBlockContainer, [data-testid="stMainBlockContainer"] { padding-left: 0.6rem; padding-right: 0.6rem;
    padding-top: 3.5rem; }
  .stMain h1 { font-size: 1.45rem; }
  /* Two cards to a row, the odd one out as wide as the others. */
  [class*="st-key-grid"] > div:has(> [data-testid="stMetric"]) { max-width: calc(50% - 0.25rem); }
}
"""

_PRESENT_CSS = """
html { font-size: 20px; }
.stMainBlockContainer, [data-testid="stMainBlockContainer"] { padding-top: 1.4rem; padding-bottom: 2rem;
  max-width: 100%; }
.stMain h1 { font-size: 1.6rem; padding: 0; }
.st-key-page_intro { display: none; }
[data-testid="stMetric"] { padding: 0.3rem 0.75rem; }
[data-testid="stMetricLabel"] p { font-size: 0.8rem; }
.stMain [data-testid="stVerticalBlock"] { gap: 0.55rem; }
/* The title sits beside the (transparent) toolbar: nothing of the toolbar is under it. */
[data-testid="stHeader"] { background: transparent; }
[data-testid="stMetricValue"] { font-size: clamp(1.1rem, 14cqi, 2.2rem); }
.chart-title { font-size: 1.35rem; }
"""


def present_in_url() -> bool:
    """``?present=1`` (or ``true`` / ``yes`` / ``on``) in the address bar."""
    return str(st.query_params.get(PRESENT_PARAM, "")).strip().lower() in ("1", "true", "yes", "on")


def init_present() -> None:
    """The presenter switch's value from the link, on a session's first run (drawn or not: a first
    view, ui.first_view, draws no sidebar, and :func:`presenting` reads it)."""
    if _SWITCH not in st.session_state:
        st.session_state[_SWITCH] = present_in_url()


def render_present_switch(t) -> bool:
    """The presenter-mode switch. Its state lives in the URL as ``?present=1``, written here (not a
    bound widget: a bound toggle spells it ``true`` and drops ``1``), like the language switch."""
    init_present()
    on = st.toggle(t("ctl.present"), key=_SWITCH, help=t("ctl.present.help"))
    if on and st.query_params.get(PRESENT_PARAM) != "1":
        st.query_params[PRESENT_PARAM] = "1"
    elif not on and PRESENT_PARAM in st.query_params:
        del st.query_params[PRESENT_PARAM]
    return on


_OPEN = "_open_{}"  # session flag per lazy expander key: open or not (its widget id changes with its label)


def _remember_open(key: str) -> None:
    st.session_state[_OPEN.format(key)] = bool(st.session_state.get(key))


def lazy_open(key: str) -> bool:
    """Whether the reader has the lazy expander ``key`` open."""
    return bool(st.session_state.get(_OPEN.format(key)))


def lazy_expander(where, label: str, key: str, expanded: bool = False):
    """An expander whose content the caller draws only while it is open (``.open``).

    Streamlit's stateful expander (``on_change``): opening or closing it reruns the script. A
    closed one sends only its label, where a plain expander sends (and the browser lays out) all
    its content on every rerun. The open state is kept under ``key`` in a flag of its own, since
    the widget's id changes with its label (a value, a language) and would close it.
    ``expanded``: the state until the reader opens or closes it.
    """
    flag = st.session_state.get(_OPEN.format(key))
    return where.expander(label, expanded=bool(expanded if flag is None else flag), key=key,
                          on_change=_remember_open, args=(key,))


_TAB = "_tab_{}"  # session flag per lazy tab bar key: the index of the open tab (its labels change with the language)


def _remember_tab(key: str, labels: tuple[str, ...]) -> None:
    label = st.session_state.get(key)
    st.session_state[_TAB.format(key)] = labels.index(label) if label in labels else 0


def lazy_tabs(labels: list[str], key: str):
    """Tabs whose content the caller draws only for the open one (``if tab.open:``).

    Streamlit draws every tab's content by default, the hidden ones too: on the load-test page three
    more Plotly charts and a data grid (its 1.2 MB of JavaScript) before the first chart could paint
    (bench/first_paint.py). Stateful tabs (``on_change``) rerun the script when the reader switches,
    and ``.open`` says which one to draw. The open tab is remembered by index, so a language switch
    (new labels) keeps it.
    """
    labels = tuple(labels)
    index = min(int(st.session_state.get(_TAB.format(key), 0)), len(labels) - 1)
    return st.tabs(list(labels), key=key, default=labels[index] if index else None,
                   on_change=_remember_tab, args=(key, labels))


def in_fragment_rerun() -> bool:
    """True while Streamlit reruns only a fragment (``st.fragment``), not the whole script."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx  # noqa: PLC0415

    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def presenting() -> bool:
    return bool(st.session_state.get(_SWITCH, False))


def apply_style(unused_keys: Iterable[str] = ()) -> None:
    """Inject this run's style sheet (base, presenter, dimmed controls). Call once per run."""
    css = _BASE_CSS + (_PRESENT_CSS if presenting() else "")
    css += "".join(f".st-key-{k} {{ opacity: 0.5; }}\n" for k in unused_keys)
    st.html(f"<style>{css}</style>")


def grid(key: str, per_row: int):
    """A wrapping row of metric cards or controls: ``per_row`` (3 to 6) to a row on a wide screen,
    two or one on a phone. One block, where ``st.columns`` sends one more per column: a block costs
    ~0.2 ms of server CPU per rerun (bench/bench_pages.py). Draw into it with ``g.metric(...)`` or
    ``with g:``; items keep their order."""
    return st.container(horizontal=True, key=f"grid{per_row}_{key}", gap="small", vertical_alignment="bottom")


def header(title: str, intro: str) -> None:
    """The page title and its intro caption (folded away in presenter mode; the sidebar says it all)."""
    st.title(title)
    with st.container(key="page_intro"):
        st.caption(intro)


def scale_fonts(fig: dict, scale: float, height_scale: float = 1.0) -> dict:
    """Scale every font size of a figure dict by ``scale`` and its height by ``height_scale`` (in place).

    Walks the layout and trace dicts and scales each ``size`` under a ``*font`` key (presenter mode).

    >>> f = {"data": [], "layout": {"font": {"size": 16}, "height": 400, "title": {"font": {"size": 20}}}}
    >>> g = scale_fonts(f, 1.5, 1.25)["layout"]
    >>> g["font"]["size"], g["title"]["font"]["size"], g["height"]
    (24, 30, 500)
    """
    def walk(node, in_font: bool = False) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if in_font and k == "size" and isinstance(v, (int, float)):
                    node[k] = round(v * scale)
                elif k.endswith("font_size") and isinstance(v, (int, float)):
                    node[k] = round(v * scale)
                else:
                    walk(v, k.endswith("font"))
        elif isinstance(node, list):
            for v in node:
                walk(v, in_font)

    walk(fig)
    layout = fig.setdefault("layout", {})
    layout.setdefault("font", {}).setdefault("size", round(14 * scale))
    if isinstance(layout.get("height"), (int, float)):
        layout["height"] = round(layout["height"] * height_scale)
    return fig


def for_dark_theme(fig: dict) -> dict:
    """Swap the inks that vanish on a dark background (:data:`ui.theme.DARK_INKS`) for their light
    equivalents, everywhere in a figure dict (in place; pass a copy).

    >>> f = {"data": [{"line": {"color": "#000000"}, "marker": {"color": ["#0072B2", "#000000"]}}],
    ...      "layout": {"annotations": [{"arrowcolor": "#333333", "text": "#000000 stays text"}]}}
    >>> g = for_dark_theme(f)
    >>> g["data"][0]["line"]["color"], g["data"][0]["marker"]["color"], g["layout"]["annotations"][0]["arrowcolor"]
    ('#F2F2F2', ['#0072B2', '#F2F2F2'], '#D9D9D9')
    """
    def walk(node) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in list(items):
            if isinstance(v, str):
                ink = DARK_INKS.get(v.upper())
                if ink is not None:
                    node[k] = ink
            elif isinstance(v, (dict, list)):
                walk(v)

    walk(fig)
    return fig


def text_inks(fig: dict) -> dict:
    """Give the chart's text (default font, tick labels, axis and legend titles) the readable ink
    :data:`ui.theme.TEXT_INK` where the figure sets none: Streamlit's Plotly theme draws it #808495,
    3.7:1 on white; :func:`for_dark_theme` lightens the ink for the dark theme. The figure's layout
    is replaced by a copy; only the dicts that get an ink are copied (copy on write), so nothing the
    caller shares (the default template, the traces) is changed or copied.

    >>> f = text_inks({"data": [], "layout": {"xaxis": {"title": {"text": "x"}}, "yaxis2": {}}})
    >>> f["layout"]["xaxis"]["tickfont"]["color"], f["layout"]["xaxis"]["title"]["font"]["color"]
    ('#333333', '#333333')
    >>> f["layout"]["font"]["color"], f["layout"]["yaxis2"]["tickfont"]["color"]
    ('#333333', '#333333')
    """
    def inked(node: dict | None, key: str) -> dict:  # node[key] with a colour, node[key] copied first
        sub = dict(node.get(key) or {}) if key in node else {}
        sub.setdefault("color", TEXT_INK)
        return sub

    layout = fig["layout"] = dict(fig["layout"])
    layout["font"] = inked(layout, "font")
    for name, ax in list(layout.items()):
        if (name.startswith("xaxis") or name.startswith("yaxis")) and isinstance(ax, dict):
            ax = layout[name] = dict(ax)
            ax["tickfont"] = inked(ax, "tickfont")
            title = ax.setdefault("title", {})
            if isinstance(title, dict):
                title = ax["title"] = dict(title)
                title["font"] = inked(title, "font")
    legend = layout["legend"] = dict(layout.get("legend") or {}) if "legend" in layout else {}
    legend["font"] = inked(legend, "font")
    return fig


def dark_theme() -> bool:
    """The viewer's theme is dark (Streamlit infers it from the app's background; unknown: light)."""
    try:
        return getattr(st.context.theme, "type", None) == "dark"
    except Exception:  # noqa: BLE001 - no script context (bare calls in tests)
        return False


def on_phone() -> bool:
    """The viewer's browser is a phone's (its User-Agent says "Mobile": :func:`ui.phone.is_phone`)."""
    try:
        return phone.is_phone(st.context.headers.get("User-Agent"))
    except Exception:  # noqa: BLE001 - no script context (bare calls in tests)
        return False


def title_text(plotly_title: str | None) -> str:
    """A Plotly title as plain text (``<br>`` → space, other tags dropped) for an HTML heading.

    >>> title_text("Memory <b>per GPU</b><br>(2,048 tokens)")
    'Memory per GPU (2,048 tokens)'
    """
    text = re.sub(r"<br\s*/?>", " ", plotly_title or "", flags=re.I)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text)).strip()


def chart(fig: go.Figure, key: str, where: Any = None) -> None:
    """Draw a figure the same way on every page (through :mod:`ui.charts`: arrays sent pre-encoded).

    The figure's title is drawn as an HTML heading above it (escaped), which wraps on a phone
    where an SVG title would be cut; the plot keeps only the room its subplot titles need. No
    Plotly logo; larger text in presenter mode. Pass a figure built for this call.
    """
    # A charts.Figure: a copy of its containers, arrays encoded; a Plotly-built figure: its arrays
    # encoded in place, its own dicts. The default template is shared either way: what changes
    # the figure below copies first (text_inks: the dicts it inks; presenter and dark: everything).
    d = charts.sendable(fig)
    layout = d["layout"]
    title = layout.pop("title", None) or {}
    text = title_text(title.get("text") if isinstance(title, dict) else str(title))
    margin = layout["margin"] = dict(layout.get("margin") or {})
    margin["t"] = max(int(margin.get("t", 80)) - 40, 44)  # the title's room goes; subplot titles keep theirs
    if presenting():
        d = charts.encoded(d)  # own copies of every container before scaling fonts in place
        for name, ax in d["layout"].items():  # explicit sizes: the frontend's theme would set its own small ones
            if (name.startswith("xaxis") or name.startswith("yaxis")) and isinstance(ax, dict):
                ax.setdefault("tickfont", {}).setdefault("size", FONT_SIZE - 1)
                title = ax.setdefault("title", {})
                if isinstance(title, dict):
                    title.setdefault("font", {}).setdefault("size", FONT_SIZE)
        d["layout"].setdefault("legend", {}).setdefault("font", {}).setdefault("size", FONT_SIZE - 1)
        scale_fonts(d, PRESENT_FONT_SCALE, PRESENT_HEIGHT_SCALE)
        d["layout"]["margin"]["t"] = round(d["layout"]["margin"]["t"] * PRESENT_FONT_SCALE)  # room for larger subplot titles
    small = on_phone()
    d = phone.for_phone(d) if small else phone.without_phone_meta(d)  # copies the layout it changes
    d = text_inks(d)  # copies the dicts it sets a colour in
    if dark_theme():
        d = for_dark_theme(charts.encoded(d))  # own copies of every container (the template too)
    where = where or st
    if text:
        where.html(f'<div class="chart-title">{html.escape(text)}</div>')
    where.plotly_chart(charts.Figure(d["data"], d["layout"], sendable=True), key=key, config=phone.chart_config(small))
    first_view.chart_drawn()  # a fresh session's first view ends at its first chart (ui.first_view)
