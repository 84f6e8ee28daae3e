"""Widgets that show their options translated while the link keeps the stable tokens.

A widget bound with ``bind="query-params"`` writes its *displayed* text into the URL: Streamlit
1.67's select and multiselect serdes serialize ``format_func(option)``. With translated labels a
Chinese link would then not open in English (and a label change would break old links). So these
widgets are not bound: each shows ``label_of(option)`` and this module keeps ``?key=`` in the
control's URL spelling (the tokens ``poisson``, ``kv:fp8`` …):

* on first draw the value comes from the link (already checked by
  :func:`ui.state.check_query_params`, so it parses), else from the value kept when the page was
  left (a page-local widget's state is dropped on another page), else the control's default;
* after the widget, the link is written back when it differs (default: the key is removed; an
  empty selection where the default is not empty: ``?key=``).

The control goes into ``_rendered_controls`` like a bound one, so the share link and scenario
files see it.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from ui import controls as C
from ui import first_view
from ui.traffic import ACROSS_PAGES

_RENDERED = "_rendered_controls"  # as ui.state._RENDERED: the controls of this run, for the share link
# key -> a control's last value (:func:`keep`). One session-state entry for all of them: Streamlit
# walks every session-state key on each select, number input and slider it draws (its
# ``filtered_state``), so seventeen ``_kept_<key>`` entries cost every widget of every rerun.
_KEPT = "_kept_values"


def value_from_url(ctl: C.Control) -> Any:
    """The control's value in the link, or None when absent or unreadable (also used by the lazy
    sidebar sections, ui.state)."""
    if ctl.key not in st.query_params:
        return None
    raw = st.query_params.get_all(ctl.key)
    try:
        return ctl.parse(raw if ctl.kind in ("multi", "multi_int") else raw[-1])
    except C.ControlValueError:
        return None


def write_url(ctl: C.Control, value: Any) -> None:
    """Keep ``?key=`` in the control's URL spelling (removed at the default), as a bound widget would."""
    want = ctl.url_value(tuple(value) if isinstance(value, list) else value)
    if want is None:
        if ctl.key in st.query_params:
            del st.query_params[ctl.key]
        return
    want = want if isinstance(want, list) else [want]
    if st.query_params.get_all(ctl.key) != want:
        st.query_params[ctl.key] = want if len(want) > 1 else want[0]


def kept(key: str, default: Any = None) -> Any:
    """The value :func:`keep` remembered for ``key``, else ``default``."""
    return st.session_state.get(_KEPT, {}).get(key, default)


def carry_over(key: str) -> None:
    """Before a widget drawn on several pages under one key (:data:`ui.traffic.ACROSS_PAGES`): give
    it the value kept by :func:`keep`. After a page switch the key still holds the last page's
    value, but the new page's widget is a new widget and would start at its default; set again
    through the session state, the value reaches it. A value the user has just changed (it differs
    from the kept one) is left alone."""
    values = st.session_state.get(_KEPT, {})
    if key in values and (key not in st.session_state or st.session_state[key] == values[key]):
        st.session_state[key] = values[key]


def keep(key: str, value: Any) -> None:
    """Remember a widget's value for the next page (:func:`carry_over`) and for the next visit."""
    st.session_state.setdefault(_KEPT, {})[key] = list(value) if isinstance(value, (list, tuple)) else value


def render(ctl: C.Control, t: Callable[..., str], label_of: Callable[[Any], str], where: Any = st,
           **widget: Any) -> Any:
    """Draw a "select" or "multi" control with translated option labels; return its value.

    ``label_of(option)`` gives the text shown; ``widget`` goes to the Streamlit call
    (``max_selections``, ``wrap`` …). Label and help come from the translations
    (``ctl.<key>``, ``ctl.<key>.help``) as for :func:`ui.state.render_control`.
    """
    key = ctl.key
    multi = ctl.kind == "multi"
    st.session_state.setdefault(_RENDERED, {})[key] = ctl
    if key in ACROSS_PAGES or key not in C.BY_KEY:  # a page control: kept across pages (ui.session_view)
        from ui import session_view  # noqa: PLC0415

        session_view.touch(ctl)
        carry_over(key)
    if key not in st.session_state:
        seeded = value_from_url(ctl)
        if seeded is None:
            seeded = kept(key, ctl.default)
        # a link may hold more than the widget allows (it would raise): the first ones are kept
        st.session_state[key] = list(seeded)[:widget.get("max_selections") or None] if multi else seeded
    cap = widget.get("max_selections") if multi else None
    if cap and len(st.session_state[key] or ()) > cap:  # a value carried over from another page's link, too
        st.session_state[key] = list(st.session_state[key])[:cap]

    def fmt(option: Any) -> str:
        try:
            return label_of(option)
        except (KeyError, ValueError):  # not a known option (a stale value): the token itself
            return str(option)

    common = dict(key=key, format_func=fmt, help=t(f"ctl.{key}.help"), **widget)
    if first_view.quiet(ctl.kind):  # not drawn: its slot, and the value seeded above (the widget's start)
        first_view.slot(where, ctl.kind, key)
        value = st.session_state[key]
    elif multi:
        value = where.multiselect(t(f"ctl.{key}"), ctl.choices(), **common)
    else:
        value = where.selectbox(t(f"ctl.{key}"), ctl.choices(), **common)
    keep(key, value)
    write_url(ctl, value)
    return list(value) if multi else value
