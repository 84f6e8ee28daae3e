"""ui.speculative.figures: the speed-up and TPOT charts stay on the batch range they sweep.

Issue #19's look check: the speed-up chart's batch axis ran to 10^64 (a shape annotation on a log
axis takes log10(x): "KV cache full (58)" sat at 10^58), squeezing the whole curve into its left
tenth; the TPOT chart had Plotly's default colours and "2, 5" tick labels."""

from types import SimpleNamespace

import numpy as np

from ui.i18n import Translator
from ui.speculative import figures as FS
from ui.theme import COLORS

BATCH = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])


def _sweep():
    plain = 0.010 * (1 + BATCH / 64)  # decode step 10 ms at batch 1, growing with the batch
    spec = plain / 1.8
    return SimpleNamespace(batch=BATCH, step=SimpleNamespace(speedup=plain / spec, decode_step_s=plain, tpot_s=spec))


def _xs(fig):
    return [float(x) for tr in fig.data for x in (tr.x if tr.x is not None else ()) if x is not None]


def test_speedup_axis_spans_the_batches_and_the_kv_wall_sits_at_58():
    fig = FS.speedup_figure(_sweep(), Translator("en"), kv_full_batch=58.0)
    xs = _xs(fig)
    assert min(xs) == 1 and max(xs) == 1024  # nothing past the sweep: the axis is 1 … 1,024
    assert not fig.layout.shapes and not fig.layout.annotations  # no log10-placed layout marks
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.ticktext)[-1] == "1,024"
    wall = [tr for tr in fig.data if tr.name == "KV cache full (58)"]
    assert wall and list(wall[0].x) == [58.0, 58.0] and wall[0].line.color == COLORS["limit"]
    # past the wall: the thin part of the curve starts at the last batch that fits (32), then 64 …
    thin = [tr for tr in fig.data if tr.showlegend is False and tr.mode == "lines"]
    assert list(thin[0].x)[:2] == [32, 64]
    # y: break-even (1) and the speed-up (1.8) both inside the range
    lo, hi = fig.layout.yaxis.range
    assert lo < 1.0 < 1.8 < hi


def test_tpot_chart_in_the_app_style_and_chinese():
    fig = FS.tpot_figure(_sweep(), Translator("zh"), kv_full_batch=58.0)
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.ticktext  # ticks written out, not "2, 5"
    assert fig.layout.legend.orientation == "h"  # below the chart, as on the other pages
    colors = {tr.line.color for tr in fig.data}
    assert COLORS["op.mlp"] in colors and "#000000" in colors
    assert max(_xs(fig)) == 1024
    names = [tr.name for tr in fig.data]
    assert "使用投机解码" in names and "KV Cache 已满（58）" in names


def test_no_wall_when_every_batch_fits():
    fig = FS.speedup_figure(_sweep(), Translator("en"), kv_full_batch=None)
    assert not any((tr.name or "").startswith("KV cache full") for tr in fig.data)
    assert max(_xs(fig)) == 1024


def test_outcome_follows_the_numbers():
    # ui.speculative.view.outcome: the sentence under the cards picks its case from the sweep
    from calc.spec.catalog import get_gpu, get_model
    from calc.spec.inputs import Efficiency, ServingConfig
    from ui.speculative.explain import outcome_text
    from ui.speculative.view import outcome, speculative_config, speedup_sweep

    cfg = speculative_config("eagle3", 3, 0.7)
    eff, s = Efficiency(), ServingConfig(max_model_len=4096)
    mha = speedup_sweep(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"), s, eff, cfg, context_tokens=2048)
    key, n = outcome(mha, 58.0)
    assert key == "sd.outcome.memory_bound" and n["top"] == 54 and n["mem_ms"] > n["compute_ms"]
    assert np.all(np.asarray(mha.step.speedup) > 1.5)  # what the chart shows: no reversal up to 1,024
    gqa = speedup_sweep(get_model("meta-llama/Llama-3.1-8B"), get_gpu("a100-80gb"), s, eff, cfg, context_tokens=128)
    key, n = outcome(gqa, 3550.0)
    assert key == "sd.outcome.reverses" and n["cross"] == gqa.crossover_batch < 3550
    assert float(np.asarray(gqa.step.speedup)[np.asarray(gqa.batch) == n["cross"]][0]) < 1.0
    key, n = outcome(gqa, 64.0)  # the reversal past what fits
    assert key == "sd.outcome.beyond_fit"
    h100 = speedup_sweep(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), s, eff, cfg, context_tokens=512)
    assert outcome(h100, None)[0] == "sd.outcome.shrinks"
    for t in (Translator("en"), Translator("zh")):
        for sw, fit in ((mha, 58.0), (gqa, 3550.0), (gqa, 64.0), (h100, None)):
            text = outcome_text(sw, fit, t)
            assert "{" not in text and ("×" in text)
    assert "1.06×" in outcome_text(h100, None, Translator("en"))
