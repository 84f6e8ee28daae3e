"""bench/paint_profile.py: a V8 CPU profile's samples attributed to buckets, by hand-made profiles."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
pytest.importorskip("websockets")  # bench/load.py, imported by the benchmark
import paint_profile as P  # noqa: E402


def _frame(name: str, url: str = "http://x/static/js/PlotlyChart.abc.js", line: int = 0, col: int = 0) -> dict:
    return {"functionName": name, "url": url, "lineNumber": line, "columnNumber": col}


PROFILE = {  # root -> drawData -> anonymous helper (the innermost frame has no telling name)
    "nodes": [{"id": 1, "callFrame": _frame("(root)", ""), "children": [2, 4, 5]},
              {"id": 2, "callFrame": _frame("t.drawData"), "children": [3]},
              {"id": 3, "callFrame": _frame("n")},
              {"id": 4, "callFrame": _frame("(program)", "")},
              {"id": 5, "callFrame": _frame("e.supplyDefaults")}],
    "samples": [3, 3, 4, 5, 3],
    "timeDeltas": [1000, 1000, 2000, 500, 1000],  # us; the last sample is at 5,500 us
}


def test_samples_go_to_the_innermost_telling_frame():
    b = P.attribute(PROFILE, until_us=10_000)
    # node 3 ("n") has no telling name: its parent drawData decides; 1 + 1 + 1 ms
    assert b["plotly: draw other"] == pytest.approx(3.0)
    assert b["(program)"] == pytest.approx(2.0)
    assert b["plotly: supplyDefaults"] == pytest.approx(0.5)


def test_samples_after_the_chart_are_not_counted():
    b = P.attribute(PROFILE, until_us=4_400)  # samples at 1,000, 2,000, 4,000 us kept; 4,500 and 5,500 cut
    assert b == {"plotly: draw other": pytest.approx(2.0), "(program)": pytest.approx(2.0)}


def test_top_functions_self_time():
    top = dict(P.top_functions(PROFILE, until_us=10_000, n=2))
    assert top["n @PlotlyChart.abc.js:0:0"] == pytest.approx(3.0) and len(top) == 2
