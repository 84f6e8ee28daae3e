"""Draw "why this number" panels (:class:`ui.memory.explain.Panel`) as expanders, the same way on every page.

Panels are lazy: a closed panel sends only its title (which carries the value); its formula,
plugged-in values and notes are drawn when the reader opens it. Collapsed panels used to be a
third of a memory-page rerun's elements (42 of 133), each one serialized, sent and laid out by
the browser (KaTeX) on every slider change although nobody looked at them.
"""

from __future__ import annotations

from typing import Callable, Sequence

import streamlit as st

from ui.layout import lazy_expander
from ui.memory.explain import Panel


def render_panels(panels: Sequence[Panel], t: Callable[..., str], where=st) -> None:
    for panel in panels:
        exp = lazy_expander(where, panel.title, f"why_{panel.key}")
        if not exp.open:
            continue
        with exp:
            st.markdown(f"**{t('why.formula')}**")
            st.latex(panel.formula)
            st.markdown(f"**{t('why.values')}**")
            st.latex(panel.plugged)
            for note in panel.notes:
                st.caption(note)
            st.markdown(f"**{t('why.takeaway')}** {panel.takeaway}")
