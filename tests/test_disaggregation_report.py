"""bench/disaggregation_report.py: the closed-loop asks of the held-out vLLM rows (anyscale
ray-serve-llm-perf-examples: gpt-oss-120b on one 8 x H100 node, colocated and P/D)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import disaggregation_report as R  # noqa: E402

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import ServingConfig  # noqa: E402
from calc.traffic.disaggregation import make_pools  # noqa: E402


def _anyscale():
    return [r for r in R.rows() if r["id"].startswith("anyscale-")]


def test_closed_loop_arrivals_hand_checked():
    # 2 slots; finishes 3, 1, 5, 9 s: requests 0 and 1 start at 0; request 2 takes the slot freed at
    # 1 s (the first finish), request 3 the one freed at 3 s (the second)
    assert R.closed_loop_arrivals(np.array([3.0, 1.0, 5.0, 9.0]), 2).tolist() == [0.0, 0.0, 1.0, 3.0]
    # more slots than requests: a burst
    assert R.closed_loop_arrivals(np.array([2.0, 1.0]), 8).tolist() == [0.0, 0.0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.01, 100.0), min_size=1, max_size=40), st.integers(1, 50))
def test_closed_loop_arrivals_properties(finish, c):
    f = np.array(finish)
    a = R.closed_loop_arrivals(f, c)
    assert a.size == f.size and (np.diff(a) >= 0).all() and (a[:min(c, f.size)] == 0).all()


def test_held_out_rows_parse_and_quote_their_figures():
    rows = _anyscale()
    assert len(rows) == 48  # 7 deployments on H100 + 1 on H200, x C in (8, 32) x 3 metrics
    for r in rows:
        assert r["held_out"] is True and r["source"].startswith("https://github.com/anyscale/")
        get_model(r["model"]), get_gpu(r["gpu"])
        assert R.gpus(r) <= 8  # one p5.48xlarge
        assert r["num_prompts"] == 5 * r["concurrency"]  # run_bm.sh: --num-prompts 5C
        # the measured figure is the quoted benchmark field, read exactly
        field = {"output_tokens_per_s": "output_throughput", "tpot_mean_s": "mean_tpot_ms",
                 "ttft_mean_s": "mean_ttft_ms"}[r["metric"]]
        quoted = float(re.search(field + r" ([0-9.]+)", r["quote"]).group(1))
        scale = 1.0 if field == "output_throughput" else 1e-3
        assert r["measured"] == pytest.approx(quoted * scale, rel=1e-5)
        if r["setup"] == "disaggregated":
            assert r["ask"] == "closed_loop_as_run" and r["kv_connector"] == "NixlConnector"


def test_gpus_per_deployment():
    by_id = {r["id"]: r for r in _anyscale()}
    assert R.gpus(by_id["anyscale-gptoss-coloc-4xtp2-c8-tpot"]) == 8  # 4 replicas x TP 2
    assert R.gpus(by_id["anyscale-gptoss-1p2-3d2-c8-tpot"]) == 8  # 1 x 2 + 3 x 2
    assert R.gpus(by_id["anyscale-gptoss-2p2-1d2-c8-tpot"]) == 6  # 2 x 2 + 1 x 2


def test_each_kind_of_new_row_is_asked():
    """A colocated and a disaggregated closed-loop row, shrunk to C = 4 and 8 requests (quick)."""
    by_id = {r["id"]: r for r in _anyscale()}
    for base in ("anyscale-gptoss-coloc-2xtp4-c8", "anyscale-gptoss-1p4-1d4-c8"):
        for metric in ("output-tok-s", "tpot", "ttft"):
            row = dict(by_id[f"{base}-{metric}"], concurrency=4, num_prompts=8)
            sim, ana = R.predict(row)
            assert np.isfinite(sim) and sim > 0 and np.isfinite(ana) and ana > 0
    # TPOT of a decode-only engine at a handful of sequences: a few ms (gpt-oss-120b, TP 4, H100)
    sim, _ = R.predict(dict(by_id["anyscale-gptoss-1p4-1d4-c8-tpot"], concurrency=4, num_prompts=8))
    assert 1e-3 < sim < 2e-2


def test_disaggregated_closed_loop_holds_c_in_flight_and_is_a_fixed_point():
    arch, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
    s = ServingConfig(input_len=1000, output_len=20, max_model_len=4096)
    pools = make_pools(arch, gpu, s, prefill_instances=1, decode_instances=2, link_bw_bytes_per_s=40e9)
    c = 3
    r = R.simulate_closed_loop_disaggregated(pools, input_len=1000, output_len=20, concurrency=c, num_requests=12)
    assert np.isfinite(r.finish_s).all()
    in_flight = [int(np.sum((r.arrival_s <= t) & (r.finish_s > t))) for t in r.arrival_s]
    assert max(in_flight) == c  # never more than C clients' requests at once, and C at the start
    np.testing.assert_allclose(np.sort(r.arrival_s), R.closed_loop_arrivals(r.finish_s, c), atol=1e-3)


def test_rows_file_is_valid_jsonl():
    for line in R.DATA.read_text().splitlines():
        if line.strip():
            json.loads(line)


def test_llmd_closed_loop_rows_are_asked_as_run():
    # llm-d's Llama-3.1-8B 8P8D run: vllm bench serve --max-concurrency 32 --num-prompts 100
    rows = [r for r in R.rows() if r["id"].startswith("llmd-8b-8p8d")]
    assert len(rows) == 3
    for r in rows:
        assert r["ask"] == "closed_loop_as_run" and r["concurrency"] == 32 and r["num_prompts"] == 100


def test_report_runs_on_a_prefix_of_rows(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["disaggregation_report.py", "--rows", "anyscale-gptoss-h200-1p4-1d4-c8",
                                      "--kv-descriptor-us", "0.46"])
    assert R.main() == 0
    out = capsys.readouterr().out
    assert out.count("held out") == 3 and "median |error|" in out


def _scored(id_, measured, predicted, *, role="check", engine=None, metric="tpot_mean_s", **row):
    return R.Scored({"id": id_, "measured": measured, "metric": metric, "source": f"src {id_}",
                     "confidence": "high: stated", **({"engine": engine} if engine else {}), **row}, role, predicted, None)


def test_checks_leave_the_fit_row_out_of_the_medians_and_mark_each_row():
    """calc/data/disaggregation_checks.json's fields on hand-made rows: errors 0.5 (fit), -0.1, +0.2 (checks of
    the fitted engine), +0.3, -0.4 (held out, vLLM): median |error| over the held-out rows (0.3 + 0.4) / 2 =
    0.35, over all but the fit row (0.1, 0.2, 0.3, 0.4) 0.25, over the vLLM rows 0.35, over the checks 0.15."""
    scored = [_scored("a-fit", 2.0, 3.0, role="fit", engine="e"), _scored("a-1", 10.0, 9.0, engine="e"),
              _scored("a-2", 1.0, 1.2, engine="e"), _scored("b-1", 1.0, 1.3, role="held_out"),
              _scored("b-2", 0.0123456, 0.0074074, role="held_out")]
    c = R.checks(scored)
    assert (c["median_abs_error_held_out"], c["n_held_out"]) == (0.35, 2)
    assert (c["median_abs_error_all"], c["n_all"]) == (0.25, 4)
    assert (c["median_abs_error_vllm"], c["n_vllm"]) == (0.35, 2)
    assert (c["median_abs_error_checks"], c["n_checks"]) == (0.15, 2)
    assert c["engine_fits"] == [{"engine": "e", "row": "a-fit"}]
    assert (c["ratio_median_abs_error"], c["n_ratio"]) == (None, 0)  # no anyscale series: no ratio, not NaN
    assert [r["role"] for r in c["rows"]] == ["fit", "check", "check", "held_out", "held_out"]
    last = c["rows"][-1]  # 4 significant digits; the confidence's level before its reason; the row's own source
    assert (last["measured"], last["predicted"], last["error"]) == (0.01235, 0.007407, -0.4)
    assert last["confidence"] == "high" and last["source"] == "src b-2"


def test_the_page_shows_the_current_checks():
    """calc/data/disaggregation_checks.json (the disaggregation page's "how close to real servers") is what
    bench/disaggregation_report.py --write gives now (the report's whole run, about 45 s: the one slow test
    here): 57 rows, median |error| 17 % over the 49 held out, 17 % over all 56 but the fit row, 17 % over
    the 52 measured on vLLM, 18 % over the 36 disaggregated / colocated ratios, 2026-12-05."""
    from calc.traffic.disaggregation import published_checks

    fresh = json.loads(json.dumps(R.checks()))
    assert published_checks() == fresh, "run bench/disaggregation_report.py --write"
    assert len(fresh["rows"]) == 57 and (fresh["n_held_out"], fresh["n_all"], fresh["n_vllm"]) == (49, 56, 52)
    assert fresh["n_ratio"] == 36 and fresh["engine_fits"] == [{"engine": "distserve-2023",
                                                                "row": "distserve-13b-colocated-tpot"}]
    assert fresh["median_abs_error_held_out"] == pytest.approx(0.17, abs=0.01)
    assert fresh["ratio_median_abs_error"] == pytest.approx(0.18, abs=0.01)
