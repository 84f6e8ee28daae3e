"""Shared controls: the sidebar, its URL state, scenario files, and the validated scenario.

:func:`render_sidebar` draws every shared control (bound to the query string), checks the raw
query string first so a bad parameter is named in a warning, and returns a :class:`Scenario`:
the validated calculator inputs every page builds on. Invalid combinations keep the widgets as
the user set them, show the reason, and fall back to the last valid scenario.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from pydantic import ValidationError

from calc.spec.catalog import get_gpu, get_model, model_ids
from calc.spec.hf_config import ConfigError, arch_from_hf_config, parse_config_text
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig, describe_validation_error
from calc.sizing.scenario import ResolvedServing, resolve_serving
from ui import controls as C
from ui.i18n import Translator

SCENARIO_FORMAT = "llm-inference-calculator/scenario"
SCENARIO_VERSION = 1
MAX_SCENARIO_BYTES = 2_000_000

_CUSTOM_ARCH = "_custom_arch"  # validated ModelArch from the user's config.json
_CUSTOM_CFG = "_custom_config"  # that config as a dict (saved in scenario files)
_LAST_GOOD = "_last_good_scenario"
_MESSAGES = "_pending_messages"  # (level, text) set by callbacks, shown on the next run
_RENDERED = "_rendered_controls"  # controls drawn in this run, for the shareable link


@dataclass(frozen=True)
class Scenario:
    """Validated inputs of one view: what every page computes from."""

    arch: ModelArch
    gpu: GPUSpec
    serving: ServingConfig
    efficiency: Efficiency
    resolved: ResolvedServing
    context_tokens: int
    concurrency: int
    values: dict[str, Any] = field(default_factory=dict)  # control key -> value (scenario file)


# ----------------------------------------------------------------------------- options

def _model_choices() -> tuple[str, ...]:
    ids = tuple(model_ids())
    return ids + ((C.CUSTOM_MODEL,) if _CUSTOM_ARCH in st.session_state else ())


# The model list grows by "custom" once the user gave a config.json in this session.
MODEL = dataclasses.replace(C.MODEL, options=_model_choices)
SHARED = (MODEL,) + C.SHARED[1:]
MAIN = (MODEL,) + C.MAIN[1:]


# ----------------------------------------------------------------------------- query string

def check_query_params(controls: tuple[C.Control, ...], t: Translator) -> list[str]:
    """Warnings for query parameters the controls cannot take (bound widgets drop them silently).

    Runs before the widgets are drawn; the widget then shows its default.
    """
    out = []
    for ctl in controls:
        if ctl.key not in st.query_params:
            continue
        multi = ctl.kind in ("multi", "multi_int")
        raw = st.query_params.get_all(ctl.key) if multi else st.query_params[ctl.key]
        if ctl.key == "model" and raw == C.CUSTOM_MODEL and _CUSTOM_ARCH not in st.session_state:
            out.append(t("warn.custom_not_in_link", default=ctl.default))
            continue
        new = None if multi else C.alias_of(ctl, raw)
        if new is not None:  # an old spelling: rewrite the link before the bound widget reads it
            st.query_params[ctl.key] = new
            st.session_state[ctl.key] = new
            out.append(t("warn.old_spelling", key=ctl.key, raw=raw, new=new, reason=t(f"alias.{ctl.key}.{raw}")))
            continue
        try:
            ctl.parse(raw)
        except C.ControlValueError as e:
            shown_raw = ",".join(raw) if multi else raw
            out.append(t("warn.bad_param", key=ctl.key, raw=shown_raw, allowed=e.allowed,
                         default=_shown(ctl.default, t)))
    return out


def _shown(value: Any, t: Translator) -> str:
    if value is None:
        return t("word.vllm_default")
    if isinstance(value, tuple):
        return ", ".join(_shown(v, t) for v in value)
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def render_control(ctl: C.Control, t: Translator, where=st, *, placeholder: str | None = None) -> Any:
    """Draw one URL-bound widget from its spec (label and help text from the translations)."""
    label, help_ = t(f"ctl.{ctl.key}"), t(f"ctl.{ctl.key}.help")
    common = dict(key=ctl.key, bind="query-params", help=help_)
    st.session_state.setdefault(_RENDERED, {})[ctl.key] = ctl
    if ctl.kind == "select":
        opts = ctl.choices()
        index = opts.index(ctl.default) if ctl.default in opts else 0
        return where.selectbox(label, opts, index=index, **common)
    if ctl.kind == "toggle":
        return where.toggle(label, value=bool(ctl.default), **common)
    if ctl.kind in ("multi", "multi_int"):
        return where.multiselect(label, ctl.choices(), default=list(ctl.default), accept_new_options=ctl.kind == "multi_int",
                                 **common)
    num = int if ctl.integer else float
    if ctl.kind == "slider":
        return where.slider(label, min_value=num(ctl.lo), max_value=num(ctl.hi), value=num(ctl.default),
                            step=num(ctl.step), **common)
    return where.number_input(label, min_value=num(ctl.lo), max_value=num(ctl.hi),
                              value=None if ctl.default is None else num(ctl.default), step=num(ctl.step),
                              placeholder=placeholder, **common)


def share_query(controls: dict[str, C.Control], lang: str) -> str:
    """The query string of the current view (non-default values only, like the bound widgets)."""
    from urllib.parse import urlencode

    params = {"lang": lang}
    for key, ctl in controls.items():
        value = ctl.url_value(st.session_state.get(key, ctl.default))
        if value is not None:
            params[key] = value
    return urlencode(params, doseq=True)


# ----------------------------------------------------------------------------- scenario files

def scenario_json(sc: Scenario) -> str:
    """The scenario as a JSON document that :func:`load_scenario_text` reads back."""
    doc = {
        "format": SCENARIO_FORMAT,
        "version": SCENARIO_VERSION,
        "controls": sc.values,
        "custom_config": st.session_state.get(_CUSTOM_CFG) if sc.values.get("model") == C.CUSTOM_MODEL else None,
        "model": {"id": sc.arch.id, "name": sc.arch.name},
        "gpu": {"id": sc.gpu.id, "name": sc.gpu.name},
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def load_scenario_text(text: str | bytes) -> tuple[dict[str, Any], ModelArch | None, dict | None]:
    """Validate an uploaded scenario file; return control values (and a custom model if any).

    Raises ``ValueError`` with a message naming the field and what it allows.
    """
    if len(text) > MAX_SCENARIO_BYTES:
        raise ValueError(f"scenario file is larger than {MAX_SCENARIO_BYTES:,} bytes")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"scenario file is not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != SCENARIO_FORMAT:
        raise ValueError(f"not a scenario file: 'format' must be {SCENARIO_FORMAT!r}")
    if doc.get("version") != SCENARIO_VERSION:
        raise ValueError(f"version: got {doc.get('version')!r}, allowed {SCENARIO_VERSION}")
    values = doc.get("controls")
    if not isinstance(values, dict):
        raise ValueError("controls: must be a JSON object of control values")
    unknown = sorted(set(values) - set(C.BY_KEY))
    if unknown:
        raise ValueError(f"controls: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(C.BY_KEY)}")
    arch = cfg = None
    if values.get("model") == C.CUSTOM_MODEL:
        cfg = doc.get("custom_config")
        if not isinstance(cfg, dict):
            raise ValueError("custom_config: model is 'custom' but the file has no config.json object")
        try:
            arch = arch_from_hf_config(cfg, model_id=str(cfg.get("_name_or_path") or "custom"))
        except ConfigError as exc:
            raise ValueError(f"custom_config: {exc}") from None
    parsed = {}
    for key, raw in values.items():
        ctl = C.BY_KEY[key]
        if key == "model" and raw == C.CUSTOM_MODEL:
            parsed[key] = raw
            continue
        try:
            parsed[key] = ctl.parse(raw)
        except C.ControlValueError as exc:
            raise ValueError(str(exc)) from None
    merged = {c.key: c.default for c in C.SHARED} | parsed
    build_scenario(merged, custom_arch=arch)  # cross-field rules; raises ValueError
    return merged, arch, cfg


def _on_scenario_upload() -> None:
    up = st.session_state.get("scenario_upload")
    if up is None:
        return
    try:
        values, arch, cfg = load_scenario_text(up.getvalue())
    except ValueError as exc:
        _post("error", ("msg.scenario_rejected", {"reason": str(exc)}))
        return
    if arch is not None:
        st.session_state[_CUSTOM_ARCH], st.session_state[_CUSTOM_CFG] = arch, cfg
    for key, value in values.items():
        st.session_state[key] = value
    _post("success", ("msg.scenario_loaded", {"name": getattr(up, "name", "")}))
    raw_values = json.loads(up.getvalue()).get("controls", {})  # valid JSON: load_scenario_text read it
    for key, raw in raw_values.items():
        new = C.alias_of(C.BY_KEY[key], raw)
        if new is not None:
            _post("warning", ("warn.old_spelling_file", {"key": key, "raw": raw, "new": new,
                                                         "reason_key": f"alias.{key}.{raw}"}))


def _use_config(text: str | bytes, name: str) -> None:
    try:
        arch = parse_config_text(text, model_id=name)
        cfg = json.loads(text)
    except ConfigError as exc:
        _post("error", ("msg.config_rejected", {"reason": str(exc)}))
        return
    st.session_state[_CUSTOM_ARCH], st.session_state[_CUSTOM_CFG] = arch, cfg
    st.session_state[C.MODEL.key] = C.CUSTOM_MODEL
    _post("success", ("msg.config_loaded", {"name": arch.name}))


def _on_config_upload() -> None:
    up = st.session_state.get("config_upload")
    if up is not None:
        _use_config(up.getvalue(), up.name.removesuffix(".json") or "custom")


def _on_config_paste() -> None:
    text = st.session_state.get("config_text", "")
    if text.strip():
        _use_config(text, "custom")
    else:
        _post("error", ("msg.config_rejected", {"reason": "config.json: the text box is empty"}))


def _post(level: str, message: tuple[str, dict]) -> None:
    st.session_state.setdefault(_MESSAGES, []).append((level, message))


def pop_messages(t: Translator) -> list[tuple[str, str]]:
    """Messages left by callbacks (upload accepted or rejected), translated, then forgotten."""
    msgs = st.session_state.pop(_MESSAGES, [])
    out = []
    for level, (key, kw) in msgs:
        if "reason_key" in kw:  # a translated reason inside the message
            kw = {k: v for k, v in kw.items() if k != "reason_key"} | {"reason": t(kw["reason_key"])}
        out.append((level, t(key, **kw)))
    return out


# ----------------------------------------------------------------------------- the scenario

def build_scenario(values: dict[str, Any], *, custom_arch: ModelArch | None = None) -> Scenario:
    """Validated scenario from control values; ``ValueError`` names the field and range."""
    if values["model"] == C.CUSTOM_MODEL:
        if custom_arch is None:
            raise ValueError("model: 'custom' needs a config.json (upload or paste one)")
        arch = custom_arch
    else:
        arch = get_model(values["model"])
    try:
        gpu = C.custom_gpu_from(values) if values["gpu"] == C.CUSTOM_GPU else get_gpu(values["gpu"])
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None
    ctx, out = int(values["context"]), int(values["output_len"])
    if out >= ctx:
        raise ValueError(f"output_len: got {out:,}, allowed 1 – {ctx - 1:,} (less than the context length {ctx:,})")
    try:
        serving = ServingConfig(
            tensor_parallel_size=values["tp"], dtype=values["dtype"], quantization=values["quantization"],
            kv_cache_dtype=values["kv_cache_dtype"], gpu_memory_utilization=values["gpu_memory_utilization"],
            block_size=values["block_size"], max_model_len=values["max_model_len"],
            max_num_seqs=values["max_num_seqs"], max_num_batched_tokens=values["max_num_batched_tokens"],
            input_len=ctx - out, output_len=out, concurrency=values["concurrency"],
            vllm_version=values.get("vllm_version", "0.19"))
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None
    resolved = resolve_serving(arch, gpu, serving)
    if ctx > resolved.max_model_len:
        raise ValueError(f"context: got {ctx:,}, allowed 16 – {resolved.max_model_len:,} "
                         f"(max_model_len of {arch.name})")
    try:
        efficiency = C.efficiency_from(values)
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None
    return Scenario(arch=arch, gpu=gpu, serving=serving, efficiency=efficiency, resolved=resolved,
                    context_tokens=ctx, concurrency=int(values["concurrency"]), values=dict(values))


def default_scenario() -> Scenario:
    return build_scenario({c.key: c.default for c in C.SHARED})


def render_sidebar(t: Translator) -> tuple[Scenario, list[tuple[str, str]]]:
    """Draw the shared controls in the sidebar; return the scenario and messages for the page.

    Messages are (level, text) with level ``warning`` / ``error`` / ``success``: bad query
    parameters, rejected uploads, and why the last valid scenario is shown instead.
    """
    st.session_state[_RENDERED] = {}
    messages = [("warning", w) for w in check_query_params(SHARED, t)] + pop_messages(t)
    sb = st.sidebar
    render_control(MODEL, t, sb)
    with sb.expander(t("sidebar.custom_config")):
        st.file_uploader(t("ctl.config_upload"), type=["json"], key="config_upload",
                         on_change=_on_config_upload, help=t("ctl.config_upload.help"))
        st.text_area(t("ctl.config_text"), key="config_text", height=120, help=t("ctl.config_text.help"),
                     placeholder='{"model_type": "llama", "hidden_size": 4096, ...}')
        st.button(t("ctl.config_apply"), on_click=_on_config_paste, key="config_apply")
    caption = sb.empty()
    if render_control(C.GPU, t, sb) == C.CUSTOM_GPU:
        with sb.expander(t("sidebar.custom_gpu"), expanded=True):
            st.caption(t("sidebar.custom_gpu.caption"))
            for ctl in C.CUSTOM_GPU_CONTROLS:
                render_control(ctl, t, st, placeholder=t("word.none") if ctl.optional else None)
    gpu_caption = sb.empty()
    for ctl in MAIN[2:]:
        render_control(ctl, t, sb)
    with sb.expander(t("sidebar.engine")):
        for ctl in C.ENGINE:
            render_control(ctl, t, st, placeholder=t("word.vllm_default") if ctl.optional else None)
    with sb.expander(t("sidebar.efficiency")):
        st.caption(t("sidebar.efficiency.caption"))
        for ctl in C.EFFICIENCY:
            render_control(ctl, t, st)
    values = {c.key: st.session_state.get(c.key, c.default) for c in C.SHARED}
    try:
        sc = build_scenario(values, custom_arch=st.session_state.get(_CUSTOM_ARCH))
        st.session_state[_LAST_GOOD] = sc
    except (ValueError, KeyError) as exc:
        sc = st.session_state.get(_LAST_GOOD) or default_scenario()
        messages.append(("error", t("msg.invalid_scenario", reason=str(exc), model=sc.arch.name)))
    model_text = t("sidebar.model_caption", name=sc.arch.name, kind=sc.arch.attention_kind,
                   layers=sc.arch.num_hidden_layers,
                   kv_heads=sc.arch.num_key_value_heads if sc.arch.mla is None else "1 (latent)",
                   max_len=f"{sc.arch.max_position_embeddings:,}")
    if sc.arch.checkpoint_quantization:
        key = "sidebar.checkpoint_quant_auto" if sc.serving.quantization in ("auto", sc.arch.checkpoint_quantization) \
            else "sidebar.checkpoint_quant"
        model_text += "  \n" + t(key, quant=sc.arch.checkpoint_quantization.upper())
    caption.caption(model_text)
    gpu_caption.caption(t("sidebar.gpu_caption", name=sc.gpu.name,
                          gib=f"{sc.gpu.usable_memory_bytes / 2**30:,.1f}",
                          tbps=f"{sc.gpu.hbm_bw_bytes_per_s / 1e12:,.2f}"))
    return sc, messages


def render_share(sc: Scenario, t: Translator, lang: str, where) -> None:
    """Copy-link box, scenario download and upload (drawn after the page, so page controls count)."""
    with where.expander(t("sidebar.share")):
        base = st.context.url or ""
        st.caption(t("share.link_help"))
        st.code(f"{base}?{share_query(st.session_state.get(_RENDERED, {}), lang)}", language=None, wrap_lines=True)
        st.download_button(t("share.download"), data=scenario_json(sc), file_name="scenario.json",
                           mime="application/json", key="scenario_download", on_click="ignore",
                           help=t("share.download.help"))
        st.file_uploader(t("share.upload"), type=["json"], key="scenario_upload", on_change=_on_scenario_upload,
                         help=t("share.upload.help"))
