"""The shared sidebar of a fresh browser session, drawn just after the page's first chart.

Why: a page's first chart waits for Streamlit's Plotly script (4.7 MB), and the browser lays out
every element it has received in the meantime on the same main thread. The sidebar's ~25 elements
(page links, selects, number boxes) cost ~0.35 s of that thread on a 2-CPU machine; drawing them
after the chart in the same run does not help, since all of a run's elements arrive long before
the Plotly script is ready (bench/first_paint.py, profile in the commit). So the first run of a
browser session draws the page from the link's values (:func:`ui.state.link_scenario`) and, in the
sidebar, only a hidden button; ``static/sidebar-after-chart.js`` clicks it once the first chart is
drawn (at once when the run ends without a chart, or when the page shows a heavy job's progress bar), and that rerun, like every later one, draws the sidebar as always. The page
is computed again from the drawn controls' values, so a link the preview read differently is shown
as the controls say (one rerun later).

Only for a browser (its User-Agent): AppTest, the protocol clients of bench/ and scripts have no
script to click the button, and get the sidebar at once, as before.
"""

from __future__ import annotations

import streamlit as st

KEY = "sidebar_later"  # the hidden button (ui.layout's style sheet hides .st-key-sidebar_later)
SCRIPT_URL = "app/static/sidebar-after-chart.js"  # relative: a proxy's path prefix works
_DONE = "_sidebar_drawn_once"  # set on the session's first run: every later run draws the sidebar
_CARRIED = "_sidebar_later_messages"  # the first run's messages, shown again by the run that draws the sidebar


def _browser() -> bool:
    try:
        return "Mozilla/" in (st.context.headers.get("User-Agent") or "")
    except Exception:  # noqa: BLE001  (no request headers outside a server session)
        return False


def later() -> bool:
    """True on a browser session's first run: draw the page, not the shared controls (once per session)."""
    if st.session_state.get(_DONE):
        return False
    st.session_state[_DONE] = True  # at the start: a run interrupted by the click still counts
    return _browser()


_RUN = "_sidebar_later_run"  # only during that first run: {"chart": drew one, "go": the marker is sent}
GO = "<style>.sidebar-later-go{}</style>"  # the marker: style only, so Streamlit gives it no room on the page


def render_trigger():
    """The hidden button and the script that clicks it after the first chart (or at the marker)."""
    box = st.sidebar.container(key=KEY)
    box.button("sidebar", key=f"{KEY}_button")
    box.html(f'<script type="module" src="{SCRIPT_URL}"></script>', unsafe_allow_javascript=True)
    st.session_state[_RUN] = {"chart": False, "go": False}


def chart_drawn() -> None:
    """Called by every chart (ui.layout.chart): the script waits for it before drawing the sidebar."""
    if (run := st.session_state.get(_RUN)) is not None:
        run["chart"] = True


def release() -> None:
    """Draw the sidebar now, not after a chart: the page waits for a heavy job (ui.background, once its
    progress bar shows, after 0.5 s); the click's rerun interrupts the wait and takes the job over."""
    if (run := st.session_state.get(_RUN)) is not None and not run["go"]:
        run["go"] = True
        st.html(GO)


def released() -> bool:
    """This run sent the marker before a job's wait: the click's rerun will wait for the same job
    (ui.background hands its ticket over instead of cancelling it)."""
    return bool((run := st.session_state.get(_RUN)) is not None and run["go"])


def render_done() -> None:
    """After the page: the marker when it drew no chart (nothing to wait for)."""
    run = st.session_state.pop(_RUN, None)
    if run is not None and not run["chart"] and not run["go"]:
        st.html(GO)


def carry(messages: list[tuple[str, str]]) -> None:
    """Keep the first run's messages (a bad link parameter, already removed from the link) for the next run."""
    st.session_state[_CARRIED] = list(messages)


def carried() -> list[tuple[str, str]]:
    """The messages the first run showed, once."""
    return st.session_state.pop(_CARRIED, [])
