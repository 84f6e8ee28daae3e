"""calc/timing/operators.py: per-operator roofline tables. Expected values are written out by hand from
the Llama-2-7B / Llama-3.1-8B configs and the A100 / H100 datasheets (physics.md A3, B)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.spec.catalog import get_gpu, get_model
from calc.timing.estimate import engine_numbers, estimate
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.operators import compute_roofs, decode_table, first_compute_bound_batch, prefill_table, roofline
from calc.timing.roofline import OPERATORS
from calc.timing.serving import decode_step, prefill_step

L2_7B = get_model("meta-llama/Llama-2-7b-hf")
L3_8B = get_model("meta-llama/Llama-3.1-8B")
A100 = get_gpu("a100-80gb")
H100 = get_gpu("h100-sxm")
FP16 = ServingConfig(dtype="float16")

# Llama-2-7B: h = 4096, L = 32, I = 11008, H_q = H_kv = 32, d = 128.
MLP_PARAMS_7B = 3 * 4096 * 11008 * 32  # 4,328,521,728
KV_BYTES_PER_TOKEN_7B = 2 * 32 * 32 * 128 * 2  # 524,288


@pytest.fixture(scope="module")
def e7():
    return engine_numbers(L2_7B, A100, FP16)


class TestDecodeTable:
    def test_mlp_flops_and_weight_bytes_by_hand(self, e7):
        t = decode_table(e7, batch=1, context_tokens=2048).row("mlp")
        assert float(t["flops"]) == 2 * MLP_PARAMS_7B  # 2 FLOPs per weight per token
        assert float(t["weight_bytes"]) == MLP_PARAMS_7B * 2  # FP16
        # + activations: 1 token · 32 layers · (2·4096 + 3·11008) · 2 B
        assert float(t["activation_bytes"]) == 32 * (2 * 4096 + 3 * 11008) * 2
        assert float(t["intensity_flops_per_byte"]) == pytest.approx(1.0, rel=1e-3)
        assert t["bound"] == "memory"

    def test_attention_mha_intensity_is_one(self, e7):
        t = decode_table(e7, batch=1, context_tokens=2048).row("attention")
        assert float(t["flops"]) == 4 * 32 * 128 * 32 * 2048  # 4·H_q·d·L per cached key
        assert float(t["kv_bytes"]) == (2048 + 1) * KV_BYTES_PER_TOKEN_7B  # read 2048, write 1
        assert float(t["intensity_flops_per_byte"]) == pytest.approx(1.0, rel=1e-3)

    def test_attention_gqa_intensity_is_2g_over_bkv(self):
        # Llama-3.1-8B: 32 query heads share 8 KV heads (G = 4): AI ≈ 2G/b_kv = 4 FLOP/B (physics.md A3)
        e = engine_numbers(L3_8B, H100, FP16)
        t = decode_table(e, batch=8, context_tokens=4096).row("attention")
        assert float(t["intensity_flops_per_byte"]) == pytest.approx(4.0, rel=2e-3)
        fp8 = decode_table(engine_numbers(L3_8B, H100, ServingConfig(dtype="float16", kv_cache_dtype="fp8")),
                           batch=8, context_tokens=4096).row("attention")
        assert float(fp8["intensity_flops_per_byte"]) == pytest.approx(8.0, rel=5e-3)

    def test_attention_intensity_does_not_move_with_batch(self, e7):
        t = decode_table(e7, batch=[1, 16, 256], context_tokens=1024)
        ai = t.row("attention")["intensity_flops_per_byte"]
        assert np.allclose(ai, ai[0], rtol=1e-3)
        mlp = t.row("mlp")["intensity_flops_per_byte"]
        assert np.all(np.diff(mlp) > 0)  # the batch slider moves the linear layers toward the ridge

    def test_same_step_time_as_serving_model(self, e7):
        t = decode_table(e7, batch=[1, 7, 64], context_tokens=1500)
        ref = decode_step(e7, batch=np.array([1.0, 7.0, 64.0]), context_tokens=1500)
        assert np.allclose(t.step_s, ref.step_s)
        for i, op in enumerate(OPERATORS):
            assert np.allclose(t.time_s[i], ref.op_time_s[op])
        # and the serving estimate's decode step at R running sequences of mean context I + O/2
        r = estimate(L2_7B, A100, ServingConfig(dtype="float16", input_len=1024, output_len=256, concurrency=8))
        t8 = decode_table(e7, batch=8, context_tokens=1024 + 128)
        assert float(t8.step_s) == pytest.approx(float(r.serving.decode_step_s), rel=1e-12)

    def test_shares_add_up_with_comm_and_overhead(self, e7):
        t = decode_table(e7, batch=[1, 32], context_tokens=2048)
        total = t.time_share.sum(axis=0) + (t.comm_s + t.overhead_s) / t.step_s
        assert np.allclose(total, 1.0)

    def test_broadcast_shape(self, e7):
        t = decode_table(e7, batch=np.array([[1], [8]]), context_tokens=np.array([512, 1024, 2048]))
        assert t.flops.shape == (len(OPERATORS), 2, 3)
        assert t.bound.shape == (len(OPERATORS), 2, 3)
        assert t.mfu.shape == (2, 3)

    def test_mfu_bound_b_over_b_star(self, e7):
        # Memory-bound decode: MFU ≤ (2B/b_w)·BW/P = B/B* (B* = 153 on A100 FP16), here far below.
        t = decode_table(e7, batch=[1, 32], context_tokens=2048)
        assert np.all(t.mfu <= np.array([1, 32]) / 153.0)
        assert 0.003 < float(t.mfu[0]) < 0.0066


class TestPrefillTable:
    def test_linear_layers_compute_bound(self, e7):
        t = prefill_table(e7, prompt_tokens=2048)
        for op in ("qkv_proj", "o_proj", "mlp"):
            assert t.row(op)["bound"] == "compute"
        assert float(t.row("mlp")["flops"]) == 2 * MLP_PARAMS_7B * 2048

    def test_causal_attention_pairs(self, e7):
        t = prefill_table(e7, prompt_tokens=1000)
        assert float(t.row("attention")["flops"]) == 4 * 32 * 128 * 32 * (1000 * 1001 / 2)

    def test_same_step_time_as_serving_model(self, e7):
        t = prefill_table(e7, prompt_tokens=np.array([128.0, 4096.0]))
        assert np.allclose(t.step_s, prefill_step(e7, prompts=1.0, prompt_tokens=np.array([128.0, 4096.0])).step_s)

    def test_prefill_mfu_high(self, e7):
        # 2048-token prefill: linear layers near the prefill efficiency η · 2048/(2048 + B_½)
        eff = Efficiency()
        t = prefill_table(e7, prompt_tokens=2048)
        assert 0.5 * eff.prefill_flops_fraction < float(t.mfu) < eff.prefill_flops_fraction


class TestRoofline:
    def test_critical_batch_and_ridge_by_hand(self):
        r = roofline(L2_7B, A100, FP16, decode_batch=1, context_tokens=2048, prompt_tokens=2048)
        assert r.critical_batch == pytest.approx(312e12 * 2 / (2 * 2.039e12))  # 153.0
        assert r.compute_precision_ridge_flops_per_byte == pytest.approx(312e12 / 2.039e12)
        # FP8 weights on H100: FP8 peak 1978.9e12, 1 byte per weight -> 295 (the 16-bit figure again)
        h = roofline(L3_8B, H100, ServingConfig(dtype="float16", quantization="fp8"), decode_batch=1,
                     context_tokens=2048, prompt_tokens=2048)
        assert h.critical_batch == pytest.approx(1978.9e12 * 1 / (2 * 3.35e12))
        assert h.compute_peak_flops_per_s == 1978.9e12

    def test_roofs_per_gpu(self):
        assert [r.precision for r in compute_roofs(A100)] == ["fp16", "int8"]  # Ampere: no FP8
        assert [r.precision for r in compute_roofs(H100)] == ["fp16", "fp8", "int8"]
        assert compute_roofs(H100)[1].ridge_flops_per_byte == pytest.approx(1978.9e12 / 3.35e12)

    def test_invalid_input(self):
        with pytest.raises(ValueError, match="decode_batch"):
            roofline(L2_7B, A100, FP16, decode_batch=0, context_tokens=2048, prompt_tokens=2048)

    def test_first_compute_bound_batch(self, e7):
        t = decode_table(e7, batch=np.arange(1, 513), context_tokens=128)
        b = first_compute_bound_batch(t)
        # MLP turns compute-bound when 2B/b_w > effective ridge: P·η_c(B)/(BW·η_m), η_c = η·B/(B+B_½)
        eff = Efficiency()
        eta_c = eff.decode_flops_fraction * b / (b + eff.gemm_half_saturation_tokens)
        eff_ridge = 312e12 * eta_c / (2.039e12 * eff.hbm_bw_fraction)
        assert b >= eff_ridge * 0.95 and b - 1 < eff_ridge * 1.05
        assert np.isnan(first_compute_bound_batch(decode_table(e7, batch=[1, 2], context_tokens=128)))


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 2048), ctx=st.integers(1, 32768), prompt=st.integers(1, 16384))
def test_utilisations_never_exceed_one(batch, ctx, prompt):
    e = engine_numbers(L3_8B, H100, FP16)
    d = decode_table(e, batch=batch, context_tokens=ctx)
    p = prefill_table(e, prompt_tokens=prompt)
    for t in (d, p):
        assert 0 < float(t.mfu) <= 1 and 0 < float(t.mbu) <= 1
        assert np.all(t.achieved_flops_per_s <= t.attainable_flops_per_s * (1 + 1e-9))


@pytest.mark.parametrize("model, gpu", [("mistralai/Mistral-7B-v0.1", "h100-sxm"), ("google/gemma-2-9b", "h100-sxm"),
                                        ("mistralai/Mixtral-8x7B-v0.1", "h100-sxm"), ("deepseek-ai/DeepSeek-V3", "b200"),
                                        ("meta-llama/Llama-3.1-70B", "h100-sxm")])
def test_table_totals_are_the_serving_models_step(model, gpu):
    """The per-operator layout must add up to what calc.timing.serving computes (sliding windows, MoE,
    MLA, TP included): StepTime carries the FLOP and byte totals of the same composition."""
    tp = {"deepseek-ai/DeepSeek-V3": 8, "meta-llama/Llama-3.1-70B": 4}.get(model, 1)
    e = engine_numbers(get_model(model), get_gpu(gpu), ServingConfig(tensor_parallel_size=tp))
    ctx = np.array([1000.0, 8000.0, 20000.0])  # below and beyond a 4,096-token window
    d = decode_table(e, batch=16, context_tokens=ctx)
    ref = decode_step(e, batch=16, context_tokens=ctx)
    assert np.allclose(d.flops.sum(axis=0), ref.flops) and np.allclose(d.bytes.sum(axis=0), ref.bytes)
    assert np.allclose(d.step_s, ref.step_s)
    p = prefill_table(e, prompt_tokens=ctx)
    ref = prefill_step(e, prompts=1.0, prompt_tokens=ctx)
    assert np.allclose(p.flops.sum(axis=0), ref.flops) and np.allclose(p.bytes.sum(axis=0), ref.bytes)
    assert np.allclose(p.step_s, ref.step_s)
