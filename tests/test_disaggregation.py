"""Prefill/decode disaggregation (calc.traffic.disaggregation): the KV transfer, the two-stage
simulator, its analytic twin, and that nothing changes without it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.traffic.disaggregation import (Pools, disaggregated_open_loop, kv_links, kv_transfer_s, make_pools,
                                         simulate_disaggregated)
from calc.traffic.workload import LengthSpec, Workload, make_workload

LLAMA8 = get_model("meta-llama/Llama-3.1-8B")
H100 = get_gpu("h100-sxm")


def _pools(P=1, D=1, bw=40e9, lat=0.0, tp=1, I=1024, O=256, **kw):
    return make_pools(LLAMA8, H100, ServingConfig(input_len=I, output_len=O, tensor_parallel_size=tp), Efficiency(),
                      prefill_instances=P, decode_instances=D, link_bw_bytes_per_s=bw, link_latency_s=lat, **kw)


class TestTransfer:
    def test_hand_value(self):
        # Llama-3.1-8B: K and V (2) x 32 layers x 8 KV heads x 128 dims x 2 bytes (bf16) = 131,072 B/token;
        # 2,000 tokens over 25 GB/s: 2000 * 131072 / 25e9 = 10.486 ms, + 10 us latency = 10.496 ms
        p = _pools(bw=25e9)
        assert p.kv_bytes_per_token_per_rank == 2 * 32 * 8 * 128 * 2
        t = kv_transfer_s(prompt_tokens=2000, kv_bytes_per_token_per_rank=131072, link_bw_bytes_per_s=25e9,
                          link_latency_s=1e-5)
        assert float(t) == pytest.approx(10.496e-3, rel=1e-4)

    def test_tp_divides_the_bytes_per_rank(self):
        # TP 2: each rank holds 4 of the 8 KV heads (65,536 B/token) and sends them over its own link
        assert _pools(tp=2).kv_bytes_per_token_per_rank == 131072 / 2
        # different TP on the two sides: the larger share per rank (TP 1's) sets the pace
        assert _pools(prefill_tensor_parallel_size=2, decode_tensor_parallel_size=1).kv_bytes_per_token_per_rank == 131072

    def test_broadcasts(self):
        t = kv_transfer_s(prompt_tokens=np.array([[100], [1000]]), kv_bytes_per_token_per_rank=1e5,
                          link_bw_bytes_per_s=np.array([1e9, 1e10]))
        assert t.shape == (2, 2) and t[1, 0] == pytest.approx(0.1)  # 1000 * 1e5 / 1e9

    @settings(max_examples=50, deadline=None)
    @given(st.floats(1, 1e6), st.floats(1e8, 1e12), st.floats(1, 10))
    def test_monotone(self, tokens, bw, k):
        a = float(kv_transfer_s(prompt_tokens=tokens, kv_bytes_per_token_per_rank=1e5, link_bw_bytes_per_s=bw))
        assert float(kv_transfer_s(prompt_tokens=tokens * k, kv_bytes_per_token_per_rank=1e5,
                                   link_bw_bytes_per_s=bw)) >= a
        assert float(kv_transfer_s(prompt_tokens=tokens, kv_bytes_per_token_per_rank=1e5,
                                   link_bw_bytes_per_s=bw * k)) <= a

    def test_presets_have_sources(self):
        links = kv_links()
        assert {"nvlink4", "ib-ndr", "ethernet-100g"} <= set(links)
        assert all(v.source and v.bandwidth_bytes_per_s > 0 for v in links.values())
        assert links["ib-ndr"].bandwidth_bytes_per_s == 400e9 / 8  # 400 Gb/s


def _one_request(I=2000, O=4):
    return Workload(arrival_s=np.array([0.0]), input_len=np.array([I]), output_len=np.array([O]))


class TestTTFTHoldsTheTransfer:
    def test_simulated_ttft_grows_by_the_transfer_time(self):
        # One 2,000-token request, alone: only the link changes between the two runs, so the TTFT
        # difference is the KV bytes over the slower link minus over the faster one:
        # 2000 * 131072 * (1/5e9 - 1/50e9) = 52.43 ms - 5.24 ms = 47.19 ms
        fast = simulate_disaggregated(_pools(bw=50e9, I=2000, O=4), _one_request())
        slow = simulate_disaggregated(_pools(bw=5e9, I=2000, O=4), _one_request())
        # + the connector's descriptors: ceil(2000/16) = 125 blocks x 32 layers x 2 (K, V) = 8,000 x 2.4 us = 19.2 ms
        assert float(slow.kv_transfer_s[0]) == pytest.approx(2000 * 131072 / 5e9 + 8000 * 2.4e-6)
        d = float(slow.result.ttft_s[0] - fast.result.ttft_s[0])
        assert d == pytest.approx(2000 * 131072 * (1 / 5e9 - 1 / 50e9), rel=1e-6)
        # and TTFT = prefill (queue + prefill) + transfer + the decode instance's first token
        r = slow
        assert float(r.result.ttft_s[0]) == pytest.approx(
            float(r.prefill_ttft_s[0] + r.kv_transfer_s[0] + r.decode_first_s[0]), rel=1e-9)

    def test_analytic_ttft_grows_by_the_transfer_time(self):
        a = disaggregated_open_loop(_pools(bw=50e9, I=2000, O=4), input_len=2000, output_len=4, rate_rps=0.01)
        b = disaggregated_open_loop(_pools(bw=5e9, I=2000, O=4), input_len=2000, output_len=4, rate_rps=0.01)
        assert float(b.ttft_s - a.ttft_s) == pytest.approx(2000 * 131072 * (1 / 5e9 - 1 / 50e9), rel=1e-6)

    def test_decode_steps_carry_no_prefill(self):
        w = make_workload(arrival="poisson", num_requests=200, rate_per_s=8.0, input_len=LengthSpec("fixed", 1024),
                          output_len=LengthSpec("fixed", 64), seed=0)
        r = simulate_disaggregated(_pools(O=64), w).result
        assert r.step_prefill_tokens.sum() == 0  # every step of the decode instances is decodes only
        assert np.isfinite(r.ttft_s).all() and (r.tpot_s > 0).all()


@pytest.mark.parametrize("P,D,rate,I,O,icv", [(1, 1, 8.0, 1024, 256, 0.0), (2, 1, 15.0, 1024, 256, 0.0),
                                             (1, 2, 8.0, 2048, 128, 0.0), (2, 1, 12.0, 1024, 256, 0.5)])
def test_analytic_agrees_with_the_simulator(P, D, rate, I, O, icv):
    """Means and P95 of TTFT and TPOT within 15 % (2,000 requests, the first quarter left out)."""
    pools = _pools(P=P, D=D, I=I, O=O, lat=1e-5)
    lengths = LengthSpec("lognormal", float(I), cv=icv) if icv else LengthSpec("fixed", I)
    w = make_workload(arrival="poisson", num_requests=2000, rate_per_s=rate, input_len=lengths,
                      output_len=LengthSpec("fixed", O), seed=0)
    r = simulate_disaggregated(pools, w).result
    a = disaggregated_open_loop(pools, input_len=I, output_len=O, rate_rps=rate, input_cv=icv)
    keep = slice(500, None)
    pairs = {"ttft mean": (np.nanmean(r.ttft_s[keep]), a.ttft_s),
             "ttft p95": (np.nanpercentile(r.ttft_s[keep], 95), a.ttft_percentile_s),
             "tpot mean": (np.nanmean(r.tpot_s[keep]), a.tpot_s),
             "tpot p95": (np.nanpercentile(r.tpot_s[keep], 95), a.tpot_percentile_s)}
    for name, (sim, ana) in pairs.items():
        assert float(ana) == pytest.approx(float(sim), rel=0.15), name


def test_without_disaggregation_the_simulator_is_unchanged():
    from calc.timing.estimate import estimate
    from calc.traffic.simulator import EngineConfig, simulate
    est = estimate(LLAMA8, H100, ServingConfig(input_len=512, output_len=32))
    cfg = EngineConfig(max_num_seqs=256, max_num_batched_tokens=8192, enable_chunked_prefill=True,
                       num_blocks=int(est.memory.num_blocks))
    w = make_workload(arrival="poisson", num_requests=100, rate_per_s=5.0, input_len=LengthSpec("fixed", 512),
                      output_len=LengthSpec("fixed", 32), seed=1)
    a, b = simulate(est.engine, w, cfg), simulate(est.engine, w, cfg, remote_kv_tokens=None)
    assert np.array_equal(a.ttft_s, b.ttft_s) and np.array_equal(a.step_s, b.step_s)
    # remote KV for every prompt: only the last prompt token is computed (a decode-like step)
    c = simulate(est.engine, w, cfg, remote_kv_tokens=w.input_len)
    assert c.step_prefill_tokens.sum() == 0 and np.nanmean(c.ttft_s) < np.nanmean(a.ttft_s)


def test_bad_counts_name_the_field():
    with pytest.raises(ValueError, match="prefill_instances"):
        _pools(P=0)
    with pytest.raises(ValueError, match="kv_transfer_gb_per_s"):
        Pools  # noqa: B018
        _pools(bw=-1.0)


def test_measurement_rows_carry_their_sources():
    import json
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "bench" / "data" / "disaggregation_measurements.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert len(rows) >= 5
    for r in rows:
        assert len(r["source"]) > 20 and r["what_was_run"] and r["measured"] > 0 and r["confidence"]
        get_model(r["model"]), get_gpu(r["gpu"])  # asked with catalog entries


def test_distserve_worked_example():
    # DistServe blog (hao-ai-lab.github.io/blogs/distserve): OPT-175B, 2,048 tokens x 4.5 MB per token over
    # 8 PCIe 5.0 x16 links of 64 GB/s: "Latency = 2048 * 4.5 MB / (64 GB/s * 8) = 17.6 ms" (MB and GB binary:
    # 9,216 MiB / 512 GiB/s = 17.58 ms)
    t = kv_transfer_s(prompt_tokens=2048, kv_bytes_per_token_per_rank=4.5 * 2**20, link_bw_bytes_per_s=8 * 64 * 2**30)
    assert float(t) * 1e3 == pytest.approx(17.58, abs=0.01)


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.floats(0.5, 12.0), st.integers(64, 3000), st.integers(2, 64))
def test_simulated_invariants(P, D, rate, I, O):
    """Every request: TTFT ≥ its transfer; TTFT = prefill + transfer + decode's first token; E2E ≥ TTFT."""
    pools = _pools(P=P, D=D, I=I, O=O, bw=20e9)
    w = make_workload(arrival="poisson", num_requests=60, rate_per_s=rate, input_len=LengthSpec("fixed", I),
                      output_len=LengthSpec("fixed", O), seed=2)
    s = simulate_disaggregated(pools, w)
    r = s.result
    assert (r.ttft_s >= s.kv_transfer_s).all() and (r.e2e_latency_s >= r.ttft_s).all()
    assert np.allclose(r.ttft_s, s.prefill_ttft_s + s.kv_transfer_s + s.decode_first_s)
    assert not r.truncated and r.step_prefill_tokens.sum() == 0


class TestConnectorCost:
    """The KV connector's per-request cost: one descriptor per block, layer and K/V region, and the
    proxy's second request (calc.traffic.disaggregation module docstring)."""

    def test_descriptor_count_by_hand(self):
        from calc.traffic.disaggregation import kv_descriptors
        # 1,000 tokens in 16-token blocks: ceil(62.5) = 63 blocks x 32 layers x 2 = 4,032
        assert float(kv_descriptors(prompt_tokens=1000, num_layers=32, block_size=16)) == 4032
        # 128-token blocks: ceil(7.8) = 8 x 32 x 2 = 512
        assert float(kv_descriptors(prompt_tokens=1000, num_layers=32, block_size=128)) == 512

    def test_pools_transfer_holds_the_descriptors(self):
        # 1,000 tokens at 40 GB/s: 1000 * 131072 / 40e9 = 3.277 ms; + 4,032 descriptors x 2.4 us = 9.677 ms
        p = _pools(bw=40e9)
        assert p.kv_descriptor_s == pytest.approx(2.4e-6) and p.num_layers == 32
        assert float(p.transfer_s(1000)) == pytest.approx(1000 * 131072 / 40e9 + 4032 * 2.4e-6)
        # the user's figure replaces the default; 0 leaves the descriptors out
        assert float(_pools(bw=40e9, descriptor_s=0.0).transfer_s(1000)) == pytest.approx(1000 * 131072 / 40e9)
        assert float(_pools(bw=40e9, descriptor_s=1e-5).transfer_s(1000)) == pytest.approx(
            1000 * 131072 / 40e9 + 4032 * 1e-5)
        with pytest.raises(ValueError, match="kv_descriptor_us"):
            _pools(descriptor_s=-1e-6)

    def test_descriptor_cost_in_simulated_and_analytic_ttft_alike(self):
        # one request alone: the TTFT grows by the descriptor time in both models, 4,032 x 10 us = 40.3 ms
        base, slow = _pools(I=1000, O=4, descriptor_s=0.0), _pools(I=1000, O=4, descriptor_s=1e-5)
        w = _one_request(I=1000, O=4)
        d_sim = float(simulate_disaggregated(slow, w).result.ttft_s[0] - simulate_disaggregated(base, w).result.ttft_s[0])
        kw = dict(input_len=1000, output_len=4, rate_rps=1e-6)
        d_ana = float(disaggregated_open_loop(slow, **kw).ttft_s - disaggregated_open_loop(base, **kw).ttft_s)
        assert d_sim == pytest.approx(4032 * 1e-5, rel=1e-6) and d_ana == pytest.approx(4032 * 1e-5, rel=1e-6)

    def test_decode_leg_pays_the_request_overhead_again(self):
        # the proxy sends each request twice: request_overhead_s (30 ms default) enters the TTFT at both
        # instances; with it at 0 the TTFT of a lone request falls by 2 x 30 ms in both models
        w = _one_request(I=1000, O=4)
        on = _pools(I=1000, O=4)
        off = make_pools(LLAMA8, H100, ServingConfig(input_len=1000, output_len=4), Efficiency(request_overhead_s=0.0),
                         prefill_instances=1, decode_instances=1, link_bw_bytes_per_s=40e9)
        d_sim = float(simulate_disaggregated(on, w).result.ttft_s[0] - simulate_disaggregated(off, w).result.ttft_s[0])
        kw = dict(input_len=1000, output_len=4, rate_rps=1e-6)
        d_ana = float(disaggregated_open_loop(on, **kw).ttft_s - disaggregated_open_loop(off, **kw).ttft_s)
        assert d_sim == pytest.approx(2 * 0.030, abs=1e-4) and d_ana == pytest.approx(2 * 0.030, abs=1e-4)


def test_mla_moves_one_region_per_layer():
    from calc.traffic.disaggregation import kv_regions_per_layer
    # DeepSeek's MLA keeps one latent cache per layer: one descriptor per block and layer, not two
    lite = get_model("deepseek-ai/DeepSeek-V2-Lite-Chat")
    assert kv_regions_per_layer(lite) == 1 and kv_regions_per_layer(LLAMA8) == 2
    p = make_pools(lite, H100, ServingConfig(input_len=1000, output_len=10), Efficiency(), prefill_instances=1,
                   decode_instances=1, link_bw_bytes_per_s=40e9, descriptor_s=1e-5)
    q = make_pools(lite, H100, ServingConfig(input_len=1000, output_len=10), Efficiency(), prefill_instances=1,
                   decode_instances=1, link_bw_bytes_per_s=40e9, descriptor_s=0.0)
    # ceil(1000/16) = 63 blocks x L layers x 1 region x 10 us
    L = lite.num_hidden_layers
    assert float(p.transfer_s(1000) - q.transfer_s(1000)) == pytest.approx(63 * L * 1e-5)
