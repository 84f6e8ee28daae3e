"""AppTest of the layout frame: presenter mode, dimmed sidebar controls, the memory page when vLLM
does not start, precision wording, and the §3.5 text agreeing with its table."""

import pytest

from apptest_helpers import app, chart_titles, metrics, open_section, texts
from ui.i18n import Translator, weights_phrase
from ui.layout import scale_fonts, title_text
from ui.shell import PAGES

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _styles(at) -> str:
    return "".join(el.proto.body for el in at.get("html") if "<style>" in el.proto.body)


def test_presenter_mode_from_the_url_scales_text_and_folds_the_intro():
    at = app({"present": "1"})
    assert not at.exception
    assert at.toggle(key="ui_present").value is True
    css = _styles(at)
    assert "html { font-size: 20px; }" in css and ".st-key-page_intro { display: none; }" in css
    assert at.query_params["present"] in ("1", ["1"])
    at.toggle(key="ui_present").set_value(False).run()
    assert "present" not in at.query_params and "html { font-size: 20px; }" not in _styles(at)


def test_normal_mode_has_no_presenter_style_and_titles_become_headings():
    at = app()
    assert at.toggle(key="ui_present").value is False
    assert "font-size: 20px" not in _styles(at)
    # chart titles are HTML headings (they wrap on a phone); the plotly spec keeps no title
    assert chart_titles(at)[0] == "Memory per GPU vs concurrency (2,048 tokens per request)"


def test_sidebar_marks_controls_the_page_ignores():
    at = app(page="pages/roofline.py")
    assert ".st-key-concurrency { opacity: 0.5; }" in _styles(at)
    assert Translator("en")("sidebar.unused") in texts(at.sidebar.caption)
    at = app()  # the memory page uses the concurrency
    assert ".st-key-concurrency {" not in _styles(at)
    assert ".st-key-eff_step_overhead_ms { opacity: 0.5; }" in _styles(at)  # timing only


def test_every_ignored_key_is_a_sidebar_control():
    from ui.controls import BY_KEY

    for p in PAGES:
        assert p.ignores <= set(BY_KEY), (p.path, p.ignores - set(BY_KEY))
        assert p.icon.startswith(":material/") and p.icon.endswith(":")


def test_memory_page_when_vllm_does_not_start_shows_no_concurrency():
    # Llama-3.1-70B in bf16 on 2 × H100: weights 65.7 GiB per GPU leave a KV pool smaller than one
    # 131,072-token request, so vLLM refuses to start: no "max concurrency 3" beside that.
    at = app({"model": "meta-llama/Llama-3.1-70B", "gpu": "h100-sxm", "tp": "2", "dtype": "bfloat16"})
    m = metrics(at)
    assert m["Max concurrency"] == "0"
    assert m["KV in use (16 req.)"] == "—"
    assert at.error and "refuses to start" in at.error[0].value


def test_memory_page_labels_kv_in_use_when_not_all_requests_fit():
    at = app({"concurrency": "100"})  # about 57 requests of 2,048 tokens fit (1 GiB each)
    m = metrics(at)
    fit = int(m["Max concurrency"])
    assert 40 < fit < 100
    assert m[f"KV in use ({fit} of 100 req. fit)"] == f"{fit:.2f} GiB"  # 1 GiB per request


def test_weights_phrase_names_fp8_weights():
    en, zh = Translator("en"), Translator("zh")
    assert weights_phrase(en, dtype="auto", quantization="none") == "auto weights"
    assert weights_phrase(en, dtype="auto", quantization="auto") == "auto weights"
    assert weights_phrase(en, dtype="bfloat16", quantization="fp8") == "FP8 weights (activations bfloat16)"
    assert weights_phrase(zh, dtype="auto", quantization="fp8") == "权重 FP8（激活 auto）"


def test_case_study_text_states_the_table_throughput():
    at = app(page="pages/case_study.py")
    table = at.table[-1].value  # the §3.5 case study
    row = table[table.iloc[:, 0] == "Throughput"].iloc[0]
    calc = row.iloc[2]  # e.g. "591 → 974 tok/s (+65 %)"
    before, after = calc.split(" tok/s")[0].split(" → ")
    assert f"{before} → {after} tok/s" in row.iloc[3]


def test_per_gpu_toggle_changes_the_headline_card():
    at = app({"tp": "2", "model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm"}, page="pages/frontier.py")
    total = metrics(at)["Throughput there"]
    at.toggle(key="per_gpu").set_value(True).run()
    per_gpu = metrics(at)["Throughput per GPU there"]
    t_val, g_val = (int(v.split(" ")[0].replace(",", "")) for v in (total, per_gpu))
    assert abs(g_val - t_val / 2) <= 1  # TP 2: half the group's throughput per GPU


def test_scale_fonts_and_title_text():
    f = {"data": [{"textfont": {"size": 10}}], "layout": {"xaxis": {"tickfont": {"size": 15}}, "height": 500}}
    scale_fonts(f, 2.0)
    assert f["data"][0]["textfont"]["size"] == 20 and f["layout"]["xaxis"]["tickfont"]["size"] == 30
    assert f["layout"]["height"] == 500
    assert title_text("a<br>b <b>c</b>") == "a b c"
