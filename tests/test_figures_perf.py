"""Figure builders of the performance pages: trace names, axis titles with units, log axes, SLA
lines at the right values, colours from the theme; and the view helpers behind them."""

import csv
import io
import string

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.timing.estimate import engine_numbers
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.operators import decode_table, roofline
from calc.timing.schedule import mixed_workload, segments, simulate
from ui.perf import figures as FP
from ui.perf import view as V
from ui.perf.explain import frontier_panels, roofline_panels, scheduler_panels
from ui.i18n import Translator
from ui.perf.i18n import EN as PERF_EN
from ui.perf.i18n import ZH as PERF_ZH
from ui.perf.controls import ALL, OVERLAYS, Variant, apply_variant, same_as, variant_tokens
from ui.theme import COLORS, SERIES_COLORS

EN, ZH = Translator("en"), Translator("zh")
ARCH, GPU = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb")
SERVING = ServingConfig(dtype="float16", input_len=1792, output_len=256, concurrency=16)
EFF = Efficiency()


def _names(fig) -> list[str]:
    return [tr.name for tr in fig.data if tr.name]


@pytest.fixture(scope="module")
def rl():
    return roofline(ARCH, GPU, SERVING, decode_batch=8, context_tokens=2048, prompt_tokens=1792)


@pytest.fixture(scope="module")
def series():
    base = Variant("", SERVING, GPU, True)
    variants = [base, apply_variant(base, "kv:fp8"), apply_variant(base, "gpu:h100-sxm")]
    probes = [V.probe(v, ARCH, EFF) for v in variants]
    conc = V.sweep_concurrency(probes, 16)
    return [V.frontier_series(v, ARCH, EFF, concurrency=conc, label=V.token_label(v.token, EN), color=SERIES_COLORS[k],
                              ttft_slo_s=0.5, tpot_slo_s=0.05, chosen=16) for k, v in enumerate(variants)]


@pytest.fixture(scope="module")
def runs():
    e = engine_numbers(ARCH, GPU, SERVING)
    reqs = mixed_workload(n_requests=4, long_prompt_tokens=2048, short_prompt_tokens=128, output_tokens=16,
                          arrival_gap_s=0.05)
    return [simulate(e, reqs, max_num_seqs=8, max_num_batched_tokens=512, enable_chunked_prefill=c) for c in (True, False)]


class TestRooflineFigure:
    def test_roofs_slope_and_ridge(self, rl):
        fig = FP.roofline_figure(rl, EN, gpu_name=GPU.name)
        names = _names(fig)
        assert names[:3] == ["HBM bandwidth 2.04 TB/s", "FP16/BF16 peak 312 TFLOP/s", "INT8 peak 624 TOPS"]
        assert "Ridge point 153 FLOP/B" in names
        ridge = next(tr for tr in fig.data if tr.name == "Ridge point 153 FLOP/B")
        assert ridge.x[0] == pytest.approx(312e12 / 2.039e12) and ridge.y[0] == pytest.approx(312)
        slope = fig.data[0]
        assert slope.y[1] / slope.x[1] == pytest.approx(2.039)  # TFLOP/s per FLOP/B = TB/s

    def test_every_operator_of_both_steps_with_theme_colour(self, rl):
        fig = FP.roofline_figure(rl, EN, gpu_name=GPU.name)
        ops = [tr for tr in fig.data if tr.legendgroup and tr.mode == "markers"]
        assert len(ops) == 12
        assert {tr.marker.symbol for tr in ops} == {"circle", "diamond"}
        for tr in ops:
            assert tr.marker.color == COLORS[f"op.{tr.legendgroup}"]
        legend = [tr.name for tr in ops if tr.showlegend]
        assert sorted(legend) == sorted(EN(f"op.{o}") for o in rl.decode.operators)

    def test_log_axes_with_units(self, rl):
        for t, x_unit in ((EN, "FLOP/byte"), (ZH, "FLOP/字节")):
            lay = FP.roofline_figure(rl, t, gpu_name=GPU.name).layout
            assert lay.xaxis.type == "log" and lay.yaxis.type == "log"
            assert x_unit in lay.xaxis.title.text and "TFLOP/s" in lay.yaxis.title.text
            assert GPU.name in lay.title.text

    def test_decode_batch_figure(self, rl):
        sweep = decode_table(rl.engine, batch=np.array([1, 2, 4, 8, 16, 64, 256]), context_tokens=2048)
        fig = FP.decode_batch_figure(sweep, EN, batch=8, critical_batch=rl.critical_batch, kv_limit_batch=57)
        lay = fig.layout
        assert lay.xaxis.type == lay.xaxis2.type == lay.yaxis.type == lay.yaxis2.type == "log"
        assert "ms" in lay.yaxis.title.text and "tokens/s" in lay.yaxis2.title.text
        step = next(tr for tr in fig.data if tr.name == "Step time")
        assert list(step.x) == [1, 2, 4, 8, 16, 64, 256]
        assert step.y[3] == pytest.approx(float(decode_table(rl.engine, batch=8, context_tokens=2048).step_s) * 1e3)
        bstar = [tr for tr in fig.data if tr.name == "B* = 153"]
        assert len(bstar) == 2 and all(tr.x[0] == pytest.approx(153.0, abs=0.1) for tr in bstar)
        assert any(tr.name == "KV cache full at 57" for tr in fig.data)


class TestFrontierFigures:
    def test_sla_lines_at_the_targets_and_shaded_regions(self, series):
        fig = FP.frontier_sla_figure(series, EN, ttft_slo_s=0.4, tpot_slo_s=0.035, per_gpu=False)
        tpot = next(tr for tr in fig.data if tr.name == "SLA TPOT 35 ms")
        ttft = next(tr for tr in fig.data if tr.name == "SLA TTFT 400 ms")
        assert list(tpot.x) == [35, 35] and list(ttft.x) == [400, 400]
        assert tpot.xaxis == "x" and ttft.xaxis == "x2"
        regions = [tr for tr in fig.data if tr.fill == "toself"]
        assert len(regions) == 2 and max(regions[0].x) == 35 and max(regions[1].x) == 400
        lay = fig.layout
        assert lay.xaxis.type == "log" and lay.xaxis2.type == "log"
        assert lay.xaxis.title.text == "TPOT (ms per token)" and lay.xaxis2.title.text == "TTFT (ms)"
        assert lay.yaxis.title.text == "Output throughput (tokens/s)"

    def test_series_names_colours_and_best_points(self, series):
        fig = FP.frontier_sla_figure(series, EN, ttft_slo_s=0.5, tpot_slo_s=0.05, per_gpu=True)
        thick = [tr for tr in fig.data if tr.line and tr.line.width == 5 and tr.showlegend]
        assert [tr.name for tr in thick] == ["Your scenario", "KV cache fp8", "GPU: NVIDIA H100 SXM5 80GB"]
        assert [tr.line.color for tr in thick] == list(SERIES_COLORS[:3])
        assert fig.layout.yaxis.title.text == "Output throughput per GPU (tokens/s)"
        stars = [tr for tr in fig.data if tr.marker and tr.marker.symbol == "star" and tr.x[0] is not None]
        assert len(stars) == 2 * len(series)  # one per series on each panel
        for s in series:  # the star sits on the best point, which meets both targets
            assert s.feasible[s.best] and s.tpot_s[s.best] <= 0.05 and s.ttft_s[s.best] <= 0.5

    def test_concurrency_figure_walls(self, series):
        fig = FP.frontier_concurrency_figure(series, EN, per_gpu=False, chosen=16)
        assert fig.layout.xaxis.type == "log" and fig.layout.xaxis.title.text == "Concurrency (clients)"
        walls = [tr for tr in fig.data if tr.name and ("KV cache full" in tr.name or "max_num_seqs" in tr.name)
                 and tr.x[0] is not None]
        assert len(walls) == len(series)
        for s, w in zip(series, walls):
            assert w.x[0] == s.engine_limit and w.line.color == s.color
        assert any(tr.name == "Your concurrency 16" for tr in fig.data)

    def test_axis_ticks_written_out(self):
        assert FP.log_ticks(1, 1000, "pow2")[1][-1] == "512"
        vals, text = FP.log_ticks(0.2, 3000, "pow10")
        assert text == ["1", "10", "100", "1,000"]


class TestScheduleFigure:
    def test_two_rows_tokens_and_gantt(self, runs):
        fig = FP.schedule_figure(runs[1], segments(runs[1]), EN, title="t")
        lay = fig.layout
        assert "ms" in lay.xaxis.title.text and lay.yaxis2.title.text == "Tokens"
        gantt = [tr for tr in fig.data if tr.orientation == "h"]
        assert {tr.name for tr in gantt} >= {"Prefill", "Decode", "Stalled (running, skipped)"}
        for tr in gantt:
            assert tr.marker.color == COLORS[{"Prefill": "prefill", "Decode": "decode"}.get(tr.name, tr.legendgroup)]
        budget = next(tr for tr in fig.data if tr.name == "Token budget 2,048")
        assert list(budget.y) == [2048, 2048]
        first = next(tr for tr in fig.data if tr.name == "First token (TTFT)")
        assert np.allclose(first.x, runs[1].first_token_s * 1e3)

    def test_bars_cover_the_steps(self, runs):
        r = runs[0]
        fig = FP.schedule_figure(r, segments(r), EN, title="t")
        dec = next(tr for tr in fig.data if tr.type == "bar" and tr.yaxis == "y2" and tr.name == "Decode")
        assert np.allclose(dec.width, r.duration_s * 1e3)
        assert np.allclose(dec.x, (r.start_s + r.duration_s / 2) * 1e3)


class TestViewHelpers:
    def test_vllm_command(self):
        cmd = V.vllm_command(model_id="meta-llama/Llama-3.1-8B", serving=ServingConfig(tensor_parallel_size=2,
                             quantization="fp8", kv_cache_dtype="fp8", gpu_memory_utilization=0.95),
                             max_model_len=8192, max_num_seqs=64, max_num_batched_tokens=512, chunked=False)
        flags = cmd.replace("\\\n", " ").split()
        assert flags[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B"]
        for flag, value in (("--tensor-parallel-size", "2"), ("--quantization", "fp8"), ("--max-num-seqs", "64"),
                            ("--max-num-batched-tokens", "512"), ("--gpu-memory-utilization", "0.95"),
                            ("--kv-cache-dtype", "fp8"), ("--max-model-len", "8192")):
            assert flags[flags.index(flag) + 1] == value
        assert "--no-enable-chunked-prefill" in flags

    def test_frontier_csv(self, series):
        rows = list(csv.DictReader(io.StringIO(V.frontier_csv(series))))
        assert len(rows) == sum(len(s.concurrency) for s in series)
        best = [r for r in rows if r["best"] == "True"]
        assert len(best) == len(series) and all(r["meets_sla"] == "True" for r in best)
        h100 = [r for r in rows if r["scenario"].startswith("GPU")]
        # H100 SXM at $3.78/h (Lambda on-demand, calc/data/gpu_prices.json): cost = 3.78 / 3600 / X × 1e6
        r = h100[10]
        assert float(r["usd_per_million_output_tokens"]) == pytest.approx(
            3.78 / 3600 / float(r["output_tokens_per_s"]) * 1e6, rel=1e-3)

    def test_operator_rows_and_csv(self, rl):
        rows = V.operator_rows(rl)
        assert len(rows) == 12 and rows[3]["operator"] == "mlp" and rows[3]["phase"] == "decode"
        text = V.operator_csv(rows, batch=8, context_tokens=2048, prompt_tokens=1792)
        parsed = list(csv.DictReader(io.StringIO(text)))
        assert float(parsed[3]["flops"]) == 2 * 8 * 3 * 4096 * 11008 * 32  # 2·B·P_mlp
        display = V.operator_display(rows, ZH)
        assert "算子" in display[0]

    def test_case_study_rows(self):
        rows = V.case_rows(V.case_study(EFF), EN)
        assert [r["key"] for r in rows] == ["ttft_ms", "tpot_ms", "tokens_per_s", "memory_gb"]
        assert rows[0]["course"] == "850 → 420 ms (-51 %)"
        # Little's law on the course's own numbers: 16 / 45 ms = 356 tok/s, 32 / 52 ms = 615 tok/s
        assert "356" in rows[2]["why"] and "615" in rows[2]["why"]

    def test_schedule_csvs(self, runs):
        steps = list(csv.DictReader(io.StringIO(V.schedule_steps_csv(runs))))
        assert len(steps) == sum(len(r.start_s) for r in runs)
        reqs = list(csv.DictReader(io.StringIO(V.schedule_requests_csv(runs))))
        assert len(reqs) == 8 and reqs[0]["policy"] == "chunked"


class TestControlsAndText:
    def test_variants(self):
        base = Variant("", SERVING, GPU, True)
        assert apply_variant(base, "kv:fp8").serving.kv_cache_dtype == "fp8"
        assert apply_variant(base, "chunked:off").chunked is False
        assert apply_variant(base, "gpu:h100-sxm").gpu.id == "h100-sxm"
        assert same_as(apply_variant(base, "chunked:on"), base)
        with pytest.raises(ValueError, match="overlays"):
            apply_variant(base, "nope:1")
        assert OVERLAYS.parse(["kv:fp8", "tp:2"]) == ("kv:fp8", "tp:2")
        assert set(OVERLAYS.default) <= set(variant_tokens())

    def test_every_page_control_has_label_and_help_in_both_languages(self):
        for ctl in ALL:
            for t in (EN, ZH):
                assert t(f"ctl.{ctl.key}") != f"ctl.{ctl.key}"
                assert t(f"ctl.{ctl.key}.help") != f"ctl.{ctl.key}.help"

    def test_perf_strings_same_keys_and_placeholders(self):
        fields = lambda s: {n for _, n, _, _ in string.Formatter().parse(s) if n}  # noqa: E731
        assert set(PERF_EN) == set(PERF_ZH)
        assert all(fields(PERF_EN[k]) == fields(PERF_ZH[k]) for k in PERF_EN)

    def test_panels_in_both_languages(self, rl, series, runs):
        for t in (EN, ZH):
            panels = (roofline_panels(rl, t)
                      + frontier_panels(series[0], t, ttft_slo_s=0.5, tpot_slo_s=0.05, input_len=1792, output_len=256,
                                        price=None, tp=1)
                      + scheduler_panels(*runs, t))
            for p in panels:
                assert p.title and p.formula and p.plugged and p.takeaway
                assert "{" not in p.takeaway and "\t" not in p.plugged  # formatted, no stray escapes
        mfu = roofline_panels(rl, EN)[0]
        assert "B^*" in mfu.formula and "153" in mfu.plugged


@pytest.mark.parametrize("module", ["ui.perf.figures", "ui.perf.view", "ui.perf.controls"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


def test_decode_caption_says_where_the_lines_cross():
    # issue 19 look check: the roofline caption said "the lines cross near B* ≈ 153" under a chart
    # (Llama-2-7B, MHA, 2,048 tokens) where compute time never reaches memory time up to batch 1,024
    from calc.timing.frontier import concurrency_points
    from calc.timing.operators import decode_table

    mha = roofline(ARCH, GPU, SERVING, decode_batch=1, context_tokens=2048, prompt_tokens=1792)
    sweep = decode_table(mha.engine, batch=concurrency_points(top=1024, n=96), context_tokens=2048)
    c = V.memory_compute_crossing(sweep)
    assert c["cross"] != c["cross"] and c["last"] == 1024  # never
    assert np.all(sweep.compute_s.sum(axis=0) < sweep.memory_s.sum(axis=0))
    assert c["mem_ms_per_seq"] > 5 * c["compute_ms_per_seq"]  # the KV read of 1 GiB per sequence
    text = V.crossing_text(sweep, mha.critical_batch, EN)
    assert text.startswith("Here compute time never reaches memory time up to batch 1,024")
    short = decode_table(mha.engine, batch=concurrency_points(top=1024, n=96), context_tokens=64)
    c = V.memory_compute_crossing(short)
    comp, mem = short.compute_s.sum(axis=0), short.memory_s.sum(axis=0)
    k = int(np.flatnonzero(np.ravel(short.tokens) == c["cross"])[0])
    assert comp[k] >= mem[k] and np.all(comp[:k] < mem[:k])  # the first batch where compute reaches memory
    assert f"at batch {int(c['cross']):,}" in V.crossing_text(short, mha.critical_batch, EN)
    assert "{" not in V.crossing_text(sweep, mha.critical_batch, Translator("zh"))
