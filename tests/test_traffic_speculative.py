"""Speculative decoding in the simulator (calc/traffic/speculative.py) and the analytic traffic models."""

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.spec.speculative import parse_speculative_config
from calc.timing.estimate import engine_numbers, estimate
from calc.timing.speculative import drafter_for, drafter_from_config
from calc.traffic.queueing import open_loop
from calc.traffic.simulator import EngineConfig, simulate
from calc.traffic.speculative import SpeculativeSim
from calc.traffic.workload import LengthSpec, make_workload

LLAMA8, H100 = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")


def test_accepted_draws_have_the_cumulative_distribution():
    # c = (0.7, 0.49, 0.343): E[j] = Σ c_i = 1.533; P(j = 0) = 1 − 0.7 = 0.3; P(j = 3) = 0.343
    e = engine_numbers(LLAMA8, H100)
    d = drafter_for(e, parse_speculative_config({"method": "ngram", "num_speculative_tokens": 3}, acceptance_rate=0.7))
    s = SpeculativeSim(d, (0.7, 0.49, 0.343), max_tokens=64, seed=3)
    j = s.accepted(np.full(200_000, 3))
    assert j.mean() == pytest.approx(1.533, abs=0.01)
    assert np.mean(j == 0) == pytest.approx(0.3, abs=0.005) and np.mean(j == 3) == pytest.approx(0.343, abs=0.005)
    # fewer drafts proposed (a squeezed budget): at most that many accepted
    assert s.accepted(np.full(1000, 1)).max() == 1


def _run(C, spec):
    sc = ServingConfig(input_len=512, output_len=256, max_model_len=2048)
    est = estimate(LLAMA8, H100, sc, speculative=spec)
    drafter = drafter_from_config(est.engine, spec, gpu=H100, serving=sc, efficiency=Efficiency())
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks))
    w = make_workload(arrival="closed", num_requests=20 * C, concurrency=C, input_len=LengthSpec("fixed", 512),
                      output_len=LengthSpec("lognormal", 256, cv=0.5), max_model_len=2048, seed=1)
    r = simulate(est.engine, w, cfg, speculative=(drafter, spec.accepted_at_position))
    a = estimate(LLAMA8, H100, sc.model_copy(update={"concurrency": C}), speculative=spec).serving
    return r, a


@pytest.mark.parametrize("C", [1, 16])
def test_simulated_tpot_agrees_with_the_closed_loop(C):
    spec = parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7)
    r, a = _run(C, spec)
    assert not r.truncated
    sim = float(np.nanmean(r.tpot_s[5 * C:]))
    assert sim == pytest.approx(float(a.tpot_s), rel=0.15)
    # every request still gets exactly its output tokens (accepted tokens capped at the end)
    assert np.all(np.isfinite(r.finish_s))


def test_open_loop_without_speculation_is_unchanged():
    e = engine_numbers(LLAMA8, H100)
    kw = dict(input_len=1024, output_len=256, rate_rps=[1.0, 5.0], max_num_seqs=256, max_num_batched_tokens=8192,
              kv_capacity_tokens=400_000)
    a, b = open_loop(e, **kw), open_loop(e, speculative=None, **kw)
    assert np.array_equal(a.ttft_s, b.ttft_s) and np.array_equal(a.tpot_s, b.tpot_s)


def test_open_loop_speculation_lowers_tpot_at_low_load():
    e = engine_numbers(LLAMA8, H100)
    d = drafter_for(e, parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7))
    kw = dict(input_len=1024, output_len=256, rate_rps=0.5, max_num_seqs=256, max_num_batched_tokens=8192,
              kv_capacity_tokens=400_000)
    assert float(open_loop(e, speculative=d, **kw).tpot_s) < 0.7 * float(open_loop(e, **kw).tpot_s)
