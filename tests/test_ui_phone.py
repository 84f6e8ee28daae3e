"""The phone layout of the charts (ui.phone): the plot keeps its wide-screen height under a
legend that wraps into one row per entry at 390 px (issue 19: memory stack, planner, Gantt)."""

from __future__ import annotations

import doctest

import pytest

from calc.plan.search import PlanRequest, plan
from calc.spec.catalog import get_gpu, get_model, list_gpus
from calc.timing.estimate import engine_numbers
from calc.spec.inputs import ServingConfig
from calc.sizing.scenario import memory_for
from calc.timing.schedule import mixed_workload, segments, simulate
from ui import phone
from ui.i18n import Translator
from ui.memory import figures as FM, sweeps
from ui.perf import figures as FP
from ui.planner.figures import pareto_figure

EN, ZH = Translator("en"), Translator("zh")


def _memory(t):
    arch, gpu = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb")
    x = sweeps.concurrency_points(chosen=16, max_fit=58)
    r = memory_for(arch, gpu, ServingConfig(max_model_len=4096), concurrency=x, context_tokens=2048)
    return FM.memory_stack_figure(x, "concurrency", r, t, chosen=16, utilization=0.9).to_dict()


def _legend_px(fig: dict, width: float) -> float:
    font = phone._legend_font_px(fig["layout"])
    return phone.legend_rows(phone.legend_names(fig), width, font) * phone.ROW_EM * font


def test_doctests():
    assert doctest.testmod(phone).failed == 0


def test_legend_rows_pack_entries_left_to_right():
    assert phone.legend_rows([], 300, 15) == 0
    assert phone.legend_rows(["a"] * 3, 1000, 15) == 1
    # each entry 48 + 10 × 0.55 × 20 = 158 px: two to a 358-px row
    assert phone.legend_rows(["x" * 10] * 5, 358, 20) == 3
    # plotly.js: columns as wide as the widest entry (one long name: one entry a row)
    assert phone.legend_rows(["x"] * 4 + ["x" * 40], 358, 15) == 5
    assert phone.text_width_px("显存", 10) == 20 and phone.text_width_px("<b>ab</b>", 10) == 11


def test_memory_stack_keeps_its_plot_height_on_a_phone():
    for t in (EN, ZH):
        wide = _memory(t)
        small = phone.for_phone(wide)
        # the plot: height less the legend; the same on the phone as on a wide screen
        assert small["layout"]["height"] - _legend_px(small, phone.PHONE_PLOT_PX) == pytest.approx(
            wide["layout"]["height"] - _legend_px(wide, phone.WIDE_PLOT_PX), abs=1)
        assert small["layout"]["height"] >= wide["layout"]["height"] + 80  # 8 entries one to a row: 4 rows more than at 1,440 px (2 columns)
        assert small["layout"]["legend"]["xref"] == "container"  # the legend uses the whole width
        assert wide["layout"]["legend"].get("xref") != "container"
        assert small["data"] is wide["data"]  # traces shared, not copied


def test_planner_legend_of_every_gpu_fits_on_a_phone():
    arch = get_model("meta-llama/Llama-3.1-8B")
    gpus = list_gpus()[:17]
    r = plan(arch, gpus, PlanRequest(rate_rps=20, input_len=1000, output_len=200, ttft_slo_s=1.0, tpot_slo_s=0.05))
    wide = pareto_figure(r.grid, EN, rate_rps=20, input_len=1000, output_len=200,
                         gpu_names={g.id: g.name for g in gpus}).to_dict()
    small = phone.for_phone(wide)
    n = len(phone.legend_names(wide))
    assert n >= 10
    # on a wide screen the legend (columns as wide as "NVIDIA H100 NVL 94GB (per GPU)") takes 9 rows:
    # in columns, not grouped (the error band's legendgroup made plotly.js put the 17 GPUs in one column)
    assert wide["layout"]["legend"]["traceorder"] == "normal" and not phone.grouped(wide)
    assert _legend_px(wide, phone.WIDE_PLOT_PX) <= 9 * phone.ROW_EM * 14
    assert small["layout"]["height"] >= wide["layout"]["height"] + 150
    assert small["layout"]["height"] - _legend_px(small, phone.PHONE_PLOT_PX) == pytest.approx(
        wide["layout"]["height"] - _legend_px(wide, phone.WIDE_PLOT_PX), abs=1)


def test_gantt_has_short_request_labels_on_a_phone_only():
    arch, gpu = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb")
    e = engine_numbers(arch, gpu, ServingConfig(dtype="float16", input_len=1792, output_len=256, concurrency=16))
    reqs = mixed_workload(n_requests=4, long_prompt_tokens=2048, short_prompt_tokens=128, output_tokens=16,
                          arrival_gap_s=0.05)
    r = simulate(e, reqs, max_num_seqs=8, max_num_batched_tokens=512, enable_chunked_prefill=True)
    for t, full in ((EN, "Request 2 (2,048 tok)"), (ZH, "请求 2（2,048 token）")):
        fig = FP.schedule_figure(r, segments(r), t, title="t").to_dict()
        wide, small = phone.without_phone_meta(fig), phone.for_phone(fig)
        assert "meta" not in wide["layout"] and "meta" not in small["layout"]  # never sent
        assert "ticktext" not in wide["layout"]["yaxis"]
        y = small["layout"]["yaxis"]
        assert y["tickvals"][1] == full and y["ticktext"][1] == "#2 · 2,048"
        assert y["autorange"] == "reversed" and y["domain"] == wide["layout"]["yaxis"]["domain"]  # merged, not replaced
        assert small["layout"]["height"] > wide["layout"]["height"]


def test_frontier_panels_stack_on_a_phone():
    from calc.spec.inputs import Efficiency
    from ui.perf import view as V
    from ui.perf.controls import Variant
    from ui.theme import SERIES_COLORS

    arch, gpu = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb")
    v = Variant("", ServingConfig(dtype="float16", input_len=1792, output_len=256, concurrency=16), gpu, True)
    probe = V.probe(v, arch, Efficiency())
    s = V.frontier_series(v, arch, Efficiency(), concurrency=V.sweep_concurrency([probe], 16), label="yours",
                          color=SERIES_COLORS[0], ttft_slo_s=0.5, tpot_slo_s=0.05, chosen=16)
    fig = FP.frontier_sla_figure([s], EN, ttft_slo_s=0.5, tpot_slo_s=0.05, per_gpu=False).to_dict()
    wide, small = phone.without_phone_meta(fig)["layout"], phone.for_phone(fig)["layout"]
    assert wide["xaxis"]["domain"] == [0.0, 0.47] and wide["xaxis2"]["domain"] == [0.53, 1.0]  # side by side
    assert small["xaxis"]["domain"] == small["xaxis2"]["domain"] == [0.0, 1.0]  # stacked, full width
    top, bottom = small["yaxis"]["domain"], small["yaxis2"]["domain"]
    assert bottom[1] < top[0]  # a gap for the upper panel's x ticks and title
    assert small["yaxis2"]["showticklabels"] and small["yaxis2"]["title"] == wide["yaxis"]["title"]
    assert small["xaxis"]["type"] == "log" and small["xaxis"]["title"] == wide["xaxis"]["title"]  # merged
    assert [a["y"] for a in small["annotations"]] == [1.0, 0.4]
    assert small["height"] >= 860


def test_grouped_legend_rows_are_columns_per_group():
    fig = {"data": [{"name": "a"}, {"name": "b"}, {"name": "c", "legendgroup": "g"}], "layout": {}}
    assert phone.grouped(fig) and not phone.grouped({**fig, "layout": {"legend": {"traceorder": "normal"}}})
    # 17 ungrouped entries and one grouped: one column of 17 at any width
    entries = [(f"GPU {i}", "") for i in range(17)] + [("band", "band")]
    assert phone.grouped_legend_rows(entries, 820, 14) == 17
    assert phone.legend_rows([n for n, _ in entries], 820, 14) < 17


def test_disaggregation_legends_sit_below_the_whole_figure():
    """The disaggregation page's two charts put their legend where every other chart does: at the
    figure's bottom edge (container y = 0), clear of the x-axis title. At paper y = -0.2 / -0.25 it
    lay over the axis title, and on a 390-px phone, wrapped into rows, Plotly pushed the plot into
    the right half of the figure (the splits' x-axis title and 7:1 bar cut at the edge)."""
    from calc.plan.disaggregation import same_gpus
    from ui.disagg import figures as FD

    arch, gpu = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb")
    r = same_gpus(arch, gpu, ServingConfig(input_len=1792, output_len=256), gpu_counts=range(1, 17),
                  ttft_slo_s=0.5, tpot_slo_s=0.05, link_bw_bytes_per_s=40e9)
    for t in (EN, ZH):
        for fig in (FD.frontier_figure(r, t, rate_rps=2.0, chosen=8), FD.splits_figure(r, t, n=8, colocated_rps=14.7)):
            d = fig.to_dict()
            legend = d["layout"]["legend"]
            assert legend["orientation"] == "h"
            assert (legend["yref"], legend["yanchor"], legend["y"]) == ("container", "bottom", 0)
            assert (legend["xanchor"], legend["x"]) == ("left", 0)
            assert d["layout"]["margin"]["b"] >= 80  # room for the x-axis title above the legend
            small = phone.for_phone(d)["layout"]
            assert small["legend"]["xref"] == "container"  # the phone rule applies: the whole width
            assert small["height"] >= d["layout"]["height"]
