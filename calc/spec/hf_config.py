"""Read a Hugging Face ``config.json`` (a dict) into a validated :class:`ModelArch`.

Untrusted input: every missing or malformed field raises ``ValueError`` naming the field; an
unknown ``model_type`` raises one listing what is supported.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from calc.spec.inputs import MIN_CONTEXT_TOKENS, ModelArch, describe_validation_error
from calc.spec.untrusted import InputError, load_json, json_type, safe_name

# model_type -> short description of what is understood about it.
SUPPORTED_MODEL_TYPES: dict[str, str] = {
    "llama": "Llama 1/2/3 (GQA/MHA, SwiGLU)",
    "mistral": "Mistral (GQA, optional sliding window on every layer)",
    "mixtral": "Mixtral (MoE SwiGLU experts)",
    "qwen2": "Qwen2/2.5 (GQA, QKV bias)",
    "qwen3": "Qwen3 dense (GQA, explicit head_dim)",
    "qwen2_moe": "Qwen2-MoE / Qwen1.5-MoE (routed + shared experts)",
    "qwen3_moe": "Qwen3-MoE (routed experts)",
    "gemma": "Gemma (tied embeddings)",
    "gemma2": "Gemma 2 (alternating sliding-window layers, 4 norms per layer)",
    "gemma3": "Gemma 3 (text_config: 5 sliding-window layers to 1 global, q/k norms; vision encoder counted)",
    "gemma3_text": "Gemma 3 text-only (5 sliding-window layers to 1 global, q/k norms)",
    "phi3": "Phi-3 / Phi-4 (GQA, fused QKV and gate/up: same parameter counts as Llama)",
    "deepseek_v2": "DeepSeek-V2 (MLA latent KV + MoE)",
    "deepseek_v3": "DeepSeek-V3 (MLA latent KV + MoE)",
    "kimi_k2": "Kimi-K2 (the DeepSeek-V3 architecture: MLA + MoE, 384 experts)",
    "glm4_moe": "GLM-4.5 (GQA with QKV bias and q/k norms, MoE with a shared expert, first layers dense)",
    "gpt_oss": "gpt-oss (MoE with biased experts, attention sinks, alternating 128-token sliding window)",
    "llama4": "Llama 4 (text_config: MoE with a shared expert, chunked local attention on 3 of 4 layers; vision encoder counted)",
    "llama4_text": "Llama 4 text-only (MoE with a shared expert, chunked local attention on 3 of 4 layers)",
}

MAX_CONFIG_BYTES = 1_000_000


class ConfigError(InputError):
    """A config.json that cannot be read as a supported architecture (an :class:`InputError` whose
    field is the config key, or ``config.json`` for the whole file). A single sentence
    (``ConfigError("config.json ... is missing")``) is read as the detail of the whole file."""

    def __init__(self, field: str, *args, **kwargs) -> None:
        if not args and not kwargs and " " in field.removeprefix("config.json "):
            super().__init__("config.json", code="invalid", detail=field.removeprefix("config.json").lstrip(": "))
        else:
            super().__init__(field, *args, **kwargs)


def _int(cfg: dict[str, Any], key: str, default: Any = ...) -> int:
    """An integer field; ``null`` counts as absent when there is a default. The range is checked
    by :class:`ModelArch` (its error names the allowed range)."""
    value = cfg.get(key)
    if value is None:
        value = default
    if value is ...:
        raise ConfigError(f"config.json {key}", code="required")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"config.json {key}", value, allowed="a positive integer")
    return value


def _routed_and_shared_moe(cfg: dict, *, router_bias: bool) -> dict:
    """The MoE block of DeepSeek-style configs (DeepSeek-V2/V3, Kimi-K2, GLM-4.5): ``n_routed_experts``
    routed experts of ``moe_intermediate_size``, ``n_shared_experts`` always-on ones of the same size
    (one MLP of n_shared × moe_intermediate_size), the first ``first_k_dense_replace`` layers dense."""
    n_shared = _int(cfg, "n_shared_experts", 0)
    moe_i = _int(cfg, "moe_intermediate_size")
    return dict(num_experts=_int(cfg, "n_routed_experts"), experts_per_token=_int(cfg, "num_experts_per_tok"),
                expert_intermediate_size=moe_i, num_shared_experts=n_shared,
                shared_expert_intermediate_size=n_shared * moe_i,
                first_dense_layers=_int(cfg, "first_k_dense_replace", 0), router_bias=router_bias)


def _bool(cfg: dict[str, Any], key: str, default: bool) -> bool:
    value = cfg.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"config.json {key}", value, allowed="true or false")
    return value


_QUANT_METHODS = {"fp8": "fp8", "awq": "awq", "gptq": "gptq", "bitsandbytes": "bitsandbytes", "mxfp4": "mxfp4",
                  "modelopt_fp4": "modelopt_fp4"}


def _bnb_name() -> str:
    from calc.spec.precision import QUANTIZATIONS
    return "bitsandbytes" if "bitsandbytes" in QUANTIZATIONS else "nf4"


def _compressed_tensors_format(qc: dict[str, Any]) -> str | None:
    """compressed-tensors: the weight format of its config groups (8-bit float -> fp8, 8-bit int
    -> int8, 4-bit int -> gptq, which vLLM runs with the same Marlin W4A16 kernels)."""
    groups = qc.get("config_groups")
    if not isinstance(groups, dict):
        return None
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, dict) else None
        if not isinstance(weights, dict):
            continue
        bits, kind = weights.get("num_bits"), str(weights.get("type", "")).lower()
        if bits == 8:
            return "fp8" if kind == "float" else "int8"
        if bits == 4 and kind == "int":
            return "gptq"
        if bits == 4 and kind == "float":  # NVFP4 (E2M1, group 16): vLLM's modelopt_fp4 kernels
            return "modelopt_fp4"
    return None


def checkpoint_quantization(cfg: dict[str, Any]) -> str | None:
    """The weight format a checkpoint ships in, from ``quantization_config`` (what vLLM uses
    when ``--quantization`` is not given).

    >>> checkpoint_quantization({"quantization_config": {"quant_method": "fp8", "fmt": "e4m3"}})
    'fp8'
    >>> checkpoint_quantization({"quantization_config": {"quant_method": "compressed-tensors",
    ...     "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}}}})
    'gptq'
    >>> checkpoint_quantization({"quantization_config": {"quant_method": "mxfp4"}}), checkpoint_quantization(
    ...     {"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}})
    ('mxfp4', 'modelopt_fp4')
    >>> checkpoint_quantization({}) is None
    True
    """
    qc = cfg.get("quantization_config")
    if not isinstance(qc, dict):
        return None
    method = str(qc.get("quant_method", "")).lower()
    if method == "compressed-tensors":
        return _compressed_tensors_format(qc)
    if method == "bitsandbytes":
        return _bnb_name()
    if method == "modelopt":  # NVIDIA ModelOpt: quant_algo FP8 or NVFP4
        algo = str(qc.get("quant_algo", "")).upper()
        return {"NVFP4": "modelopt_fp4", "FP8": "fp8"}.get(algo)
    return _QUANT_METHODS.get(method)


_LAYER_MODULE = re.compile(r"layers\.(\d+|\*)\.(self_attn|attn|mlp|block_sparse_moe|feed_forward)\b")


def unquantized_layers(cfg: dict[str, Any], num_layers: int = 0) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Decoder layers whose attention / MLP a mixed checkpoint leaves unquantized: the modules
    named in ``quantization_config`` ``ignore`` (compressed-tensors), ``ignored_layers`` (FP8)
    or ``modules_to_not_convert`` (AWQ, bitsandbytes). A listed module marks its whole family
    (attention or MLP) of that layer; ``lm_head``, embeddings and MoE routers are unquantized
    anyway (vLLM never quantizes them). Regex entries (``re:...``) name module kinds, not
    layers, and are left out. A ``*`` layer (gpt-oss's ``model.layers.*.self_attn``) marks every
    one of the ``num_layers`` layers; ``mlp.router`` alone is the router (unquantized anyway).

    >>> unquantized_layers({"quantization_config": {"ignore": ["lm_head", "model.layers.0.mlp.down_proj",
    ...     "model.layers.3.self_attn.q_proj"]}})
    ((3,), (0,))
    >>> unquantized_layers({"quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn",
    ...     "model.layers.*.mlp.router"]}}, num_layers=3)
    ((0, 1, 2), ())
    """
    qc = cfg.get("quantization_config")
    if not isinstance(qc, dict):
        return (), ()
    attn: set[int] = set()
    mlp: set[int] = set()
    for key in ("ignore", "ignored_layers", "modules_to_not_convert"):
        names = qc.get(key)
        if not isinstance(names, list):
            continue
        for name in names[:100_000]:
            if not isinstance(name, str) or name.startswith("re:"):
                continue
            m = _LAYER_MODULE.search(name)
            if m and not name.endswith((".router", ".gate")):
                which = range(num_layers) if m.group(1) == "*" else (int(m.group(1)),)
                (attn if m.group(2) in ("self_attn", "attn") else mlp).update(which)
    return tuple(sorted(attn)), tuple(sorted(mlp))


def _siglip_params(vc: dict[str, Any], text_hidden: int) -> int:
    """A SigLIP vision tower plus Gemma 3's projector: per layer 4·(d²+d) attention, 2·(d·I)+I+d
    MLP, 2 LayerNorms (2·2d); patch and position embeddings; post-LayerNorm; projector d·h_text
    and its RMSNorm (d)."""
    d = _int(vc, "hidden_size")
    inter = _int(vc, "intermediate_size")
    layers = _int(vc, "num_hidden_layers")
    patch = _int(vc, "patch_size", 14)
    image = _int(vc, "image_size", 224)
    channels = _int(vc, "num_channels", 3)
    per_layer = 4 * (d * d + d) + 2 * d * inter + inter + d + 4 * d
    embed = patch * patch * channels * d + d + (image // patch) ** 2 * d
    return layers * per_layer + embed + 2 * d + d * text_hidden + d


def _llama4_vision_params(vc: dict[str, Any], text_hidden: int) -> int:
    """Llama 4's vision encoder, pixel-shuffle adapter and projector (HF ``Llama4VisionModel``):
    patch embedding c·p²·d (no bias), class embedding d, positions ((S/p)² + 1)·d, pre/post
    LayerNorms 2·2d; per layer attention 4·(d² + d), MLP d·I + I + I·d + d, 2 LayerNorms 4d;
    adapter I·P_in + P_out² (no bias); projector P_out_vision·h_text (no bias)."""
    d = _int(vc, "hidden_size")
    inter = _int(vc, "intermediate_size")
    layers = _int(vc, "num_hidden_layers")
    patch = _int(vc, "patch_size", 14)
    image = _int(vc, "image_size", 336)
    channels = _int(vc, "num_channels", 3)
    p_in = _int(vc, "projector_input_dim", 4096)
    p_out = _int(vc, "projector_output_dim", 4096)
    v_out = _int(vc, "vision_output_dim", 4096)
    per_layer = 4 * (d * d + d) + 2 * d * inter + inter + d + 4 * d
    embed = channels * patch * patch * d + d + ((image // patch) ** 2 + 1) * d + 4 * d
    return layers * per_layer + embed + inter * p_in + p_out * p_out + v_out * text_hidden


def parse_config_text(text: str | bytes, *, model_id: str = "custom") -> ModelArch:
    """Parse the text of a ``config.json``; size-limited (in bytes), JSON object required.

    Every failure is a :class:`ConfigError` with a one-line message.

    >>> parse_config_text('[1, 2]')
    Traceback (most recent call last):
    ...
    calc.spec.hf_config.ConfigError: config.json must be a JSON object (got a list)
    """
    try:
        cfg = load_json(text, what="config.json", max_bytes=MAX_CONFIG_BYTES)
    except InputError as exc:
        raise ConfigError(exc.field, exc.raw, allowed=exc.allowed, code=exc.code, detail=exc.detail) from None
    if not isinstance(cfg, dict):
        raise ConfigError("config.json", json_type(cfg), code="not_object")
    return arch_from_hf_config(cfg, model_id=model_id)


def arch_from_hf_config(cfg: dict[str, Any], *, model_id: str | None = None) -> ModelArch:
    """Map HF config keys to :class:`ModelArch` (the ``_id``/``_name``/``_source`` keys of our
    catalog files are used when present).

    >>> a = arch_from_hf_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    ...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    ...     "vocab_size": 128256, "max_position_embeddings": 131072})
    >>> a.head_dim, a.attention_kind
    (128, 'GQA')
    """
    model_type = cfg.get("model_type")
    stated_type = model_type
    extra_params = 0
    if model_type == "gemma3":  # multimodal wrapper: the language model lives in text_config
        text = cfg.get("text_config")
        if not isinstance(text, dict):
            raise ConfigError("config.json text_config", code="invalid",
                              detail="missing (gemma3 nests the language model there)")
        vision = cfg.get("vision_config")
        merged = {k: v for k, v in cfg.items() if k.startswith("_") or k == "quantization_config"}
        merged.update(text)
        merged["model_type"] = "gemma3_text"
        # HF Gemma3TextConfig defaults that checkpoints leave out of text_config:
        merged.setdefault("vocab_size", 262208)
        merged.setdefault("max_position_embeddings", 131072)
        if isinstance(vision, dict):
            extra_params = _siglip_params(vision, _int(merged, "hidden_size"))
        cfg, model_type = merged, "gemma3_text"
    if model_type == "llama4":  # multimodal wrapper, as Gemma 3: the language model in text_config
        text = cfg.get("text_config")
        if not isinstance(text, dict):
            raise ConfigError("config.json text_config", code="invalid",
                              detail="missing (llama4 nests the language model there)")
        vision = cfg.get("vision_config")
        merged = {k: v for k, v in cfg.items() if k.startswith("_") or k in ("quantization_config", "tie_word_embeddings")}
        merged.update(text)
        merged["model_type"] = "llama4_text"
        if isinstance(vision, dict):
            extra_params = _llama4_vision_params(vision, _int(merged, "hidden_size"))
        cfg, model_type = merged, "llama4_text"
    if not isinstance(model_type, str) or model_type not in SUPPORTED_MODEL_TYPES:
        supported = ", ".join(sorted(SUPPORTED_MODEL_TYPES))
        raise ConfigError("config.json model_type", model_type, allowed=f"one of the supported {supported}")
    # Names are user text shown on every page and in charts: safe_name keeps them short and inert.
    mid = safe_name(cfg.get("_id") or model_id or cfg.get("_name_or_path") or "custom", 200)
    name = safe_name(cfg.get("_name") or mid.split("/")[-1])
    h = _int(cfg, "hidden_size")
    layers = _int(cfg, "num_hidden_layers")
    heads = _int(cfg, "num_attention_heads")
    kv_heads = _int(cfg, "num_key_value_heads", heads)
    head_dim = cfg.get("head_dim")
    if head_dim is None:
        if heads and h % heads:
            raise ConfigError("config.json head_dim", code="invalid",
                              detail="missing, and hidden_size is not a multiple of num_attention_heads")
        head_dim = h // max(heads, 1)
    head_dim = _int({"head_dim": head_dim}, "head_dim")
    fields: dict[str, Any] = dict(
        id=mid,
        name=name,
        model_type=model_type,
        hidden_size=h,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        # Llama 4: intermediate_size is the experts' width, intermediate_size_mlp the dense layers'.
        intermediate_size=_int(cfg, "intermediate_size_mlp" if model_type == "llama4_text" else "intermediate_size"),
        vocab_size=_int(cfg, "vocab_size"),
        tie_word_embeddings=_bool(cfg, "tie_word_embeddings", model_type in ("gemma", "gemma2", "gemma3_text")),
        qkv_bias=_bool(cfg, "attention_bias", model_type in ("qwen2", "qwen2_moe")),
        norms_per_layer=4 if model_type in ("gemma2", "gemma3_text") else 2,
        # Llama 4's use_qk_norm is a weightless L2 norm: no parameters.
        qk_norm=model_type in ("qwen3", "qwen3_moe", "gemma3_text") or (
            model_type == "glm4_moe" and _bool(cfg, "use_qk_norm", False)),
        o_bias=model_type == "gpt_oss" and _bool(cfg, "attention_bias", True),
        attention_sinks=model_type == "gpt_oss",
        extra_params=extra_params,
        max_position_embeddings=_max_positions(cfg),
        source=str(cfg.get("_source", "user-supplied config.json")),
        checkpoint_quantization=checkpoint_quantization(cfg),
    )
    fields["unquantized_attention_layers"], fields["unquantized_mlp_layers"] = unquantized_layers(cfg, layers)
    fields["model_type"] = stated_type
    window = cfg.get("sliding_window")
    use_window = _bool(cfg, "use_sliding_window", True) and window is not None
    if model_type in ("mistral", "gemma2") and use_window:
        fields["sliding_window"] = _int(cfg, "sliding_window")
        # Gemma 2 alternates local (sliding) and global layers; Mistral slides on every layer.
        fields["num_sliding_layers"] = (layers + 1) // 2 if model_type == "gemma2" else layers
    if model_type == "gemma3_text":
        # Gemma 3: layer i is global when (i + 1) % pattern == 0, else sliding (HF layer_types).
        layer_types = cfg.get("layer_types")
        if isinstance(layer_types, list) and len(layer_types) == layers:
            n_sw = sum(1 for t in layer_types if t == "sliding_attention")
        else:
            pattern = _int(cfg, "sliding_window_pattern", 6)
            n_sw = layers - layers // pattern
        fields["sliding_window"] = _int(cfg, "sliding_window", 4096)
        fields["num_sliding_layers"] = n_sw
    if model_type == "gpt_oss":
        # gpt-oss: layer_types alternates sliding_attention (window 128) and full_attention.
        layer_types = cfg.get("layer_types")
        if isinstance(layer_types, list) and len(layer_types) == layers:
            n_sw = sum(1 for t in layer_types if t == "sliding_attention")
        else:
            n_sw = (layers + 1) // 2
        fields["sliding_window"] = _int(cfg, "sliding_window", 128)
        fields["num_sliding_layers"] = n_sw
        fields["moe"] = dict(
            num_experts=_int(cfg, "num_local_experts"),
            experts_per_token=_int(cfg, "num_experts_per_tok", cfg.get("experts_per_token")),
            expert_intermediate_size=fields["intermediate_size"],
            router_bias=True,
            expert_bias=True,
        )
    if model_type == "llama4_text":
        # Chunked local attention on the RoPE layers (no_rope_layers[i] == 1; every 4th layer is a
        # global NoPE layer): vLLM's ChunkedLocalAttentionSpec keeps at most chunk + budget tokens.
        chunk = cfg.get("attention_chunk_size")
        if chunk is not None:
            rope = cfg.get("no_rope_layers")
            if isinstance(rope, list) and len(rope) == layers:
                n_local = sum(1 for r in rope if r)
            else:
                interval = _int(cfg, "no_rope_layer_interval", 4)
                n_local = sum(1 for i in range(layers) if (i + 1) % interval)
            fields["sliding_window"] = _int(cfg, "attention_chunk_size")
            fields["num_sliding_layers"] = n_local
            fields["local_attention"] = "chunked"
        expert_i = _int(cfg, "intermediate_size")
        fields["moe"] = dict(
            num_experts=_int(cfg, "num_local_experts"),
            experts_per_token=_int(cfg, "num_experts_per_tok"),
            expert_intermediate_size=expert_i,
            num_shared_experts=1,
            shared_expert_intermediate_size=expert_i,
            layer_step=_int(cfg, "interleave_moe_layer_step", 1),
        )
    if model_type == "glm4_moe":
        fields["moe"] = _routed_and_shared_moe(cfg, router_bias=True)  # e_score_correction_bias
    if model_type == "mixtral":
        fields["moe"] = dict(
            num_experts=_int(cfg, "num_local_experts"),
            experts_per_token=_int(cfg, "num_experts_per_tok"),
            expert_intermediate_size=fields["intermediate_size"],
        )
    elif model_type in ("qwen2_moe", "qwen3_moe"):
        shared = _int(cfg, "shared_expert_intermediate_size", 0)
        fields["moe"] = dict(
            num_experts=_int(cfg, "num_experts"),
            experts_per_token=_int(cfg, "num_experts_per_tok"),
            expert_intermediate_size=_int(cfg, "moe_intermediate_size"),
            num_shared_experts=1 if shared else 0,
            shared_expert_intermediate_size=shared,
        )
    elif model_type in ("deepseek_v2", "deepseek_v3", "kimi_k2"):
        q_lora = cfg.get("q_lora_rank") or 0
        fields["mla"] = dict(
            q_lora_rank=_int({"q_lora_rank": q_lora}, "q_lora_rank"),
            kv_lora_rank=_int(cfg, "kv_lora_rank"),
            qk_nope_head_dim=_int(cfg, "qk_nope_head_dim"),
            qk_rope_head_dim=_int(cfg, "qk_rope_head_dim"),
            v_head_dim=_int(cfg, "v_head_dim"),
        )
        fields["moe"] = _routed_and_shared_moe(cfg, router_bias=model_type in ("deepseek_v3", "kimi_k2"))
    try:
        return ModelArch(**fields)
    except ValidationError as exc:
        raise ConfigError("config.json", code="invalid", detail=describe_validation_error(exc)) from None
    except (TypeError, ValueError, OverflowError) as exc:  # a nested value of the wrong type
        raise ConfigError("config.json", code="invalid", detail=str(exc).splitlines()[0][:200]) from None


def _max_positions(cfg: dict[str, Any]) -> int:
    """``max_position_embeddings``: at least the shortest context the calculator (UI and CLI) handles."""
    value = _int(cfg, "max_position_embeddings", 4096)
    if value < MIN_CONTEXT_TOKENS:
        raise ConfigError("config.json max_position_embeddings", value, code="max_positions",
                          allowed=f"at least {MIN_CONTEXT_TOKENS}")
    return value
