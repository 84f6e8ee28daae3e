"""Start loading Streamlit's Plotly component when the page opens, not when its first chart arrives.

Streamlit's frontend loads the JavaScript of each element type on first use (``import()`` of a
chunk, ``static/js/PlotlyChart.<hash>.js``, 4.7 MB with Plotly inside). A page of this app sends a
sidebar and a row of controls before its first chart, so the browser asked for the Plotly chunk
only after laying those out (about 1 s after the app shell on the load-test page, with 2 CPUs),
then fetched, compiled and ran it: the first chart waited for all of it (bench/first_paint.py). A
minimal app asks for it at once. Every page of this app has a chart, so the frame asks for the
chunk first: a module script element with the chunk's URL, drawn at the top of the sidebar in a
hidden container; the browser's module map then hands the loaded module to Streamlit's own
``import()``.

Nothing changes when the file is not found (another Streamlit build): no script is drawn.
"""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

KEY = "chart_preload"  # the hidden container (ui.layout's style sheet hides .st-key-chart_preload)


@functools.cache
def plotly_chunk() -> str | None:
    """The file name of Streamlit's Plotly chunk in this install, or None."""
    js = Path(st.__file__).parent / "static" / "static" / "js"
    names = sorted(p.name for p in js.glob("PlotlyChart.*.js"))
    return names[0] if len(names) == 1 else None


def script(name: str) -> str:
    """The preload script element for chunk ``name`` (a file name of Streamlit's own, never user text).

    An external module script, not inline code: the deployment's Content-Security-Policy
    (deploy/nginx, ``script-src 'self'`` without ``'unsafe-inline'``) allows it. Its relative URL
    resolves next to Streamlit's own ``static/js/`` from a page's address (``/load_test`` or ``/``,
    behind a proxy's path prefix too), the same URL Streamlit's ``import()`` asks for.

    >>> script("PlotlyChart.x.js")
    '<script type="module" src="static/js/PlotlyChart.x.js"></script>'
    """
    return f'<script type="module" src="static/js/{name}"></script>'


def render() -> None:
    """Draw the preload script (every run, so the sidebar's elements keep their places; an
    ``import()`` of a loaded module does nothing)."""
    name = plotly_chunk()
    if name is None:
        return
    with st.container(key=KEY):
        st.html(script(name), unsafe_allow_javascript=True)
