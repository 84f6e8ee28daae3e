"""ui.bands: the error bands the pages draw (numbers from calc/data/bands.json)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from calc.spec.catalog import get_gpu, get_model
from calc.timing.bands import BandBasis, BandKey, load_measurements
from ui import bands as B
from ui.i18n import Translator

T_EN, T_ZH = Translator("en"), Translator("zh")
ONE = BandBasis(BandKey("closed", "hopper", False, "ttft"), "closed/hopper/dense/ttft", 10, 10,
                log_lo=-0.2, log_hi=0.1, median_abs_error=0.1, p90_abs_error=0.2, label="", measurements=("pm-001:ttft_s",))


def test_limits_and_inverse_limits_by_hand():
    # low = 100 · e^-0.1 = 90.48, high = 100 · e^0.2 = 122.14
    lo, hi = B.limits(100.0, ONE)
    assert (round(float(lo), 2), round(float(hi), 2)) == (90.48, 122.14)
    # a cost (price ÷ throughput) of $1 when the throughput band is that: $1 · e^-0.2 = 0.8187 … $1 · e^0.1 = 1.1052
    lo, hi = B.inverse_limits(1.0, ONE)
    assert (round(float(lo), 4), round(float(hi), 4)) == (0.8187, 1.1052)


@given(st.floats(1e-6, 1e6), st.floats(-3, 0), st.floats(0, 3))
def test_a_band_always_holds_its_value(v, log_lo, log_hi):
    b = BandBasis(ONE.key, "", 5, 5, log_lo, log_hi, 0, 0, "", ())
    for lo, hi in (B.limits(v, b), B.inverse_limits(v, b)):
        assert float(lo) <= v * (1 + 1e-12) and float(hi) >= v * (1 - 1e-12)


def test_single_client_and_closed_loop_points_get_their_own_regime():
    arch, gpu = get_model("Qwen/Qwen3-8B"), get_gpu("h100-sxm")
    lo, hi = B.curve_limits(arch, gpu, "ttft", [1.0, 1.0], [1, 8])
    single, closed = B.basis(arch, gpu, "ttft", concurrency=1), B.basis(arch, gpu, "ttft", concurrency=8)
    assert single.key.regime == "single" and closed.key.regime == "closed"
    assert float(lo[0]) == pytest.approx(math.exp(-single.log_hi)) and float(lo[1]) == pytest.approx(math.exp(-closed.log_hi))
    assert float(hi[1]) == pytest.approx(math.exp(-closed.log_lo))


def test_points_where_the_api_server_is_busy_get_its_band():
    arch, gpu = get_model("Qwen/Qwen3-8B"), get_gpu("h100-sxm")
    lo, hi = B.curve_limits(arch, gpu, "tpot", [1.0, 1.0, 1.0], [1, 8, 8], busy=[False, False, True])
    closed = B.basis(arch, gpu, "tpot", concurrency=8)
    busy = B.basis(arch, gpu, "tpot", concurrency=8, condition="api_server")
    assert busy.key.condition == "api_server" and closed.key.condition == "engine"
    assert float(hi[1]) == pytest.approx(math.exp(-closed.log_lo)) and float(hi[2]) == pytest.approx(math.exp(-busy.log_lo))
    # 40 requests/s x 14.5 ms = 0.58 of the API server's time: busy; 10 requests/s: 0.145, shared; 5: 0.0725, the engine's
    from calc.spec.inputs import Efficiency
    assert B.condition(40.0, Efficiency(), arch) == "api_server" and B.condition(10.0, Efficiency(), arch) == "api_shared"
    assert B.condition(5.0, Efficiency(), arch) == "engine"
    # gpt-oss's chat requests take the Harmony path, 2.5 ms: 40 requests/s is 0.1 of the API server's time,
    # the engine's (shared from 0.125); 140 requests/s 0.35, busy
    oss = get_model("openai/gpt-oss-20b")
    assert B.api_server_time_s(oss, Efficiency()) == 2.5e-3 and B.condition(40.0, Efficiency(), oss) == "engine"
    assert B.condition(140.0, Efficiency(), oss) == "api_server"
    assert "API server busy" in B.where_text(busy, T_EN) and "API 服务器" in B.where_text(busy, T_ZH)


def test_points_where_the_api_server_is_shared_get_that_band():
    """The three conditions along one sweep, by name or by index (the frontier's cache key)."""
    arch, gpu = get_model("Qwen/Qwen3-8B"), get_gpu("h100-sxm")
    names = ["engine", "api_shared", "api_server"]
    lo, hi = B.curve_limits(arch, gpu, "tpot", [1.0, 1.0, 1.0], [8, 8, 8], busy=names)
    by_index = B.curve_limits(arch, gpu, "tpot", [1.0] * 3, [8] * 3, busy=[0.0, 1.0, 2.0])
    np.testing.assert_allclose(np.array([lo, hi]), np.array(by_index))
    for i, cond in enumerate(names):
        b = B.basis(arch, gpu, "tpot", concurrency=8, condition=cond)
        assert b.key.condition == cond
        assert float(lo[i]) == pytest.approx(math.exp(-b.log_hi)) and float(hi[i]) == pytest.approx(math.exp(-b.log_lo))
    shared = B.basis(arch, gpu, "tpot", concurrency=8, condition="api_shared")
    assert "API server busy 12–33 % of the time" in B.where_text(shared, T_EN)
    assert "API 服务器忙碌 12–33% 的时间" in B.where_text(shared, T_ZH)


def test_the_rate_sweep_gives_each_rate_its_condition():
    """The load test's sweep: 5, 10 and 40 requests/s at 22 ms each are the engine's, shared, busy."""
    arch, gpu = get_model("Qwen/Qwen3-8B"), get_gpu("h100-sxm")
    base = [B.basis(arch, gpu, g, arrival="poisson") for g in ("throughput", "ttft")]
    busy = {c: tuple(B.basis(arch, gpu, g, arrival="poisson", condition=c) for g in ("throughput", "ttft"))
            for c in ("api_shared", "api_server")}
    rates, ones = np.array([5.0, 10.0, 40.0]), np.ones(3)
    good, ttft = B.sweep_regions(*base, T_EN, presenting=False, busy=busy, api_server_s=0.022)(rates, ones, ones)
    for i, (g, f) in enumerate([base, busy["api_shared"], busy["api_server"]]):
        assert min(good["y"]) <= math.exp(-g.log_hi) * (1 + 1e-9) and max(good["y"]) >= math.exp(-g.log_lo) * (1 - 1e-9)
        assert min(ttft["y"]) <= math.exp(-f.log_hi) * (1 + 1e-9)


def test_region_is_one_closed_polygon_from_the_optimistic_to_the_pessimistic_curve():
    r = B.region([1, 2], [3, 4], [10, 20], [30, 40], name="band", xaxis="x2")
    # optimistic (x_lo, y_hi) forward, then pessimistic (x_hi, y_lo) backward
    assert r["x"].tolist() == [1, 2, 4, 3] and r["y"].tolist() == [30, 40, 20, 10]
    assert r["fill"] == "toself" and r["xaxis"] == "x2" and r["hoverinfo"] == "skip"
    assert B.region([1], [2], [1], [2], name="", presenting=True)["fillcolor"] == B.FILL_PRESENTING


def test_a_regime_without_measurements_says_so_in_both_languages():
    # MI300X (cdna3) under an open loop: no measurements of its own, borrowed and widened
    b = B.basis(get_model("Qwen/Qwen3-8B"), get_gpu("mi300x"), "tpot", arrival="poisson")
    assert b.n_exact == 0 and b.cell != b.key.cell(("regime", "family", "moe"))
    assert "no measurements in this regime" in B.own_text(b, T_EN)
    assert "没有测量" in B.own_text(b, T_ZH)


def test_why_rows_name_the_measurements_their_errors_and_sources():
    b = B.basis(get_model("Qwen/Qwen3-8B"), get_gpu("h100-sxm"), "memory")
    rows = B.why_rows({"KV": b}, T_EN)
    known = load_measurements()
    first = b.measurements[0]
    assert f"{first} ({known[first]['error'] * 100:+.0f} %)" in rows[0]["Measurements (id, error)"]
    assert rows[0]["Sources"]  # e.g. the llm-d planner's vLLM logs
    assert len(B.why_rows({"KV": b}, T_ZH)[0]) == 5


def test_every_measurement_of_the_table_has_its_error_and_source():
    from calc.timing.bands import load_table

    known = load_measurements()
    ids = {m for c in load_table()["cells"].values() for m in c["measurements"]}
    assert ids <= set(known) and all(known[i]["source"] for i in ids)


class _Cards:
    def __init__(self):
        self.calls = []

    def metric(self, label, value, **kw):
        self.calls.append((label, value, kw))


@pytest.mark.parametrize("presenting", [False, True])
def test_card_shows_the_range_except_in_presenter_mode(presenting):
    cards = _Cards()
    B.card(cards, T_EN, "TTFT", "100 ms", B.limits(100.0, ONE), ONE, lambda v: f"{v:.0f}", unit="ms",
           presenting=presenting)
    (_, _, kw), = cards.calls
    assert ("delta" in kw) != presenting
    assert "range 90–122 ms" in kw["help"] and "10 measurements" in kw["help"]
    if not presenting:
        assert kw["delta"] == "range 90–122 ms" and kw["delta_color"] == "gray"


def test_card_with_a_delta_keeps_it_and_adds_the_range():
    cards = _Cards()
    B.card(cards, T_EN, "P95 TTFT", "100 ms", B.limits(100.0, ONE), ONE, lambda v: f"{v:.0f}", unit="ms", delta="-5 ms vs target",
           delta_color="inverse")
    assert cards.calls[0][2]["delta"] == "-5 ms vs target · range 90–122 ms"


def test_cdf_region_spans_each_quantile():
    r = B.cdf_region(np.array([0.1, 0.2]), ONE, T_EN, presenting=False)[0]
    # 100 ms, 200 ms: low e^-0.1 x, high e^0.2 x, at shares 50 % and 100 %
    assert np.allclose(r["x"], [90.48, 180.97, 244.28, 122.14], atol=0.01)
    assert r["y"].tolist() == [50, 100, 100, 50]


@pytest.mark.parametrize("page, key, lang, word", [("pages/frontier.py", "fr", "en", "Measurements (id, error)"),
                                                   ("pages/memory.py", "mem", "zh", "测量（编号、误差）"),
                                                   ("pages/planner.py", "pl", "en", "Sources")])
def test_why_this_band_panel_lists_the_measurements(page, key, lang, word):
    from apptest_helpers import app, open_section

    at = app({"lang": lang}, page=page)
    open_section(at, f"why_band_{key}")
    assert not at.exception
    (table,) = [tb for tb in at.table if word in str(tb.value.columns.tolist())]
    ids = " ".join(table.value[word].tolist() if word != "Sources" else table.value["Measurements (id, error)"].tolist())
    assert ":" in ids and "%" in ids  # "r01:kv_pool (+0 %)", "t3-…:ttft_s (-12 %)"


def test_presenter_mode_keeps_one_line_per_card_and_a_lighter_band():
    from apptest_helpers import app, plotly_specs

    at = app({"present": "1"}, page="pages/frontier.py")
    assert not at.exception
    assert all(not m.delta for m in at.metric)
    bands = [d for d in plotly_specs(at)[0]["data"] if d.get("name") == "Likely range (measurements)"]
    assert bands and all(d["fillcolor"] == B.FILL_PRESENTING for d in bands)


def _old_frontier_regions(f, arch, gpu, t, *, per_gpu, presenting):
    """frontier_regions as it was built before its cache: curve_limits and region on every call."""
    y = np.asarray(f.output_tokens_per_s_per_gpu if per_gpu else f.output_tokens_per_s, dtype=float)
    y_lo, y_hi = B.curve_limits(arch, gpu, "throughput", y, f.concurrency)
    sla = []
    for k, (attr, group, xa, ya) in enumerate((("tpot_s", "tpot", "x", "y"), ("ttft_s", "ttft", "x2", "y2"))):
        x_lo, x_hi = B.curve_limits(arch, gpu, group, np.asarray(getattr(f, attr), dtype=float) * 1e3, f.concurrency)
        sla.append({**B.region(x_lo, x_hi, y_lo, y_hi, name=t("band.trace"), presenting=presenting, xaxis=xa, yaxis=ya),
                    "showlegend": k == 0})
    c = np.asarray(f.concurrency, dtype=float)
    return sla, [B.region(c, c, y_lo, y_hi, name=t("band.trace"), presenting=presenting)]


@pytest.mark.parametrize("model, gpu_id, per_gpu, presenting, t", [("Qwen/Qwen3-8B", "h100-sxm", False, False, T_EN),
                                                                   ("Qwen/Qwen3-30B-A3B", "mi300x", True, True, T_ZH)])
def test_frontier_regions_from_the_cache_are_the_regions_built_afresh(model, gpu_id, per_gpu, presenting, t):
    # a sweep of 200 points (more than MAX_EDGE_POINTS: thinned), one client first (the single-request regime)
    from types import SimpleNamespace

    from ui.charts import encoded

    arch, gpu = get_model(model), get_gpu(gpu_id)
    c = np.unique(np.geomspace(1, 1024, 200).astype(int))
    f = SimpleNamespace(concurrency=c, output_tokens_per_s=30.0 * c, output_tokens_per_s_per_gpu=15.0 * c,
                        tpot_s=0.01 + 1e-4 * c, ttft_s=0.05 + 1e-3 * c)
    f.ttft_shown_s = f.ttft_s  # the TTFT the SLA is judged on (FrontierSeries: the mean here)
    want = encoded(_old_frontier_regions(f, arch, gpu, t, per_gpu=per_gpu, presenting=presenting))
    first = B.frontier_regions(f, arch, gpu, t, per_gpu=per_gpu, presenting=presenting)
    again = B.frontier_regions(f, arch, gpu, t, per_gpu=per_gpu, presenting=presenting)  # from the cache
    assert encoded(first) == want and encoded(again) == want
    assert all(a is not b for a, b in zip(first[0] + first[1], again[0] + again[1]))  # each caller its own dicts
    # a sweep with other values is not served the cached regions
    f2 = SimpleNamespace(**{**vars(f), "ttft_s": f.ttft_s * 2, "ttft_shown_s": f.ttft_s * 2})
    assert encoded(B.frontier_regions(f2, arch, gpu, t, per_gpu=per_gpu, presenting=presenting)) \
        == encoded(_old_frontier_regions(f2, arch, gpu, t, per_gpu=per_gpu, presenting=presenting)) != want


def test_cached_band_texts_are_the_texts_built_afresh():
    b = B.basis(get_model("Qwen/Qwen3-8B"), get_gpu("mi300x"), "tpot", arrival="poisson")
    for t in (T_EN, T_ZH):
        assert B.own_text(b, t) == B._own_text(b, t) and B.help_text(b, t) == B._help_text(b, t)
        assert B.help_text(b, lambda k, **kw: t(k, **kw)) == B.help_text(b, t)  # any callable, uncached


def test_gpu_family_written_as_a_name():
    # issue #19's look check: the band note read "(open loop, ampere, dense)"
    from calc.timing.bands import FAMILIES, BandBasis, BandKey
    from ui.bands import where_text
    from ui.i18n import Translator
    t = Translator("en")
    texts = {f: where_text(BandBasis(BandKey("open", f, False, "ttft"), "x", 10, 10, -0.1, 0.2, 0.1, 0.2, "", ()), t)
             for f in FAMILIES}
    assert "Ampere" in texts["ampere"] and "ampere" not in texts["ampere"]
    assert "CDNA3" in texts["cdna3"] and "other GPUs" in texts["other"]
