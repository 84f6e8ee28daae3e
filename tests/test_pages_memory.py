"""AppTest of the memory page and the shared shell (sidebar, URL state, languages, uploads)."""

import json

import pytest

from apptest_helpers import app, decode, metrics, open_section, open_why, plain, plotly_specs, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# Llama-2-7B FP16 on one A100 80GB, 2,048-token requests (independent values: vLLM logs 12.55 GiB of
# weights; 2·32·32·128·2 B = 524,288 B per token; 2,048 × 512 KiB = 1 GiB per request).
DEFAULT = {"Weights per GPU": "12.55 GiB", "KV cache per token": "512 KiB", "KV cache per request": "1.00 GiB"}


def test_defaults_render_without_exception():
    at = app()
    assert not at.exception
    m = metrics(at)
    assert {k: m[k] for k in DEFAULT} == DEFAULT
    # 79.15 GiB × 0.9 − 12.55 − 0.29 (forward pass at T = 2048 + 0.05 GiB workspaces) − 0.25 = 58.15 GiB → 58
    assert m["Max concurrency"] == "58"
    assert texts(at.title) == ["GPU memory: weights, KV cache and how many requests fit"]
    assert len(plotly_specs(at)) == 2
    assert not at.warning and not at.error


def test_sidebar_has_every_shared_control_with_help():
    at = app()
    assert "max_num_seqs" not in {w.key for w in at.sidebar.number_input}  # lazy sections start closed
    at = open_section(at, "sec_precision", "sec_parallel", "sec_engine", "sec_efficiency")
    keys = {w.key for w in (*at.sidebar.selectbox, *at.sidebar.number_input, *at.sidebar.slider)}
    assert {"model", "gpu", "tp", "dtype", "quantization", "kv_cache_dtype", "input_tokens", "output_tokens",
            "concurrency", "gpu_memory_utilization", "block_size", "max_model_len", "max_num_seqs",
            "max_num_batched_tokens"} <= keys
    for w in (*at.sidebar.selectbox, *at.sidebar.number_input, *at.sidebar.slider):
        assert w.help, w.key


@pytest.mark.parametrize("key, widget, value, metric, expected", [
    ("input_tokens", "number_input", 4096 - 256, "KV cache per request", "2.00 GiB"),  # + 256 output
    ("input_tokens", "number_input", 4096 - 256, "Max concurrency", "29"),
    ("output_tokens", "number_input", 2048 + 256, "KV cache per request", "2.00 GiB"),  # + 1,792 input
    ("kv_cache_dtype", "selectbox", "fp8", "KV cache per token", "256 KiB"),
    ("model", "selectbox", "meta-llama/Llama-3.1-8B", "KV cache per token", "128 KiB"),
    ("tp", "selectbox", 2, "KV cache per token", "256 KiB"),
    # AWQ: 6.476e9 linear params × 4.15625 bits + 0.262e9 embedding/head params × 2 B = 3.89e9 B = 3.62 GiB
    ("quantization", "selectbox", "awq", "Weights per GPU", "3.62 GiB"),
    # H100: 79.19 GiB × 0.9 − 12.55 − 0.99 (forward pass at vLLM's H100 default T = 8192, 0.94, + 0.05 GiB
    # workspaces; the sampler warm-up over 1024 × 32,000 logits is smaller) − 0.25 = 57.48 GiB → 57 requests of 1 GiB.
    ("gpu", "selectbox", "h100-sxm", "Max concurrency", "57"),
    # 79.15 GiB × 0.5 − 12.55 − 0.29 − 0.25 = 26.49 GiB → 26 requests.
    ("gpu_memory_utilization", "slider", 0.5, "Max concurrency", "26"),
])
def test_changing_a_shared_control_changes_the_numbers(key, widget, value, metric, expected):
    at = open_section(app(), "sec_precision", "sec_parallel", "sec_engine")
    getattr(at, widget)(key=key).set_value(value).run()
    assert not at.exception
    assert metrics(at)[metric] == expected


def test_closed_engine_section_keeps_its_values_in_the_session_and_the_link():
    # A link with an engine knob: the section stays closed (not drawn) but the value applies,
    # stays in the address bar, and the closed section's label says it was changed.
    at = app({"gpu_memory_utilization": "0.5"})
    assert not at.exception and "gpu_memory_utilization" not in {w.key for w in at.sidebar.slider}
    assert metrics(at)["Max concurrency"] == "26"  # as when the slider is moved (case above)
    assert at.query_params["gpu_memory_utilization"] in ("0.5", ["0.5"])
    assert "↑ 1 changed from the defaults (open to see)" in texts(at.sidebar.caption)
    # Opened: the slider shows the link's value; moved, then the section closed: value and link kept.
    at = open_section(at, "sec_engine")
    assert at.slider(key="gpu_memory_utilization").value == 0.5
    at.slider(key="gpu_memory_utilization").set_value(0.6).run()
    assert at.query_params["gpu_memory_utilization"] in ("0.6", ["0.6"])
    at.session_state["_open_sec_engine"] = False
    at.run()
    assert "gpu_memory_utilization" not in {w.key for w in at.sidebar.slider}
    assert at.query_params["gpu_memory_utilization"] in ("0.6", ["0.6"]) and at.session_state["gpu_memory_utilization"] == 0.6
    # Back to the default: the parameter leaves the link, as a bound widget's would.
    at = open_section(at, "sec_engine")
    at.slider(key="gpu_memory_utilization").set_value(0.9).run()
    assert "gpu_memory_utilization" not in at.query_params
    assert metrics(at)["Max concurrency"] == "58"


def test_first_view_draws_model_gpu_context_and_concurrency_only():
    """Issue #19 (first chart of a fresh session): TP and the precisions are in closed lazy sections,
    so the first view's sidebar has two selects and two number boxes; a link's TP and KV cache dtype
    still apply, stay in the link, and the closed sections say they were changed."""
    at = app()
    assert [w.key for w in at.sidebar.selectbox] == ["model", "gpu"]
    assert [w.key for w in at.sidebar.number_input] == ["input_tokens", "output_tokens", "concurrency"]
    at = app({"tp": "2", "kv_cache_dtype": "fp8"})
    assert not at.exception and not at.warning
    # Llama-2-7B: 2 (K, V) × 32 layers × 4096 hidden × 1 B (fp8) / 2 GPUs = 128 KiB per token and GPU
    assert metrics(at)["KV cache per token"] == "128 KiB"
    assert at.query_params["tp"] in ("2", ["2"]) and at.query_params["kv_cache_dtype"] in ("fp8", ["fp8"])
    assert texts(at.sidebar.caption).count("↑ 1 changed from the defaults (open to see)") == 2  # precision, layout
    at = open_section(at, "sec_precision", "sec_parallel")
    assert at.selectbox(key="tp").value == 2 and at.selectbox(key="kv_cache_dtype").value == "fp8"


def test_concurrency_beyond_what_fits_warns_and_marks_the_chart():
    at = app()
    at.number_input(key="concurrency").set_value(64).run()
    assert any("64 requests of 2,048 tokens do not fit" in w for w in texts(at.warning))
    spec = plotly_specs(at)[0]
    assert any("max 58" in a["text"] for a in spec["layout"]["annotations"])


@pytest.mark.parametrize("query, named", [
    ({"concurrency": "abc"}, "concurrency=abc"),
    ({"concurrency": "5000"}, "integer 1 – 4,096"),
    ({"gpu": "h999"}, "gpu=h999"),
    ({"tp": "3"}, "tp=3"),
    ({"gpu_memory_utilization": "1.7"}, "gpu_memory_utilization=1.7"),
    ({"sweep_context": "maybe"}, "sweep_context=maybe"),
    ({"lang": "fr"}, "lang=fr"),
    ({"model": "custom"}, "model=custom"),
])
def test_bad_query_parameters_warn_and_fall_back(query, named):
    at = app(query)
    assert not at.exception
    assert any(named in w for w in texts(at.warning)), texts(at.warning)
    m = metrics(at)
    assert {k: m[k] for k in DEFAULT} == DEFAULT


def test_good_query_parameters_set_the_view():
    at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "context": "8192", "concurrency": "64",
              "kv_cache_dtype": "fp8", "sweep_context": "true"})
    assert not at.exception and not at.warning
    assert at.number_input(key="concurrency").value == 64
    m = metrics(at)
    assert m["KV cache per token"] == "64 KiB" and m["KV cache per request"] == "0.50 GiB"
    assert "Context length" in plotly_specs(at)[0]["layout"]["xaxis"]["title"]["text"]


def test_invalid_combination_keeps_inputs_and_shows_last_valid_scenario():
    at = app()
    at.number_input(key="input_tokens").set_value(7936).run()  # + 256 output: Llama-2-7B has 4,096 positions
    assert not at.exception
    assert any("context (input + output tokens): got 8,192, allowed 16 – 4,096" in e for e in texts(at.error))
    assert at.number_input(key="input_tokens").value == 7936  # what the user typed is kept
    assert metrics(at)["KV cache per request"] == "1.00 GiB"  # last valid scenario
    open_section(at, "sec_engine").number_input(key="max_model_len").set_value(16384).run()  # now it is valid
    assert not at.error and metrics(at)["KV cache per request"] == "4.00 GiB"


def test_model_that_does_not_fit_shows_an_error_not_a_crash():
    at = app({"model": "meta-llama/Llama-2-70b-hf"})
    assert not at.exception
    assert any("does not fit" in e for e in texts(at.error))


def test_sweep_toggle_switches_the_x_axis():
    at = app()
    assert "Concurrency" in plotly_specs(at)[0]["layout"]["xaxis"]["title"]["text"]
    at.toggle(key="sweep_context").set_value(True).run()
    spec = plotly_specs(at)[0]
    assert "Context length" in spec["layout"]["xaxis"]["title"]["text"]
    assert decode(spec["data"][0]["x"]) == ["256", "512", "1K", "2K", "4K"]


def test_why_panels_are_lazy_and_plug_in_the_values():
    at = app()
    assert not at.latex  # closed panels send only their titles (bench/bench_pages.py: CPU per rerun)
    open_why(at, "kv_token", "kv_request")
    latex = " ".join(texts(at.latex))
    assert "2 \\cdot 32 \\cdot 32 \\cdot 128 \\cdot 2\\,\\text{B} = 524{,}288\\,\\text{B}" in latex
    assert "\\lceil 2{,}048 / 16 \\rceil" in latex
    titles = [e.label for e in at.expander]
    assert "KV cache per token = 512 KiB" in titles


def test_chinese_from_url_and_from_browser_locale():
    for at in (app({"lang": "zh"}), app(locale="zh-CN")):
        assert not at.exception
        assert texts(at.title) == ["显存：权重、KV Cache，以及能容纳多少请求"]
        assert metrics(at)["每卡权重"] == "12.55 GiB"  # same number format in both languages
        assert at.sidebar.radio(key="ui_lang").value == "zh"
    at = app({"lang": "zh"})
    at.sidebar.radio(key="ui_lang").set_value("en").run()
    assert texts(at.title) == ["GPU memory: weights, KV cache and how many requests fit"]
    assert at.query_params["lang"] in ("en", ["en"])


def test_shared_state_survives_page_switches():
    at = app()
    at.number_input(key="concurrency").set_value(40).run()
    at.number_input(key="input_tokens").set_value(768).run()  # + 256 output: 1,024 tokens a request
    at.switch_page("pages/kv_table.py").run()
    assert not at.exception
    at.switch_page("pages/memory.py").run()
    assert at.number_input(key="concurrency").value == 40
    assert metrics(at)["KV cache per request"] == "0.50 GiB"


def test_share_link_and_scenario_round_trip():
    at = app()
    at.number_input(key="concurrency").set_value(40).run()
    at.selectbox(key="gpu").set_value("h100-sxm").run()
    link = open_section(at, "sec_share").text_input(key="share_link").value
    assert "concurrency=40" in link and "gpu=h100-sxm" in link and "lang=en" in link
    from ui.state import default_scenario, scenario_json  # what the download button serves
    text = scenario_json(default_scenario())
    data = json.loads(text) | {"controls": json.loads(text)["controls"] | {"concurrency": 99, "context": 1024}}
    fresh = open_section(app(), "sec_share")
    fresh.sidebar.file_uploader(key="scenario_upload").set_value(("s.json", json.dumps(data).encode(),
                                                                    "application/json")).run()
    assert not fresh.exception
    assert any("loaded" in s for s in texts(fresh.success))
    assert fresh.number_input(key="concurrency").value == 99
    assert fresh.number_input(key="input_tokens").value == 1024 - 256
    assert metrics(fresh)["KV cache per request"] == "0.50 GiB"


def test_bad_scenario_file_is_rejected_and_nothing_changes():
    at = app()
    at.number_input(key="concurrency").set_value(40).run()
    bad = {"format": "llm-inference-calculator/scenario", "version": 1, "controls": {"concurrency": 0}}
    open_section(at, "sec_share").sidebar.file_uploader(key="scenario_upload").set_value(("bad.json", json.dumps(bad).encode(),
                                                                 "application/json")).run()
    assert not at.exception
    assert any("concurrency: got 0, allowed integer 1 – 4,096" in e for e in texts(at.error))
    assert at.number_input(key="concurrency").value == 40


TINY = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
        "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "max_position_embeddings": 8192}


def test_pasted_config_becomes_the_custom_model():
    at = open_section(app(), "sec_config")
    at.text_area(key="config_text").set_value(json.dumps(TINY)).run()
    at.button(key="config_apply").click().run()
    assert not at.exception
    assert at.selectbox(key="model").value == "custom"
    assert metrics(at)["KV cache per token"] == "32 KiB"  # head_dim 2048/32 = 64: 2·16·8·64·2 B = 32,768 B


def test_bad_config_is_rejected_with_the_field_named():
    at = open_section(app(), "sec_config")
    at.text_area(key="config_text").set_value(json.dumps(TINY | {"hidden_size": "big"})).run()
    at.button(key="config_apply").click().run()
    assert not at.exception
    assert any("hidden_size" in e for e in plain(at.error))
    assert at.selectbox(key="model").value == "meta-llama/Llama-2-7b-hf"
    at.sidebar.file_uploader(key="config_upload").set_value(("c.json", b"{not json", "application/json")).run()
    assert any("not valid JSON" in e for e in texts(at.error))


@pytest.mark.parametrize("page", [None, "pages/frontier.py", "pages/roofline.py", "pages/scheduler.py"])
def test_does_not_fit_names_the_real_reason(page):
    # Llama-3.1-8B in NF4 on an A10G: weights are small (≈ 5.3 GiB), but vLLM's default max_model_len is
    # the model's 131,072 tokens, and 131,072 × 128 KiB = 16 GiB of KV exceeds the ≈ 13 GiB pool.
    # vLLM refuses to start for that reason, so the message must say max_model_len, not "weights".
    at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "a10g", "quantization": "nf4"}, page=page)
    assert not at.exception
    (msg,) = texts(at.error)
    assert "max_model_len = 131,072 tokens" in msg
    # the computed alternatives replace the generic advice (calc.sizing.fit): the pool in whole blocks
    assert "lower max_model_len to 113,552 (`--max-model-len 113552`)" in msg
    # With a shorter max_model_len the same deployment fits.
    at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "a10g", "quantization": "nf4", "max_model_len": "32768"},
             page=page)
    assert not at.exception and not at.error


@pytest.mark.parametrize("page", [None, "pages/frontier.py"])
@pytest.mark.parametrize("lang, words", [
    ("en", ["What would fit instead", "weights in fp8 (`--quantization fp8`): 6.7 requests of 32,768 tokens",
            "tensor parallelism on 4 GPUs (`--tensor-parallel-size 4`): 13.7 requests of 32,768 tokens",
            "lower max_model_len to 10,096", "misses your goal"]),
    ("zh", ["改成下面任一项即可放下", "权重用 fp8（`--quantization fp8`）：可同时容纳 6.7 个 32,768 token 的请求",
            "张量并行到 4 张 GPU", "把 max_model_len 降到 10,096", "达不到你的目标"])])
def test_does_not_fit_lists_what_would(page, lang, words):
    # Issue #17's example: Llama-3.1-70B on 2 × H100 at 32k. Pool 1.54 GiB / (16 · 163,840 B) = 631
    # blocks = 10,096 tokens; FP8 weights 33.42 GiB / 5 GiB per 32k request = 6.7; TP 4 34.33 / 2.5 = 13.7.
    at = app({"model": "meta-llama/Llama-3.1-70B", "gpu": "h100-sxm", "tp": "2", "max_model_len": "32768",
              "lang": lang}, page=page)
    assert not at.exception
    (msg,) = texts(at.error)
    for w in words:
        assert w in msg, w


def test_weights_over_budget_is_named_as_such():
    # Llama-2-70B FP16 on one A100 80GB: 68,976,648,192 × 2 B = 137.95 GB = 128.48 GiB > 0.9 × 79.15 GiB.
    at = app({"model": "meta-llama/Llama-2-70b-hf"})
    (msg,) = texts(at.error)
    assert "weights 128.48 GiB" in msg and "exceed vLLM's budget" in msg
    # 2 GPUs in FP16 (64.24 GiB each) or FP8 weights (≈ 64 GiB) on one GPU fit; no max_model_len does
    assert "tensor parallelism on 2 GPUs" in msg and "lower max_model_len" not in msg


def test_old_spellings_in_a_link_are_read_with_a_note():
    # Links made before the vLLM spellings: quantization=nf4, kv_cache_dtype=int8 -> bitsandbytes, fp8.
    at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "a10g", "quantization": "nf4", "kv_cache_dtype": "int8",
              "max_model_len": "32768"})
    assert not at.exception and not at.error
    notes = " ".join(texts(at.warning))
    assert "`quantization=nf4` is an old spelling, read as `bitsandbytes`" in notes
    assert "`kv_cache_dtype=int8` is an old spelling, read as `fp8`" in notes
    assert at.session_state["quantization"] == "bitsandbytes" and at.session_state["kv_cache_dtype"] == "fp8"


@pytest.mark.parametrize("lang, title, right, bar", [
    ("en", "Max concurrency: none, vLLM refuses to start", "Requests served: none<br>(vLLM refuses to start)",
     "0: does not start"),
    ("zh", "最大并发数：无，vLLM 拒绝启动", "可服务的请求：无<br>（vLLM 拒绝启动）", "0：无法启动")])
def test_refusal_is_not_contradicted_by_the_why_panel_or_the_waste_chart(lang, title, right, bar):
    # Llama-3.1-70B bf16 on 2 × H100 (issue 11): vLLM refuses to start, so nothing may say "3 fit" / "= 4".
    at = app({"model": "meta-llama/Llama-3.1-70B", "gpu": "h100-sxm", "tp": "2", "dtype": "bfloat16", "lang": lang})
    assert not at.exception and at.error
    labels = [e.label for e in at.expander]
    assert title in labels
    assert not [x for x in labels if x.startswith(("Max concurrency =", "最大并发数 ="))]
    waste = next(s for s in plotly_specs(at) if "xaxis2" in s["layout"])
    assert waste["data"][1]["text"] == [bar, bar] and decode(waste["data"][1]["y"]) == [0, 0]
    assert right in [a["text"] for a in waste["layout"]["annotations"]]


def test_lazy_sidebar_sections_keep_what_the_user_typed():
    # Closed sections are not drawn (CPU per rerun); text typed in them must survive closing.
    at = app()
    assert "config_text" not in {w.key for w in at.sidebar.text_area}
    at = open_section(at, "sec_config", "sec_paste")
    at.text_area(key="config_text").set_value('{"model_type": "llama"').run()
    at.text_area(key="vllm_command_text").set_value("vllm serve x --max-num-seqs 8").run()
    at.session_state["_open_sec_config"] = at.session_state["_open_sec_paste"] = False
    at.run()
    assert not at.sidebar.text_area
    at = open_section(at, "sec_config", "sec_paste")
    assert at.text_area(key="config_text").value == '{"model_type": "llama"'
    assert at.text_area(key="vllm_command_text").value == "vllm serve x --max-num-seqs 8"


def test_gpu_select_shows_names_and_keeps_ids_in_the_link():
    """Issue #19: the sidebar GPU select listed catalog ids ("a100-80gb"); it shows names now, the
    value and the link keep the id (a bound select would write the shown name into the URL)."""
    from calc.spec.catalog import get_gpu

    for lang, custom in (("en", "Your own GPU"), ("zh", "自定义 GPU")):
        at = app({"lang": lang, "gpu": "h100-sxm"})
        box = at.sidebar.selectbox(key="gpu")
        assert box.value == "h100-sxm"
        assert "NVIDIA H100 SXM5 80GB" in box.options and "h100-sxm" not in box.options and custom in box.options
        box.select("l40s").run()
        assert not at.exception and at.query_params["gpu"] == "l40s"  # the id, not "NVIDIA L40S 48GB"
        assert at.sidebar.selectbox(key="gpu").value == "l40s"
        at.sidebar.selectbox(key="gpu").select("a100-80gb").run()  # the default: left out of the link
        assert "gpu" not in at.query_params and not at.exception
        assert lang == "zh" or metrics(at)["Weights per GPU"] == "12.55 GiB"
    assert get_gpu("a100-80gb").name == "NVIDIA A100 SXM4 80GB"


@pytest.mark.parametrize("query, expected", [
    # gpt-oss-120b on one H100: MXFP4 experts padded as vLLM's Triton backend stores them (vLLM 0.14.1 logs
    # "Model loading took 64.38 GiB"; bench/data/vllm_weight_logs_current_models.jsonl), 128-token sliding half
    ({"model": "openai/gpt-oss-120b", "gpu": "h100-sxm", "context": "8192", "max_model_len": "32768"},
     {"Weights per GPU": "64.50 GiB"}),
    # Llama-4-Scout on 4 x B300 (a current GPU in the select by its name) and Kimi-K2 on 8 x GB200
    ({"model": "meta-llama/Llama-4-Scout-17B-16E-Instruct", "gpu": "b300", "tp": "4", "context": "8192"}, {}),
    ({"model": "moonshotai/Kimi-K2-Instruct", "gpu": "gb200", "tp": "8", "context": "8192"}, {}),
])
def test_current_models_and_gpus_render(query, expected):
    at = app(query)
    assert not at.exception and not at.error
    m = metrics(at)
    assert {k: m[k] for k in expected} == expected
    assert at.selectbox(key="gpu").value == query["gpu"]
    assert any("B300" in o or "GB200" in o or "H100" in o for o in at.selectbox(key="gpu").options)


def test_gpt_oss_120b_at_its_full_context_does_not_start_on_one_h100():
    # As reported in vllm-project/vllm#27508 and #23278: one 131,072-token request does not fit the pool
    # left beside 64.5 GiB of weights; the page says so and lists what would fit.
    at = app({"model": "openai/gpt-oss-120b", "gpu": "h100-sxm", "context": "8192"})
    assert not at.exception
    assert any("does not fit on 1 × NVIDIA H100" in e.value and "max_model_len = 131,072" in e.value for e in at.error)


def test_nvfp4_kv_cache_on_sm100_and_refused_elsewhere():
    # NVFP4 KV: (64 + 8) / 128 B per element; Llama-2-7B 2·32·32·128 elements per token · 0.5625 B = 147,456 B = 144 KiB
    at = app({"kv_cache_dtype": "nvfp4", "gpu": "b200"})
    assert not at.exception and metrics(at)["KV cache per token"] == "144 KiB"
    # vLLM gates --kv-cache-dtype nvfp4 to compute capability 10.x: on an H100 the page names the field
    at = app({"kv_cache_dtype": "nvfp4", "gpu": "h100-sxm"})
    assert not at.exception
    assert any("kv_cache_dtype: got 'nvfp4'" in e.value and "H100" in e.value for e in at.error)


def test_shared_prefixes_fit_more_requests():
    """Issue #21: the memory page did not show what cached prefixes change. Llama-2-7B FP16 on the A100
    80GB at 2,048 tokens: 0.5 MiB of KV a token, 1 GiB a request; 10 prefixes of 1,024 tokens (64 blocks,
    0.5 GiB each) held once: ⌊(pool − 10 × 0.5 GiB) / (1 − 0.5) GiB⌋ requests; 40 of them hold
    10 × 0.5 + 40 × 0.5 = 25 GiB instead of 40."""
    from calc.sizing.scenario import memory_for
    from calc.spec.catalog import get_gpu, get_model
    from calc.spec.inputs import ServingConfig

    at = app({"pc_reuse": "shared", "pc_prefix_len": "1024", "context": "2048", "concurrency": "40"})
    assert not at.exception and not at.error
    r = memory_for(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"), ServingConfig(), concurrency=40,
                   context_tokens=2048)
    gib = 2 ** 30
    assert float(r.kv_bytes_per_request) == gib
    fit = int((float(r.kv_pool_bytes) - 10 * 0.5 * gib) // (0.5 * gib))
    assert fit == 106
    info = next(i.value for i in at.info if i.value.startswith("**Shared prefixes:**"))
    assert f"**{fit} requests fit** instead of {int(r.max_concurrency_at_context)}" in info
    assert "40 of them hold 25.00 GiB of KV instead of 40.00 GiB" in info
    open_why(at, "shared_prefix")  # the formula with the values plugged in
    assert not at.exception and any(f"= {fit}" in m.value for m in at.latex)
    at = app({"pc_reuse": "chat", "lang": "zh"})  # a chat shares nothing between running requests
    assert not at.exception and not any(i.value.startswith("**共享前缀") for i in at.info)
    assert any("对话的上下文各不相同" in c.value for c in at.caption)


def test_the_sidebar_asks_input_and_output_tokens_and_states_their_sum():
    """Issue #19: "context length" meant the whole request on one page and prompt + output on another,
    and the output hid in the engine section. The sidebar asks input and output tokens side by side;
    the link keeps context (= input + output) and output_len; a change of one keeps the other."""
    at = app()
    assert (at.number_input(key="input_tokens").value, at.number_input(key="output_tokens").value) == (1792, 256)
    assert "Context 1,792 + 256 = 2,048 tokens per request (KV cache; max_model_len 4,096)." in texts(at.sidebar.caption)
    at.number_input(key="output_tokens").set_value(512).run()  # the prompt stays 1,792
    assert at.query_params["context"] in ("2304", ["2304"]) and at.query_params["output_len"] in ("512", ["512"])
    sc = at.session_state["_scenario"]
    assert (sc.serving.input_len, sc.serving.output_len, sc.context_tokens) == (1792, 512, 2304)
    at.number_input(key="input_tokens").set_value(1000).run()
    assert at.session_state["_scenario"].context_tokens == 1512 and at.query_params["context"] in ("1512", ["1512"])
    # an old link's context and output: the boxes show its prompt
    old = app({"context": "4096", "output_len": "1024"})
    assert (old.number_input(key="input_tokens").value, old.number_input(key="output_tokens").value) == (3072, 1024)
    # a page that does not use them says so under the boxes
    kv = app(page="pages/kv_table.py")
    assert "Not used on this page." in texts(kv.sidebar.caption)


def test_the_sum_under_the_boxes_is_what_the_user_typed_even_when_it_does_not_fit():
    """The caption adds the boxes' values; the scenario shown is the last good one, the error names the sum."""
    at = app()
    at.number_input(key="input_tokens").set_value(7936).run()
    assert "Context 7,936 + 256 = 8,192 tokens per request (KV cache; max_model_len 4,096)." in texts(at.sidebar.caption)
    assert any("got 8,192" in e for e in texts(at.error))
