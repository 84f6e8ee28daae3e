"""calc/timing/schedule.py: the step simulator. Token plans and step compositions are worked out by hand
from the policy (physics.md A8); step durations come from calc.timing.serving (tested elsewhere)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.spec.catalog import get_gpu, get_model
from calc.timing.estimate import engine_numbers
from calc.spec.inputs import ServingConfig
from calc.timing.schedule import (DECODE, PREFILL, QUEUED, STALLED, Request, mixed_workload, segments, simulate)
from calc.timing.serving import decode_step, engine_step, prefill_step

E = engine_numbers(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"), ServingConfig(dtype="float16"))


def step_s(**kw) -> float:
    return float(engine_step(E, **kw).step_s)


class TestChunkedPolicy:
    def test_token_plan_by_hand(self):
        # budget 256: step 1 = A's whole 100-token prompt + 156 of B's 300; step 2 = A decodes (1)
        # + B's last 144; step 3 = both decode. A: 3 outputs (1 from prefill + 2), B: 2.
        r = simulate(E, [Request(0.0, 100, 3), Request(0.0, 300, 2)], max_num_seqs=8, max_num_batched_tokens=256,
                     enable_chunked_prefill=True)
        assert r.tokens.tolist() == [[100, 156], [1, 144], [1, 1]]
        assert r.phase.tolist() == [[PREFILL, PREFILL], [DECODE, PREFILL], [DECODE, DECODE]]
        assert r.emits.tolist() == [[True, False], [True, True], [True, True]]

    def test_step_durations_from_engine_step(self):
        r = simulate(E, [Request(0.0, 100, 3), Request(0.0, 300, 2)], max_num_seqs=8, max_num_batched_tokens=256,
                     enable_chunked_prefill=True)
        d1 = step_s(decode_tokens=0, decode_context_tokens_sum=0, prefill_tokens=256,
                    prefill_attention_pairs=100 * 101 / 2 + 156 * 157 / 2, prefill_cached_tokens=0,
                    logits_tokens=2)  # A's whole prompt and B's first chunk: vLLM V1 computes logits for both
        # step 2: A decodes attending 100 + 1 keys; B's chunk of 144 after 156 cached: 144·156 + 144·145/2 pairs
        d2 = step_s(decode_tokens=1, decode_context_tokens_sum=101, prefill_tokens=144,
                    prefill_attention_pairs=144 * 156 + 144 * 145 / 2, prefill_cached_tokens=156, logits_tokens=2)
        d3 = step_s(decode_tokens=2, decode_context_tokens_sum=(100 + 2) + (300 + 1), prefill_tokens=0,
                    prefill_attention_pairs=0, prefill_cached_tokens=0, logits_tokens=2)
        assert np.allclose(r.duration_s, [d1, d2, d3])
        assert np.allclose(r.start_s, [0.0, d1, d1 + d2])
        assert r.ttft_s.tolist() == pytest.approx([d1, d1 + d2])
        assert r.tpot_s.tolist() == pytest.approx([(d2 + d3) / 2, d3])

    def test_single_request_matches_prefill_then_decode_steps(self):
        r = simulate(E, [Request(0.0, 512, 4)], max_num_seqs=1, max_num_batched_tokens=8192, enable_chunked_prefill=True)
        assert float(r.ttft_s[0]) == pytest.approx(float(prefill_step(E, prompts=1, prompt_tokens=512).step_s))
        dec = [float(decode_step(E, batch=1, context_tokens=512 + k).step_s) for k in (1, 2, 3)]
        assert float(r.tpot_s[0]) == pytest.approx(sum(dec) / 3)

    def test_decodes_never_stall_and_budget_holds(self):
        reqs = mixed_workload(n_requests=6, long_prompt_tokens=3000, short_prompt_tokens=100, output_tokens=40,
                              arrival_gap_s=0.02)
        r = simulate(E, reqs, max_num_seqs=8, max_num_batched_tokens=512, enable_chunked_prefill=True)
        assert not r.truncated
        assert np.all(r.tokens.sum(axis=1) <= 512)
        assert not np.any(r.phase == STALLED)
        assert np.nanmax(r.max_itl_s) < 0.1  # no step is a whole 3,000-token prefill

    def test_max_num_seqs_queues_requests(self):
        reqs = [Request(0.0, 64, 20)] * 4
        r = simulate(E, reqs, max_num_seqs=2, max_num_batched_tokens=2048, enable_chunked_prefill=True)
        running = ((r.phase == PREFILL) | (r.phase == DECODE) | (r.phase == STALLED)).sum(axis=1)
        assert running.max() == 2
        assert np.any(r.phase[:, 2] == QUEUED)
        assert r.ttft_s[2] > r.finish_s[0] - 1e-12  # the third waits for a slot


class TestWholePolicy:
    def test_prefill_stalls_decodes(self):
        # A decodes alone until B (2,000-token prompt) arrives; B's whole prefill then takes a step
        # in which A produces nothing: A's worst inter-token gap is that prefill step.
        reqs = [Request(0.0, 64, 50), Request(0.05, 2000, 5)]
        r = simulate(E, reqs, max_num_seqs=8, max_num_batched_tokens=512, enable_chunked_prefill=False)
        pf = np.flatnonzero(r.phase[:, 1] == PREFILL)
        assert len(pf) == 1 and r.tokens[pf[0], 1] == 2000  # whole prompt (budget raised to 2,000)
        assert r.phase[pf[0], 0] == STALLED
        assert r.token_budget == 2000
        assert r.max_itl_s[0] >= r.duration_s[pf[0]]
        chunked = simulate(E, reqs, max_num_seqs=8, max_num_batched_tokens=512, enable_chunked_prefill=True)
        assert chunked.max_itl_s[0] < r.max_itl_s[0] / 2

    def test_arrival_respected(self):
        reqs = [Request(0.0, 64, 50), Request(0.05, 2000, 5)]
        r = simulate(E, reqs, max_num_seqs=8, max_num_batched_tokens=512, enable_chunked_prefill=False)
        first = np.flatnonzero(r.tokens[:, 1] > 0)[0]
        assert r.start_s[first] >= 0.05 - 1e-12
        assert r.start_s[first - 1] < 0.05  # not later than needed: the step before started earlier


class TestLimitsAndSegments:
    def test_kv_capacity_blocks_admission(self):
        reqs = [Request(0.0, 100, 10), Request(0.0, 100, 10)]
        r = simulate(E, reqs, max_num_seqs=8, max_num_batched_tokens=2048, enable_chunked_prefill=True,
                     kv_capacity_tokens=150)
        assert r.first_token_s[1] > r.finish_s[0] - 1e-12

    def test_request_larger_than_kv_never_runs(self):
        r = simulate(E, [Request(0.0, 100, 10)], max_num_seqs=8, max_num_batched_tokens=2048,
                     enable_chunked_prefill=True, kv_capacity_tokens=50)
        assert r.truncated and np.isnan(r.ttft_s[0])

    def test_step_cap(self):
        r = simulate(E, [Request(0.0, 10, 1000)], max_num_seqs=1, max_num_batched_tokens=64,
                     enable_chunked_prefill=True, max_steps=100)
        assert r.truncated and len(r.start_s) == 100 and np.isnan(r.finish_s[0])

    def test_invalid(self):
        with pytest.raises(ValueError, match="prompt_tokens"):
            simulate(E, [Request(0.0, 0, 1)], max_num_seqs=1, max_num_batched_tokens=64, enable_chunked_prefill=True)
        with pytest.raises(ValueError, match="n_requests"):
            mixed_workload(n_requests=0, long_prompt_tokens=1, short_prompt_tokens=1, output_tokens=1, arrival_gap_s=0)

    def test_segments_merge_decodes_keep_chunks(self):
        r = simulate(E, [Request(0.0, 600, 5)], max_num_seqs=1, max_num_batched_tokens=256, enable_chunked_prefill=True)
        s = segments(r)
        assert s.phase.tolist() == [PREFILL, PREFILL, PREFILL, DECODE]
        assert s.tokens.tolist() == [256, 256, 88, 4]
        assert s.steps.tolist() == [1, 1, 1, 4]
        assert s.end_s[-1] == pytest.approx(r.finish_s[0])


@settings(max_examples=30, deadline=None)
@given(prompts=st.lists(st.integers(1, 3000), min_size=1, max_size=8), out=st.integers(1, 40),
       gap=st.floats(0.0, 0.2), seqs=st.integers(1, 8), budget=st.integers(16, 4096), chunked=st.booleans())
def test_every_request_gets_all_its_tokens(prompts, out, gap, seqs, budget, chunked):
    reqs = [Request(i * gap, p, out) for i, p in enumerate(prompts)]
    r = simulate(E, reqs, max_num_seqs=seqs, max_num_batched_tokens=budget, enable_chunked_prefill=chunked)
    assert not r.truncated
    # each request processes its prompt plus one token per output after the first
    assert r.tokens.sum(axis=0).tolist() == [p + out - 1 for p in prompts]
    assert r.emits.sum(axis=0).tolist() == [out] * len(prompts)
    assert np.all(r.ttft_s > 0) and np.all(r.first_token_s >= r.arrival_s)
    assert np.all(np.diff(r.start_s) > 0)
    if chunked:
        assert np.all(r.tokens.sum(axis=1) <= budget)


@pytest.mark.parametrize("model", ["mistralai/Mistral-7B-v0.1", "google/gemma-2-9b"])
def test_sliding_window_steps_match_the_serving_model(model):
    """A 6,000-token prompt (past the 4,096-token window) alone, then decodes: the simulator's
    steps are calc.timing.serving's prefill_step (chunk after cached tokens) and decode_step."""
    e = engine_numbers(get_model(model), get_gpu("h100-sxm"), ServingConfig())
    r = simulate(e, [Request(0.0, 6000, 3)], max_num_seqs=1, max_num_batched_tokens=4000, enable_chunked_prefill=True)
    expected = [float(prefill_step(e, prompts=1, prompt_tokens=4000).step_s),
                float(prefill_step(e, prompts=1, prompt_tokens=2000, cached_tokens=4000).step_s),
                float(decode_step(e, batch=1, context_tokens=6001).step_s),
                float(decode_step(e, batch=1, context_tokens=6002).step_s)]
    assert np.allclose(r.duration_s, expected)
