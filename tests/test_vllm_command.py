"""vLLM commands both ways: the serve command written for a scenario parses back to it; pasted
commands (line continuations, quotes, docker, `=` values, human sizes) become control values;
unknown flags are ignored by name, bad values named; user text cut short."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc.spec.inputs import ServingConfig
from calc.spec.speculative import parse_speculative_config
from calc.spec.vllm_command import parse_serve_command, serve_command, shown
from ui.vllm_paste import REFUSED, command_to_values, values_to_apply


def test_round_trip_of_the_command_we_write():
    s = ServingConfig(tensor_parallel_size=4, dtype="bfloat16", quantization="fp8", kv_cache_dtype="fp8",
                      gpu_memory_utilization=0.92, block_size=32)
    text = serve_command(model_id="meta-llama/Llama-3.1-70B", serving=s, max_model_len=8192, max_num_seqs=64,
                         max_num_batched_tokens=4096, chunked=False)
    p = parse_serve_command(text)
    assert p.model == "meta-llama/Llama-3.1-70B" and not p.ignored and not p.errors
    assert p.options == {"tensor_parallel_size": 4, "dtype": "bfloat16", "quantization": "fp8", "max_model_len": 8192,
                         "max_num_seqs": 64, "max_num_batched_tokens": 4096, "gpu_memory_utilization": 0.92,
                         "kv_cache_dtype": "fp8", "block_size": 32, "enable_chunked_prefill": False}


def test_round_trip_of_the_serving_features():
    """Issue #21: the command the pages write for a speculative, cache-off scenario read back as the
    same features (the paste box used to list --speculative-config and --no-enable-prefix-caching as
    ignored, so copying the page's command and pasting it back lost them)."""
    spec = parse_speculative_config('{"method": "eagle3", "num_speculative_tokens": 4}')
    text = serve_command(model_id="meta-llama/Llama-3.1-8B", serving=ServingConfig(), max_model_len=8192,
                         max_num_seqs=64, max_num_batched_tokens=4096, chunked=True, speculative=spec,
                         enable_prefix_caching=False)
    p = parse_serve_command(text)
    assert not p.ignored and not p.errors
    assert p.options["enable_prefix_caching"] is False
    got = p.options["speculative_config"]
    assert (got.method, got.num_speculative_tokens) == ("eagle3", 4)
    values, ignored, errors = command_to_values(text)
    assert not ignored and not errors
    assert {k: values[k] for k in ("pc_caching", "spec_on", "spec_method", "spec_k")} == {
        "pc_caching": False, "spec_on": True, "spec_method": "eagle3", "spec_k": 4}


@pytest.mark.parametrize("config, problem", [
    ('{"method": "medusa", "num_speculative_tokens": 3}',
     "--speculative-config (method): got 'medusa', allowed one of ngram, eagle, eagle3, mtp, draft_model"),
    ('{"method": "ngram", "num_speculative_tokens": 12}',  # vLLM takes it, the pages' slider stops at 8
     "--speculative-config (num_speculative_tokens): got 12, allowed integer 1 – 8"),
    ('{"method": "draft_model", "model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 4}',
     "--speculative-config (method): got 'draft_model', allowed {ngram, eagle, eagle3, mtp}"),
    ('{"method": "mtp"}', "--speculative-config (num_speculative_tokens): required"),
    ('{"method": "mtp"', "--speculative-config is not valid JSON: Expecting ',' delimiter: line 1 column 17 (char 16)"),
])
def test_a_speculative_config_the_pages_cannot_take_is_named_and_sets_nothing(config, problem):
    values, _, errors = command_to_values(f"vllm serve meta-llama/Llama-3.1-8B --speculative-config '{config}'")
    assert errors == [problem]
    assert not any(k.startswith("spec_") for k in values)
    # a command without the flag switches speculation off (a bad one keeps the sidebar's: the AppTest)
    assert values_to_apply({"model": "Qwen/Qwen3-8B"}, {"spec_on": True})["spec_on"] is False


def test_docker_run_with_quotes_and_continuations():
    text = """docker run --runtime nvidia --gpus all \\
        -v ~/.cache/huggingface:/root/.cache/huggingface \\
        -p 8000:8000 --ipc=host \\
        vllm/vllm-openai:latest \\
        --model "meta-llama/Llama-3.1-8B" --max-model-len=16K --gpu-memory-utilization '0.85' \\
        --enable-chunked-prefill=false --served-model-name llama"""
    p = parse_serve_command(text)
    assert p.model == "meta-llama/Llama-3.1-8B"
    assert p.options == {"max_model_len": 16384, "gpu_memory_utilization": 0.85, "enable_chunked_prefill": False}
    assert p.ignored == ["--served-model-name"] and not p.errors


def test_api_server_module_form():
    p = parse_serve_command("python -m vllm.entrypoints.openai.api_server --model mistralai/Mistral-7B-v0.1 -tp 2")
    assert p.model == "mistralai/Mistral-7B-v0.1" and p.options == {"tensor_parallel_size": 2}


@pytest.mark.parametrize("text, message", [
    ("ls -la", "expected 'vllm serve"),
    ('vllm serve "unterminated', "check the quotes"),
])
def test_not_a_command(text, message):
    with pytest.raises(ValueError, match=message):
        parse_serve_command(text)


def test_bad_values_are_named_and_a_refused_model_applies_nothing():
    values, ignored, errors = command_to_values(
        "vllm serve someone/unknown-model --tensor-parallel-size 3 --block-size 7 --dtype fp16 --max-model-len x")
    assert values == {"dtype": "float16", REFUSED: True}
    assert values_to_apply(values, {"dtype": "auto"}) == {}  # issue #19: its flags are not the selected model's
    assert any(e.startswith("model: 'someone/unknown-model' is not in the catalog") for e in errors)
    assert any(e.startswith("--tensor-parallel-size: got 3") for e in errors)
    assert any(e.startswith("--block-size: got 7") for e in errors)
    assert any(e.startswith("--max-model-len: got 'x'") for e in errors)


@pytest.mark.parametrize("flag,value,named,allowed", [
    ("-tp", "inf", "--tensor-parallel-size (-tp)", "{1, 2, 4, 8, 16, 32, 64}"),
    ("--tensor-parallel-size", "nan", "--tensor-parallel-size", "{1, 2, 4, 8, 16, 32, 64}"),
    ("--max-num-seqs", "1e309", "--max-num-seqs", "integer 1 – 65,536"),
    ("--block-size", "-inf", "--block-size", "{1, 8, 16, 32, 64, 128}"),
    ("--max-model-len", "1e309k", "--max-model-len", "integer 16 – 10,000,000"),
    ("--max-num-batched-tokens", "9" * 5000, "--max-num-batched-tokens", "integer 16 – 10,000,000"),
    ("--gpu-memory-utilization", "inf", "--gpu-memory-utilization", "number 0.05 – 1"),
])
def test_non_finite_numbers_name_the_flag_and_range(flag, value, named, allowed):
    # issue #18: int(float('inf')) raised OverflowError past the paste box's Apply handler
    values, _, errors = command_to_values(f"vllm serve meta-llama/Llama-3.1-8B --dtype bf16 {flag} {value}")
    assert values == {"model": "meta-llama/Llama-3.1-8B", "dtype": "bfloat16"}  # the rest is applied
    assert len(errors) == 1 and errors[0].startswith(f"{named}: got '{value[:20]}") and errors[0].endswith(
        f"allowed {allowed}"), errors
    assert len(errors[0]) < 200
    p = parse_serve_command(f"vllm serve m {flag} {value}")  # the parser alone: a message, no exception
    assert p.options == {} and len(p.errors) == 1 and p.errors[0].startswith(f"{flag}: got")


def test_a_later_bad_value_replaces_an_earlier_good_one():
    values, _, errors = command_to_values("vllm serve meta-llama/Llama-3.1-8B -tp 2 -tp inf")
    assert "tp" not in values and errors == ["--tensor-parallel-size (-tp): got 'inf', allowed {1, 2, 4, 8, 16, 32, 64}"]


def test_user_text_is_cut_and_cleaned():
    p = parse_serve_command("vllm serve m --" + "x" * 500 + " --\x1b[31mred")
    assert all(len(w) <= 60 for w in p.ignored) and all("\x1b" not in w for w in p.ignored)
    assert shown("a" * 100).endswith("…") and len(shown("a" * 100)) == 60


@given(st.text(max_size=300))
def test_any_text_either_parses_or_says_why(text):
    try:
        p = parse_serve_command("vllm serve m " + text)
    except ValueError as exc:
        assert str(exc).startswith("command:")
        return
    assert all(len(e) < 400 for e in p.errors)


def test_a_speculative_config_given_again_replaces_the_earlier_one_and_its_problem():
    """argparse keeps the last value: a bad --speculative-config followed by a good one is the good one."""
    p = parse_serve_command("vllm serve x --speculative-config '{\"method\": \"medusa\", \"num_speculative_tokens\": 2}' "
                            "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 2}'")
    assert not p.errors and p.options["speculative_config"].method == "ngram"
    p = parse_serve_command("vllm serve x --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 2}' "
                            "--speculative-config '{\"method\": \"medusa\"}'")
    assert "speculative_config" not in p.options and "speculative_config" not in p.texts
    assert p.errors == ["--speculative-config (method): got 'medusa', allowed one of ngram, eagle, eagle3, mtp, draft_model"]
