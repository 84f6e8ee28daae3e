"""Error bands (calc.timing.bands): the table is the calibration reports' and the found runs'
(bench/make_bands.py), a band never contradicts its value, every GPU family and regime has one, and on
the calibration measurements the bands are honest (issue #20: >= 80 % inside, median half-width <= 30 %),
in sample and on benchmarks left out of the table (calc.timing.bands.cross_validate); each found set
left out of the table in turn keeps >= 80 % of its values inside (make_bands.found_left_out)."""

import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import make_bands  # noqa: E402

from calc.spec.catalog import list_gpus, list_models  # noqa: E402
from calc.timing import bands  # noqa: E402


@pytest.fixture(scope="module")
def every_measurement():
    """The table's measurements: the calibration set's and the found sets' (make_bands.FOUND_SETS)."""
    return make_bands.measurements()


@pytest.fixture(scope="module")
def measured(every_measurement):
    """The calibration set's measurements: where issue #20 states its targets."""
    return make_bands.calibration(every_measurement)


def _calibration(m: dict) -> bool:
    return not m.get("set")


def test_table_file_is_up_to_date_with_the_reports(every_measurement):
    on_disk = json.loads(bands.BANDS_PATH.read_text())
    assert on_disk == json.loads(json.dumps(make_bands.table(every_measurement))), "run bench/make_bands.py"


def test_every_measurement_is_named_and_classified(every_measurement):
    ids = [m["id"] for m in every_measurement]
    assert len(ids) == len(set(ids))
    assert {m["group"] for m in every_measurement} == set(bands.GROUPS)
    assert {m["regime"] for m in every_measurement} <= set(bands.REGIMES) | {bands.MEMORY_REGIME}
    # 156 of the calibration set, 278 of the nine found sets (220 of seven, weight_only_found's 52 and
    # vllm_found_2026_12c's 6 since 2026-12-05); five found rows are not asked: Qwen3-32B BF16 on one H100 at its full 40,960-token context
    # does not fit (vLLM would refuse to start; gpustack's page does not say which max_model_len it served)
    not_asked: list[str] = []
    assert len(make_bands.measurements(not_asked=not_asked)) == 434
    assert len(not_asked) == 5 and all("gs-q32h-" in line and "does not fit" in line for line in not_asked)


def test_bands_are_honest_on_the_calibration_measurements(measured):
    c = bands.coverage(measured, bands.load_table()["cells"])
    assert c["n"] == len(measured) == 156
    # in sample, printed by bench/make_bands.py: 90.4 % inside, median half-width 16.5 % at central 86.5 % (rows
    # stating a median asked for the simulated median, 2026-12-05); 90.4 %, 16.4 % since the quantile rule
    # holds the targets with each document left out (central 85.5 %, 2026-12-05); 92.9 %, 18.7 % at central 90 %
    # with the API server's turn-taking; 94.2 % inside, median half-width 19.6 % since gpt-oss's API
    # server time (2026-12-05; 92.9 %, 20.2 % with the 4-bit runs joined before it); 94.2 %, 20.6 % since the
    # found runs joined the table with the ladder of 2026-12-04 (94.2 %, 21.0 % from the calibration set alone; 93.6 %, 25.0 % before
    # the shared API server's condition, API_SERVER_SHARED; 29.3 % before the API server's condition split the
    # regimes, 2026-12-02)
    assert c["inside_fraction"] >= 0.80
    assert c["median_half_width"] <= 0.30


@pytest.fixture(scope="module")
def benchmark_left_out(every_measurement):
    return bands.cross_validate(every_measurement, "benchmark", bands.QUANTILES, _calibration)


def test_bands_are_honest_on_benchmarks_they_were_not_built_from(benchmark_left_out):
    """Issue #20's targets on measurements kept back: each calibration benchmark (a table of a document, one
    log file; 50 of them) left out of the table in turn, its measurements scored against the bands
    of the rest, the found runs included: 86.5 % inside, median half-width 17.5 % at central 85.5 %
    (2026-12-05, calc.timing.bands.held_out_quantiles); at central 90 %: 88.5 % inside, median half-width 20.5 %, mean interval score 0.975
    (2026-12-04). From the calibration set alone (bench/make_bands.py --validate then: 88.5 %, 21.9 %, 1.171;
    89.1 % inside, median half-width 21.4 %; one
    measurement left out at a time: 91.7 %, 22.8 %; one publisher: 90.4 %, 38.3 %, the start-up
    logs being one publisher. Before the shared API server's condition (API_SERVER_SHARED): 88.5 %,
    21.7 %; 89.7 %, 24.3 %; 89.7 %, 42.9 %. Before the API server's condition: 87.8 %, 23.9 %;
    88.5 %, 27.3 %; 89.7 %, 46.4 %)."""
    c = benchmark_left_out
    assert c["units"] == 50 and c["n"] == 156
    assert c["inside_fraction"] >= 0.80
    assert c["median_half_width"] <= 0.30
    assert 1 - c["inside_fraction"] == pytest.approx(len(c["outside"]) / c["n"])


def test_bands_are_honest_on_documents_they_were_not_built_from(every_measurement):
    """A new host: each calibration document (a page of tables or a log file, one deployment; 30 of them)
    left out in turn, the found runs in the table: 85.3 % inside, median half-width 22.4 % at central 85.5 %
    (2026-12-05; TTFT alone 68 % inside: the calibration set's TTFT errors differ most between documents); at
    central 90 %: 89.1 % inside, median half-width 26.6 %, mean interval
    score 0.991 (lower is better), 2026-12-04 (the previous ladder with the found runs: 91.0 %, 30.5 %, 0.972;
    calc.timing.bands.LADDER says why it changed). Every document of both sets left out: 88.3 %, 40.3 %
    (bench/make_bands.py --validate). From the calibration set alone: 88.5 % inside, median half-width 27.1 %, 1.216; before that 88.5 %,
    median half-width 26.6 %; timing alone 86.2 %, 32.6 %. Without the shared API server's condition (API_SERVER_SHARED): 87.2 %,
    23.8 % (timing 84.5 %, 31.3 %). Without the API server's condition: 87.8 %, 24.0 % (timing 85.3 %,
    35.6 %); counting measurements instead of documents in the shrinkage gave 84.6 %, 30.5 % (timing
    84.5 %, 37.9 %) with its own rule's central 87.5 %, 2026-12-02."""
    c = bands.cross_validate(every_measurement, "document", bands.QUANTILES, _calibration)
    assert c["units"] == 30 and c["n"] == 156
    assert c["inside_fraction"] >= 0.80
    assert c["median_half_width"] <= 0.30


def test_bands_meet_the_targets_on_every_document_left_out(every_measurement):
    """Issue #20's targets where the quantile rule holds them (calc.timing.bands.held_out_quantiles): each of the
    74 documents of both sets (the calibration set's and the found runs') left out of the table in turn, its
    measurements scored against the bands of the rest: 374 of 434 inside (86.2 %) at a median half-width of
    29.8 % with central 86.5 % bands (2026-12-05, after the rows that state a median are asked for the simulated
    median: before, 367 inside at 29.2 % with central 85.5 %). The shipped central 90 % before held 88.2 % at
    33.5 %, over the width. Each benchmark left out: 88.0 % at 28.9 %; each publisher: 89.6 % at 46.2 %
    (bench/make_bands.py --validate)."""
    c = bands.cross_validate(every_measurement, "document", bands.QUANTILES)
    assert c["units"] == 74 and c["n"] == 434
    assert c["inside_fraction"] == pytest.approx(374 / 434)
    assert c["inside_fraction"] >= bands.MIN_INSIDE
    assert c["median_half_width"] <= bands.MAX_MEDIAN_HALF_WIDTH
    assert bands.held_out_quantiles(every_measurement) == tuple(bands.QUANTILES)
    method = bands.load_table()["method"]
    assert method["held_out"]["inside_fraction"] == pytest.approx(c["inside_fraction"], abs=1e-4)
    assert method["held_out"]["median_half_width"] == pytest.approx(c["median_half_width"], abs=1e-4)


def test_one_document_counts_once_in_the_shrinkage():
    """Four measurements from one page weigh like one against the pooled errors (their errors share
    a server, an engine build and a harness); from four pages, like four."""
    others = [{"id": f"o{i}", "regime": "single", "family": "ampere", "moe": False, "group": "tpot",
               "error": e, "source": f"o{i}: t"} for i, e in enumerate(np.linspace(-0.2, 0.2, 20))]
    one = [{"id": f"a{i}", "regime": "burst", "family": "hopper", "moe": False, "group": "tpot",
            "error": 0.1 + 0.01 * i, "source": f"lab: page.md | table {i}"} for i in range(4)]
    four = [{**m, "source": f"lab: page{i}.md | table 1"} for i, m in enumerate(one)]
    cell = "burst/engine/hopper/dense/tpot"
    assert bands.build_table(others + one)[cell]["n_documents"] == 1
    assert bands.build_table(others + four)[cell]["n_documents"] == 4
    assert bands.build_table(others + one)[cell]["n"] == 4
    root = {"n_documents": 20, "log_median": -0.2, "log_spread": 0.3}
    cell = {"log_median": 0.1, "log_spread": 0.05}
    # one document:   loc = (1·0.1 + 5·(-0.2)) / 6 = -0.15;     spread² = (1·0.0025 + 5·0.09) / 6 = 0.0754167
    assert bands.shrunk_location_spread([root, {**cell, "n_documents": 1}]) == (-0.15, 0.274621)
    # four documents: loc = (4·0.1 + 5·(-0.2)) / 9 = -0.066667; spread² = (4·0.0025 + 5·0.09) / 9 = 0.0511111
    assert bands.shrunk_location_spread([root, {**cell, "n_documents": 4}]) == (-0.066667, 0.226078)


def test_timing_bands_alone(benchmark_left_out):
    """Without the (narrow) memory measurements the half-width target is missed: held-out calibration
    benchmarks 86.2 % inside, median half-width 31.2 % (TTFT 82 % / 38 %, TPOT 91 % / 20 %, throughput
    89 % / 20 %) since the found runs joined the table (2026-12-04); from the calibration set alone
    87.1 % inside, median half-width 27.7 % (TTFT 85 % / 39 %, TPOT 87 % / 16 %, throughput
    93 % / 25 %; before the shared API server's condition 86.2 %, 29.9 %; before the API server's
    condition 85.3 %, 31.5 %): stated in the issue's closing
    note, held here against regressions, with room for the burst rows' predictions to move (burst
    TTFT and TPOT all 20 % lower gave 81.9 %, 41.0 % before the condition)."""
    c = benchmark_left_out["timing"]
    assert c["inside_fraction"] >= 0.78
    assert c["median_half_width"] <= 0.45
    assert benchmark_left_out["by_group"]["throughput"]["median_half_width"] <= 0.30


def test_cross_validation_holds_out_a_whole_unit():
    """Two benchmarks of one cell: with one left out, the other alone makes the band (shrunk
    toward the root, which is that same benchmark), so a far-off benchmark falls outside."""
    near = [{"id": f"a{i}", "regime": "single", "family": "ampere", "moe": False, "group": "ttft",
             "error": e, "source": "lab: table 1"} for i, e in enumerate((-0.02, 0.0, 0.01, 0.03))]
    far = [{"id": "b0", "regime": "single", "family": "ampere", "moe": False, "group": "ttft",
            "error": 1.0, "source": "other: table 9"}]
    c = bands.cross_validate(near + far, "benchmark")
    assert c["units"] == 2 and "b0" in c["outside"]
    assert bands.cross_validate(near + far, "publisher")["units"] == 2
    assert bands.cross_validate(near + far, "document")["units"] == 2
    with pytest.raises(ValueError, match="allowed: measurement, benchmark, document, publisher"):
        bands.cross_validate(near, "row")


@pytest.mark.parametrize("condition", bands.CONDITIONS)
@pytest.mark.parametrize("regime", bands.REGIMES)
def test_every_gpu_and_model_family_has_a_band_around_its_value(regime, condition):
    families = {bands.gpu_family(g.architecture) for g in list_gpus()} | {"other"}
    moes = {m.moe is not None for m in list_models()}
    for family, moe, group in itertools.product(sorted(families), sorted(moes), bands.GROUPS):
        b = bands.band_basis(bands.BandKey(regime, family, moe, group, condition))
        assert b.n >= 1 and b.measurements and b.label
        assert b.log_lo <= 0 <= b.log_hi
        v = np.array([1e-3, 1.0, 5e4])
        lo, hi = bands.band(v, b)
        assert np.all(lo <= v) and np.all(v <= hi)


def test_regime_without_measurements_says_so_and_is_wider():
    # an open loop whose API server is busy, on Blackwell (no measurement of either)
    key = bands.BandKey("open", "blackwell", False, "ttft", "api_server")
    b = bands.band_basis(key)
    assert b.n_exact == 0 and b.label.startswith("no measurements in this regime")
    cells = bands.load_table()["cells"]
    chain = [cells.get(key.cell(keep)) for keep in bands.LADDER] + [cells[bands.ROOT_CELL]]  # finest first
    empty = next(i for i, c in enumerate(chain) if c is not None)
    assert empty == 2  # the exact cell and (API server busy, Blackwell, dense); busy dense bursts exist
    loc, spread = bands.shrunk_location_spread(chain[::-1])
    root = chain[-1]
    assert math.isclose(b.log_lo, min(loc + root["z_lo"] * spread, 0) * bands.WIDEN ** empty)
    assert math.isclose(b.log_hi, max(loc + root["z_hi"] * spread, 0) * bands.WIDEN ** empty)
    measured = bands.band_basis(bands.BandKey("single", "ampere", False, "ttft"))
    assert b.log_hi - b.log_lo > measured.log_hi - measured.log_lo


def test_a_well_measured_regime_uses_its_own_cell():
    b = bands.band_basis(bands.BandKey("single", "ampere", False, "ttft"))
    assert b.cell == "single/engine/ampere/dense/ttft" and b.n == b.n_exact >= bands.N_MIN
    assert all(m.startswith("pm-") for m in b.measurements)


def test_shrinkage_written_out():
    """A cell of n measurements weighs its median and spread n / (n + PRIOR_N) against its
    parent's; the band is location + pooled shape × spread, clamped to hold the value."""
    assert bands.PRIOR_N == 5
    cells = {bands.ROOT_CELL: {"n": 20, "n_documents": 20, "log_median": -0.2, "log_spread": 0.3, "z_lo": -2.0, "z_hi": 3.0,
                               "median_abs_error": 0.1, "p90_abs_error": 0.3, "measurements": ["r"]},
             "*/*/*/*/tpot": {"n": 5, "n_documents": 5, "log_median": 0.0, "log_spread": 0.1, "median_abs_error": 0.05,
                            "p90_abs_error": 0.1, "measurements": ["g"]},
             "*/engine/*/dense/tpot": {"n": 15, "n_documents": 15, "log_median": 0.1, "log_spread": 0.05, "median_abs_error": 0.1,
                                       "p90_abs_error": 0.12, "measurements": ["s"]}}
    b = bands.band_basis(bands.BandKey("single", "hopper", False, "tpot"), cells)
    # rungs, coarsest first: root; group */*/*/*/tpot; */engine/*/*/tpot (empty); */engine/*/dense/tpot;
    # */engine/hopper/dense/tpot (empty); single/engine/hopper/dense/tpot (empty)
    # group:       loc = (5·0 + 5·(-0.2)) / 10 = -0.1;   spread² = (5·0.01 + 5·0.09) / 10 = 0.05
    # engine dense: loc = (15·0.1 + 5·(-0.1)) / 20 = 0.05; spread² = (15·0.0025 + 5·0.05) / 20 = 0.014375
    spread = math.sqrt(0.014375)  # 0.119896
    assert bands.WIDEN == 1.1
    # two empty rungs below it (the exact cell, the family's): widened 1.1² = 1.21
    assert math.isclose(b.log_lo, (0.05 - 2.0 * spread) * 1.21, abs_tol=1e-5)   # -0.229648
    assert math.isclose(b.log_hi, (0.05 + 3.0 * spread) * 1.21, abs_tol=1e-5)   # 0.495722
    assert b.cell == "*/engine/*/dense/tpot" and b.n == 15 and b.n_exact == 0
    assert b.label.startswith("no measurements in this regime") and "widened 1.21x" in b.label


def test_one_outlier_moves_a_small_cell_little():
    """The median and the median deviation of five measurements barely move when one of them is
    off by 30x (a 5 % / 95 % quantile of five measurements would be that one)."""
    base = [{"id": f"m{i}", "regime": "burst", "family": "hopper", "moe": False, "group": "tpot",
             "error": e, "source": f"s{i}: t"} for i, e in enumerate((-0.05, -0.02, 0.0, 0.02, 0.04))]
    others = [{"id": f"o{i}", "regime": "single", "family": "ampere", "moe": False, "group": "ttft",
               "error": e, "source": f"o{i}: t"} for i, e in enumerate(np.linspace(-0.2, 0.2, 20))]
    key = bands.BandKey("burst", "hopper", False, "tpot")
    clean = bands.band_basis(key, bands.build_table(base + others))
    base[0] = {**base[0], "error": -0.97}
    spoilt = bands.band_basis(key, bands.build_table(base + others))
    assert spoilt.log_lo > -1.0 and spoilt.log_hi - spoilt.log_lo < 2 * (clean.log_hi - clean.log_lo)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(bands.REGIMES), st.sampled_from(("ampere", "hopper")), st.booleans(),
                          st.sampled_from(("ttft", "tpot", "throughput")), st.floats(-0.95, 3.0)),
                min_size=2, max_size=30),
       st.sampled_from(bands.REGIMES), st.sampled_from(bands.FAMILIES), st.booleans(),
       st.sampled_from(("ttft", "tpot", "throughput")))
def test_any_table_gives_a_band_that_holds_its_value(rows, regime, family, moe, group):
    ms = [{"id": f"m{i}", "regime": r, "family": f, "moe": o, "group": g, "error": e, "source": f"s{i}: t"}
          for i, (r, f, o, g, e) in enumerate(rows)]
    b = bands.band_basis(bands.BandKey(regime, family, moe, group), bands.build_table(ms))
    assert b.log_lo <= 0 <= b.log_hi and math.isfinite(b.log_lo) and math.isfinite(b.log_hi)
    lo, hi = bands.band(np.array([1e-3, 1.0, 5e4]), b)
    assert np.all(lo <= [1e-3, 1.0, 5e4]) and np.all(hi >= [1e-3, 1.0, 5e4])


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


def test_the_api_server_share_and_its_condition():
    # rho = X * t_api: 20 requests/s at 14.5 ms each keep the API server busy 0.29 of the time (the engine
    # sets the pace, the frontend is shared); 5 requests/s 0.0725 (the engine's); 69 requests/s, the
    # cap 1 / 14.5 ms, keep it busy all the time
    assert bands.api_server_share(20.0, 0.0145) == pytest.approx(0.29)
    assert bands.load_condition(bands.api_server_share(20.0, 0.0145)) == "api_shared"
    assert bands.load_condition(bands.api_server_share(5.0, 0.0145)) == "engine"
    assert bands.load_condition(bands.api_server_share(1 / 0.0145, 0.0145)) == "api_server"
    assert bands.load_condition(bands.API_SERVER_BUSY) == "api_server"  # from the threshold on
    assert bands.load_condition(bands.API_SERVER_SHARED) == "api_shared"
    assert bands.load_condition(float("nan")) == "engine"  # no prediction (does not fit): no claim
    assert bands.load_condition([0.0, 0.12, 0.125, 0.32, 0.33, 2.0]).tolist() == [
        "engine", "engine", "api_shared", "api_shared", "api_server", "api_server"]
    assert bands.api_server_share(100.0, 0.0) == 0.0  # offline (no API server): the engine
    # the thresholds are the ones chosen with 22 ms a request, scaled by 14.5 / 22 (the refitted time)
    assert bands.API_SERVER_BUSY == pytest.approx(0.5 * 14.5 / 22, abs=0.005)
    assert bands.API_SERVER_SHARED == pytest.approx(0.19 * 14.5 / 22, abs=0.001)


def test_calibration_rows_where_the_api_server_binds_get_their_own_cell(measured):
    """The calibration row whose API server binds (gpustack, Qwen3-14B on H100, 1,000 requests of
    128 in / 4 out: predicted 43.9 requests/s x 14.5 ms = 0.64, the turn-taking's idle start aside) is the
    api_server cell; gpustack's ShareGPT bursts on H100 (0.195, 0.222) and Qwen3-235B's medium burst on H100
    (0.136) are the api_shared cells; every offline row is the engine's. Qwen3-14B's ShareGPT burst on A100
    (0.117; 0.196 with 22 ms a request read first come first served) is now the engine's."""
    busy = sorted({m["id"].split(":")[0] for m in measured if m["condition"] == "api_server"})
    assert busy == ["t3-gs-q14h-short"]
    shared = sorted({m["id"].split(":")[0] for m in measured if m["condition"] == "api_shared"})
    assert shared == ["t3-gs-q14h-sharegpt", "t3-gs-q235h-medium", "t3-gs-q235h-sharegpt"]
    share = {m["id"].split(":")[0]: m["api_server_share"] for m in measured if "api_server_share" in m}
    assert share["t3-gs-q14h-short"] == pytest.approx(0.637, abs=0.01)
    assert 0.19 < share["t3-gs-q14h-sharegpt"] < bands.API_SERVER_BUSY
    assert 0.10 < share["t3-gs-q235a-sharegpt"] < bands.API_SERVER_SHARED  # 0.108: the engine's
    assert {m["condition"] for m in measured if m["group"] == "memory"} == {bands.MEMORY_REGIME}
    b = bands.band_basis(bands.BandKey("burst", "hopper", False, "tpot", "api_server"))
    # that row's TPOT and a found run's (kv331-q06h-burst, Qwen3-0.6B on H100): few measurements, the band leans on
    # the TPOT group's
    assert b.n_exact == 2
    assert "API server busy" in b.label and b.label.startswith("few measurements")
    engine = bands.band_basis(bands.BandKey("burst", "hopper", False, "tpot"))
    # that row's TPOT was measured 34x the prediction: the busy band reaches higher measured values
    assert b.log_lo < engine.log_lo


def test_the_condition_was_chosen_on_calibration_documents_left_out(every_measurement, measured):
    """Why the conditions (calc.timing.bands.API_SERVER_BUSY, API_SERVER_SHARED): with each document
    left out, the bands score better with them than without (mean interval score, lower is better:
    calc.timing.bands.interval_score, a proper scoring rule at one central share, so every variant is scored
    at the shipped QUANTILES). They were chosen on the calibration documents alone (2026-12-02: 1.200, 1.283,
    1.283; 2026-12-03: three conditions 1.216, the API server's busy loads alone 1.271, none 1.311). Since the
    API server's requests take turns (Efficiency.api_server_final_share, 2026-12-05: the gpustack bursts' TPOT
    -97 -> +10 %) the calibration set alone no longer tells them apart (central 86.5 %: 0.601, 0.582, 0.581; 139,
    136 and 135 of 156 inside); over every document of both sets they still pay: three conditions 374 of 434
    inside (86.2 %) at a median half-width of 29.8 % (1.003), two 370 (85.3 %) at 32.5 % (1.053), none 367
    (84.6 %) at 34.5 % (1.091) (2026-12-05, after rows stating a median were asked for the simulated median; at
    central 85.5 % before: 367, 363, 359 at 29.2, 32.0, 33.4 %; central 90 %: 88.2 % at 33.5 %, 1.142, against
    88.5 % at 40.4 %, 1.223)."""
    def folded(ms: list[dict], fold: dict[str, str]) -> list[dict]:
        return [{**m, "condition": fold.get(m["condition"], m["condition"])} for m in ms]

    two, plain = {"api_shared": "engine"}, {"api_shared": "engine", "api_server": "engine"}
    scores = {name: bands.cross_validate(folded(every_measurement, fold), "document", bands.QUANTILES)
              for name, fold in (("three", {}), ("two", two), ("plain", plain))}
    assert scores["three"]["interval_score"] < scores["two"]["interval_score"] < scores["plain"]["interval_score"]
    assert scores["three"]["inside_fraction"] == pytest.approx(374 / 434)
    assert scores["three"]["interval_score"] == pytest.approx(1.003, abs=0.002)
    assert scores["three"]["median_half_width"] <= bands.MAX_MEDIAN_HALF_WIDTH < scores["two"]["median_half_width"]
    calibration = {name: bands.cross_validate(folded(measured, fold), "document", bands.QUANTILES)
                   for name, fold in (("three", {}), ("two", two), ("plain", plain))}
    assert [round(c["interval_score"], 3) for c in calibration.values()] == pytest.approx([0.601, 0.582, 0.581],
                                                                                          abs=0.002)


def test_bands_on_found_runs_left_out_of_the_table(every_measurement):
    """What a new set of public runs would see (issue #20: "the same will be checked on measurements kept
    back"): each of the seven found sets (make_bands.FOUND_SETS: 220 values) left out of the table in turn,
    the quantiles chosen again by the rule on what is left, its values scored against those bands: 193 of 220
    inside (87.7 %; by set 66.7-100 %, the second blind set vllm_found_2026_12b 68.6 %), 2026-12-04. When
    the bands came from the calibration set alone the same sets scored 65.5 % (144 of 220; the first blind
    sets 49 % and 48.6 %); with the previous ladder 85.5 %, and with the quantile rule holding the width on
    every measurement of the table instead of the calibration set's 79.5 %. The eighth set, weight_only_found
    (52 values of 4-bit AWQ/GPTQ runs and their 16-bit controls, found 2026-12-05 and scored before it joined),
    left out: 51 of 52 inside at a median half-width of 31.8 %; all eight: 241 of 272 (88.6 %). With gpt-oss's
    API server time (Efficiency.api_server_harmony_request_s) the API-server cells lost their gpt-oss outliers
    and narrowed: all eight 234 of 272 (86.0 %; vllm_found 86.7 -> 60.0 %, its Qwen short bursts now outside),
    weight_only_found 51 of 52 at 30.1 %, mean interval score with each measurement left out 1.360 -> 1.144.
    The ninth, vllm_found_2026_12c (6 values: Qwen3-30B-A3B on H100, GLM-4.5-Air FP8 on B200; found and scored
    blind 2026-12-05 before it joined: 4 of 6 inside, the B200 run's TTFT -97 % and requests/s +60 % outside):
    all nine 244 of 278 (87.8 %). With the API server's turn-taking (Efficiency.api_server_final_share,
    2026-12-05): 247 of 278 (88.8 %), and narrower (with each document of both sets left out, median half-width
    37.7 -> 33.5 %, mean interval score 1.344 -> 1.142). Since the quantile rule holds issue #20's two targets
    with each document left out (calc.timing.bands.held_out_quantiles, 2026-12-05; central 90 % -> 85.5 %, chosen
    again without each set: central 82.0-87.5 %): 232 of 278 (83.5 %) at a median half-width of 35.6 % (wider than
    the issue's 30 %: runs like these, MoE and 2025-26 hosts, are where the model is least sure), weight_only_found
    43 of 52 (82.7 %) at 21.0 %. Since rows stating a median are asked for the simulated median (2026-12-05: two
    gpt-oss values moved, -8 -> -40 % on the TTFT), the rule chooses a little wider: 233 of 278 (83.8 %) at
    38.6 %, weight_only_found 43 of 52 at 21.4 %."""
    left_out = make_bands.found_left_out(every_measurement)
    assert set(left_out) == set(make_bands.FOUND_SETS) | {"all"}
    assert left_out["all"]["n"] == 278
    assert left_out["all"]["inside_fraction"] >= 0.80
    assert left_out["all"]["inside_fraction"] == pytest.approx(233 / 278)
    assert left_out["all"]["median_half_width"] == pytest.approx(0.386, abs=0.002)
    assert left_out["weight_only_found"]["n"] == 52 and left_out["weight_only_found"]["inside_fraction"] >= 0.80


def test_bands_on_the_runs_kept_back():
    """The first kept-back runs (bench/data/vllm_found.jsonl, moe_ampere_found.jsonl: 51 values), now in the
    table: scored by ``python -m calc validate`` as a user's file is, every band holds its prediction and
    all 51 are inside, in sample (40 before they joined the table, 2026-12-04)."""
    from calc.cli.measured import score_rows
    rows = [json.loads(line) for name in ("vllm_found.jsonl", "moe_ampere_found.jsonl")
            for line in (ROOT / "bench" / "data" / name).read_text().splitlines() if line.strip()]
    scored = score_rows(rows)
    assert len(scored) == 51
    assert sum(s.inside for s in scored) >= 48
    assert all(s.low <= s.predicted <= s.high for s in scored)


def test_second_blind_set_parses_and_every_row_is_askable():
    """bench/data/vllm_found_2026_12b.jsonl (issue #20's second blind kept-back set, committed before any
    prediction was run on it): every row parses as ``python -m calc validate`` reads it, names its source
    and benchmark, and is answered for every scored metric with a band around the answer. Coverage is NOT
    asserted: the blind count is a measurement (README #20), not a target this test may steer."""
    from calc.cli.measured import ask_row, score_rows
    from calc.spec.results import parse_results
    path = ROOT / "bench" / "data" / "vllm_found_2026_12b.jsonl"
    rows = parse_results(path.read_bytes(), name=path.name, scenario={})
    assert len(rows) == 12
    assert len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert row["source_url"].startswith("https://github.com/") and row["source_ref"] and row["bench_mode"]
        scored = [k for k, m in row["measured"].items() if m.get("scored")]
        assert scored and all(row["measured"][k]["value"] > 0 for k in scored)
        predicted = ask_row(row)
        assert all(predicted.get(k) is not None and math.isfinite(predicted[k]) and predicted[k] > 0 for k in scored)
    scored = score_rows(rows)
    assert len(scored) == 35
    assert all(s.low <= s.predicted <= s.high for s in scored)
