"""The request's lengths, asked as a user thinks of them: input (prompt) tokens and output tokens.

The app and its links keep two values: ``context`` (input + output: what one request holds in the
KV cache, the memory page's tokens per request) and ``output_len``. The sidebar asked for the first
and hid the second in its engine section, so "context length" read as the prompt on one page and as
prompt + output on another (issue #19). It now draws two boxes, input and output, beside each
other, each a view over the stored pair in the way of :mod:`ui.mirror`: before it is drawn a box
takes its value from the pair, and a change writes the pair back (callbacks run before the script,
so every page and the link follow on the same run). Changing one keeps the other: a longer output
makes the context longer, not the prompt shorter. A caption under them states the sum and the
max_model_len it must fit.
"""

from __future__ import annotations

import streamlit as st

from calc.spec.inputs import MIN_CONTEXT_TOKENS
from ui import controls as C

INPUT_KEY = "input_tokens"  # the boxes' own keys (not in the link: context and output_len are)
OUTPUT_KEY = "output_tokens"
# The page-ignores of ui.shell name the stored values; the boxes are dimmed by their own keys.
VIEW_OF = {"context": INPUT_KEY, "output_len": OUTPUT_KEY}


def stored(state) -> tuple[int, int]:
    """(context, output_len) as ``state`` (the session state, or a dict of it) holds them (the link's, a
    scenario file's), else the defaults."""
    return (int(state.get(C.CONTEXT.key, C.CONTEXT.default)), int(state.get(C.OUTPUT_LEN.key, C.OUTPUT_LEN.default)))


def input_tokens(context: int, output_len: int) -> int:
    """The prompt: context − output (at least 1; a link whose output is not below its context is
    named by the scenario's own check).

    >>> input_tokens(2048, 256), input_tokens(256, 256)
    (1792, 1)
    """
    return max(1, int(context) - int(output_len))


def _on_input() -> None:
    out = int(st.session_state.get(C.OUTPUT_LEN.key, C.OUTPUT_LEN.default))
    st.session_state[C.CONTEXT.key] = max(MIN_CONTEXT_TOKENS, int(st.session_state[INPUT_KEY]) + out)


def _on_output() -> None:
    ctx, out = stored(st.session_state)
    new = int(st.session_state[OUTPUT_KEY])
    st.session_state[C.OUTPUT_LEN.key] = new
    st.session_state[C.CONTEXT.key] = max(MIN_CONTEXT_TOKENS, input_tokens(ctx, out) + new)  # the prompt stays


def render(t, where, state) -> tuple[int, int]:
    """The two boxes in ``where`` (the sidebar) and the caption under them; returns (context, output_len)."""
    ctx, out = stored(state)
    prompt = input_tokens(ctx, out)
    st.session_state[INPUT_KEY] = prompt
    st.session_state[OUTPUT_KEY] = out
    a, b = where.columns(2, vertical_alignment="bottom")  # the boxes level when a label wraps
    a.number_input(t("ctl.input_tokens"), min_value=max(1, MIN_CONTEXT_TOKENS - out), max_value=int(C.CONTEXT.hi) - out,
                   step=256, key=INPUT_KEY, on_change=_on_input, help=t("ctl.input_tokens.help"))
    b.number_input(t("ctl.output_len"), min_value=1, max_value=int(C.OUTPUT_LEN.hi), step=int(C.OUTPUT_LEN.step),
                   key=OUTPUT_KEY, on_change=_on_output, help=t("ctl.output_len.help"))
    return ctx, out
