"""A page's copy of a sidebar control: the same value, drawn where the page needs it.

The load test draws the closed loop's clients beside its arrivals, but the number is the sidebar's
concurrency (one traffic description, :mod:`ui.traffic`). Two widgets cannot share a key, so the
page's copy has a key of its own, not in the link: before it is drawn it takes the sidebar
control's value, and a change is written back to that control (its widget, the link and every
other page follow on the same run: callbacks run before the script).
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from ui import controls as C
from ui import first_view

_VIEW = "_mirror_{}"


def _copy_back(key: str) -> None:
    st.session_state[key] = st.session_state[_VIEW.format(key)]


def number(ctl: C.Control, t: Callable[..., str], label_key: str, *, disabled: bool = False, where: Any = st) -> int:
    """A number input showing the sidebar control ``ctl``'s value; a change sets ``ctl``."""
    view = _VIEW.format(ctl.key)
    if first_view.quiet(ctl.kind):  # the sidebar is not drawn: the value its widget would start at; no widget here
        from ui.state import quiet_value  # noqa: PLC0415  (ui.state imports the page helpers)

        first_view.slot(where, "number", view)
        return quiet_value(ctl)
    st.session_state[view] = st.session_state.get(ctl.key, ctl.default)
    num = int if ctl.integer else float
    return where.number_input(t(label_key), min_value=num(ctl.lo), max_value=num(ctl.hi), step=num(ctl.step), key=view,
                              on_change=_copy_back, args=(ctl.key,), help=t(f"{label_key}.help"), disabled=disabled)


def value(ctl: C.Control) -> Any:
    """The sidebar control ``ctl``'s value, where the page does not draw its copy."""
    if first_view.quiet(ctl.kind):
        from ui.state import quiet_value  # noqa: PLC0415

        return quiet_value(ctl)
    return st.session_state.get(ctl.key, ctl.default)
