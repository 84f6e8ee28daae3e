"""AppTest of the KV-table page (course §3.2): printed vs computed, and the user's own table."""

import pytest

from apptest_helpers import app, open_page, open_section, plotly_specs, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PAGE = "pages/kv_table.py"


def _own(at):
    return at.dataframe[-1].value


def test_defaults_render_without_exception():
    at = app(page=PAGE)
    assert not at.exception
    assert texts(at.title) == ["Course §3.2: weights and KV cache, printed vs computed"]
    course = at.table[0].value
    assert len(course) == 13
    row = course[course["Printed"] == "1.4GB"].iloc[0]
    # Llama-2-70B (GQA, 8 KV heads): 2·80·8·128·2 B × 2,048 tokens = 671,088,640 B.
    assert row["Computed"] == "640 MiB (671.09 MB)"
    assert "grouped-query" in row["Why they differ"]
    assert len(plotly_specs(at)) == 1
    own = _own(at)
    assert list(own["Model"])[:3] == ["meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-13b-hf",
                                      "meta-llama/Llama-2-70b-hf"]
    assert own.iloc[0]["KV @ 4K"] == "2.00 GiB (2.15 GB)"


def test_shared_control_changes_the_own_table():
    at = open_section(app(page=PAGE), "sec_precision")  # the precisions: a lazy sidebar section
    at.selectbox(key="kv_cache_dtype").set_value("fp8").run()
    assert not at.exception
    assert _own(at).iloc[0]["KV / token"] == "256 KiB"
    assert _own(at).iloc[0]["KV @ 4K"] == "1.00 GiB (1.07 GB)"


def test_own_models_and_contexts():
    at = app(page=PAGE)
    at.multiselect(key="kv_models").set_value(["Qwen/Qwen2.5-7B"]).run()
    at.multiselect(key="kv_contexts").set_value([2048, 131072]).run()
    assert not at.exception
    own = _own(at)
    assert list(own["Model"]) == ["Qwen/Qwen2.5-7B"]
    assert {"KV @ 2K", "KV @ 128K"} <= set(own.columns)


def test_bad_query_parameters_warn_and_fall_back():
    at = open_page(PAGE, {"kv_contexts": "lots", "kv_models": "gpt-5"})  # a link opened on the page
    assert not at.exception
    warnings = " ".join(texts(at.warning))
    assert "kv_contexts=lots" in warnings and "kv_models=gpt-5" in warnings
    assert {"KV @ 4K", "KV @ 32K"} <= set(_own(at).columns)


def test_chinese():
    at = app({"lang": "zh"}, page=PAGE)
    assert not at.exception
    assert texts(at.title) == ["课程 §3.2：权重与 KV Cache，书中数值 vs 计算值"]
    assert "差异原因" in at.table[0].value.columns
    assert "分组查询注意力" in " ".join(at.table[0].value["差异原因"])
