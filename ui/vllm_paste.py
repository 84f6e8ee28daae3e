"""Sidebar box: paste a ``vllm serve …`` (or ``docker run … vllm/vllm-openai …``) command and the
sidebar takes its model and engine options. Parsing is :func:`calc.spec.vllm_command.parse_serve_command`;
here the options become control values, each validated by its control (named on error). User
text is only ever shown through ``st.code`` (literal, never Markdown), cut short.
"""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from calc.spec.catalog import CatalogError, get_model
from calc.spec.vllm_command import number_error, parse_serve_command, shown
from ui import controls as C
from ui.layout import lazy_expander
from ui.prefixcache.controls import PC_CACHING
from ui.safe import localize_allowed
from ui.speculative.controls import SPEC_K, SPEC_METHOD, SPEC_ON

TEXT_KEY = "vllm_command_text"
_RESULT = "_vllm_command_result"
# ParsedCommand option -> sidebar control key (page controls: the frontier's chunked-prefill toggle).
TO_CONTROL = {"tensor_parallel_size": "tp", "dtype": "dtype", "quantization": "quantization",
              "kv_cache_dtype": "kv_cache_dtype", "gpu_memory_utilization": "gpu_memory_utilization",
              "block_size": "block_size", "max_model_len": "max_model_len", "max_num_seqs": "max_num_seqs",
              "max_num_batched_tokens": "max_num_batched_tokens", "pipeline_parallel_size": "pp",
              "data_parallel_size": "dp", "enable_expert_parallel": "ep", "enable_prefix_caching": "pc_caching"}
# Page controls a command sets beside the sidebar's (the frontier, load test and planner read them): prefix
# caching on or off, and the speculative switch with the drafter's method and k (--speculative-config).
PAGE_CONTROLS = {c.key: c for c in (PC_CACHING, SPEC_ON, SPEC_METHOD, SPEC_K)}
SPECULATIVE_FLAG = "--speculative-config"
FLAG_OF = {"tp": "--tensor-parallel-size", "dtype": "--dtype", "quantization": "--quantization",
           "kv_cache_dtype": "--kv-cache-dtype", "gpu_memory_utilization": "--gpu-memory-utilization",
           "block_size": "--block-size", "max_model_len": "--max-model-len", "max_num_seqs": "--max-num-seqs",
           "max_num_batched_tokens": "--max-num-batched-tokens", "model": "model",
           "pp": "--pipeline-parallel-size", "dp": "--data-parallel-size", "ep": "--enable-expert-parallel",
           "pc_caching": "--enable-prefix-caching", "spec_on": SPECULATIVE_FLAG, "spec_method": SPECULATIVE_FLAG,
           "spec_k": SPECULATIVE_FLAG}
_ALIASES = {"dtype": {"fp16": "float16", "half": "float16", "bf16": "bfloat16", "fp32": "float32", "float": "float32"},
            "kv_cache_dtype": {"fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "float16": "fp16", "bfloat16": "bf16"}}


def control_of(key: str) -> C.Control:
    """The control a paste sets: the sidebar's, or one of :data:`PAGE_CONTROLS`."""
    return PAGE_CONTROLS[key] if key in PAGE_CONTROLS else C.BY_KEY[key]


def speculative_values(config) -> tuple[dict[str, Any], list[str]]:
    """The speculative inputs of a ``--speculative-config`` the command line accepted
    (:class:`calc.spec.speculative.SpeculativeConfig`), or the problem: the pages draft with n-gram,
    EAGLE, EAGLE-3 and MTP at k up to 8 (a draft model is the command line's).

    >>> from calc.spec.speculative import parse_speculative_config
    >>> speculative_values(parse_speculative_config('{"method": "eagle3", "num_speculative_tokens": 3}'))
    ({'spec_on': True, 'spec_method': 'eagle3', 'spec_k': 3}, [])
    >>> speculative_values(parse_speculative_config('{"method": "ngram", "num_speculative_tokens": 12}'))[1]
    ['--speculative-config (num_speculative_tokens): got 12, allowed integer 1 – 8']
    """
    values: dict[str, Any] = {SPEC_ON.key: True}
    for ctl, field, raw in ((SPEC_METHOD, "method", config.method),
                            (SPEC_K, "num_speculative_tokens", config.num_speculative_tokens)):
        try:
            values[ctl.key] = ctl.parse(raw)
        except C.ControlValueError as exc:
            return {}, [f"{SPECULATIVE_FLAG} ({field}): got {shown(repr(raw))}, allowed {exc.allowed}"]
    return values, []


def parse_model_name(text: str) -> str | None:
    """The model a pasted command names (None where it cannot be read)."""
    try:
        return parse_serve_command(text).model
    except ValueError:
        return None


def command_to_values(text: str) -> tuple[dict[str, Any], list[str], list[str]]:
    """Control values from a pasted command, the flags ignored, and the problems (named).

    >>> v, ignored, errors = command_to_values("vllm serve meta-llama/Llama-3.1-8B -tp 2 --dtype bf16 "
    ...                                        "--max-num-seqs 0 --no-enable-prefix-caching --enforce-eager")
    >>> v, ignored, errors
    ({'model': 'meta-llama/Llama-3.1-8B', 'tp': 2, 'dtype': 'bfloat16', 'pc_caching': False}, ['--enforce-eager'], ['--max-num-seqs: got 0, allowed integer 1 – 65,536 (or empty)'])
    """
    p = parse_serve_command(text)
    values: dict[str, Any] = {}
    bad = {number_error(flag, raw) for flag, raw in p.bad_numbers.values()}
    errors = [e for e in p.errors if e not in bad]  # numbers that could not be read: worded below, with their range
    if p.model is not None:
        try:
            values["model"] = get_model(p.model).id
        except CatalogError:
            errors.append(f"model: {shown(p.model)!r} is not in the catalog; upload its config.json "
                          "(sidebar, 'Your own model') and paste the command again")
            values[REFUSED] = True
    for name, (flag, raw) in p.bad_numbers.items():  # -tp inf, --max-num-seqs 1e309, --block-size -inf, …
        key = TO_CONTROL[name]
        named = FLAG_OF[key] + (f" ({flag})" if flag != FLAG_OF[key] else "")
        errors.append(f"{named}: got {shown(raw)!r}, allowed {C.BY_KEY[key].allowed().replace(' (or empty)', '')}")
    for name, raw in p.options.items():
        if name == "enable_chunked_prefill":
            values["chunked_prefill"] = bool(raw)
            continue
        if name == "speculative_config":
            spec, problems = speculative_values(raw)
            values.update(spec)
            errors += problems
            continue
        key = TO_CONTROL[name]
        raw = _ALIASES.get(key, {}).get(raw, raw) if isinstance(raw, str) else raw
        try:
            values[key] = control_of(key).parse(raw)
        except C.ControlValueError as exc:
            errors.append(f"{FLAG_OF[key]}: got {shown(repr(raw))}, allowed {exc.allowed}")
    return values, p.ignored, errors


# The problems above and calc.spec.vllm_command's (English by design: calc has no UI) -> message
# keys, so the box speaks the reader's language; an unknown message is shown as it is.
_MESSAGES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"^model: (?P<raw>.+) is not in the catalog; upload its config\.json .*$", re.S), "cmd.err.model_unknown"),
    (re.compile(r"^command: longer than (?P<n>[\d,]+) characters$"), "cmd.err.too_long"),
    (re.compile(r"^command: (?P<detail>.+) \(check the quotes\)$"), "cmd.err.quotes"),
    (re.compile(r"^command: expected 'vllm serve MODEL"), "cmd.err.not_vllm"),
    (re.compile(r"^(?P<field>[^:]+): needs a value$"), "cmd.err.needs_value"),
    (re.compile(r"^(?P<field>[^:]+): required$"), "reason.required"),  # --speculative-config's keys
    (re.compile(r"^(?P<field>--[\w-]+) is not valid JSON: (?P<detail>.+)$", re.S), "reason.json"),
    (re.compile(r"^(?P<field>[^:]+): got (?P<raw>.+), allowed (?P<allowed>.+)$", re.S), "reason.range"),
)
_SHLEX = {"No closing quotation": "cmd.err.shlex.no_closing", "No escaped character": "cmd.err.shlex.no_escaped"}


def localize(message: str, t) -> str:
    """One problem of the paste box in ``t``'s language (its user parts kept as they are: the box
    shows them with ``st.code``, literally).

    >>> from ui.i18n import Translator
    >>> zh = Translator("zh")
    >>> localize("--max-num-seqs: got 0, allowed integer 1 – 65,536 (or empty)", zh)
    '--max-num-seqs：收到 0，允许 整数 1 – 65,536 （或留空）'
    >>> localize("--block-size: needs a value", zh), localize("command: No closing quotation (check the quotes)", zh)
    ('--block-size：缺少取值', 'command：引号未闭合（请检查引号）')
    >>> localize("something new", zh)
    'something new'
    """
    for pattern, key in _MESSAGES:
        m = pattern.match(message)
        if m is None:
            continue
        parts = m.groupdict()
        if "allowed" in parts:
            parts["allowed"] = localize_allowed(parts["allowed"], t)
        if "detail" in parts and parts["detail"] in _SHLEX:
            parts["detail"] = t(_SHLEX[parts["detail"]])
        return t(key, **parts)
    return message


REFUSED = "_model_refused"  # in command_to_values' values: the command's model is not in the catalog
# What `vllm serve` does with a flag the command leaves out: each control's default is vLLM's own
# (tp 1, dtype/quantization/KV auto, 0.9, block 16, max_model_len / max_num_seqs / token budget
# empty = vLLM picks); chunked prefill and prefix caching are on by default in the V1 engine, and
# without --speculative-config nothing is drafted.
OMITTED_DEFAULTS = {**{key: control_of(key).default for key in TO_CONTROL.values()}, "chunked_prefill": True,
                    SPEC_ON.key: SPEC_ON.default}


def values_to_apply(values: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """What a paste sets: nothing when its model was refused (its flags belong to that model, not to
    the one selected); else its values, and vLLM's default for every engine flag it leaves out (a
    second paste does not inherit the first one's flags). A flag whose value was bad keeps ``current``.

    >>> values_to_apply({"model": "Qwen/Qwen3-8B", "tp": 2}, {"max_num_seqs": 64, "dtype": "auto"})["max_num_seqs"] is None
    True
    >>> values_to_apply({REFUSED: True, "tp": 2}, {})
    {}
    """
    if values.get(REFUSED):
        return {}
    out = {key: default for key, default in OMITTED_DEFAULTS.items() if key not in current or current[key] != default}
    out.update(values)
    return out


def _apply() -> None:
    text = st.session_state.get(TEXT_KEY, "") or ""
    try:
        values, ignored, errors = command_to_values(text)
    except ValueError as exc:
        st.session_state[_RESULT] = ({}, [], [str(exc)])
        return
    bad_flags = {key for key, flag in FLAG_OF.items() if any(e.startswith((flag + ":", flag + " ")) for e in errors)}
    state = st.session_state
    apply = {k: v for k, v in values_to_apply(values, {k: state.get(k) for k in OMITTED_DEFAULTS}).items()
             if k in values or k not in bad_flags}
    for key, value in apply.items():
        state[key] = value
    shown_values = {k: v for k, v in values.items() if k != REFUSED}
    reset = sorted(k for k in apply if k not in values)
    st.session_state[_RESULT] = (shown_values, ignored, errors, bool(values.get(REFUSED)), reset)


def render(t, where=st.sidebar) -> None:
    """The paste box and what the last paste did (applied values, ignored flags, problems)."""
    box = lazy_expander(where, t("cmd.paste.title"), "sec_paste")
    if not box.open:  # drawn only while open; the pasted command survives closing (persist_state)
        return
    with box:
        st.text_area(t("cmd.paste.label"), key=TEXT_KEY, height=120, max_chars=20_000,
                     placeholder="vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2 ...",
                     help=t("cmd.paste.help"), persist_state="session")
        st.button(t("cmd.paste.apply"), key="vllm_command_apply", on_click=_apply)
        result = st.session_state.get(_RESULT)
        if not result:
            return
        values, ignored, errors, refused, reset = (*result, False, [])[:5]
        if refused:
            st.warning(t("cmd.paste.refused"))
        elif values:
            st.success(t("cmd.paste.applied", n=t.count("setting", len(values))))
            st.code(", ".join(f"{k}={v}" for k, v in values.items()), language=None, wrap_lines=True)
            given = parse_model_name(st.session_state.get(TEXT_KEY, ""))
            if given and values.get("model") and given.lower() != values["model"].lower():
                st.caption(t("cmd.paste.variant", given=shown(given), id=values["model"]))
            if reset:
                st.caption(t("cmd.paste.reset", flags=", ".join(FLAG_OF.get(k, "--enable-chunked-prefill") for k in reset)))
        if ignored:
            st.caption(t("cmd.paste.ignored"))
            st.code(" ".join(ignored), language=None, wrap_lines=True)
        if errors:
            st.error(t("cmd.paste.errors"))
            st.code("\n".join(localize(e, t) for e in errors), language=None, wrap_lines=True)
