"""Scenario compare and the course's §3.5 case study, on every page.

"Pin as A" writes the current sidebar's non-default values, compactly, into the URL-bound key
``compare`` (``gpu=h100-sxm;tp=2;chunked_prefill=false``); whatever is in the sidebar is B. Both
are validated like any parameter (each value by its control; a bad one is named and the
comparison is skipped). Below the page, A and B side by side with the change of every headline
number (:func:`calc.plan.compare.headline`). The case-study buttons load §3.5's before / after
scenario into the sidebar (every page reads it), or both as A and B.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import streamlit as st

from calc.plan.compare import HEADLINE_FIELDS, deltas, headline
from ui import controls as C
from ui import format as F
from ui.layout import lazy_expander
from ui.perf.controls import CHUNKED
from ui.planner.controls import TextControl
from ui.safe import reason_text

KEY = "compare"
COMPARE = TextControl(KEY)
EXTRA = {CHUNKED.key: CHUNKED}  # page controls that change the headline numbers
MAX_TEXT = 2000
# Course §3.5 (ui/perf/view.py CASE_*): Llama-2-7B FP16 on one A100 80GB, context 2,048 with 256 output tokens.
CASE_BASE = {"model": "meta-llama/Llama-2-7b-hf", "gpu": "a100-80gb", "tp": 1, "dtype": "float16", "context": 2048,
             "output_len": 256}
CASE_BEFORE = CASE_BASE | {"concurrency": 16, CHUNKED.key: False}
CASE_AFTER = CASE_BASE | {"concurrency": 32, CHUNKED.key: True, "max_num_batched_tokens": 512, "kv_cache_dtype": "fp8"}


def _controls() -> dict[str, C.Control]:
    return {c.key: c for c in C.SHARED} | EXTRA


def encode(values: dict[str, Any]) -> str:
    """Non-default values as ``key=value;…`` (the URL spelling of each control).

    >>> encode({"gpu": "h100-sxm", "tp": 2, "dtype": "auto", "chunked_prefill": False})
    'gpu=h100-sxm;tp=2;chunked_prefill=false'
    """
    ctl = _controls()
    parts = []
    for key, value in values.items():
        if key not in ctl or value == C.CUSTOM_MODEL:
            continue
        text = ctl[key].url_value(value)
        if text is not None:
            parts.append(f"{key}={text}")
    return ";".join(parts)


def decode(text: str) -> dict[str, Any]:
    """Values from ``key=value;…``, each parsed by its control; :class:`ControlValueError` names
    the field (unknown keys and malformed parts too).

    >>> decode("gpu=h100-sxm;tp=2;chunked_prefill=false")
    {'gpu': 'h100-sxm', 'tp': 2, 'chunked_prefill': False}
    >>> try:
    ...     decode("tp=3")
    ... except C.ControlValueError as e:
    ...     print(e)
    tp: got '3', allowed {1, 2, 4, 8, 16, 32, 64}
    """
    if len(text) > MAX_TEXT:
        raise C.ControlValueError(KEY, text[:40] + "…", f"at most {MAX_TEXT:,} characters")
    ctl = _controls()
    out: dict[str, Any] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep or key not in ctl:
            raise C.ControlValueError(KEY, part.strip()[:40], "key=value pairs separated by ';', keys from: "
                                      + ", ".join(ctl))
        out[key] = ctl[key].parse(raw.strip())
    return out


def _defaults() -> dict[str, Any]:
    return {k: c.default for k, c in _controls().items()}


_SECTION_OPEN = "_open_sec_compare"  # ui.layout.lazy_expander's flag: the buttons are inside, so it stays open


def _pin() -> None:
    current = {k: st.session_state.get(k, c.default) for k, c in _controls().items()}
    st.session_state[KEY] = encode(current)
    st.session_state[_SECTION_OPEN] = True


def _clear() -> None:
    st.session_state[KEY] = ""
    st.session_state[_SECTION_OPEN] = True


def _load(values: dict[str, Any], compare_with: dict[str, Any] | None = None) -> None:
    for key, value in (_defaults() | values).items():
        st.session_state[key] = value
    st.session_state[KEY] = encode(compare_with) if compare_with else ""
    st.session_state[_SECTION_OPEN] = True


def render_controls(t, where=st.sidebar) -> None:
    """Sidebar: the §3.5 buttons, "pin as A", the URL-bound A text, "clear"."""
    st.session_state.setdefault("_rendered_controls", {})[KEY] = COMPARE  # in the share link
    # Drawn while open, or while a comparison is set (its text box is bound to the link: undrawn,
    # Streamlit would drop ?compare= from it); otherwise only the section's title is sent.
    has_value = bool(st.session_state.get(KEY) or st.query_params.get(KEY))
    box = lazy_expander(where, t("cmp.title"), "sec_compare", expanded=has_value)
    if not (box.open or has_value):
        return
    with box:
        st.caption(t("cmp.case.caption"))
        b1, b2 = st.columns(2)
        b1.button(t("cmp.case.before"), key="case_before", on_click=_load, args=(CASE_BEFORE,))
        b2.button(t("cmp.case.after"), key="case_after", on_click=_load, args=(CASE_AFTER,))
        st.button(t("cmp.case.both"), key="case_both", on_click=_load, args=(CASE_AFTER, CASE_BEFORE))
        st.divider()
        c1, c2 = st.columns(2)
        c1.button(t("cmp.pin"), key="compare_pin", on_click=_pin, help=t("cmp.pin.help"))
        c2.button(t("cmp.clear"), key="compare_clear", on_click=_clear)
        st.text_input(t("cmp.text"), key=KEY, bind="query-params", max_chars=MAX_TEXT, help=t("cmp.text.help"))


def _fmt(name: str, v: float | None) -> str:
    """One headline number in the unit its field name ends with (house style: ``_bytes``, ``_s``,
    ``_tokens_per_s``, …). Rates are tested before ``_s``: ``output_tokens_per_s`` ends in ``_s`` too.

    >>> _fmt("output_tokens_per_s", 770_056.5), _fmt("ttft_s", 0.0421), _fmt("max_concurrency", 12.0)
    ('770,056 tok/s', '42.1 ms', '12')
    >>> _fmt("requests_per_s", 3.25), _fmt("usd_per_million_output_tokens", 0.1234), _fmt("ttft_s", None)
    ('3.25 req/s', '$0.123', '—')
    """
    if v is None or v != v:
        return "—"
    if name.endswith("_bytes"):
        return F.gib(v)
    if name.endswith("tokens_per_s"):
        return f"{F.integer(v)} tok/s"
    if name.endswith("requests_per_s"):
        return f"{F.number(v, 2)} req/s"
    if name.startswith("usd_"):
        return f"${F.number(v, 3)}"
    if name.endswith("_s"):  # a latency, in seconds
        return f"{F.number(v * 1e3, 1)} ms"
    if name == "max_concurrency":
        return F.integer(v)
    raise ValueError(f"no unit known for headline field {name!r}")


def rows(a: dict[str, Any], b: dict[str, Any], sc_a, sc_b, t) -> list[dict[str, str]]:
    """The comparison table: one row per headline number, A, B and B − A in %."""
    ha = headline(sc_a.arch, sc_a.gpu, sc_a.serving, sc_a.efficiency, concurrency=sc_a.concurrency,
                  context_tokens=sc_a.context_tokens, chunked=bool(a.get(CHUNKED.key, True)))
    hb = headline(sc_b.arch, sc_b.gpu, sc_b.serving, sc_b.efficiency, concurrency=sc_b.concurrency,
                  context_tokens=sc_b.context_tokens, chunked=bool(b.get(CHUNKED.key, True)))
    d = deltas(ha, hb)
    return [{t("cmp.col.metric"): t(f"cmp.m.{n}"), "A": _fmt(n, getattr(ha, n)), "B": _fmt(n, getattr(hb, n)),
             t("cmp.col.delta"): "—" if d[n] is None else f"{d[n] * 100:+.1f} %"} for n in HEADLINE_FIELDS]


def render_comparison(sc_b, t) -> None:
    """Below the page: A (pinned) against B (the sidebar), when A is set."""
    from ui.state import build_scenario  # noqa: PLC0415

    text = st.session_state.get(KEY) or ""
    if not text.strip():
        return
    st.divider()
    st.subheader(t("cmp.heading"))
    try:
        a = decode(text)
        sc_a = build_scenario({c.key: c.default for c in C.SHARED} | {k: v for k, v in a.items() if k in C.BY_KEY})
    except (C.ControlValueError, ValueError) as exc:
        st.warning(t("cmp.bad"))
        st.code(reason_text(exc, t)[:300], language=None, wrap_lines=True)  # user text: literal, cut short
        return
    b = {CHUNKED.key: st.session_state.get(CHUNKED.key, CHUNKED.default)}
    st.caption(t("cmp.caption", a=sc_a.arch.name + " · " + t.gpu(sc_a.gpu), b=sc_b.arch.name + " · " + t.gpu(sc_b.gpu)))
    st.code(f"A: {encode(a) or '(defaults)'}\nB: {encode(sc_b.values | b) or '(defaults)'}", language=None,
            wrap_lines=True)
    st.table(rows(a, b, sc_a, sc_b, t), hide_index=True)


# ----------------------------------------------------------------------------- frontier chips


def chip_label(token: str, t) -> str:
    """What a comparison chip shows: the translated variant (``kv:fp8`` → "KV cache fp8" / "KV Cache fp8"),
    shorter than the legend's where a chip would cut it ("Preset: low latency", "GPU: H100 SXM5 80GB")."""
    from calc.spec.catalog import get_gpu  # noqa: PLC0415
    from ui.perf.view import token_label  # noqa: PLC0415

    kind, _, value = token.partition(":")
    if kind == "preset":
        return t("fr.variant.preset", value=t(f"fr.value.{value}.short"))
    if kind == "gpu":
        name = get_gpu(value).name
        return t("fr.variant.gpu", name=F.gpu_short(name))
    return token_label(token, t)


def render_overlays(t, where=st) -> list[str]:
    """The frontier's "compare with" chips, labelled in the reader's language; the link keeps the
    tokens (``?overlays=kv:fp8&overlays=tp:2``), the same in every language (:mod:`ui.labelled`)."""
    from ui import labelled  # noqa: PLC0415
    from ui.perf.controls import MAX_OVERLAYS, OVERLAYS  # noqa: PLC0415

    labels = _chip_labels(t.lang)  # ~75 options: Streamlit formats every one on every rerun
    return labelled.render(OVERLAYS, t, lambda tok: labels[tok] if tok in labels else chip_label(tok, t), where,
                           max_selections=MAX_OVERLAYS, wrap=True)  # long labels: every chip visible, not a scrolled row


@lru_cache(maxsize=8)
def _chip_labels(lang: str) -> dict[str, str]:
    """Every overlay chip's label in ``lang`` (:func:`chip_label`), made once per process: the same
    text for every session, where each rerun formatted all ~75 options again."""
    from ui.i18n import Translator  # noqa: PLC0415
    from ui.perf.controls import OVERLAYS  # noqa: PLC0415

    t, labels = Translator(lang), {}
    for tok in OVERLAYS.choices():
        try:
            labels[tok] = chip_label(tok, t)
        except (KeyError, ValueError):  # formatted at draw time instead (ui.labelled: the token itself)
            pass
    return labels
