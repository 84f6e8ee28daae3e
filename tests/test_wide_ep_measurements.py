"""The multi-GPU layout (PP, DP attention, EP) against published large-scale serving results
(``bench/data/wide_ep_measurements.jsonl``, every row with its source). Gated rows must stay
within their tolerance (memory 5 %, throughput 25 %); rows marked ``gate: false`` (MTP, 24-hour
production averages) are computed and printed but not asserted. Rows with ``engine_layout`` are
predicted with that engine's own layout (SGLang's DP attention differs from vLLM's DP; see
:func:`calc.sizing.layout.sglang_dp_attention_weight_bytes`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calc.sizing.layout import sglang_dp_attention_weight_bytes
from calc.sizing.scenario import memory_for, model_numbers
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.estimate import engine_numbers
from calc.timing.serving import decode_step, prefill_step

ROWS = [json.loads(line) for line in
        (Path(__file__).resolve().parents[1] / "bench" / "data" / "wide_ep_measurements.jsonl").read_text().splitlines()
        if line.strip()]
TOLERANCE = {"decode_throughput": 0.25, "prefill_throughput": 0.25, "weights_bytes_per_gpu": 0.05,
             "kv_bytes_per_token_per_gpu": 0.05}


def _gpu(gid: str):
    if gid == "h800":  # H100 SXM silicon with NVLink cut to 400 GB/s (200 GB/s one direction)
        return get_gpu("h100-sxm").model_copy(update={"id": "h800", "name": "NVIDIA H800",
                                                       "interconnect_bw_bytes_per_s": 200e9})
    return get_gpu(gid)


def _efficiency(row) -> Efficiency:
    # SGLang and DeepSeek run DeepGEMM's FP8 GEMMs: like the C++ engines they reach the same share
    # of Hopper's peak as of Ampere's (calc.cli.measured.efficiency_for_engine); vLLM rows keep 0.6.
    # vLLM's MLA layer floor (calc.timing.mla_layers) is its kernel chain, not theirs.
    return Efficiency() if row["engine"].startswith("vLLM") else Efficiency(hopper_flops_scale=1.0,
                                                                            mla_layer_fixed_s=0.0)


def _serving(row) -> ServingConfig:
    keys = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel",
            "quantization", "kv_cache_dtype")
    return ServingConfig(max_model_len=8192, **{k: row[k] for k in keys if k in row})


def predict(row) -> tuple[float, float]:
    """(predicted, measured) of a row, asked as the source measured it."""
    arch, gpu, serving, eff = get_model(row["model"]), _gpu(row["gpu"]), _serving(row), _efficiency(row)
    kind = row["kind"]
    if kind == "decode_throughput":  # saturated decode of one rank (all ranks step together)
        e = engine_numbers(arch, gpu, serving, eff)
        b = row["batch_per_rank"]
        st = decode_step(e, batch=b, context_tokens=row["context_tokens"])
        return float(b / st.step_s), row["measured_output_tokens_per_s_per_gpu"]
    if kind == "prefill_throughput":  # prefill-only steps of whole prompts
        e = engine_numbers(arch, gpu, serving, eff)
        t, plen = row["tokens_per_rank"], row["prompt_tokens"]
        st = prefill_step(e, prompts=t / plen, prompt_tokens=plen)
        return float(t / st.step_s), row["measured_input_tokens_per_s_per_gpu"]
    if kind == "weights_bytes_per_gpu" and row.get("engine_layout") == "sglang_dp_attention":
        # SGLang's own DP-attention layout (the engine is the input: LM head, dense MLPs, redundant experts)
        n = model_numbers(arch, dtype=serving.dtype, quantization=serving.quantization)
        return sglang_dp_attention_weight_bytes(
            arch, n, dp_size=row["data_parallel_size"], num_redundant_experts=row.get("num_redundant_experts", 0),
            enable_dp_lm_head=row.get("enable_dp_lm_head", False),
            moe_dense_tp_size=row.get("moe_dense_tp_size")), row["measured_bytes"]
    m = memory_for(arch, gpu, serving, eff)
    if kind == "weights_bytes_per_gpu":
        return float(m.weights_bytes), row["measured_bytes"]
    return float(m.kv_bytes_per_token), row["measured_kv_bytes_per_token"]


@pytest.mark.parametrize("row", [r for r in ROWS if r["gate"]], ids=lambda r: r["id"])
def test_gated_rows_within_tolerance(row):
    pred, meas = predict(row)
    assert abs(pred / meas - 1.0) <= TOLERANCE[row["kind"]], (row["id"], pred, meas)


def test_every_row_has_a_source_and_computes():
    for row in ROWS:
        assert row["source"] and row["kind"] in TOLERANCE
        pred, meas = predict(row)
        assert pred > 0 and meas > 0


def test_dp_attention_keeps_the_whole_mla_latent_per_gpu():
    # DeepSeek-V3 BF16 latent: 61 layers x (512 + 64) x 2 B = 70,272 B per token on EVERY GPU,
    # whether the 8 GPUs are TP 8 (the same request's latent copied 8 times) or DP 8 (8 ranks'
    # own requests): DP attention multiplies the requests the 8 GPUs hold by 8.
    arch, gpu = get_model("deepseek-ai/DeepSeek-V3"), get_gpu("h200")
    tp8 = memory_for(arch, gpu, ServingConfig(tensor_parallel_size=8, max_model_len=8192))
    dp8 = memory_for(arch, gpu, ServingConfig(data_parallel_size=8, enable_expert_parallel=True, max_model_len=8192))
    assert float(tp8.kv_bytes_per_token) == float(dp8.kv_bytes_per_token) == 70272.0
    # requests the deployment holds: TP 8 = one pool; DP 8 = 8 pools (each smaller: attention replicated)
    assert 8 * float(dp8.max_concurrency) > 4 * float(tp8.max_concurrency)


def test_default_layout_changes_nothing():
    arch, gpu = get_model("deepseek-ai/DeepSeek-V3"), get_gpu("h200")
    a = memory_for(arch, gpu, ServingConfig(tensor_parallel_size=8))
    b = memory_for(arch, gpu, ServingConfig(tensor_parallel_size=8, pipeline_parallel_size=1, data_parallel_size=1))
    assert float(a.kv_pool_bytes) == float(b.kv_pool_bytes)
    ea, eb = engine_numbers(arch, gpu, ServingConfig(tensor_parallel_size=8)), engine_numbers(
        arch, gpu, ServingConfig(tensor_parallel_size=8, data_parallel_size=1))
    assert float(decode_step(ea, batch=64, context_tokens=2000).step_s) == float(
        decode_step(eb, batch=64, context_tokens=2000).step_s)


def test_sglang_dp8_weights_by_hand():
    # DeepSeek-V3/R1 FP8 on one GPU of SGLang --tp 8 --dp 8 --enable-dp-attention --enable-deepep-moe
    # --ep-num-redundant-experts 32 --moe-dense-tp-size 1 (issue #6017 row):
    #   routed experts (256 + 32) / 8 = 36 per GPU x 58 layers x 3·7168·2048 B (FP8)  = 91,955,920,896
    #   the rest whole (attention, 3 dense MLPs, shared experts, routers, norms, embedding, head)
    #     = 19,078,333,440 + the 16-bit W_UK/W_UV copies 61·128·512·256·2 = 2,046,820,352 = 21,125,153,792
    #   minus 7/8 of the vocab-parallel LM head (129,280 x 7168 x 2 B = 1,853,358,080)   = -1,621,688,320
    #   = 111,459,386,368 B = 103.80 GiB; the log's 105.59 GiB is 1.7 % above.
    arch = get_model("deepseek-ai/DeepSeek-R1")
    n = model_numbers(arch)
    w = sglang_dp_attention_weight_bytes(arch, n, dp_size=8, num_redundant_experts=32, moe_dense_tp_size=1)
    assert w == pytest.approx(91_955_920_896 + 21_125_153_792 - 1_621_688_320, rel=1e-12)
    assert w == pytest.approx(111_459_386_368, rel=1e-12)
    # without the redundant experts: 32 per GPU, 4 x 58 x 44,040,192 = 10,217,324,544 B fewer (-10.7 % vs the log)
    w0 = sglang_dp_attention_weight_bytes(arch, n, dp_size=8, moe_dense_tp_size=1)
    assert w - w0 == pytest.approx(10_217_324_544, rel=1e-12)
    # --enable-dp-lm-head keeps the whole head; dense MLPs sliced over 8 without --moe-dense-tp-size 1
    assert sglang_dp_attention_weight_bytes(arch, n, dp_size=8, num_redundant_experts=32, moe_dense_tp_size=1,
                                            enable_dp_lm_head=True) - w == pytest.approx(1_621_688_320, rel=1e-12)
    assert w - sglang_dp_attention_weight_bytes(arch, n, dp_size=8, num_redundant_experts=32) == pytest.approx(
        1_189_085_184 * 7 / 8, rel=1e-12)


if __name__ == "__main__":  # the table: python tests/test_wide_ep_measurements.py
    for r in ROWS:
        p, m = predict(r)
        print(f"{r['id']:32s} {'gate' if r['gate'] else 'info':4s} predicted {p:14,.0f} measured {m:14,.0f} "
              f"error {p / m - 1:+.1%}")
