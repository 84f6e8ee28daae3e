"""Compose the formulas into results for one scenario (model × GPU × engine options).

The pydantic inputs are turned into plain numbers once (:func:`model_numbers`); the composite
functions (:func:`memory_model`) take only numbers, so the same call evaluates one
configuration or a million (every argument broadcasts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calc.sizing import memory as mem
from calc.sizing.layout import expert_parallel_buffer_bytes, expert_parallel_size, rank_numbers
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.spec.params import ParamCounts, param_counts
from calc.spec.precision import (activation_bytes, kv_bytes_per_element, linear_weight_bytes_per_param,
                                 mxfp4_expert_padding)
from calc.spec.untrusted import InputError

BIG_GPU_BYTES = 70 * 2**30


def default_max_num_batched_tokens(gpu: GPUSpec) -> int:
    """vLLM V1 ``vllm serve`` default: 8192 on GPUs with ≥ 70 GiB that are not A100, else 2048
    (``get_batch_defaults``; "Setting large max_num_batched_tokens for A100 reduces throughput")."""
    return 8192 if gpu.usable_memory_bytes >= BIG_GPU_BYTES and not gpu.id.startswith("a100") else 2048


def default_max_num_seqs(gpu: GPUSpec) -> int:
    """vLLM V1 ``vllm serve`` default: 1024 on GPUs with ≥ 70 GiB that are not A100, else 256."""
    return 1024 if gpu.usable_memory_bytes >= BIG_GPU_BYTES and not gpu.id.startswith("a100") else 256


@dataclass(frozen=True)
class ResolvedServing:
    """Engine options with vLLM's defaults filled in for this model and GPU."""

    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int


def resolve_serving(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig) -> ResolvedServing:
    """vLLM's defaults for this model and GPU. Without chunked prefill a whole prompt must fit one
    step, so vLLM raises the default token budget to max(max_model_len, default)
    (``SchedulerConfig``: "max_num_batched_tokens ... smaller than max_model_len" is rejected
    without chunked prefill) and the profile run then goes through that many tokens."""
    max_model_len = serving.max_model_len or arch.max_position_embeddings
    budget = serving.max_num_batched_tokens or default_max_num_batched_tokens(gpu)
    if not serving.enable_chunked_prefill and serving.max_num_batched_tokens is None:
        budget = max(max_model_len, budget)
    return ResolvedServing(
        max_model_len=max_model_len,
        max_num_seqs=serving.max_num_seqs or default_max_num_seqs(gpu),
        max_num_batched_tokens=budget,
    )


def check_gpu_formats(serving: ServingConfig, gpu: GPUSpec, *, quantization: str | None = None) -> None:
    """Raise :class:`InputError` where vLLM has no kernels for a format on ``gpu``:

    * ``--kv-cache-dtype nvfp4`` (vLLM PR #40177, merged 2026-04-17): FlashInfer trtllm-gen
      attention on datacenter Blackwell (compute capability 10.x: B200, GB200, B300) only; vLLM
      gates it to SM100 (the SM120 RTX 5090 / RTX PRO 6000 and SM8x/SM90 paths are open PRs:
      #46329, #54772, #46963);
    * ``modelopt_fp4`` weights: CUTLASS / FlashInfer FP4 GEMMs on Blackwell, Marlin W4A16 on other
      NVIDIA GPUs (SM80+); no ROCm kernels.

    ``quantization``: the format actually loaded (``auto`` resolved), else the serving config's.

    >>> from calc.spec.catalog import get_gpu
    >>> check_gpu_formats(ServingConfig(kv_cache_dtype="nvfp4"), get_gpu("h100-sxm"))
    Traceback (most recent call last):
    ...
    calc.spec.untrusted.InputError: kv_cache_dtype: got 'nvfp4', allowed auto, float16, bfloat16, fp8, fp8_e4m3, fp8_e5m2 (vLLM has no 'nvfp4' kernels on NVIDIA H100 SXM5 80GB)
    >>> check_gpu_formats(ServingConfig(kv_cache_dtype="nvfp4"), get_gpu("b200"))   # SM100: fine
    """
    sm100 = gpu.vendor == "nvidia" and gpu.compute_capability is not None and 10.0 <= gpu.compute_capability < 11.0
    if serving.kv_cache_dtype == "nvfp4" and not sm100:
        raise InputError("kv_cache_dtype", "nvfp4", allowed="auto, float16, bfloat16, fp8, fp8_e4m3, fp8_e5m2",
                         code="gpu_format", gpu=gpu.name)
    quant = serving.quantization if quantization is None else quantization
    if quant == "modelopt_fp4" and gpu.vendor == "amd":
        raise InputError("quantization", "modelopt_fp4", allowed="a format with ROCm kernels (fp8, mxfp4, awq, gptq ...)",
                         code="gpu_format", gpu=gpu.name)


def check_token_budget(serving: ServingConfig, max_model_len: int, *, enable_chunked_prefill: bool | None = None,
                       field: str = "max_num_batched_tokens") -> None:
    """Raise :class:`InputError` where vLLM refuses to start: without chunked prefill, a token budget
    below ``max_model_len`` (a prompt of max_model_len tokens could never be scheduled).

    vLLM's ``SchedulerConfig`` check: "max_num_batched_tokens ({budget}) is smaller than
    max_model_len ({max_model_len}) ... Please increase max_num_batched_tokens or decrease
    max_model_len" when chunked prefill is off. Only an explicit budget can break it: the default
    is raised to max_model_len (:func:`resolve_serving`). One rule for the UI, the CLI and
    :func:`calc.timing.estimate.estimate`. ``enable_chunked_prefill`` None: the serving config's.

    >>> check_token_budget(ServingConfig(max_num_batched_tokens=2048, enable_chunked_prefill=False), 4096)
    Traceback (most recent call last):
    ...
    calc.spec.untrusted.InputError: max_num_batched_tokens: got 2,048, allowed ≥ 4,096 (without chunked prefill a whole prompt of up to max_model_len = 4,096 tokens must fit one step; vLLM refuses to start: turn chunked prefill on or lower max_model_len)
    >>> check_token_budget(ServingConfig(max_num_batched_tokens=2048), 4096)  # chunked: fine
    """
    chunked = serving.enable_chunked_prefill if enable_chunked_prefill is None else enable_chunked_prefill
    budget = serving.max_num_batched_tokens
    if not bool(chunked) and budget is not None and budget < max_model_len:
        raise InputError(field, budget, allowed=f"≥ {max_model_len:,}", code="budget_below_len",
                         max_model_len=f"{max_model_len:,}")


def effective_quantization(arch: ModelArch, quantization: str) -> str:
    """The weight format vLLM loads: ``auto`` means the checkpoint's own (its
    ``quantization_config``, e.g. DeepSeek-V3's FP8), else unquantized.

    >>> from calc.spec.catalog import get_model
    >>> effective_quantization(get_model("deepseek-ai/DeepSeek-V3"), "auto"), effective_quantization(get_model("deepseek-ai/DeepSeek-V3"), "none")
    ('fp8', 'none')
    """
    if quantization == "auto":
        return arch.checkpoint_quantization or "none"
    return quantization


# SMs of the H100 SXM: the Triton top-k/top-p scratch rows when a GPU entry has no sm_count.
DEFAULT_SM_COUNT = 132


def all_to_all_nvlink(gpu: GPUSpec) -> bool:
    """Whether a TP group sits on a third-generation (Hopper) or later NVLink switch
    (``link_topology == "switch"``): there NCCL sets up NVLink-SHARP (NVLS) buffers and vLLM its
    custom all-reduce at every TP size; the H100 SXM logs show the +1.8 GiB. NVLS needs Hopper's
    NVSwitch, so A100 (Ampere) systems, bridged pairs, PCIe and AMD's xGMI mesh pay only the
    per-peer buffers. A user-defined GPU with a switch link is counted like the H100 SXM."""
    return gpu.link_topology == "switch" and gpu.architecture not in ("ampere", "volta") and gpu.vendor != "amd"


@dataclass(frozen=True)
class ModelNumbers:
    """The numbers of one architecture at one precision that the formulas need (whole model)."""

    params: ParamCounts
    linear_bytes_per_param: float
    activation_bytes: float
    kv_bytes_per_element: float
    sharded_weight_bytes: float  # split across TP ranks
    replicated_weight_bytes: float  # on every rank (norms)
    kv_proj_bytes_per_head: float  # W_k + W_v of one KV head, all layers (replicated when TP > H_kv)
    num_kv_heads: int  # 1 for MLA (one latent "head", replicated)
    kv_bytes_per_token_per_head_full: float  # all full-attention layers
    kv_bytes_per_token_per_head_sliding: float  # all sliding-window layers
    sliding_window: int
    ffn_intermediate_per_token: int
    experts_per_token: int = 0  # 0 for a dense model
    expert_intermediate_size: int = 0
    quantization: str = "none"  # the format actually loaded (``auto`` resolved)
    # MXFP4: the routed experts' stored bytes per weight (4.25 bits × padding); the other linears are
    # 16-bit (linear_bytes_per_param). 0 elsewhere: the experts take linear_bytes_per_param.
    expert_bytes_per_param: float = 0.0
    chunked_local: bool = False  # the windowed layers are chunked local attention (Llama 4), not sliding

    @property
    def weights_total_bytes(self) -> float:
        return self.sharded_weight_bytes + self.replicated_weight_bytes + self.kv_proj_bytes_per_head * self.num_kv_heads


def _kv_group_layers(n_sliding: int, n_full: int) -> tuple[int, int]:
    """Layers the KV pool is sized for when sliding and full layers mix: vLLM V1 splits each kind
    into KV-cache groups of the same size (the smaller count, or the larger when they are within
    25 %) and pads the last group of each kind with empty layers; blocks are shared by all groups.
    Gemma-2 (21 + 21): no padding; Gemma-3-27B (52 sliding + 10 full): 60 + 10.

    >>> _kv_group_layers(52, 10), _kv_group_layers(21, 21), _kv_group_layers(0, 32)
    ((60, 10), (21, 21), (0, 32))
    """
    if not n_sliding or not n_full:
        return n_sliding, n_full
    size = min(n_sliding, n_full)
    if max(n_sliding, n_full) < size * 1.25:
        size = max(n_sliding, n_full)
    pad = lambda n: -(-n // size) * size  # noqa: E731
    return pad(n_sliding), pad(n_full)


def mxfp4_backend(gpu: GPUSpec) -> str:
    """vLLM's default MXFP4 MoE backend on ``gpu`` (:data:`calc.spec.precision.MXFP4_PADDING`):
    ``flashinfer`` on compute capability 10.x, ``triton`` on Hopper, ``rocm`` on AMD, else ``marlin``.

    >>> from calc.spec.catalog import get_gpu
    >>> [mxfp4_backend(get_gpu(g)) for g in ("h100-sxm", "b200", "mi355x", "a100-80gb", "rtx-5090")]
    ['triton', 'flashinfer', 'rocm', 'marlin', 'marlin']
    """
    if gpu.vendor == "amd":
        return "rocm"
    if gpu.compute_capability is not None and 10.0 <= gpu.compute_capability < 11.0:
        return "flashinfer"
    return "triton" if gpu.architecture == "hopper" else "marlin"


def model_numbers(arch: ModelArch, *, dtype: str = "auto", quantization: str = "auto",
                  kv_cache_dtype: str = "auto", mxfp4_backend: str = "triton") -> ModelNumbers:
    """Whole-model byte counts at the chosen precisions (see :mod:`calc.spec.precision`).

    ``quantization="auto"`` loads the checkpoint's own format (:func:`effective_quantization`).
    Embeddings, LM head, norms and MoE routers stay in the model dtype (vLLM builds the router
    gate without a quant config); the decoder layers a mixed checkpoint lists as unquantized
    (``arch.unquantized_*_layers``) too. MoE routers and DeepSeek's low-rank query projection
    ``q_a_proj`` (fused with ``kv_a_proj`` in vLLM) are replicated on every TP rank. MXFP4
    quantizes only the routed experts, stored padded as ``mxfp4_backend`` does
    (:func:`calc.spec.precision.mxfp4_expert_padding`; :func:`mxfp4_backend` of the GPU). MLA with a
    quantized ``kv_b_proj`` adds the 16-bit W_UK/W_UV copies of :func:`calc.sizing.memory.mla_absorbed_weight_bytes`.
    """
    quant = effective_quantization(arch, quantization)
    p = param_counts(arch)
    b_lin = linear_weight_bytes_per_param(dtype=dtype, quantization=quant)
    b_act = activation_bytes(dtype)
    b_kv = kv_bytes_per_element(kv_cache_dtype=kv_cache_dtype, dtype=dtype)
    n_sw, n_full = _kv_group_layers(arch.num_sliding_layers, arch.num_hidden_layers - arch.num_sliding_layers)
    if arch.mla is not None:
        kv_heads = 1
        per_head_full = mem.mla_kv_bytes_per_token(num_layers=n_full, kv_lora_rank=arch.mla.kv_lora_rank,
                                                   qk_rope_head_dim=arch.mla.qk_rope_head_dim, bytes_per_element=b_kv)
        per_head_sw = 0.0
    else:
        kv_heads = arch.num_key_value_heads
        per_head_full = mem.kv_bytes_per_token(num_layers=n_full, num_kv_heads=1, head_dim=arch.head_dim,
                                               bytes_per_element=b_kv)
        per_head_sw = mem.kv_bytes_per_token(num_layers=n_sw, num_kv_heads=1, head_dim=arch.head_dim,
                                             bytes_per_element=b_kv)
    ffn = arch.intermediate_size
    k = i_e = 0
    if arch.moe is not None:
        moe_ffn = arch.moe.shared_expert_intermediate_size
        has_dense = arch.moe.num_moe_layers(arch.num_hidden_layers) < arch.num_hidden_layers
        ffn = max(ffn if has_dense else 0, moe_ffn)
        k, i_e = arch.moe.experts_per_token, arch.moe.expert_intermediate_size
    # Mixed checkpoints: the listed layers' linears stay in the model dtype.
    # W_k/W_v (``kv_projection``, priced separately below) of an unquantized layer stay 16-bit too:
    # a fraction f_kv of them (gpt-oss keeps every attention layer in BF16: f_kv = 1).
    unq = 0
    f_kv = 0.0
    if quant != "none":
        first_moe = arch.num_hidden_layers if arch.moe is None else arch.moe.first_dense_layers
        f_kv = len(arch.unquantized_attention_layers) / arch.num_hidden_layers
        kv_per_layer = p.kv_projection // arch.num_hidden_layers
        unq = len(arch.unquantized_attention_layers) * (p.attention_per_layer - kv_per_layer)
        unq += sum(p.mlp_per_dense_layer if i < first_moe else p.mlp_per_moe_layer - p.router // max(
            1, arch.num_hidden_layers - first_moe) for i in arch.unquantized_mlp_layers if i < arch.num_hidden_layers)
    b_qa = b_lin
    if quant == "mxfp4":
        # vLLM's Mxfp4Config quantizes only the fused-MoE experts; every other linear layer runs
        # UnquantizedLinearMethod (gpt-oss's attention in BF16).
        unq, f_kv, b_qa = p.linear - p.experts - p.kv_projection - p.router - p.q_low_rank_projection, 1.0, b_act
    linear_q = p.linear - p.kv_projection - p.router - p.q_low_rank_projection - unq
    # MLA with a quantized kv_b_proj: the 16-bit W_UK/W_UV copies absorbed decode multiplies with
    # (mem.mla_absorbed_weight_bytes; sliced by TP over the heads like the rest of attention).
    absorbed = 0.0
    if arch.mla is not None and quant not in ("none", "mxfp4"):
        absorbed = mem.mla_absorbed_weight_bytes(
            num_layers=arch.num_hidden_layers - len(arch.unquantized_attention_layers),
            num_heads=arch.num_attention_heads, kv_lora_rank=arch.mla.kv_lora_rank,
            qk_nope_head_dim=arch.mla.qk_nope_head_dim, v_head_dim=arch.mla.v_head_dim, activation_bytes=b_act)
    b_expert = 0.0
    if quant == "mxfp4" and arch.moe is not None:  # the padded rows/columns vLLM allocates
        pad = mxfp4_expert_padding(hidden_size=arch.hidden_size, intermediate_size=arch.moe.expert_intermediate_size,
                                   backend=mxfp4_backend)
        linear_q += p.experts * (pad - 1.0)
        b_expert = b_lin * pad
    return ModelNumbers(
        params=p,
        linear_bytes_per_param=b_lin,
        activation_bytes=b_act,
        kv_bytes_per_element=b_kv,
        sharded_weight_bytes=linear_q * b_lin + unq * b_act + (p.embedding + p.lm_head + p.extra) * b_act + absorbed,
        replicated_weight_bytes=(p.norms + p.router) * b_act + p.q_low_rank_projection * b_qa,
        kv_proj_bytes_per_head=p.kv_projection * (f_kv * b_act + (1.0 - f_kv) * b_lin) / kv_heads,
        num_kv_heads=kv_heads,
        kv_bytes_per_token_per_head_full=float(per_head_full),
        kv_bytes_per_token_per_head_sliding=float(per_head_sw),
        sliding_window=arch.sliding_window or 1,
        ffn_intermediate_per_token=ffn,
        experts_per_token=k,
        expert_intermediate_size=i_e,
        quantization=quant,
        expert_bytes_per_param=b_expert,
        chunked_local=arch.local_attention == "chunked",
    )


@dataclass(frozen=True)
class MemoryResult:
    """Per-GPU memory of a scenario (arrays broadcast over the inputs). Bytes unless named."""

    usable_memory_bytes: np.ndarray
    budget_bytes: np.ndarray  # usable × gpu_memory_utilization
    reserved_bytes: np.ndarray  # usable × (1 − gpu_memory_utilization)
    weights_bytes: np.ndarray  # per GPU
    activation_bytes: np.ndarray
    overhead_bytes: np.ndarray
    kv_pool_bytes: np.ndarray  # may be negative: then nothing fits
    kv_bytes_per_token: np.ndarray  # per GPU, full-attention layers (+ sliding layers while inside the window)
    kv_bytes_per_request: np.ndarray  # per GPU, one request of context_tokens, whole blocks
    num_blocks: np.ndarray
    kv_pool_tokens: np.ndarray
    max_concurrency: np.ndarray  # vLLM's figure for max_model_len tokens per request
    max_concurrency_at_context: np.ndarray  # whole requests of context_tokens that fit
    concurrency: np.ndarray
    context_tokens: np.ndarray
    kv_in_use_bytes: np.ndarray  # min(concurrency, what fits) requests
    kv_free_bytes: np.ndarray  # pool not in use
    fits: np.ndarray  # weights + activations + overhead fit, and one max_model_len request fits
    concurrency_fits: np.ndarray  # fits and all `concurrency` requests of context_tokens fit at once
    paged_waste_bytes: np.ndarray  # per request
    contiguous_waste_bytes: np.ndarray  # per request, reserving max_model_len
    contiguous_max_sequences: np.ndarray
    cuda_context_and_graphs_bytes: np.ndarray  # lives in the reserve (outside vLLM's budget)
    reserve_ok: np.ndarray  # the (1 − utilization) reserve holds the CUDA context and graphs
    # The activation peak's terms (vLLM's profile run): forward pass, sampler warm-up, persistent
    # fused-MoE workspaces, allocator workspaces; the running KV of one sequence of context_tokens.
    forward_bytes: np.ndarray = 0.0
    sampler_bytes: np.ndarray = 0.0
    moe_workspace_bytes: np.ndarray = 0.0
    allocator_workspace_bytes: np.ndarray = 0.0
    sampler_bytes_per_logit: np.ndarray = 0.0
    topk_scratch_rows: np.ndarray = 0
    comm_buffer_bytes: np.ndarray = 0.0  # the non-torch part for TP > 1 (NCCL, custom all-reduce)
    kv_bytes_per_request_startup: np.ndarray = 0.0  # vLLM's start-up worst case (sliding window + budget)
    # What running sequences of context_tokens hold per token and how many of their tokens the pool holds
    # (windowed layers keep only their window: vLLM's hybrid allocator frees the blocks that slide out);
    # without windowed layers kv_bytes_per_token and kv_pool_tokens. The simulator's blocks and the
    # analytic model's KV wall count these (memory_model's docstring).
    kv_bytes_per_sequence_token: np.ndarray = 0.0
    kv_sequence_tokens: np.ndarray = 0.0
    kv_sequence_blocks: np.ndarray = 0  # kv_sequence_tokens / block_size


def memory_model(*, usable_memory_bytes, gpu_memory_utilization, tensor_parallel_size,
                 sharded_weight_bytes, replicated_weight_bytes, kv_proj_bytes_per_head, num_kv_heads,
                 kv_bytes_per_token_per_head_full, kv_bytes_per_token_per_head_sliding, sliding_window,
                 hidden_size, ffn_intermediate_per_token, num_heads, head_dim, vocab_size, activation_bytes,
                 max_model_len, max_num_seqs, max_num_batched_tokens, block_size,
                 non_torch_overhead_bytes, nccl_overhead_bytes, live_hidden_buffers,
                 concurrency, context_tokens, activation_num_kv_heads=None,
                 cuda_context_and_graphs_bytes=0.0, experts_per_token=0, expert_intermediate_size=0,
                 sampler_bytes_per_logit=14.0, topk_scratch_rows=DEFAULT_SM_COUNT, allocator_workspace_bytes=0.0,
                 nccl_per_peer_bytes=0.0, all_to_all_link=True, chunked_local=False,
                 sequence_tokens=None) -> MemoryResult:
    """The whole per-GPU memory stack; every argument broadcasts (one config or millions).

    The activation peak is vLLM's profile run (:func:`calc.sizing.memory.activation_peak_bytes`):
    the larger of the forward pass at ``max_num_batched_tokens`` and the sampler warm-up over
    ``max_num_seqs`` rows of logits (``sampler_bytes_per_logit`` per element, ``topk_scratch_rows``
    rows of top-k/top-p scratch), with the fused-MoE workspaces (``experts_per_token`` > 0) and
    ``allocator_workspace_bytes`` on top. Concurrency at ``context_tokens`` counts what a running
    sequence holds (sliding-window blocks freed); ``max_concurrency`` is vLLM's logged start-up
    figure (window + budget).

    ``chunked_local``: the windowed layers are chunked local attention (Llama 4,
    :func:`calc.sizing.memory.chunked_local_kv_tokens`), not sliding windows.

    Running sequences (``kv_sequence_tokens``, what the simulator's blocks and the analytic KV wall
    count): vLLM's hybrid allocator gives each group of layers its own blocks from one pool and
    frees a windowed layer's blocks as they slide out, so a running sequence of ``sequence_tokens``
    (default ``context_tokens``; whole blocks, C_r) holds B_r (``kv_bytes_per_request`` at that
    length), and the pool holds

        kv_sequence_tokens = ⌊pool_used / (B_r / C_r) / block_size⌋ · block_size

    of such sequences' tokens (kv_pool_tokens, all layers' bytes per token, is vLLM's logged "GPU KV
    cache size"). gpt-oss-120b on H100 (18 full + 18 windowed layers of 2,048 B/token, window 128),
    32,100-token requests: B_r / C_r = 36,864 + 36,864 · 144 / 32,112 = 37,029 B/token against
    73,728, so 1.99 × the tokens. vLLM's own block count says the same: gemma-2-9b (21 + 21 layers)
    logged 21,110 GPU blocks for 168,880 tokens (``vllm_memory_logs.jsonl`` r13), blocks of one
    group's 21 layers, 2 × 168,880 / 16.

    ``num_kv_heads`` is the number of *cached* KV heads (1 for MLA: one latent, replicated);
    ``activation_num_kv_heads`` the K/V heads the profiling forward pass materializes (for MLA
    the decompressed per-head keys and values, i.e. ``num_attention_heads``); it defaults to
    ``num_kv_heads``, which is right for MHA/GQA/MQA.
    """
    if activation_num_kv_heads is None:
        activation_num_kv_heads = num_kv_heads
    tp = np.asarray(tensor_parallel_size)
    kvh = mem.kv_heads_per_rank(num_kv_heads=num_kv_heads, tensor_parallel_size=tp)
    weights = mem.weights_per_gpu_bytes(sharded_weight_bytes=sharded_weight_bytes,
                                        replicated_weight_bytes=replicated_weight_bytes,
                                        kv_proj_bytes_per_head=kv_proj_bytes_per_head,
                                        num_kv_heads=num_kv_heads, tensor_parallel_size=tp)
    moe_ws = np.where(np.asarray(experts_per_token) > 0, mem.moe_workspace_bytes(
        tokens=max_num_batched_tokens, experts_per_token=experts_per_token,
        expert_intermediate_size=expert_intermediate_size, hidden_size=hidden_size, tensor_parallel_size=tp,
        activation_bytes=activation_bytes), 0.0)
    fwd = mem.forward_peak_bytes(tokens=max_num_batched_tokens, hidden_size=hidden_size,
                                 ffn_intermediate_per_token=ffn_intermediate_per_token, num_heads=num_heads,
                                 num_kv_heads=activation_num_kv_heads, head_dim=head_dim, tensor_parallel_size=tp,
                                 activation_bytes=activation_bytes, live_hidden_buffers=live_hidden_buffers,
                                 moe_workspace_bytes=moe_ws)
    smp = mem.sampler_peak_bytes(max_num_seqs=max_num_seqs, vocab_size=vocab_size,
                                 bytes_per_logit=sampler_bytes_per_logit, topk_scratch_rows=topk_scratch_rows)
    act = mem.activation_peak_bytes(forward_bytes=fwd, sampler_bytes=smp, tokens=max_num_batched_tokens,
                                    hidden_size=hidden_size, activation_bytes=activation_bytes,
                                    moe_workspace_bytes=moe_ws, workspace_bytes=allocator_workspace_bytes)
    overhead = mem.runtime_overhead_bytes(tensor_parallel_size=tp, non_torch_overhead_bytes=non_torch_overhead_bytes,
                                          nccl_overhead_bytes=nccl_overhead_bytes, nccl_per_peer_bytes=nccl_per_peer_bytes,
                                          all_to_all_link=all_to_all_link)
    usable = np.asarray(usable_memory_bytes, dtype=float)
    pool = mem.kv_pool_bytes(usable_memory_bytes=usable, gpu_memory_utilization=gpu_memory_utilization,
                             weights_bytes=weights, activation_bytes=act, overhead_bytes=overhead)
    kv_full = np.asarray(kv_bytes_per_token_per_head_full) * kvh
    kv_sw = np.asarray(kv_bytes_per_token_per_head_sliding) * kvh
    kv_tok = kv_full + kv_sw
    # Paged block accounting uses the per-token size of all layers (vLLM's uniform page size).
    blocks = mem.num_kv_blocks(kv_pool_bytes=pool, block_size=block_size, kv_bytes_per_token=kv_tok)
    per_request = mem.kv_bytes_per_sequence(context_tokens=context_tokens, kv_bytes_per_token_full=kv_full,
                                            kv_bytes_per_token_sliding=kv_sw, sliding_window=sliding_window,
                                            max_num_batched_tokens=max_num_batched_tokens, block_size=block_size,
                                            running=True, chunked_local=chunked_local)
    per_request_startup = mem.kv_bytes_per_sequence(
        context_tokens=context_tokens, kv_bytes_per_token_full=kv_full, kv_bytes_per_token_sliding=kv_sw,
        sliding_window=sliding_window, max_num_batched_tokens=max_num_batched_tokens, block_size=block_size,
        chunked_local=chunked_local)
    per_max = mem.kv_bytes_per_sequence(context_tokens=max_model_len, kv_bytes_per_token_full=kv_full,
                                        kv_bytes_per_token_sliding=kv_sw, sliding_window=sliding_window,
                                        max_num_batched_tokens=max_num_batched_tokens, block_size=block_size,
                                        chunked_local=chunked_local)
    block_bytes = np.asarray(block_size) * kv_tok
    pool_used = blocks * block_bytes
    # a running sequence of context_tokens holds per_request: per token of it, per_request / its whole
    # blocks' tokens (full layers every token, windowed layers their window); the pool holds
    # pool_used / that of such sequences' tokens. Without windowed layers: kv_tok and blocks × block_size.
    seq_len = np.maximum(context_tokens if sequence_tokens is None else sequence_tokens, 1)
    ctx_tokens = mem.blocks_for_tokens(tokens=seq_len, block_size=block_size) * np.asarray(block_size)
    windowed = np.asarray(kv_sw) > 0
    per_seq = per_request if sequence_tokens is None else mem.kv_bytes_per_sequence(
        context_tokens=seq_len, kv_bytes_per_token_full=kv_full, kv_bytes_per_token_sliding=kv_sw,
        sliding_window=sliding_window, max_num_batched_tokens=max_num_batched_tokens, block_size=block_size,
        running=True, chunked_local=chunked_local)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_seq_token = np.where(windowed, np.asarray(per_seq, dtype=float) / ctx_tokens, kv_tok)
        seq_tokens = np.where(windowed & (per_seq_token > 0),
                              np.floor(np.maximum(pool_used, 0.0) / per_seq_token / np.asarray(block_size))
                              * np.asarray(block_size), np.asarray(blocks) * np.asarray(block_size))
    max_conc = pool_used / per_max
    conc_at_ctx = np.asarray(mem.floor_count(pool_used / per_request))
    c = np.asarray(concurrency)
    in_use = np.minimum(c, conc_at_ctx) * per_request
    fits = (pool > 0) & (max_conc >= 1.0)
    return MemoryResult(
        usable_memory_bytes=usable,
        budget_bytes=usable * gpu_memory_utilization,
        reserved_bytes=usable * (1.0 - np.asarray(gpu_memory_utilization)),
        weights_bytes=np.asarray(weights, dtype=float),
        activation_bytes=np.asarray(act, dtype=float),
        overhead_bytes=np.asarray(overhead, dtype=float),
        kv_pool_bytes=np.asarray(pool, dtype=float),
        kv_bytes_per_token=np.asarray(kv_tok, dtype=float),
        kv_bytes_per_request=np.asarray(per_request, dtype=float),
        num_blocks=np.asarray(blocks),
        kv_pool_tokens=np.asarray(blocks) * np.asarray(block_size),
        kv_bytes_per_sequence_token=np.asarray(per_seq_token, dtype=float),
        kv_sequence_tokens=np.asarray(seq_tokens),
        kv_sequence_blocks=np.asarray(seq_tokens // np.asarray(block_size)),
        max_concurrency=np.asarray(max_conc, dtype=float),
        max_concurrency_at_context=conc_at_ctx,
        concurrency=c,
        context_tokens=np.asarray(context_tokens),
        kv_in_use_bytes=np.asarray(in_use, dtype=float),
        kv_free_bytes=np.maximum(np.asarray(pool, dtype=float), 0.0) - in_use,
        fits=np.asarray(fits),
        concurrency_fits=np.asarray(fits & (c <= conc_at_ctx)),
        paged_waste_bytes=np.asarray(mem.paged_waste_bytes(tokens=context_tokens, block_size=block_size,
                                                           kv_bytes_per_token=kv_tok), dtype=float),
        contiguous_waste_bytes=np.asarray(mem.contiguous_waste_bytes(tokens=context_tokens, max_model_len=max_model_len,
                                                                     kv_bytes_per_token=kv_tok), dtype=float),
        contiguous_max_sequences=np.asarray(mem.contiguous_max_sequences(kv_pool_bytes=pool, max_model_len=max_model_len,
                                                                         kv_bytes_per_token=kv_tok)),
        cuda_context_and_graphs_bytes=np.asarray(cuda_context_and_graphs_bytes, dtype=float),
        reserve_ok=np.asarray(usable * (1.0 - np.asarray(gpu_memory_utilization)) >= cuda_context_and_graphs_bytes),
        forward_bytes=np.asarray(fwd, dtype=float),
        sampler_bytes=np.asarray(smp, dtype=float),
        moe_workspace_bytes=np.asarray(moe_ws, dtype=float),
        allocator_workspace_bytes=np.asarray(allocator_workspace_bytes, dtype=float),
        sampler_bytes_per_logit=np.asarray(sampler_bytes_per_logit, dtype=float),
        topk_scratch_rows=np.asarray(topk_scratch_rows),
        comm_buffer_bytes=np.asarray(overhead, dtype=float) - np.asarray(non_torch_overhead_bytes, dtype=float),
        kv_bytes_per_request_startup=np.asarray(per_request_startup, dtype=float),
    )


def memory_for(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig = ServingConfig(),
               efficiency: Efficiency = Efficiency(), *, concurrency=None, context_tokens=None,
               sequence_tokens=None) -> MemoryResult:
    """Memory stack of a scenario. ``concurrency`` / ``context_tokens`` may be arrays (a sweep);
    they default to ``serving.concurrency`` (1 when None) and ``max_model_len``; ``sequence_tokens``
    (the running sequences' length of ``kv_sequence_tokens``, :func:`memory_model`) to the request's
    ``input_len + output_len``.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> r = memory_for(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), ServingConfig(max_model_len=8192))
    >>> round(float(r.weights_bytes) / 2**30, 2)   # vLLM logs "model weights take 14.96GiB"
    14.96
    """
    n = model_numbers(arch, dtype=serving.dtype, quantization=serving.quantization, kv_cache_dtype=serving.kv_cache_dtype,
                      mxfp4_backend=mxfp4_backend(gpu))
    # PP / DP / EP: the heaviest GPU's share (calc.sizing.layout; unchanged at PP = DP = 1 without EP).
    n = rank_numbers(arch, n, tensor_parallel_size=serving.tensor_parallel_size,
                     pipeline_parallel_size=serving.pipeline_parallel_size,
                     data_parallel_size=serving.data_parallel_size, enable_expert_parallel=serving.enable_expert_parallel)
    rs = resolve_serving(arch, gpu, serving)
    scratch = (gpu.sm_count or DEFAULT_SM_COUNT) if serving.vllm_version == "0.19" else 0
    if concurrency is None:
        concurrency = serving.concurrency or 1
    if context_tokens is None:
        context_tokens = rs.max_model_len
    head_dim = arch.head_dim if arch.mla is None else arch.mla.qk_nope_head_dim + arch.mla.qk_rope_head_dim
    kv_heads_act = arch.num_key_value_heads if arch.mla is None else arch.num_attention_heads
    return memory_model(
        usable_memory_bytes=gpu.usable_memory_bytes, gpu_memory_utilization=serving.gpu_memory_utilization,
        tensor_parallel_size=serving.tensor_parallel_size, sharded_weight_bytes=n.sharded_weight_bytes,
        replicated_weight_bytes=n.replicated_weight_bytes, kv_proj_bytes_per_head=n.kv_proj_bytes_per_head,
        num_kv_heads=n.num_kv_heads, kv_bytes_per_token_per_head_full=n.kv_bytes_per_token_per_head_full,
        kv_bytes_per_token_per_head_sliding=n.kv_bytes_per_token_per_head_sliding, sliding_window=n.sliding_window,
        hidden_size=arch.hidden_size, ffn_intermediate_per_token=n.ffn_intermediate_per_token,
        num_heads=arch.num_attention_heads, head_dim=head_dim, vocab_size=arch.vocab_size,
        activation_bytes=n.activation_bytes, max_model_len=rs.max_model_len, max_num_seqs=rs.max_num_seqs,
        max_num_batched_tokens=rs.max_num_batched_tokens, block_size=serving.block_size,
        non_torch_overhead_bytes=efficiency.non_torch_overhead_bytes + layout_buffer_bytes(arch, gpu, serving, efficiency),
        nccl_overhead_bytes=efficiency.nccl_overhead_bytes,
        live_hidden_buffers=efficiency.activation_live_hidden_buffers,
        concurrency=concurrency, context_tokens=context_tokens, activation_num_kv_heads=kv_heads_act,
        cuda_context_and_graphs_bytes=efficiency.cuda_context_bytes + efficiency.cuda_graph_bytes,
        experts_per_token=n.experts_per_token, expert_intermediate_size=n.expert_intermediate_size,
        sampler_bytes_per_logit=mem.sampler_bytes_per_logit(vllm_version=serving.vllm_version,
                                                            activation_bytes=n.activation_bytes),
        topk_scratch_rows=scratch, allocator_workspace_bytes=efficiency.allocator_workspace_bytes,
        nccl_per_peer_bytes=efficiency.nccl_per_peer_bytes, all_to_all_link=all_to_all_nvlink(gpu),
        chunked_local=n.chunked_local,
        sequence_tokens=serving.input_len + serving.output_len if sequence_tokens is None else sequence_tokens,
    )


def layout_buffer_bytes(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig, efficiency: Efficiency) -> float:
    """Non-torch bytes the EP all-to-all adds per GPU (:func:`calc.sizing.layout.expert_parallel_buffer_bytes`;
    0 without ``--enable-expert-parallel`` or for a dense model)."""
    if arch.moe is None or not serving.enable_expert_parallel:
        return 0.0
    from calc.spec.nodes import node_for  # data file read on first use
    ep = int(expert_parallel_size(tensor_parallel_size=serving.tensor_parallel_size,
                                  data_parallel_size=serving.data_parallel_size, enable_expert_parallel=True))
    return float(expert_parallel_buffer_bytes(expert_parallel_size=ep, spans_nodes=ep > max(node_for(gpu).gpus_per_node,
                                                                                          node_for(gpu).nvlink_domain_gpus),
                                              buffer_bytes=efficiency.expert_parallel_buffer_bytes))
