"""The finite-source factor of the token budget's queue (calc.traffic.chunk_queue.finite_source_factor):
a closed loop of R clients cannot queue more than R prompts, and a queued client does not decode,
so it does not come back: near the budget's capacity the queue is shorter than Pollaczek-Khinchine's."""

import heapq
import math

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import ServingConfig
from calc.timing.estimate import estimate
from calc.traffic.chunk_queue import finite_source_factor, finite_source_wait_quantile_s, think_time_variance
from calc.traffic.queueing import wait_quantile_s
from calc.traffic.simulator import EngineConfig, simulate
from calc.traffic.workload import LengthSpec, make_workload


def test_factor_at_a_cut_at_the_mean_is_two_over_pi():
    # y = (1 − ρ)·√(2r/ρ) = M(0) = √(2/π) at ρ = 1/2, r = 2/π: the normal cut at its mean has
    # mean σ·√(2/π), h(0)·M(0) = 2/π
    g = finite_source_factor(load=0.5, think_steps=2.0 / math.pi, service_steps=1.0)
    assert float(g) == pytest.approx(2.0 / math.pi, abs=1e-4)


def test_factor_limits_monotone_and_broadcast():
    rho = np.array([[0.1], [0.5], [0.8], [0.95]])
    r = np.array([1.0, 10.0, 100.0, 1e6])
    g = finite_source_factor(load=rho, think_steps=r * 0.2, service_steps=0.2)
    assert g.shape == (4, 4)
    assert np.all((g > 0.0) & (g <= 1.0))
    assert np.all(np.diff(g, axis=0) < 0.0)  # nearer the capacity, the finite source holds the queue shorter
    assert np.all(np.diff(g, axis=1) > 0.0)  # clients away for longer: nearer an unbounded queue
    assert np.allclose(g[:, -1], 1.0, atol=1e-3)
    y = 0.9 * math.sqrt(2.0 * 1e3 / 0.1)  # far past the table's end: 1 − 1/y²
    assert float(finite_source_factor(load=0.1, think_steps=1e3, service_steps=1.0)) == pytest.approx(1 - 1 / y**2)
    assert float(finite_source_factor(load=0.0, think_steps=5.0, service_steps=1.0)) == 1.0


def repairman_waits_s(*, clients, think_s, service_s, services, seed=1, think_cv=None):
    """(every wait, utilization) of N clients each back an exponential think time (``think_cv``: a
    lognormal one of that CV) after its deterministic service at one FCFS server (the machine-repairman
    M/D/1//N, or G/D/1//N), the first 10 % dropped."""
    rng = np.random.default_rng(seed)
    if think_cv is None:
        thinks = iter(rng.exponential(think_s, clients + services))
    else:
        s2 = math.log1p(think_cv**2)
        thinks = iter(think_s * np.exp(rng.normal(-s2 / 2.0, math.sqrt(s2), clients + services)))
    back = [next(thinks) for _ in range(clients)]
    heapq.heapify(back)
    free, waits, t0 = 0.0, [], None
    for i in range(services):
        a = heapq.heappop(back)
        start = max(a, free)
        if i >= services // 10:
            t0 = start if t0 is None else t0
            waits.append(start - a)
        free = start + service_s
        heapq.heappush(back, free + next(thinks))
    return np.array(waits), len(waits) * service_s / (free - t0)


@pytest.mark.parametrize("clients, think_s, service_s, pk_off", [(90, 15.0, 0.161, 0.35), (30, 10.0, 0.4, 1.0)])
def test_factor_against_a_repairman_queue(clients, think_s, service_s, pk_off):
    # 90 clients of r = Z/S = 93 (ρ ≈ 0.92): simulated 0.63 s, P-K 0.94 s (+49 %), P-K·g 0.69 s (+8 %);
    # 30 of r = 25 (ρ ≈ 0.98): 1.94 s, P-K 8.1 s, P-K·g 2.14 s (+10 %)
    waits, rho = repairman_waits_s(clients=clients, think_s=think_s, service_s=service_s, services=60_000)
    w = float(np.mean(waits))
    pk = rho * service_s / (2.0 * (1.0 - rho))
    g = float(finite_source_factor(load=rho, think_steps=think_s, service_steps=service_s))
    assert pk / w - 1.0 > pk_off
    assert abs(pk * g / w - 1.0) < 0.15


def test_think_time_variance_limits():
    # τ ≪ Z: a few returns per window look Poisson (κ → 1); τ ≫ Z: only the think time's spread is
    # left, κ → 2·Gini = 2·(2Φ(σ/√2) − 1) = 2·erf(σ/2) for a lognormal (CV 0.5: σ² = ln 1.25, 0.523)
    k = think_time_variance(load=np.array([0.01, 0.9999]), think_steps=1e3, service_steps=[1e-3, 1e3],
                            varying_steps=1e3, cv=0.5)
    assert float(k[0]) == pytest.approx(1.0, abs=0.01)
    assert float(k[1]) == pytest.approx(2 * math.erf(math.sqrt(math.log(1.25)) / 2), rel=0.02)
    cv = np.array([[0.3], [0.5], [0.8]])
    k = think_time_variance(load=0.9, think_steps=100.0, service_steps=2.0, varying_steps=100.0, cv=cv)
    assert np.all(np.diff(k[:, 0]) > 0)  # more spread, nearer exponential
    assert np.all(think_time_variance(load=0.9, think_steps=100.0, service_steps=2.0, varying_steps=80.0,
                                      cv=np.nan) == 1.0)  # NaN: not told, exponential


@pytest.mark.parametrize("clients, think_s, service_s, cv, before, within", [
    (90, 15.0, 0.161, 0.5, 0.25, 0.15), (90, 15.0, 0.161, 0.3, 0.3, 0.05), (30, 10.0, 0.4, 0.5, 0.4, 0.05),
    (120, 15.0, 0.12, 0.3, 0.3, 0.10)])
def test_factor_with_lognormal_think_times(clients, think_s, service_s, cv, before, within):
    # think times more regular than exponential: N = 90 (ρ 0.93) CV 0.5 waits 0.55 s, κ = 1 0.71 s
    # (+30 %), κ = 0.85 0.62 s (+14 %); CV 0.3 0.52 s: +37 → +1 %; N = 30 (ρ 0.99) CV 0.5 1.78 s:
    # +49 → −1 %; N = 120 CV 0.3 0.43 s: +34 → +6 %
    waits, rho = repairman_waits_s(clients=clients, think_s=think_s, service_s=service_s, services=60_000,
                                   think_cv=cv)
    w = float(np.mean(waits))
    pk = rho * service_s / (2.0 * (1.0 - rho))
    g1 = float(finite_source_factor(load=rho, think_steps=think_s, service_steps=service_s))
    kappa = think_time_variance(load=rho, think_steps=think_s, service_steps=service_s, varying_steps=think_s, cv=cv)
    g = float(finite_source_factor(load=rho, think_steps=think_s, service_steps=service_s, think_variance=kappa))
    assert pk * g1 / w - 1.0 > before
    assert abs(pk * g / w - 1.0) < within


@pytest.mark.parametrize("clients, think_s, service_s", [(90, 15.0, 0.161), (30, 10.0, 0.4)])
def test_wait_quantiles_against_a_repairman_queue(clients, think_s, service_s):
    # near the population's capacity the wait's tail is a cut normal's: N = 90 (ρ 0.92) P95 simulated
    # 1.72 s, cut normal 1.77 s, exponential 2.03 s; N = 30 (ρ 0.98) P99 4.97 / 4.85 / 9.16 s
    waits, rho = repairman_waits_s(clients=clients, think_s=think_s, service_s=service_s, services=60_000)
    for q in (0.9, 0.95, 0.99):
        sim = float(np.quantile(waits, q))
        cut = float(finite_source_wait_quantile_s(mean_s=waits.mean(), load=rho, think_steps=think_s,
                                                  service_steps=service_s, q=q))
        assert cut == pytest.approx(sim, rel=0.06)
    expo = float(wait_quantile_s(mean_s=waits.mean(), p_wait=rho, q=0.99))
    assert expo / float(np.quantile(waits, 0.99)) - 1.0 > 0.3


def test_budget_queue_near_capacity_against_the_simulator():
    # Llama-3.1-8B H100, max_num_batched_tokens 1024, 2,500-token prompts (3 chunks), 256 output
    # tokens (lognormal CV 0.5), C = 90: 95 % of the budget's token capacity. Simulated mean TTFT
    # 739 / 834 / 768 ms (seeds 1-3, 2,700 requests, the first 900 dropped); the unbounded queue's
    # P-K wait read 1,099 ms (+41 %), with the finite source 925 ms (+18 %: the rest is the loop's
    # think times, more regular than the diffusion's Poisson arrivals; a repairman queue with
    # lognormal CV 0.5 think times waits 14 % less than with exponential ones: told the output
    # spread, chunk_queue.think_time_variance, 852 ms, +9 %). With the wait at the busy load and
    # the extras of a busy period's first step (chunk_queue.chunk_queue, Welch's exceptional first
    # service): 780 ms, −0.9 % (812 ms, +3.2 %, with exponential think times).
    arch, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
    C, I, O = 90, 2500, 256
    sc = ServingConfig(input_len=I, output_len=O, concurrency=C, max_model_len=I + 4 * O, max_num_batched_tokens=1024)
    est = estimate(arch, gpu, sc, uniform_lengths=False, output_cv=0.5)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks), block_size=sc.block_size)
    sims = []
    for seed in (1, 2):
        w = make_workload(arrival="closed", num_requests=30 * C, concurrency=C, input_len=LengthSpec("fixed", I),
                          output_len=LengthSpec("lognormal", O, cv=0.5), max_model_len=sc.max_model_len, seed=seed)
        r = simulate(est.engine, w, cfg)
        sims.append(float(np.mean(r.ttft_s[10 * C:])))
    err = float(est.serving.ttft_s) / float(np.mean(sims)) - 1.0
    assert abs(err) < 0.10
    assert float(estimate(arch, gpu, sc, uniform_lengths=False).serving.ttft_s) > float(est.serving.ttft_s)
    assert 0.85 < float(est.serving.budget_queue_load) < 0.95


def test_budget_wait_quantile_at_the_busy_load():
    """chunk_queue.budget_wait_quantile_s: the old cut normal at ρ_b = ρ (and for an unknown ρ_b), a thinner
    tail as ρ_b falls below ρ at the same mean wait, none where at most 1 − q wait; it broadcasts."""
    from calc.traffic.chunk_queue import budget_wait_quantile_s

    kw = dict(mean_s=0.12, load=0.642, think_steps=257.4, service_steps=2.556, varying_steps=255.0, cv=0.5, q=0.95)
    old = finite_source_wait_quantile_s(mean_s=0.12, load=0.642, think_steps=257.4, service_steps=2.556, q=0.95,
                                        think_variance=think_time_variance(load=0.642, think_steps=257.4,
                                                                           service_steps=2.556, varying_steps=255.0,
                                                                           cv=0.5))
    assert np.isclose(budget_wait_quantile_s(busy_load=0.642, **kw), old)
    assert np.isclose(budget_wait_quantile_s(busy_load=np.nan, **kw), old)
    assert np.isclose(budget_wait_quantile_s(busy_load=0.9, **kw), old)  # ρ_b is taken at most ρ
    w = budget_wait_quantile_s(busy_load=np.array([0.6, 0.5, 0.4, 0.2]), **kw)
    assert w.shape == (4,) and np.all(np.diff(w) < 0) and np.all(w < old) and np.all(w > 0.12)
    assert float(budget_wait_quantile_s(**{**kw, "load": 0.04}, busy_load=0.03)) == 0.0


def test_budget_queue_percentile_against_the_simulator():
    """The closed loop's P95 TTFT where prompts queue for the token budget at moderate load (Llama-3.1-8B
    H100, budget 1024, 2500 in / 256 out lognormal CV 0.5, C = 48, ρ = 0.64, ρ_b = 0.46): 3 seeds of 30·C
    requests, the first 10·C dropped, mean of their P95s 580 ms; with the exponential tail of mean W̄/ρ 687 ms
    (+18 %), with the tail at the busy load 595 ms (+3 %). Since the API server's time was refitted (14.5 ms a
    request, its trains closer together: Efficiency.api_server_final_share) 551 ms simulated, 611 ms (+10.8 %)."""
    from calc.traffic.queueing import closed_loop_ttft

    arch, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
    C, I, O = 48, 2500, 256
    sc = ServingConfig(input_len=I, output_len=O, concurrency=C, max_model_len=I + 4 * O, max_num_batched_tokens=1024)
    est = estimate(arch, gpu, sc, uniform_lengths=False, output_cv=0.5)
    p = closed_loop_ttft(est.engine, input_len=I, output_len=O, concurrency=C, max_num_seqs=int(est.max_num_seqs),
                         max_num_batched_tokens=1024, kv_capacity_tokens=est.memory.kv_pool_tokens, output_cv=0.5)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks), block_size=sc.block_size)
    p95 = []
    for seed in (1, 2, 3):
        w = make_workload(arrival="closed", num_requests=30 * C, concurrency=C, input_len=LengthSpec("fixed", I),
                          output_len=LengthSpec("lognormal", O, cv=0.5), max_model_len=sc.max_model_len, seed=seed)
        p95.append(float(np.percentile(simulate(est.engine, w, cfg).ttft_s[10 * C:], 95)))
    assert abs(float(p.ttft_percentile_s) / float(np.mean(p95)) - 1.0) < 0.12
    assert 0.40 < float(est.serving.budget_queue_busy_load) < float(est.serving.budget_queue_load) < 0.70
