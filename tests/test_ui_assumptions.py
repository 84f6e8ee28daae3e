"""The efficiency assumptions are user-adjustable controls, in the URL, and reach the calculator."""

import pytest

from apptest_helpers import app, metrics, texts
from calc.spec.inputs import Efficiency
from ui import controls as C

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_every_efficiency_field_has_a_control_with_its_default():
    fields = {f for f, _ in C.EFFICIENCY_FIELDS.values()}
    assert fields == set(Efficiency.model_fields)
    e, default = C.efficiency_from({}), Efficiency()
    for field in Efficiency.model_fields:  # equal up to the UI-unit round trip (e.g. GiB -> bytes)
        assert getattr(e, field) == pytest.approx(getattr(default, field), rel=1e-9)


def test_ui_units_convert_to_si():
    # 3 ms -> 0.003 s; 25 us -> 2.5e-5 s; 2 GiB -> 2 * 2**30 bytes
    e = C.efficiency_from({"eff_step_overhead_ms": 3, "eff_allreduce_latency_us": 25, "eff_non_torch_overhead_gib": 2})
    assert e.step_overhead_s == pytest.approx(0.003)
    assert e.allreduce_latency_s == pytest.approx(25e-6)
    assert e.non_torch_overhead_bytes == 2 * 2**30


def test_lower_bandwidth_slows_decode_on_the_frontier():
    base = metrics(app(page="pages/frontier.py"))
    slow = metrics(app({"eff_hbm_bw_fraction": "0.4"}, page="pages/frontier.py"))
    assert base["TPOT there"] != slow["TPOT there"] or base["Throughput there"] != slow["Throughput there"]


def test_more_non_torch_memory_shrinks_the_kv_pool():
    # 10 GiB more outside PyTorch at 512 KiB per token is 20,480 fewer tokens: fewer requests fit.
    base = metrics(app())
    tight = metrics(app({"eff_non_torch_overhead_gib": "11"}))
    assert int(tight["Max concurrency"]) < int(base["Max concurrency"])


def test_out_of_range_assumption_warns_and_falls_back():
    at = app({"eff_hbm_bw_fraction": "1.7"})
    assert not at.exception
    assert any("eff_hbm_bw_fraction" in w and "0.05" in w for w in texts(at.warning))
