"""ui.fit: the does-not-fit message with the computed alternatives, in both languages."""

import pytest

from calc.sizing.fit import what_would_fit
from calc.sizing.scenario import memory_for
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import ServingConfig
from ui.fit import not_fit_message
from ui.i18n import Translator

LLAMA31_70B, LLAMA31_405B = get_model("meta-llama/Llama-3.1-70B"), get_model("meta-llama/Llama-3.1-405B")
H100, L4 = get_gpu("h100-sxm"), get_gpu("l4")


def _message(arch, gpu, serving, lang, **goal):
    mem = memory_for(arch, gpu, serving)
    advice = what_would_fit(arch, gpu, serving, **goal)
    return not_fit_message(model=arch.name, gpu=gpu.name, tp=serving.tensor_parallel_size,
                           max_model_len=serving.max_model_len, mem=mem, t=Translator(lang), advice=advice)


def test_issue_example_lists_each_alternative_with_its_flags():
    # 70B on 2 × H100 at 32k, 8 requests wanted: FP8 weights hold 6 (6.7), FP8 weights + FP8 KV 13.4
    msg = _message(LLAMA31_70B, H100, ServingConfig(tensor_parallel_size=2, max_model_len=32768), "en", concurrency=8)
    lines = [x for x in msg.splitlines() if x.startswith("- ")]
    assert lines[1] == ("- weights in fp8 + KV cache in fp8 (`--quantization fp8 --kv-cache-dtype fp8`): "
                        "13.4 requests of 32,768 tokens at once; meets your goal of 8 × 32,768 tokens")
    assert lines[-1].startswith("- lower max_model_len to 10,096 (`--max-model-len 10096`): 1.0 requests")
    assert lines[-1].endswith("misses your goal of 8 × 32,768 tokens")


@pytest.mark.parametrize("lang, none", [("en", "No single change fits"), ("zh", "单项调整都放不下")])
def test_nothing_fits_says_so(lang, none):
    # 405B in BF16 ≈ 810 GB; 8 × L4 = 176 GiB cannot hold even 4-bit weights (≈ 210 GB)
    msg = _message(LLAMA31_405B, L4, ServingConfig(max_model_len=8192), lang)
    assert none in msg and "\n- " not in msg


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_windowed_model_refusal_quotes_what_one_request_needs(lang):
    # gpt-oss-120b on one H100 at 131,072 tokens: 18 full layers hold every token, 18 sliding-window layers
    # (window 128) only their window + a step's tokens, so one request needs far less than 131,072 tokens at
    # every layer's bytes; the message quotes vLLM's figure (the start-up worst case), not the pool's
    # all-layer token count.
    arch, gpu = get_model("openai/gpt-oss-120b"), get_gpu("h100-sxm")
    serving = ServingConfig(max_model_len=131072)
    mem, advice = memory_for(arch, gpu, serving), what_would_fit(arch, gpu, serving)
    assert advice is not None and advice.kv_needed_bytes < 0.6 * float(mem.kv_bytes_per_token) * 131072
    msg = _message(arch, gpu, serving, lang)
    from ui import format as F
    assert F.both(advice.kv_needed_bytes) in msg and F.both(mem.kv_pool_bytes) in msg
    assert f"{int(mem.kv_pool_tokens):,}" not in msg
