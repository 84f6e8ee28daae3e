"""A page's secondary controls in a section drawn only while it is open (the first view draws less).

Every select, number box or slider the first view of a page draws costs the browser's one main thread
20-30 ms before the first chart can paint (bench/first_paint.py); a closed lazy section
(:func:`ui.layout.lazy_expander`) sends its label alone. The controls inside lose nothing:

* their widgets are not bound to the URL by Streamlit (a bound widget's ``?key=`` leaves the address
  bar while it is not drawn) but keep their state in the session (``persist_state``), and this module
  writes the link itself, drawn or not (:func:`ui.labelled.write_url`);
* before anything reads them they are seeded: the session's value (drawn earlier, set by a scenario
  file), else the link's (already checked by :func:`ui.state.check_query_params`), else the value
  kept when the page was left (:func:`ui.labelled.kept`); absent all three, the default;
* each is registered for the share link and the scenario file (``_rendered_controls``,
  :func:`ui.session_view.touch`) and kept for the next visit (:func:`ui.labelled.keep`);
* closed, a caption under the section counts the controls that differ from their defaults (a link
  may have set them).

The same pattern as the sidebar's lazy sections (ui.state) and the reuse inputs (ui.prefixcache.widgets).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import streamlit as st

from ui import labelled, session_view
from ui.layout import lazy_expander

_RENDERED = "_rendered_controls"  # as ui.state._RENDERED: the controls of the share link


def _from_url(ctl: Any) -> Any:
    if getattr(ctl, "kind", None) == "text":  # free text (the planner's prices): the page checks it itself
        raw = st.query_params.get(ctl.key)
        return None if raw is None else str(raw)[:2000]
    return labelled.value_from_url(ctl)


_LAST = "_lazy_inputs_last"  # key -> the value this module last kept (one session-state entry for all)
_NONE = object()


def seed(controls: Iterable[Any]) -> None:
    """Give each control its value before anything reads it (see the module docstring).

    A control another page draws too (the shared rate, replicas, lengths) may have been changed
    there since this page last kept it: the kept value then differs from the one this module kept,
    and it wins over the session's (this page's persisted widget still holds the old one)."""
    last = st.session_state.get(_LAST, {})
    for ctl in controls:
        elsewhere = labelled.kept(ctl.key, _NONE)
        if ctl.key in last and elsewhere is not _NONE and elsewhere != last[ctl.key]:
            st.session_state[ctl.key] = elsewhere
            continue
        if ctl.key in st.session_state:
            continue
        value = _from_url(ctl)
        if value is None:
            value = labelled.kept(ctl.key)
        if value is not None:
            st.session_state[ctl.key] = list(value) if isinstance(value, tuple) else value


def remember(key: str) -> None:
    """After :func:`ui.labelled.keep`: note the value kept here, so :func:`seed` sees a later change
    made on another page."""
    st.session_state.setdefault(_LAST, {})[key] = labelled.kept(key)


def section(t, title: str, key: str, controls: tuple[Any, ...], draw: Callable[[], None], where=st) -> dict[str, Any]:
    """A lazy section ``key`` titled ``title`` in ``where``; ``draw()`` draws its widgets (unbound, keyed by
    the control keys, ``persist_state="session"``) while it is open. Returns every control's value."""
    seed(controls)
    box = lazy_expander(where, title, key)
    if box.open:
        with box:
            draw()
    rendered = st.session_state.setdefault(_RENDERED, {})
    values: dict[str, Any] = {}
    for ctl in controls:
        value = st.session_state.get(ctl.key, ctl.default)
        values[ctl.key] = list(value) if isinstance(value, tuple) else value
        rendered[ctl.key] = ctl  # in the share link, drawn or not
        session_view.touch(ctl)
        labelled.keep(ctl.key, value)
        remember(ctl.key)
        labelled.write_url(ctl, value)
    if not box.open:
        changed = sum(ctl.url_value(tuple(v) if isinstance(v, list) else v) is not None for ctl, v in
                      zip(controls, values.values()))
        if changed:
            where.caption(t("sidebar.changed", n=changed))
    return values


def selectbox(ctl: Any, t, label_of: Callable[[Any], str], where=st, **widget: Any) -> Any:
    """An unbound select (or multiselect, for a "multi" control) with translated option labels, for
    :func:`section`'s ``draw`` (the link keeps the tokens, as :func:`ui.labelled.render`)."""
    def fmt(option: Any) -> str:
        try:
            return label_of(option)
        except (KeyError, ValueError):  # not a known option (a stale value): the token itself
            return str(option)

    common = dict(key=ctl.key, format_func=fmt, help=t(f"ctl.{ctl.key}.help"), persist_state="session", **widget)
    if ctl.kind == "multi":
        if ctl.key not in st.session_state:
            common["default"] = list(ctl.default)
        return where.multiselect(t(f"ctl.{ctl.key}"), ctl.choices(), **common)
    opts = ctl.choices()
    # the default always (as ui.state's widgets): where the session's value belongs to another page's widget of
    # the same key (a control several pages draw, the shared lengths) Streamlit falls back to it, not to the first
    common["index"] = opts.index(ctl.default) if ctl.default in opts else 0
    return where.selectbox(t(f"ctl.{ctl.key}"), opts, **common)
