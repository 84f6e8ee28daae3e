"""calc.timing.moe_kernels.moe_fixed_time_s: the MoE layers' fixed time per step (L_moe · t_0), in the
analytic step time, in the simulator's mirror, off for dense models and for the C++ engines, and t_0
read back from the published fused-MoE kernel benchmarks (bench/moe_kernel_floor.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from calc.cli.measured import efficiency_for_engine
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.estimate import engine_numbers
from calc.timing.moe_kernels import moe_fixed_time_s
from calc.timing.serving import decode_step, engine_step, prefill_step
from calc.traffic.steptime import StepTimer

ROOT = Path(__file__).resolve().parents[1]
OSS = "openai/gpt-oss-120b"


def _e(model: str, gpu: str = "h100-sxm", tp: int = 4, **eff):
    return engine_numbers(get_model(model), get_gpu(gpu), ServingConfig(tensor_parallel_size=tp), Efficiency(**eff))


def test_fixed_time_is_layers_times_t0():
    # gpt-oss-120b: 36 MoE layers · 25 us = 900 us; Qwen3-235B-A22B: 94 · 25 us = 2.35 ms;
    # Llama 4 Maverick: (48 − 0) // 2 = 24 MoE layers (every other layer) · 25 us = 600 us; dense: 0.
    assert float(moe_fixed_time_s(num_moe_layers=36, moe_layer_fixed_s=25e-6)) == pytest.approx(900e-6)
    assert _e(OSS).moe_fixed_s == pytest.approx(36 * 25e-6)
    assert _e("Qwen/Qwen3-235B-A22B", tp=8).moe_fixed_s == pytest.approx(94 * 25e-6)
    assert _e("meta-llama/Llama-4-Maverick-17B-128E", tp=8).moe_fixed_s == pytest.approx(24 * 25e-6)
    assert _e("meta-llama/Llama-3.1-8B", tp=1).moe_fixed_s == 0.0
    assert moe_fixed_time_s(num_moe_layers=np.array([0, 36]), moe_layer_fixed_s=1e-5).tolist() == [0.0, 36e-5]


def test_it_adds_to_the_mlp_time_of_every_step_and_nothing_else():
    # gpt-oss-120b TP 4 on H100, 8 decodes at 5,125 tokens: the step grows by exactly 36 · 25 us = 0.9 ms,
    # all of it in the MLP operator's time; its compute and memory terms and the other operators stay.
    on, off = _e(OSS), _e(OSS, moe_layer_fixed_s=0.0)
    a, b = decode_step(on, batch=8, context_tokens=5125), decode_step(off, batch=8, context_tokens=5125)
    assert float(a.step_s - b.step_s) == pytest.approx(0.9e-3, rel=1e-12)
    assert float(a.op_time_s["mlp"] - b.op_time_s["mlp"]) == pytest.approx(0.9e-3, rel=1e-12)
    assert float(a.op_compute_s["mlp"]) == float(b.op_compute_s["mlp"])
    assert float(a.op_memory_s["mlp"]) == float(b.op_memory_s["mlp"])
    assert float(a.pessimistic_step_s - b.pessimistic_step_s) == pytest.approx(0.9e-3, rel=1e-12)
    for op in ("qkv_proj", "attention", "o_proj", "lm_head", "elementwise"):
        assert float(a.op_time_s[op]) == float(b.op_time_s[op])
    # a prefill step pays it too (once per step, not per token)
    p, q = prefill_step(on, prompts=1, prompt_tokens=4096), prefill_step(off, prompts=1, prompt_tokens=4096)
    assert float(p.step_s - q.step_s) == pytest.approx(0.9e-3, rel=1e-12)
    # an empty step runs no kernels: no floor
    empty = dict(decode_tokens=0.0, decode_context_tokens_sum=0.0, prefill_tokens=0.0,
                 prefill_attention_pairs=0.0, prefill_cached_tokens=0.0, logits_tokens=0.0)
    assert float(engine_step(on, **empty).step_s) == float(engine_step(off, **empty).step_s)


def test_a_dense_model_does_not_change():
    on, off = _e("meta-llama/Llama-3.1-8B", tp=1), _e("meta-llama/Llama-3.1-8B", tp=1, moe_layer_fixed_s=0.0)
    assert float(decode_step(on, batch=16, context_tokens=2000).step_s) == float(
        decode_step(off, batch=16, context_tokens=2000).step_s)


def test_the_cpp_engines_do_not_take_vllms_moe_floor():
    assert efficiency_for_engine("TensorRT-LLM v0.6", Efficiency()).moe_layer_fixed_s == 0.0
    assert efficiency_for_engine("vLLM 0.11", Efficiency()).moe_layer_fixed_s == 25e-6


@settings(max_examples=15, deadline=None)
@given(d=st.integers(0, 200), p=st.integers(0, 3000))
def test_the_simulator_mirror_follows_the_floor(d, p):
    if d + p == 0:
        return
    e = _e(OSS)
    t = StepTimer(e, max_tokens=4096)
    assert t.fast  # its self-check against engine_step passed with the floor in the MLP
    ref = float(engine_step(e, decode_tokens=float(d), decode_context_tokens_sum=d * 3000.0, prefill_tokens=float(p),
                            prefill_attention_pairs=p * 1500.0, prefill_cached_tokens=0.0,
                            logits_tokens=float(d + (1 if p else 0))).step_s)
    assert t(d, d * 3000.0, p, p * 1500.0, 0.0, d + (1 if p else 0)) == pytest.approx(ref, rel=1e-9)


def test_t0_from_the_kernel_benchmarks():
    # Qwen3-30B-A3B FP8 on one H100, benchmark_moe batch 1 (vLLM PR #24700): 8 experts · 3 · 2048 · 768
    # weights · 1 B = 37,748,736 B at 0.8 · 3.35e12 B/s = 14.09 us; 40.44 − 14.09 = 26.35 us.
    # Batch 8: 128 · (1 − (1 − 8/128)^8) = 51.64 experts touched, 243.7 MB, 90.9 us; + 26.35 = 117.3 us
    # against 118.64 measured.
    sys.path.insert(0, str(ROOT))
    from bench import moe_kernel_floor as mk  # noqa: PLC0415

    rows = {r["id"]: r for r in mk.rows()}
    q = rows["vllm24700-qwen3-30b-a3b-fp8-h100-tp1"]
    assert mk.bytes_read(q, 1) == pytest.approx(37_748_736.0)
    assert mk.fixed_time_s(q) * 1e6 == pytest.approx(40.44 - 37_748_736 / 2.68e12 * 1e6, rel=1e-9)
    assert mk.fixed_time_s(q) * 1e6 == pytest.approx(26.35, abs=0.01)
    assert (mk.fixed_time_s(q) + mk.bytes_time_s(q, 8)) * 1e6 == pytest.approx(117.3, abs=0.2)
    # every row has a source and the default sits within the rows' t0 (13-28 us), near their median
    t0 = sorted(mk.fixed_time_s(r) for r in rows.values())
    assert all(r["source"].startswith("https://") for r in rows.values())
    assert t0[0] < Efficiency().moe_layer_fixed_s < t0[-1]
    assert abs(Efficiency().moe_layer_fixed_s - float(np.median(t0))) < 3e-6
