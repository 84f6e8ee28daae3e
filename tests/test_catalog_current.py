"""The current models and GPUs of the catalog (issue "Big models on many GPUs", items 4 and 5): FP4
formats, the six current GPUs, the eight current models and their quirks.

Expected values are the model cards' / datasheets' figures or arithmetic written out here, never
computed with the code under test."""

import json

import pytest

from calc.spec.catalog import get_gpu, get_model, resolve_variant
from calc.spec.inputs import ServingConfig
from calc.spec.params import param_counts
from calc.spec.precision import (QUANT_BITS_PER_WEIGHT, compute_precision, kv_bytes_per_element,
                                 linear_weight_bytes_per_param, mxfp4_expert_padding)
from calc.spec.untrusted import InputError
from calc.sizing.scenario import check_gpu_formats, memory_for, model_numbers, mxfp4_backend
from calc.timing.estimate import engine_numbers, estimate
from tests.conftest import ROOT

GiB = 2**30

# Model-card totals (billions): total, active as the card counts it, and what the card leaves out of
# "active" (the input embedding: gpt-oss, Llama 4, Kimi-K2; embedding and output layer: GLM).
CARDS = {
    "openai/gpt-oss-120b": (116.83, 5.13, "embedding"),       # arXiv:2508.10925 Table 1
    "openai/gpt-oss-20b": (20.91, 3.61, "embedding"),
    "meta-llama/Llama-4-Scout-17B-16E": (109, 17, "embedding"),     # model card
    "meta-llama/Llama-4-Maverick-17B-128E": (400, 17, "embedding"),
    "moonshotai/Kimi-K2-Instruct": (1030, 32, "embedding"),   # HF safetensors 1.03T (card: "1T")
    "zai-org/GLM-4.5": (355, 32, "both"),                     # arXiv:2508.06471
    "zai-org/GLM-4.5-Air": (106, 12, "both"),
    "deepseek-ai/DeepSeek-V3.1": (671, 37, "none"),           # as DeepSeek-V3 (README, MTP excluded)
}


class TestParameterTotals:
    @pytest.mark.parametrize("model_id", sorted(CARDS))
    def test_within_two_percent_of_the_card(self, model_id):
        total_b, active_b, left_out = CARDS[model_id]
        p = param_counts(get_model(model_id))
        active = p.active - {"embedding": p.embedding, "both": p.embedding + p.lm_head, "none": 0}[left_out]
        assert p.total / 1e9 == pytest.approx(total_b, rel=0.02)
        assert active / 1e9 == pytest.approx(active_b, rel=0.02)

    def test_gpt_oss_120b_by_hand(self):
        # h 2880, 36 layers, 64 query heads / 8 KV heads of 64, 128 experts of 2880, top-4, vocab 201,088.
        # attention: q 2880*4096 + 4096 bias; k, v 2*(2880*512 + 512); o 4096*2880 + 2880 bias; 64 sinks
        attn = 2880 * 4096 + 4096 + 2 * (2880 * 512 + 512) + 4096 * 2880 + 2880 + 64
        assert attn == 26_550_144
        # one expert: gate/up/down 3*2880*2880 + biases 2*2880 + 2880 = 24,891,840; router 2880*128 + 128
        expert = 3 * 2880 * 2880 + 2 * 2880 + 2880
        layer = attn + 128 * expert + 2880 * 128 + 128 + 2 * 2880
        total = 36 * layer + 2 * 201_088 * 2880 + 2880
        assert total == 116_829_156_672           # the card's 116.83B
        p = param_counts(get_model("openai/gpt-oss-120b"))
        assert (p.attention_per_layer, p.total) == (attn, total)
        # active without the embedding: 36 * (attn + 4 experts + router + norms) + LM head + final norm
        active = 36 * (attn + 4 * expert + 2880 * 128 + 128 + 2 * 2880) + 201_088 * 2880 + 2880
        assert p.active - p.embedding == active == 5_132_849_472   # the card's 5.13B

    def test_maverick_interleaves_moe_and_dense_layers(self):
        # 24 MoE layers (128 experts + 1 shared of 3*5120*8192 = 125,829,120; router 5120*128) and
        # 24 dense layers of 3*5120*16384 = 251,658,240
        a = get_model("meta-llama/Llama-4-Maverick-17B-128E")
        p = param_counts(a)
        assert a.moe.num_moe_layers(a.num_hidden_layers) == 24
        assert p.dense_mlp == 24 * 251_658_240
        assert p.experts == 24 * 128 * 125_829_120
        assert p.shared_experts_and_router == 24 * (125_829_120 + 5120 * 128)

    def test_scout_counts_its_vision_encoder(self):
        # 34 layers * (4*(1408^2 + 1408) + 2*1408*5632 + 5632 + 1408 + 4*1408) = 34 * 23,815,040;
        # patch 3*14*14*1408, class 1408, positions (24^2 + 1)*1408, pre/post LayerNorm 4*1408;
        # adapter 5632*4096 + 4096^2; projector 4096*5120
        per_layer = 4 * (1408 ** 2 + 1408) + 2 * 1408 * 5632 + 5632 + 1408 + 4 * 1408
        embed = 3 * 14 * 14 * 1408 + 1408 + 577 * 1408 + 4 * 1408
        expected = 34 * per_layer + embed + 5632 * 4096 + 4096 * 4096 + 4096 * 5120
        assert param_counts(get_model("meta-llama/Llama-4-Scout-17B-16E")).extra == expected


class TestQuirks:
    def test_gpt_oss_alternating_sliding_window(self):
        a = get_model("openai/gpt-oss-120b")
        assert (a.sliding_window, a.num_sliding_layers, a.local_attention) == (128, 18, "sliding")
        assert a.attention_sinks and a.o_bias and a.moe.expert_bias and a.moe.router_bias
        # KV per token: 18 full + 18 sliding layers * 2 * 8 heads * 64 * 2 B = 36,864 B each
        n = model_numbers(a)
        assert n.kv_bytes_per_token_per_head_full * 8 == 36_864
        assert n.kv_bytes_per_token_per_head_sliding * 8 == 36_864

    def test_gpt_oss_sliding_layers_hold_their_window(self):
        # at 32,768 tokens a running sequence holds all 32,768 tokens in the full layers and
        # blocks(128) + 1 = 9 blocks = 144 tokens in the sliding ones (block 16):
        # 32,768 * 36,864 + 144 * 36,864 B
        r = memory_for(get_model("openai/gpt-oss-20b"), get_gpu("h100-sxm"), ServingConfig(max_model_len=32768))
        assert float(r.kv_bytes_per_request) == (32_768 + 144) * 24 * 2 * 8 * 64 * 2 / 2

    def test_llama4_chunked_local_attention(self):
        for model_id in ("meta-llama/Llama-4-Scout-17B-16E", "meta-llama/Llama-4-Maverick-17B-128E"):
            a = get_model(model_id)
            # RoPE layers (3 of 4) attend within 8192-token chunks; every 4th layer is global
            assert (a.sliding_window, a.num_sliding_layers, a.local_attention) == (8192, 36, "chunked")
            assert (a.moe.num_shared_experts, a.moe.experts_per_token) == (1, 1)

    def test_kimi_k2_is_deepseek_v3_with_384_experts(self):
        a = get_model("moonshotai/Kimi-K2-Instruct")
        assert a.attention_kind == "MLA" and a.num_attention_heads == 64
        assert (a.moe.num_experts, a.moe.experts_per_token, a.moe.num_shared_experts, a.moe.first_dense_layers) == (384, 8, 1, 1)
        # MLA cache: 61 layers * (512 + 64) * 2 B = 70,272 B per token, as DeepSeek-V3
        assert model_numbers(a, kv_cache_dtype="auto").kv_bytes_per_token_per_head_full == 70_272

    def test_glm45_dense_first_layers_and_qk_norm(self):
        a = get_model("zai-org/GLM-4.5")
        assert (a.moe.num_experts, a.moe.first_dense_layers, a.qk_norm, a.qkv_bias) == (160, 3, True, True)
        air = get_model("zai-org/GLM-4.5-Air")
        assert (air.moe.num_experts, air.moe.first_dense_layers, air.qk_norm) == (128, 1, False)

    def test_deepseek_v31_is_v3(self):
        assert param_counts(get_model("deepseek-ai/DeepSeek-V3.1")) == param_counts(get_model("deepseek-ai/DeepSeek-V3"))

    @pytest.mark.parametrize("name, model_id", [
        ("openai/gpt-oss-120b", "openai/gpt-oss-120b"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Scout-17B-16E"),
        ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E"),
        ("moonshotai/Kimi-K2-Instruct-0905", "moonshotai/Kimi-K2-Instruct"),
        ("moonshotai/Kimi-K2-Base", "moonshotai/Kimi-K2-Instruct"),
        ("zai-org/GLM-4.5-Air-Base", "zai-org/GLM-4.5-Air"),
        ("deepseek-ai/DeepSeek-V3.1-Base", "deepseek-ai/DeepSeek-V3.1"),
    ])
    def test_pasted_names_resolve(self, name, model_id):
        assert resolve_variant(name).id == model_id
        assert get_model(name).id == model_id


class TestFp4Formats:
    def test_bits_per_weight(self):
        # MXFP4: 4 + 8/32 (one E8M0 scale per 32) = 4.25; NVFP4: 4 + 8/16 (one E4M3 per 16) = 4.5
        assert QUANT_BITS_PER_WEIGHT["mxfp4"] == 4.25 and QUANT_BITS_PER_WEIGHT["modelopt_fp4"] == 4.5
        assert linear_weight_bytes_per_param(dtype="bfloat16", quantization="nvfp4") == 0.5625  # old spelling

    def test_nvfp4_kv(self):
        # per head D/2 bytes of E2M1 + D/16 bytes of E4M3 scales: (64 + 8) / 128 = 0.5625 B per element
        assert kv_bytes_per_element(kv_cache_dtype="nvfp4", dtype="bfloat16") == (64 + 8) / 128

    def test_gpt_oss_weights_against_the_card_checkpoint_size(self):
        # gpt-oss card: checkpoint 12.8 GiB (20b) and 60.8 GiB (120b): MXFP4 experts (4.25 bits) + the rest in BF16
        for model_id, card_gib in (("openai/gpt-oss-20b", 12.8), ("openai/gpt-oss-120b", 60.8)):
            p = param_counts(get_model(model_id))
            checkpoint = p.experts * 4.25 / 8 + (p.total - p.experts) * 2
            assert checkpoint / GiB == pytest.approx(card_gib, rel=0.005)

    @pytest.mark.parametrize("row_id", ["w01", "w02"])
    def test_gpt_oss_120b_loaded_weights_match_vllm_logs(self, row_id):
        # bench/data/vllm_weight_logs_current_models.jsonl: "Model loading took 64.38 GiB" (Triton),
        # "65.9651 GiB" (Marlin); vLLM pads the experts' hidden 2880 -> 3072 (and width 2880 -> 2944 in Marlin)
        rows = {json.loads(line)["id"]: json.loads(line) for line in
                (ROOT / "bench" / "data" / "vllm_weight_logs_current_models.jsonl").read_text().splitlines()}
        row = rows[row_id]
        n = model_numbers(get_model(row["calc_model"]), mxfp4_backend=row["mxfp4_backend"])
        assert n.weights_total_bytes / GiB == pytest.approx(row["logged"]["weights_gib"], rel=0.01)

    def test_padding(self):
        # Triton: 3072*2880 / 2880^2 = 16/15; Marlin: 3072*2944 / 2880^2; FlashInfer: (3072/2880)^2
        assert mxfp4_expert_padding(hidden_size=2880, intermediate_size=2880, backend="triton") == pytest.approx(16 / 15)
        assert mxfp4_expert_padding(hidden_size=2880, intermediate_size=2880, backend="marlin") == pytest.approx(
            3072 * 2944 / 2880**2)
        assert mxfp4_expert_padding(hidden_size=4096, intermediate_size=2048, backend="flashinfer") == 1.0

    def test_mxfp4_quantizes_only_the_experts(self):
        # everything but the routed experts stays BF16 (vLLM's Mxfp4Config: UnquantizedLinearMethod)
        a = get_model("openai/gpt-oss-20b")
        p = param_counts(a)
        n = model_numbers(a, mxfp4_backend="flashinfer")   # FlashInfer: gpt-oss-20b padded (3072/2880)^2
        pad = (3072 / 2880) ** 2
        assert n.weights_total_bytes == pytest.approx(p.experts * pad * 4.25 / 8 + (p.total - p.experts) * 2)

    def test_backends(self):
        assert [mxfp4_backend(get_gpu(g)) for g in ("h100-sxm", "h20", "b300", "gb200", "mi355x", "rtx-pro-6000")] == [
            "triton", "triton", "flashinfer", "flashinfer", "rocm", "marlin"]

    def test_compute_rates(self):
        def rate(gpu_id, quantization):
            g = get_gpu(gpu_id)
            prec = compute_precision(dtype="bfloat16", quantization=quantization, gpu_has_fp8=g.fp8_flops_per_s is not None,
                                     gpu_has_int8=g.int8_ops_per_s is not None, gpu_has_fp4=g.fp4_flops_per_s is not None)
            return prec, g.peak_flops_per_s(prec)
        assert rate("b200", "modelopt_fp4") == ("fp4", 9000e12)       # NVFP4 W4A4 on FP4 tensor cores
        assert rate("h100-sxm", "modelopt_fp4") == ("bf16", 989.4e12)   # Marlin W4A16 on Hopper
        assert rate("b200", "mxfp4") == ("bf16", 2250e12)             # gpt-oss: BF16 x MXFP4 (weight-only)
        assert engine_numbers(get_model("openai/gpt-oss-20b"), get_gpu("b300")).peak_flops_per_s == 2250e12

    @pytest.mark.parametrize("gpu_id, ok", [("b200", True), ("b300", True), ("gb200", True), ("h100-sxm", False),
                                            ("rtx-5090", False), ("rtx-pro-6000", False), ("mi355x", False)])
    def test_nvfp4_kv_only_on_sm100(self, gpu_id, ok):
        serving = ServingConfig(kv_cache_dtype="nvfp4")
        if ok:
            check_gpu_formats(serving, get_gpu(gpu_id))
        else:
            with pytest.raises(InputError, match="kv_cache_dtype: got 'nvfp4'.*vLLM has no 'nvfp4' kernels on"):
                check_gpu_formats(serving, get_gpu(gpu_id))

    def test_nvfp4_weights_refused_on_rocm_by_estimate(self):
        with pytest.raises(InputError, match="quantization: got 'modelopt_fp4'"):
            estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("mi355x"), ServingConfig(quantization="modelopt_fp4"))


class TestCurrentGpus:
    @pytest.mark.parametrize("gpu_id, bf16, fp8, fp4", [
        ("b300", 2250e12, 4500e12, 13125e12),   # glennklockwood HGX B300 table (dense)
        ("gb200", 2500e12, 5000e12, 10000e12),  # hardware.csv GB200 row: 5,000 / 10,000 / 20,000 sparse halved
        ("mi355x", 2516.6e12, 5033.2e12, 10066.3e12),  # 256 CUs * 8,192 FP8 FLOPs/clk * 2.4 GHz; FP4 20.1 PF sparse / 2
        ("h20", 148e12, 296e12, None),
        ("rtx-5090", 209.6e12, 419.2e12, 1676e12),  # 838.4 / 4 (FP32 accumulate, dense); FP4 3,352 sparse / 2
        ("rtx-pro-6000", 500e12, 1000e12, 2000e12),  # 4,000 AI TOPS (FP4 sparse) / 2, / 4, / 8
        ("b200", 2250e12, 4500e12, 9000e12),
    ])
    def test_dense_peaks(self, gpu_id, bf16, fp8, fp4):
        g = get_gpu(gpu_id)
        assert (g.bf16_flops_per_s, g.fp8_flops_per_s, g.fp4_flops_per_s) == (bf16, fp8, fp4)

    @pytest.mark.parametrize("gpu_id, memory_gb, tb_per_s", [
        ("b300", 288, 8.0), ("gb200", 186, 8.0), ("mi355x", 288, 8.0), ("h20", 96, 4.0), ("rtx-5090", 32, 1.792),
        ("rtx-pro-6000", 96, 1.792)])
    def test_memory(self, gpu_id, memory_gb, tb_per_s):
        g = get_gpu(gpu_id)
        assert (g.memory_as_sold_bytes, g.hbm_bw_bytes_per_s) == (memory_gb * 1e9, tb_per_s * 1e12)
        assert g.sources and g.notes

    def test_no_fp4_before_blackwell(self):
        for gpu_id in ("a100-80gb", "h100-sxm", "h200", "h20", "l40s", "rtx-4090", "mi300x", "mi325x"):
            assert get_gpu(gpu_id).fp4_flops_per_s is None


@pytest.mark.parametrize("model_id", sorted(CARDS))
def test_every_current_model_runs_on_eight_b300(model_id):
    # the whole estimate (memory stack + closed loop) on 8 x B300 (2.3 TB): fits, finite, positive
    r = estimate(get_model(model_id), get_gpu("b300"),
                 ServingConfig(tensor_parallel_size=8, max_model_len=16384, input_len=1024, output_len=256, concurrency=8))
    assert bool(r.memory.fits)
    assert 0 < float(r.serving.ttft_s) < 10 and 0 < float(r.serving.tpot_s) < 1


def test_mxfp4_step_reads_16_bit_attention_and_4_bit_experts():
    # gpt-oss on an H100: attention, router, embeddings in BF16 (2 B); experts 4.25 bits × 16/15 (Triton padding)
    e = engine_numbers(get_model("openai/gpt-oss-20b"), get_gpu("h100-sxm"))
    assert e.linear_bytes_per_param == 2.0
    assert e.expert_bytes_per_param == pytest.approx(4.25 / 8 * 16 / 15)


def test_llama4_chunked_layers_hold_the_current_chunk():
    # Scout on one B300 at 20,000 tokens: 12 global layers hold 20,000 tokens, the 36 chunked layers only the
    # current 8,192-token chunk: 20,000 − ⌊19,999 / 8,192⌋·8,192 = 3,616 tokens; 2·8·128·2 B = 4,096 B per token per layer
    r = memory_for(get_model("meta-llama/Llama-4-Scout-17B-16E"), get_gpu("b300"), ServingConfig(max_model_len=32768),
                   context_tokens=20_000)
    assert float(r.kv_bytes_per_request) == (20_000 * 12 + 3_616 * 36) * 4_096
    # vLLM's start-up figure (ChunkedLocalAttentionSpec): min(8,192 + T, S) tokens, T = 8,192 on a B300 (its
    # default budget): 16,384 tokens in the chunked layers
    assert float(r.kv_bytes_per_request_startup) == (20_000 * 12 + 16_384 * 36) * 4_096
