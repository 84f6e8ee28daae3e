"""Parameter counts of a decoder-only transformer (physics.md A1).

Notation as in the scaling book: h hidden size, L layers, H_q query heads, H_kv KV heads, d head
dim, I FFN width, V vocabulary. Every per-layer function broadcasts over NumPy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calc.spec.inputs import ModelArch


def attention_params_per_layer(*, hidden_size, num_heads, num_kv_heads, head_dim, qkv_bias=False):
    """W_q + W_k + W_v + W_o = h·H_q·d + 2·h·H_kv·d + H_q·d·h  [+ (H_q + 2·H_kv)·d biases].

    >>> attention_params_per_layer(hidden_size=4096, num_heads=32, num_kv_heads=8, head_dim=128)
    41943040
    """
    qkv_o = hidden_size * num_heads * head_dim * 2 + 2 * hidden_size * num_kv_heads * head_dim
    bias = np.asarray(qkv_bias, dtype=np.int64) * (num_heads + 2 * num_kv_heads) * head_dim
    return _plain(qkv_o + bias)


def _plain(x):
    """0-d results come back as Python numbers, arrays stay arrays."""
    return x.item() if np.ndim(x) == 0 and hasattr(x, "item") else x


def mla_attention_params_per_layer(*, hidden_size, num_heads, q_lora_rank, kv_lora_rank,
                                   qk_nope_head_dim, qk_rope_head_dim, v_head_dim):
    """DeepSeek MLA projections: q_a h·r_q + q_b r_q·H·(d_nope+d_rope) (or h·H·(d_nope+d_rope)
    without a query low rank) + kv_a h·(r_kv + d_rope) + kv_b r_kv·H·(d_nope + d_v) + o H·d_v·h
    + the two latent norms r_q + r_kv.

    >>> mla_attention_params_per_layer(hidden_size=7168, num_heads=128, q_lora_rank=1536, kv_lora_rank=512,
    ...     qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)   # DeepSeek-V3, physics.md A1
    187107328
    """
    qk_dim = qk_nope_head_dim + qk_rope_head_dim
    q = np.where(np.asarray(q_lora_rank) > 0,
                 hidden_size * q_lora_rank + q_lora_rank * num_heads * qk_dim + q_lora_rank,
                 hidden_size * num_heads * qk_dim)
    kv = hidden_size * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank * num_heads * (qk_nope_head_dim + v_head_dim) + kv_lora_rank
    o = num_heads * v_head_dim * hidden_size
    return _plain(q + kv + o)


def gated_mlp_params(*, hidden_size, intermediate_size):
    """SwiGLU / GeGLU FFN: gate, up and down matrices = 3·h·I.

    >>> gated_mlp_params(hidden_size=4096, intermediate_size=11008)
    135266304
    """
    return 3 * hidden_size * intermediate_size


def moe_ffn_params(*, hidden_size, num_experts, expert_intermediate_size, shared_intermediate_size=0,
                   router_bias=False):
    """E routed experts of 3·h·I_e + shared experts 3·h·I_s + router h·E (+ E biases).

    >>> moe_ffn_params(hidden_size=4096, num_experts=8, expert_intermediate_size=14336)  # Mixtral layer
    1409318912
    """
    return (num_experts * 3 * hidden_size * expert_intermediate_size
            + 3 * hidden_size * shared_intermediate_size
            + hidden_size * num_experts + (num_experts if router_bias else 0))


@dataclass(frozen=True)
class ParamCounts:
    """Parameter counts of one architecture, by part (one number each)."""

    embedding: int
    lm_head: int
    attention: int  # all layers
    dense_mlp: int  # all dense-FFN layers
    experts: int  # routed experts, all layers
    shared_experts_and_router: int
    norms: int
    active_experts: int  # routed experts touched by one token, all layers
    kv_projection: int  # the K and V (or MLA latent down-projection) part of ``attention``
    router: int = 0  # the MoE gate (h·E + bias), part of ``shared_experts_and_router``
    q_low_rank_projection: int = 0  # MLA q_a (h·r_q), part of ``attention``
    extra: int = 0  # outside the decoder, e.g. a vision encoder
    attention_per_layer: int = 0
    mlp_per_dense_layer: int = 0
    mlp_per_moe_layer: int = 0  # routed + shared experts + router of one MoE layer

    @property
    def total(self) -> int:
        return (self.embedding + self.lm_head + self.attention + self.dense_mlp + self.experts
                + self.shared_experts_and_router + self.norms + self.extra)

    @property
    def active(self) -> int:
        """Parameters used per token: all but the unrouted experts."""
        return self.total - self.experts + self.active_experts

    @property
    def linear(self) -> int:
        """Quantizable matmul weights (attention, FFN, experts); not embeddings, head or norms."""
        return self.attention + self.dense_mlp + self.experts + self.shared_experts_and_router


def param_counts(arch: ModelArch) -> ParamCounts:
    """Count every tensor of ``arch`` (physics.md A1); reproduces the published totals.

    >>> from calc.spec.catalog import get_model
    >>> param_counts(get_model("meta-llama/Llama-2-7b-hf")).total
    6738415616
    """
    h, L = arch.hidden_size, arch.num_hidden_layers
    if arch.mla is not None:
        m = arch.mla
        attn = mla_attention_params_per_layer(
            hidden_size=h, num_heads=arch.num_attention_heads, q_lora_rank=m.q_lora_rank,
            kv_lora_rank=m.kv_lora_rank, qk_nope_head_dim=m.qk_nope_head_dim,
            qk_rope_head_dim=m.qk_rope_head_dim, v_head_dim=m.v_head_dim)
        kv_proj = h * (m.kv_lora_rank + m.qk_rope_head_dim)
        q_a = h * m.q_lora_rank
    else:
        attn = attention_params_per_layer(hidden_size=h, num_heads=arch.num_attention_heads,
                                          num_kv_heads=arch.num_key_value_heads, head_dim=arch.head_dim,
                                          qkv_bias=arch.qkv_bias)
        kv_proj = 2 * h * arch.num_key_value_heads * arch.head_dim
        q_a = 0
    # gpt-oss: o_proj bias (h) and one attention-sink logit per query head (H_q), per layer.
    attn = attn + (h if arch.o_bias else 0) + (arch.num_attention_heads if arch.attention_sinks else 0)
    moe = arch.moe
    n_moe_layers = 0 if moe is None else moe.num_moe_layers(L)
    n_dense_layers = L - n_moe_layers
    dense_mlp = n_dense_layers * gated_mlp_params(hidden_size=h, intermediate_size=arch.intermediate_size)
    experts = shared_router = active_experts = router = 0
    if moe is not None:
        # gate, up, down 3·h·I_e (+ biases 2·I_e + h where the experts have them, gpt-oss)
        per_expert = 3 * h * moe.expert_intermediate_size + (2 * moe.expert_intermediate_size + h if moe.expert_bias else 0)
        experts = n_moe_layers * moe.num_experts * per_expert
        active_experts = n_moe_layers * moe.experts_per_token * per_expert
        router_per_layer = h * moe.num_experts + (moe.num_experts if moe.router_bias else 0)
        # Qwen2-MoE gates its shared expert with one h -> 1 projection per layer.
        shared_gate = h if (arch.model_type == "qwen2_moe" and moe.shared_expert_intermediate_size) else 0
        router = n_moe_layers * router_per_layer
        shared_router = n_moe_layers * (3 * h * moe.shared_expert_intermediate_size + shared_gate) + router
    embedding = arch.vocab_size * h
    return ParamCounts(
        embedding=embedding,
        lm_head=0 if arch.tie_word_embeddings else embedding,
        attention=L * int(attn),
        dense_mlp=int(dense_mlp),
        experts=int(experts),
        shared_experts_and_router=int(shared_router),
        norms=L * arch.norms_per_layer * h + h + (L * 2 * arch.head_dim if arch.qk_norm else 0),
        active_experts=int(active_experts),
        kv_projection=L * int(kv_proj),
        router=int(router),
        q_low_rank_projection=L * int(q_a),
        extra=arch.extra_params,
        attention_per_layer=int(attn),
        mlp_per_dense_layer=int(gated_mlp_params(hidden_size=h, intermediate_size=arch.intermediate_size)),
        mlp_per_moe_layer=int((experts + shared_router) // n_moe_layers) if n_moe_layers else 0,
    )
