""""Why this number" panels, scaling-book style: the formula, the values plugged in, a takeaway.

Each builder formats numbers that ``calc`` produced (the result comes from the
:class:`~calc.sizing.scenario.MemoryResult`; the factors from the inputs and ``calc`` helpers) into
LaTeX and text. Formulas are those in the docstrings of :mod:`calc.sizing.memory`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from calc.sizing import memory as mem
from calc.spec.inputs import Efficiency, ModelArch, ServingConfig
from calc.sizing.scenario import MemoryResult, ModelNumbers, ResolvedServing
from ui import format as F

T = Callable[..., str]


@dataclass(frozen=True)
class Panel:
    key: str
    title: str
    formula: str  # LaTeX
    plugged: str  # LaTeX
    takeaway: str
    notes: list[str] = field(default_factory=list)


def latex_number(x: float, digits: int = 2) -> str:
    """A number for LaTeX: thousands separators as ``{,}`` (no extra space in KaTeX)."""
    return F.number(x, digits).replace(",", "{,}")


_n = latex_number


def _b(x: float) -> str:
    """Bytes for LaTeX, binary units: ``12.55\\,\\text{GiB}``."""
    value, unit = F.binary(x).rsplit(" ", 1)
    return f"{value.replace(',', '{,}')}\\,\\text{{{unit}}}"


def _gb(x: float) -> str:
    value, unit = F.gb(x).rsplit(" ", 1)
    return f"{value.replace(',', '{,}')}\\,\\text{{{unit}}}"


def _f(x) -> float:
    return float(np.max(x))


@dataclass(frozen=True)
class Inputs:
    """What the panels show, gathered by the page from the scenario and ``calc``."""

    arch: ModelArch
    serving: ServingConfig
    resolved: ResolvedServing
    efficiency: Efficiency
    numbers: ModelNumbers
    result: MemoryResult  # at the user's concurrency and context (scalars)
    context_tokens: int


def weights(i: Inputs, t: T) -> Panel:
    n, tp = i.numbers, i.serving.tensor_parallel_size
    # The K/V-projection term alone: the same calc formula with the other terms set to zero.
    kvp = mem.weights_per_gpu_bytes(sharded_weight_bytes=0.0, replicated_weight_bytes=0.0,
                                    kv_proj_bytes_per_head=n.kv_proj_bytes_per_head,
                                    num_kv_heads=n.num_kv_heads, tensor_parallel_size=tp)
    w = _f(i.result.weights_bytes)
    return Panel(
        key="weights",
        title=t("why.weights", value=F.both(w)),
        formula=r"W_{\text{GPU}} = \frac{W_{\text{shard}}}{TP} + W_{\text{repl}} + W_{kv}"
                r"\qquad W = P \cdot b",
        plugged=(f"W_{{\\text{{GPU}}}} = \\frac{{{_gb(n.sharded_weight_bytes)}}}{{{tp}}} + {_b(n.replicated_weight_bytes)}"
                 f" + {_b(kvp)} = {_b(w)} = {_gb(w)}"),
        takeaway=t("why.weights.take"),
        notes=[t("why.weights.terms", shard=F.both(n.sharded_weight_bytes), repl=F.binary(n.replicated_weight_bytes),
                 kvp=F.binary(kvp)),
               f"P = {F.integer(n.params.total)} ({F.number(n.params.total / 1e9)} B); "
               f"b_linear = {F.number(n.linear_bytes_per_param, 4)} B, b_embed/norm = {F.number(n.activation_bytes)} B"]
        + ([t("why.weights.auto", quant=n.quantization.upper())]
           if i.serving.quantization == "auto" and n.quantization != "none" else [])
        + ([t("why.weights.replicated", router=F.integer(n.params.router),
              qa=F.integer(n.params.q_low_rank_projection))] if n.params.router or n.params.q_low_rank_projection else []),
    )


def kv_per_token(i: Inputs, t: T) -> Panel:
    a, n, tp = i.arch, i.numbers, i.serving.tensor_parallel_size
    value = _f(i.result.kv_bytes_per_token)
    b = n.kv_bytes_per_element
    notes = []
    if a.mla is not None:
        formula = r"\text{KV/token} = L \cdot (r_{kv} + d_{rope}) \cdot b_{kv}"
        plugged = (f"{a.num_hidden_layers} \\cdot ({a.mla.kv_lora_rank} + {a.mla.qk_rope_head_dim}) \\cdot {_n(b)}"
                   f"\\,\\text{{B}} = {_n(value)}\\,\\text{{B}} = {_b(value)}")
        take = t("why.kv_token.take_mla")
    else:
        kvh = mem.kv_heads_per_rank(num_kv_heads=a.num_key_value_heads, tensor_parallel_size=tp)
        formula = r"\text{KV/token} = 2 \cdot L \cdot \frac{H_{kv}}{TP} \cdot d \cdot b_{kv}"
        plugged = (f"2 \\cdot {a.num_hidden_layers} \\cdot {kvh} \\cdot {a.head_dim} \\cdot {_n(b)}\\,\\text{{B}}"
                   f" = {_n(value)}\\,\\text{{B}} = {_b(value)}")
        if a.attention_kind == "MHA":
            take = t("why.kv_token.take_mha")
        else:
            take = t("why.kv_token.take_gqa", kv=a.num_key_value_heads, q=a.num_attention_heads,
                     ratio=F.number(a.num_attention_heads / a.num_key_value_heads))
        if a.num_sliding_layers:
            notes.append(t("why.kv_token.sliding", n=a.num_sliding_layers, L=a.num_hidden_layers,
                           w=F.integer(a.sliding_window or 0)))
    return Panel("kv_token", t("why.kv_token", value=F.binary(value)), formula, plugged, take, notes)


def kv_per_request(i: Inputs, t: T) -> Panel:
    B, S = i.serving.block_size, i.context_tokens
    blocks = mem.blocks_for_tokens(tokens=S, block_size=B)
    per_tok = _f(i.result.kv_bytes_per_token)
    value = _f(i.result.kv_bytes_per_request)
    sliding = bool(i.arch.num_sliding_layers)
    plugged = (f"\\lceil {_n(S)} / {B} \\rceil \\cdot {B} \\cdot {_b(per_tok)} = {_n(blocks)} \\cdot {B} \\cdot "
               f"{_b(per_tok)}" + ("" if sliding else f" = {_b(value)}") + f"\\;({_gb(value)})")
    return Panel(
        key="kv_request",
        title=t("why.kv_request", value=F.both(value)),
        formula=r"\text{KV/request} = \left\lceil \frac{S}{B} \right\rceil \cdot B \cdot \text{KV/token}",
        plugged=plugged,
        takeaway=t("why.kv_request.take", block=B),
        notes=[t("why.kv_token.sliding", n=i.arch.num_sliding_layers, L=i.arch.num_hidden_layers,
                 w=F.integer(i.arch.sliding_window or 0)),
               t("why.kv_request.sliding_running", w=F.integer(i.arch.sliding_window or 0), B=B,
                 run=F.binary(value), start=F.binary(_f(i.result.kv_bytes_per_request_startup)),
                 T=F.integer(i.resolved.max_num_batched_tokens))] if sliding else [],
    )


def kv_pool(i: Inputs, t: T) -> Panel:
    r = i.result
    value = _f(r.kv_pool_bytes)
    return Panel(
        key="pool",
        title=t("why.pool", value=F.both(value)),
        formula=r"\text{pool} = M_{\text{usable}} \cdot u - W - A - O",
        plugged=(f"{_b(_f(r.usable_memory_bytes))} \\cdot {_n(i.serving.gpu_memory_utilization)} - {_b(_f(r.weights_bytes))}"
                 f" - {_b(_f(r.activation_bytes))} - {_b(_f(r.overhead_bytes))} = {_b(value)}"),
        takeaway=t("why.pool.take"),
    )


def max_concurrency(i: Inputs, t: T) -> Panel:
    r, B = i.result, i.serving.block_size
    blocks = int(np.max(r.num_blocks))
    per_tok = _f(r.kv_bytes_per_token)
    per_req = _f(r.kv_bytes_per_request)
    fit = int(np.max(r.max_concurrency_at_context))
    if not bool(np.all(r.fits)):
        return _no_start(i, t, blocks=blocks, fit=fit)
    return Panel(
        key="max_conc",
        title=t("why.max_conc", value=F.integer(fit)),
        formula=(r"N_{\text{blocks}} = \left\lfloor \frac{\text{pool}}{B \cdot \text{KV/token}} \right\rfloor"
                 r"\qquad C_{\max} = \left\lfloor \frac{N_{\text{blocks}} \cdot B \cdot \text{KV/token}}"
                 r"{\text{KV/request}} \right\rfloor"),
        plugged=(f"N_{{\\text{{blocks}}}} = \\left\\lfloor \\frac{{{_b(_f(r.kv_pool_bytes))}}}{{{B} \\cdot {_b(per_tok)}}}"
                 f" \\right\\rfloor = {_n(blocks)} \\qquad C_{{\\max}} = \\left\\lfloor \\frac{{{_n(blocks)} \\cdot {B}"
                 f" \\cdot {_b(per_tok)}}}{{{_b(per_req)}}} \\right\\rfloor = {_n(fit)}"),
        takeaway=t("why.max_conc.take", vllm=F.number(_f(r.max_concurrency)), mml=F.integer(i.resolved.max_model_len)),
    )


def _no_start(i: Inputs, t: T, *, blocks: int, fit: int) -> Panel:
    """Max concurrency when vLLM refuses to start: none, and why (no pool, or a pool smaller than
    one max_model_len request: vLLM's start-up check), never the count a running engine would serve."""
    r, B, mml = i.result, i.serving.block_size, i.resolved.max_model_len
    pool, vllm = _f(r.kv_pool_bytes), _f(r.max_concurrency)
    refused = r"\;\Rightarrow\; C_{\max} = 0"  # words in the title and takeaway (KaTeX text stays ASCII)
    formula = (r"\text{start} \iff \text{pool} > 0 \;\wedge\; \frac{N_{\text{blocks}} \cdot B \cdot \text{KV/token}}"
               r"{\text{KV}(L_{\max})} \ge 1")
    notes: list[str] = []
    if pool <= 0:
        plugged = rf"\text{{pool}} = {_b(pool)} \le 0 \;\Rightarrow\; N_{{\text{{blocks}}}} = 0 {refused}"
        take = t("why.max_conc.take_no_pool")
    else:
        used = blocks * B * _f(r.kv_bytes_per_token)
        per_max = rf" = \frac{{{_b(used)}}}{{{_b(used / vllm)}}}" if vllm > 0 else ""
        plugged = (rf"\frac{{{_n(blocks)} \cdot {B} \cdot {_b(_f(r.kv_bytes_per_token))}}}{{\text{{KV}}({_n(mml)})}}"
                   rf"{per_max} = {_n(vllm)} < 1 {refused}")
        tokens = F.integer(int(np.max(r.kv_pool_tokens)))
        take = t("why.max_conc.take_no_start", tokens=tokens, mml=F.integer(mml), vllm=F.number(vllm))
        if fit > 0:
            notes.append(t("why.max_conc.would_fit", fit=F.integer(fit), ctx=F.integer(i.context_tokens), tokens=tokens))
    return Panel(key="max_conc", title=t("why.max_conc.no_start"), formula=formula, plugged=plugged, takeaway=take,
                 notes=notes)


def activations(i: Inputs, t: T) -> Panel:
    """vLLM's profile run: max(forward pass, sampler warm-up) + workspaces (calc.sizing.memory)."""
    a, n, tp, r = i.arch, i.numbers, i.serving.tensor_parallel_size, i.result
    T_ = i.resolved.max_num_batched_tokens
    hq = a.num_attention_heads
    hkv = a.num_key_value_heads if a.mla is None else a.num_attention_heads
    d = a.head_dim if a.mla is None else a.mla.qk_nope_head_dim + a.mla.qk_rope_head_dim
    k = i.efficiency.activation_live_hidden_buffers
    value = _f(r.activation_bytes)
    fwd, smp, moe, ws = _f(r.forward_bytes), _f(r.sampler_bytes), _f(r.moe_workspace_bytes), _f(r.allocator_workspace_bytes)
    b_logit, rows = _f(r.sampler_bytes_per_logit), int(np.max(r.topk_scratch_rows))
    hidden = T_ * a.hidden_size * n.activation_bytes
    phase = hidden + moe + smp
    attn = rf"\frac{{({hq} + 2 \cdot {hkv}) \cdot {d}}}{{{tp}}} + {_n(k)} \cdot {_n(a.hidden_size)}"
    if moe:  # MLP term: the larger of the dense layers' 3·I/TP buffers and the fused-MoE workspaces
        dense = T_ * 3 * n.ffn_intermediate_per_token / tp * n.activation_bytes
        plugged_fwd = (rf"F = {_n(T_)} \cdot \left({attn}\right) \cdot {_n(n.activation_bytes)}\,\text{{B}}"
                       rf" + \max\left({_b(dense)},\; W_{{MoE}} = {_b(moe)}\right) = {_b(fwd)}")
    else:
        plugged_fwd = (rf"F = {_n(T_)} \cdot \left(\frac{{3 \cdot {_n(n.ffn_intermediate_per_token)}}}{{{tp}}} + "
                       rf"{attn}\right) \cdot {_n(n.activation_bytes)}\,\text{{B}} = {_b(fwd)}")
    plugged_smp = (rf"S = {_n(i.resolved.max_num_seqs)} \cdot {_n(a.vocab_size)} \cdot {_n(b_logit)}\,\text{{B}}"
                   rf" + {rows} \cdot {_n(a.vocab_size)} \cdot 4\,\text{{B}} = {_b(smp)}")
    plugged = (rf"{plugged_fwd} \qquad {plugged_smp} \qquad A = \max\left({_b(fwd)},\; {_b(hidden)}"
               + (rf" + {_b(moe)}" if moe else "") + rf" + {_b(smp)}\right) + {_b(ws)} = {_b(value)}")
    notes = [t("why.activations.sampler", n=F.integer(i.resolved.max_num_seqs), v=F.integer(a.vocab_size),
               b=F.number(b_logit), version=i.serving.vllm_version, rows=rows),
             t("why.activations.which", which=t("why.activations.which_sampler") if phase >= fwd
               else t("why.activations.which_forward"), fwd=F.binary(fwd), phase=F.binary(phase))]
    if moe:
        notes.append(t("why.activations.moe", ws=F.binary(moe), k=a.moe.experts_per_token if a.moe else 0))
    if not i.serving.enable_chunked_prefill and i.serving.max_num_batched_tokens is None:
        notes.append(t("why.activations.no_chunk", T=F.integer(T_)))
    notes.append(t("why.activations.ws", ws=F.binary(ws)))
    return Panel(
        key="activations",
        title=t("why.activations", value=F.both(value)),
        formula=(r"A = \max\big(F,\; T h\, b_{act} + W_{MoE} + S\big) + W_{ws}\qquad "
                 r"F = T \cdot \left(\frac{3 I}{TP} + \frac{(H_q + 2 H_{kv})\, d}{TP} + k_h\, h\right) b_{act}"
                 r"\qquad S = N_{seqs} \cdot V \cdot b_{logit} + R \cdot V \cdot 4\,\text{B}"),
        plugged=plugged,
        takeaway=t("why.activations.take"),
        notes=notes,
    )


def overhead(i: Inputs, t: T) -> Panel:
    tp = i.serving.tensor_parallel_size
    e, r = i.efficiency, i.result
    value = _f(r.overhead_bytes)
    comm = _f(r.comm_buffer_bytes)
    switch = tp > 1 and comm > e.nccl_per_peer_bytes * (tp - 1) + 1.0
    parts = [_b(e.non_torch_overhead_bytes)]
    if tp > 1:
        if switch:
            parts.append(_b(e.nccl_overhead_bytes))
        parts.append(rf"{tp - 1} \cdot {_b(e.nccl_per_peer_bytes)}")
    note = t("why.overhead.switch") if switch else (t("why.overhead.no_switch") if tp > 1 else t("why.overhead.tp1"))
    return Panel(
        key="overhead",
        title=t("why.overhead", value=F.both(value)),
        formula=(r"O = O_0 + [TP > 1] \cdot \big(O_{\text{switch}} \cdot [\text{NVSwitch}] + "
                 r"O_{\text{peer}} \cdot (TP - 1)\big)"),
        plugged=f"O = {' + '.join(parts)} = {_b(value)}",
        takeaway=t("why.overhead.take"),
        notes=[note],
    )


def waste(i: Inputs, t: T) -> Panel:
    r, B, S = i.result, i.serving.block_size, i.context_tokens
    per_tok = _f(r.kv_bytes_per_token)
    paged, contig = _f(r.paged_waste_bytes), _f(r.contiguous_waste_bytes)
    blocks = mem.blocks_for_tokens(tokens=S, block_size=B)
    mml = i.resolved.max_model_len
    return Panel(
        key="waste",
        title=t("why.waste", paged=F.binary(paged), contig=F.binary(contig)),
        formula=(r"\text{paged} = \left(\left\lceil \frac{S}{B} \right\rceil B - S\right) \cdot \text{KV/token}"
                 r"\qquad \text{contiguous} = (L_{\max} - S) \cdot \text{KV/token}"),
        plugged=(f"({_n(blocks)} \\cdot {B} - {_n(S)}) \\cdot {_b(per_tok)} = {_b(paged)} \\qquad "
                 f"({_n(mml)} - {_n(S)}) \\cdot {_b(per_tok)} = {_b(contig)}"),
        takeaway=t("why.waste.take"),
    )


MEMORY_PANELS = (weights, kv_per_token, kv_per_request, kv_pool, max_concurrency, activations, overhead, waste)


def memory_panels(i: Inputs, t: T) -> list[Panel]:
    return [build(i, t) for build in MEMORY_PANELS]
