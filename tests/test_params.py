"""calc.spec.params: parameter counts (physics.md A1). Expected values are arithmetic written out here
or the published totals of the A1 table / model cards, never computed with the code under test."""

import numpy as np
import pytest

from calc.spec.catalog import get_model, model_ids
from calc.spec.params import (attention_params_per_layer, gated_mlp_params, mla_attention_params_per_layer,
                         moe_ffn_params, param_counts)


class TestAttentionParamsPerLayer:
    def test_llama31_8b_gqa(self):
        # W_q + W_o = 2 * 4096 * 32 * 128 = 33,554,432; W_k + W_v = 2 * 4096 * 8 * 128 = 8,388,608
        assert attention_params_per_layer(hidden_size=4096, num_heads=32, num_kv_heads=8, head_dim=128) == 41_943_040

    def test_llama2_7b_mha_is_4h2(self):
        # MHA: 4 * h^2 = 4 * 4096^2 = 67,108,864
        assert attention_params_per_layer(hidden_size=4096, num_heads=32, num_kv_heads=32, head_dim=128) == 67_108_864

    def test_qwen25_7b_qkv_bias(self):
        # 2 * 3584 * 28 * 128 = 25,690,112; 2 * 3584 * 4 * 128 = 3,670,016; bias (28 + 2*4) * 128 = 4,608
        got = attention_params_per_layer(hidden_size=3584, num_heads=28, num_kv_heads=4, head_dim=128, qkv_bias=True)
        assert got == 25_690_112 + 3_670_016 + 4_608 == 29_364_736

    def test_broadcasts_over_kv_heads(self):
        # MQA / GQA-8 / MHA at h = 4096: 33,554,432 + 2 * 4096 * 128 * {1, 8, 32}
        got = attention_params_per_layer(hidden_size=4096, num_heads=32, num_kv_heads=np.array([1, 8, 32]), head_dim=128)
        assert got.tolist() == [33_554_432 + 1_048_576, 33_554_432 + 8_388_608, 33_554_432 + 33_554_432]

    def test_returns_python_int_for_scalars(self):
        assert isinstance(attention_params_per_layer(hidden_size=8, num_heads=2, num_kv_heads=1, head_dim=4), int)


class TestMlaAttentionParamsPerLayer:
    def test_deepseek_v3(self):
        # q_a 7168*1536 = 11,010,048; q_b 1536*128*(128+64) = 37,748,736; q norm 1,536
        # kv_a 7168*(512+64) = 4,128,768; kv_b 512*128*(128+128) = 16,777,216; kv norm 512
        # o 128*128*7168 = 117,440,512                      (physics.md A1: 187,107,328)
        expected = 11_010_048 + 37_748_736 + 1_536 + 4_128_768 + 16_777_216 + 512 + 117_440_512
        assert expected == 187_107_328
        assert mla_attention_params_per_layer(hidden_size=7168, num_heads=128, q_lora_rank=1536, kv_lora_rank=512,
                                              qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128) == expected

    def test_without_query_low_rank(self):
        # DeepSeek-V2-Lite style (q_lora_rank 0): q = h*H*(d_nope+d_rope) = 2048*16*192 = 6,291,456
        # kv_a 2048*(512+64) = 1,179,648; kv_b 512*16*(128+128) = 2,097,152; norm 512; o 16*128*2048 = 4,194,304
        got = mla_attention_params_per_layer(hidden_size=2048, num_heads=16, q_lora_rank=0, kv_lora_rank=512,
                                             qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)
        assert got == 6_291_456 + 1_179_648 + 2_097_152 + 512 + 4_194_304


class TestGatedMlpParams:
    def test_llama2_7b(self):
        # 3 * 4096 * 11008 = 135,266,304 (gate, up, down)
        assert gated_mlp_params(hidden_size=4096, intermediate_size=11008) == 135_266_304

    def test_broadcast(self):
        # 3 * 4096 * {11008, 14336} = {135,266,304, 176,160,768}
        got = gated_mlp_params(hidden_size=4096, intermediate_size=np.array([11008, 14336]))
        assert got.tolist() == [135_266_304, 176_160_768]


class TestMoeFfnParams:
    def test_mixtral_layer(self):
        # 8 experts * 3 * 4096 * 14336 = 1,409,286,144; router 4096 * 8 = 32,768
        assert moe_ffn_params(hidden_size=4096, num_experts=8, expert_intermediate_size=14336) == 1_409_318_912

    def test_deepseek_v3_layer(self):
        # 256 * 3 * 7168 * 2048 = 11,274,289,152; shared 3 * 7168 * 2048 = 44,040,192;
        # router 7168 * 256 = 1,835,008; router bias 256
        got = moe_ffn_params(hidden_size=7168, num_experts=256, expert_intermediate_size=2048,
                             shared_intermediate_size=2048, router_bias=True)
        assert got == 11_274_289_152 + 44_040_192 + 1_835_008 + 256


# Exact totals from the physics.md A1 table (computed there from the configs with Python) and the
# figures the model cards / announcements publish, in billions (total, active). Cards round: "70B"
# is 68.98B for Llama-2-70B and "7B" is 6.74B for Llama-2-7B (3.7 %), so the published check allows 4 %.
A1_TABLE = {
    # id: (exact total, exact active, published total B, published active B)
    "meta-llama/Llama-2-7b-hf": (6_738_415_616, 6_738_415_616, 7, 7),
    "meta-llama/Llama-2-13b-hf": (13_015_864_320, 13_015_864_320, 13, 13),
    "meta-llama/Llama-2-70b-hf": (68_976_648_192, 68_976_648_192, 70, 70),
    "meta-llama/Llama-3.1-8B": (8_030_261_248, 8_030_261_248, 8, 8),
    "meta-llama/Llama-3.1-70B": (70_553_706_496, 70_553_706_496, 70, 70),
    "meta-llama/Llama-3.1-405B": (405_853_388_800, 405_853_388_800, 405, 405),
    "mistralai/Mistral-7B-v0.1": (7_241_732_096, 7_241_732_096, 7.3, 7.3),  # announcement [UNCERTAIN]
    "mistralai/Mixtral-8x7B-v0.1": (46_702_792_704, 12_879_925_248, 46.7, 12.9),  # [UNCERTAIN]
    "Qwen/Qwen2.5-7B": (7_615_616_512, 7_615_616_512, 7.61, 7.61),
    "Qwen/Qwen2.5-72B": (72_706_203_648, 72_706_203_648, 72.7, 72.7),
    "deepseek-ai/DeepSeek-V3": (671_026_419_200, 37_552_297_472, 671, 37),  # README @9b4e9788, MTP excluded
    "google/gemma-2-9b": (9_241_705_984, 9_241_705_984, 9.241705984, 9.241705984),  # HF safetensors total
    # Models people deploy now (published figures: model cards / technical reports, see each JSON's
    # _published_params). Same architecture as an entry above: same count.
    "meta-llama/Llama-3.3-70B-Instruct": (70_553_706_496, 70_553_706_496, 70, 70),
    "deepseek-ai/DeepSeek-R1-Distill-Llama-70B": (70_553_706_496, 70_553_706_496, 70, 70),
    "deepseek-ai/DeepSeek-R1": (671_026_419_200, 37_552_297_472, 671, 37),
    # Qwen2.5-32B card: 32.5B total (31.0B non-embedding)
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": (32_763_876_352, 32_763_876_352, 32.5, 32.5),
    "Qwen/Qwen3-8B": (8_190_735_360, 8_190_735_360, 8.2, 8.2),
    # 28 x (attention 6,291,456 + q/k norms 256 + MLP 3*1024*3072 = 9,437,184 + norms 2,048) + final norm 1,024
    # = 440,467,456 (the card's 0.44B non-embedding) + tied embedding 151,936*1,024 = 155,582,464
    "Qwen/Qwen3-0.6B": (596_049_920, 596_049_920, 0.6, 0.6),
    "Qwen/Qwen3-14B": (14_768_307_200, 14_768_307_200, 14.8, 14.8),
    "Qwen/Qwen3-32B": (32_762_123_264, 32_762_123_264, 32.8, 32.8),
    "Qwen/Qwen3-30B-A3B": (30_532_122_624, 3_353_032_704, 30.5, 3.3),
    "Qwen/Qwen3-235B-A22B": (235_093_634_560, 22_190_763_520, 235, 22),
    "Qwen/Qwen1.5-MoE-A2.7B": (14_315_784_192, 2_689_173_504, 14.3, 2.7),
    # DeepSeek counts "activated" without the input embedding (V3 README: 36.6B incl. the 0.9B output
    # head): 2,661,150,208 - 102,400*2048 = 2,451,435,008 ~ 2.4B
    "deepseek-ai/DeepSeek-V2-Lite-Chat": (15_706_484_224, 2_661_150_208, 15.7, 2.4 + 0.2097152),
    # Gemma 3 report, Table 1: 25.6B non-embedding + 1.4B embedding + 417M vision encoder = 27.4B
    "google/gemma-3-27b-it": (27_432_406_640, 27_432_406_640, 27.4, 27.4),
    "microsoft/phi-4": (14_659_507_200, 14_659_507_200, 14.7, 14.7),  # HF safetensors 14.7B ("14B" report)
    "mistralai/Mistral-Small-24B-Instruct-2501": (23_572_403_200, 23_572_403_200, 24, 24),
    # Current models (tests/test_catalog_current.py checks the totals within 2 % and spells out the parts).
    # Published "active" figures leave out the input embedding (gpt-oss, Llama 4, Kimi-K2, as DeepSeek) or
    # both embedding and output layer (GLM): added back here, in billions, so that the same
    # quantity is compared. gpt-oss card (arXiv:2508.10925 Table 1): 116.83B / 5.13B and 20.91B / 3.61B;
    # embedding 201,088 * 2,880 = 0.579 B.
    "openai/gpt-oss-120b": (116_829_156_672, 5_711_982_912, 116.83, 5.13 + 0.579133),
    "openai/gpt-oss-20b": (20_914_757_184, 4_187_440_704, 20.91, 3.61 + 0.579133),
    # Llama 4 cards: 109B / 17B and 400B / 17B; embedding 202,048 * 5,120 = 1.034 B
    "meta-llama/Llama-4-Scout-17B-16E": (108_641_793_536, 18_044_827_136, 109, 17 + 1.034486),
    "meta-llama/Llama-4-Maverick-17B-128E": (401_583_781_376, 18_056_623_616, 400, 17 + 1.034486),
    # Kimi-K2 card "1T / 32B"; HF safetensors 1.03T; embedding 163,840 * 7,168 = 1.174 B
    "moonshotai/Kimi-K2-Instruct": (1_026_408_232_448, 32_861_500_928, 1030, 32 + 1.174405),
    # GLM-4.5 report: 355B / 32B and 106B / 12B; embedding + output layer 2 * 151,552 * h (0.776 B at h 5,120, 0.621 B at 4,096)
    "zai-org/GLM-4.5": (352_797_829_024, 33_632_266_144, 355, 32 + 2 * 0.775946),
    "zai-org/GLM-4.5-Air": (106_852_251_264, 13_424_129_664, 106, 12 + 2 * 0.620757),
    "deepseek-ai/DeepSeek-V3.1": (671_026_419_200, 37_552_297_472, 671, 37),
}


class TestParamCounts:
    def test_every_catalog_model_is_in_the_table(self):
        assert sorted(A1_TABLE) == sorted(model_ids())

    @pytest.mark.parametrize("model_id", sorted(A1_TABLE))
    def test_reproduces_published_totals(self, model_id):
        total, active, published_total_b, published_active_b = A1_TABLE[model_id]
        p = param_counts(get_model(model_id))
        assert (p.total, p.active) == (total, active)
        assert p.total / 1e9 == pytest.approx(published_total_b, rel=0.04)
        assert p.active / 1e9 == pytest.approx(published_active_b, rel=0.04)

    def test_llama2_7b_by_parts(self):
        # per layer: attention 4*4096^2 = 67,108,864; MLP 3*4096*11008 = 135,266,304; 2 norms 8,192
        # 32 layers * 202,383,360 = 6,476,267,520; embedding = LM head = 32000*4096 = 131,072,000; final norm 4,096
        p = param_counts(get_model("meta-llama/Llama-2-7b-hf"))
        assert (p.attention, p.dense_mlp, p.norms) == (32 * 67_108_864, 32 * 135_266_304, 32 * 8_192 + 4_096)
        assert p.embedding == p.lm_head == 131_072_000
        assert p.total == 6_476_267_520 + 2 * 131_072_000 + 4_096 == 6_738_415_616

    def test_mixtral_active_counts_two_of_eight_experts(self):
        # one expert: 3*4096*14336 = 176,160,768; 32 layers * 6 unused experts = 192 * 176,160,768 = 33,822,867,456
        p = param_counts(get_model("mistralai/Mixtral-8x7B-v0.1"))
        assert p.experts == 32 * 8 * 176_160_768
        assert p.active_experts == 32 * 2 * 176_160_768
        assert p.total - p.active == 33_822_867_456

    def test_deepseek_v3_dense_and_moe_layers(self):
        # 3 dense layers: 3 * 3*7168*18432 = 1,189,085,184; 58 MoE layers * 256 * 3*7168*2048 = 653,908,770,816
        p = param_counts(get_model("deepseek-ai/DeepSeek-V3"))
        assert p.dense_mlp == 1_189_085_184
        assert p.experts == 653_908_770_816
        # shared expert + router + router bias per MoE layer: 44,040,192 + 1,835,008 + 256 = 45,875,456
        assert p.shared_experts_and_router == 58 * 45_875_456

    def test_kv_projection_and_linear(self):
        # Llama-3.1-8B: W_k + W_v = 32 layers * 2*4096*8*128 = 268,435,456
        # linear = total - embedding - LM head - norms = 8,030,261,248 - 2*525,336,576 - (32*2*4096 + 4096)
        p = param_counts(get_model("meta-llama/Llama-3.1-8B"))
        assert p.kv_projection == 268_435_456
        assert p.linear == 8_030_261_248 - 1_050_673_152 - 266_240 == 6_979_321_856

    def test_qwen3_counts_its_query_and_key_norms(self):
        # Qwen3-8B per layer: attention 4096*4096*2 + 2*4096*1024 = 41,943,040; MLP 3*4096*12288 = 150,994,944;
        # norms 2*4096 + q/k norms 2*128 = 8,448 -> 192,946,432 * 36 = 6,946,071,552
        # + embedding and LM head 2 * 151,936*4096 = 1,244,659,712 + final norm 4,096 = 8,190,735,360 (card: 8.2B)
        p = param_counts(get_model("Qwen/Qwen3-8B"))
        assert p.norms == 36 * (2 * 4096 + 2 * 128) + 4096
        assert p.total == 36 * 192_946_432 + 1_244_659_712 + 4_096 == 8_190_735_360

    def test_gemma3_counts_the_vision_encoder(self):
        # SigLIP (d 1152, I 4304, 27 layers, 896 px / 14 px patches): per layer 4*(1152^2 + 1152) + 2*1152*4304
        # + 4304 + 1152 + 4*1152 = 5,313,024 + 9,916,416 + 10,064 = 15,239,504 -> * 27 = 411,466,608; patch embedding 14*14*3*1152 + 1152 = 678,528;
        # 64*64 positions * 1152 = 4,718,592; post-norm 2,304; projector 1152*5376 + 1152 = 6,194,304
        # = 423,060,336 (the report's "417M" vision encoder plus the projector)
        p = param_counts(get_model("google/gemma-3-27b-it"))
        assert p.extra == 411_466_608 + 678_528 + 4_718_592 + 2_304 + 6_194_304 == 423_060_336

    def test_tied_embeddings_have_no_lm_head(self):
        # Gemma-2-9B ties: 256000 * 3584 = 917,504,000 counted once
        p = param_counts(get_model("google/gemma-2-9b"))
        assert (p.embedding, p.lm_head) == (917_504_000, 0)
