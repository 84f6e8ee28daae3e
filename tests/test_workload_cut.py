"""calc.traffic.workload.cut_lengths: the moments of the lengths make_workload runs once it cuts them to
the window, against large draws of make_workload itself (the one source of the cut)."""

import numpy as np
import pytest

from calc.traffic.workload import CutLengths, cut_input_quantile, cut_lengths, length_spec, make_workload


@pytest.mark.parametrize("kind, i, o, spread, window", [
    ("lognormal", 1792, 256, 0.5, 2048),   # the default scenario at max_model_len 2,048: 41 % cut
    ("lognormal", 1000, 1000, 1.0, 2048),  # both sides cut
    ("lognormal", 1792, 256, 2.0, 2048),
    ("lognormal", 3000, 500, 0.5, 4096),
    ("uniform", 1792, 256, 0.5, 2048),     # the uniform's [lo, hi] already inside the window: [896, 2,048]
    ("uniform", 1000, 1000, 0.9, 2048),
])
def test_moments_match_the_workloads_draws(kind, i, o, spread, window):
    w = make_workload(arrival="poisson", num_requests=200_000, rate_per_s=1.0, input_len=length_spec(kind, i, spread, window),
                      output_len=length_spec(kind, o, spread, window), max_model_len=window, seed=3)
    x, y = w.input_len.astype(float), w.output_len.astype(float)
    c = cut_lengths(kind, i, o, spread, window)
    assert c.input_mean == pytest.approx(x.mean(), rel=0.005) and c.output_mean == pytest.approx(y.mean(), rel=0.005)
    assert c.input_cv == pytest.approx(x.std() / x.mean(), abs=0.01)
    assert c.output_cv == pytest.approx(y.std() / y.mean(), abs=0.01)
    assert 0.0 < c.cut_fraction < 1.0


def test_nothing_cut_is_the_asked_traffic():
    # a window no draw reaches, and fixed lengths inside it: the asked means and CVs, exactly
    assert cut_lengths("lognormal", 1792, 256, 0.5, 131072) == CutLengths(1792.0, 0.5, 256.0, 0.5, 0.0)
    assert cut_lengths("fixed", 1792, 256, 0.5, 2048) == CutLengths(1792.0, 0.0, 256.0, 0.0, 0.0)
    assert cut_lengths("uniform", 1000, 200, 0.5, 8192).input_mean == 1000.0


def test_the_serving_config_carries_the_cut_means():
    from calc.spec.inputs import ServingConfig
    from calc.traffic.workload import cut_serving

    s = ServingConfig(input_len=1792, output_len=256, max_model_len=2048)
    cut_s, c = cut_serving(s, "lognormal", 0.5, None)
    assert (cut_s.input_len, cut_s.output_len) == (round(c.input_mean), round(c.output_mean)) == (1454, 256)
    assert cut_serving(s, "fixed", 0.5, None)[0] is s  # nothing cut: the same config
    # max_model_len unset: the model's window (4,096 for Llama-2-7B) cuts, None does not
    free = ServingConfig(input_len=1792, output_len=256)
    assert cut_serving(free, "lognormal", 0.5, 4096)[1].cut_fraction > 0 and cut_serving(free, "lognormal", 0.5, None)[0] is free


@pytest.mark.parametrize("kind, i, o, spread, window", [
    ("lognormal", 1792, 256, 0.5, 2048),
    ("lognormal", 1792, 256, 1.0, 2048),
    ("lognormal", 3000, 500, 0.5, 4096),
    ("uniform", 1792, 256, 0.6, 2048),
    ("lognormal", 1792, 256, 0.5, 131072),  # nothing cut: the lognormal's own quantiles
])
def test_prompt_quantiles_match_the_workloads_draws(kind, i, o, spread, window):
    w = make_workload(arrival="poisson", num_requests=200_000, rate_per_s=1.0, input_len=length_spec(kind, i, spread, window),
                      output_len=length_spec(kind, o, spread, window), max_model_len=window, seed=5)
    for q in (0.5, 0.9, 0.95, 0.99):
        assert cut_input_quantile(kind, i, o, spread, window, q) == pytest.approx(np.quantile(w.input_len, q), rel=0.01)


def test_the_models_percentile_takes_the_cut_prompts_own_quantile():
    """open_loop's own-prompt term at the percentile: the cut lengths' quantile (1,910 tokens at the default
    scenario's window of 2,048) instead of a lognormal of their mean and CV (2,154): a lower P95, the same mean."""
    from calc.spec.catalog import get_gpu, get_model
    from calc.timing.estimate import engine_numbers
    from calc.traffic.queueing import lognormal_quantile, open_loop

    e = engine_numbers(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"))
    c = cut_lengths("lognormal", 1792, 256, 0.5, 2048)
    kw = dict(input_len=c.input_mean, output_len=c.output_mean, rate_rps=2.0, max_num_seqs=256, max_num_batched_tokens=2048,
              kv_capacity_tokens=200_000, input_cv=c.input_cv, output_cv=c.output_cv, percentile=95.0)
    plain = open_loop(e, **kw)
    same = open_loop(e, input_quantile_tokens=lognormal_quantile(mean=c.input_mean, cv=c.input_cv, q=0.95), **kw)
    cut = open_loop(e, input_quantile_tokens=cut_input_quantile("lognormal", 1792, 256, 0.5, 2048, 0.95), **kw)
    assert float(same.ttft_percentile_s) == pytest.approx(float(plain.ttft_percentile_s), rel=1e-12)
    assert float(cut.ttft_s) == float(plain.ttft_s) and float(cut.ttft_percentile_s) < float(plain.ttft_percentile_s)

