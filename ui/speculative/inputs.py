"""The speculative-decoding inputs other pages take (frontier, load test): one call draws a
switch and, when it is on, the drafter's method, k and acceptance (the same URL keys as the
speculative page), and returns the config (None when off)."""

from __future__ import annotations

import streamlit as st

from calc.spec.speculative import SpeculativeConfig
from ui.speculative.controls import SPEC_ACCEPTANCE, SPEC_K, SPEC_METHOD, SPEC_ON
from ui.speculative.view import speculative_config
from ui.state import check_query_params, render_control

INPUTS = (SPEC_ON, SPEC_METHOD, SPEC_K, SPEC_ACCEPTANCE)


def speculative_inputs(t, where=st) -> SpeculativeConfig | None:
    """Draw the switch (and the three inputs when on) in ``where``; the config or None."""
    for warning in check_query_params(INPUTS, t):
        where.warning(warning)
    on = render_control(SPEC_ON, t, where)
    if not on:
        return None
    cols = where.columns(3)
    method = render_control(SPEC_METHOD, t, cols[0])
    k = render_control(SPEC_K, t, cols[1])
    acceptance = render_control(SPEC_ACCEPTANCE, t, cols[2])
    return speculative_config(method, k, acceptance)
