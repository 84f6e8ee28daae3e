"""bench/lmdeploy_ttft_budget.py: LMDeploy v0.1 closed loops and TurboMind's engine-side TTFT budget."""

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import lmdeploy_ttft_budget as lb  # noqa: E402


def _rows():
    return [json.loads(line) for line in lb.DATA.read_text().splitlines() if line.strip()]


def test_implied_lengths_of_the_7b_c128_row():
    # pm-069: 12.611 req/s, 3210.281 output tok/s, 6619.357 total tok/s
    # O = 3210.281 / 12.611 = 254.562; I = (6619.357 − 3210.281) / 12.611 = 3409.076 / 12.611 = 270.326
    i_len, o_len = lb.implied_lengths({"requests_per_s": 12.611, "output_tokens_per_s": 3210.281,
                                       "total_tokens_per_s": 6619.357})
    assert i_len == pytest.approx(270.326, abs=1e-3)
    assert o_len == pytest.approx(254.562, abs=1e-3)


def test_engine_budget_by_hand():
    # w = 2 iterations of 40 ms, prefill 20 ms, decode step 30 ms, request 2 ms:
    # 2 × 0.040 + 0.020 + 0.030 + 0.002 = 0.132 s; w = 0.5: 0.020 + 0.020 + 0.030 + 0.002 = 0.072 s
    got = lb.engine_ttft_budget_s(wait_iterations=np.array([2.0, 0.5]), iteration_s=0.040, prefill_s=0.020,
                                  decode_step_s=0.030, request_s=0.002)
    assert got == pytest.approx([0.132, 0.072])


def test_found_rows_match_the_calibration_set_and_the_table():
    rows = {r["id"]: r for r in _rows()}
    assert len(rows) == 9  # 7B, 13B, 20B at C = 64, 128; 70B at C = 64, 128, 256
    with open(ROOT / "bench" / "data" / "calibration_measurements.csv", newline="") as fh:
        cal = {r["id"]: r for r in csv.DictReader(fh)}
    for r in rows.values():
        pm = r["in_calibration_measurements"]
        if pm:
            assert float(cal[pm]["ttft_s"]) == r["measured"]["ttft_s_mean"]
            assert float(cal[pm]["output_tokens_per_s"]) == r["measured"]["output_tokens_per_s"]
            assert int(cal[pm]["concurrency"]) == r["concurrency"]
    assert {r["in_calibration_measurements"] for r in rows.values()} == {None, "pm-069", "pm-070"}
    assert rows["lmd-a100-70b-c256"]["measured"]["ttft_s_max"] == 19.52  # the table's FTL(max)


def test_engine_side_budget_brackets_the_calculator_and_leaves_a_residual_growing_with_c():
    asked = {r["id"]: lb.ask(r) for r in _rows()}
    assert asked["lmd-a100-20b-c64"] is None  # InternLM-20B is not in the catalog
    for a in filter(None, asked.values()):
        # the calculator's own closed-loop TTFT (½ decode step + prefill + t_req) is below both bounds
        assert a["ttft_calc_s"] < a["engine_low_s"] < a["engine_high_s"]
    res = {k: a["residual_s"] for k, a in asked.items() if a}
    assert res["lmd-a100-7b-c64"] < res["lmd-a100-7b-c128"]
    assert res["lmd-a100-70b-c64"] < res["lmd-a100-70b-c128"] < res["lmd-a100-70b-c256"]
