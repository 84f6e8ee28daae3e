"""AppTest of the roofline page (course §3.3)."""

import pytest

from apptest_helpers import app, open_page, chart_titles, metrics, open_why, plotly_specs, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PAGE = "pages/roofline.py"
NOT_FIT = {"model": "meta-llama/Llama-3.1-405B", "gpu": "l4"}


def _pct(text: str) -> float:
    return float(text.replace("%", "").replace(",", "").strip())


def test_defaults_render_without_exception():
    at = app(page=PAGE)
    assert not at.exception
    assert not at.error and not at.warning
    m = metrics(at)
    # A100-80GB FP16: B* = 312e12 · 2 B / (2 · 2.039e12 B/s) = 153
    assert m["Critical batch B*"] == "153"
    # batch 1 is memory-bound: MFU ≤ B/B* = 1/153 = 0.65 %
    assert 0 < _pct(m["Decode MFU (batch 1)"]) < 0.66
    specs = plotly_specs(at)
    assert len(specs) == 2
    roof = specs[0]["layout"]
    assert roof["xaxis"]["type"] == "log" and roof["yaxis"]["type"] == "log"
    assert "FLOP/byte" in roof["xaxis"]["title"]["text"] and "TFLOP/s" in roof["yaxis"]["title"]["text"]
    assert len(at.table) == 2  # operator table, course §3.3 check
    assert {"roofline_csv", "decode_batch_csv"} <= {b.key for b in at.get("download_button")}


def test_batch_slider_moves_decode_toward_the_ridge():
    at = app(page=PAGE)
    mfu_1 = _pct(metrics(at)["Decode MFU (batch 1)"])
    at.slider(key="rf_batch").set_value(64).run()
    assert not at.exception
    m = metrics(at)
    mfu_64 = _pct(m["Decode MFU (batch 64)"])
    assert mfu_64 > 10 * mfu_1
    assert mfu_64 < 64 / 153 * 100  # still under the B/B* bound
    assert "batch 64" in chart_titles(at)[0]


def test_batch_in_the_url_and_bad_value_warns():
    at = app({"rf_batch": "32"}, page=PAGE)
    assert "Decode MFU (batch 32)" in metrics(at)
    bad = open_page(PAGE, {"rf_batch": "0"})  # a link opened on the page
    assert any("rf_batch" in w for w in texts(bad.warning))
    assert "Decode MFU (batch 1)" in metrics(bad)


def test_batch_beyond_the_kv_cache_warns():
    at = app({"rf_batch": "512"}, page=PAGE)
    assert not at.exception
    assert any("does not fit the KV cache" in w for w in texts(at.warning))


def test_model_that_does_not_fit_shows_a_message_not_a_chart():
    at = app(NOT_FIT, page=PAGE)
    assert not at.exception
    assert any("does not fit" in e for e in texts(at.error))
    assert plotly_specs(at) == []


def test_chinese():
    at = app({"lang": "zh"}, page=PAGE)
    assert not at.exception
    assert texts(at.title)[0].startswith("Roofline：")
    assert "临界批量 B*" in metrics(at)
    assert "算术强度" in plotly_specs(at)[0]["layout"]["xaxis"]["title"]["text"]


def test_fp8_weights_on_h100_use_the_fp8_roof():
    at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "quantization": "fp8"}, page=PAGE)
    assert not at.exception
    # FP8 peak 1978.9e12 · 1 B / (2 · 3.35e12 B/s) = 295
    assert metrics(at)["Critical batch B*"] == "295"
    names = [tr.get("name", "") for tr in plotly_specs(at)[0]["data"]]
    assert any(n.startswith("FP8 peak 1,978.9") for n in names)


def test_tp_communication_panel_names_the_path():
    # Llama-3.1-8B batch-16 decode default, TP 2 on H100 SXM: 8 KiB-ish messages take vLLM's custom kernel;
    # Llama-3.1-70B TP 8 on H100 PCIe: the bridge pairs only, so PCIe and NCCL.
    at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "tp": "2"}, page="pages/roofline.py")
    assert not at.exception
    assert any(e.label.startswith("Tensor-parallel communication") for e in at.expander)
    assert any("custom all-reduce" in m.value for m in open_why(at, "tp_comm").markdown)
    at = app({"model": "meta-llama/Llama-3.1-70B", "gpu": "h100-pcie", "tp": "8"}, page="pages/roofline.py")
    assert not at.exception and any("NCCL does this all-reduce" in m.value for m in open_why(at, "tp_comm").markdown)
    at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm"}, page="pages/roofline.py")  # TP 1: no panel
    assert not any(e.label.startswith("Tensor-parallel communication") for e in at.expander)
