"""Figure builders: pure functions of calc results; names, units, colours, hover texts."""

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.sizing.course import computed_bytes, course_figures
from calc.spec.inputs import ServingConfig
from calc.sizing.scenario import memory_for
from ui import tables
from ui.memory import figures, sweeps
from ui.i18n import Translator
from ui.theme import COLORS, STACK_ORDER

EN, ZH = Translator("en"), Translator("zh")
ARCH, GPU = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb")
SERVING = ServingConfig(max_model_len=4096)


def _sweep():
    x = sweeps.concurrency_points(chosen=16, max_fit=58)
    return x, memory_for(ARCH, GPU, SERVING, concurrency=x, context_tokens=2048)


def _bars(fig):
    return [tr for tr in fig.data if tr.type == "bar"]


class TestMemoryStack:
    def test_one_bar_trace_per_concept_in_stack_order_with_theme_colours(self):
        x, r = _sweep()
        fig = figures.memory_stack_figure(x, "concurrency", r, EN, chosen=16, utilization=0.9)
        bars = _bars(fig)
        assert [b.name for b in bars] == [EN(f"part.{c}") for c in STACK_ORDER]
        assert [b.marker.color for b in bars] == [COLORS[c] for c in STACK_ORDER]
        assert fig.layout.barmode == "stack"

    def test_axis_titles_carry_units_and_both_languages(self):
        x, r = _sweep()
        for t, unit in ((EN, "GiB"), (ZH, "GiB")):
            fig = figures.memory_stack_figure(x, "concurrency", r, t, chosen=16, utilization=0.9)
            assert unit in fig.layout.yaxis.title.text
            assert t("mem.chart.x_conc") in fig.layout.xaxis.title.text
            assert fig.layout.title.text
        fig = figures.memory_stack_figure(x, "concurrency", r, ZH, chosen=16, utilization=0.9)
        assert "每卡显存" in fig.layout.yaxis.title.text

    def test_values_in_gib_and_exact_hover(self):
        x, r = _sweep()
        fig = figures.memory_stack_figure(x, "concurrency", r, EN, chosen=16, utilization=0.9)
        weights = _bars(fig)[0]
        assert weights.y[0] == pytest.approx(13_476_831_232 / 2**30)  # Llama-2-7B FP16, vLLM logs 12.55 GiB
        assert weights.customdata[0] == "12.55 GiB (13.48 GB)"
        assert "%{customdata}" in weights.hovertemplate

    def test_capacity_and_budget_lines_and_no_fit_region(self):
        x, r = _sweep()
        fig = figures.memory_stack_figure(x, "concurrency", r, EN, chosen=16, utilization=0.9)
        lines = [tr for tr in fig.data if tr.type == "scatter"]
        assert len(lines) == 2 and all(tr.line.color == COLORS["limit"] for tr in lines)
        assert "79.15 GiB" in lines[0].name
        assert len(fig.layout.shapes) == 1  # 59 and more requests do not fit
        assert any("max 58" in a.text for a in fig.layout.annotations)
        assert any("★" in str(tt) for tt in fig.layout.xaxis.ticktext)

    def test_all_fit_has_no_shaded_region(self):
        x = np.array([1, 2, 4])
        r = memory_for(ARCH, GPU, SERVING, concurrency=x, context_tokens=2048)
        fig = figures.memory_stack_figure(x, "concurrency", r, EN, chosen=2, utilization=0.9)
        assert len(fig.layout.shapes) == 0

    def test_context_sweep(self):
        x = sweeps.context_points(chosen=2048, max_model_len=4096)
        r = memory_for(ARCH, GPU, SERVING, concurrency=16, context_tokens=x)
        fig = figures.memory_stack_figure(x, "context", r, EN, chosen=2048, utilization=0.9)
        assert list(_bars(fig)[0].x) == ["256", "512", "1K", "2K", "4K"]
        assert "tokens" in fig.layout.xaxis.title.text


def test_waste_figure():
    r = memory_for(ARCH, GPU, SERVING, concurrency=1, context_tokens=2050)
    fig = figures.waste_figure(r, EN, block_size=16, max_model_len=4096)
    waste, fit = _bars(fig)
    assert all(c == COLORS["kv"] for c in (waste.marker.color, fit.marker.color))
    # 2,050 tokens in blocks of 16: 129 blocks = 2,064 slots, 14 tokens × 512 KiB = 7 MiB wasted.
    assert waste.y[0] == pytest.approx(7.0)
    # Contiguous reserves 4,096: (4,096 − 2,050) × 512 KiB = 1,023 MiB.
    assert waste.y[1] == pytest.approx(1023.0)
    assert fig.layout.yaxis.title.text == "MiB"
    assert fit.y[0] > fit.y[1]


def test_printed_vs_computed_figure_uses_concept_colours_and_hatching():
    figs = course_figures()
    rows = tables.course_rows(figs, [computed_bytes(f) for f in figs], EN)
    fig = figures.printed_vs_computed_figure(rows, EN)
    printed, computed = fig.data
    assert printed.marker.pattern.shape == "/" and not computed.marker.pattern.shape
    assert set(computed.marker.color) == {COLORS["weights"], COLORS["kv"]}
    assert len(set(printed.x)) == len(figs)  # unique category labels
    assert "GiB" in fig.layout.yaxis.title.text and fig.layout.yaxis.type == "log"
    # upright labels: at -45° they overlapped on a 390-pixel phone (issue #19's look check)
    assert fig.layout.xaxis.tickangle == -90


def test_csv_tables():
    x, r = _sweep()
    text = tables.memory_sweep_csv("concurrency", x, r)
    header, first = text.splitlines()[:2]
    assert header.startswith("concurrency,context_tokens,weights_bytes")
    assert first.split(",")[:3] == ["1", "2048", "13476831232.0"]
    assert len(text.splitlines()) == len(x) + 1
    waste = tables.waste_csv(r, block_size=16, max_model_len=4096)
    assert waste.splitlines()[1].startswith("paged,16,4096,2048,0.0,")
