"""ui.charts: figures sent with their arrays pre-encoded are byte-for-byte what Plotly would send."""

from __future__ import annotations

import copy

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools
import pytest

from calc.sizing.scenario import memory_for
from calc.timing.operators import decode_table, roofline
from calc.timing.schedule import mixed_workload, segments, simulate
from calc.timing.estimate import engine_numbers
from ui import charts, state
from ui.i18n import Translator
from ui.memory import figures as MF, sweeps
from ui.perf import figures as FP, view as V
from ui.perf.controls import Variant, apply_variant
from ui.theme import SERIES_COLORS


def _sent(fig: go.Figure) -> str:
    """The JSON st.plotly_chart puts in its proto (streamlit/elements/plotly_chart.py)."""
    return pio.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True), validate=False)


def _figures():
    t = Translator("en")
    sc = state.default_scenario()
    s = sc.serving
    r = memory_for(sc.arch, sc.gpu, s, sc.efficiency, concurrency=200, context_tokens=sc.context_tokens)
    x = sweeps.concurrency_points(chosen=200, max_fit=int(r.max_concurrency_at_context))
    sweep = memory_for(sc.arch, sc.gpu, s, sc.efficiency, concurrency=x, context_tokens=sc.context_tokens)
    yield "memory_stack", lambda: MF.memory_stack_figure(x, "concurrency", sweep, t, chosen=200, utilization=0.9)
    yield "waste", lambda: MF.waste_figure(r, t, block_size=16, max_model_len=4096)
    base = Variant("", s, sc.gpu, True)
    variants = [base, apply_variant(base, "kv:fp8")]
    probes = [V.probe(v, sc.arch, sc.efficiency) for v in variants]
    conc = V.sweep_concurrency(probes, 16)
    series = [V.frontier_series(v, sc.arch, sc.efficiency, concurrency=conc, label=v.token or "you",
                                color=SERIES_COLORS[k], ttft_slo_s=0.5, tpot_slo_s=0.05, chosen=16)
              for k, v in enumerate(variants)]
    yield "frontier_sla", lambda: FP.frontier_sla_figure(series, t, ttft_slo_s=0.5, tpot_slo_s=0.05, per_gpu=False)
    yield "frontier_conc", lambda: FP.frontier_concurrency_figure(series, t, per_gpu=True, chosen=16)
    rl = roofline(sc.arch, sc.gpu, s, sc.efficiency, decode_batch=16, context_tokens=2048, prompt_tokens=1792)
    yield "roofline", lambda: FP.roofline_figure(rl, t, gpu_name=sc.gpu.name)
    table = decode_table(rl.engine, batch=np.array([1, 2, 4, 8, 16, 64, 256]), context_tokens=2048)
    yield "decode_batch", lambda: FP.decode_batch_figure(table, t, batch=16, critical_batch=rl.critical_batch,
                                                         kv_limit_batch=60.0)
    reqs = mixed_workload(n_requests=6, long_prompt_tokens=2048, short_prompt_tokens=128, output_tokens=64,
                          arrival_gap_s=0.05)
    run = simulate(engine_numbers(sc.arch, sc.gpu, s, sc.efficiency), reqs, enable_chunked_prefill=True,
                   max_num_seqs=8, max_num_batched_tokens=512, kv_capacity_tokens=1e6)
    yield "schedule", lambda: FP.schedule_figure(run, segments(run), t, title="x")
    from calc.plan.search import PlanRequest, plan
    from calc.spec.catalog import get_gpu, get_model
    from ui.planner.figures import pareto_figure

    gpus = [get_gpu(g) for g in ("a100-80gb", "h100-sxm", "l4")]
    grid = plan(get_model("meta-llama/Llama-3.1-8B"), gpus,
                PlanRequest(rate_rps=20, input_len=1000, output_len=200, ttft_slo_s=1.0, tpot_slo_s=0.05)).grid
    yield "pareto", lambda: pareto_figure(grid, t, rate_rps=20, input_len=1000, output_len=200,
                                          gpu_names={g.id: g.name for g in gpus})


def _plotly_built(fig: charts.Figure) -> go.Figure:
    """The same figure through Plotly's own constructor (what the figure was before ui.charts)."""
    data, layout = fig.__dict__["_spec"]
    return go.Figure(data=copy.deepcopy(data), layout=copy.deepcopy(layout), _validate=False)


@pytest.mark.parametrize("name,build", list(_figures()), ids=lambda v: v if isinstance(v, str) else "")
def test_fast_figure_sends_exactly_what_plotly_would(name, build, monkeypatch):
    import json

    import streamlit as st

    fig = build()
    assert isinstance(fig, charts.Figure) and "_spec" in fig.__dict__
    reference = _sent(_plotly_built(fig))
    sent = {}
    monkeypatch.setattr(st, "plotly_chart", lambda f, **kw: sent.setdefault("json", _sent(f)))
    charts.plotly_chart(fig, key="k")
    assert json.loads(sent["json"]) == json.loads(reference)
    assert "_spec" in fig.__dict__  # never built
    # used as a go.Figure (tests, a page that changes it), it is one, and serializes the same
    built = build()
    assert len(built.data) == len(json.loads(reference)["data"]) and "_spec" not in built.__dict__
    sent.clear()
    charts.plotly_chart(built, key="k")
    assert json.loads(sent["json"]) == json.loads(reference)


def test_a_changed_figure_is_sent_changed(monkeypatch):
    import json

    import streamlit as st

    name, build = next(_figures())
    fig = build()
    fig.update_layout(height=123)
    sent = {}
    monkeypatch.setattr(st, "plotly_chart", lambda f, **kw: sent.setdefault("json", _sent(f)))
    charts.plotly_chart(fig, key="k")
    assert json.loads(sent["json"])["layout"]["height"] == 123


@pytest.mark.parametrize("name,build", list(_figures())[:3], ids=lambda v: v if isinstance(v, str) else "")
def test_sendable_is_to_dict_and_what_the_chart_changes_leaves_the_template_and_figure_alone(name, build):
    """charts.sendable shares Plotly's default template instead of copying it (ui.layout.chart): the
    same JSON as to_dict(), and the inks, the dark theme and presenter fonts change copies only."""
    import json

    from _plotly_utils.utils import PlotlyJSONEncoder

    from ui import layout

    def dump(obj) -> str:
        return json.dumps(obj, sort_keys=True, cls=PlotlyJSONEncoder)

    fig = build()
    reference = dump(fig.to_dict())
    template = dump(charts._default_template())
    d = charts.sendable(fig)
    assert dump(d) == reference
    d = layout.text_inks(d)
    layout.for_dark_theme(charts.encoded(d))
    layout.scale_fonts(charts.encoded(d), 1.5, 1.25)
    assert dump(charts._default_template()) == template
    assert dump(fig.to_dict()) == reference


@pytest.mark.parametrize("array", [np.array([1.5, 2.5]), np.arange(5), np.array([1, 70_000]), np.array([2**40, 1]),
                                   np.array([1, 2], dtype=np.uint64), np.array([[1.0, 2.0], [3.0, 4.0]]),
                                   np.array([True, False]), np.array(["a", "b"]), np.array([], dtype=float),
                                   np.array([1.0, np.nan, np.inf]), np.array([1, 2], dtype=np.float32)])
def test_typed_array_matches_plotly(array):
    from _plotly_utils.utils import convert_to_base64

    ours = charts.encode_arrays({"x": array.copy(), "range": np.array([1.0, 2.0])})
    theirs = {"x": array.copy(), "range": np.array([1.0, 2.0])}
    convert_to_base64(theirs)
    assert pio.to_json(ours, validate=False) == pio.to_json(copy.deepcopy(theirs), validate=False)


def _plotly_encode(o, **kw) -> str:
    """What Plotly's own PlotlyJSONEncoder.encode writes (whether or not ui.charts patched it)."""
    import json

    from _plotly_utils import utils as pu

    enc = pu.PlotlyJSONEncoder(**kw)
    encoded_o = json.JSONEncoder.encode(enc, o)
    if not ("NaN" in encoded_o or "Infinity" in encoded_o):
        return encoded_o
    return json.dumps(json.loads(encoded_o, parse_constant=enc.coerce_to_strict), sort_keys=enc.sort_keys,
                      indent=enc.indent, separators=(enc.item_separator, enc.key_separator))


@pytest.mark.parametrize("seed", range(40))
def test_json_check_writes_what_plotly_writes(seed):
    """ui.charts.install_json_check: the same JSON as Plotly's encoder for NaN and infinities as values
    (in lists, as dict values, negative), for strings that hold "NaN" / "Infinity" (base64 texts, a
    hover text "x,NaN"), NumPy scalars and arrays, compact and indented."""
    import json

    from _plotly_utils import utils as pu

    assert charts.install_json_check()
    rng = np.random.default_rng(seed)
    leaves = [float("nan"), float("inf"), -float("inf"), 1.5, -2, "NaN", "xNaNy", "a,NaN", "[Infinity", ":-Infinity",
              "ends in NaN", base64_text := "QNaN/+Infinity==", np.float32(0.25), np.int64(7), True, None, "é ✓"]

    def build(depth):
        if depth == 0 or rng.random() < 0.3:
            return leaves[rng.integers(len(leaves))]
        if rng.random() < 0.5:
            return [build(depth - 1) for _ in range(rng.integers(0, 4))]
        return {f"k{i}": build(depth - 1) for i in range(rng.integers(0, 4))}

    obj = {"data": [build(4) for _ in range(3)], "layout": build(3), "bdata": base64_text,
           "arr": np.array([1.0, np.nan, np.inf])}
    for kw in ({"separators": (",", ":")}, {}, {"indent": 2}):
        assert json.dumps(obj, cls=pu.PlotlyJSONEncoder, **kw) == _plotly_encode(obj, **kw)


def test_json_check_leaves_base64_nan_to_one_pass(monkeypatch):
    """A base64 text that holds the letters "NaN" is not decoded and encoded again."""
    import json

    assert charts.install_json_check()
    loads, real_loads = [], json.loads
    monkeypatch.setattr(json, "loads", lambda *a, **k: loads.append(a) or real_loads(*a, **k))
    text = pio.to_json({"data": [{"type": "scatter", "x": {"dtype": "f8", "bdata": "AAANaN8/"}}], "layout": {}},
                       validate=False)
    assert "NaN" in text and loads == []
    assert pio.to_json({"data": [{"type": "scatter", "y": [1.0, float("nan")]}], "layout": {}},
                       validate=False).endswith('"y":[1.0,null]}],"layout":{}}')
    assert len(loads) == 1
