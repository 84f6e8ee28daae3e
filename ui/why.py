"""Draw "why this number" panels (:class:`ui.memory.explain.Panel`) as expanders, the same way on every page."""

from __future__ import annotations

from typing import Callable, Sequence

import streamlit as st

from ui.memory.explain import Panel


def render_panels(panels: Sequence[Panel], t: Callable[..., str], where=st) -> None:
    for panel in panels:
        with where.expander(panel.title):
            st.markdown(f"**{t('why.formula')}**")
            st.latex(panel.formula)
            st.markdown(f"**{t('why.values')}**")
            st.latex(panel.plugged)
            for note in panel.notes:
                st.caption(note)
            st.markdown(f"**{t('why.takeaway')}** {panel.takeaway}")
