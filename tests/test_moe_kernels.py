"""calc.timing.moe_kernels: vLLM's MoE kernels' share of the FLOP fractions on Ampere, applied to the
routed experts only, in the analytic step time and in the simulator's mirror of it."""

from __future__ import annotations

import numpy as np
import pytest

from calc.cli.measured import efficiency_for_engine
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.estimate import estimate
from calc.timing.moe_kernels import expert_flops_scale
from calc.timing.serving import engine_op_costs, engine_step
from calc.traffic.steptime import StepTimer

Q235 = "Qwen/Qwen3-235B-A22B"
SC = ServingConfig(tensor_parallel_size=8, input_len=2000, output_len=100, concurrency=None)


def _engine(gpu: str, model: str = Q235, **eff):
    return estimate(get_model(model), get_gpu(gpu), SC, Efficiency(**eff)).engine


def test_the_share_applies_to_16_bit_experts_on_ampere_only():
    s = expert_flops_scale(architecture=np.array(["ampere", "hopper", "ampere", "ampere"]),
                           is_moe=np.array([True, True, False, True]),
                           quantization=np.array(["none", "none", "none", "fp8"]), ampere_moe_flops_scale=0.4)
    assert s.tolist() == [0.4, 1.0, 1.0, 1.0]
    assert _engine("a100-80gb").expert_flops_scale == 0.4       # the default
    assert _engine("h100-sxm").expert_flops_scale == 1.0
    assert _engine("a100-80gb", "Qwen/Qwen3-14B").expert_flops_scale == 1.0  # dense: nothing routed


def test_only_the_routed_experts_slow_down_by_one_over_the_share():
    # One prefill step of 8192 tokens. Routed-expert FLOPs ef run at peak · η · s_x · r / (r + 64)
    # with η = 0.6 (A100, all prefill tokens) and r = rows per expert = 8192 · 8 / touched
    # (touched → 128 for 8192 tokens: r = 512). Their time grows by 1/0.4 − 1 = 1.5 x itself;
    # every other operator stays.
    base, slow = _engine("a100-80gb", ampere_moe_flops_scale=1.0), _engine("a100-80gb", ampere_moe_flops_scale=0.4)
    batch = dict(decode_tokens=0.0, decode_context_tokens_sum=0.0, prefill_tokens=8192.0,
                 prefill_attention_pairs=8192.0 * 4096.0, prefill_cached_tokens=0.0, logits_tokens=1.0)
    costs = engine_op_costs(base, **batch)
    rows = float(costs.expert_rows)
    assert rows == pytest.approx(512.0, rel=1e-3)
    t_experts = float(costs.expert_flops) / (312e12 * 0.6 * rows / (rows + 64.0))
    a, b = engine_step(base, **batch), engine_step(slow, **batch)
    assert float(b.op_compute_s["mlp"] - a.op_compute_s["mlp"]) == pytest.approx(1.5 * t_experts, rel=1e-9)
    for op in ("qkv_proj", "attention", "o_proj", "lm_head", "elementwise"):
        assert float(b.op_time_s[op]) == float(a.op_time_s[op])
    assert float(b.comm_s) == float(a.comm_s)


def test_the_simulator_mirror_follows_the_share():
    e = _engine("a100-80gb")
    t = StepTimer(e, max_tokens=9000)
    assert t.fast  # its self-check against engine_step passed with s_x = 0.4
    ref = float(engine_step(e, decode_tokens=100.0, decode_context_tokens_sum=100.0 * 3000.0, prefill_tokens=4000.0,
                            prefill_attention_pairs=4000.0 * 2000.0, prefill_cached_tokens=0.0, logits_tokens=101.0).step_s)
    assert t(100, 100 * 3000.0, 4000, 4000 * 2000.0, 0.0, 101) == pytest.approx(ref, rel=1e-9)


def test_other_engines_keep_their_own_kernels():
    assert efficiency_for_engine("TensorRT-LLM v0.6.1", Efficiency()).ampere_moe_flops_scale == 1.0
    assert efficiency_for_engine("vLLM v0.11.0", Efficiency()).ampere_moe_flops_scale == 0.4


def test_the_found_runs_move_towards_the_measurements_and_the_controls_stay():
    """bench/moe_ampere_check.py on the calibration set's Qwen3-235B A100 bursts and the found gpustack
    runs: the 16-bit MoE runs on A100 (8 of them: Qwen3-235B TP 8, GLM-4.5-Air TP 4) went from a
    median |error| of 56 % (throughput) to 8 %; rows the share does not touch (H100, dense Qwen3-32B,
    the FP8 Marlin run) predict the same before and after."""
    import statistics

    import bench.moe_ampere_check as mc

    out = mc.before_after(mc.rows())
    a100_moe = [(rid, m, b, a) for rid, metric, m, b, a in out if metric == "total_tokens_per_s"
                and ("q235a" in rid or "glmair-a100" in rid) and "fp8" not in rid]
    assert len(a100_moe) == 8
    before = statistics.median(abs(b / m - 1) for _, m, b, _ in a100_moe)
    after = statistics.median(abs(a / m - 1) for _, m, _, a in a100_moe)
    assert before > 0.4 and after < 0.15
    untouched = [(b, a) for rid, _, _, b, a in out if "h100" in rid or "q235h" in rid or "q32a" in rid or "fp8" in rid]
    assert untouched and all(b == a for b, a in untouched)
