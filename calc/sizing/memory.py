"""GPU memory model (physics.md A2, A4, A5). One function per formula; all broadcast.

Conventions: bytes, per GPU (per tensor-parallel rank) unless a name says otherwise.
"""

from __future__ import annotations

import numpy as np


def _plain(x):
    return x.item() if np.ndim(x) == 0 and hasattr(x, "item") else x


MAX_COUNT = 2**53  # counts (blocks, sequences) saturate here (exact in float64; times a block size still fits int64)


def floor_count(x):
    """floor(x) as int64 for a count, clipped to [0, MAX_COUNT] so that absurd sizes (a 1e25-byte
    GPU, a 1-byte request) give a huge count instead of an int64 overflow.

    >>> floor_count([-3.0, 2.7, 1e30]).tolist() == [0, 2, 2**53]
    True
    """
    return _plain(np.floor(np.clip(np.asarray(x, dtype=float), 0.0, float(MAX_COUNT))).astype(np.int64))


def kv_heads_per_rank(*, num_kv_heads, tensor_parallel_size):
    """KV heads held by one rank: max(1, H_kv // TP). When TP exceeds H_kv, vLLM replicates
    the KV heads ("We will replicate the KV heads in the case where the number of KV heads is
    smaller than the tensor parallel size"), so per-GPU KV stops shrinking.

    >>> kv_heads_per_rank(num_kv_heads=8, tensor_parallel_size=16)
    1
    >>> kv_heads_per_rank(num_kv_heads=[32, 8], tensor_parallel_size=4).tolist()
    [8, 2]
    """
    return _plain(np.maximum(1, np.floor_divide(num_kv_heads, tensor_parallel_size)))


def kv_bytes_per_token(*, num_layers, num_kv_heads, head_dim, bytes_per_element):
    """KV cache per token = 2 (K and V) · L · H_kv · d · b_kv   (MHA/GQA/MQA).

    Llama-2-7B FP16: 2·32·32·128·2 = 524,288 B (512 KiB); Llama-3.1-8B: 2·32·8·128·2 = 131,072 B.

    >>> kv_bytes_per_token(num_layers=32, num_kv_heads=32, head_dim=128, bytes_per_element=2)
    524288
    """
    return _plain(2 * np.asarray(num_layers) * num_kv_heads * head_dim * bytes_per_element)


def mla_kv_bytes_per_token(*, num_layers, kv_lora_rank, qk_rope_head_dim, bytes_per_element):
    """MLA caches one latent of r_kv plus one rotary key of d_rope per token per layer, shared
    by all heads and replicated on every TP rank: L · (r_kv + d_rope) · b_kv.

    DeepSeek-V3 BF16: 61·(512 + 64)·2 = 70,272 B.

    >>> mla_kv_bytes_per_token(num_layers=61, kv_lora_rank=512, qk_rope_head_dim=64, bytes_per_element=2)
    70272
    """
    return _plain(np.asarray(num_layers) * (kv_lora_rank + qk_rope_head_dim) * bytes_per_element)


def mla_absorbed_weight_bytes(*, num_layers, num_heads, kv_lora_rank, qk_nope_head_dim, v_head_dim, activation_bytes):
    """The 16-bit copies of MLA's up-projection that decode multiplies with, when ``kv_b_proj`` is
    quantized: L · H · r_kv · (d_nope + d_v) · b_act, sliced by TP over the heads.

    Absorbed decode needs W_UK and W_UV as batched matmuls; neither engine has a quantized bmm for
    them, so both dequantize ``kv_b_proj`` once at load and keep the 16-bit result beside the
    quantized layer (still used by prefill): vLLM ``MLAAttention.process_weights_after_loading``
    (``model_executor/layers/attention/mla_attention.py``, earlier ``MLACommonImpl``: "we just store
    fp16/bf16 copies and perform the bmm's in 16-bit"; W_UV and W_UK_T are views of the dequantized
    tensor; only ROCm's AITER fp8/fp4 bmm re-quantizes them, not modelled), SGLang ``DeepseekV2ForCausalLM.post_load_weights`` (``w_kc``/``w_vc``
    from ``block_quant_dequant``). Both run inside the load that ``Model loading took`` /
    ``Load weight end ... mem usage`` measures. A 16-bit checkpoint's W_UK/W_UV are views of its own
    weight: no copy, so the caller passes 0 layers then.

    DeepSeek-V3 FP8, whole attention on one GPU (TP 1 or DP attention): 61 · 128 · 512 · 256 · 2 B
    = 2,046,820,352 B (1.91 GiB); at TP 8, 1/8 of it per GPU.

    >>> mla_absorbed_weight_bytes(num_layers=61, num_heads=128, kv_lora_rank=512, qk_nope_head_dim=128,
    ...                           v_head_dim=128, activation_bytes=2)
    2046820352
    """
    return _plain(np.asarray(num_layers) * num_heads * kv_lora_rank * (qk_nope_head_dim + v_head_dim)
                  * np.asarray(activation_bytes))


def blocks_for_tokens(*, tokens, block_size):
    """Paged KV blocks a sequence of ``tokens`` needs: ceil(tokens / block_size).

    >>> blocks_for_tokens(tokens=[16, 17, 2048], block_size=16).tolist()
    [1, 2, 128]
    """
    return _plain(-np.floor_divide(-np.asarray(tokens), block_size))


def sliding_window_kv_tokens(*, context_tokens, sliding_window, max_num_batched_tokens, block_size, running=False):
    """Tokens a sliding-window layer keeps for one sequence, rounded to whole blocks.

    At start-up (``running=False``) vLLM V1 sizes a request by its worst case,
    ``SlidingWindowSpec.max_memory_usage_bytes``: the window plus one step's new tokens, +1 block
    because the window need not start on a block boundary:
    min(blocks(S), blocks(W − 1 + max_num_batched_tokens) + 1) · block_size.
    That is what its "Maximum concurrency" log line and the does-one-request-fit check use.

    A running sequence (``running=True``) holds less: the V1 ``SlidingWindowManager`` frees every
    block that has left the window (``remove_skipped_blocks``), so a decoding sequence keeps the
    blocks covering its last W tokens: min(blocks(S), blocks(W) + 1) · block_size.

    Chunked local attention (Llama 4) has its own formula: :func:`chunked_local_kv_tokens`.

    >>> sliding_window_kv_tokens(context_tokens=32768, sliding_window=4096, max_num_batched_tokens=2048, block_size=16)
    6160
    >>> sliding_window_kv_tokens(context_tokens=32768, sliding_window=4096, max_num_batched_tokens=2048, block_size=16,
    ...     running=True)
    4112
    """
    need = blocks_for_tokens(tokens=context_tokens, block_size=block_size)
    window = np.asarray(sliding_window) + np.where(np.asarray(running), 0, np.asarray(max_num_batched_tokens) - 1)
    cap = blocks_for_tokens(tokens=window, block_size=block_size) + 1
    return _plain(np.minimum(need, cap) * np.asarray(block_size))


def chunked_local_kv_tokens(*, context_tokens, attention_chunk_size, max_num_batched_tokens, block_size,
                            running=False):
    """Tokens a chunked-local-attention layer keeps for one sequence (Llama 4: chunks of C tokens;
    a token attends to the earlier tokens of its own chunk only), rounded to whole blocks.

    Start-up (``running=False``), vLLM's ``ChunkedLocalAttentionSpec.max_memory_usage_bytes``: the
    chunk plus one step's new tokens, capped at the sequence: blocks(min(C + T, S)) · block_size.
    A running sequence (``running=True``): the V1 chunked-local manager frees every block before
    the current chunk's start ⌊(S − 1)/C⌋·C, so it holds blocks(S − ⌊(S − 1)/C⌋·C) · block_size
    (1 … C tokens; C is a multiple of the block size).

    >>> chunked_local_kv_tokens(context_tokens=32768, attention_chunk_size=8192, max_num_batched_tokens=2048,
    ...     block_size=16)
    10240
    >>> chunked_local_kv_tokens(context_tokens=[8192, 8193, 20000], attention_chunk_size=8192, max_num_batched_tokens=2048,
    ...     block_size=16, running=True).tolist()
    [8192, 16, 3616]
    """
    s = np.asarray(context_tokens)
    c = np.asarray(attention_chunk_size)
    startup = blocks_for_tokens(tokens=np.minimum(c + np.asarray(max_num_batched_tokens), s), block_size=block_size)
    running_tokens = s - np.floor_divide(np.maximum(s - 1, 0), c) * c
    held = blocks_for_tokens(tokens=running_tokens, block_size=block_size)
    return _plain(np.where(np.asarray(running), held, startup) * np.asarray(block_size))


def kv_bytes_per_sequence(*, context_tokens, kv_bytes_per_token_full, kv_bytes_per_token_sliding=0,
                          sliding_window=1, max_num_batched_tokens=8192, block_size=16, running=False,
                          chunked_local=False):
    """Paged KV of one sequence: full-attention layers hold every token; sliding-window layers
    hold at most their window (see :func:`sliding_window_kv_tokens`; ``running`` selects what a
    decoding sequence holds instead of vLLM's start-up worst case); both round up to blocks.
    ``chunked_local``: the windowed layers are chunked local attention of ``sliding_window``-token
    chunks (:func:`chunked_local_kv_tokens`) instead of sliding windows.

    ``kv_bytes_per_token_full`` / ``_sliding`` are the per-token bytes summed over the layers of
    each kind. Llama-2-7B at 4096 tokens: 256 blocks · 16 · 524,288 B = 2 GiB.

    >>> kv_bytes_per_sequence(context_tokens=4096, kv_bytes_per_token_full=524288) / 2**30
    2.0
    """
    full_tokens = blocks_for_tokens(tokens=context_tokens, block_size=block_size) * np.asarray(block_size)
    sw_tokens = sliding_window_kv_tokens(context_tokens=context_tokens, sliding_window=sliding_window,
                                         max_num_batched_tokens=max_num_batched_tokens, block_size=block_size,
                                         running=running)
    if np.any(chunked_local):
        sw_tokens = np.where(chunked_local, chunked_local_kv_tokens(
            context_tokens=context_tokens, attention_chunk_size=sliding_window,
            max_num_batched_tokens=max_num_batched_tokens, block_size=block_size, running=running), sw_tokens)
    return _plain(full_tokens * np.asarray(kv_bytes_per_token_full, dtype=float)
                  + sw_tokens * np.asarray(kv_bytes_per_token_sliding, dtype=float))


def forward_peak_bytes(*, tokens, hidden_size, ffn_intermediate_per_token, num_heads, num_kv_heads, head_dim,
                       tensor_parallel_size, activation_bytes, live_hidden_buffers, moe_workspace_bytes=0.0):
    """Peak of vLLM's profiling forward pass over T = max_num_batched_tokens (physics.md A4):

        T · (3·I/TP + (H_q + 2·H_kv)·d/TP + k_h·h) · b_act      (dense MLP)

    the gate/up output and activated product of the MLP (I per token, 3 live buffers), the fused
    QKV output, and k_h live hidden-size buffers (residual, norm output, attention output). For an
    MoE model the MLP term is the larger of the dense layers' 3·I/TP and the fused-MoE workspaces
    (``moe_workspace_bytes``, see :func:`moe_workspace_bytes`). Attention itself is skipped in
    the profile run (no attention metadata). Llama-3-8B, T = 8192, k_h = 4: 1.0 GiB.

    >>> forward_peak_bytes(tokens=8192, hidden_size=4096, ffn_intermediate_per_token=14336, num_heads=32,
    ...     num_kv_heads=8, head_dim=128, tensor_parallel_size=1, activation_bytes=2, live_hidden_buffers=4) / 2**30
    1.0
    """
    t = np.asarray(tokens, dtype=float)
    mlp = np.maximum(t * 3 * np.asarray(ffn_intermediate_per_token) / tensor_parallel_size * activation_bytes,
                     moe_workspace_bytes)
    rest = t * ((np.asarray(num_heads) + 2 * np.asarray(num_kv_heads)) * head_dim / tensor_parallel_size
                + np.asarray(live_hidden_buffers) * hidden_size) * activation_bytes
    return _plain(mlp + rest)


def moe_workspace_bytes(*, tokens, experts_per_token, expert_intermediate_size, hidden_size, tensor_parallel_size,
                        activation_bytes):
    """The fused-MoE kernel's two workspaces at T tokens (vLLM ``TritonExperts.workspace_shapes``):

        T · k · (max(I_e/TP, h) + max(2·I_e/TP, h)) · b_act

    vLLM's modular MoE kernel keeps them in shared, resizable buffers that survive the forward
    pass, so they are still allocated when the sampler warm-up runs (the output reuses the first).
    Mixtral-8x7B TP 2, T = 8192: 8192·2·(7168 + 14336)·2 B = 0.656 GiB.

    >>> round(moe_workspace_bytes(tokens=8192, experts_per_token=2, expert_intermediate_size=14336,
    ...     hidden_size=4096, tensor_parallel_size=2, activation_bytes=2) / 2**30, 3)
    0.656
    """
    i_tp = np.asarray(expert_intermediate_size) / tensor_parallel_size
    h = np.asarray(hidden_size)
    per = np.maximum(i_tp, h) + np.maximum(2 * i_tp, h)
    return _plain(np.asarray(tokens, dtype=float) * np.asarray(experts_per_token) * per * activation_bytes)


# Bytes per logit element alive at the sampler warm-up's peak, by vLLM line (counted from the code):
# 0.19 (also 0.18): the lm_head output in the model dtype (held by _dummy_sampler_run), its float32
#   copy (Sampler: logits.to(float32); no copy when the model runs in float32), then in
#   TopKTopPSampler.forward_native the probabilities (softmax, float32) and the exponential noise q
#   (float32) of random_sample; top-k/top-p runs in place (Triton kernel, scratch SMs x V floats).
# 0.15: the sort-based top-k/top-p (apply_top_k_top_p_pytorch) holds, next to the model-dtype and
#   float32 logits, the sorted values (4 B), their int64 indices (8 B), the sort's double buffers
#   (4 + 8 B), the top-p softmax (4 B) and two bool masks (1 + 1 B).
SAMPLER_VERSIONS = ("0.19", "0.15")


def sampler_bytes_per_logit(*, vllm_version="0.19", activation_bytes=2.0):
    """Bytes per (sequence × vocabulary) element at the sampler warm-up peak, by vLLM line
    (see ``SAMPLER_VERSIONS``): 0.19: b_act + 4·[b_act ≠ 4] + 4 + 4;
    0.15: b_act + 4·[b_act ≠ 4] + 4 + 8 + 12 + 4 + 2.

    >>> sampler_bytes_per_logit(vllm_version="0.19", activation_bytes=2.0), sampler_bytes_per_logit(vllm_version="0.15")
    (14.0, 36.0)
    >>> sampler_bytes_per_logit(activation_bytes=4.0)   # float32 model: no float32 copy
    12.0
    """
    b = np.asarray(activation_bytes, dtype=float)
    base = b + np.where(b == 4.0, 0.0, 4.0)
    extra = {"0.19": 4.0 + 4.0, "0.15": 4.0 + 8.0 + 12.0 + 4.0 + 2.0}
    if vllm_version not in extra:
        raise ValueError(f"vllm_version {vllm_version!r} is not one of {SAMPLER_VERSIONS}")
    return _plain(base + extra[vllm_version])


def sampler_peak_bytes(*, max_num_seqs, vocab_size, bytes_per_logit, topk_scratch_rows=0):
    """The sampler warm-up of vLLM's profile run (``_dummy_sampler_run``): ``max_num_seqs`` rows of
    logits over the whole vocabulary (V1 all-gathers the logits, so every TP rank holds all V):

        N · V · b_logit + R · V · 4 B

    with b_logit from :func:`sampler_bytes_per_logit` and R the rows of the Triton top-k/top-p
    scratch buffer (one per SM; 0.19 line). Llama-3.1-8B, N = 1024, V = 128,256, 14 B, R = 132:
    1.712 + 0.063 = 1.775 GiB.

    >>> round(sampler_peak_bytes(max_num_seqs=1024, vocab_size=128256, bytes_per_logit=14.0,
    ...     topk_scratch_rows=132) / 2**30, 3)
    1.775
    """
    v = np.asarray(vocab_size, dtype=float)
    return _plain(np.asarray(max_num_seqs) * v * bytes_per_logit + np.asarray(topk_scratch_rows) * v * 4.0)


def activation_peak_bytes(*, forward_bytes, sampler_bytes, tokens, hidden_size, activation_bytes,
                          moe_workspace_bytes=0.0, workspace_bytes=0.0):
    """vLLM's "torch peak memory increase" in the profile run: the larger of the forward pass and
    the sampler warm-up that follows it, plus allocator-held workspaces:

        max(forward, T·h·b_act + MoE workspaces + sampler) + W

    During the sampler the forward's output hidden states (T × h) and the persistent fused-MoE
    workspaces are still allocated. W: cuBLAS/cuBLASLt workspaces taken through PyTorch's
    allocator on the first GEMM (0.05 GiB, the residual the 0.19 H100 logs share).
    Llama-3.1-8B, N = 1024: max(1.0, 0.0625 + 1.775) + 0.05 = 1.887 GiB (logged 1.89).

    >>> round(activation_peak_bytes(forward_bytes=2**30, sampler_bytes=1.775 * 2**30, tokens=8192,
    ...     hidden_size=4096, activation_bytes=2, workspace_bytes=0.05 * 2**30) / 2**30, 3)
    1.887
    """
    sampler_phase = (np.asarray(tokens, dtype=float) * hidden_size * activation_bytes + moe_workspace_bytes
                     + np.asarray(sampler_bytes, dtype=float))
    return _plain(np.maximum(np.asarray(forward_bytes, dtype=float), sampler_phase) + workspace_bytes)


def runtime_overhead_bytes(*, tensor_parallel_size, non_torch_overhead_bytes, nccl_overhead_bytes,
                           nccl_per_peer_bytes=0.0, all_to_all_link=True):
    """Memory outside PyTorch's allocator that vLLM subtracts (its "non-torch forward increase"):

        O = O_0 + [TP > 1] · (O_switch · [all-to-all NVLink/NVSwitch] + O_peer · (TP − 1))

    O_0: CUDA kernel images loaded lazily during the profile run, cuBLAS handles (0.24-0.27 GiB
    at TP 1 in the 0.18/0.19 logs). At TP > 1 NCCL's communicator buffers (per peer) and, on
    NVSwitch systems, NCCL's NVLink-SHARP buffers and vLLM's custom all-reduce IPC buffers
    (H100 SXM, 0.19: +1.82 GiB at TP 2, +1.88 GiB at TP 4). PCIe cards without peer-to-peer
    use neither. The CUDA context itself is created before vLLM's baseline snapshot and lives
    in the (1 − utilization) reserve.

    >>> runtime_overhead_bytes(tensor_parallel_size=[1, 2, 4], non_torch_overhead_bytes=0.25,
    ...     nccl_overhead_bytes=1.79, nccl_per_peer_bytes=0.03).round(2).tolist()
    [0.25, 2.07, 2.13]
    >>> round(runtime_overhead_bytes(tensor_parallel_size=4, non_torch_overhead_bytes=0.25, nccl_overhead_bytes=1.79,
    ...     nccl_per_peer_bytes=0.03, all_to_all_link=False), 2)   # PCIe: per-peer buffers only
    0.34
    """
    tp = np.asarray(tensor_parallel_size)
    comm = (np.where(np.asarray(all_to_all_link), nccl_overhead_bytes, 0.0)
            + np.asarray(nccl_per_peer_bytes, dtype=float) * (tp - 1))
    return _plain(np.asarray(non_torch_overhead_bytes, dtype=float) + np.where(tp > 1, comm, 0.0))


def kv_pool_bytes(*, usable_memory_bytes, gpu_memory_utilization, weights_bytes, activation_bytes, overhead_bytes):
    """vLLM's KV cache budget per GPU:
    usable × gpu_memory_utilization − weights − activation peak − runtime overhead.
    Negative means the model does not fit (kept as data, not clipped). Under TP every rank
    profiles and vLLM sizes the pool from the rank with the least memory left (the engine takes
    the minimum over workers); with identical GPUs and the per-rank terms here, that is this value.

    Llama-3-8B on H100 (PR #10511 log): 79.22 × 0.9 − 14.96 − 1.26 − 1.79 = 53.29 GiB.

    >>> round(kv_pool_bytes(usable_memory_bytes=79.22, gpu_memory_utilization=0.9, weights_bytes=14.96,
    ...     activation_bytes=1.26, overhead_bytes=1.79), 2)
    53.29
    """
    return _plain(np.asarray(usable_memory_bytes, dtype=float) * gpu_memory_utilization
                  - weights_bytes - activation_bytes - overhead_bytes)


def num_kv_blocks(*, kv_pool_bytes, block_size, kv_bytes_per_token):
    """Blocks vLLM allocates: floor(pool / (block_size · KV bytes per token)), 0 if the pool is negative.

    The 7B MHA log: 56.18 GiB / (16 · 512 KiB) = 7191 blocks ("# cuda blocks: 7191").

    >>> num_kv_blocks(kv_pool_bytes=56.18 * 2**30, block_size=16, kv_bytes_per_token=524288)
    7191
    """
    block_bytes = np.asarray(block_size) * np.asarray(kv_bytes_per_token, dtype=float)
    return floor_count(np.maximum(kv_pool_bytes, 0.0) / block_bytes)


def max_concurrency(*, num_blocks, max_model_len, block_size):
    """vLLM's "Maximum concurrency for {max_model_len} tokens per request":
    num_blocks / ceil(max_model_len / block_size)  (V1 ``get_max_concurrency_for_kv_cache_config``).

    >>> round(max_concurrency(num_blocks=7191, max_model_len=4096, block_size=16), 2)
    28.09
    """
    return _plain(np.asarray(num_blocks) / blocks_for_tokens(tokens=max_model_len, block_size=block_size))


def paged_waste_bytes(*, tokens, block_size, kv_bytes_per_token):
    """Internal fragmentation of paged KV: the unfilled tail of the last block,
    (ceil(n / block_size) · block_size − n) · KV bytes per token (< 1 block per sequence).

    >>> paged_waste_bytes(tokens=1000, block_size=16, kv_bytes_per_token=2)
    16
    """
    n = np.asarray(tokens)
    return _plain((blocks_for_tokens(tokens=n, block_size=block_size) * np.asarray(block_size) - n) * kv_bytes_per_token)


def contiguous_waste_bytes(*, tokens, max_model_len, kv_bytes_per_token):
    """Waste of contiguous pre-allocation (pre-vLLM servers reserve max_model_len per sequence):
    (max_model_len − n) · KV bytes per token.

    >>> contiguous_waste_bytes(tokens=1000, max_model_len=4096, kv_bytes_per_token=2)
    6192
    """
    return _plain((np.asarray(max_model_len) - np.asarray(tokens)) * kv_bytes_per_token)


def contiguous_max_sequences(*, kv_pool_bytes, max_model_len, kv_bytes_per_token):
    """Sequences that fit when each reserves max_model_len contiguously: floor(pool / (len · KV/token)).

    >>> contiguous_max_sequences(kv_pool_bytes=2**30 * 10, max_model_len=4096, kv_bytes_per_token=524288)
    5
    """
    return floor_count(np.maximum(kv_pool_bytes, 0.0) / (np.asarray(max_model_len) * np.asarray(kv_bytes_per_token, dtype=float)))


def weights_per_gpu_bytes(*, sharded_weight_bytes, replicated_weight_bytes, kv_proj_bytes_per_head,
                          num_kv_heads, tensor_parallel_size):
    """Weights one rank holds under tensor parallelism:
    sharded / TP + replicated + KV-projection bytes per KV head · max(1, H_kv // TP).

    Attention (by heads), MLP (by columns), embedding and LM head (by vocabulary) shard;
    norms replicate; when TP > H_kv every rank keeps one whole KV head's W_k and W_v.
    Llama-3-8B BF16, TP 2: 16.06 GB / 2 = 7.48 GiB (vLLM PR #10511).

    >>> weights_per_gpu_bytes(sharded_weight_bytes=100.0, replicated_weight_bytes=1.0,
    ...     kv_proj_bytes_per_head=2.0, num_kv_heads=8, tensor_parallel_size=[1, 16]).tolist()
    [117.0, 9.25]
    """
    return _plain(np.asarray(sharded_weight_bytes, dtype=float) / tensor_parallel_size + replicated_weight_bytes
                  + np.asarray(kv_proj_bytes_per_head, dtype=float)
                  * kv_heads_per_rank(num_kv_heads=num_kv_heads, tensor_parallel_size=tensor_parallel_size))
