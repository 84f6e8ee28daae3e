"""Control specifications: one record per URL-bound widget (key, kind, default, allowed values).

A :class:`Control` knows how to parse an untrusted value (a query-string text or a JSON value
from an uploaded scenario), how to describe what it allows, and how its value is written in the
URL. Rendering is in :mod:`ui.state`; nothing here imports streamlit, so it is unit-testable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Literal

from calc.spec.catalog import gpu_ids, model_ids, resolve_variant
from calc.spec.inputs import MIN_CONTEXT_TOKENS, Efficiency
from calc.sizing.memory import SAMPLER_VERSIONS
from calc.spec.precision import (DTYPES, KV_CACHE_DTYPE_ALIASES, KV_CACHE_DTYPES, QUANTIZATION_ALIASES,
                                 QUANTIZATIONS)
from calc.spec.untrusted import HugeInt, InputError

Kind = Literal["select", "slider", "number", "toggle", "multi", "multi_int"]

CUSTOM_MODEL = "custom"
CUSTOM_GPU = "custom"  # the user-defined GPU (fields below), calc.spec.inputs.CustomGPU


MAX_RAW_CHARS = 200  # no control takes a longer text (option ids are < 60 characters)


class ControlValueError(InputError):
    """An untrusted value a control cannot take; the message names the field and what it allows."""

    def __init__(self, key: str, raw: Any, allowed: str) -> None:
        super().__init__(key, raw, allowed=allowed)
        self.key = key


@dataclass(frozen=True)
class Control:
    """One widget whose value lives in the URL (``?key=value``) and in scenario files.

    ``options`` may be a callable (the model list grows with an uploaded config.json).
    ``optional`` numbers accept empty / null, which means "vLLM's default".
    """

    key: str
    kind: Kind
    default: Any
    options: tuple[Any, ...] | Callable[[], tuple[Any, ...]] | None = None
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    integer: bool = True
    optional: bool = False
    aliases: dict[str, Any] | None = None  # old spellings (links, scenario files) -> current option
    # select: a last chance for a text no option spells (the model's -Instruct / -Chat / -it checkpoints)
    resolve: Callable[[str], Any] | None = None

    def choices(self) -> tuple[Any, ...]:
        opts = self.options() if callable(self.options) else self.options
        return tuple(opts or ())

    def _choice_list(self, shown: int = 10) -> str:
        """``{a, b, c}``; a long list (the model catalog) shows its first ``shown`` and the count."""
        opts = [str(o) for o in self.choices()]
        if len(opts) <= shown + 2:
            return "{" + ", ".join(opts) + "}"
        return "{" + ", ".join(opts[:shown]) + f", … ({len(opts)} in all)" + "}"

    def allowed(self) -> str:
        """What the control accepts, language-neutral: ``{a, b}`` / ``integer 1 – 1,024``."""
        if self.kind == "multi":
            return "a list of " + self._choice_list()
        if self.kind == "multi_int":
            return f"a list of integers {self.lo:,.0f} – {self.hi:,.0f}"
        if self.kind == "select":
            return self._choice_list()
        if self.kind == "toggle":
            return "{true, false}"
        lo = f"{self.lo:,.0f}" if self.integer else f"{self.lo:g}"
        hi = f"{self.hi:,.0f}" if self.integer else f"{self.hi:g}"
        kind = "integer" if self.integer else "number"
        empty = " (or empty)" if self.optional else ""
        return f"{kind} {lo} – {hi}{empty}"

    def parse(self, raw: Any) -> Any:
        """Validate a query-string text or JSON value; raise :class:`ControlValueError`.

        >>> CONCURRENCY.parse("32"), CONCURRENCY.parse(8)
        (32, 8)
        >>> try:
        ...     CONCURRENCY.parse("0")
        ... except ControlValueError as e:
        ...     print(e)
        concurrency: got '0', allowed integer 1 – 4,096
        """
        def bad() -> ControlValueError:
            return ControlValueError(self.key, raw, self.allowed())

        if isinstance(raw, str) and len(raw) > MAX_RAW_CHARS:
            raise bad()
        if self.kind in ("multi", "multi_int"):
            items = raw if isinstance(raw, (list, tuple)) else [raw]
            if list(items) == [""]:  # ?key= (empty): an empty selection
                return ()
            if len(items) > 64:
                raise bad()
            item = (Control(self.key, "select", None, options=self.options) if self.kind == "multi"
                    else Control(self.key, "number", None, lo=self.lo, hi=self.hi))
            try:
                return tuple(item.parse(v) for v in items)
            except ControlValueError:
                raise bad() from None
        if isinstance(raw, (dict, list, tuple)):
            raise bad()
        if self.kind == "select":
            if isinstance(raw, str) and self.aliases and raw in self.aliases:
                return self.aliases[raw]
            for opt in self.choices():
                if raw == opt or (isinstance(raw, str) and raw == str(opt)):
                    return opt
            found = self.resolve(raw) if self.resolve is not None and isinstance(raw, str) and len(raw) <= 200 else None
            if found is not None and found in self.choices():
                return found
            raise bad()
        if self.kind == "toggle":
            if isinstance(raw, bool):
                return raw
            if isinstance(raw, str) and raw.lower() in ("true", "false"):
                return raw.lower() == "true"
            raise bad()
        # numbers
        if raw is None or (isinstance(raw, str) and raw.strip() == ""):
            if self.optional:
                return None
            raise bad()
        if isinstance(raw, (bool, HugeInt)) or not isinstance(raw, (int, float, str)):
            raise bad()
        try:  # float() of a 400-digit text is inf; of a 400-digit int it raises OverflowError
            value = float(raw)
        except (TypeError, ValueError, OverflowError):
            raise bad() from None
        if not math.isfinite(value) or not (self.lo <= value <= self.hi):
            raise bad()
        if self.integer:
            if value != int(value):
                raise bad()
            return int(value)
        return value

    def url_value(self, value: Any) -> str | None:
        """How the value is written in the query string; None when it is the default (omitted).

        >>> GPU_MEMORY_UTILIZATION.url_value(0.95), GPU_MEMORY_UTILIZATION.url_value(0.9)
        ('0.95', None)
        """
        if value is None or value == self.default:
            return None
        if self.kind in ("multi", "multi_int"):
            if tuple(value) == tuple(self.default):
                return None
            return [str(v) for v in value] or [""]  # empty, unlike a non-empty default: ?key=
        if self.kind == "toggle":
            return "true" if value else "false"
        if isinstance(value, float) and value == int(value):
            return str(int(value))
        return str(value)


TP_SIZES = (1, 2, 4, 8, 16, 32, 64)
BLOCK_SIZES = (1, 8, 16, 32, 64, 128)


def _model_options() -> tuple[str, ...]:
    # Replaced at run time by ui.state to append "custom" when a config.json was given.
    return tuple(model_ids())


def _model_variant(raw: str) -> str | None:
    """A tuned checkpoint's catalog architecture (meta-llama/Llama-3.1-8B-Instruct -> meta-llama/Llama-3.1-8B)."""
    arch = resolve_variant(raw)
    return arch.id if arch is not None else None


MODEL = Control("model", "select", "meta-llama/Llama-2-7b-hf", options=_model_options, resolve=_model_variant)
GPU = Control("gpu", "select", "a100-80gb", options=lambda: tuple(gpu_ids()) + (CUSTOM_GPU,))
TP = Control("tp", "select", 1, options=TP_SIZES)
DTYPE = Control("dtype", "select", "auto", options=DTYPES)  # vLLM's default
# "auto" = the checkpoint's own format (config.json quantization_config), vLLM's behaviour without --quantization.
QUANTIZATION = Control("quantization", "select", "auto", options=QUANTIZATIONS, aliases=QUANTIZATION_ALIASES)
KV_CACHE_DTYPE = Control("kv_cache_dtype", "select", "auto", options=KV_CACHE_DTYPES, aliases=KV_CACHE_DTYPE_ALIASES)
CONTEXT = Control("context", "number", 2048, lo=MIN_CONTEXT_TOKENS, hi=10_000_000, step=256)
# A number entry (type 37, or step with +/-): a 1-4096 slider could not be set precisely. Also the load
# test's clients of a closed loop (one traffic description, ui.traffic): up to its former 4,096.
CONCURRENCY = Control("concurrency", "number", 16, lo=1, hi=4096, step=1)

GPU_MEMORY_UTILIZATION = Control("gpu_memory_utilization", "slider", 0.9, lo=0.05, hi=1.0, step=0.01, integer=False)
BLOCK_SIZE = Control("block_size", "select", 16, options=BLOCK_SIZES)
MAX_MODEL_LEN = Control("max_model_len", "number", None, lo=16, hi=10_000_000, step=1024, optional=True)
MAX_NUM_SEQS = Control("max_num_seqs", "number", None, lo=1, hi=65_536, step=8, optional=True)
MAX_NUM_BATCHED_TOKENS = Control("max_num_batched_tokens", "number", None, lo=16, hi=10_000_000, step=512,
                                 optional=True)
OUTPUT_LEN = Control("output_len", "number", 256, lo=1, hi=1_000_000, step=64)
# The vLLM line whose start-up profile run the memory model follows (calc.sizing.memory.SAMPLER_VERSIONS).
VLLM_VERSION = Control("vllm_version", "select", "0.19", options=SAMPLER_VERSIONS)

# A user-defined GPU (gpu=custom): its fields in datasheet units, URL-bound like every control;
# defaults are the H100 SXM's so "custom" starts from a known card. Control key -> CustomGPU field.
CUSTOM_GPU_FIELDS: dict[str, str] = {
    "cgpu_memory_gib": "memory_gib", "cgpu_hbm_tbps": "hbm_tb_per_s", "cgpu_bf16_tflops": "bf16_tflops",
    "cgpu_fp8_tflops": "fp8_tflops", "cgpu_int8_tops": "int8_tops", "cgpu_fp4_tflops": "fp4_tflops",
    "cgpu_link_gbps": "link_gb_per_s",
    "cgpu_price_usd_h": "price_usd_per_hour",
}
CUSTOM_GPU_CONTROLS = (
    Control("cgpu_memory_gib", "number", 79.19, lo=1.0, hi=4096.0, step=1.0, integer=False),
    Control("cgpu_hbm_tbps", "number", 3.35, lo=0.01, hi=100.0, step=0.05, integer=False),
    Control("cgpu_bf16_tflops", "number", 989.4, lo=1.0, hi=100_000.0, step=10.0, integer=False),
    Control("cgpu_fp8_tflops", "number", 1978.9, lo=1.0, hi=200_000.0, step=10.0, integer=False, optional=True),
    Control("cgpu_int8_tops", "number", 1978.9, lo=1.0, hi=200_000.0, step=10.0, integer=False, optional=True),
    Control("cgpu_fp4_tflops", "number", None, lo=1.0, hi=400_000.0, step=10.0, integer=False, optional=True),
    Control("cgpu_link_gbps", "number", 450.0, lo=1.0, hi=100_000.0, step=10.0, integer=False),
    Control("cgpu_price_usd_h", "number", None, lo=0.01, hi=10_000.0, step=0.1, integer=False, optional=True),
)


def custom_gpu_from(values: dict[str, Any]):
    """The user-defined :class:`calc.spec.inputs.GPUSpec` from control values (datasheet units).

    >>> g = custom_gpu_from({"cgpu_memory_gib": 24, "cgpu_bf16_tflops": 165.2, "cgpu_fp8_tflops": None})
    >>> g.id, g.usable_memory_bytes == 24 * 2**30, g.fp8_flops_per_s, g.hbm_bw_bytes_per_s
    ('custom', True, None, 3350000000000.0)
    """
    from calc.spec.inputs import CustomGPU  # noqa: PLC0415

    fields = {f: values.get(k, BY_KEY[k].default) for k, f in CUSTOM_GPU_FIELDS.items()}
    return CustomGPU(**fields).to_gpu_spec()


# Efficiency assumptions (calc.spec.inputs.Efficiency), shown in the unit people think in: the control
# key names the unit; EFFICIENCY_SCALE converts to the SI value calc takes. Defaults come from
# Efficiency() itself, so the sources in its field descriptions stay the single truth.
_EFF = Efficiency()
EFFICIENCY_FIELDS: dict[str, tuple[str, float]] = {  # control key -> (Efficiency field, SI per UI unit)
    "eff_hbm_bw_fraction": ("hbm_bw_fraction", 1.0),
    "eff_prefill_flops_fraction": ("prefill_flops_fraction", 1.0),
    "eff_decode_flops_fraction": ("decode_flops_fraction", 1.0),
    "eff_hopper_flops_scale": ("hopper_flops_scale", 1.0),
    "eff_ampere_moe_flops_scale": ("ampere_moe_flops_scale", 1.0),
    "eff_geforce_flops_fraction": ("geforce_flops_fraction", 1.0),
    "eff_triton_attention_prefill_fraction": ("triton_attention_prefill_fraction", 1.0),
    "eff_triton_attention_decode_fraction": ("triton_attention_decode_fraction", 1.0),
    "eff_fp16_accumulate_share": ("fp16_accumulate_share", 1.0),
    "eff_mxfp4_moe_half_saturation_rows": ("mxfp4_moe_half_saturation_rows", 1.0),
    "eff_moe_layer_fixed_us": ("moe_layer_fixed_s", 1e-6),
    "eff_mla_layer_fixed_us": ("mla_layer_fixed_s", 1e-6),
    "eff_gemm_half_saturation_tokens": ("gemm_half_saturation_tokens", 1.0),
    "eff_step_overhead_ms": ("step_overhead_s", 1e-3),
    "eff_sequence_overhead_us": ("sequence_overhead_s", 1e-6),
    "eff_request_overhead_ms": ("request_overhead_s", 1e-3),
    "eff_api_server_request_ms": ("api_server_request_s", 1e-3),
    "eff_api_server_harmony_request_ms": ("api_server_harmony_request_s", 1e-3),
    "eff_api_server_final_share": ("api_server_final_share", 1.0),
    "eff_allreduce_latency_us": ("allreduce_latency_s", 1e-6),
    "eff_interconnect_bw_fraction": ("interconnect_bw_fraction", 1.0),
    "eff_custom_allreduce_latency_us": ("custom_allreduce_latency_s", 1e-6),
    "eff_rocm_custom_allreduce_latency_us": ("rocm_custom_allreduce_latency_s", 1e-6),
    "eff_custom_allreduce_bus_bw_gbps": ("custom_allreduce_bus_bw_bytes_per_s", 1e9),
    "eff_non_torch_overhead_gib": ("non_torch_overhead_bytes", 2.0**30),
    "eff_nccl_overhead_gib": ("nccl_overhead_bytes", 2.0**30),
    "eff_nccl_per_peer_gib": ("nccl_per_peer_bytes", 2.0**30),
    "eff_allocator_workspace_gib": ("allocator_workspace_bytes", 2.0**30),
    "eff_cuda_context_gib": ("cuda_context_bytes", 2.0**30),
    "eff_cuda_graph_gib": ("cuda_graph_bytes", 2.0**30),
    "eff_activation_live_hidden_buffers": ("activation_live_hidden_buffers", 1.0),
    "eff_expert_load_imbalance": ("expert_load_imbalance", 1.0),
    "eff_all_to_all_latency_us": ("all_to_all_latency_s", 1e-6),
    "eff_scale_out_bw_fraction": ("scale_out_bw_fraction", 1.0),
    "eff_expert_parallel_buffer_gib": ("expert_parallel_buffer_bytes", 2.0**30),
}


def alias_of(ctl: Control, raw: Any) -> Any | None:
    """The current spelling when ``raw`` is an old one the control still reads, else None.

    >>> alias_of(QUANTIZATION, "nf4"), alias_of(QUANTIZATION, "awq")
    ('bitsandbytes', None)
    """
    if isinstance(raw, str) and ctl.aliases and raw in ctl.aliases:
        return ctl.aliases[raw]
    return None


def _eff_default(key: str) -> float:
    field, scale = EFFICIENCY_FIELDS[key]
    return round(getattr(_EFF, field) / scale, 6)


def _fraction(key: str) -> Control:
    return Control(key, "slider", _eff_default(key), lo=0.05, hi=1.0, step=0.01, integer=False)


def _amount(key: str, hi: float, step: float) -> Control:
    return Control(key, "number", _eff_default(key), lo=0.0, hi=hi, step=step, integer=False)


EFFICIENCY = (
    _fraction("eff_hbm_bw_fraction"), _fraction("eff_prefill_flops_fraction"), _fraction("eff_decode_flops_fraction"),
    _fraction("eff_hopper_flops_scale"), _fraction("eff_ampere_moe_flops_scale"), _fraction("eff_geforce_flops_fraction"),
    _fraction("eff_triton_attention_prefill_fraction"), _fraction("eff_triton_attention_decode_fraction"),
    _amount("eff_fp16_accumulate_share", 1.0, 0.05),
    _amount("eff_gemm_half_saturation_tokens", 4096.0, 16.0),
    _amount("eff_mxfp4_moe_half_saturation_rows", 4096.0, 4.0), _amount("eff_moe_layer_fixed_us", 10_000.0, 1.0),
    _amount("eff_mla_layer_fixed_us", 10_000.0, 5.0),
    _amount("eff_step_overhead_ms", 100.0, 0.5),
    _amount("eff_sequence_overhead_us", 10_000.0, 5.0),
    _amount("eff_request_overhead_ms", 1000.0, 1.0), _amount("eff_api_server_request_ms", 1000.0, 1.0),
    _amount("eff_api_server_harmony_request_ms", 1000.0, 0.5),
    Control("eff_api_server_final_share", "slider", _eff_default("eff_api_server_final_share"), lo=0.0, hi=1.0,
            step=0.05, integer=False),
    _amount("eff_allreduce_latency_us", 10_000.0, 5.0),
    _fraction("eff_interconnect_bw_fraction"), _amount("eff_custom_allreduce_latency_us", 10_000.0, 1.0),
    _amount("eff_rocm_custom_allreduce_latency_us", 10_000.0, 1.0),
    _amount("eff_custom_allreduce_bus_bw_gbps", 10_000.0, 5.0), _amount("eff_non_torch_overhead_gib", 64.0, 0.1),
    _amount("eff_nccl_overhead_gib", 64.0, 0.1), _amount("eff_nccl_per_peer_gib", 4.0, 0.01),
    _amount("eff_allocator_workspace_gib", 4.0, 0.01), _amount("eff_cuda_context_gib", 16.0, 0.1),
    _amount("eff_cuda_graph_gib", 16.0, 0.1), _amount("eff_activation_live_hidden_buffers", 64.0, 0.5),
    Control("eff_expert_load_imbalance", "number", _eff_default("eff_expert_load_imbalance"), lo=1.0, hi=16.0,
            step=0.05, integer=False),
    _amount("eff_all_to_all_latency_us", 10_000.0, 5.0), _fraction("eff_scale_out_bw_fraction"),
    _amount("eff_expert_parallel_buffer_gib", 64.0, 0.1),
)


def efficiency_from(values: dict[str, Any]) -> Efficiency:
    """The calculator's :class:`Efficiency` from control values (UI units → SI).

    >>> efficiency_from({"eff_step_overhead_ms": 3.0}).step_overhead_s
    0.003
    """
    fields = {f: float(values.get(k, _eff_default(k))) * scale for k, (f, scale) in EFFICIENCY_FIELDS.items()}
    return Efficiency(**fields)


# Multi-GPU layout beyond TP (vLLM's flags; calc.spec.parallelism checks the combination).
PP = Control("pp", "select", 1, options=(1, 2, 3, 4, 6, 8, 16))
DP = Control("dp", "select", 1, options=(1, 2, 4, 8, 16, 32, 64, 72, 96, 128, 144, 256))
EP = Control("ep", "toggle", False)
NODES = Control("nodes", "number", None, lo=1, hi=1024, step=1, optional=True)
PARALLEL = (TP, PP, DP, EP, NODES)  # the sidebar's "Multi-GPU layout" section, TP first
# How weights and KV cache are stored: a lazy sidebar section of its own (ui.state.render_sidebar).
PRECISION = (QUANTIZATION, DTYPE, KV_CACHE_DTYPE)

MAIN = (MODEL, GPU, TP, QUANTIZATION, DTYPE, KV_CACHE_DTYPE, CONTEXT, OUTPUT_LEN, CONCURRENCY)
ENGINE = (GPU_MEMORY_UTILIZATION, BLOCK_SIZE, MAX_MODEL_LEN, MAX_NUM_SEQS, MAX_NUM_BATCHED_TOKENS, VLLM_VERSION)
SHARED = MAIN + ENGINE + EFFICIENCY + CUSTOM_GPU_CONTROLS + PARALLEL[1:]
# The request's lengths: stored (session, link) as context = input + output and output_len, asked in the
# sidebar as input and output tokens (ui.lengths draws the two boxes; no widget has these keys).
LENGTHS = (CONTEXT, OUTPUT_LEN)
# Drawn only while their sidebar section is open (ui.state._lazy_section): in a fresh session's first
# view the sidebar shows model, GPU, context and concurrency; each select or number box drawn costs
# the browser's one main thread ~20-30 ms before the first chart (bench/first_paint.py).
LAZY = PRECISION + ENGINE + PARALLEL + EFFICIENCY
BY_KEY = {c.key: c for c in SHARED}

# Page-level controls (also in the URL; dropped from it when the user leaves their page).
SWEEP_CONTEXT = Control("sweep_context", "toggle", False)  # memory page: x axis = context length
KV_MODELS = Control("kv_models", "multi", ("meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-13b-hf",
                    "meta-llama/Llama-2-70b-hf", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B"),
                    options=lambda: tuple(model_ids()))
KV_CONTEXTS = Control("kv_contexts", "multi_int", (4096, 32768), lo=16, hi=10_000_000,
                      options=(1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072))
PAGE = (SWEEP_CONTEXT, KV_MODELS, KV_CONTEXTS)


# ----------------------------------------------------------------------------- URL parameters

@dataclass(frozen=True)
class ParamIssue:
    """Something wrong with one URL parameter: ``invalid`` (removed, the default applies),
    ``repeated`` (the last value kept) or ``custom`` (model=custom without a config in this session)."""

    key: str
    kind: Literal["invalid", "repeated", "custom"]
    values: tuple[str, ...]  # the raw values as given
    error: InputError | None = None
    kept: Any = None  # the value used (repeated)


def _canonical(ctl: Control, value: Any) -> list[str]:
    """How a parsed value is written so the bound widget reads it back exactly (``1e3`` → ``1000``)."""
    if ctl.kind in ("multi", "multi_int"):
        return [str(v) for v in value] or [""]
    if ctl.kind == "toggle":
        return ["true" if value else "false"]
    if value is None:
        return [""]
    return [str(value)]


def sanitize_params(params: dict[str, list[str]], controls: tuple[Control, ...], *,
                    custom_available: bool = False) -> tuple[dict[str, list[str] | None], list[ParamIssue]]:
    """Validate the URL parameters of ``controls`` before any widget sees them (pure, no streamlit).

    ``params`` maps a key to all its values (repeated keys give several). Returns the changes to
    make (key → canonical values, or None to remove the parameter) and the issues to report.
    Keys of other controls are left alone.

    >>> changes, issues = sanitize_params({"concurrency": ["16", "1024"], "context": ["inf"]}, SHARED)
    >>> sorted(changes.items())
    [('concurrency', ['1024']), ('context', None)]
    >>> sorted((i.key, i.kind) for i in issues)
    [('concurrency', 'repeated'), ('context', 'invalid')]
    """
    changes: dict[str, list[str] | None] = {}
    issues: list[ParamIssue] = []
    for ctl in controls:
        if ctl.key not in params:
            continue
        values = tuple(str(v) for v in params[ctl.key])
        multi = ctl.kind in ("multi", "multi_int")
        raw: Any = list(values) if multi else (values[-1] if values else "")
        if not multi and len(values) > 1:
            issues.append(ParamIssue(ctl.key, "repeated", values, kept=raw))
        if ctl.key == "model" and raw == CUSTOM_MODEL and not custom_available:
            changes[ctl.key] = None
            issues.append(ParamIssue(ctl.key, "custom", values))
            continue
        new = None if multi else alias_of(ctl, raw)
        if new is not None:
            issues.append(ParamIssue(ctl.key, "alias", values, kept=new))
        try:
            if ctl.key == "model" and raw == CUSTOM_MODEL:
                parsed_values = [raw]
            else:
                parsed_values = _canonical(ctl, ctl.parse(raw))
        except InputError as exc:
            changes[ctl.key] = None
            issues.append(ParamIssue(ctl.key, "invalid", values, error=exc))
            continue
        if list(values) != parsed_values:
            changes[ctl.key] = parsed_values
    return changes, issues
