"""Every page's settings a session touched, for the share link and the scenario file.

A page's own controls (the load test's arrivals, the frontier's overlays, the planner's sort …) are
widgets of that page: Streamlit drops their state, and their ``?key=`` leaves the address bar, when
the user moves to another page. A link made on the planner then lost the load test's arrivals and
the frontier's overlays. So:

* every page control keeps its last value in the session (:func:`ui.labelled.keep`, drawn through
  :func:`ui.state.render_control` or :func:`ui.labelled.render`) and is registered here as touched;
* the share link and the scenario file list every touched control (:func:`values`), not only the
  controls of the page they are made on;
* a link holding another page's settings seeds them on the first run of its session
  (:func:`seed_from_link`); a scenario file's are applied by :func:`apply`; either way that page
  opens with them (its widget takes the kept value, :func:`ui.labelled.carry_over`).

Values here are the controls' own (parsed) values; the link spells them with ``Control.url_value``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import streamlit as st

from ui import labelled

_TOUCHED = "_touched_controls"  # key -> Control: every page control drawn or set in this session
_SEEDED = "_link_seeded"  # the link's page settings were read (the first run of the session)


@functools.cache  # fixed at import; asked on every page control drawn (15 times a frontier rerun)
def page_controls() -> Mapping[str, Any]:
    """Every page-level control of the app, by key (the sidebar's are :data:`ui.controls.SHARED`)."""
    from ui import controls as C  # noqa: PLC0415
    from ui.loadtest.controls import LOADTEST  # noqa: PLC0415
    from ui.perf.controls import ALL as PERF  # noqa: PLC0415
    from ui.planner.controls import PL_PRICES, PLANNER  # noqa: PLC0415

    return MappingProxyType({c.key: c for c in (*C.PAGE, *LOADTEST, *PERF, *PLANNER, PL_PRICES)})


def touch(ctl: Any) -> None:
    """Register a page control as touched in this session (drawn, or set by a link or a file)."""
    if ctl.key in page_controls():
        st.session_state.setdefault(_TOUCHED, {})[ctl.key] = ctl


def touched() -> dict[str, Any]:
    """The page controls touched in this session, by key."""
    return dict(st.session_state.get(_TOUCHED, {}))


def current(ctl: Any, drawn: bool) -> Any:
    """A control's value now: its widget's when drawn in this run, else the value kept when its page
    was left (or set by a link or a file), else its default."""
    if drawn and ctl.key in st.session_state:
        return st.session_state[ctl.key]
    return labelled.kept(ctl.key, ctl.default)


def values(drawn: dict[str, Any]) -> dict[str, Any]:
    """Every touched page control's value (``drawn``: the controls drawn in this run), JSON-ready
    (tuples as lists) for the scenario file."""
    out = {}
    for key, ctl in touched().items():
        value = current(ctl, key in drawn)
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


def _parse(ctl: Any, raw: Any) -> Any:
    """One untrusted value (URL text or JSON) as the control's value; ``ValueError`` names the field."""
    if getattr(ctl, "kind", None) == "text":  # the planner's prices: the page validates the text itself
        from ui.planner.controls import MAX_PRICES_TEXT  # noqa: PLC0415
        from ui.controls import ControlValueError  # noqa: PLC0415

        if not isinstance(raw, str) or len(raw) > MAX_PRICES_TEXT:
            raise ControlValueError(ctl.key, str(raw)[:40], f"a text of at most {MAX_PRICES_TEXT:,} characters")
        return raw
    return ctl.parse(raw)


def parse_values(raw: Any) -> dict[str, Any]:
    """A scenario file's ``pages`` section: {key: value} of page controls, checked at the boundary.

    Raises :class:`~calc.spec.untrusted.InputError` (a ``ValueError``) naming an unknown key or a
    value a control does not take.
    """
    from calc.spec.untrusted import InputError, json_type, safe_name  # noqa: PLC0415

    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError("pages", json_type(raw), code="not_object")
    known = page_controls()
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise InputError("pages", ", ".join(safe_name(str(k), 40) for k in unknown[:10]), code="unknown_fields",
                         allowed=", ".join(list(known)[:12]) + f", … ({len(known)} in all, as in a downloaded scenario)")
    return {key: _parse(known[key], value) for key, value in raw.items()}


def apply(parsed: dict[str, Any]) -> None:
    """Set page controls (from a scenario file; in a callback, before the script): kept for their
    page, and the widget's own state when that page is the current one."""
    known = page_controls()
    for key, value in parsed.items():
        labelled.keep(key, value)
        st.session_state[key] = list(value) if isinstance(value, tuple) else value
        touch(known[key])


def seed_from_link(check) -> list[str]:
    """On the first run of a session, read every page control in the link (``check``: the URL check
    of :func:`ui.state.check_query_params`, which removes and names a bad value) and keep its value
    for its page. Returns the check's warnings."""
    if st.session_state.get(_SEEDED):
        return []
    st.session_state[_SEEDED] = True
    known = page_controls()
    present = tuple(ctl for key, ctl in known.items() if key in st.query_params)
    if not present:
        return []
    warnings = check(tuple(c for c in present if getattr(c, "kind", None) != "text"))
    for ctl in present:
        if ctl.key not in st.query_params:  # removed by the check
            continue
        try:
            raw = st.query_params.get_all(ctl.key)
            value = _parse(ctl, raw if ctl.kind in ("multi", "multi_int") else raw[-1])
        except ValueError:
            continue
        labelled.keep(ctl.key, value)
        touch(ctl)
    return warnings
