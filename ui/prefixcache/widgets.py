"""The reuse inputs other pages take (the frontier, the load test): one call draws them in a closed
expander, bound to the same URL keys as the prefix-cache page, and returns the
:class:`calc.traffic.prefix_cache.PrefixReuse` (none by default: those pages' numbers unchanged)."""

from __future__ import annotations

import streamlit as st

from calc.traffic.prefix_cache import PrefixReuse
from ui.controls import Control
from ui.prefixcache.controls import PC_CACHING, PC_KIND, PC_PREFIX_LEN, PC_PREFIXES, PC_TURNS, reuse_of
from ui import labelled
from ui.state import check_query_params, render_control

# Elsewhere than on its own page the reuse starts at none (random tokens, as benchmarks send).
KIND_ELSEWHERE = Control("pc_reuse", "select", "none", options=PC_KIND.options)


INPUTS = (KIND_ELSEWHERE, PC_PREFIX_LEN, PC_PREFIXES, PC_TURNS, PC_CACHING)


def prefix_inputs(t, *, input_len: int, where=st) -> PrefixReuse:
    """Draw the reuse controls (an expander) and return the reuse they describe. A bad value in the
    link is named in a warning (and dropped), as on the prefix-cache page: on the memory page, the
    landing page, it was dropped without a word."""
    for warning in check_query_params(INPUTS, t):
        where.warning(warning)
    with where.expander(t("pc.inputs.title")):  # one control a row: it sits in a narrow column of the page's controls
        kind = labelled.render(KIND_ELSEWHERE, t, lambda o: t(f"opt.pc_kind.{o}"))
        plen = render_control(PC_PREFIX_LEN, t, disabled=kind != "shared")
        n = render_control(PC_PREFIXES, t, disabled=kind != "shared")
        turns = render_control(PC_TURNS, t, disabled=kind != "chat")
        caching = render_control(PC_CACHING, t, disabled=kind == "none")
    return reuse_of(kind, plen, n, turns, caching, input_len=input_len)
