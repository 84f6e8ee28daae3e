"""Scenario compare (A pinned in the URL, B the sidebar) and the §3.5 case-study buttons."""

import pytest

from apptest_helpers import app, open_section, texts
from calc.plan.compare import deltas, headline
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import ServingConfig
from ui.compare import decode, encode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_encode_decode_round_trip():
    values = {"gpu": "h100-sxm", "tp": 2, "quantization": "fp8", "concurrency": 64, "chunked_prefill": False,
              "dtype": "auto"}  # dtype auto (vLLM's default) is the default: left out
    text = encode(values)
    assert text == "gpu=h100-sxm;tp=2;quantization=fp8;concurrency=64;chunked_prefill=false"
    assert decode(text) == {k: v for k, v in values.items() if k != "dtype"}


@pytest.mark.parametrize("text, field", [("nope=1", "compare"), ("tp=3", "tp"), ("concurrency=0", "concurrency"),
                                         ("gpu", "compare")])
def test_decode_names_the_field(text, field):
    from ui.controls import ControlValueError
    with pytest.raises(ControlValueError) as e:
        decode(text)
    assert str(e.value).startswith(field + ":")


def test_headline_deltas_by_hand():
    arch, gpu = get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb")
    a = headline(arch, gpu, ServingConfig(dtype="float16", input_len=1792, output_len=256, concurrency=16),
                 concurrency=16, context_tokens=2048)
    b = headline(arch, gpu, ServingConfig(dtype="float16", input_len=1792, output_len=256, concurrency=16,
                                          kv_cache_dtype="fp8"), concurrency=16, context_tokens=2048)
    d = deltas(a, b)
    assert d["weights_per_gpu_bytes"] == 0.0  # same weights
    # FP8 KV halves the bytes per token: twice the requests fit (within a block of rounding)
    assert b.max_concurrency / a.max_concurrency == pytest.approx(2.0, rel=0.02)


def test_every_headline_field_has_its_unit():
    """Issue #19: ``output_tokens_per_s`` ends in ``_s`` and was printed as "770,056.5 ms"."""
    from calc.plan.compare import HEADLINE_FIELDS
    from ui.compare import _fmt
    unit = {"memory_per_gpu_bytes": " GiB", "weights_per_gpu_bytes": " GiB", "kv_pool_bytes": " GiB",
            "ttft_s": " ms", "tpot_s": " ms", "output_tokens_per_s": " tok/s"}
    assert set(unit) <= set(HEADLINE_FIELDS)
    for name in HEADLINE_FIELDS:  # a new field without a known unit fails here, not silently as "$"
        text = _fmt(name, 1.5)
        if name in unit:
            assert text.endswith(unit[name]), (name, text)
    assert _fmt("output_tokens_per_s", 770_056.5) == "770,056 tok/s"  # 770,056.5 rounds half to even
    assert _fmt("ttft_s", 0.25) == "250 ms"
    assert _fmt("usd_per_million_output_tokens", 1.95) == "$1.950"


def test_comparison_table_throughput_in_tokens_per_second():
    at = app({"compare": "tp=2"}, page="pages/memory.py")
    table = at.table[-1].value
    row = table[table.iloc[:, 0] == "Throughput (output)"]
    assert len(row) == 1 and row["A"].iloc[0].endswith(" tok/s") and row["B"].iloc[0].endswith(" tok/s")
    assert not any(v.endswith(" ms") for v in row[["A", "B"]].iloc[0])


def test_case_study_buttons_and_comparison_table():
    at = app(page="pages/memory.py")
    assert not at.sidebar.button  # the comparison section is closed and drawn lazily (no comparison set)
    at = open_section(at, "sec_compare")
    at.button(key="case_both").click().run()
    assert not at.exception
    assert at.session_state["max_num_batched_tokens"] == 512  # engine section closed: kept in the session
    assert at.session_state["kv_cache_dtype"] == "fp8" and at.number_input(key="concurrency").value == 32  # precision closed
    assert at.text_input(key="compare").value == "dtype=float16;chunked_prefill=false"  # the course says FP16; default auto
    assert "Scenario A (pinned) vs B (sidebar)" in texts(at.subheader)
    table = at.table[-1].value
    assert len(table) == 8 and list(table.columns)[1:3] == ["A", "B"]
    at.switch_page("pages/frontier.py").run()  # one click loads it into every page
    assert not at.exception and at.toggle(key="chunked_prefill").value is True
    assert "Scenario A (pinned) vs B (sidebar)" in texts(at.subheader)


def test_pin_then_change_and_link():
    at = app({"compare": "gpu=h100-sxm;tp=2"}, page="pages/memory.py")
    assert not at.exception
    table = at.table[-1].value
    assert table["A"].iloc[1] != table["B"].iloc[1]  # weights per GPU differ (TP 2 on A)
    at.button(key="compare_clear").click().run()
    assert "Scenario A (pinned) vs B (sidebar)" not in texts(at.subheader)
    at.button(key="compare_pin").click().run()  # the section stayed open after "clear"
    assert at.text_input(key="compare").value == ""  # the sidebar is all defaults: nothing to write


def test_bad_compare_link_is_named():
    at = app({"compare": "tp=3"}, page="pages/memory.py")
    assert not at.exception
    assert any("cannot be used" in w for w in texts(at.warning))
    assert any(c.value.startswith("tp: got '3'") for c in at.code)


# ----------------------------------------------------------------------------- frontier chips

FRONTIER = "pages/frontier.py"


def _chips(at):
    ms = at.multiselect(key="overlays")
    return list(ms.value), [ms.format_func(v) for v in ms.value]


def test_chips_show_english_labels_and_the_link_keeps_tokens():
    at = app({"overlays": ["kv:fp8", "preset:low_latency", "quant:none"]}, page=FRONTIER)
    assert not at.exception and not texts(at.warning)
    tokens, labels = _chips(at)
    assert tokens == ["kv:fp8", "preset:low_latency", "quant:none"]
    assert labels == ["KV cache fp8", "Preset: low latency", "Weights unquantized"]
    assert at.query_params["overlays"] == ["kv:fp8", "preset:low_latency", "quant:none"]


def test_chips_show_chinese_labels():
    at = app({"overlays": ["kv:fp8", "preset:low_latency", "tp:2"], "lang": "zh"}, page=FRONTIER)
    assert not at.exception
    _, labels = _chips(at)
    assert labels == ["KV Cache fp8", "预设：低延迟", "张量并行 = 2"]
    assert all(":" not in label for label in labels)  # no raw code (kv:fp8) in the chips


def test_chips_round_trip_through_the_link_across_languages():
    at = app({"lang": "zh"}, page=FRONTIER)
    assert _chips(at)[0] == ["kv:fp8"] and "overlays" not in at.query_params  # the default: not in the link
    at.multiselect(key="overlays").select("gpu:h100-sxm").select("preset:high_throughput").run()
    assert not at.exception
    written = at.query_params["overlays"]
    assert written == ["kv:fp8", "gpu:h100-sxm", "preset:high_throughput"]  # tokens, not 高吞吐…
    again = app({"overlays": written, "lang": "en"}, page=FRONTIER)  # the link opened in English
    tokens, labels = _chips(again)
    assert tokens == written and labels[1:] == ["GPU: H100 SXM5 80GB", "Preset: high throughput"]
    at.multiselect(key="overlays").unselect("kv:fp8").unselect("gpu:h100-sxm").unselect("preset:high_throughput").run()
    assert at.query_params["overlays"] in ("", [""])  # none: ?overlays= (not the default)
    empty = app({"overlays": ""}, page=FRONTIER)
    assert not texts(empty.warning) and _chips(empty)[0] == []


def test_chips_survive_a_visit_to_another_page():
    at = app({"overlays": ["tp:2"]}, page=FRONTIER)
    at.switch_page("pages/memory.py").run()
    at.switch_page(FRONTIER).run()
    assert not at.exception and _chips(at)[0] == ["tp:2"]


def test_a_link_with_too_many_chips_keeps_the_first_four():
    at = app({"overlays": ["kv:fp8", "tp:2", "tp:4", "quant:fp8", "chunked:off"]}, page=FRONTIER)
    assert not at.exception
    assert _chips(at)[0] == ["kv:fp8", "tp:2", "tp:4", "quant:fp8"]


def test_bad_compare_link_is_named_in_chinese():
    at = app({"compare": "tp=3", "lang": "zh"}, page="pages/memory.py")
    assert not at.exception
    assert any(c.value.startswith("tp：收到 '3'，允许 {1, 2, 4") for c in at.code)
