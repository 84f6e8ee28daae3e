"""calc.timing.attention_backend: vLLM 0.11's attention backend per GPU and model, and the Triton
kernel's share of FlashAttention's rate, applied to the prompt chunks' attention FLOPs and the decodes'
KV reads only, in the analytic step time and in the simulator's mirror of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calc.cli.measured import ask_row, efficiency_for_engine
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.attention_backend import vllm_attention_backend
from calc.timing.estimate import estimate
from calc.timing.serving import engine_op_costs, engine_step
from calc.traffic.steptime import StepTimer

OSS = "openai/gpt-oss-120b"
SC = ServingConfig(input_len=4000, output_len=200, concurrency=None)
ROOT = Path(__file__).resolve().parents[1]


def _engine(gpu: str, model: str = OSS, serving: ServingConfig = SC, **eff):
    return estimate(get_model(model), get_gpu(gpu), serving, Efficiency(**eff)).engine


def _backend(gpu: str, model: str = OSS, kv: str = "auto") -> str:
    g, m = get_gpu(gpu), get_model(model)
    return vllm_attention_backend(vendor=g.vendor, architecture=g.architecture, compute_capability=g.compute_capability,
                                  attention_sinks=m.attention_sinks, fp8_kv_cache=kv.startswith("fp8"))


def test_vllm_picks_triton_where_flash_attention_2_lacks_sinks_or_fp8_kv():
    # vllm/platforms/cuda.py (v0.11.0): SM >= 8.0, (has_sink or fp8 KV) and not SM 9.0 -> TRITON_ATTN
    assert _backend("a100-80gb") == "triton"
    assert _backend("l40s") == "triton"
    assert _backend("h100-sxm") == "flash_attn"          # FlashAttention 3 has sinks
    assert _backend("b200") == "flashinfer"
    assert _backend("mi300x") == "other"
    assert _backend("a100-80gb", "Qwen/Qwen3-14B") == "flash_attn"
    assert _backend("a100-80gb", "Qwen/Qwen3-14B", kv="fp8") == "triton"
    assert _backend("h100-sxm", "Qwen/Qwen3-14B", kv="fp8") == "flash_attn"


def test_the_engine_carries_the_shares_only_where_triton_runs():
    a100, h100 = _engine("a100-80gb"), _engine("h100-sxm")
    assert (a100.attention_prefill_scale, a100.attention_decode_scale) == (0.19, 1.0)   # the defaults
    assert (h100.attention_prefill_scale, h100.attention_decode_scale) == (1.0, 1.0)
    dense = _engine("a100-80gb", "Qwen/Qwen3-14B")
    assert (dense.attention_prefill_scale, dense.attention_decode_scale) == (1.0, 1.0)


def test_only_the_prompt_attention_and_the_decode_kv_reads_slow_down():
    # A step of 200 decodes at 4,000 keys beside a 2,048-token chunk after 30,000 cached tokens.
    # Prompt-attention FLOPs F_pf run at s_p of the rate: compute grows by F_pf / (P·η) · (1/s_p − 1);
    # the decodes' KV bytes B_dec at s_d of the bandwidth: memory grows by B_dec / (BW·η_m) · (1/s_d − 1).
    base = _engine("a100-80gb", triton_attention_prefill_fraction=1.0, triton_attention_decode_fraction=1.0)
    slow = _engine("a100-80gb", triton_attention_prefill_fraction=0.25, triton_attention_decode_fraction=0.5)
    batch = dict(decode_tokens=200.0, decode_context_tokens_sum=200.0 * 4000.0, prefill_tokens=2048.0,
                 prefill_attention_pairs=2048.0 * 30000.0 + 2048.0 * 2049.0 / 2.0, prefill_cached_tokens=30000.0,
                 logits_tokens=200.0)
    c = engine_op_costs(base, **batch)
    a, b = engine_step(base, **batch), engine_step(slow, **batch)
    rate = 312e12 * 0.6  # prefill and decode fractions are both 0.6 on Ampere: η = 0.6 whatever the mix
    assert float(b.op_compute_s["attention"] - a.op_compute_s["attention"]) == pytest.approx(
        float(c.attention_prefill_flops) / rate * 3.0, rel=1e-9)
    bw = float(get_gpu("a100-80gb").hbm_bw_bytes_per_s) * 0.8
    assert float(b.op_memory_s["attention"] - a.op_memory_s["attention"]) == pytest.approx(
        float(c.attention_decode_kv_bytes) / bw, rel=1e-9)
    for op in ("qkv_proj", "o_proj", "mlp", "lm_head", "elementwise"):
        assert float(b.op_time_s[op]) == float(a.op_time_s[op])


def test_the_simulator_mirror_follows_the_shares():
    e = _engine("a100-80gb", triton_attention_decode_fraction=0.7)
    t = StepTimer(e, max_tokens=9000)
    assert t.fast  # its self-check against engine_step passed with s_p = 0.19, s_d = 0.7
    ref = float(engine_step(e, decode_tokens=100.0, decode_context_tokens_sum=100.0 * 3000.0, prefill_tokens=2000.0,
                            prefill_attention_pairs=2000.0 * 20000.0, prefill_cached_tokens=19000.0,
                            logits_tokens=101.0).step_s)
    assert t(100, 100 * 3000.0, 2000, 2000 * 20000.0, 19000.0, 101) == pytest.approx(ref, rel=1e-9)


def test_other_engines_keep_their_own_kernels():
    eff = efficiency_for_engine("TensorRT-LLM v0.6.1", Efficiency())
    assert (eff.triton_attention_prefill_fraction, eff.triton_attention_decode_fraction) == (1.0, 1.0)
    assert efficiency_for_engine("vLLM v0.11.0", Efficiency()).triton_attention_prefill_fraction == 0.19


def test_the_32k_prompt_burst_on_a100_moves_to_the_measurement_and_hopper_stays():
    """gpustack gpt-oss-120b, 100 prompts of 32,000 tokens, vLLM 0.11 on one A100 (bench/data/gptoss_found.jsonl,
    not a calibration row): total tokens/s +119 % with FlashAttention's rate, +8 % with the Triton kernel's
    0.19 (derived from vLLM issue #18152, not from this row); the H100 run of the same benchmark (vLLM 0.10.2,
    FlashAttention 3) does not move."""
    rows = {r["id"]: r for r in map(json.loads, (ROOT / "bench/data/gptoss_found.jsonl").read_text().splitlines()) if r}
    fa = Efficiency(triton_attention_prefill_fraction=1.0)
    row = rows["gs-oss120-a100-vlong"]
    measured = row["measured"]["total_tokens_per_s"]["value"]
    before = ask_row(row, fa)["total_tokens_per_s"] / measured - 1.0
    after = ask_row(row)["total_tokens_per_s"] / measured - 1.0
    assert before > 1.0 and abs(after) < 0.15
    h100 = rows["gs-oss120-h100-vlong"]
    assert ask_row(h100)["total_tokens_per_s"] == ask_row(h100, fa)["total_tokens_per_s"]
