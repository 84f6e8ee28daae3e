"""Compose the performance model for a scenario: pydantic inputs → :class:`EngineNumbers` →
closed-loop :class:`ServingResult`, beside the memory stack.

Any of ``concurrency``, ``input_len``, ``output_len``, ``max_num_seqs``,
``max_num_batched_tokens`` may be an array: one call yields a whole frontier or grid.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.sizing.memory import kv_heads_per_rank
from calc.spec.precision import compute_precision, dequant_bytes_per_param
from calc.sizing.scenario import (MemoryResult, ModelNumbers, check_gpu_formats, check_token_budget,
                                  effective_quantization, memory_for, model_numbers, mxfp4_backend, resolve_serving)
from calc.timing.attention_backend import engine_attention_scales
from calc.timing.engine_profile import api_server_request_time_s, engine_peak_flops_per_s, gemm_flops_fractions
from calc.timing.interconnect import allreduce_link, custom_allreduce_latency_s
from calc.timing.layout import across_data_parallel, layout_fields
from calc.timing.mla_layers import mla_fixed_time_s
from calc.timing.moe_kernels import expert_flops_scale, expert_half_saturation_rows, moe_fixed_time_s
from calc.timing.serving import EngineNumbers, ServingResult, closed_loop


def engine_numbers(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig = ServingConfig(),
                   efficiency: Efficiency = Efficiency(), numbers: ModelNumbers | None = None) -> EngineNumbers:
    """Per-GPU operator sizes under TP and the GPU's peaks at the precision the kernels use."""
    n = numbers or model_numbers(arch, dtype=serving.dtype, quantization=serving.quantization,
                                 kv_cache_dtype=serving.kv_cache_dtype, mxfp4_backend=mxfp4_backend(gpu))
    p = n.params
    tp = serving.tensor_parallel_size
    L, h = arch.num_hidden_layers, arch.hidden_size
    kvh = kv_heads_per_rank(num_kv_heads=n.num_kv_heads, tensor_parallel_size=tp)
    if arch.mla is None:
        o_total = L * arch.num_attention_heads * arch.head_dim * h
        q_o_width = arch.num_attention_heads * arch.head_dim / tp
        pair_dec = pair_pf = 4.0 * arch.num_attention_heads / tp * arch.head_dim * L
    else:
        m = arch.mla
        o_total = L * arch.num_attention_heads * m.v_head_dim * h
        q_o_width = arch.num_attention_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim) / tp
        # Decode (absorbed): scores over the latent + rope key, values over the latent.
        pair_dec = 2.0 * arch.num_attention_heads / tp * (2 * m.kv_lora_rank + m.qk_rope_head_dim) * L
        pair_pf = 2.0 * arch.num_attention_heads / tp * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) * L
    qkv_total = p.attention - o_total
    qkv_rank = (qkv_total - p.kv_projection) / tp + p.kv_projection / n.num_kv_heads * kvh
    moe = arch.moe
    mlp_width = arch.intermediate_size / tp
    if moe is not None:
        mlp_width = (moe.experts_per_token * moe.expert_intermediate_size + moe.shared_expert_intermediate_size) / tp
    precision = compute_precision(dtype=serving.dtype, quantization=n.quantization,  # "auto" resolved
                                  gpu_has_fp8=gpu.fp8_flops_per_s is not None, gpu_has_int8=gpu.int8_ops_per_s is not None,
                                  gpu_has_fp4=gpu.fp4_flops_per_s is not None)
    attn_precision = "fp16" if precision in ("fp8", "int8", "fp4") else precision
    link = allreduce_link(gpu, tp, efficiency)  # the link this TP size crosses (bridge pairs, PCIe, xGMI peers)
    # vLLM on Hopper (hopper_flops_scale), on GeForce (geforce_flops_fraction): calc.timing.engine_profile
    prefill_fraction, decode_fraction = gemm_flops_fractions(gpu, precision, efficiency)
    e = EngineNumbers(
        num_layers=L, hidden_size=h, vocab_per_rank=arch.vocab_size / tp,
        qkv_params=qkv_rank, o_params=o_total / tp, mlp_dense_params=p.dense_mlp / tp,
        expert_params=p.experts / tp, shared_expert_params=p.shared_experts_and_router / tp,
        num_experts=moe.num_experts if moe else 1, experts_per_token=moe.experts_per_token if moe else 0,
        # MXFP4: only the experts are 4-bit (expert_bytes_per_param); every other linear is 16-bit.
        linear_bytes_per_param=n.activation_bytes if n.expert_bytes_per_param else n.linear_bytes_per_param,
        expert_bytes_per_param=n.expert_bytes_per_param, activation_bytes=n.activation_bytes,
        kv_bytes_per_token=(n.kv_bytes_per_token_per_head_full + n.kv_bytes_per_token_per_head_sliding) * kvh,
        attn_flops_per_pair_decode=pair_dec, attn_flops_per_pair_prefill=pair_pf, q_o_width=q_o_width,
        mlp_width=mlp_width, active_params_per_token=p.active - p.embedding,
        peak_flops_per_s=engine_peak_flops_per_s(gpu, precision, efficiency.fp16_accumulate_share),
        attention_peak_flops_per_s=engine_peak_flops_per_s(gpu, attn_precision, efficiency.fp16_accumulate_share),
        hbm_bw_bytes_per_s=gpu.hbm_bw_bytes_per_s, link_bw_bytes_per_s=link.bandwidth_bytes_per_s * efficiency.interconnect_bw_fraction,
        tensor_parallel_size=tp, hbm_bw_fraction=efficiency.hbm_bw_fraction,
        prefill_flops_fraction=prefill_fraction, decode_flops_fraction=decode_fraction,
        gemm_half_saturation_tokens=efficiency.gemm_half_saturation_tokens, step_overhead_s=efficiency.step_overhead_s,
        allreduce_latency_s=efficiency.allreduce_latency_s, request_overhead_s=efficiency.request_overhead_s,
        sequence_overhead_s=efficiency.sequence_overhead_s,
        api_server_request_s=api_server_request_time_s(model_type=arch.model_type, efficiency=efficiency),
        api_server_final_share=efficiency.api_server_final_share,
        custom_allreduce=link.custom_allreduce & (not serving.disable_custom_all_reduce), custom_allreduce_latency_s=custom_allreduce_latency_s(gpu, efficiency),
        custom_allreduce_bw_bytes_per_s=efficiency.custom_allreduce_bus_bw_bytes_per_s,
        dequant_bytes_per_param=dequant_bytes_per_param(quantization=serving.quantization, dtype=serving.dtype),
        sliding_fraction=n.kv_bytes_per_token_per_head_sliding
        / (n.kv_bytes_per_token_per_head_full + n.kv_bytes_per_token_per_head_sliding),
        sliding_window=float(arch.sliding_window) if arch.sliding_window else np.inf,
        expert_flops_scale=float(expert_flops_scale(architecture=gpu.architecture, is_moe=moe is not None,
                                                    quantization=n.quantization,
                                                    ampere_moe_flops_scale=efficiency.ampere_moe_flops_scale)),
        expert_half_saturation_tokens=float(expert_half_saturation_rows(
            quantization=n.quantization if moe is not None else "none", mxfp4_backend=mxfp4_backend(gpu),
            gemm_half_saturation_tokens=efficiency.gemm_half_saturation_tokens,
            mxfp4_moe_half_saturation_rows=efficiency.mxfp4_moe_half_saturation_rows)),
        moe_fixed_s=float(moe_fixed_time_s(num_moe_layers=moe.num_moe_layers(L) if moe is not None else 0,
                                           moe_layer_fixed_s=efficiency.moe_layer_fixed_s)),
        attention_fixed_s=float(mla_fixed_time_s(num_mla_layers=L if arch.mla is not None else 0,
                                                 mla_layer_fixed_s=efficiency.mla_layer_fixed_s)))
    # vLLM's attention backend (calc.timing.attention_backend): Triton where FlashAttention lacks sinks / FP8 KV
    s_p, s_d = engine_attention_scales(arch, gpu, kv_cache_dtype=serving.kv_cache_dtype, efficiency=efficiency)
    e = dataclasses.replace(e, attention_prefill_scale=s_p, attention_decode_scale=s_d)
    # PP, DP + EP, TP across nodes (calc.timing.layout; nothing changes for TP inside a node).
    extra = layout_fields(arch, gpu, serving, efficiency, quantization=n.quantization,
                          activation_bytes=n.activation_bytes, experts_params=p.experts,
                          tp_link_bw_bytes_per_s=e.link_bw_bytes_per_s)
    return dataclasses.replace(e, **extra) if extra else e


@dataclass(frozen=True)
class Estimate:
    """Memory stack and closed-loop performance of one scenario (arrays where inputs were)."""

    memory: MemoryResult
    serving: ServingResult
    engine: EngineNumbers
    max_model_len: int
    max_num_seqs: np.ndarray
    max_num_batched_tokens: np.ndarray


def estimate(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig = ServingConfig(),
             efficiency: Efficiency = Efficiency(), *, concurrency=None, input_len=None, output_len=None,
             max_num_seqs=None, max_num_batched_tokens=None, enable_chunked_prefill=None,
             uniform_lengths=False, speculative=None, cached_prompt_tokens=0.0, output_cv=None,
             input_cv=None) -> Estimate:
    """Closed-loop TTFT/TPOT/throughput of ``serving`` (overridable by arrays for sweeps).

    ``concurrency`` None takes ``serving.concurrency``; where that is None (``--concurrency max``)
    the engine runs as many requests as fit. The default is the steady state of clients whose
    requests spread out (real clients do: the API server takes them one at a time, the clients and
    EOS add jitter; the measured ShareGPT closed loops of tests/test_calibration.py sit there).
    ``uniform_lengths=True`` gives instead the FCFS wave of C identical clients started together
    (:func:`calc.timing.serving.fcfs_wave`): the first cycles of a fixed-length benchmark, which
    the deterministic simulator keeps, a transient. ``cached_prompt_tokens``: tokens of each prompt
    found in the prefix cache (:func:`calc.traffic.prefix_cache.prefix_cache`), not prefilled.
    ``output_cv``: the output lengths' coefficient of variation where known (the budget queue's
    think times, :func:`calc.timing.serving.closed_loop`); None: exponential ones. ``input_cv``: the
    prompts' (the budget queue's service spread and each prompt's chunk steps where prompts span
    several chunks); None: fixed prompts.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> r = estimate(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"),
    ...              ServingConfig(dtype="float16", input_len=128, output_len=128, concurrency=1))
    >>> bool(r.serving.decode_bound == "memory")
    True
    """
    rs = resolve_serving(arch, gpu, serving)
    check_gpu_formats(serving, gpu, quantization=effective_quantization(arch, serving.quantization))
    chunked = serving.enable_chunked_prefill if enable_chunked_prefill is None else enable_chunked_prefill
    if max_num_batched_tokens is None and np.ndim(chunked) == 0:  # the serving config's own budget: vLLM's rule
        check_token_budget(serving, rs.max_model_len, enable_chunked_prefill=bool(chunked))
    eng = engine_numbers(arch, gpu, serving, efficiency)
    inp = serving.input_len if input_len is None else input_len
    out = serving.output_len if output_len is None else output_len
    mem = memory_for(arch, gpu, serving, efficiency, concurrency=1, context_tokens=rs.max_model_len,
                     sequence_tokens=np.asarray(inp) + np.asarray(out))
    conc = concurrency if concurrency is not None else (serving.concurrency if serving.concurrency else np.nan)
    dp = serving.data_parallel_size  # each DP rank runs C / DP of the clients (calc.timing.layout)
    conc = np.asarray(conc, dtype=float) / dp if dp > 1 else conc
    seqs = np.asarray(max_num_seqs if max_num_seqs is not None else rs.max_num_seqs)
    mnbt = np.asarray(max_num_batched_tokens if max_num_batched_tokens is not None else rs.max_num_batched_tokens)
    # Without chunked prefill a whole prompt must fit one step (vLLM requires budget ≥ max_model_len).
    mnbt = np.where(np.asarray(chunked), mnbt, np.maximum(mnbt, np.asarray(inp)))
    kv_tokens, drafter = mem.kv_sequence_tokens, None
    if speculative is not None:  # ``speculative``: a calc.spec.speculative.SpeculativeConfig
        from calc.timing.speculative import drafter_from_config, kv_capacity_tokens_with_drafter  # noqa: PLC0415

        drafter = drafter_from_config(eng, speculative, gpu=gpu, serving=serving, efficiency=efficiency)
        kv_tokens = np.floor(kv_capacity_tokens_with_drafter(kv_pool_bytes=mem.kv_pool_bytes,
                                                             kv_bytes_per_token=mem.kv_bytes_per_sequence_token,
                                                             drafter=drafter))
    res = closed_loop(eng, input_len=inp, output_len=out, concurrency=conc, max_num_seqs=seqs,
                      max_num_batched_tokens=mnbt, enable_chunked_prefill=chunked,
                      kv_capacity_tokens=kv_tokens, fits=mem.fits,
                      uniform_lengths=uniform_lengths, speculative=drafter, cached_prompt_tokens=cached_prompt_tokens,
                      output_cv=output_cv, input_cv=input_cv)
    res = across_data_parallel(res, dp)
    return Estimate(memory=mem, serving=res, engine=eng, max_model_len=rs.max_model_len,
                    max_num_seqs=seqs, max_num_batched_tokens=mnbt)
