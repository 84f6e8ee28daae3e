"""ui.measured: the user's own benchmark results on the pages (parse, keep, score, calibrate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apptest_helpers import app, open_section, plotly_specs
from calc.spec.inputs import Efficiency
from ui import measured as M
from ui.i18n import Translator

DATA = Path(__file__).parent / "data"
SAVE_RESULT = (DATA / "vllm_bench_serve_qwen3_8b_c1.json").read_bytes()
SUMMARY = (DATA / "vllm_bench_serve_qwen3_8b_c1.txt").read_bytes()
SCENARIO = {"model": "Qwen/Qwen3-8B", "gpu": "h100-sxm", "tensor_parallel_size": 1}
QUERY = {"model": "Qwen/Qwen3-8B", "gpu": "h100-sxm"}


@pytest.mark.parametrize("data", [SAVE_RESULT, SUMMARY])
def test_a_save_result_file_and_its_printed_summary_give_the_same_row(data):
    rows, problems = M.read(data, "f", SCENARIO, Efficiency())
    assert problems == [] and len(rows) == 1
    r = rows[0]
    # 23260 / 100 = 232.6 → 233 prompt tokens, 22061 / 100 = 220.61 → 221 output tokens, closed loop of 1
    assert r["options"]["input_len"] == 233 and r["options"]["output_len"] == 221
    assert r["load"] == {"arrival": "closed", "concurrency": 1, "num_requests": 100}
    assert r["measured"]["ttft_s"]["value"] == pytest.approx(0.05901)


@pytest.mark.parametrize("data, message", [
    (b"", "empty"),
    (b'{"completed": 5', "not valid JSON"),
    (b'{"completed": 5}', "missing 'total_input_tokens'"),
    (b'{"completed": 5, "total_input_tokens": 10, "total_output_tokens": 10}', "no measured metric"),
    (b"hello\nworld\n", "no 'vllm bench serve' summary lines"),
    (b'{"options": {"model": "nope", "gpu": "h100-sxm", "input_len": 9, "output_len": 9}, "load": {"arrival": '
     b'"closed", "concurrency": 1}, "measured": {"ttft_s": {"value": 1, "scored": true}}}', "unknown model 'nope'"),
    (b"x" * (M.MAX_UPLOAD_BYTES + 1), "larger than"),
])
def test_a_bad_or_partial_file_names_what_is_missing(data, message):
    rows, problems = M.read(data, "result.json", SCENARIO, Efficiency())
    assert rows == [] and len(problems) == 1 and message in problems[0], problems


def test_kept_rows_are_bounded_and_a_row_of_the_same_id_is_replaced():
    row = M.read(SAVE_RESULT, "f", SCENARIO, Efficiency())[0][0]
    many = [{**row, "id": f"r{i}"} for i in range(M.MAX_KEPT_ROWS + 5)]
    kept, dropped = M.keep([], many)
    assert len(kept) == M.MAX_KEPT_ROWS and dropped == 5 and kept[0]["id"] == "r5"  # the oldest dropped
    kept, dropped = M.keep(kept, [{**row, "id": "r10", "dataset": "new"}])
    assert len(kept) == M.MAX_KEPT_ROWS and dropped == 0 and kept[-1]["dataset"] == "new"
    assert len(json.dumps(kept)) <= M.MAX_KEPT_BYTES


def test_calibration_lowers_the_error_and_gives_values_the_sidebar_shows():
    rows = M.read(SAVE_RESULT, "f", SCENARIO, Efficiency())[0]
    cal = M.calibrate_values(rows, {}, Efficiency())
    assert cal["log_after"] < cal["log_before"] and cal["median_after"] < cal["median_before"]
    assert set(cal["values"]) == {key for key, _, _ in M.APPLY.values()}
    assert all(round(v, 3) == v for v in cal["values"].values())  # rounded to what the controls show


def test_points_and_traces_carry_each_rows_error():
    rows = M.read(SAVE_RESULT, "f", SCENARIO, Efficiency())[0]
    s, problems = M.scored(rows, Efficiency())
    assert problems == ()
    pts = M.points(s, rows)
    p = pts[0]
    assert p.error("ttft_s") == pytest.approx(p.predicted["ttft_s"] / 0.05901 - 1)
    tr = M.frontier_traces(pts, Translator("en"), per_gpu=False)
    measured = [x for x in tr if x.get("name") == "Your measurement"]
    assert [x["xaxis"] for x in measured] == ["x", "x2"]
    assert measured[0]["x"] == [pytest.approx(7.28)] and measured[0]["y"] == [pytest.approx(132.86)]
    assert "error" in measured[0]["text"][0]
    cdf = M.cdf_traces(pts, [0.01, 0.05, 0.1, 0.2], "ttft_s", Translator("zh"))
    # 59 ms lies above 2 of the 4 simulated TTFTs: at 50 %
    assert cdf[0]["x"] == [pytest.approx(59.01)] and cdf[0]["y"] == [50.0] and "实测" in cdf[0]["text"][0]


def test_a_row_id_is_escaped_in_the_hover():
    rows = M.read(b'{"id": "<a href=x>click</a>", "options": {"model": "Qwen/Qwen3-8B", "gpu": "h100-sxm", '
                  b'"input_len": 100, "output_len": 100}, "load": {"arrival": "closed", "concurrency": 1}, '
                  b'"measured": {"ttft_s": {"value": 0.05, "scored": true}}}', "f", SCENARIO, Efficiency())[0]
    pts = M.points(M.scored(rows, Efficiency())[0], rows)
    text = M.frontier_traces(pts, Translator("en"), per_gpu=False)[-1]["text"][0]
    assert "<a" not in text and "&lt;a" in text


def _paste(at, text: str, key: str):
    flag = f"_open_ms_panel_{key}"
    if flag not in at.session_state or not at.session_state[flag]:
        open_section(at, f"ms_panel_{key}")  # the panel is drawn only while open (ui.layout.lazy_expander)
    at.text_area(key=M.TEXT).input(text)
    at.button(key=f"ms_add_{key}").click().run()


def test_frontier_pasted_summary_is_drawn_and_calibrate_sets_the_sidebar_and_the_link():
    at = app(QUERY, page="pages/frontier.py")
    _paste(at, SUMMARY.decode(), "fr")
    assert not at.exception
    assert any("Added 1 measured row" in s.value for s in at.success)
    names = [d.get("name") for d in plotly_specs(at)[0]["data"]]
    assert "Your measurement" in names and "Predicted for its settings" in names and "Likely range (measurements)" in names
    before = {m.label: m.value for m in at.metric}
    at.button(key="ms_calibrate_fr").click().run()
    assert not at.exception
    msg = next(s.value for s in at.success if s.value.startswith("Calibrated"))
    assert "→" in msg
    # the fitted inputs are in the link (which ones the search moves depends on the defaults it starts from:
    # the step's FLOP shares, or, since the API server's time was refitted, the engine's per-sequence CPU)
    cal_keys = set(at.session_state[M.CALIBRATION]["values"])
    assert any(at.query_params.get(k) for k in cal_keys)  # (the link holds those that left their default)
    assert {m.label: m.value for m in at.metric} != before  # the view follows the calibrated inputs
    # the scenario file carries them too (ui.state.scenario_json: the controls' values)
    cal = at.session_state[M.CALIBRATION]["values"]
    from ui.state import scenario_json

    doc = json.loads(scenario_json(at.session_state["_scenario"]))
    assert all(doc["controls"][k] == v for k, v in cal.items())


def test_a_bad_paste_keeps_the_text_and_the_rows_kept_before():
    at = app(QUERY, page="pages/frontier.py")
    _paste(at, SUMMARY.decode(), "fr")
    _paste(at, "Successful requests: 10\nnothing else", "fr")
    assert not at.exception
    assert any("Not used" in e.value and "total_input_tokens" in e.value.replace("\\", "") for e in at.error)
    assert at.text_area(key=M.TEXT).value == "Successful requests: 10\nnothing else"  # nothing entered is lost
    assert len(at.session_state[M.ROWS]) == 1


def test_load_test_draws_the_measured_means_on_its_distributions_in_chinese():
    at = app({**QUERY, "lang": "zh"}, page="pages/load_test.py")
    _paste(at, SUMMARY.decode(), "lt")
    assert not at.exception
    names = [d.get("name") for sp in plotly_specs(at)[:2] for d in sp["data"]]
    assert names.count("你的测量（均值）") == 2 and "可能范围（依据测量）" in names
