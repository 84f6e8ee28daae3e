"""A fresh browser session's first view: the page down to its first chart, the rest once the browser has shown it.

Why (``bench/first_paint.py``): Streamlit sends a whole page in 50-150 ms, long before the browser
has compiled Plotly's chunk, so React mounts and lays out every element of the page (the sidebar's
~30, the page's controls, cards and later charts) before the first chart is drawn, on the one main
thread. No single element is to blame (README, "What each part of a first view costs"): only drawing
less before the chart helps. Side by side (5 fresh sessions each, 2 CPUs), the first chart against a
minimal app's (one title, one chart): memory 1.30 -> 1.07, frontier 1.44 -> 1.22, load test
1.42 -> 1.21, planner 1.47 -> 1.26.

What it does. The session's first run, in a browser, is a *first view*:
- the sidebar holds only the app's title and a "Loading the controls" button (:func:`render_signal`);
- the page runs as usual down to its first chart (:func:`ui.layout.chart` calls :func:`chart_drawn`,
  which stops the run there), with its select, number and slider boxes not drawn (:func:`quiet`): each
  keeps a blank of its height (:func:`slot`) and its value is the one the widget would start at
  (:func:`ui.state.quiet_value`: the session's, else the link's, else the default), so the figure is
  the one the whole page draws (a test holds the two equal on every page);
- once the browser has shown the chart, ``static/first-view.js`` presses the button: the next run is
  the whole page, every element in the place it had (the chart keeps its place, and its blanks keep
  the page from jumping).

A first view is only for a browser (its ``User-Agent`` starts with ``Mozilla/``; Streamlit's AppTest
and the protocol clients of ``bench/`` send none unless they say they are one, as
``bench/ws_session.py`` does), on the session's first run, and for a plain link: a link with a
problem to report in the sidebar, the user's own model or a comparison gets the whole page at once,
as before; a page's own link check says its warnings in the first view and again in the whole page
(:func:`carry_warnings`).
A page that ends without a chart (a model that does not fit, say) reruns at once as the whole page;
one that stops itself (a refused input) is finished by the script (the run has ended, no chart is
on its way), and the button is there for a person should the script not run at all.
"""

from __future__ import annotations

import streamlit as st

ACTIVE = "_first_view"  # True while this run is a first view (until its first chart)
SEEN = "_first_view_seen"  # the session has had its first run
KEY = "first_view_more"  # the sidebar button static/first-view.js presses (its container's key too)
SCRIPT_URL = "app/static/first-view.js"  # relative: a proxy's path prefix works (as ui.command_block's)
BROWSER_PREFIX = "Mozilla/"  # every browser's User-Agent starts so
# The frame's flag (ui.shell): True only while the frame runs the page. A run's session-state writes
# after st.stop() are dropped (the frame's ``finally`` too), so the first view's stop clears it first:
# left True, the next run of a page script run directly (a cold server's deep link) would skip the frame.
FRAME = "_shell_running"


def from_browser() -> bool:
    """This session's client is a browser (module doc)."""
    return str(st.context.headers.get("User-Agent") or "").startswith(BROWSER_PREFIX)


def possible() -> bool:
    """This run may be a first view: a browser's session, its first run (:func:`begin` decides)."""
    return not st.session_state.get(SEEN) and from_browser()


def begin(plain: bool) -> bool:
    """Called once at the top of every run: is this run a first view? ``plain``: the link has nothing
    to report and asks for nothing a first view leaves out (module doc)."""
    on = bool(plain and possible())
    if not st.session_state.get(SEEN):
        st.session_state[SEEN] = True
    st.session_state[ACTIVE] = on
    return on


def active() -> bool:
    """True while a first view runs (its input widgets are not drawn, :func:`quiet`)."""
    return bool(st.session_state.get(ACTIVE))


def chart_drawn() -> None:
    """After a chart is drawn: a first view ends here (the rest comes with the browser's press)."""
    if st.session_state.get(ACTIVE):
        st.session_state[ACTIVE] = False
        st.session_state[FRAME] = False
        st.stop()


def page_ended() -> None:
    """After the page script: a first view that drew no chart reruns now as the whole page."""
    if st.session_state.get(ACTIVE):
        st.session_state[ACTIVE] = False
        st.rerun()


_WARNINGS = "_first_view_warnings"


def carry_warnings(key: tuple[str, ...], warnings: list[str]) -> list[str]:
    """A page's link check (:func:`ui.state.check_query_params`, ``key``: its controls) finds a bad
    value once: it leaves the link. Found in a first view, its warnings are kept and given again to the
    same check in the whole page's run, which would otherwise find nothing to say."""
    if active():
        if warnings:
            st.session_state.setdefault(_WARNINGS, {})[key] = list(warnings)
        return warnings
    kept = st.session_state.get(_WARNINGS)
    return kept.pop(key, []) + warnings if kept else warnings


# A box's height with its label, in rem (it scales with presenter mode's larger root font): measured in
# Chromium at 1440 and 390 px, base font 17 px: a number or select box 72 px, a slider 94 px.
SLOT_REM = {"slider": 94 / 17}
BOX_REM = 72 / 17
# What a first view leaves out: the boxes whose code the browser loads and compiles before the first
# chart (a select's 74 kB chunk, a number box's, the slider's), ~10-30 ms of its main thread each.
# Toggles and buttons stay: a few ms each, and a row of them keeps its own height.
QUIET_KINDS = frozenset({"select", "multi", "multi_int", "number", "slider"})


def quiet(kind: str) -> bool:
    """A widget of this kind is not drawn in this run (a first view, :data:`QUIET_KINDS`)."""
    return kind in QUIET_KINDS and active()


def slot(where=st, kind: str = "number", key: str | None = None) -> None:
    """The place of a widget a first view does not draw: a blank of the widget's height, so every
    element after it keeps its place (a new place would be a new element in the browser) and the
    page does not jump when the widget comes. ``key``: the widget's, given to the blank's box, so the
    style sheet's rules for it (a width in a row of controls, ui.layout) hold for the blank too."""
    box = where.container(key=key) if key else where
    box.html(f'<div style="height:{SLOT_REM.get(kind, BOX_REM):.3f}rem"></div>')


def render_signal(t) -> None:
    """The sidebar of a first view: the button the browser presses when the first chart is shown
    (a person can press it too), and the script that presses it (an external module: the
    deployment's Content-Security-Policy, ``script-src 'self'``, allows it without a hash)."""
    with st.container(key=KEY):
        st.button(t("fv.more"), key=f"{KEY}_button", type="tertiary")
        st.html(f'<script type="module" src="{SCRIPT_URL}"></script>', unsafe_allow_javascript=True)
