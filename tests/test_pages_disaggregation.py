"""AppTest of the disaggregation page: the verdict, both charts, why-panels, URL state, EN/ZH."""

import pytest

from apptest_helpers import app, commands, metrics, plotly_specs, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PAGE = "pages/disaggregation.py"


def test_defaults_render():
    at = app(page=PAGE)
    assert not at.exception and not at.error
    m = metrics(at)
    assert any(k.startswith("Colocated at 8 GPUs") for k in m) and any(k.startswith("Best xPyD") for k in m)
    specs = plotly_specs(at)
    assert len(specs) == 2
    assert specs[0]["layout"]["xaxis"]["title"]["text"] == "GPUs"
    assert {tr.get("name") for tr in specs[0]["data"]} >= {"Colocated", "Disaggregated (best P:D)"}
    assert "--prefill-instances" in commands(at)[0]


def test_url_state_link_and_gpu_count():
    at = app({"dg_gpus": "12", "dg_link": "ethernet-25g", "rate": "5"}, page=PAGE)
    assert not at.exception
    assert any(k.startswith("Colocated at 12 GPUs") for k in metrics(at))
    assert "--kv-transfer-gb-per-s 2.5" in commands(at)[0]  # 25 Gb/s = 3.125 GB/s x 0.8 achievable


def test_bad_url_value_warns_and_names_the_field():
    at = app({"dg_gpus": "9999"}, page=PAGE)
    assert not at.exception
    assert any("dg_gpus" in w for w in texts(at.warning))


def test_chinese():
    at = app({"lang": "zh"}, page=PAGE)
    assert not at.exception
    assert any("共置" in k for k in metrics(at))


def test_hostile_url_values_are_named_and_escaped():
    at = app({"dg_link": "<script>alert(1)</script>", "dg_bw_gb_s": "abc"}, page=PAGE)
    assert not at.exception
    warnings = texts(at.warning)
    assert any("dg_link" in w for w in warnings) and any("dg_bw_gb_s" in w for w in warnings)
    assert not any("<script>" in w for w in warnings)


def test_empty_bandwidth_box_shows_the_presets():
    # issue 19 look check: the optional bandwidth box was empty, not saying which bandwidth is used
    from calc.traffic.disaggregation import kv_links

    gb_s = kv_links()["ethernet-25g"].effective_bytes_per_s() / 1e9
    for lang, word in (("en", "preset: "), ("zh", "预设：")):
        at = app({"dg_link": "ethernet-25g", "lang": lang}, page=PAGE)
        box = at.number_input(key="dg_bw_gb_s")
        assert box.value is None and box.proto.placeholder.startswith(word)
        assert float(box.proto.placeholder[len(word):]) == pytest.approx(gb_s, abs=0.05)
