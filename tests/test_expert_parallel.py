"""calc.timing.expert_parallel against DeepEP's published kernel times, and its invariants."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from calc.timing.expert_parallel import all_to_all_phase_s, moe_all_to_all_s, remote_shares

# DeepEP README (deepseek-ai/DeepEP), low-latency kernels on H800 (NVLink 200 GB/s one direction,
# CX7 400 Gb/s = 50 GB/s): 128 tokens per rank, hidden 7168, top-8, FP8 dispatch, BF16 combine.
DEEPEP_LL_US = {8: (77, 114), 16: (118, 195), 32: (155, 273), 64: (173, 314), 128: (192, 369)}
H800 = dict(domain_gpus=8, nvlink_bw_bytes_per_s=200e9 * 0.8, scale_out_bw_bytes_per_s=50e9 * 0.9, latency_s=35e-6)


@pytest.mark.parametrize("ep", sorted(DEEPEP_LL_US))
def test_low_latency_kernel_times_within_15_percent(ep):
    common = dict(tokens=128, experts_per_token=8, hidden_size=7168, expert_parallel_size=ep, **H800)
    dispatch = all_to_all_phase_s(bytes_per_element=1.0 + 4 / 128, **common)
    combine = all_to_all_phase_s(bytes_per_element=2.0, **common)
    d_us, c_us = DEEPEP_LL_US[ep]
    assert float(dispatch) * 1e6 == pytest.approx(d_us, rel=0.15)
    assert float(combine) * 1e6 == pytest.approx(c_us, rel=0.15)


def test_shares_by_hand():
    # EP 16 over two 8-GPU nodes: 7 of 16 destinations over NVLink, 8 over the NIC, 1 is itself
    assert [float(x) for x in remote_shares(expert_parallel_size=16, domain_gpus=8)] == [7 / 16, 8 / 16]
    # GB200 NVL72: EP 72 stays on NVLink
    assert [float(x) for x in remote_shares(expert_parallel_size=72, domain_gpus=72)] == [71 / 72, 0.0]


def test_no_ep_no_time_and_broadcast():
    t = moe_all_to_all_s(tokens=np.array([[0.0], [64.0]]), num_moe_layers=58, experts_per_token=8, hidden_size=7168,
                         dispatch_bytes_per_element=1.0, combine_bytes_per_element=2.0,
                         expert_parallel_size=np.array([1, 8, 16]), **H800)
    assert t.shape == (2, 3) and np.all(t[0] == 0) and t[1, 0] == 0 and t[1, 2] > t[1, 1] > 0


def test_high_throughput_regime_sends_one_copy_per_node():
    common = dict(tokens=4096, experts_per_token=8, hidden_size=7168, bytes_per_element=1.0, expert_parallel_size=16,
                  **H800)
    assert float(all_to_all_phase_s(high_throughput=True, **common)) < float(all_to_all_phase_s(**common))


@settings(max_examples=50, deadline=None)
@given(n=st.floats(1, 8192), ep=st.sampled_from([2, 8, 16, 64, 144]))
def test_more_tokens_never_faster(n, ep):
    kw = dict(experts_per_token=8, hidden_size=7168, bytes_per_element=2.0, expert_parallel_size=ep, **H800)
    assert float(all_to_all_phase_s(tokens=2 * n, **kw)) >= float(all_to_all_phase_s(tokens=n, **kw))
