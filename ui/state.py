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
from streamlit.typing import UploadedFile

from calc.spec.catalog import get_gpu, get_model, model_ids
from calc.spec.hf_config import MAX_CONFIG_BYTES, ConfigError, arch_from_hf_config
from calc.spec.inputs import MIN_CONTEXT_TOKENS, Efficiency, GPUSpec, ModelArch, ServingConfig, as_input_error
from calc.spec.parallelism import check_tensor_parallel
from calc.spec.untrusted import InputError, json_type, load_json, safe_name
from calc.sizing.scenario import ResolvedServing, check_gpu_formats, effective_quantization, resolve_serving
from ui import controls as C
from ui.i18n import Translator
from ui import config_link, first_view, labelled, lengths, session_view, uploader
from ui.labelled import value_from_url, write_url
from ui.layout import lazy_expander
from ui.safe import describe, md_escape, user_text
from ui.traffic import ACROSS_PAGES, migrate_params

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

def _query_params_state():
    """Streamlit's QueryParams object of this session (both the live values and the ones the bound
    widgets seed from on first load, ``_initial_query_params``); None outside a script run."""
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state  # noqa: PLC0415

        return get_session_state()
    except Exception:  # noqa: BLE001
        return None


def sanitize_query_params(controls: tuple[C.Control, ...]) -> list[C.ParamIssue]:
    """Validate the URL parameters of ``controls`` BEFORE their widgets exist, and fix the URL.

    A bound widget seeds itself from the URL on first load; an integer ``number_input`` given
    ``inf`` or 400 digits would raise there. So every value is checked here (finite, in range,
    right type): invalid ones are removed (the widget then shows its default), repeated keys keep
    their last value, valid ones are rewritten in the spelling the widget reads (``1e3`` → ``1000``).
    Uses Streamlit's internal QueryParams (``_query_params`` / ``_initial_query_params``): a test
    (tests/test_input_fuzz.py) holds the behaviour if Streamlit changes them.
    """
    session = _query_params_state()
    if session is None:
        return []
    issues: list[C.ParamIssue] = []
    with session.query_params() as qp:
        live = getattr(qp, "_query_params", {})
        initial = getattr(qp, "_initial_query_params", {})
        reported: set[str] = set()
        for source in (initial, live):
            params = {k: (v if isinstance(v, list) else [v]) for k, v in source.items()}
            # old per-page keys (lt_ttft_ms, pl_rate …) read once as the shared ones (ui.traffic)
            moved, _ = migrate_params(params)
            _apply_params(source, moved, lists=source is initial)
            params = {k: (v if isinstance(v, list) else [v]) for k, v in source.items()}
            changes, found = C.sanitize_params(params, controls, custom_available=_CUSTOM_ARCH in st.session_state)
            _apply_params(source, changes, lists=source is initial)
            if (changes or moved) and source is live:
                qp._send_query_param_msg()
            for issue in found:
                if (issue.key, issue.kind) not in reported:
                    reported.add((issue.key, issue.kind))
                    issues.append(issue)
    return issues


def _apply_params(source, changes: dict[str, list[str] | None], *, lists: bool) -> None:
    """Write URL changes (key → values, None: remove) into one of Streamlit's parameter dicts:
    the initial one holds lists, the live one a string for a single value."""
    for key, values in changes.items():
        if values is None:
            source.pop(key, None)
        else:
            source[key] = values if lists or len(values) > 1 else values[0]


def check_query_params(controls: tuple[C.Control, ...], t: Translator) -> list[str]:
    """Sanitize the URL parameters of ``controls`` (see :func:`sanitize_query_params`) and return
    one warning per problem, in the current language, naming the field, the value (escaped, cut),
    what is allowed and the default used. Runs before the widgets are drawn."""
    out = []
    for issue in sanitize_query_params(controls):
        ctl = next(c for c in controls if c.key == issue.key)
        shown = ", ".join(issue.values)
        if issue.kind == "repeated":
            out.append(t("warn.repeated_param", key=ctl.key, count=len(issue.values), raw=user_text(shown),
                         value=user_text(str(issue.kept))))
        elif issue.kind == "alias":  # an old spelling, rewritten in the link before the widget reads it
            raw = issue.values[-1]
            out.append(t("warn.old_spelling", key=ctl.key, raw=user_text(raw), new=user_text(str(issue.kept)),
                         reason=t(f"alias.{ctl.key}.{raw}")))
        elif issue.kind == "custom":
            out.append(t("warn.custom_not_in_link", default=_shown(ctl.default, t)))
        else:
            allowed = issue.error.allowed if issue.error is not None else ctl.allowed()
            from ui.safe import localize_allowed  # noqa: PLC0415

            out.append(t("warn.bad_param", key=ctl.key, raw=user_text(shown),
                         allowed=md_escape(localize_allowed(allowed, t)), default=md_escape(_shown(ctl.default, t))))
    # said once (the value has left the link): a first view's warnings are said again by the whole page
    return first_view.carry_warnings(tuple(c.key for c in controls), out)


def _shown(value: Any, t: Translator) -> str:
    if value is None:
        return t("word.vllm_default")
    if isinstance(value, tuple):
        return ", ".join(_shown(v, t) for v in value)
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def render_control(ctl: C.Control, t: Translator, where=st, *, placeholder: str | None = None,
                   bound: bool = True, disabled: bool = False) -> Any:
    """Draw one URL-bound widget from its spec (label and help text from the translations).

    ``disabled``: drawn greyed out (it does not apply to the rest of the view); still drawn and
    bound, so its value stays in the link and comes back when it applies again.

    ``bound=False``: a control of a lazy sidebar section (:func:`_lazy_section`): not bound to the
    URL by Streamlit (a bound widget's parameter leaves the URL when the widget is not drawn);
    its value survives while undrawn (``persist_state``) and the section keeps the URL itself.

    A control several pages draw (:data:`ui.traffic.ACROSS_PAGES`: the shared SLA and traffic)
    follows the user from page to page: a page's widget state is dropped on a page switch, so its
    last value is kept in the session and seeds the next page's widget (:func:`ui.labelled.carry_over`).
    """
    # every page control too (not the sidebar's, drawn on every page): its page may be left and
    # revisited, and the share link and the scenario file carry it from any page (ui.session_view)
    across = bound and (ctl.key in ACROSS_PAGES or ctl.key not in C.BY_KEY)
    if across:
        session_view.touch(ctl)
        labelled.carry_over(ctl.key)
    if first_view.quiet(ctl.kind):  # not drawn: its slot, and the value it would start at
        first_view.slot(where, ctl.kind, ctl.key)
        value = quiet_value(ctl)
    else:
        value = _widget(ctl, t, where, placeholder=placeholder, bound=bound, disabled=disabled)
    if across:
        labelled.keep(ctl.key, value)
    return value


def _widget(ctl: C.Control, t: Translator, where, *, placeholder: str | None, bound: bool, disabled: bool) -> Any:
    label, help_ = t(f"ctl.{ctl.key}"), t(f"ctl.{ctl.key}.help")
    common = dict(key=ctl.key, bind="query-params", help=help_, disabled=disabled) if bound else \
        dict(key=ctl.key, persist_state="session", help=help_, disabled=disabled)
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
    """The query string of the session's view (non-default values only, like the bound widgets):
    the ``controls`` drawn in this run, and every other page's controls the session touched
    (:mod:`ui.session_view`), at the values kept when their page was left."""
    from urllib.parse import urlencode

    params = {"lang": lang}
    for key, ctl in (session_view.touched() | controls).items():
        value = ctl.url_value(session_view.current(ctl, key in controls))
        if value is not None:
            params[key] = value
    if params.get("model") == C.CUSTOM_MODEL and config_link.KEY in st.query_params:  # the user's model too
        params[config_link.KEY] = st.query_params[config_link.KEY]
    return urlencode(params, doseq=True)


# ----------------------------------------------------------------------------- scenario files

def scenario_json(sc: Scenario) -> str:
    """The scenario as a JSON document that :func:`load_scenario_text` reads back."""
    doc = {
        "format": SCENARIO_FORMAT,
        "version": SCENARIO_VERSION,
        "controls": sc.values,
        # every page's own settings touched in the session (the load test's arrivals, the planner's sort …)
        "pages": session_view.values(st.session_state.get(_RENDERED, {})),
        "custom_config": st.session_state.get(_CUSTOM_CFG) if sc.values.get("model") == C.CUSTOM_MODEL else None,
        "model": {"id": sc.arch.id, "name": sc.arch.name},
        "gpu": {"id": sc.gpu.id, "name": sc.gpu.name},
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def load_scenario_text(text: str | bytes) -> tuple[dict[str, Any], ModelArch | None, dict | None]:
    """Validate an uploaded scenario file; return control values (and a custom model if any).

    Raises :class:`~calc.spec.untrusted.InputError` (a ``ValueError``) naming the field and what it
    allows: size, nesting depth, huge integers, wrong types, unknown fields, cross-field rules.
    """
    doc = load_json(text, what="scenario file", max_bytes=MAX_SCENARIO_BYTES)
    if not isinstance(doc, dict):
        raise InputError("scenario file", json_type(doc), code="not_object")
    if doc.get("format") != SCENARIO_FORMAT:
        raise InputError("format", doc.get("format"), allowed=repr(SCENARIO_FORMAT), code="range",
                         detail="not a scenario file")
    version = doc.get("version")
    if isinstance(version, bool) or version != SCENARIO_VERSION:
        raise InputError("version", version, allowed=str(SCENARIO_VERSION))
    values = doc.get("controls")
    if not isinstance(values, dict):
        raise InputError("controls", json_type(values), code="not_object")
    unknown = sorted(set(values) - set(C.BY_KEY))
    if unknown:
        names = list(C.BY_KEY)
        raise InputError("controls", ", ".join(safe_name(k, 40) for k in unknown[:10]), code="unknown_fields",
                         allowed=", ".join(names[:12]) + f", … ({len(names)} in all, as in a downloaded scenario)")
    arch = cfg = None
    if values.get("model") == C.CUSTOM_MODEL:
        cfg = doc.get("custom_config")
        if not isinstance(cfg, dict):
            raise InputError("custom_config", json_type(cfg), code="not_object")
        try:
            arch = arch_from_hf_config(cfg, model_id=_config_name(cfg, "custom"))
        except ConfigError as exc:
            raise InputError(f"custom_config: {exc.field}", exc.raw, allowed=exc.allowed, code=exc.code,
                             detail=exc.detail, **exc.params) from None
    parsed = {}
    for key, raw in values.items():
        ctl = C.BY_KEY[key]
        if key == "model" and raw == C.CUSTOM_MODEL:
            parsed[key] = raw
            continue
        parsed[key] = ctl.parse(raw)  # ControlValueError names the field
    session_view.parse_values(doc.get("pages"))  # checked here: a bad file changes nothing
    merged = {c.key: c.default for c in C.SHARED} | parsed
    build_scenario(merged, custom_arch=arch)  # cross-field rules; raises ValueError
    return merged, arch, cfg


def _config_name(cfg: dict, fallback: str) -> str:
    """A pasted or uploaded config is named after its ``_name_or_path`` when it has one."""
    name = cfg.get("_name_or_path") or cfg.get("_name") or cfg.get("_id")
    return safe_name(name) if isinstance(name, str) and name.strip() else safe_name(fallback)


def fresh_upload(key: str) -> UploadedFile | None:
    """The file just uploaded to the uploader ``key``, for its ``on_change`` callback; else None.

    :func:`release_uploads` drops the bytes on every run, so on the run after an upload the widget's
    value turns into Streamlit's ``DeletedFile`` (no ``getvalue``) and that change fires ``on_change``
    again. Only an :class:`UploadedFile` is new input; ``DeletedFile`` (already consumed, and the
    result kept in the session) and None (the user removed the file) are not.
    """
    up = st.session_state.get(key)
    return up if isinstance(up, UploadedFile) else None


def _on_scenario_upload() -> None:
    up = fresh_upload("scenario_upload")
    if up is None:
        return
    data = up.getvalue()
    try:
        values, arch, cfg = load_scenario_text(data)
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        _post("error", ("msg.scenario_rejected", {"reason": exc}))
        return
    if arch is not None:
        st.session_state[_CUSTOM_ARCH], st.session_state[_CUSTOM_CFG] = arch, cfg
    for key, value in values.items():
        st.session_state[key] = value
    doc = load_json(data, what="scenario file", max_bytes=MAX_SCENARIO_BYTES)
    session_view.apply(session_view.parse_values(doc.get("pages")))  # every page's own settings
    _post("success", ("msg.scenario_loaded", {"name": getattr(up, "name", "")}))
    raw_values = doc["controls"]
    for key, raw in raw_values.items():
        new = C.alias_of(C.BY_KEY[key], raw)
        if new is not None:
            _post("warning", ("warn.old_spelling_file", {"key": key, "raw": raw, "new": new,
                                                         "reason_key": f"alias.{key}.{raw}"}))


def _current_values() -> dict[str, Any]:
    return {c.key: st.session_state.get(c.key, c.default) for c in C.SHARED}


def _shown_model_name() -> str:
    last = st.session_state.get(_LAST_GOOD)
    return last.arch.name if last is not None else get_model(C.MODEL.default).name


def _fit_controls_to(arch: ModelArch, values: dict[str, Any]) -> dict[str, Any]:
    """Control values adjusted so a freshly loaded model can be computed at once: the context
    lowered to the model's positions (and the output below it), TP lowered to the largest size
    vLLM accepts for its heads. Other problems are left for the caller to report."""
    values = dict(values, model=C.CUSTOM_MODEL)
    limit = values["max_model_len"] or arch.max_position_embeddings
    if int(values["context"]) > limit:
        values["context"] = max(C.CONTEXT.lo, int(limit))
    if int(values["output_len"]) >= int(values["context"]):
        values["output_len"] = max(1, int(values["context"]) // 8)
    from calc.spec.parallelism import tensor_parallel_sizes  # noqa: PLC0415

    valid = [tp for tp in tensor_parallel_sizes(arch, C.TP_SIZES) if tp <= int(values["tp"])]
    if valid and valid[-1] != values["tp"]:
        values["tp"] = valid[-1]
    return values


def _use_config(text: str | bytes, fallback_name: str) -> None:
    """Make a pasted or uploaded config.json the custom model, or reject it and change nothing.

    The config is named after its ``_name_or_path`` when present. It is checked with the current
    controls before anything changes, so a rejected config never leaves another model on screen
    as if it had loaded; the context (and TP) are lowered to what the new model allows.
    """
    try:
        cfg = load_json(text, what="config.json", max_bytes=MAX_CONFIG_BYTES)
        if not isinstance(cfg, dict):
            raise ConfigError("config.json", json_type(cfg), code="not_object")
        arch = arch_from_hf_config(cfg, model_id=_config_name(cfg, fallback_name))
        before = _current_values()
        values = _fit_controls_to(arch, before)
        build_scenario(values, custom_arch=arch)
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        _post("error", ("msg.config_rejected_kept", {"reason": exc, "model": _shown_model_name()}))
        return
    st.session_state[_CUSTOM_ARCH], st.session_state[_CUSTOM_CFG] = arch, cfg
    for key in ("model", "context", "output_len", "tp"):
        if values[key] != before[key]:
            st.session_state[key] = values[key]
    if values["context"] != before["context"]:
        _post("success", ("msg.config_adjusted", {"name": arch.name, "context": f"{values['context']:,}"}))
    else:
        _post("success", ("msg.config_loaded", {"name": arch.name}))


def _on_config_upload() -> None:
    up = fresh_upload("config_upload")  # the model it made stays in the session (_CUSTOM_ARCH)
    if up is not None:
        _use_config(up.getvalue(), str(up.name).removesuffix(".json") or "custom")


_KEPT = "_kept_upload_"  # + uploader key: (file name, bytes) of an upload read again on later runs


def keep_upload(key: str, max_bytes: int) -> None:
    """``on_change`` of an uploader whose bytes the page reads on every run (the load-test trace):
    keep the new file's name and bytes in the session, at most ``max_bytes`` + 1 of them (enough for
    the reader to refuse an oversized file by its length, never an unbounded copy); one file per
    uploader, replaced by the next. The user removing the file forgets it; the release after the
    upload (``DeletedFile``) does not (see :func:`fresh_upload`)."""
    up = fresh_upload(key)
    if up is not None:
        st.session_state[_KEPT + key] = (str(up.name), up.getvalue()[: max_bytes + 1])
    elif st.session_state.get(key) is None:
        st.session_state.pop(_KEPT + key, None)


def kept_upload(key: str) -> tuple[str, bytes] | None:
    """(file name, bytes) kept by :func:`keep_upload` for uploader ``key``, or None."""
    return st.session_state.get(_KEPT + key)


def forget_upload(key: str) -> None:
    """Drop what :func:`keep_upload` kept for uploader ``key`` (a button's ``on_click``)."""
    st.session_state.pop(_KEPT + key, None)


def _on_config_paste() -> None:
    text = st.session_state.get("config_text", "")
    if text.strip():
        _use_config(text, "custom")
    else:
        _post("error", ("msg.config_rejected_kept", {"reason": InputError("config.json", code="required"),
                                                     "model": _shown_model_name()}))


def release_uploads() -> None:
    """Drop this session's uploaded files from the server's memory.

    Uploads are read in their ``on_change`` callbacks, which run before the script; after that
    nothing needs the bytes. Streamlit keeps every file a client PUTs until the session ends (a
    client that never sends the frontend's DELETE can stack up hundreds of MB), so every run
    releases them: one session holds at most what arrives between two runs. On the next run the
    uploader's value is a ``DeletedFile``: callbacks read uploads through :func:`fresh_upload`, and
    what a page needs again is kept in the session (the parsed model, :func:`keep_upload`'s bytes).
    Uses Streamlit's internal uploaded-file manager; a no-op where it has no per-session storage.
    """
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx  # noqa: PLC0415

        ctx = get_script_run_ctx()
        mgr = getattr(ctx, "uploaded_file_mgr", None)
        if mgr is not None and hasattr(mgr, "remove_session_files"):
            mgr.remove_session_files(ctx.session_id)
    except Exception:  # noqa: BLE001 - never fail a page over housekeeping
        pass


def _post(level: str, message: tuple[str, dict]) -> None:
    st.session_state.setdefault(_MESSAGES, []).append((level, message))


def pop_messages(t: Translator) -> list[tuple[str, str]]:
    """Messages left by callbacks (upload accepted or rejected), translated, then forgotten.

    An exception value is worded by :func:`ui.safe.describe` in the current language; every other
    value is user text (a file or model name) and goes through :func:`ui.safe.user_text`.
    """
    msgs = st.session_state.pop(_MESSAGES, [])
    out = []
    for level, (key, kw) in msgs:
        reason_key = kw.get("reason_key")
        kw = {k: v for k, v in kw.items() if k != "reason_key"}
        shown = {k: describe(v, t) if isinstance(v, Exception) else user_text(v) for k, v in kw.items()}
        if reason_key is not None:  # a translated reason inside the message
            shown["reason"] = t(reason_key)
        out.append((level, t(key, **shown)))
    return out


# ----------------------------------------------------------------------------- the scenario

def layout_values(values: dict[str, Any]) -> dict[str, Any]:
    """ServingConfig's layout fields from the sidebar's PP / DP / EP / nodes controls (absent: defaults)."""
    return {"pipeline_parallel_size": int(values.get("pp", 1) or 1), "data_parallel_size": int(values.get("dp", 1) or 1),
            "enable_expert_parallel": bool(values.get("ep", False)),
            "nodes": None if values.get("nodes") is None else int(values["nodes"])}


def check_layout(arch: ModelArch, gpu, serving: ServingConfig) -> None:
    """vLLM's rules for the layout (:func:`calc.spec.parallelism.check_parallel_layout`), UI and CLI alike."""
    from calc.spec.nodes import node_for  # noqa: PLC0415
    from calc.spec.parallelism import check_parallel_layout  # noqa: PLC0415

    check_parallel_layout(arch, serving, gpus_per_node=node_for(gpu).gpus_per_node, gpu_name=gpu.name)


def build_scenario(values: dict[str, Any], *, custom_arch: ModelArch | None = None) -> Scenario:
    """Validated scenario from control values; ``ValueError`` names the field and range."""
    if values["model"] == C.CUSTOM_MODEL:
        if custom_arch is None:
            raise InputError("model", C.CUSTOM_MODEL, code="custom_missing")
        arch = custom_arch
    else:
        arch = get_model(values["model"])
    try:
        gpu = C.custom_gpu_from(values) if values["gpu"] == C.CUSTOM_GPU else get_gpu(values["gpu"])
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None
    ctx, out = int(values["context"]), int(values["output_len"])
    if out >= ctx:
        raise InputError("output_len", out, allowed=f"1 – {ctx - 1:,}", code="output_len", context=f"{ctx:,}")
    mml = values["max_model_len"]
    if mml is not None and ctx > int(mml):  # in the user's terms, not ServingConfig's (input_len + output_len)
        raise InputError("context", ctx, allowed=f"{MIN_CONTEXT_TOKENS} – {int(mml):,}", code="context_max_model_len",
                         max_model_len=f"{int(mml):,}")
    try:
        serving = ServingConfig(
            tensor_parallel_size=values["tp"], dtype=values["dtype"], quantization=values["quantization"],
            kv_cache_dtype=values["kv_cache_dtype"], gpu_memory_utilization=values["gpu_memory_utilization"],
            block_size=values["block_size"], max_model_len=values["max_model_len"],
            max_num_seqs=values["max_num_seqs"], max_num_batched_tokens=values["max_num_batched_tokens"],
            input_len=ctx - out, output_len=out, concurrency=values["concurrency"],
            vllm_version=values.get("vllm_version", "0.19"), **layout_values(values))
    except ValidationError as exc:
        raise as_input_error(exc) from None
    # vLLM's rule, the one the CLI applies too (calc.spec.parallelism).
    check_tensor_parallel(arch, serving.tensor_parallel_size, field="tp", candidates=C.TP_SIZES)
    check_gpu_formats(serving, gpu, quantization=effective_quantization(arch, serving.quantization))  # FP4 kernels
    check_layout(arch, gpu, serving)  # PP ≤ layers, EP needs experts, GPUs split over the nodes
    resolved = resolve_serving(arch, gpu, serving)
    if ctx > resolved.max_model_len:
        raise InputError("context", ctx, allowed=f"{MIN_CONTEXT_TOKENS} – {resolved.max_model_len:,}", code="context",
                         model=arch.name)
    try:
        efficiency = C.efficiency_from(values)
    except ValidationError as exc:
        raise as_input_error(exc) from None
    return Scenario(arch=arch, gpu=gpu, serving=serving, efficiency=efficiency, resolved=resolved,
                    context_tokens=ctx, concurrency=int(values["concurrency"]), values=dict(values))


def default_scenario() -> Scenario:
    return build_scenario({c.key: c.default for c in C.SHARED})


def gpu_label(gpu_id: str, t: Translator) -> str:
    """What the GPU select shows: the catalog name ("NVIDIA H100 SXM5 80GB"), or "Your own GPU"."""
    return t("sidebar.custom_gpu") if gpu_id == C.CUSTOM_GPU else t.gpu(get_gpu(gpu_id))


def _sidebar_control(ctl: C.Control, t: Translator, where, ignored: frozenset[str], label_of=None, **kw) -> Any:
    """One sidebar control; a note under it when the page ignores it (ui.layout dims ``.st-key-<key>``).
    ``label_of``: options shown by that text, the link keeping the token (:mod:`ui.labelled`).

    No keyed box around each control: 39 containers were ~10 ms of CPU per rerun (side by side,
    bench notes in the commit), and the widget's own ``st-key-<key>`` class is enough to dim it.
    """
    value = labelled.render(ctl, t, label_of, where) if label_of else render_control(ctl, t, where, **kw)
    if ctl.key in ignored:
        where.caption(t("sidebar.unused"))
    return value


def _seed_lazy(controls: tuple[C.Control, ...]) -> None:
    """Give every control of a lazy section its value before anything reads it: the session's
    (drawn earlier, or set by a scenario file or a pasted command), else the URL's (already
    sanitized by :func:`check_query_params`), else the default.

    A default is not written: every reader takes ``st.session_state.get(key, ctl.default)``, and an
    undrawn control at its default leaves the URL (:func:`_sync_lazy_url`), so it is looked up
    there again on the next run and found absent. Streamlit walks every session-state key on each
    select, number input and slider it draws (``SessionState.filtered_state``): the 32 lazy
    controls' defaults as keys cost every widget of every rerun."""
    in_url = set(st.query_params)  # one look at the link, not one per control
    for ctl in controls:
        if ctl.key in in_url and ctl.key not in st.session_state:
            from_url = value_from_url(ctl)
            if from_url is not None:
                st.session_state[ctl.key] = from_url


def _sync_lazy_url(controls: tuple[C.Control, ...], state: dict[str, Any]) -> None:
    """Write the values of lazy-section controls into the address bar (non-defaults only, as a
    bound widget would), drawn or not: the browser's URL stays the exact view. ``state``: the
    session state as a dict (one read of the session, not one per control)."""
    in_url = set(st.query_params)
    for ctl in controls:
        value = state.get(ctl.key, ctl.default)
        if ctl.key in in_url or ctl.url_value(value) is not None:  # else nothing to write or remove
            write_url(ctl, value)


def _lazy_section(where, t: Translator, label_key: str, key: str, controls: tuple[C.Control, ...],
                  state: dict[str, Any]):
    """A sidebar section drawn only while open (:func:`ui.layout.lazy_expander`). Closed, a caption
    under it counts the controls that differ from their defaults (a link may have changed them;
    ``state``: the session state as a dict).
    Not in the label: a new label is a new expander in the browser, which would take the focus
    from the slider being moved inside it."""
    rendered = st.session_state.setdefault(_RENDERED, {})
    for ctl in controls:
        rendered[ctl.key] = ctl  # in the share link, drawn or not
    exp = lazy_expander(where, t(label_key), key)
    changed = sum(ctl.url_value(state.get(ctl.key, ctl.default)) is not None for ctl in controls)
    if changed and not exp.open:
        where.caption(t("sidebar.changed", n=changed))
    return exp


def prepare_sidebar(t: Translator) -> list[tuple[str, str]]:
    """Before anything is drawn: the link's values checked (bad ones dropped from it), uploads
    released, the messages of earlier callbacks collected. Returns the messages for the page.

    Messages are (level, text) with level ``warning`` / ``error`` / ``success``: bad query
    parameters, rejected uploads, and why the last valid scenario is shown instead.
    """
    st.session_state[_RENDERED] = {}
    release_uploads()
    messages = [("warning", w) for w in _custom_from_link(t)]  # before model=custom is checked
    messages += [("warning", w) for w in check_query_params(SHARED, t)] + pop_messages(t)
    # a link's settings of other pages: kept for when the user opens them (ui.session_view)
    messages += [("warning", w) for w in session_view.seed_from_link(lambda cs: check_query_params(cs, t))]
    return messages


def quiet_value(ctl: C.Control) -> Any:
    """The value ``ctl``'s widget would start at in this run, without drawing it (a first view,
    :mod:`ui.first_view`): the session's (set by a callback, carried over from another page), else
    the link's (already checked), else the default, in the type the widget returns."""
    if ctl.key in st.session_state:
        value = st.session_state[ctl.key]
    else:
        value = value_from_url(ctl)
        if value is None:
            value = ctl.default
    if value is None:
        return None
    if ctl.kind in ("multi", "multi_int"):
        return list(value)
    if ctl.kind == "toggle":
        return bool(value)
    if ctl.kind in ("number", "slider"):
        return int(value) if ctl.integer else float(value)
    return value


def quiet_scenario() -> Scenario | None:
    """The scenario the sidebar's widgets would give in this run, none drawn (a first view,
    :mod:`ui.first_view`); None where the sidebar must be drawn to say something: the user's own
    model, or values that do not make a scenario (the sidebar names the field)."""
    values = {c.key: quiet_value(c) for c in C.SHARED}
    if (values["model"] == C.CUSTOM_MODEL or values["gpu"] == C.CUSTOM_GPU
            or st.session_state.get(_CUSTOM_ARCH) is not None):
        return None
    try:
        return build_scenario(values)
    except (ValueError, KeyError):
        return None


def render_sidebar(t: Translator, messages: list[tuple[str, str]],
                   ignored: frozenset[str] = frozenset()) -> tuple[Scenario, list[tuple[str, str]]]:
    """Draw the shared controls in the sidebar; return the scenario and the messages for the page
    (``messages``: :func:`prepare_sidebar`'s, with this function's own added).

    ``ignored``: keys of controls the current page does not use (dimmed, "not used on this page").
    """
    messages = list(messages)
    sb = st.sidebar
    _sidebar_control(MODEL, t, sb, ignored)
    custom = lazy_expander(sb, t("sidebar.custom_config"), "sec_config")
    if custom.open:  # drawn only while open; the pasted text survives closing (persist_state)
        with custom:
            uploader.file_uploader(st, t, t("ctl.config_upload"), type=["json"], key="config_upload",
                                   on_change=_on_config_upload, help=t("ctl.config_upload.help"))
            st.text_area(t("ctl.config_text"), key="config_text", height=120, help=t("ctl.config_text.help"),
                         placeholder='{"model_type": "llama", "hidden_size": 4096, ...}', persist_state="session")
            st.button(t("ctl.config_apply"), on_click=_on_config_paste, key="config_apply")
    caption = sb.empty()
    # GPU names shown, ids in the link and the value (ui.labelled: a bound select would write the name)
    if _sidebar_control(C.GPU, t, sb, ignored, label_of=lambda g: gpu_label(g, t)) == C.CUSTOM_GPU:
        with sb.expander(t("sidebar.custom_gpu"), expanded=True):
            st.caption(t("sidebar.custom_gpu.caption"))
            for ctl in C.CUSTOM_GPU_CONTROLS:
                render_control(ctl, t, st, placeholder=t("word.none") if ctl.optional else None)
    gpu_caption = sb.empty()
    # The lengths: two boxes (input, output tokens) over the stored context and output_len (ui.lengths),
    # which live in the session and the link as a lazy section's values do.
    _seed_lazy(C.LENGTHS)
    ctx, out = lengths.render(t, sb, st.session_state)
    if {"context", "output_len"} & ignored:
        sb.caption(t("sidebar.unused"))
    lengths_caption = sb.empty()
    lazy = {c.key for c in C.LAZY + C.LENGTHS}
    for ctl in MAIN[2:]:
        if ctl.key not in lazy:  # concurrency; TP and the precisions are in sections below
            _sidebar_control(ctl, t, sb, ignored)
    # Precision, multi-GPU layout, engine and efficiency knobs (35 widgets, a third of a rerun's CPU,
    # and each select ~28 ms of the browser's main thread before the first chart) are drawn only
    # while their section is open; their values live in the session and the URL either way.
    _seed_lazy(C.LAZY)
    # The session's values, read once (each st.session_state.get is a locked lookup through
    # Streamlit's widget-id mapping: ~140 of them a rerun were ~1 ms). Undrawn lazy controls keep
    # these values; one drawn now has the same (the section's widgets start at them).
    state = st.session_state.to_dict()
    for label_key, key, controls in (("sidebar.precision", "sec_precision", C.PRECISION),
                                     ("sidebar.parallel", "sec_parallel", C.PARALLEL),
                                     ("sidebar.engine", "sec_engine", C.ENGINE)):
        section = _lazy_section(sb, t, label_key, key, controls, state)
        if section.open:
            with section:
                for ctl in controls:
                    _sidebar_control(ctl, t, st, ignored, bound=False,
                                     placeholder=t("word.vllm_default") if ctl.optional else None)
    efficiency = _lazy_section(sb, t, "sidebar.efficiency", "sec_efficiency", C.EFFICIENCY, state)
    if efficiency.open:
        with efficiency:
            st.caption(t("sidebar.efficiency.caption"))
            for ctl in C.EFFICIENCY:
                _sidebar_control(ctl, t, st, ignored, bound=False)
    state = st.session_state.to_dict()  # after the widgets: the values this run shows
    _sync_lazy_url(C.LAZY + C.LENGTHS, state)
    st.session_state.setdefault(_RENDERED, {}).update({c.key: c for c in C.LENGTHS})  # in the share link
    values = {c.key: state.get(c.key, c.default) for c in C.SHARED}
    messages += [("warning", w) for w in _custom_to_link(values["model"] == C.CUSTOM_MODEL, t)]
    try:
        sc = build_scenario(values, custom_arch=st.session_state.get(_CUSTOM_ARCH))
        st.session_state[_LAST_GOOD] = sc
    except (ValueError, KeyError) as exc:
        sc = st.session_state.get(_LAST_GOOD) or default_scenario()
        messages.append(("error", t("msg.invalid_scenario", reason=describe(exc, t), model=md_escape(sc.arch.name))))
    model_text = t("sidebar.model_caption", name=sc.arch.name, kind=sc.arch.attention_kind,
                   layers=sc.arch.num_hidden_layers,
                   kv_heads=sc.arch.num_key_value_heads if sc.arch.mla is None else "1 (latent)",
                   max_len=f"{sc.arch.max_position_embeddings:,}")
    if sc.arch.checkpoint_quantization:
        key = "sidebar.checkpoint_quant_auto" if sc.serving.quantization in ("auto", sc.arch.checkpoint_quantization) \
            else "sidebar.checkpoint_quant"
        model_text += "  \n" + t(key, quant=sc.arch.checkpoint_quantization.upper())
    caption.caption(model_text)
    # the boxes' values (what the user typed, even where the scenario shown is the last good one)
    lengths_caption.caption(t("sidebar.lengths", i=f"{lengths.input_tokens(ctx, out):,}", o=f"{out:,}", ctx=f"{ctx:,}",
                              mml=f"{sc.resolved.max_model_len:,}"))
    gpu_caption.caption(t("sidebar.gpu_caption", name=t.gpu(sc.gpu),
                          gib=f"{sc.gpu.usable_memory_bytes / 2**30:,.1f}",
                          tbps=f"{sc.gpu.hbm_bw_bytes_per_s / 1e12:,.2f}"))
    return sc, messages


def _custom_from_link(t: Translator) -> list[str]:
    """A fresh session (a reload, a shared link) whose link holds the user's own model
    (``?model_config=``, :mod:`ui.config_link`): make it the custom model again before the link's
    ``model=custom`` is checked. A bad one is named and removed from the link; the default model applies."""
    text = st.query_params.get(config_link.KEY)
    if text is None or _CUSTOM_ARCH in st.session_state:
        return []
    try:
        cfg = config_link.decode(text)
        arch = arch_from_hf_config(cfg, model_id=_config_name(cfg, "custom"))
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        del st.query_params[config_link.KEY]
        if isinstance(exc, ConfigError):
            exc = InputError(f"{config_link.KEY}: {exc.field}", exc.raw, allowed=exc.allowed, code=exc.code,
                             detail=exc.detail, **exc.params)
        return [t("warn.model_config_bad", reason=describe(exc, t))]
    st.session_state[_CUSTOM_ARCH], st.session_state[_CUSTOM_CFG] = arch, cfg
    return []


def _custom_to_link(custom: bool, t: Translator) -> list[str]:
    """Keep ``?model_config=`` in the address bar while the user's own model is shown (a reload keeps
    it), none otherwise. A config too large for a link is left out, once said."""
    cfg = st.session_state.get(_CUSTOM_CFG) if custom else None
    text = None
    if cfg is not None:  # encoded once per config, not on every rerun
        made = st.session_state.get("_config_link_text")
        if made is None or made[0] is not cfg:
            made = st.session_state["_config_link_text"] = (cfg, config_link.encode(cfg))
        text = made[1]
    if text is None:
        if config_link.KEY in st.query_params:
            del st.query_params[config_link.KEY]
        if cfg is not None and not st.session_state.get("_config_link_said"):
            st.session_state["_config_link_said"] = True
            return [t("warn.model_config_too_large", chars=f"{config_link.MAX_LINK_CHARS:,}")]
        return []
    if st.query_params.get(config_link.KEY) != text:
        st.query_params[config_link.KEY] = text
    return []


def render_share(sc: Scenario, t: Translator, lang: str, where) -> None:
    """Copy-link box, scenario download and upload (drawn after the page, so page controls count)."""
    share = lazy_expander(where, t("sidebar.share"), "sec_share")
    if not share.open:  # drawn only while open (the link is rebuilt from the state when it is)
        return
    with share:
        base = st.context.url or ""
        st.caption(t("share.link_help"))
        # A text box, not st.code: st.code on every page made each fresh browser session load the
        # 1.5 MB syntax-highlighter bundle before the first chart (bench/first_paint.py profile).
        st.session_state["share_link"] = f"{base}?{share_query(st.session_state.get(_RENDERED, {}), lang)}"
        st.text_input(t("share.link_label"), key="share_link", label_visibility="collapsed")
        st.html(copy_button_html(t("share.copy"), t("share.copied")), unsafe_allow_javascript=True)
        st.download_button(t("share.download"), data=lambda: scenario_json(sc), file_name="scenario.json",
                           mime="application/json", key="scenario_download", on_click="ignore",
                           help=t("share.download.help"))
        uploader.file_uploader(st, t, t("share.upload"), type=["json"], key="scenario_upload",
                               on_change=_on_scenario_upload, help=t("share.upload.help"))


def copy_button_html(label: str, done: str) -> str:
    """A button that copies the share box's link to the clipboard (in the page's DOM, no iframe).

    Its behaviour is the command blocks' copy module (``static/command-copy.js``, loaded by URL: the
    deployment's Content-Security-Policy allows ``script-src 'self'`` without a hash), which reads the
    link text box's value from the DOM when clicked, so no user text is written into this HTML.

    >>> copy_button_html("Copy <link>", "Copied")[:52]
    '<button class="share-copy" type="button" data-label='
    >>> "Copy &lt;link&gt;" in copy_button_html("Copy <link>", "Copied")
    True
    """
    import html  # noqa: PLC0415

    from ui.command_block import SCRIPT_URL  # noqa: PLC0415

    return (
        '<button class="share-copy" type="button" data-label="' + html.escape(label, quote=True) + '" '
        'data-done="' + html.escape(done, quote=True) + '" '
        'style="border:1px solid rgba(128,128,128,.5);border-radius:.5rem;padding:.25rem .75rem;'
        'background:transparent;color:inherit;font:inherit;cursor:pointer">' + html.escape(label) + "</button>"
        f'<script type="module" src="{SCRIPT_URL}"></script>'
    )
