"""The app frame: page config, language, navigation, shared controls, and the page contract.

``app.py`` calls :func:`run` with the page list; every page script starts with
``sc, t = shell.page()`` and gets the validated :class:`~ui.state.Scenario` and a translator.

Why our own navigation: the page folder is named ``pages/``, and Streamlit treats a script
folder of that name as a legacy multipage app until the first ``st.navigation`` call in the
process. On a fresh server whose first visitor opens a deep link (``/kv_table``), that first run
executes ``pages/kv_table.py`` directly, without ``app.py``, under Streamlit's automatic page
list. Two measures make that harmless, and a browser test covers it:

1. ``[client] showSidebarNavigation = false`` hides Streamlit's page list in every mode; the
   sidebar shows only the ``st.page_link`` list drawn here.
2. :func:`page` notices that ``app.py`` did not run (no shell marker in this run) and runs the
   frame itself: its ``st.navigation`` call switches the whole process to ``st.navigation``
   mode, resolves the same page from the URL and runs it inside the frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui import preload  # noqa: F401  (first: libraries fully imported before any page runs)
from ui import compare, i18n, state, vllm_paste
from ui.i18n import Translator

_IN_SHELL = "_shell_running"  # True only while app.py runs the page
_SCENARIO = "_scenario"


@dataclass(frozen=True)
class PageSpec:
    """One page: script path, translation key of its title, an emoji icon (no icon fonts)."""

    path: str
    title_key: str
    icon: str
    default: bool = False


# The app's pages, in navigation order. Add a page here (its script in pages/).
PAGES: list[PageSpec] = [
    PageSpec("pages/memory.py", "nav.memory", "🧮", default=True),
    PageSpec("pages/kv_table.py", "nav.kv_table", "📋"),
    PageSpec("pages/roofline.py", "nav.roofline", "📈"),
    PageSpec("pages/frontier.py", "nav.frontier", "⚖️"),
    PageSpec("pages/scheduler.py", "nav.scheduler", "🗓️"),
    PageSpec("pages/load_test.py", "nav.load_test", "🚦"),
    PageSpec("pages/planner.py", "nav.planner", "🧭"),
]


def run(pages: list[PageSpec] | None = None) -> None:
    """The whole frame around the current page (called by app.py)."""
    pages = PAGES if pages is None else pages
    st.set_page_config(page_title="LLM inference calculator", page_icon="🧮", layout="wide",
                       initial_sidebar_state="expanded")
    lang, lang_warnings = i18n.resolve_language()
    t = Translator(lang)
    st_pages = [st.Page(p.path, title=t(p.title_key), icon=p.icon, default=p.default) for p in pages]
    current = st.navigation(st_pages, position="hidden")
    with st.sidebar:
        st.markdown(f"**{t('app.title')}**")
        with st.container(key="app_nav"):
            for p in st_pages:
                st.page_link(p, label=p.title, icon=p.icon)
        i18n.render_language_switch(t)
    sc, messages = state.render_sidebar(t)
    vllm_paste.render(t)
    compare.render_controls(t)
    share_slot = st.sidebar.container()
    for level, text in lang_warnings + messages:
        getattr(st, level)(text)
    st.session_state[_SCENARIO] = sc
    st.session_state[_IN_SHELL] = True
    try:
        current.run()
    finally:
        st.session_state[_IN_SHELL] = False
    compare.render_comparison(st.session_state[_SCENARIO], t)
    state.render_share(st.session_state[_SCENARIO], t, lang, share_slot)


def page() -> tuple[state.Scenario, Translator]:
    """Start of every page script: the scenario and the translator of this run."""
    if not st.session_state.get(_IN_SHELL):
        # Run directly by Streamlit's legacy pages/ mode (cold start on a deep link): run the
        # frame here instead. Its st.navigation call switches the process to st.navigation mode
        # and runs this same page inside the frame; then stop this outer, frameless run.
        run()
        st.stop()
    return st.session_state[_SCENARIO], Translator(i18n.current_language())
