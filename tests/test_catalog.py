"""calc.spec.catalog (model and GPU catalogs) and calc.spec.hf_config (reading any config.json).

GPU expectations are datasheet numbers (dense tensor-core peaks; physics.md section B)."""

import json

import pytest

from calc.spec.catalog import (CatalogError, get_gpu, get_model, gpu_ids, list_gpus, list_models, model_config_json,
                          model_ids)
from calc.spec.hf_config import (checkpoint_quantization, MAX_CONFIG_BYTES, SUPPORTED_MODEL_TYPES, ConfigError, arch_from_hf_config,
                            parse_config_text)
from calc.spec.units import GiB

GPU_IDS = ["a100-40gb", "a100-80gb", "a100-80gb-pcie", "h100-sxm", "h100-pcie", "h100-nvl", "h200", "gh200", "b200",
           "l40s", "l4", "a10g", "a10", "rtx-4090", "rtx-3090", "mi300x", "mi325x",
           # current parts (FP4 tensor cores on the Blackwell and CDNA4 ones)
           "b300", "gb200", "mi355x", "h20", "rtx-5090", "rtx-pro-6000"]
MODEL_IDS = ["deepseek-ai/DeepSeek-V3", "google/gemma-2-9b", "meta-llama/Llama-2-13b-hf", "meta-llama/Llama-2-70b-hf",
             "meta-llama/Llama-2-7b-hf", "meta-llama/Llama-3.1-405B", "meta-llama/Llama-3.1-70B",
             "meta-llama/Llama-3.1-8B", "mistralai/Mistral-7B-v0.1", "mistralai/Mixtral-8x7B-v0.1", "Qwen/Qwen2.5-72B",
             "Qwen/Qwen2.5-7B",
             # models people deploy now
             "meta-llama/Llama-3.3-70B-Instruct", "Qwen/Qwen3-8B", "Qwen/Qwen3-14B", "Qwen/Qwen3-32B",
             "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-235B-A22B", "google/gemma-3-27b-it", "microsoft/phi-4",
             "mistralai/Mistral-Small-24B-Instruct-2501", "deepseek-ai/DeepSeek-R1",
             "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
             "deepseek-ai/DeepSeek-V2-Lite-Chat", "Qwen/Qwen1.5-MoE-A2.7B",
             "Qwen/Qwen3-0.6B",  # a public open-loop vLLM 0.19 run (bench/data/vllm_found.jsonl)
             # current models with their quirks (tests/test_catalog_current.py)
             "openai/gpt-oss-20b", "openai/gpt-oss-120b", "meta-llama/Llama-4-Scout-17B-16E",
             "meta-llama/Llama-4-Maverick-17B-128E", "moonshotai/Kimi-K2-Instruct", "zai-org/GLM-4.5",
             "zai-org/GLM-4.5-Air", "deepseek-ai/DeepSeek-V3.1"]


class TestGpuCatalog:
    def test_all_23_ids(self):
        assert sorted(gpu_ids()) == sorted(GPU_IDS)

    @pytest.mark.parametrize("gpu_id", GPU_IDS)
    def test_every_entry_has_sources(self, gpu_id):
        g = get_gpu(gpu_id)
        assert g.sources and all(s.strip() for s in g.sources)

    @pytest.mark.parametrize("gpu_id, bf16, fp8", [
        ("h100-sxm", 989.4e12, 1978.9e12),   # datasheet 1,979 / 3,958 TFLOPS with sparsity, halved
        ("h200", 989.4e12, 1978.9e12),
        ("a100-80gb", 312e12, None),          # "312 | 624*": 624 is the 2:4-sparse figure
        ("a100-40gb", 312e12, None),
        ("mi300x", 1307.4e12, 2614.9e12),     # not 2,614.9 (AMD's sparse BF16)
        ("b200", 2250e12, 4500e12),
        ("l40s", 362.05e12, 733e12),
        ("l4", 121e12, 242.5e12),
    ])
    def test_dense_not_sparse(self, gpu_id, bf16, fp8):
        g = get_gpu(gpu_id)
        assert (g.bf16_flops_per_s, g.fp8_flops_per_s) == (bf16, fp8)

    @pytest.mark.parametrize("gpu_id", ["a100-40gb", "a100-80gb", "a100-80gb-pcie", "a10g", "a10", "rtx-3090"])
    def test_no_fp8_on_ampere(self, gpu_id):
        assert get_gpu(gpu_id).fp8_flops_per_s is None

    @pytest.mark.parametrize("gpu_id", ["h100-sxm", "h100-pcie", "h100-nvl", "h200", "gh200", "b200", "l40s", "l4",
                                        "rtx-4090", "mi300x", "mi325x", "b300", "gb200", "mi355x", "h20", "rtx-5090",
                                        "rtx-pro-6000"])
    def test_fp8_where_hardware_has_it(self, gpu_id):
        g = get_gpu(gpu_id)
        # FP8 is twice the 16-bit rate on every part that has it; a sparse figure would be 4x
        assert g.fp8_flops_per_s == pytest.approx(2 * g.bf16_flops_per_s, rel=0.02)

    def test_memory_units(self):
        h100 = get_gpu("h100-sxm")
        assert h100.memory_as_sold_bytes == 80e9
        assert round(h100.usable_memory_bytes / GiB, 2) == 79.19  # vLLM log "total 79.19 GiB"
        assert h100.hbm_bw_bytes_per_s == 3.35e12
        assert get_gpu("a100-80gb").hbm_bw_bytes_per_s == 2.039e12

    def test_usable_memory_is_plausible(self):
        for g in list_gpus():  # what CUDA reports is within 10 % of the label (GB or GiB)
            assert 0.9 * g.memory_as_sold_bytes < g.usable_memory_bytes < 1.1 * g.memory_as_sold_bytes, g.id

    def test_peak_falls_back_to_16_bit(self):
        assert get_gpu("a100-80gb").peak_flops_per_s("fp8") == 312e12

    def test_lookup_is_case_insensitive(self):
        assert get_gpu(" H100-SXM ").id == "h100-sxm"

    def test_unknown_gpu_lists_ids(self):
        with pytest.raises(CatalogError, match=r"unknown GPU 'h800'; catalog ids: a100-40gb, .*mi325x, .*rtx-pro-6000"):
            get_gpu("h800")


class TestModelCatalog:
    def test_ids(self):
        assert sorted(model_ids()) == sorted(MODEL_IDS)

    @pytest.mark.parametrize("name", ["meta-llama/Llama-2-7b-hf", "META-LLAMA/LLAMA-2-7B-HF", "Llama-2-7B",
                                      "llama-2-7b-hf", "  meta-llama/llama-2-7b-hf "])
    def test_lookup_spellings(self, name):
        assert get_model(name).id == "meta-llama/Llama-2-7b-hf"

    def test_every_model_has_a_source(self):
        for arch in list_models():
            assert arch.source and "user-supplied" not in arch.source
            assert model_config_json(arch.id)["_source"] == arch.source

    @pytest.mark.parametrize("model_id, kind", [
        ("meta-llama/Llama-2-7b-hf", "MHA"), ("meta-llama/Llama-2-70b-hf", "GQA"), ("meta-llama/Llama-3.1-8B", "GQA"),
        ("mistralai/Mixtral-8x7B-v0.1", "GQA"), ("deepseek-ai/DeepSeek-V3", "MLA"),
    ])
    def test_attention_kind(self, model_id, kind):
        assert get_model(model_id).attention_kind == kind

    def test_moe_fields(self):
        mixtral, dsv3 = get_model("mistralai/Mixtral-8x7B-v0.1").moe, get_model("deepseek-ai/DeepSeek-V3").moe
        assert (mixtral.num_experts, mixtral.experts_per_token) == (8, 2)
        assert (dsv3.num_experts, dsv3.experts_per_token, dsv3.first_dense_layers) == (256, 8, 3)

    def test_unknown_model_lists_ids_and_paths(self):
        with pytest.raises(CatalogError, match="unknown model 'gpt-5'; catalog ids: .*or give a path to a config.json"):
            get_model("gpt-5")


class TestConfigFiles:
    """Any user's config.json goes through the same parser as the catalog."""

    @pytest.mark.parametrize("model_id", MODEL_IDS)
    def test_catalog_file_loads_the_same_from_a_path(self, tmp_path, model_id):
        path = tmp_path / "config.json"
        path.write_text(json.dumps(model_config_json(model_id)))
        assert get_model(str(path)) == get_model(model_id)

    @pytest.mark.parametrize("model_id", MODEL_IDS)
    def test_plain_hf_file_gives_the_same_architecture(self, tmp_path, model_id):
        # a user's file has no _id/_name/_source keys: same architecture, different labels
        cfg = {k: v for k, v in model_config_json(model_id).items() if not k.startswith("_")}
        path = tmp_path / "config.json"
        path.write_text(json.dumps(cfg))
        user, catalog = get_model(str(path)), get_model(model_id)
        labels = {"id", "name", "source"}
        assert user.model_dump(exclude=labels) == catalog.model_dump(exclude=labels)
        assert user.id == "config" and user.source == "user-supplied config.json"

    def test_unreadable_path(self, tmp_path):
        with pytest.raises(CatalogError, match="cannot read model config file"):
            get_model(str(tmp_path / "missing.json"))

    def test_garbage_file(self, tmp_path):
        path = tmp_path / "garbage.json"
        path.write_bytes(b"\x00\x01 not json")
        with pytest.raises(ConfigError, match="not valid JSON"):
            get_model(str(path))

    def test_oversized_file(self, tmp_path):
        path = tmp_path / "big.json"
        path.write_text("{" + " " * (MAX_CONFIG_BYTES + 10) + "}")
        with pytest.raises(ConfigError, match="larger than 1,000,000 bytes"):
            get_model(str(path))


LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
         "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192}


def _parse(**changes):
    cfg = dict(LLAMA, **changes)
    return parse_config_text(json.dumps({k: v for k, v in cfg.items() if v is not ...}))


class TestParseConfigText:
    def test_valid(self):
        a = _parse()
        assert (a.head_dim, a.attention_kind, a.id) == (128, "GQA", "custom")

    def test_malformed_json(self):
        with pytest.raises(ConfigError, match="config.json is not valid JSON"):
            parse_config_text('{"model_type": "llama",')

    def test_json_array(self):
        with pytest.raises(ConfigError, match=r"must be a JSON object \(got a list\)"):
            parse_config_text("[1, 2, 3]")

    @pytest.mark.parametrize("text", ['"llama"', "null", "42", "true"])
    def test_other_non_objects(self, text):
        with pytest.raises(ConfigError, match="must be a JSON object"):
            parse_config_text(text)

    def test_missing_hidden_size(self):
        with pytest.raises(ConfigError, match="config.json hidden_size: required"):
            _parse(hidden_size=...)

    def test_string_where_an_int_belongs(self):
        with pytest.raises(ConfigError, match=r"config.json num_hidden_layers: got '32', allowed a positive integer"):
            _parse(num_hidden_layers="32")

    @pytest.mark.parametrize("value", [True, 32.0, [32], {"n": 32}])
    def test_other_non_ints(self, value):
        with pytest.raises(ConfigError, match="num_hidden_layers: got .*, allowed a positive integer"):
            _parse(num_hidden_layers=value)

    def test_negative_number(self):
        with pytest.raises(ConfigError, match=r"num_hidden_layers: Input should be greater than or equal to 1 "
                                              r"\(got -32\); allowed: 1 <= num_hidden_layers <= 10000"):
            _parse(num_hidden_layers=-32)

    def test_zero_heads(self):
        with pytest.raises(ConfigError, match="num_attention_heads: Input should be greater than or equal to 1"):
            _parse(num_attention_heads=0, num_key_value_heads=...)

    def test_huge_number(self):
        with pytest.raises(ConfigError, match=r"hidden_size: .* \(got 10000000000000000000000\); "
                                              r"allowed: 1 <= hidden_size <= 1000000"):
            _parse(hidden_size=10**22, head_dim=128)

    def test_integer_with_5000_digits(self):
        # The field is named, the number summarised (not Python's int-digit-limit message).
        with pytest.raises(ConfigError, match=r"hidden_size: got 99999999999999999999… \(5,000 digits\)"):
            parse_config_text('{"model_type": "llama", "hidden_size": ' + "9" * 5000 + "}")

    def test_infinite_float(self):
        with pytest.raises(ConfigError, match="hidden_size: got inf, allowed a positive integer"):
            parse_config_text('{"model_type": "llama", "hidden_size": 1e400}')

    def test_unknown_model_type_lists_supported(self):
        with pytest.raises(ConfigError, match="model_type: got 'gpt2', allowed one of the supported deepseek_v2, "
                                              "deepseek_v3, gemma, gemma2, gemma3, gemma3_text, glm4_moe, gpt_oss, kimi_k2, "
                                              "llama, llama4, llama4_text, mistral, mixtral, phi3, qwen2"):
            _parse(model_type="gpt2")

    @pytest.mark.parametrize("model_type", [..., None, ["llama"], {"t": "llama"}, 7])
    def test_missing_or_odd_model_type(self, model_type):
        with pytest.raises(ConfigError, match="model_type: got .*, allowed one of the supported"):
            _parse(model_type=model_type)

    def test_over_one_megabyte(self):
        text = json.dumps(dict(LLAMA, padding="x" * MAX_CONFIG_BYTES))
        with pytest.raises(ConfigError, match="larger than 1,000,000 bytes"):
            parse_config_text(text)

    def test_size_counts_bytes_not_characters(self):
        # 400,000 three-byte characters = 1.2 MB
        with pytest.raises(ConfigError, match="larger than"):
            parse_config_text(json.dumps(dict(LLAMA, note="\u4e2d" * 400_000), ensure_ascii=False))

    def test_deeply_nested(self):
        with pytest.raises(ConfigError, match="nested more than 32 levels deep"):
            parse_config_text("[" * 200_000 + "]" * 200_000)

    def test_invalid_utf8_bytes(self):
        with pytest.raises(ConfigError, match="not valid JSON"):
            parse_config_text(b'{"model_type": "\xff\xfe"}')

    def test_heads_not_multiple_of_kv_heads(self):
        with pytest.raises(ConfigError, match=r"num_attention_heads \(32\) must be a multiple of num_key_value_heads \(5\)"):
            _parse(num_key_value_heads=5)

    def test_hidden_not_multiple_of_heads_without_head_dim(self):
        with pytest.raises(ConfigError, match="hidden_size is not a multiple of num_attention_heads"):
            _parse(hidden_size=4100)

    def test_bool_field_must_be_bool(self):
        with pytest.raises(ConfigError, match="tie_word_embeddings: got 'false', allowed true or false"):
            _parse(tie_word_embeddings="false")

    def test_null_means_default(self):
        # "num_key_value_heads": null -> MHA; "head_dim": null -> hidden / heads
        a = _parse(num_key_value_heads=None, head_dim=None)
        assert (a.num_key_value_heads, a.head_dim, a.attention_kind) == (32, 128, "MHA")

    def test_long_values_are_shortened_in_messages(self):
        with pytest.raises(ConfigError) as info:
            _parse(hidden_size="9" * 10_000)
        assert len(str(info.value)) < 200

    def test_moe_top_k_above_experts(self):
        with pytest.raises(ConfigError, match=r"experts_per_token \(3\) must be <= num_experts \(2\)"):
            _parse(model_type="mixtral", num_local_experts=2, num_experts_per_tok=3)

    def test_moe_range_names_the_nested_field(self):
        with pytest.raises(ConfigError, match=r"moe.num_experts: .*allowed: 2 <= moe.num_experts <= 4096"):
            _parse(model_type="mixtral", num_local_experts=1, num_experts_per_tok=1)

    def test_errors_are_value_errors(self):
        assert issubclass(ConfigError, ValueError)


MINIMAL = {
    "llama": {},
    "mistral": {"sliding_window": 4096},
    "mixtral": {"num_local_experts": 8, "num_experts_per_tok": 2},
    "qwen2": {},
    "qwen3": {"head_dim": 128},
    "qwen2_moe": {"num_experts": 60, "num_experts_per_tok": 4, "moe_intermediate_size": 1408,
                  "shared_expert_intermediate_size": 5632},
    "qwen3_moe": {"num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768},
    "gemma": {},
    "gemma2": {"sliding_window": 4096, "head_dim": 256},
    "gemma3": {"text_config": {"hidden_size": 4096, "num_hidden_layers": 12, "num_attention_heads": 32,
                               "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336,
                               "sliding_window": 1024}},
    "gemma3_text": {"sliding_window": 1024, "head_dim": 128},
    "phi3": {},
    "deepseek_v2": {"kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                    "n_routed_experts": 64, "num_experts_per_tok": 6, "moe_intermediate_size": 1408,
                    "n_shared_experts": 2, "first_k_dense_replace": 1, "q_lora_rank": None},
    "deepseek_v3": {"kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                    "n_routed_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 2048,
                    "n_shared_experts": 1, "first_k_dense_replace": 3, "q_lora_rank": 1536},
    "kimi_k2": {"kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                "n_routed_experts": 384, "num_experts_per_tok": 8, "moe_intermediate_size": 2048,
                "n_shared_experts": 1, "first_k_dense_replace": 1, "q_lora_rank": 1536},
    "glm4_moe": {"head_dim": 128, "n_routed_experts": 160, "num_experts_per_tok": 8, "moe_intermediate_size": 1536,
                 "n_shared_experts": 1, "first_k_dense_replace": 3, "use_qk_norm": True},
    "gpt_oss": {"head_dim": 64, "num_local_experts": 32, "num_experts_per_tok": 4, "sliding_window": 128},
    "llama4": {"text_config": {"hidden_size": 5120, "num_hidden_layers": 48, "num_attention_heads": 40,
                               "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192,
                               "intermediate_size_mlp": 16384, "num_local_experts": 16, "num_experts_per_tok": 1,
                               "attention_chunk_size": 8192, "vocab_size": 202048}},
    "llama4_text": {"intermediate_size_mlp": 16384, "num_local_experts": 16, "num_experts_per_tok": 1,
                    "attention_chunk_size": 8192},
}


class TestArchFromHfConfig:
    def test_minimal_covers_every_supported_type(self):
        assert sorted(MINIMAL) == sorted(SUPPORTED_MODEL_TYPES)

    @pytest.mark.parametrize("model_type", sorted(MINIMAL))
    def test_every_supported_type_parses(self, model_type):
        arch = arch_from_hf_config(dict(LLAMA, model_type=model_type, **MINIMAL[model_type]))
        assert arch.model_type == model_type

    def test_type_specific_defaults(self):
        assert arch_from_hf_config(dict(LLAMA, model_type="qwen2")).qkv_bias is True
        assert arch_from_hf_config(dict(LLAMA, model_type="gemma")).tie_word_embeddings is True
        g2 = arch_from_hf_config(dict(LLAMA, model_type="gemma2", **MINIMAL["gemma2"]))
        assert (g2.norms_per_layer, g2.num_sliding_layers) == (4, 16)  # 32 layers: every other one slides
        mistral = arch_from_hf_config(dict(LLAMA, model_type="mistral", **MINIMAL["mistral"]))
        assert mistral.num_sliding_layers == 32

    def test_gemma3_nests_the_language_model_in_text_config(self):
        # The real google/gemma-3-27b-it config leaves vocab_size, max_position_embeddings and the 5:1
        # pattern to HF's Gemma3TextConfig defaults: 262,208 / 131,072 / layer i global when (i+1) % 6 == 0.
        a = get_model("google/gemma-3-27b-it")
        assert (a.model_type, a.vocab_size, a.max_position_embeddings) == ("gemma3", 262_208, 131_072)
        assert (a.num_hidden_layers, a.num_sliding_layers, a.sliding_window) == (62, 62 - 62 // 6, 1024)
        assert a.qk_norm and a.tie_word_embeddings and a.norms_per_layer == 4 and a.extra_params > 0
        with pytest.raises(ConfigError, match="text_config"):
            arch_from_hf_config({"model_type": "gemma3"})

    def test_layer_types_list_sets_the_sliding_layers(self):
        types = ["sliding_attention"] * 5 + ["full_attention"]
        a = arch_from_hf_config(dict(LLAMA, model_type="gemma3_text", num_hidden_layers=12, head_dim=128,
                                     sliding_window=512, layer_types=types * 2))
        assert (a.num_sliding_layers, a.sliding_window) == (10, 512)

    def test_sliding_window_off(self):
        # Mistral v0.2+ and Qwen2 configs carry "sliding_window": null or use_sliding_window false
        assert arch_from_hf_config(dict(LLAMA, model_type="mistral", sliding_window=None)).sliding_window is None
        off = dict(LLAMA, model_type="mistral", sliding_window=4096, use_sliding_window=False)
        assert arch_from_hf_config(off).num_sliding_layers == 0

    def test_deepseek_without_query_low_rank(self):
        arch = arch_from_hf_config(dict(LLAMA, model_type="deepseek_v2", **MINIMAL["deepseek_v2"]))
        assert arch.mla.q_lora_rank == 0 and arch.attention_kind == "MLA"


class TestCheckpointQuantization:
    def test_methods(self):
        assert checkpoint_quantization({"quantization_config": {"quant_method": "awq", "bits": 4}}) == "awq"
        assert checkpoint_quantization({"quantization_config": {"quant_method": "gptq"}}) == "gptq"
        # compressed-tensors: the weights of the config groups decide (RedHat FP8-dynamic / W4A16 checkpoints)
        ct = lambda bits, kind: {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {  # noqa: E731
            "group_0": {"targets": ["Linear"], "weights": {"num_bits": bits, "type": kind}}}}}
        assert checkpoint_quantization(ct(8, "float")) == "fp8"
        assert checkpoint_quantization(ct(8, "int")) == "int8"
        assert checkpoint_quantization(ct(4, "int")) == "gptq"
        assert checkpoint_quantization(ct(2, "int")) is None
        assert checkpoint_quantization({"quantization_config": {"quant_method": "bitsandbytes"}}) in ("nf4", "bitsandbytes")
        assert checkpoint_quantization({"quantization_config": "fp8"}) is None

    def test_mixed_checkpoint_lists_unquantized_layers(self):
        cfg = dict(LLAMA, quantization_config={"quant_method": "fp8", "ignored_layers": [
            "lm_head", "model.layers.0.self_attn.qkv_proj", "model.layers.0.mlp.gate_up_proj", "model.layers.31.mlp",
            "re:.*mlp.gate$"]})
        a = arch_from_hf_config(cfg)
        assert a.checkpoint_quantization == "fp8"
        assert (a.unquantized_attention_layers, a.unquantized_mlp_layers) == ((0,), (0, 31))
