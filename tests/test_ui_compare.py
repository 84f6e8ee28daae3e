"""Scenario compare (A pinned in the URL, B the sidebar) and the §3.5 case-study buttons."""

import pytest

from apptest_helpers import app, texts
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


def test_case_study_buttons_and_comparison_table():
    at = app(page="pages/memory.py")
    at.button(key="case_both").click().run()
    assert not at.exception
    assert at.number_input(key="max_num_batched_tokens").value == 512
    assert at.selectbox(key="kv_cache_dtype").value == "fp8" and at.number_input(key="concurrency").value == 32
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
    at.button(key="compare_pin").click().run()
    assert at.text_input(key="compare").value == ""  # the sidebar is all defaults: nothing to write


def test_bad_compare_link_is_named():
    at = app({"compare": "tp=3"}, page="pages/memory.py")
    assert not at.exception
    assert any("cannot be used" in w for w in texts(at.warning))
    assert any(c.value.startswith("tp: got '3'") for c in at.code)
