"""Speculative decoding (calc/timing/speculative.py, calc/spec/speculative.py, the CLI flags)."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import ServingConfig
from calc.spec.speculative import default_accepted_at_position, parse_speculative_config
from calc.spec.untrusted import InputError
from calc.timing.estimate import engine_numbers, estimate
from calc.timing.serving import decode_step
from calc.timing.speculative import (drafter_for, kv_capacity_tokens_with_drafter, mean_accepted_tokens_per_step,
                                     speculative_step, tokens_per_step_from_positions, verify_step)

LLAMA8 = get_model("meta-llama/Llama-3.1-8B")
H100 = get_gpu("h100-sxm")


@pytest.fixture(scope="module")
def e8():
    return engine_numbers(LLAMA8, H100)


class TestTokensPerStep:
    def test_hand_value(self):
        # a = 0.7, k = 3: 1 + 0.7 + 0.49 + 0.343 = 2.533 = (1 - 0.7^4) / (1 - 0.7) = 0.7599 / 0.3
        assert float(mean_accepted_tokens_per_step(acceptance_rate=0.7, num_speculative_tokens=3)) == pytest.approx(2.533)
        assert tokens_per_step_from_positions([0.7, 0.49, 0.343]) == pytest.approx(2.533)

    def test_edges(self):
        # a = 0: only the target's own token; a = 1: all k drafts + 1
        assert float(mean_accepted_tokens_per_step(acceptance_rate=0.0, num_speculative_tokens=5)) == 1.0
        assert float(mean_accepted_tokens_per_step(acceptance_rate=1.0, num_speculative_tokens=5)) == 6.0

    def test_broadcast(self):
        r = mean_accepted_tokens_per_step(acceptance_rate=np.array([[0.5], [0.8]]), num_speculative_tokens=np.array([1, 2, 3]))
        assert r.shape == (2, 3)

    @settings(max_examples=40, deadline=None)
    @given(st.floats(0.0, 0.99), st.integers(1, 16))
    def test_between_one_and_k_plus_one(self, a, k):
        tau = float(mean_accepted_tokens_per_step(acceptance_rate=a, num_speculative_tokens=k))
        assert 1.0 - 1e-12 <= tau <= k + 1.0 + 1e-12
        assert tau == pytest.approx(1.0 + sum(a ** i for i in range(1, k + 1)))


class TestDefaults:
    def test_eagle3_matches_the_measured_acceptance_length(self):
        # vLLM issue #20780: EAGLE-3 on Llama-3.1-8B, MT-Bench, mean acceptance length 2.79 at k = 3
        c = parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3})
        assert 1.0 + sum(c.accepted_at_position) == pytest.approx(2.793, abs=0.01)

    def test_extension_past_the_measured_positions_decreases(self):
        c = default_accepted_at_position("mtp", 3)  # 0.875, then i.i.d.: 0.875^2, 0.875^3
        assert c == pytest.approx((0.875, 0.765625, 0.669921875))


class TestParse:
    @pytest.mark.parametrize("raw, field", [
        ("[1]", "speculative_config"),
        ('{"method": "eagle"}', "speculative_config.num_speculative_tokens"),
        ('{"method": "eagle", "num_speculative_tokens": 0}', "speculative_config.num_speculative_tokens"),
        ('{"method": "eagle", "num_speculative_tokens": true}', "speculative_config.num_speculative_tokens"),
        ('{"method": "draft_model", "num_speculative_tokens": 2}', "speculative_config.model"),
        ('{"method": "x' + "y" * 5000 + '", "num_speculative_tokens": 2}', "speculative_config.method"),
        ('{"method": "eagle", "num_speculative_tokens": 2, "evil": 1}', "speculative_config"),
        ('{"method": "eagle", "num_speculative_tokens": 2, "position_acceptance": [0.5]}',
         "speculative_config.position_acceptance"),
        ("{", "speculative_config"),
    ])
    def test_bad_input_names_the_field(self, raw, field):
        with pytest.raises(InputError) as exc:
            parse_speculative_config(raw)
        assert exc.value.field == field
        assert len(str(exc.value)) < 400  # user text cut short

    def test_bad_acceptance(self):
        for a in (1.0, -0.1, float("nan"), "0.5", True):
            with pytest.raises(InputError):
                parse_speculative_config({"method": "ngram", "num_speculative_tokens": 2}, acceptance_rate=a)

    def test_method_from_model_name_as_vllm(self):
        c = parse_speculative_config({"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 2})
        assert c.method == "eagle3"

    def test_position_acceptance(self):
        c = parse_speculative_config({"method": "eagle", "num_speculative_tokens": 2, "position_acceptance": [0.8, 0.5]})
        assert c.accepted_at_position == pytest.approx((0.8, 0.4))  # 0.8, then 0.8 x 0.5


class TestStep:
    def test_verify_at_batch_one_costs_about_a_decode_step(self, e8):
        # batch 1: weights (16 GB at 0.8 x 3.35 TB/s = 6 ms) dominate both; 4 tokens instead of 1 add < 5 %
        v = float(verify_step(e8, batch=1, context_tokens=1000, num_speculative_tokens=3).step_s)
        d = float(decode_step(e8, batch=1, context_tokens=1000).step_s)
        assert d < v < 1.05 * d

    def test_hand_check_speedup_batch_one_and_largest(self, e8):
        # the hand check: acceptance 0.7, k = 3 (τ = 2.533). Batch 1: T_dec ≈ 7.2 ms, verify ≈ 7.2 ms,
        # EAGLE-3 drafting ≈ 0.8 + 3 x 0.65 ms launches + ~0.6 ms of roofline ≈ 3.4 ms: TPOT ≈ 10.6 / 2.533
        # ≈ 4.2 ms, a speed-up of ≈ 1.7x ≥ 1.5x. At the largest batch the verify's 4 x 512 tokens are
        # compute-bound: the speed-up is smaller.
        d = drafter_for(e8, parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7))
        s = speculative_step(e8, d, batch=np.array([1, 512]), context_tokens=1000)
        assert s.speedup[0] >= 1.5
        assert s.speedup[1] < s.speedup[0]
        assert float(s.step_s[0]) * 1e3 == pytest.approx(10.6, rel=0.1)

    def test_reverses_for_a_large_model_at_large_batch(self):
        e = engine_numbers(get_model("meta-llama/Llama-3.1-70B"), H100,
                           ServingConfig(tensor_parallel_size=4))
        d = drafter_for(e, parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7))
        s = speculative_step(e, d, batch=np.array([1, 8, 512]), context_tokens=1000)
        assert s.speedup[0] > 1.5 and s.speedup[-1] < 1.0  # the crossover

    def test_ngram_has_no_gpu_memory(self, e8):
        d = drafter_for(e8, parse_speculative_config({"method": "ngram", "num_speculative_tokens": 3}))
        assert d.weight_bytes == 0 and d.kv_bytes_per_token == 0
        assert float(kv_capacity_tokens_with_drafter(kv_pool_bytes=1e9, kv_bytes_per_token=1e5, drafter=d)) == 1e4

    def test_eagle_memory(self, e8):
        # EAGLE-3 on Llama-3.1-8B: one layer (218 M params) + fc 3 x 4096^2 (50 M) at 2 B + head 32000 x 4096 x 2 B
        # = 0.436 + 0.101 + 0.262 GB ≈ 0.80 GB; KV of 1 of 32 layers: 131072 / 32 = 4096 B per token
        d = drafter_for(e8, parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}))
        assert d.weight_bytes / 1e9 == pytest.approx(0.80, rel=0.05)
        assert d.kv_bytes_per_token == pytest.approx(4096)


class TestEstimate:
    def test_no_config_changes_nothing(self):
        s = ServingConfig(input_len=1000, output_len=200, concurrency=16)
        a, b = estimate(LLAMA8, H100, s).serving, estimate(LLAMA8, H100, s, speculative=None).serving
        assert float(a.tpot_s) == float(b.tpot_s) and float(a.ttft_s) == float(b.ttft_s)

    def test_batch_one_tpot_falls(self):
        s = ServingConfig(input_len=1000, output_len=200, concurrency=1)
        c = parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7)
        a, b = estimate(LLAMA8, H100, s).serving, estimate(LLAMA8, H100, s, speculative=c).serving
        assert float(a.tpot_s) / float(b.tpot_s) >= 1.5


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "calc", "estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu",
                           "h100-sxm", "--input-len", "1000", "--output-len", "200", *args],
                          capture_output=True, text=True, timeout=120)


class TestCli:
    def test_json_fields(self):
        r = _cli("--speculative-config", '{"method": "eagle3", "num_speculative_tokens": 3}', "--acceptance-rate", "0.7",
                 "--format", "json")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["mean_accepted_tokens_per_step"] == pytest.approx(2.533)
        assert out["tpot_without_speculation_s"] / out["tpot_s"] >= 1.5

    def test_bad_json_is_one_line(self):
        r = _cli("--speculative-config", '{"method": ')
        assert r.returncode != 0 and "Traceback" not in r.stderr and "speculative_config" in r.stderr

    def test_acceptance_without_config(self):
        r = _cli("--acceptance-rate", "0.7")
        assert r.returncode != 0 and "speculative_config" in r.stderr


class TestCliSimulate:
    def test_simulate_takes_the_flags(self):
        r = subprocess.run([sys.executable, "-m", "calc", "simulate", "--model", "meta-llama/Llama-3.1-8B", "--gpu",
                            "h100-sxm", "--input-len", "500", "--output-len", "100", "--concurrency", "1",
                            "--num-requests", "5", "--speculative-config",
                            '{"method": "eagle3", "num_speculative_tokens": 3}', "--acceptance-rate", "0.7",
                            "--format", "json"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        # batch 1: ≥ 1.5x faster than the plain analytic TPOT (the hand check above)
        assert out["tpot_without_speculation_s"] / out["tpot_s_mean"] >= 1.5

    def test_estimate_open_loop_takes_speculation(self):
        r = _cli("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3}', "--rate", "0.5",
                 "--format", "json")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["open_loop_tpot_s"] < out["tpot_without_speculation_s"]


class TestPlanner:
    def test_default_question_with_speculation_under_a_second(self):
        import time

        from calc.plan.search import PlanRequest, plan
        from calc.spec.catalog import list_gpus

        req = PlanRequest(input_len=1024, output_len=256, rate_rps=5, ttft_slo_s=1.0, tpot_slo_s=0.03)
        spec = parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7)
        plain = plan(LLAMA8, list_gpus(), req)
        plan(LLAMA8, list_gpus(), req, speculative=spec)  # warm caches
        t0 = time.perf_counter()
        r = plan(LLAMA8, list_gpus(), req, speculative=spec)
        assert time.perf_counter() - t0 < 1.0
        # the same option decodes faster with the drafter at small batches
        d = r.ranked[0]
        same = [x for x in plain.ranked if (x.gpu, x.tensor_parallel_size, x.quantization, x.kv_cache_dtype)
                == (d.gpu, d.tensor_parallel_size, d.quantization, d.kv_cache_dtype)]
        assert not same or d.tpot_s <= same[0].tpot_s * 1.05

    def test_cli_refuses_a_draft_model(self):
        r = subprocess.run([sys.executable, "-m", "calc", "plan", "--model", "meta-llama/Llama-3.1-8B", "--rate", "1",
                            "--input-len", "100", "--output-len", "10", "--ttft-slo-ms", "1000", "--tpot-slo-ms", "50",
                            "--speculative-config",
                            '{"method": "draft_model", "model": "x", "num_speculative_tokens": 2}'],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode != 0 and "Traceback" not in r.stderr and "draft model" in r.stderr


class TestBatchLines:
    @pytest.mark.parametrize("value", [{"method": "eagle3", "num_speculative_tokens": 10 ** 40}, [1, 2], "nope", 5,
                                       {"method": "eagle3", "num_speculative_tokens": 2, "position_acceptance": "x"},
                                       {"method": {"a": 1}, "num_speculative_tokens": 2}])
    def test_hostile_values_are_one_line_errors(self, value):
        line = json.dumps({"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "input_len": 100, "output_len": 10,
                           "speculative_config": value})
        r = subprocess.run([sys.executable, "-m", "calc", "estimate", "--batch", "-"], input=line + "\n",
                           capture_output=True, text=True, timeout=120)
        out = json.loads(r.stdout.strip().splitlines()[-1])
        assert "error" in out and "speculative_config" in out["error"] and "Traceback" not in r.stderr

    def test_a_line_with_speculation(self):
        line = json.dumps({"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "input_len": 100, "output_len": 50,
                           "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}})
        r = subprocess.run([sys.executable, "-m", "calc", "estimate", "--batch", "-"], input=line + "\n",
                           capture_output=True, text=True, timeout=120)
        out = json.loads(r.stdout.strip().splitlines()[-1])
        assert out["mean_accepted_tokens_per_step"] == pytest.approx(1.875)  # 1 + 0.875 (DeepSeek-V3 report)


def test_the_page_shows_the_current_checks():
    """calc/data/speculative_checks.json (the speculative-decoding page's "how close to real servers") is what
    bench/speculative_check.py --write gives now: 13 batch-1 MT-Bench runs on H100 (vLLM issue #20780),
    median |error| of TPOT 7.2 %, 2026-12-05."""
    from pathlib import Path  # noqa: PLC0415

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import speculative_check  # noqa: PLC0415

    from calc.timing.speculative import published_checks  # noqa: PLC0415

    fresh = json.loads(json.dumps(speculative_check.checks()))
    assert published_checks() == fresh, "run bench/speculative_check.py --write"
    assert fresh["n"] == 13 and fresh["median_abs_error"] == pytest.approx(0.072, abs=0.002)
