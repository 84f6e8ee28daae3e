"""vLLM on GeForce cards: Efficiency.geforce_flops_fraction (calc.timing.engine_profile.gemm_flops_fractions),
chosen on public runs (bench/data/geforce_found.jsonl) and checked on the RTX 4090 prefix-cache runs kept back
(bench/geforce_check.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.engine_profile import gemm_flops_fractions
from calc.timing.estimate import engine_numbers

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


def test_only_geforce_parts_with_fp32_accumulate_take_the_geforce_fraction():
    e = Efficiency(geforce_flops_fraction=0.85)
    for gpu in ("rtx-3090", "rtx-4090", "rtx-5090"):
        assert gemm_flops_fractions(get_gpu(gpu), "bf16", e) == (0.85, 0.85)
    # datacenter and professional parts keep vLLM's fractions (x 0.6 on Hopper)
    assert gemm_flops_fractions(get_gpu("l40s"), "bf16", e) == (0.6, 0.6)
    assert gemm_flops_fractions(get_gpu("a100-80gb"), "fp16", e) == (0.6, 0.6)
    assert gemm_flops_fractions(get_gpu("h100-sxm"), "bf16", e) == pytest.approx((0.36, 0.36))
    # FP8 GEMMs on a 4090 are not the 16-bit half-rate path; llama.cpp's FP16-accumulate GEMMs run at the full rate
    assert gemm_flops_fractions(get_gpu("rtx-4090"), "fp8", e) == (0.6, 0.6)
    assert gemm_flops_fractions(get_gpu("rtx-4090"), "fp16", e.model_copy(update={"fp16_accumulate_share": 1.0})) == (0.6, 0.6)


def test_the_fp16_accumulate_share_moves_the_fraction_continuously():
    # the sidebar's FP16-accumulate share used to switch a GeForce card back to the datacenter fractions at any
    # share above 0; the blend is g at s = 0 and the prefill/decode fraction f at s = 1. At s = 0.5 on a 4090
    # (P32 165.2, P16 330.3 TFLOP/s, g 0.85, f 0.6): (0.5/165.2 + 0.5/330.3) / (0.5/(165.2 x 0.85) + 0.5/(330.3 x 0.6))
    # = 0.004540 / 0.006083 = 0.7463
    gpu = get_gpu("rtx-4090")
    at = [gemm_flops_fractions(gpu, "bf16", Efficiency(fp16_accumulate_share=s))[0] for s in (0.0, 1e-6, 0.5, 1.0)]
    assert at[0] == 0.85 and at[1] == pytest.approx(0.85, abs=1e-5)
    assert at[2] == pytest.approx(0.7463, abs=1e-4) and at[3] == pytest.approx(0.6)
    # the time of a GEMM against the blended peak is then monotone in the share: more FP16 accumulation, faster
    from calc.timing.engine_profile import engine_peak_flops_per_s
    rates = [engine_peak_flops_per_s(gpu, "bf16", s) * gemm_flops_fractions(gpu, "bf16", Efficiency(fp16_accumulate_share=s))[0]
             for s in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert rates == sorted(rates)


def test_a_4090_prefill_step_hand_computed():
    # Llama-3.1-8B BF16, one 2,048-token prompt on an RTX 4090: the MLP's 3 x 4096 x 14336 weights per layer,
    # 32 layers: 2 x 5.637e9 x 2048 = 2.309e13 FLOPs at 165.2e12 x 0.85 x 2048 / (2048 + 64) = 136.0 TFLOP/s
    # -> 169.8 ms (at the datacenter 0.6: 96.0 TFLOP/s, 240.5 ms)
    from calc.timing.serving import prefill_step
    model, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("rtx-4090")
    sv = ServingConfig(dtype="bfloat16", max_model_len=4096)
    e = engine_numbers(model, gpu, sv, Efficiency())
    assert (e.prefill_flops_fraction, e.decode_flops_fraction) == (0.85, 0.85)
    mlp_s = float(prefill_step(e, prompts=1, prompt_tokens=2048).op_time_s["mlp"])
    assert mlp_s == pytest.approx(2 * 3 * 4096 * 14336 * 32 * 2048 / (165.2e12 * 0.85 * 2048 / 2112), rel=1e-3)
    assert mlp_s == pytest.approx(0.1698, abs=5e-4)


def test_the_fraction_is_the_rule_s_choice_on_the_found_runs_and_holds_on_the_kept_back_ones():
    """bench/geforce_check.py: 0.85 has the lowest median |error| over the 37 found values (14.9 %, tied with
    0.8 and 1.0; the lowest TTFT median of those, 34.3 %); the datacenter 0.6 leaves them at 27.7 %. The RTX 4090
    prefix-cache runs (18 values, not used to choose it): 34.9 % -> 11.1 %; 35.0 % -> 13.0 % since they are asked with
    their endpoint as calibrate asks a row (2026-12-05: the gpustack bursts prefill the Qwen chat template's 8 tokens,
    so their 1K burst's output tokens/s reads -13 % where it read -10 %). The rule's scores still hold with rows that
    state a median asked for the simulated median (the 3090 sweep)."""
    import geforce_check as G
    f, scores = G.choose()
    assert f == Efficiency().geforce_flops_fraction == 0.85
    assert scores[0.85] == (0.149, 0.343) and scores[0.6][0] == 0.277
    kept = G.median_abs(G.prefix_4090_errors())
    before = G.median_abs(G.prefix_4090_errors(Efficiency(geforce_flops_fraction=0.6)))
    assert kept <= 0.135 and before >= 0.34


def test_found_rows_are_sourced_and_written_before_prediction():
    import geforce_check as G
    rows = G.rows()
    assert len(rows) == 20 and len({r["id"] for r in rows}) == 20
    for r in rows:
        assert r.get("source_url", r["source"]).startswith("https://") and r["options"]["gpu"] in ("rtx-4090", "rtx-3090")
        assert any("written down before any prediction" in n for n in r["notes"])


def test_calibrate_on_geforce_rows_fits_the_geforce_fraction():
    """calc.cli.validate.fitted_inputs: rows on an RTX 4090 fit geforce_flops_fraction (the prefill and decode
    fractions do not act there); started from the datacenter 0.6, the IOG Llama-3-8B rows at 16 and 32 req/s
    pull it up and the error down."""
    import geforce_check as G
    from calc.cli.validate import calibrate, fitted_inputs, mean_log_error

    rows = [r for r in G.rows() if r["id"] in ("iog-l3-8b-4090-rr16", "iog-l3-8b-4090-rr32")]
    fit = fitted_inputs(rows)
    assert "geforce_flops_fraction" in fit and "prefill_flops_fraction" not in fit
    start = Efficiency(geforce_flops_fraction=0.6)
    fitted, _ = calibrate(rows, start, max_evaluations=24)
    assert fitted.geforce_flops_fraction > 0.7
    assert mean_log_error(rows, fitted) < mean_log_error(rows, start)
