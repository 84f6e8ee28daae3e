"""Planner figure builder and view helpers (pure: no streamlit)."""

import numpy as np
import pytest

from apptest_helpers import decode
from calc.plan.search import PlanRequest, plan
from calc.spec.catalog import get_gpu, get_model
from ui.i18n import Translator
from ui.planner import explain as X
from ui.planner.figures import pareto_figure, pareto_points

ARCH = get_model("meta-llama/Llama-3.1-8B")
GPUS = [get_gpu(g) for g in ("a100-80gb", "h100-sxm", "l4")]
REQ = PlanRequest(rate_rps=20, input_len=1000, output_len=200, ttft_slo_s=1.0, tpot_slo_s=0.05)
T = Translator("en")
R = plan(ARCH, GPUS, REQ)


def test_pareto_points_cost_by_hand_and_front():
    p = pareto_points(R.grid, rate_rps=20, input_len=1000, output_len=200)
    gi, ti, qi, ki, si = p["idx"][0]
    usd = float(R.grid.usd_per_hour[gi, ti, qi, ki, si])
    # $/h / 3600 s / (20 req/s x 1,200 tokens) x 1e6
    assert p["cost"][0] == pytest.approx(usd / 3600 / (20 * 1200) * 1e6, rel=1e-12)
    front = np.flatnonzero(p["front"])
    order = front[np.argsort(p["e2e_s"][front])]
    assert np.all(np.diff(p["cost"][order]) < 0)  # along the front, faster costs more
    # nothing off the front is both cheaper and faster than a front point
    for k in front:
        assert not np.any((p["cost"] < p["cost"][k]) & (p["e2e_s"] < p["e2e_s"][k]))


def test_pareto_figure():
    fig = pareto_figure(R.grid, T, rate_rps=20, input_len=1000, output_len=200,
                        gpu_names={g.id: g.name for g in GPUS}).to_dict()
    names = [tr["name"] for tr in fig["data"]]
    assert names[-1] == "Pareto front" and "NVIDIA H100 SXM5 80GB" in names
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis"]["type"] == "log"
    assert "(s)" in fig["layout"]["xaxis"]["title"]["text"] and "$" in fig["layout"]["yaxis"]["title"]["text"]
    assert all(len(decode(tr["x"])) == len(decode(tr["y"])) == len(tr["text"]) for tr in fig["data"])
    assert "$%{customdata[4]:.2f}/h" in fig["data"][0]["hovertemplate"]  # $/h in the hover, 2 decimals
    spec = fig["data"][0]["customdata"]  # float32, one row of 7 per point
    assert spec["dtype"] == "f4" and spec["shape"].replace(" ", "").endswith(",7")
    cd = np.asarray(decode(spec)).reshape(-1, 7)
    assert np.all(cd[:, 0] == np.round(cd[:, 0])) and np.all(cd[:, 3] >= cd[:, 0])  # TP an integer; GPUs >= TP
    # a GPU's trace: its name once, in the hover (``%{fullData.name}``), not in every point's text
    assert fig["data"][0]["hovertemplate"].startswith("%{fullData.name}, %{text}, TP ")
    assert " / KV " in fig["data"][0]["text"][0] and not fig["data"][0]["text"][0].startswith("NVIDIA")
    assert fig["data"][-1]["text"][0].startswith("NVIDIA ")  # the front mixes GPUs: the name per point


def _drawn(fig) -> tuple[int, set[str]]:
    gpu = [tr for tr in fig.to_dict()["data"] if tr["type"] in ("scatter", "scattergl") and tr["name"] != "Pareto front"]
    return sum(len(decode(tr["x"])) for tr in gpu), {tr["type"] for tr in gpu}


def test_pareto_figure_draws_each_visible_point_once_svg_when_few(monkeypatch):
    from ui.planner import figures as PF

    names = {g.id: g.name for g in GPUS}
    fig = pareto_figure(R.grid, T, rate_rps=20, input_len=1000, output_len=200, gpu_names=names)
    p = pareto_points(R.grid, rate_rps=20, input_len=1000, output_len=200)
    n, kinds = _drawn(fig)
    # points on top of one another are drawn once: at most one per distinct (GPU, cost, latency)
    distinct = {(int(g), float(c), float(e)) for g, c, e in zip(p["idx"][:, 0], p["cost"], p["e2e_s"])}
    assert 0 < n <= len(distinct) < len(p["cost"])  # this plan has exact duplicates (max_num_seqs not binding)
    assert kinds == {"scatter"}  # few points: SVG, no WebGL context
    monkeypatch.setattr(PF, "SVG_MAX_POINTS", 1)
    _, kinds = _drawn(pareto_figure(R.grid, T, rate_rps=20, input_len=1000, output_len=200, gpu_names=names))
    assert kinds == {"scattergl"}  # many points: WebGL


def test_ranked_rows_and_reasons():
    rows = X.ranked_rows(R, T, lang="en")
    assert len(rows) == len(R.ranked) and rows[0]["#"] == 1
    assert rows[0]["Open"].startswith("/frontier?")
    summary = X.reason_summary(R, T)
    assert sum(r["Options"] for r in summary) == sum(o.reason != "ok" for o in R.options) < len(R.options)
    assert all(r["Why out"] != "meets the SLA" for r in summary)  # issue #19: it was the table's first row
    assert all(r["Why out"] != "meets the SLA" for r in X.out_rows(R, T, {}))


def test_quality_and_prices():
    lines = X.quality_lines(ARCH.id, ARCH.name, ["none", "int8", "awq"], T)
    assert any("100.3 % recovery" in s and "RedHatAI" in s for s in lines)
    assert any("98.9 % recovery" in s for s in lines)  # W4A16 figure shown for awq (same 4-bit format)
    assert X.quality_short(ARCH.id, "none", T) == "100 % (16-bit)"
    assert X.quality_short(ARCH.id, "none", Translator("zh")) == "100 %（16 位）"
    assert X.quality_short(ARCH.id, "int8", T) == "100.3 % OpenLLM v1"
    rows = X.price_rows(["h100-sxm", "gh200"], {"gh200": 2.0}, T, {})
    assert rows[0]["$ / GPU-hour"] == "$3.780" and "Lambda" in rows[0]["Source (provider, date)"]
    assert rows[1]["Source (provider, date)"] == "your price"
