"""calc.sizing.layout, calc.timing.pipeline and calc.timing.layout: hand-computed values."""

import numpy as np
import pytest

from calc.sizing.layout import experts_on_busiest_rank, pipeline_stage_layers, rank_numbers
from calc.sizing.scenario import model_numbers
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import ServingConfig
from calc.timing.estimate import engine_numbers, estimate
from calc.timing.pipeline import bubble_fraction
from calc.timing.serving import decode_step

DSV3 = get_model("deepseek-ai/DeepSeek-V3")
L405 = get_model("meta-llama/Llama-3.1-405B")


def test_stage_layers_like_vllm():
    assert pipeline_stage_layers(num_layers=61, pipeline_parallel_size=2) == (31, 30)  # the extra one before the last
    assert sum(pipeline_stage_layers(num_layers=126, pipeline_parallel_size=4)) == 126


def test_busiest_rank_experts():
    assert experts_on_busiest_rank(num_experts=256, expert_parallel_size=96) == 3  # 256 = 2·96 + 64


def test_rank_numbers_identity_for_tp_alone():
    n = model_numbers(DSV3)
    assert rank_numbers(DSV3, n, tensor_parallel_size=8) is n


def test_ep_weights_by_hand():
    # DeepSeek-V3 FP8: routed experts 58 layers × 256 × 3·7168·2048 = 653.9 B params at 1 B (+ block scales
    # of the FP8 format) sliced over 8 GPUs; the rest (attention, 3 dense MLPs, shared experts, embedding
    # and head in BF16) on every GPU of DP attention.
    n = model_numbers(DSV3)
    ep8 = rank_numbers(DSV3, n, data_parallel_size=8, enable_expert_parallel=True)
    expert_bytes = n.params.experts * n.linear_bytes_per_param
    rest = n.weights_total_bytes - expert_bytes
    assert ep8.weights_total_bytes == pytest.approx(rest + expert_bytes / 8, rel=1e-9)


def test_pipeline_round_equals_the_model_on_a_micro_batch():
    e1 = engine_numbers(L405, get_gpu("h100-sxm"), ServingConfig(tensor_parallel_size=8))
    e2 = engine_numbers(L405, get_gpu("h100-sxm"), ServingConfig(tensor_parallel_size=8, pipeline_parallel_size=2))
    t1 = float(decode_step(e1, batch=32, context_tokens=2000).step_s)
    t2 = float(decode_step(e2, batch=64, context_tokens=2000).step_s)
    # 64 sequences in 2 micro-batches of 32: the whole model on 32 + one hand-over of 32 tokens
    hop = 35e-6 + 2 * 32 * 16384 * 2 / 8 / (450e9 * 0.7)  # same NVLink domain? no: 16 GPUs > 8 → NIC
    hop_nic = 35e-6 + 2 * 32 * 16384 * 2 / 8 / (50e9 * 0.9)
    assert t2 == pytest.approx(t1 + hop_nic, rel=1e-9) and hop < hop_nic
    assert bubble_fraction(sequences=1, pipeline_parallel_size=2) == 0.5


def test_dp_splits_clients_and_adds_throughput():
    base = ServingConfig(input_len=1000, output_len=200, max_model_len=4096, enable_expert_parallel=True)
    one = estimate(DSV3, get_gpu("h200"), base.model_copy(update={"data_parallel_size": 8, "concurrency": 64}))
    assert float(one.serving.concurrency) == 64 and float(one.serving.running) == 64
    e = engine_numbers(DSV3, get_gpu("h200"), base.model_copy(update={"data_parallel_size": 8}))
    assert e.expert_token_multiplier == 8.0 and e.expert_parallel_size == 8 and e.num_moe_layers == 58
    assert np.isfinite(float(one.serving.tpot_s))


def test_redundant_experts_on_the_busiest_rank():
    # EPLB copies: vLLM --num-redundant-experts / SGLang --ep-num-redundant-experts R spread over EP ranks:
    # (256 + 32) / 8 = 36 experts per GPU instead of 32: the experts' share grows by 36/32.
    n = model_numbers(DSV3)
    base = rank_numbers(DSV3, n, data_parallel_size=8, enable_expert_parallel=True)
    eplb = rank_numbers(DSV3, n, data_parallel_size=8, enable_expert_parallel=True, num_redundant_experts=32)
    expert_bytes = n.params.experts * n.linear_bytes_per_param  # 653,908,770,816 B (FP8)
    assert eplb.weights_total_bytes - base.weights_total_bytes == pytest.approx(expert_bytes * 4 / 256, rel=1e-12)
    assert experts_on_busiest_rank(num_experts=256, expert_parallel_size=96, num_redundant_experts=32) == 3  # 288/96


def test_mla_absorbed_copies_counted_once_per_quantized_checkpoint():
    # DeepSeek-V3 FP8: kv_b_proj is dequantized once to 16-bit W_UK/W_UV (vLLM and SGLang):
    # 61 layers x 128 heads x 512 x (128 + 128) x 2 B = 2,046,820,352 B on top of the FP8 weights;
    # the BF16 model's W_UK/W_UV are views of its own kv_b_proj (no copy).
    fp8, bf16 = model_numbers(DSV3), model_numbers(DSV3, quantization="none")
    p = fp8.params
    fp8_linears = p.linear - p.kv_projection - p.router - p.q_low_rank_projection
    plain = fp8_linears * 1.0 + (p.embedding + p.lm_head) * 2.0
    assert fp8.sharded_weight_bytes == pytest.approx(plain + 2_046_820_352, rel=1e-12)
    assert bf16.sharded_weight_bytes == pytest.approx((p.linear - p.kv_projection - p.router - p.q_low_rank_projection)
                                                      * 2.0 + (p.embedding + p.lm_head) * 2.0, rel=1e-12)
    # sliced by TP with the heads: at TP 8, 255,852,544 B per GPU
    assert (fp8.sharded_weight_bytes - plain) / 8 == pytest.approx(255_852_544, rel=1e-12)
