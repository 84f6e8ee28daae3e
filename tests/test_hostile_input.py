"""The reproducers of issue 8 (hostile input), one per class, each held by its root fix.

Classes: numbers from the URL reach no widget unchecked (ui.state.sanitize_query_params);
user text enters messages only through ui.safe (escaped, cut); scenario files and config.json
through calc.spec.untrusted.load_json (depth, huge integers, types); one TP rule for UI and CLI
(calc.spec.parallelism); error details hidden (.streamlit/config.toml); the CLI never raises.
"""

from __future__ import annotations

import json
import re
import tomllib

import pytest
from streamlit.testing.v1 import AppTest

from apptest_helpers import app, metrics, open_section, plain, texts
from calc.cli.main import main
from calc.spec.catalog import get_model
from calc.spec.hf_config import ConfigError, parse_config_text
from calc.spec.parallelism import tensor_parallel_sizes
from calc.spec.untrusted import InputError
from conftest import ROOT
from ui.safe import describe, md_escape, user_text
from ui.i18n import Translator
from ui.state import load_scenario_text

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DEFAULT_KV = "1.00 GiB"  # KV cache per request of the default scenario (Llama-2-7B, 2,048 tokens)
LINK = "`[click me](https://evil.example/phish)`"
PIXEL = "x` ![t](http://127.0.0.1:9/pixel.png) `"


# ----------------------------------------------------------------------------- item 2: numbers in the URL

@pytest.mark.parametrize("key, raw", [("output_len", "inf"), ("context", "-inf"), ("max_model_len", "1e309"),
                                      ("max_num_seqs", "inf"), ("max_num_batched_tokens", "9" * 400),
                                      ("concurrency", "nan")])
def test_infinite_or_huge_url_numbers_warn_and_fall_back(key, raw):
    at = app({key: raw})
    assert not at.exception
    (warning,) = plain(at.warning)
    assert warning.startswith(f"URL parameter {key}=") and "allowed: integer" in warning and "using the default" in warning
    assert len(warning) < 400  # the 400 digits are cut
    assert metrics(at)["KV cache per request"] == DEFAULT_KV


def test_repeated_key_is_named_and_the_last_value_used():
    at = app({"concurrency": ["16", "40"]})
    assert not at.exception
    assert "URL parameter concurrency is given 2 times (16, 40); using the last one, 40." in plain(at.warning)
    assert at.number_input(key="concurrency").value == 40


def test_valid_number_in_another_spelling_reaches_the_widget():
    at = app({"context": "1e3"})  # read as 1000 (the sidebar asks input + output: 744 + 256)
    assert not at.exception and not at.warning
    assert at.number_input(key="input_tokens").value == 1000 - 256 and at.session_state["_scenario"].context_tokens == 1000


# ----------------------------------------------------------------------------- items 4 and 7: echo

@pytest.mark.parametrize("query", [{"concurrency": LINK}, {"gpu": PIXEL}, {"lang": LINK}])
def test_markdown_in_a_parameter_is_shown_as_text(query):
    at = app(query)
    assert not at.exception
    (warning,) = texts(at.warning)
    assert md_escape(next(iter(query.values()))) in warning  # the value, every active character escaped
    assert "\\[" in warning and "\\(" in warning and "\\:" in warning


def test_md_escape_leaves_no_active_markdown():
    for text in (LINK, PIXEL, "<script>x</script>", "**b** _i_ ~s~ $x$ :red[x] #h |t|", "www.evil.example a@b.c"):
        escaped = md_escape(text)
        unescaped_active = [c for i, c in enumerate(escaped) if c in "`[]()<>!*_~$:#|" and
                            (i == 0 or escaped[i - 1] != "\\")]
        assert unescaped_active == [], (text, escaped)
        # GFM autolinks match the final text: scheme/www/e-mail patterns must be broken by the zero-width space
        assert re.search(r"(?i)(https?\\?:|www\\?\.|[\w.+-]@)", escaped) is None, escaped


def test_long_values_are_cut_with_their_length():
    at = app({"concurrency": "x" * 100_000})
    (warning,) = plain(at.warning)
    assert "… (100,000 characters)" in warning and len(warning) < 300
    assert user_text("y" * 81).endswith("… \\(81 characters\\)")


def test_config_name_cannot_inject_markdown():
    cfg = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
           "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
           "max_position_embeddings": 8192, "_name": "x` ![t](http://127.0.0.1:9/p.png) `" + "z" * 500}
    arch = parse_config_text(json.dumps(cfg))
    assert not set(arch.name) & set("`[]!<>*:#|$~\\") and len(arch.name) <= 80


# ----------------------------------------------------------------------------- item 3: scenario files

@pytest.mark.parametrize("text, field", [
    ("[" * 1000, "scenario file"),
    (json.dumps({"format": "llm-inference-calculator/scenario", "version": 1, "controls": {}})
     .replace('"controls": {}', '"controls": {"concurrency": ' + "9" * 400 + "}"), "concurrency"),
    ('{"format": "llm-inference-calculator/scenario", "version": ' + "9" * 5000 + ', "controls": {}}', "version"),
    (json.dumps({"format": "llm-inference-calculator/scenario", "version": 1, "controls": {"tp": {"a": 1}}}), "tp"),
    (json.dumps({"format": "llm-inference-calculator/scenario", "version": 1,
                 "controls": {"model": "custom"}, "custom_config": [1]}), "custom_config"),
])
def test_hostile_scenario_files_name_the_field(text, field):
    with pytest.raises(InputError) as info:
        load_scenario_text(text)
    assert info.value.field == field and str(info.value).startswith(field)
    assert len(str(info.value)) < 300


# ----------------------------------------------------------------------------- item 9 and issue 11 item 6

def test_tp_rule_is_the_same_in_the_ui_and_the_cli(capsys):
    sizes = tensor_parallel_sizes(get_model("meta-llama/Llama-2-13b-hf"))
    assert sizes == (1, 2, 4, 8)  # 40 heads
    at = app({"model": "meta-llama/Llama-2-13b-hf", "tp": "16"})
    (error,) = plain(at.error)
    assert "tp: got 16, allowed 1, 2, 4, 8 (it must divide the 40 attention heads of Llama-2-13B)" in error
    assert main(["memory", "--model", "meta-llama/Llama-2-13b-hf", "--gpu", "a100-80gb", "-tp", "16"]) == 2
    assert "got 16" in capsys.readouterr().err


def test_tiny_max_position_embeddings_is_refused_by_ui_and_cli(tmp_path, capsys):
    cfg = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
           "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "max_position_embeddings": 8}
    with pytest.raises(ConfigError, match="max_position_embeddings: got 8, allowed at least 16"):
        parse_config_text(json.dumps(cfg))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert main(["memory", "--model", str(path), "--gpu", "a100-80gb"]) == 2
    assert "max_position_embeddings: got 8" in capsys.readouterr().err


TINY = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
        "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "max_position_embeddings": 8192}


def test_rejected_paste_keeps_the_previous_model_and_says_so():
    at = open_section(app(), "sec_config")
    at.text_area(key="config_text").set_value(json.dumps(TINY | {"_name_or_path": "org/first-model"})).run()
    at.button(key="config_apply").click().run()
    assert any("first-model" in s for s in plain(at.success))
    kv = metrics(at)["KV cache per request"]
    at.text_area(key="config_text").set_value(json.dumps(TINY | {"max_position_embeddings": 4})).run()
    at.button(key="config_apply").click().run()
    assert not at.exception and not at.success
    (error,) = plain(at.error)
    assert "max_position_embeddings: got 4" in error and "Still showing first-model" in error
    assert metrics(at)["KV cache per request"] == kv


def test_config_with_a_short_window_lowers_the_context_instead_of_failing():
    at = open_section(app({"context": "4096"}), "sec_config")
    at.text_area(key="config_text").set_value(json.dumps(TINY | {"max_position_embeddings": 1024})).run()
    at.button(key="config_apply").click().run()
    assert not at.exception and not at.error
    assert any("context lowered to 1,024 tokens" in s for s in plain(at.success))
    assert at.number_input(key="input_tokens").value == 1024 - 256


# ----------------------------------------------------------------------------- issue 11 item 10: languages

def test_validation_reason_in_chinese():
    at = app({"lang": "zh"})
    at.number_input(key="input_tokens").set_value(8192 - 256).run()
    (error,) = plain(at.error)
    assert "context（输入 + 输出 token）：收到 8,192，允许 16 – 4,096" in error and "got" not in error
    err = InputError("concurrency", "0", allowed="integer 1 – 1,024 (or empty)")
    assert describe(err, Translator("zh")) == "concurrency：收到 '0'，允许 整数 1 – 1,024 （或留空）"


# ----------------------------------------------------------------------------- item 10: error details

def test_error_details_are_hidden_from_users():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["client"]["showErrorDetails"] == "none"
    at = AppTest.from_string("raise RuntimeError('secret /srv/app/path')").run()
    (exc,) = at.exception
    assert "secret" not in exc.message and "/srv" not in exc.message and not exc.stack_trace


# ----------------------------------------------------------------------------- items 5, 6, 8: CLI

def test_cli_long_model_name_is_a_usage_error(capsys):
    assert main(["memory", "--model", "x" * 256, "--gpu", "l40s"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown model 'xxxx") and "(256 characters)" in err and "Traceback" not in err


def test_cli_batch_bad_line_does_not_stop_the_file(tmp_path, capsys):
    good = {"model": "meta-llama/Llama-2-7b-hf", "gpu": "a100-80gb", "input_len": 512, "output_len": 64}
    f = tmp_path / "b.jsonl"
    f.write_text("\n".join([json.dumps(good | {"model": "x" * 256}), json.dumps(good)]) + "\n")
    assert main(["estimate", "--batch", str(f)]) == 2
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert out[0]["line"] == 1 and "256 characters" in out[0]["error"] and "ttft_s" in out[1]


def test_cli_batch_flags_are_defaults_for_every_line(tmp_path, capsys):
    f = tmp_path / "b.jsonl"
    f.write_text(json.dumps({"model": "meta-llama/Llama-2-7b-hf", "input_len": 512, "output_len": 64}) + "\n"
                 + json.dumps({"model": "meta-llama/Llama-2-7b-hf", "input_len": 512, "output_len": 64,
                               "tensor_parallel_size": 1}) + "\n")
    assert main(["estimate", "--batch", str(f), "--tensor-parallel-size", "8", "--gpu", "h100-sxm"]) == 0
    a, b = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert (a["tensor_parallel_size"], a["gpu"]) == (8, "h100-sxm")
    assert (b["tensor_parallel_size"], b["gpu"]) == (1, "h100-sxm")  # the line's own value wins


def test_cli_replicas_above_concurrency_refused(tmp_path, capsys):
    f = tmp_path / "b.jsonl"
    f.write_text('{"model":"meta-llama/Llama-2-7b-hf","gpu":"a100-80gb","input_len":1024,"output_len":1,'
                 '"replicas":2}\n')
    assert main(["estimate", "--batch", str(f)]) == 2
    (line,) = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert line["error"].startswith("replicas: got 2, allowed 1 – 1 (at most the concurrency 1")
