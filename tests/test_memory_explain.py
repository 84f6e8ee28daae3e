"""The memory page's "why this number" panels show vLLM's profile-run terms with the values plugged in
(EN and ZH): forward pass vs sampler warm-up, MoE workspaces, the NVSwitch buffers, the running KV of
a sliding-window sequence, checkpoint quantization and replicated tensors."""

import pytest

from calc.sizing.scenario import memory_for, model_numbers, resolve_serving
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from ui.i18n import Translator
from ui.memory import explain

EN, ZH = Translator("en"), Translator("zh")


def panels(model, gpu, t=EN, context=None, **serving):
    arch, g, s = get_model(model), get_gpu(gpu), ServingConfig(**serving)
    rs = resolve_serving(arch, g, s)
    ctx = context or rs.max_model_len
    r = memory_for(arch, g, s, Efficiency(), concurrency=1, context_tokens=ctx)
    n = model_numbers(arch, dtype=s.dtype, quantization=s.quantization, kv_cache_dtype=s.kv_cache_dtype)
    i = explain.Inputs(arch=arch, serving=s, resolved=rs, efficiency=Efficiency(), numbers=n, result=r, context_tokens=ctx)
    return {p.key: p for p in explain.memory_panels(i, t)}


def test_sampler_terms_plugged_in():
    # Llama-3.1-8B on H100 (1024 sequences, 128,256 vocabulary, 14 B per logit, 132 SMs): vLLM 0.19 logged 1.89 GiB
    p = panels("meta-llama/Llama-3.1-8B", "h100-sxm", max_model_len=8192)["activations"]
    assert r"S = 1{,}024 \cdot 128{,}256 \cdot 14\,\text{B} + 132 \cdot 128{,}256 \cdot 4\,\text{B} = 1.78\,\text{GiB}" in p.plugged
    assert p.title == "Activation peak = 1.89 GiB (2.03 GB)"
    assert any("sampler warm-up sets the peak" in note for note in p.notes)
    assert "\\max" in p.formula and "b_{logit}" in p.formula


def test_forward_pass_wins_with_a_small_vocabulary_on_a100():
    p = panels("meta-llama/Llama-2-7b-hf", "a100-80gb", dtype="float16")["activations"]
    assert any("forward pass sets the peak" in note for note in p.notes)


def test_moe_workspaces_and_nvswitch_buffers():
    # Mixtral TP 2 on H100: workspaces 8192 * 2 * (7168 + 14336) * 2 B = 672 MiB; non-torch 0.25 + 1.79 + 0.03
    ps = panels("mistralai/Mixtral-8x7B-v0.1", "h100-sxm", tensor_parallel_size=2, max_model_len=8192)
    assert any("672 MiB" in note and "2 experts" in note for note in ps["activations"].notes)
    assert r"W_{MoE} = 672\,\text{MiB}" in ps["activations"].plugged
    assert ps["overhead"].plugged.endswith(r"= 2.07\,\text{GiB}")
    assert r"O = 256\,\text{MiB} + 1.79\,\text{GiB} + 1 \cdot 30.72\,\text{MiB}" in ps["overhead"].plugged
    assert "NVSwitch system" in ps["overhead"].notes[0]
    pcie = panels("mistralai/Mixtral-8x7B-v0.1", "h100-pcie", tensor_parallel_size=2, max_model_len=8192)
    assert pcie["overhead"].plugged.endswith(r"= 286.72\,\text{MiB}") and "No NVSwitch" in pcie["overhead"].notes[0]


def test_sliding_window_running_sequence_note():
    # Mistral-7B, 16,500 tokens: a running sequence holds 257 blocks * 16 * 128 KiB = 514 MiB; start-up 1.50 GiB
    p = panels("mistralai/Mistral-7B-v0.1", "h100-sxm", input_len=16_000, output_len=500, context=16_500)["kv_request"]
    assert any("514 MiB" in n and "1.50 GiB" in n for n in p.notes)


def test_checkpoint_quantization_and_replicated_tensors():
    p = panels("deepseek-ai/DeepSeek-V3", "h200", tensor_parallel_size=8, max_model_len=8192)["weights"]
    assert any("FP8" in n and "quantization_config" in n for n in p.notes)
    # routers 58 * (256*7168 + 256) = 106,445,312; q_a 61 * 7168 * 1536 = 671,612,928
    assert any("106,445,312" in n and "671,612,928" in n for n in p.notes)
    assert p.title.startswith("Weights per GPU = 79.51 GiB")  # test_memory: 79.27 + 0.24 GiB of W_UK/W_UV copies


def test_no_chunked_prefill_note():
    p = panels("meta-llama/Llama-3.1-8B", "h100-sxm", enable_chunked_prefill=False)["activations"]
    assert any("131,072" in n for n in p.notes)


@pytest.mark.parametrize("model, gpu, kw", [
    ("mistralai/Mixtral-8x7B-v0.1", "h100-sxm", dict(tensor_parallel_size=2, max_model_len=8192)),
    ("mistralai/Mistral-7B-v0.1", "l40s", dict(tensor_parallel_size=2, max_model_len=8192)),
    ("deepseek-ai/DeepSeek-V3", "h200", dict(tensor_parallel_size=8, max_model_len=8192, enable_chunked_prefill=False)),
])
def test_chinese_panels_have_no_english_fallbacks(model, gpu, kw):
    ps = panels(model, gpu, ZH, **kw)
    for p in ps.values():
        for text in (p.title, p.takeaway, *p.notes):
            assert "why." not in text, text  # a missing key would show its id
    assert "采样" in " ".join(ps["activations"].notes)


def test_max_concurrency_when_vllm_refuses_to_start_pool_too_small():
    # Llama-3.1-70B bf16 on 2 × H100: 631 blocks × 16 tokens = 10,096 tokens of KV (160 KiB each: 1.54 GiB),
    # one max_model_len request needs 131,072 × 160 KiB = 20 GiB; 10,096 / 131,072 = 0.077 < 1: no start.
    kw = dict(context=2048, tensor_parallel_size=2, dtype="bfloat16")
    p = panels("meta-llama/Llama-3.1-70B", "h100-sxm", **kw)["max_conc"]
    assert p.title == "Max concurrency: none, vLLM refuses to start"
    assert (r"\frac{631 \cdot 16 \cdot 160\,\text{KiB}}{\text{KV}(131{,}072)} = \frac{1.54\,\text{GiB}}{20\,\text{GiB}}"
            r" = 0.08 < 1 \;\Rightarrow\; C_{\max} = 0") == p.plugged
    assert "serves no request" in p.takeaway and "at most 10,096" in p.takeaway
    assert "= 4" not in p.title and "would hold about 4 requests of 2,048 tokens" in p.notes[0]  # only as a "once it starts"
    z = panels("meta-llama/Llama-3.1-70B", "h100-sxm", t=ZH, **kw)["max_conc"]
    assert z.title == "最大并发数：无，vLLM 拒绝启动" and "不服务任何请求" in z.takeaway


def test_max_concurrency_when_the_weights_take_the_budget():
    # Llama-2-70B FP16 on one A100 80GB: 128.48 GiB of weights > 0.9 × 79.15 GiB: the pool is negative.
    p = panels("meta-llama/Llama-2-70b-hf", "a100-80gb", context=2048, dtype="float16")["max_conc"]
    assert p.title == "Max concurrency: none, vLLM refuses to start"
    assert r"\le 0 \;\Rightarrow\; N_{\text{blocks}} = 0 \;\Rightarrow\; C_{\max} = 0" in p.plugged
    assert "nothing is left for KV blocks" in p.takeaway and not p.notes
    assert panels("meta-llama/Llama-2-70b-hf", "a100-80gb", t=ZH, context=2048, dtype="float16")["max_conc"].takeaway \
        .startswith("权重、激活峰值和运行时开销占满了显存预算")


def test_max_concurrency_when_it_starts_is_the_number():
    p = panels("meta-llama/Llama-2-7b-hf", "a100-80gb", context=2048, dtype="float16")["max_conc"]
    assert p.title.startswith("Max concurrency = ") and "C_{\\max}" in p.plugged
