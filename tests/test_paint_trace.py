"""bench/paint_trace.py's accounting: thread time per trace event, each less its children's."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import paint_trace  # noqa: E402


def _x(name, ts, dur, tdur, tid=1):
    return {"ph": "X", "name": name, "pid": 7, "tid": tid, "ts": ts, "dur": dur, "tdur": tdur}


def test_self_thread_time_nests_children_and_stops_at_the_mark():
    trace = {"traceEvents": [
        {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "CrRendererMain"}},
        {"ph": "M", "name": "thread_name", "pid": 7, "tid": 2, "args": {"name": "Compositor"}},
        _x("RunTask", 0, 10_000, 8_000),             # 8 ms of CPU, 5 of them in its children
        _x("FunctionCall", 1_000, 4_000, 3_000),     # 3 ms, 1 of them in its child
        _x("Document::recalcStyle", 2_000, 1_000, 1_000),
        _x("LocalFrameView::performLayout", 6_000, 2_000, 2_000),
        _x("RunTask", 12_000, 1_000, 1_000),
        _x("RunTask", 0, 50_000, 50_000, tid=2),     # another thread: not counted
        _x("FunctionCall", 30_000, 1_000, 1_000),    # after the mark (20 ms): not counted
    ]}
    ms = paint_trace.self_thread_ms(trace, until_ms=20)
    assert ms == {"RunTask": 3 + 1, "FunctionCall": 2, "Document::recalcStyle": 1,
                  "LocalFrameView::performLayout": 2}


def test_synthetic_app_puts_the_elements_before_the_chart():
    src = paint_trace.synthetic_app("selectbox")
    compile(src, "synthetic", "exec")
    assert src.index("st.selectbox(") < src.index("st.plotly_chart(")
    assert f"range({paint_trace.N_ELEMENTS})" in src
