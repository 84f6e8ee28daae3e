"""Read a Hugging Face ``config.json`` (a dict) into a validated :class:`ModelArch`.

Untrusted input: every missing or malformed field raises ``ValueError`` naming the field; an
unknown ``model_type`` raises one listing what is supported.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from calc.spec.inputs import ModelArch, describe_validation_error

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
    "deepseek_v2": "DeepSeek-V2 (MLA latent KV + MoE)",
    "deepseek_v3": "DeepSeek-V3 (MLA latent KV + MoE)",
}

MAX_CONFIG_BYTES = 1_000_000


class ConfigError(ValueError):
    """A config.json that cannot be read as a supported architecture."""


def _int(cfg: dict[str, Any], key: str, default: Any = ...) -> int:
    """An integer field; ``null`` counts as absent when there is a default. The range is checked
    by :class:`ModelArch` (its error names the allowed range)."""
    value = cfg.get(key)
    if value is None:
        value = default
    if value is ...:
        raise ConfigError(f"config.json field '{key}' is missing")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"config.json field '{key}' must be a positive integer (got {_short(value)})")
    return value


def _bool(cfg: dict[str, Any], key: str, default: bool) -> bool:
    value = cfg.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"config.json field '{key}' must be true or false (got {_short(value)})")
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_QUANT_METHODS = {"fp8": "fp8", "awq": "awq", "gptq": "gptq", "bitsandbytes": "bitsandbytes"}


def checkpoint_quantization(cfg: dict[str, Any]) -> str | None:
    """The weight format a checkpoint ships in, from ``quantization_config.quant_method``.

    >>> checkpoint_quantization({"quantization_config": {"quant_method": "fp8", "fmt": "e4m3"}})
    'fp8'
    >>> checkpoint_quantization({}) is None
    True
    """
    qc = cfg.get("quantization_config")
    if not isinstance(qc, dict):
        return None
    return _QUANT_METHODS.get(str(qc.get("quant_method", "")).lower())


def parse_config_text(text: str | bytes, *, model_id: str = "custom") -> ModelArch:
    """Parse the text of a ``config.json``; size-limited (in bytes), JSON object required.

    Every failure is a :class:`ConfigError` with a one-line message.

    >>> parse_config_text('[1, 2]')
    Traceback (most recent call last):
    ...
    calc.spec.hf_config.ConfigError: config.json must be a JSON object (got an array)
    """
    # A str has at least one byte per character: only encode (to count bytes) when that can matter.
    size = len(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) and len(text) <= MAX_CONFIG_BYTES else len(text)
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(f"config.json is larger than {MAX_CONFIG_BYTES:,} bytes")
    try:
        cfg = json.loads(text)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, integers over 4300 digits
        raise ConfigError(f"config.json is not valid JSON: {str(exc).splitlines()[0][:200]}") from None
    except RecursionError:  # e.g. '[[[[...' nested deeper than Python's recursion limit
        raise ConfigError("config.json is not valid JSON: nested too deeply") from None
    if not isinstance(cfg, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(type(cfg), "null")
        raise ConfigError(f"config.json must be a JSON object (got {kind})")
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
    if not isinstance(model_type, str) or model_type not in SUPPORTED_MODEL_TYPES:
        supported = ", ".join(sorted(SUPPORTED_MODEL_TYPES))
        raise ConfigError(f"config.json model_type {_short(model_type)} is not supported; supported: {supported}")
    mid = str(cfg.get("_id") or model_id or cfg.get("_name_or_path") or "custom")
    name = str(cfg.get("_name") or mid.split("/")[-1])
    h = _int(cfg, "hidden_size")
    layers = _int(cfg, "num_hidden_layers")
    heads = _int(cfg, "num_attention_heads")
    kv_heads = _int(cfg, "num_key_value_heads", heads)
    head_dim = cfg.get("head_dim")
    if head_dim is None:
        if heads and h % heads:
            raise ConfigError("config.json: hidden_size is not a multiple of num_attention_heads and head_dim is missing")
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
        intermediate_size=_int(cfg, "intermediate_size"),
        vocab_size=_int(cfg, "vocab_size"),
        tie_word_embeddings=_bool(cfg, "tie_word_embeddings", model_type in ("gemma", "gemma2")),
        qkv_bias=_bool(cfg, "attention_bias", model_type in ("qwen2", "qwen2_moe")),
        norms_per_layer=4 if model_type == "gemma2" else 2,
        max_position_embeddings=_int(cfg, "max_position_embeddings", 4096),
        source=str(cfg.get("_source", "user-supplied config.json")),
        checkpoint_quantization=checkpoint_quantization(cfg),
    )
    window = cfg.get("sliding_window")
    use_window = _bool(cfg, "use_sliding_window", True) and window is not None
    if model_type in ("mistral", "gemma2") and use_window:
        fields["sliding_window"] = _int(cfg, "sliding_window")
        # Gemma 2 alternates local (sliding) and global layers; Mistral slides on every layer.
        fields["num_sliding_layers"] = (layers + 1) // 2 if model_type == "gemma2" else layers
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
    elif model_type in ("deepseek_v2", "deepseek_v3"):
        q_lora = cfg.get("q_lora_rank") or 0
        fields["mla"] = dict(
            q_lora_rank=_int({"q_lora_rank": q_lora}, "q_lora_rank"),
            kv_lora_rank=_int(cfg, "kv_lora_rank"),
            qk_nope_head_dim=_int(cfg, "qk_nope_head_dim"),
            qk_rope_head_dim=_int(cfg, "qk_rope_head_dim"),
            v_head_dim=_int(cfg, "v_head_dim"),
        )
        n_shared = _int(cfg, "n_shared_experts", 0)
        moe_i = _int(cfg, "moe_intermediate_size")
        fields["moe"] = dict(
            num_experts=_int(cfg, "n_routed_experts"),
            experts_per_token=_int(cfg, "num_experts_per_tok"),
            expert_intermediate_size=moe_i,
            num_shared_experts=n_shared,
            shared_expert_intermediate_size=n_shared * moe_i,
            first_dense_layers=_int(cfg, "first_k_dense_replace", 0),
            router_bias=model_type == "deepseek_v3",
        )
    try:
        return ModelArch(**fields)
    except ValidationError as exc:
        raise ConfigError(f"config.json: {describe_validation_error(exc)}") from None
