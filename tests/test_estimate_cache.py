"""ui.perf.view.cached_estimate: memoized by every input, so any changed input changes the result."""

from __future__ import annotations

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.estimate import estimate
from ui.perf import view as V
from ui.perf.controls import Variant

ARCH = get_model("meta-llama/Llama-2-7b-hf")
GPU = get_gpu("a100-80gb")
BASE = Variant("", ServingConfig(dtype="float16", input_len=1792, output_len=256, concurrency=16), GPU, True)
CONC = np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=np.int64)


def _tpot(v: Variant, eff: Efficiency = Efficiency(), conc=CONC) -> np.ndarray:
    return np.asarray(V.cached_estimate(v, ARCH, eff, conc).serving.tpot_s)


def test_equal_to_estimate_and_reused():
    V._estimate_cached.cache_clear()
    direct = estimate(ARCH, GPU, BASE.serving, Efficiency(), concurrency=CONC, enable_chunked_prefill=True)
    assert np.array_equal(_tpot(BASE), np.asarray(direct.serving.tpot_s))
    _tpot(BASE)
    # the sidebar's concurrency is not an input of a sweep: the same entry serves another value
    _tpot(Variant("", BASE.serving.model_copy(update={"concurrency": 200}), GPU, True))
    info = V._estimate_cached.cache_info()
    assert (info.hits, info.misses) == (2, 1)


@pytest.mark.parametrize("change", [
    lambda v: (Variant("", v.serving.model_copy(update={"kv_cache_dtype": "fp8"}), v.gpu, v.chunked), Efficiency(), CONC),
    lambda v: (Variant("", v.serving.model_copy(update={"input_len": 900}), v.gpu, v.chunked), Efficiency(), CONC),
    lambda v: (Variant("", v.serving, v.gpu, False), Efficiency(), CONC),
    lambda v: (Variant("", v.serving, get_gpu("h100-sxm"), v.chunked), Efficiency(), CONC),
    # same GPU id, different numbers (a user-defined GPU): keyed by the whole spec, not the id
    lambda v: (Variant("", v.serving, v.gpu.model_copy(update={"hbm_bw_bytes_per_s": v.gpu.hbm_bw_bytes_per_s / 2}),
                       v.chunked), Efficiency(), CONC),
    lambda v: (v, Efficiency(hbm_bw_fraction=0.5), CONC),
    lambda v: (v, Efficiency(), CONC * 2),
], ids=["kv_dtype", "input_len", "chunked", "gpu", "gpu_numbers", "efficiency", "sweep"])
def test_a_changed_input_changes_the_result(change):
    before = _tpot(BASE)
    v, eff, conc = change(BASE)
    after = _tpot(v, eff, conc)
    direct = estimate(ARCH, v.gpu, v.serving, eff, concurrency=conc, enable_chunked_prefill=v.chunked)
    assert np.array_equal(after, np.asarray(direct.serving.tpot_s))
    assert not np.array_equal(before, after)


def test_probe_is_the_scalar_estimate():
    p = V.probe(BASE, ARCH, Efficiency())
    d = estimate(ARCH, GPU, BASE.serving, Efficiency(), concurrency=np.nan, enable_chunked_prefill=True)
    assert float(p.serving.running) == float(d.serving.running)
    assert float(p.serving.tpot_s) == float(d.serving.tpot_s)


def test_schedule_runs_equal_simulate_and_change_with_each_input():
    from calc.timing.estimate import engine_numbers
    from calc.timing.schedule import mixed_workload, simulate

    reqs = mixed_workload(n_requests=6, long_prompt_tokens=2048, short_prompt_tokens=128, output_tokens=64,
                          arrival_gap_s=0.05)
    kw = dict(max_num_seqs=8, max_num_batched_tokens=512, kv_capacity_tokens=1e6)

    def ttft(serving=BASE.serving, gpu=GPU, eff=Efficiency(), requests=reqs, **over):
        runs = V.schedule_runs(ARCH, gpu, serving, eff, requests, **(kw | over))
        return {k: np.asarray(r.ttft_s) for k, r in runs.items()}

    base = ttft()
    e = engine_numbers(ARCH, GPU, BASE.serving, Efficiency())
    for name, chunked in (("chunked", True), ("whole", False)):
        assert np.array_equal(base[name], np.asarray(simulate(e, reqs, enable_chunked_prefill=chunked, **kw).ttft_s))
    assert np.array_equal(ttft(serving=BASE.serving.model_copy(update={"concurrency": 99}))["chunked"], base["chunked"])
    changed = [ttft(serving=BASE.serving.model_copy(update={"kv_cache_dtype": "fp8", "dtype": "bfloat16"})),
               ttft(gpu=get_gpu("h100-sxm")), ttft(eff=Efficiency(step_overhead_s=0.01)),
               ttft(requests=reqs[:4]), ttft(max_num_batched_tokens=256), ttft(max_num_seqs=2)]
    for other in changed:
        assert not all(np.array_equal(np.asarray(other[k])[:4], base[k][:4]) for k in base), other


def test_cached_roofline_equals_roofline_and_changes_with_each_input():
    from calc.timing.operators import roofline

    kw = dict(decode_batch=16, context_tokens=2048, prompt_tokens=1792)

    def step(serving=BASE.serving, gpu=GPU, eff=Efficiency(), **over):
        return float(V.cached_roofline(ARCH, gpu, serving, eff, **(kw | over)).decode.step_s)

    base = step()
    assert base == float(roofline(ARCH, GPU, BASE.serving, Efficiency(), **kw).decode.step_s)
    assert step(serving=BASE.serving.model_copy(update={"concurrency": 99})) == base
    for other in (step(decode_batch=32), step(context_tokens=4096), step(gpu=get_gpu("h100-sxm")),
                  step(eff=Efficiency(hbm_bw_fraction=0.5)),
                  step(serving=BASE.serving.model_copy(update={"kv_cache_dtype": "fp8"}))):
        assert other != base
    # the prompt only moves the prefill table
    assert float(V.cached_roofline(ARCH, GPU, BASE.serving, Efficiency(), **(kw | {"prompt_tokens": 512})).prefill.step_s) \
        != float(V.cached_roofline(ARCH, GPU, BASE.serving, Efficiency(), **kw).prefill.step_s)


# ----------------------------------------------------------------------------- frontier_series

def _series(v: Variant = BASE, *, tpot_slo_s: float = 0.05, price=None, label: str = "you"):
    return V.frontier_series(v, ARCH, Efficiency(), concurrency=CONC, label=label, color="#000000", ttft_slo_s=0.5,
                             tpot_slo_s=tpot_slo_s, chosen=16, price=price)


def test_frontier_series_memoized_and_equal_to_the_direct_computation():
    first = _series()
    assert _series() is first  # a rerun with the same inputs: the same shared result
    direct = V._frontier_series(BASE, ARCH, Efficiency(), concurrency=CONC, label="you", color="#000000",
                                ttft_slo_s=0.5, tpot_slo_s=0.05, chosen=16)
    for name in direct.__dataclass_fields__:
        a, b = getattr(first, name), getattr(direct, name)
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=name)
        elif name != "variant":
            assert a == b, name


@pytest.mark.parametrize("kw", [dict(tpot_slo_s=0.02), dict(price=9.99), dict(label="other"),
                                dict(v=Variant("kv:fp8", BASE.serving.model_copy(update={"kv_cache_dtype": "fp8"}),
                                               GPU, True))])
def test_frontier_series_any_changed_input_is_a_new_result(kw):
    base, other = _series(), _series(**kw)
    assert other is not base
    if "tpot_slo_s" in kw:  # a tighter TPOT target: fewer points meet it, never more
        assert np.count_nonzero(other.feasible) < np.count_nonzero(base.feasible)
    if "price" in kw:  # cost per million output tokens = price / 3600 / (tokens/s) × 1e6, per GPU-hour
        i = base.best
        assert float(other.cost_per_million_usd[i]) == pytest.approx(9.99 / 3600 / float(base.output_tokens_per_s[i]) * 1e6)
