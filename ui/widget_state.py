"""A widget's look at the session state without reading every entry of it.

Streamlit's select, number input, radio, slider, text input and text area each ask, when drawn
with a ``key``, whether that key holds ``None`` in the session state: ``key in s and s[key] is
None`` (a slider: ``s[key]``'s type), where ``s = get_session_state().filtered_state``. That
property builds a dict of *every* session-state entry, each read through
``SessionState.__getitem__`` (widget-id lookups, the widget's presenter): on the frontier page 20
widgets x 55 entries, ~1,100 reads per rerun, ~2 ms of the script thread's ~42 ms (AppTest,
thread CPU); in issue 18's room of 50 sessions ``bench/ui_profile.py``'s exact timer charged it
1.4 ms per call, 2.6 of the page scripts' 16 CPU seconds.

Here those widget modules get a ``get_session_state`` whose ``filtered_state`` is a view
(:class:`KeyView`) that computes the answer for the one key asked: the same walk over
``SessionState._keys()`` in the same order, the same tests per entry, but ``self[k]`` read only for
the entries that ``filtered_state`` would store under that key (the last one wins, as in the dict).
So the answer is the dict's, entry for entry (``tests/test_widget_state.py`` compares them on
random states); nothing else of the session state changes. Other readers of ``filtered_state``
(``st.session_state.to_dict()``, iteration, ``len``) still get Streamlit's dict.

:func:`install` patches once per process (from :mod:`ui.shell`); it leaves a module alone where it
does not look as expected (another Streamlit version).
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from streamlit.runtime.state import common, session_state_proxy
from streamlit.runtime.state.session_state import SessionState, _is_internal_key

# The widget modules that read ``get_session_state().filtered_state`` only as ``key in s`` / ``s[key]``
# (Streamlit 1.67: selectbox, number_input, radio, slider, text_input / text_area).
MODULES = ("streamlit.elements.widgets.selectbox", "streamlit.elements.widgets.number_input",
           "streamlit.elements.widgets.radio", "streamlit.elements.widgets.slider",
           "streamlit.elements.widgets.text_widgets")

_MISSING = object()
_INSTALLED: list[str] = []
_LOCK = threading.Lock()


def filtered_value(state: SessionState, key: str) -> Any:
    """``state.filtered_state.get(key, _MISSING)``, reading only the entries stored under ``key``.

    Mirrors ``SessionState.filtered_state`` (Streamlit 1.67) entry for entry: a plain key is stored
    under itself, a keyed widget id under its user key (``id_key_mapping``; skipped when unmapped);
    the walk over ``_keys()`` keeps the dict's order, so where two entries land on one key the
    same one wins. About a third of the dict's cost on a 55-entry session (the walk and the key set
    remain); the reads of the other entries go.
    """
    wid_key_map = state._key_id_mapper.id_key_mapping
    # the entries filtered_state stores under ``key``: the key itself (a plain key), and the keyed
    # widget ids mapped to it; then the same walk, in the same order, reading only those
    stored_here = {k for k, user_key in wid_key_map.items()
                   if user_key == key and common.is_keyed_element_id(k) and not _is_internal_key(k)}
    if not common.is_element_id(key) and not _is_internal_key(key):
        stored_here.add(key)
    found = _MISSING
    for k in state._keys():
        if k in stored_here:
            found = state[k]
    return found


class KeyView:
    """What the widget modules read of ``filtered_state``: ``key in view`` and ``view[key]``."""

    __slots__ = ("_safe", "_memo")

    def __init__(self, safe: Any) -> None:
        self._safe = safe
        self._memo: dict[str, Any] = {}

    def _value(self, key: str) -> Any:
        if key not in self._memo:
            with self._safe._lock:  # as SafeSessionState.filtered_state
                self._memo[key] = filtered_value(self._safe._state, key)
        return self._memo[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._value(key) is not _MISSING

    def __getitem__(self, key: str) -> Any:
        value = self._value(key)
        if value is _MISSING:
            raise KeyError(key)
        return value


class WidgetSessionState:
    """The session's ``SafeSessionState`` with :class:`KeyView` as its ``filtered_state``; every other
    attribute is the wrapped object's."""

    __slots__ = ("_safe",)

    def __init__(self, safe: Any) -> None:
        self._safe = safe

    @property
    def filtered_state(self) -> KeyView:
        return KeyView(self._safe)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._safe, name)


def get_session_state() -> WidgetSessionState:
    """Streamlit's ``get_session_state()``, wrapped (:class:`WidgetSessionState`)."""
    return WidgetSessionState(session_state_proxy.get_session_state())


def install() -> list[str]:
    """Point the widget modules' ``get_session_state`` here (once per process); returns the
    modules patched."""
    with _LOCK:
        if _INSTALLED:
            return list(_INSTALLED)
        if not isinstance(getattr(SessionState, "filtered_state", None), property):
            return []
        for name in MODULES:
            try:
                mod = importlib.import_module(name)
            except ImportError:
                continue
            if getattr(mod, "get_session_state", None) is session_state_proxy.get_session_state:
                mod.get_session_state = get_session_state
                _INSTALLED.append(name)
        return list(_INSTALLED)
