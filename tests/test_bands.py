"""Error bands (calc.timing.bands): the table is the calibration reports' (bench/make_bands.py), a
band never contradicts its value, every GPU family and regime has one, and on the calibration
measurements the bands are honest (issue #20: >= 80 % inside, median half-width <= 30 %)."""

import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import make_bands  # noqa: E402

from calc.spec.catalog import list_gpus, list_models  # noqa: E402
from calc.timing import bands  # noqa: E402


@pytest.fixture(scope="module")
def measured():
    return make_bands.measurements()


def test_table_file_is_up_to_date_with_the_reports(measured):
    on_disk = json.loads(bands.BANDS_PATH.read_text())
    assert on_disk == json.loads(json.dumps(make_bands.table(measured))), "run bench/make_bands.py"


def test_every_measurement_is_named_and_classified(measured):
    ids = [m["id"] for m in measured]
    assert len(ids) == len(set(ids))
    assert {m["group"] for m in measured} == set(bands.GROUPS)
    assert {m["regime"] for m in measured} <= set(bands.REGIMES) | {bands.MEMORY_REGIME}


def test_bands_are_honest_on_the_calibration_measurements(measured):
    c = bands.coverage(measured, bands.load_table()["cells"])
    assert c["n"] == len(measured) == 156
    # figures printed by bench/make_bands.py: 84.0 % inside, median half-width 17.3 %
    assert c["inside_fraction"] >= 0.80
    assert c["median_half_width"] <= 0.30


def test_timing_bands_alone(measured):
    """Without the (narrow) memory measurements the half-width target is missed: 81.9 % inside,
    median half-width 31.4 % (stated in the issue's closing note; held here against regressions)."""
    timing = [m for m in measured if m["group"] != "memory"]
    c = bands.coverage(timing, bands.load_table()["cells"])
    assert c["inside_fraction"] >= 0.80
    assert c["median_half_width"] <= 0.33


@pytest.mark.parametrize("regime", bands.REGIMES)
def test_every_gpu_and_model_family_has_a_band_around_its_value(regime):
    families = {bands.gpu_family(g.architecture) for g in list_gpus()} | {"other"}
    moes = {m.moe is not None for m in list_models()}
    for family, moe, group in itertools.product(sorted(families), sorted(moes), bands.GROUPS):
        b = bands.band_basis(bands.BandKey(regime, family, moe, group))
        assert b.n >= 1 and b.measurements and b.label
        assert b.log_lo <= 0 <= b.log_hi
        v = np.array([1e-3, 1.0, 5e4])
        lo, hi = bands.band(v, b)
        assert np.all(lo <= v) and np.all(v <= hi)


def test_regime_without_measurements_says_so_and_is_wider():
    b = bands.band_basis(bands.BandKey("open", "blackwell", False, "ttft"))
    assert b.n_exact == 0 and b.label.startswith("no measurements in this regime")
    pooled = bands.load_table()["cells"]["*/*/*/ttft"]
    widen = bands.WIDEN ** 3  # three dimensions dropped
    assert math.isclose(b.log_lo, min(pooled["log_q_lo"], 0) * widen)
    assert math.isclose(b.log_hi, max(pooled["log_q_hi"], 0) * widen)


def test_a_well_measured_regime_uses_its_own_cell():
    b = bands.band_basis(bands.BandKey("single", "ampere", False, "ttft"))
    assert b.cell == "single/ampere/dense/ttft" and b.n == b.n_exact >= bands.N_MIN
    assert all(m.startswith("pm-") for m in b.measurements)


def test_band_arithmetic_written_out():
    # errors of -20 % and +25 %: measured = predicted / (1 + e) spans 1/1.25 .. 1/0.8 of the value
    b = bands.BandBasis(bands.BandKey("single", "ampere", False, "ttft"), "x", 10, 10,
                        math.log(0.8), math.log(1.25), 0.1, 0.2, "", ())
    lo, hi = bands.band(2.0, b)
    assert math.isclose(lo, 2.0 / 1.25) and math.isclose(hi, 2.0 / 0.8)


def test_broadcasts_and_does_not_mutate():
    b = bands.band_basis(bands.BandKey("burst", "hopper", True, "throughput"))
    v = np.array([[1.0], [2.0]])
    before = v.copy()
    lo, hi = bands.band(v, b)
    assert lo.shape == hi.shape == (2, 1) and np.array_equal(v, before)


def test_classifiers():
    assert bands.metric_group("ttft_s_p95") == "ttft"
    assert bands.metric_group("open_loop_ttft_p95_s") == "ttft"
    assert bands.metric_group("output_tokens_per_s") == "throughput"
    assert bands.load_regime("closed", 1) == "single"
    with pytest.raises(ValueError):
        bands.load_regime("sideways")
    with pytest.raises(ValueError):
        bands.band_basis(bands.BandKey("single", "ampere", False, "cost"))
