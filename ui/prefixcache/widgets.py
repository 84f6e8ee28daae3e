"""The reuse inputs other pages take (the frontier, the load test, the planner, the memory page): one
call draws them in a closed expander, under the same URL keys as the prefix-cache page, and returns
the :class:`calc.traffic.prefix_cache.PrefixReuse` (none by default: those pages' numbers unchanged).

The expander is lazy (:func:`ui.layout.lazy_expander`): its five widgets are drawn only while it is
open. Closed, it sends its label alone, where a plain expander sent and mounted all five on every
run of four pages, before their first chart (bench/first_paint.py). Their values live in the
session and the URL either way: the widgets are not bound to the URL by Streamlit (a bound widget's
``?key=`` leaves the address bar while it is not drawn); this module writes the link itself,
drawn or not, and keeps each value for the next page (:func:`ui.labelled.keep`, as the prefix-cache
page's widgets of the same keys do)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from calc.traffic.prefix_cache import PrefixReuse
from ui import labelled, lazy_inputs
from ui.controls import Control
from ui.layout import lazy_expander
from ui.prefixcache.controls import PC_CACHING, PC_KIND, PC_PREFIX_LEN, PC_PREFIXES, PC_TURNS, reuse_of
from ui.state import check_query_params, render_control

# Elsewhere than on its own page the reuse starts at none (random tokens, as benchmarks send).
KIND_ELSEWHERE = Control("pc_reuse", "select", "none", options=PC_KIND.options)


INPUTS = (KIND_ELSEWHERE, PC_PREFIX_LEN, PC_PREFIXES, PC_TURNS, PC_CACHING)
SECTION = "sec_reuse"  # the lazy expander's key (its open flag: ui.layout.lazy_open)
_RENDERED = "_rendered_controls"  # as ui.state._RENDERED: the controls of the share link


def _widgets(t) -> None:
    """The five widgets (one a row: they sit in a narrow column of the page's controls), unbound
    (:func:`ui.state.render_control` ``bound=False``): ``persist_state`` keeps each value in the
    session while the expander is closed. The kind's options are shown translated."""
    opts = KIND_ELSEWHERE.choices()
    kind = st.selectbox(t(f"ctl.{KIND_ELSEWHERE.key}"), opts, index=opts.index(KIND_ELSEWHERE.default),
                        format_func=lambda o: t(f"opt.pc_kind.{o}"), key=KIND_ELSEWHERE.key,
                        help=t(f"ctl.{KIND_ELSEWHERE.key}.help"), persist_state="session")
    for ctl, off in ((PC_PREFIX_LEN, kind != "shared"), (PC_PREFIXES, kind != "shared"),
                     (PC_TURNS, kind != "chat"), (PC_CACHING, kind == "none")):
        render_control(ctl, t, bound=False, disabled=off)


def prefix_inputs(t, *, input_len: int, where=st) -> PrefixReuse:
    """Draw the reuse controls (a lazy expander) and return the reuse they describe. A bad value in
    the link is named in a warning (and dropped), as on the prefix-cache page."""
    for warning in check_query_params(INPUTS, t):
        where.warning(warning)
    lazy_inputs.seed(INPUTS)  # session, link or kept value; a change made on another page since wins
    box = lazy_expander(where, t("pc.inputs.title"), SECTION)
    if box.open:
        with box:
            _widgets(t)
    rendered = st.session_state.setdefault(_RENDERED, {})
    values: dict[str, Any] = {}
    for ctl in INPUTS:
        value = values[ctl.key] = st.session_state.get(ctl.key, ctl.default)
        rendered[ctl.key] = ctl  # in the share link, drawn or not
        labelled.keep(ctl.key, value)
        lazy_inputs.remember(ctl.key)
        labelled.write_url(ctl, value)
    if not box.open:  # a link may have set them: say so under the closed expander
        changed = sum(ctl.url_value(values[ctl.key]) is not None for ctl in INPUTS)
        if changed:
            where.caption(t("sidebar.changed", n=changed))
    return reuse_of(values[KIND_ELSEWHERE.key], values[PC_PREFIX_LEN.key], values[PC_PREFIXES.key],
                    values[PC_TURNS.key], values[PC_CACHING.key], input_len=input_len)
