"""Control specs (query-string / JSON validation) and scenario files (untrusted input)."""

import json

import pytest

from ui import controls as C
from ui.state import SCENARIO_FORMAT, SCENARIO_VERSION, build_scenario, default_scenario, load_scenario_text

DEFAULTS = {c.key: c.default for c in C.SHARED}


class TestParse:
    @pytest.mark.parametrize("raw, value", [("16", 16), ("1024", 1024), ("1", 1), ("8.0", 8), (64, 64)])
    def test_valid_integers(self, raw, value):
        assert C.CONCURRENCY.parse(raw) == value

    @pytest.mark.parametrize("raw", ["0", "4097", "abc", "", "1.5", "nan", "inf", True, None, "-3"])
    def test_invalid_integers_name_the_field_and_range(self, raw):
        with pytest.raises(C.ControlValueError) as e:
            C.CONCURRENCY.parse(raw)
        assert e.value.key == "concurrency"
        assert "1 – 4,096" in str(e.value)

    def test_select(self):
        assert C.GPU.parse("h100-sxm") == "h100-sxm"
        assert C.TP.parse("4") == 4 and C.TP.parse(4) == 4
        with pytest.raises(C.ControlValueError, match="gpu: got 'h999'"):
            C.GPU.parse("h999")
        with pytest.raises(C.ControlValueError):
            C.TP.parse("3")

    def test_optional_number_accepts_empty(self):
        assert C.MAX_MODEL_LEN.parse("") is None and C.MAX_MODEL_LEN.parse(None) is None
        assert C.MAX_MODEL_LEN.parse("8192") == 8192
        with pytest.raises(C.ControlValueError, match="or empty"):
            C.MAX_MODEL_LEN.parse("8")

    def test_float_slider(self):
        assert C.GPU_MEMORY_UTILIZATION.parse("0.95") == 0.95
        with pytest.raises(C.ControlValueError, match="0.05 – 1"):
            C.GPU_MEMORY_UTILIZATION.parse("1.5")

    def test_toggle_and_lists(self):
        assert C.SWEEP_CONTEXT.parse("TRUE") is True and C.SWEEP_CONTEXT.parse(False) is False
        with pytest.raises(C.ControlValueError):
            C.SWEEP_CONTEXT.parse("yes")
        assert C.KV_CONTEXTS.parse(["4096", 100000]) == (4096, 100000)
        with pytest.raises(C.ControlValueError, match="kv_contexts"):
            C.KV_CONTEXTS.parse(["4096", "lots"])
        with pytest.raises(C.ControlValueError, match="kv_models"):
            C.KV_MODELS.parse(["meta-llama/Llama-2-7b-hf", "gpt-5"])

    def test_defaults_are_valid_and_omitted_from_urls(self):
        for ctl in C.SHARED + C.PAGE:
            if ctl.default is not None:
                assert ctl.parse(ctl.default) == ctl.default, ctl.key
            assert ctl.url_value(ctl.default) is None, ctl.key

    def test_url_value(self):
        assert C.CONCURRENCY.url_value(32) == "32"
        assert C.SWEEP_CONTEXT.url_value(True) == "true"
        assert C.KV_CONTEXTS.url_value((2048,)) == ["2048"]


class TestScenario:
    def test_default_scenario_is_the_course_case_study(self):
        sc = default_scenario()  # course §3.5: a 7B on one A100 80GB, 16 requests of 2,048 tokens
        assert (sc.arch.name, sc.gpu.id, sc.concurrency, sc.context_tokens) == ("Llama-2-7B", "a100-80gb", 16, 2048)
        assert sc.serving.input_len + sc.serving.output_len == 2048

    def test_context_beyond_max_model_len_names_the_field(self):
        with pytest.raises(ValueError, match=r"context \(input \+ output tokens\): got 8,192, allowed 16 – 4,096"):
            build_scenario(DEFAULTS | {"context": 8192})

    def test_output_len_must_leave_a_prompt(self):
        with pytest.raises(ValueError, match="output_len"):
            build_scenario(DEFAULTS | {"output_len": 2048})

    def test_context_beyond_the_users_max_model_len_is_said_in_their_terms(self):
        with pytest.raises(ValueError, match=r"context \(input \+ output tokens\): got 2,048, allowed 16 – 1,024") as err:
            build_scenario(DEFAULTS | {"max_model_len": 1024})  # input + output > max_model_len
        assert err.value.code == "context_max_model_len" and "\n" not in str(err.value)


def _doc(**controls):
    return json.dumps({"format": SCENARIO_FORMAT, "version": SCENARIO_VERSION, "controls": controls})


class TestScenarioFile:
    def test_round_trip_values(self):
        values, arch, cfg = load_scenario_text(_doc(model="meta-llama/Llama-3.1-8B", gpu="h100-sxm", concurrency=64,
                                                    context=8192, gpu_memory_utilization=0.95, max_model_len=16384))
        assert values["concurrency"] == 64 and values["gpu_memory_utilization"] == 0.95
        assert values["tp"] == 1  # missing fields take their defaults
        assert arch is None and cfg is None

    @pytest.mark.parametrize("text, match", [
        ("not json", "not valid JSON"),
        ("[1, 2]", "scenario file must be a JSON object"),
        (json.dumps({"format": SCENARIO_FORMAT, "version": 99, "controls": {}}), "version"),
        (json.dumps({"format": SCENARIO_FORMAT, "version": 1, "controls": []}), "controls"),
        (_doc(colour="red"), "unknown field"),
        (_doc(concurrency=5000), r"concurrency: got 5,000, allowed integer 1 – 4,096"),
        (_doc(gpu="h999"), "gpu"),
        (_doc(model="custom"), "custom_config"),
        (_doc(context=8192), "context"),  # Llama-2-7B has 4,096 positions
        ("x" * 3_000_000, "larger than"),
    ])
    def test_bad_files_name_the_field(self, text, match):
        with pytest.raises(ValueError, match=match):
            load_scenario_text(text)

    def test_custom_model_travels_in_the_file(self):
        cfg = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
               "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
               "max_position_embeddings": 8192, "_name_or_path": "tiny-llama"}
        text = json.dumps({"format": SCENARIO_FORMAT, "version": 1, "controls": {"model": "custom"},
                           "custom_config": cfg})
        values, arch, got_cfg = load_scenario_text(text)
        assert values["model"] == "custom" and arch.num_hidden_layers == 16 and got_cfg == cfg
        bad = json.dumps({"format": SCENARIO_FORMAT, "version": 1, "controls": {"model": "custom"},
                          "custom_config": cfg | {"hidden_size": -1}})
        with pytest.raises(ValueError, match="hidden_size"):
            load_scenario_text(bad)


class TestOldSpellings:
    def test_aliases_parse_to_vllm_spellings(self):
        assert C.QUANTIZATION.parse("nf4") == "bitsandbytes"
        assert C.KV_CACHE_DTYPE.parse("fp16") == "float16" and C.KV_CACHE_DTYPE.parse("int8") == "fp8"
        assert C.KV_CACHE_DTYPE.parse("bf16") == "bfloat16"
        assert C.alias_of(C.KV_CACHE_DTYPE, "bfloat16") is None  # current spellings are not aliases

    def test_every_alias_has_a_translated_reason(self):
        from ui.i18n import Translator

        for ctl in (C.QUANTIZATION, C.KV_CACHE_DTYPE):
            for old in ctl.aliases:
                for lang in ("en", "zh"):
                    text = Translator(lang)(f"alias.{ctl.key}.{old}")
                    assert text and not text.startswith("alias."), (lang, ctl.key, old)


def test_old_scenario_file_spellings_load_as_vllms():
    # A scenario saved before the vLLM spellings: quantization nf4, KV int8 -> bitsandbytes, fp8
    doc = {"format": SCENARIO_FORMAT, "version": SCENARIO_VERSION,
           "controls": {"model": "meta-llama/Llama-3.1-8B", "gpu": "a10g", "quantization": "nf4",
                        "kv_cache_dtype": "int8", "max_model_len": 32768}}
    values, _, _ = load_scenario_text(json.dumps(doc))
    assert values["quantization"] == "bitsandbytes" and values["kv_cache_dtype"] == "fp8"
    assert C.alias_of(C.BY_KEY["quantization"], "nf4") == "bitsandbytes"  # what the upload note reports


def test_custom_gpu_scenario_file_round_trip():
    doc = {"format": SCENARIO_FORMAT, "version": SCENARIO_VERSION,
           "controls": {"gpu": "custom", "cgpu_memory_gib": 24, "cgpu_hbm_tbps": 1.0, "cgpu_bf16_tflops": 165.2,
                        "cgpu_fp8_tflops": None, "cgpu_link_gbps": 32, "cgpu_price_usd_h": 0.5}}
    values, _, _ = load_scenario_text(json.dumps(doc))
    sc = build_scenario(values)
    assert sc.gpu.id == "custom" and sc.gpu.usable_memory_bytes == 24 * 2**30 and sc.gpu.fp8_flops_per_s is None
    assert sc.gpu.price_usd_per_hour == 0.5
    with pytest.raises(ValueError, match="cgpu_memory_gib"):
        load_scenario_text(json.dumps(doc | {"controls": doc["controls"] | {"cgpu_memory_gib": 0}}))
