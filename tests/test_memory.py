"""calc.sizing.memory and the memory composition in calc.sizing.scenario (physics.md A2, A4, A5).

Expected values are arithmetic written out in comments, or figures from vLLM startup logs:
- vllm PR #10511 (Meta-Llama-3-8B, H100, util 0.90): total 79.22 GiB, "model weights take 14.96GiB",
  TP2 7.48 GiB per rank, activation peak 1.26 GiB, non-torch 1.79 GiB, KV cache 53.29 GiB.
- kubernetes-sigs/gateway-api-inference-extension PR #550 (7B MHA, H100): weights 12.55 GiB,
  KV 56.18 GiB, "# cuda blocks: 7191".
"""

import numpy as np
import pytest

from calc.sizing import memory as mem
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.sizing.scenario import (default_max_num_batched_tokens, default_max_num_seqs, memory_for, memory_model,
                           model_numbers, resolve_serving)
from calc.spec.units import GiB

LLAMA2_7B = "meta-llama/Llama-2-7b-hf"
LLAMA31_8B = "meta-llama/Llama-3.1-8B"
LLAMA2_70B = "meta-llama/Llama-2-70b-hf"
MIXTRAL = "mistralai/Mixtral-8x7B-v0.1"
DEEPSEEK_V3 = "deepseek-ai/DeepSeek-V3"


class TestFloorCount:
    def test_floor_and_clip(self):
        # negative -> 0, 2.7 -> 2, an absurd 1e30 saturates at 2^53 instead of overflowing int64
        assert mem.floor_count(np.array([-3.0, 2.7, 1e30])).tolist() == [0, 2, 2**53]
        assert mem.floor_count(7.9) == 7

    def test_absurd_gpu_gives_a_huge_block_count(self):
        # 1e25 B / 16 B per block = 6.25e23 blocks > 2^53: saturates
        assert mem.num_kv_blocks(kv_pool_bytes=1e25, block_size=16, kv_bytes_per_token=1) == 2**53


class TestKvHeadsPerRank:
    def test_splits_then_replicates(self):
        # 8 KV heads over TP 1, 2, 4, 8 -> 8, 4, 2, 1; TP 16 cannot split a head: still 1 per rank
        got = mem.kv_heads_per_rank(num_kv_heads=8, tensor_parallel_size=np.array([1, 2, 4, 8, 16]))
        assert got.tolist() == [8, 4, 2, 1, 1]

    def test_scalar_in_scalar_out(self):
        assert mem.kv_heads_per_rank(num_kv_heads=32, tensor_parallel_size=4) == 8


class TestKvBytesPerToken:
    @pytest.mark.parametrize("layers, kv_heads, expected", [
        (32, 32, 524_288),  # Llama-2-7B MHA: 2 * 32 layers * 32 kv heads * 128 head_dim * 2 B = 524,288 (512 KiB)
        (40, 40, 819_200),  # Llama-2-13B MHA: 2 * 40 * 40 * 128 * 2 = 819,200 (800 KiB, the vLLM paper's 800 KB)
        (32, 8, 131_072),   # Llama-3.1-8B / Mixtral GQA-8: 2 * 32 * 8 * 128 * 2 = 131,072 (128 KiB)
        (80, 8, 327_680),   # Llama-2-70B GQA-8: 2 * 80 * 8 * 128 * 2 = 327,680 (320 KiB)
    ])
    def test_known_models(self, layers, kv_heads, expected):
        assert mem.kv_bytes_per_token(num_layers=layers, num_kv_heads=kv_heads, head_dim=128, bytes_per_element=2) == expected

    def test_fp8_halves(self):
        # 2 * 32 * 8 * 128 * 1 B = 65,536
        assert mem.kv_bytes_per_token(num_layers=32, num_kv_heads=8, head_dim=128, bytes_per_element=1) == 65_536

    def test_broadcast(self):
        got = mem.kv_bytes_per_token(num_layers=32, num_kv_heads=np.array([1, 8, 32]), head_dim=128, bytes_per_element=2)
        assert got.tolist() == [16_384, 131_072, 524_288]  # 2*32*128*2 = 16,384 per KV head

    @pytest.mark.parametrize("model_id, expected", [
        (LLAMA2_7B, 524_288), (LLAMA31_8B, 131_072), (LLAMA2_70B, 327_680), (MIXTRAL, 131_072),
        (DEEPSEEK_V3, 70_272),  # MLA: 61 layers * (512 latent + 64 rope) * 2 B = 70,272
    ])
    def test_catalog_models(self, model_id, expected):
        n = model_numbers(get_model(model_id), dtype="bfloat16")
        assert n.kv_bytes_per_token_per_head_full * n.num_kv_heads == expected


class TestMlaKvBytesPerToken:
    def test_deepseek_v3(self):
        # 61 * (512 + 64) * 2 B = 70,272 B (~68.6 KiB) vs MHA-equivalent 61 * 128 * (192 + 128) * 2 = 4,997,120
        assert mem.mla_kv_bytes_per_token(num_layers=61, kv_lora_rank=512, qk_rope_head_dim=64, bytes_per_element=2) == 70_272

    def test_fp8(self):
        # 61 * 576 * 1 B = 35,136
        assert mem.mla_kv_bytes_per_token(num_layers=61, kv_lora_rank=512, qk_rope_head_dim=64, bytes_per_element=1) == 35_136


class TestBlocksForTokens:
    def test_ceil(self):
        # ceil(0/16)=0, ceil(1/16)=1, ceil(16/16)=1, ceil(17/16)=2, ceil(2048/16)=128
        assert mem.blocks_for_tokens(tokens=np.array([0, 1, 16, 17, 2048]), block_size=16).tolist() == [0, 1, 1, 2, 128]

    def test_broadcast_over_block_size(self):
        # 4097 tokens: ceil(4097/8)=513, ceil(4097/16)=257, ceil(4097/32)=129
        assert mem.blocks_for_tokens(tokens=4097, block_size=np.array([8, 16, 32])).tolist() == [513, 257, 129]


class TestSlidingWindowKvTokens:
    def test_capped_at_window_plus_step(self):
        # need ceil(32768/16) = 2048 blocks; cap ceil((4096 - 1 + 2048)/16) + 1 = 384 + 1 = 385 blocks = 6,160 tokens
        assert mem.sliding_window_kv_tokens(context_tokens=32768, sliding_window=4096, max_num_batched_tokens=2048,
                                            block_size=16) == 6160

    def test_short_context_is_not_capped(self):
        # 1000 tokens -> ceil(1000/16) = 63 blocks = 1,008 tokens
        assert mem.sliding_window_kv_tokens(context_tokens=1000, sliding_window=4096, max_num_batched_tokens=2048,
                                            block_size=16) == 1008


class TestKvBytesPerSequence:
    def test_llama2_7b_4096_is_2_gib(self):
        # 4096/16 = 256 blocks * 16 tokens * 524,288 B = 2,147,483,648 B = 2 GiB exactly
        assert mem.kv_bytes_per_sequence(context_tokens=4096, kv_bytes_per_token_full=524_288) == 2_147_483_648

    def test_rounds_up_to_a_block(self):
        # 4097 tokens -> 257 blocks * 16 * 524,288 = 2,155,872,256
        assert mem.kv_bytes_per_sequence(context_tokens=4097, kv_bytes_per_token_full=524_288) == 2_155_872_256

    def test_llama2_70b_2048_tokens(self):
        # the course's "1.4 GB": 128 blocks * 16 * 327,680 B = 671,088,640 B = 0.67 GB (0.625 GiB)
        assert mem.kv_bytes_per_sequence(context_tokens=2048, kv_bytes_per_token_full=327_680) == 671_088_640

    def test_mistral_sliding_window(self):
        # Mistral-7B-v0.1: every layer slides (W = 4096); 32K context, 2048-token steps:
        # 6,160 tokens (see TestSlidingWindowKvTokens) * 131,072 B = 807,403,520 B, not 32768 * 131,072 = 4.29 GB
        n = model_numbers(get_model("mistralai/Mistral-7B-v0.1"))
        got = mem.kv_bytes_per_sequence(context_tokens=32768, kv_bytes_per_token_full=0.0,
                                        kv_bytes_per_token_sliding=n.kv_bytes_per_token_per_head_sliding * n.num_kv_heads,
                                        sliding_window=n.sliding_window, max_num_batched_tokens=2048, block_size=16)
        assert got == 807_403_520

    def test_broadcast(self):
        got = mem.kv_bytes_per_sequence(context_tokens=np.array([16, 32]), kv_bytes_per_token_full=np.array([[1.0], [2.0]]))
        assert got.tolist() == [[16.0, 32.0], [32.0, 64.0]]


class TestForwardPeakBytes:
    KW = dict(tokens=8192, hidden_size=4096, ffn_intermediate_per_token=14336, num_heads=32, num_kv_heads=8,
              head_dim=128, activation_bytes=2, live_hidden_buffers=4)

    def test_llama3_8b(self):
        # per token: 3*14336 + (32 + 2*8)*128 + 4*4096 = 43,008 + 6,144 + 16,384 = 65,536 elements
        # 8192 tokens * 65,536 * 2 B = 1,073,741,824 B = 1.0 GiB
        assert mem.forward_peak_bytes(tensor_parallel_size=1, **self.KW) == 1_073_741_824

    def test_tp2_shards_mlp_and_qkv_not_hidden(self):
        # per token: 43,008/2 + 6,144/2 + 16,384 = 40,960 -> 8192 * 40,960 * 2 = 671,088,640
        assert mem.forward_peak_bytes(tensor_parallel_size=2, **self.KW) == 671_088_640

    def test_moe_workspace_replaces_a_smaller_dense_term(self):
        # MLP term = max(8192*3*14336*2 = 704,643,072, 1e9) = 1e9; rest 8192*(6,144 + 16,384)*2 = 369,098,752
        got = mem.forward_peak_bytes(tensor_parallel_size=1, moe_workspace_bytes=1e9, **self.KW)
        assert got == 1e9 + 369_098_752


class TestMoeWorkspaceBytes:
    def test_mixtral_tp2(self):
        # 8192 tokens * top-2 * (max(14336/2, 4096) + max(2*14336/2, 4096)) * 2 B
        # = 8192 * 2 * (7168 + 14336) * 2 = 704,643,072 B = 0.656 GiB
        assert mem.moe_workspace_bytes(tokens=8192, experts_per_token=2, expert_intermediate_size=14336,
                                       hidden_size=4096, tensor_parallel_size=2, activation_bytes=2) == 704_643_072

    def test_small_experts_are_padded_to_the_hidden_size(self):
        # Qwen3-30B-A3B: I_e = 768 < h = 2048 -> 8192 * 8 * (2048 + 2048) * 2 = 536,870,912 B = 0.5 GiB
        assert mem.moe_workspace_bytes(tokens=8192, experts_per_token=8, expert_intermediate_size=768,
                                       hidden_size=2048, tensor_parallel_size=1, activation_bytes=2) == 536_870_912


class TestSampler:
    def test_bytes_per_logit(self):
        # 0.19: bf16 logits 2 + float32 copy 4 + probs 4 + exponential noise 4 = 14
        # float32 model: the copy is the same tensor -> 4 + 4 + 4 = 12
        # 0.15 sort path: 2 + 4 + sorted 4 + int64 idx 8 + sort buffers 12 + top-p softmax 4 + masks 2 = 36
        assert mem.sampler_bytes_per_logit(vllm_version="0.19", activation_bytes=2.0) == 14.0
        assert mem.sampler_bytes_per_logit(vllm_version="0.19", activation_bytes=4.0) == 12.0
        assert mem.sampler_bytes_per_logit(vllm_version="0.15", activation_bytes=2.0) == 36.0
        with pytest.raises(ValueError, match="vllm_version"):
            mem.sampler_bytes_per_logit(vllm_version="0.1")

    def test_peak_follows_the_vocabulary(self):
        # 1024 rows * V * 14 B + 132 scratch rows * V * 4 B = V * 14,864
        for vocab in (128_256, 152_064, 256_000):
            assert mem.sampler_peak_bytes(max_num_seqs=1024, vocab_size=vocab, bytes_per_logit=14.0,
                                          topk_scratch_rows=132) == vocab * 14_864


class TestActivationPeakBytes:
    def test_llama31_8b_h100_log(self):
        # forward 1.0 GiB; sampler phase: hidden 8192*4096*2 = 67,108,864 + sampler 128,256*14,864 = 1,906,397,184
        # = 1,973,506,048; + 0.05 GiB workspaces = 2,027,193,139 B = 1.888 GiB (vLLM 0.19 logged 1.89 GiB, r01)
        smp = mem.sampler_peak_bytes(max_num_seqs=1024, vocab_size=128_256, bytes_per_logit=14.0, topk_scratch_rows=132)
        got = mem.activation_peak_bytes(forward_bytes=2**30, sampler_bytes=smp, tokens=8192, hidden_size=4096,
                                        activation_bytes=2, workspace_bytes=0.05 * GiB)
        assert got == pytest.approx(1_973_506_048 + 0.05 * GiB)
        assert round(got / GiB, 2) == 1.89

    def test_forward_wins_when_larger(self):
        got = mem.activation_peak_bytes(forward_bytes=5e9, sampler_bytes=1e9, tokens=8192, hidden_size=4096,
                                        activation_bytes=2, moe_workspace_bytes=1e8)
        assert got == 5e9

    def test_moe_workspace_is_still_allocated_in_the_sampler_phase(self):
        # 8192*4096*2 = 67,108,864 + 1e8 + 1e9
        got = mem.activation_peak_bytes(forward_bytes=0.0, sampler_bytes=1e9, tokens=8192, hidden_size=4096,
                                        activation_bytes=2, moe_workspace_bytes=1e8)
        assert got == 67_108_864 + 1e8 + 1e9


class TestRuntimeOverheadBytes:
    def test_nvswitch_buffers_only_with_tp(self):
        # vLLM 0.19 on H100 SXM: 0.25 GiB at TP 1; 0.25 + 1.79 + 0.03 = 2.07 at TP 2; 0.25 + 1.79 + 3*0.03 = 2.13 at TP 4
        got = mem.runtime_overhead_bytes(tensor_parallel_size=np.array([1, 2, 4]), non_torch_overhead_bytes=0.25 * GiB,
                                         nccl_overhead_bytes=1.79 * GiB, nccl_per_peer_bytes=0.03 * GiB)
        assert (got / GiB).round(2).tolist() == [0.25, 2.07, 2.13]

    def test_pcie_pays_only_per_peer_buffers(self):
        # 0.25 + 3 * 0.03 = 0.34 GiB at TP 4 without NVSwitch
        got = mem.runtime_overhead_bytes(tensor_parallel_size=4, non_torch_overhead_bytes=0.25 * GiB,
                                         nccl_overhead_bytes=1.79 * GiB, nccl_per_peer_bytes=0.03 * GiB,
                                         all_to_all_link=False)
        assert round(got / GiB, 2) == 0.34


class TestKvPoolBytes:
    def test_vllm_log_llama3_8b(self):
        # 79.22 GiB * 0.9 - 14.96 - 1.26 - 1.79 = 71.298 - 18.01 = 53.288 -> "53.29 GiB" (vllm PR #10511)
        got = mem.kv_pool_bytes(usable_memory_bytes=79.22 * GiB, gpu_memory_utilization=0.9, weights_bytes=14.96 * GiB,
                                activation_bytes=1.26 * GiB, overhead_bytes=1.79 * GiB)
        assert round(got / GiB, 2) == 53.29

    def test_negative_is_kept(self):
        # 10 * 0.5 - 8 - 0 - 0 = -3: does not fit, reported as data, not clipped
        assert mem.kv_pool_bytes(usable_memory_bytes=10, gpu_memory_utilization=0.5, weights_bytes=8,
                                 activation_bytes=0, overhead_bytes=0) == -3.0


class TestNumKvBlocks:
    def test_vllm_log_7b_mha(self):
        # block = 16 tokens * 524,288 B = 8 MiB; 56.18 GiB / 8 MiB = 56.18 * 128 = 7191.04 -> "# cuda blocks: 7191"
        assert mem.num_kv_blocks(kv_pool_bytes=56.18 * GiB, block_size=16, kv_bytes_per_token=524_288) == 7191

    def test_llama3_8b_pool(self):
        # 53.29 GiB / (16 * 131,072 B = 2 MiB) = 53.29 * 512 = 27,284.48 -> 27,284 blocks
        assert mem.num_kv_blocks(kv_pool_bytes=53.29 * GiB, block_size=16, kv_bytes_per_token=131_072) == 27_284

    def test_negative_pool_is_zero_blocks(self):
        assert mem.num_kv_blocks(kv_pool_bytes=np.array([-5.0, 0.0]), block_size=16, kv_bytes_per_token=2).tolist() == [0, 0]


class TestMaxConcurrency:
    def test_vllm_formula(self):
        # 7191 blocks / ceil(4096/16) = 7191 / 256 = 28.09x
        assert round(mem.max_concurrency(num_blocks=7191, max_model_len=4096, block_size=16), 2) == 28.09

    def test_partial_last_block_counts_whole(self):
        # 7191 / ceil(4097/16) = 7191 / 257 = 27.98x
        assert round(mem.max_concurrency(num_blocks=7191, max_model_len=4097, block_size=16), 2) == 27.98


class TestPagedWasteBytes:
    def test_tail_of_last_block(self):
        # 1000 tokens: 63 blocks = 1008 slots, 8 empty * 131,072 B = 1,048,576
        assert mem.paged_waste_bytes(tokens=1000, block_size=16, kv_bytes_per_token=131_072) == 1_048_576

    def test_exact_multiple_wastes_nothing(self):
        # the course's examples: 2048 and 4096 tokens are whole blocks of 16
        assert mem.paged_waste_bytes(tokens=np.array([2048, 4096]), block_size=16, kv_bytes_per_token=327_680).tolist() == [0, 0]


class TestContiguousWasteBytes:
    def test_reserves_max_model_len(self):
        # (4096 - 1000) * 131,072 = 405,798,912
        assert mem.contiguous_waste_bytes(tokens=1000, max_model_len=4096, kv_bytes_per_token=131_072) == 405_798_912


class TestContiguousMaxSequences:
    def test_whole_reservations(self):
        # 10 GiB / (4096 * 512 KiB = 2 GiB) = 5
        assert mem.contiguous_max_sequences(kv_pool_bytes=10 * GiB, max_model_len=4096, kv_bytes_per_token=524_288) == 5

    def test_negative_pool(self):
        assert mem.contiguous_max_sequences(kv_pool_bytes=-1.0, max_model_len=4096, kv_bytes_per_token=2) == 0


class TestWeightsPerGpuBytes:
    def test_formula(self):
        # sharded 100 / 16 + replicated 1 + 2 B per KV head * max(1, 8 // 16) = 6.25 + 1 + 2 = 9.25
        assert mem.weights_per_gpu_bytes(sharded_weight_bytes=100.0, replicated_weight_bytes=1.0,
                                         kv_proj_bytes_per_head=2.0, num_kv_heads=8, tensor_parallel_size=16) == 9.25

    def test_llama2_70b_tp8_and_tp16(self):
        # Llama-2-70B FP16, in parameters: norms 80*2*8192 + 8192 = 1,318,912 (replicated);
        # W_k+W_v 80 * 2*8192*8*128 = 1,342,177,280 (167,772,160 per KV head); sharded = 68,976,648,192
        # - 1,318,912 - 1,342,177,280 = 67,633,152,000.
        # TP8:  (67,633,152,000/8 + 1,318,912 + 1 head * 167,772,160) * 2 B = 17,246,470,144
        # TP16: (67,633,152,000/16 + 1,318,912 + 1 head * 167,772,160) * 2 B = 8,792,326,144 (KV heads replicated)
        n = model_numbers(get_model(LLAMA2_70B), dtype="float16")
        got = mem.weights_per_gpu_bytes(sharded_weight_bytes=n.sharded_weight_bytes,
                                        replicated_weight_bytes=n.replicated_weight_bytes,
                                        kv_proj_bytes_per_head=n.kv_proj_bytes_per_head, num_kv_heads=n.num_kv_heads,
                                        tensor_parallel_size=np.array([8, 16]))
        assert got.tolist() == [17_246_470_144, 8_792_326_144]


class TestModelNumbers:
    @pytest.mark.parametrize("model_id, expected", [
        (LLAMA2_7B, 13_476_831_232),      # 6,738,415,616 params * 2 B (vLLM log: 12.55 GiB)
        (LLAMA31_8B, 16_060_522_496),     # 8,030,261,248 * 2 B = 14.96 GiB (vLLM log "14.96GiB")
        (LLAMA2_70B, 137_953_296_384),    # 68,976,648,192 * 2 B
        (MIXTRAL, 93_405_585_408),        # 46,702,792,704 * 2 B (all experts resident)
        (DEEPSEEK_V3, 1_342_052_838_400), # 671,026,419,200 * 2 B
    ])
    def test_16_bit_weights(self, model_id, expected):
        assert model_numbers(get_model(model_id), dtype="bfloat16", quantization="none").weights_total_bytes == expected

    def test_deepseek_v3_fp8(self):
        # embedding + LM head 2 * 129,280*7168 = 1,853,358,080, norms 61*2*7168 + 7168 = 881,664 and the 58 MoE
        # routers 58 * (256*7168 + 256) = 106,445,312 stay BF16 (vLLM builds the gate without a quant config);
        # linear = 671,026,419,200 - 1,853,358,080 - 881,664 - 106,445,312 = 669,065,734,144 at 1 B
        # = 669,065,734,144 + (1,853,358,080 + 881,664 + 106,445,312) * 2 = 672,987,104,256 B
        # + the BF16 W_UK/W_UV copies of the FP8 kv_b_proj MLA decode multiplies with (vLLM
        #   process_weights_after_loading): 61 * 128 * 512 * (128 + 128) * 2 = 2,046,820,352 B
        # = 675,033,924,608 B
        n = model_numbers(get_model(DEEPSEEK_V3), dtype="bfloat16", quantization="fp8")
        assert n.weights_total_bytes == 672_987_104_256 + 2_046_820_352
        # "auto" (the default) loads the checkpoint's FP8, as vLLM does
        assert model_numbers(get_model(DEEPSEEK_V3)).weights_total_bytes == 675_033_924_608

    def test_mla_is_one_replicated_head(self):
        n = model_numbers(get_model(DEEPSEEK_V3))
        assert n.num_kv_heads == 1 and n.kv_bytes_per_token_per_head_full == 70_272

    def test_gemma2_splits_full_and_sliding_layers(self):
        # 42 layers: 21 sliding + 21 full, 8 KV heads of 256: 2 * 21 * 256 * 2 B = 21,504 per head per kind
        n = model_numbers(get_model("google/gemma-2-9b"))
        assert (n.kv_bytes_per_token_per_head_full, n.kv_bytes_per_token_per_head_sliding) == (21_504, 21_504)
        assert n.sliding_window == 4096


class TestDefaults:
    @pytest.mark.parametrize("gpu_id, tokens, seqs", [
        ("h100-sxm", 8192, 1024), ("h200", 8192, 1024), ("mi300x", 8192, 1024),
        ("a100-80gb", 2048, 256),  # A100 excluded on purpose (vLLM PR #17885)
        ("l4", 2048, 256), ("rtx-4090", 2048, 256),
    ])
    def test_vllm_batch_defaults(self, gpu_id, tokens, seqs):
        gpu = get_gpu(gpu_id)
        assert (default_max_num_batched_tokens(gpu), default_max_num_seqs(gpu)) == (tokens, seqs)

    def test_resolve_serving_uses_model_context(self):
        rs = resolve_serving(get_model(LLAMA2_7B), get_gpu("h100-sxm"), ServingConfig())
        assert (rs.max_model_len, rs.max_num_seqs, rs.max_num_batched_tokens) == (4096, 1024, 8192)


class TestMemoryModel:
    """A tiny scenario in round numbers, every field by hand."""

    KW = dict(usable_memory_bytes=1000.0, gpu_memory_utilization=0.9, tensor_parallel_size=2,
              sharded_weight_bytes=200.0, replicated_weight_bytes=10.0, kv_proj_bytes_per_head=5.0, num_kv_heads=4,
              kv_bytes_per_token_per_head_full=1.0, kv_bytes_per_token_per_head_sliding=0.0, sliding_window=1,
              hidden_size=2, ffn_intermediate_per_token=4, num_heads=4, head_dim=1, vocab_size=2, activation_bytes=1.0,
              max_model_len=10, max_num_seqs=1, max_num_batched_tokens=4, block_size=4,
              non_torch_overhead_bytes=6.0, nccl_overhead_bytes=10.0, live_hidden_buffers=1.0,
              concurrency=50, context_tokens=5, sampler_bytes_per_logit=4.0, topk_scratch_rows=0)

    def test_every_field(self):
        r = memory_model(**self.KW)
        assert r.budget_bytes == pytest.approx(900.0)          # 1000 * 0.9
        assert r.reserved_bytes == pytest.approx(100.0)
        assert r.weights_bytes == 120.0                         # 200/2 + 10 + 5 * (4 // 2 heads)
        # forward: 4 tokens * (3*4/2 + (4 + 2*4)*1/2 + 1*2) * 1 B = 4 * 14 = 56
        # sampler phase: hidden 4 * 2 * 1 B = 8 + logits 1 seq * 2 vocab * 4 B = 8 -> 16; peak max(56, 16) = 56
        assert r.forward_bytes == 56.0 and r.sampler_bytes == 8.0
        assert r.activation_bytes == 56.0
        assert r.overhead_bytes == 16.0                         # 6 + 10 NCCL (TP 2)
        assert r.kv_pool_bytes == pytest.approx(708.0)         # 900 - 120 - 56 - 16
        assert r.kv_bytes_per_token == 2.0                      # 1 B per head * 2 heads per rank
        assert r.num_blocks == 88                               # floor(708 / (4 tokens * 2 B))
        assert r.kv_pool_tokens == 352                          # 88 * 4
        assert r.max_concurrency == pytest.approx(88 / 3)      # 88*8 B / (ceil(10/4)=3 blocks * 8 B)
        assert r.kv_bytes_per_request == 16.0                   # ceil(5/4) = 2 blocks * 8 B
        assert r.max_concurrency_at_context == 44               # floor(704 / 16)
        assert r.kv_in_use_bytes == 704.0                       # min(50, 44) * 16
        assert r.kv_free_bytes == pytest.approx(4.0)           # 708 - 704
        assert r.paged_waste_bytes == 6.0                       # (8 - 5) * 2
        assert r.contiguous_waste_bytes == 10.0                 # (10 - 5) * 2
        assert r.contiguous_max_sequences == 35                 # floor(708 / (10 * 2))
        assert bool(r.fits) and not bool(r.concurrency_fits)    # 50 > 44

    def test_stack_sums_to_budget(self):
        r = memory_model(**self.KW)
        assert r.weights_bytes + r.activation_bytes + r.overhead_bytes + r.kv_pool_bytes == pytest.approx(r.budget_bytes)

    def test_broadcast_shapes(self):
        kw = dict(self.KW, tensor_parallel_size=np.array([1, 2, 4])[:, None], concurrency=np.array([1, 10, 100, 1000]))
        r = memory_model(**kw)
        assert r.kv_in_use_bytes.shape == (3, 4) and r.fits.shape == (3, 1)
        assert r.fits.dtype == bool

    def test_inputs_not_mutated(self):
        tp = np.array([1, 2, 4])
        memory_model(**dict(self.KW, tensor_parallel_size=tp))
        assert tp.tolist() == [1, 2, 4]


class TestMemoryFor:
    H100 = get_gpu("h100-sxm")
    # The end-to-end checks pin the two memory assumptions they depend on (the library defaults
    # are calibrated elsewhere and may move): 1 GiB non-torch overhead, 4 live hidden buffers.
    EFF = Efficiency(non_torch_overhead_bytes=GiB, activation_live_hidden_buffers=4.0)

    def test_running_sequences_of_a_windowed_model_hold_only_their_window(self):
        """gpt-oss-120b (18 full + 18 windowed layers, 8 KV heads x 64 x 2 B x 2 = 2,048 B a layer a token,
        window 128): a running 32,100-token sequence holds 2,007 blocks (32,112 tokens) in the full
        layers and 144 tokens in the windowed ones, 36,864 + 36,864 x 144 / 32,112 = 37,029.3 B a token
        against 73,728 for all layers: the pool holds 1.99x the tokens vLLM's "GPU KV cache size"
        counts. Sequences within the window (128 tokens) hold every layer: no change."""
        arch = get_model("openai/gpt-oss-120b")
        long = memory_for(arch, self.H100, ServingConfig(max_model_len=32768, input_len=32000, output_len=100))
        assert float(long.kv_bytes_per_token) == 73_728
        assert float(long.kv_bytes_per_sequence_token) == pytest.approx(36_864 + 36_864 * 144 / 32_112)
        pool_used = float(long.num_blocks) * 16 * 73_728
        assert float(long.kv_sequence_tokens) == (pool_used / float(long.kv_bytes_per_sequence_token)) // 16 * 16
        assert float(long.kv_sequence_blocks) * 16 == float(long.kv_sequence_tokens)
        assert 1.98 < float(long.kv_sequence_tokens) / float(long.kv_pool_tokens) < 2.0
        short = memory_for(arch, self.H100, ServingConfig(max_model_len=32768, input_len=100, output_len=28))
        assert float(short.kv_sequence_tokens) == float(short.kv_pool_tokens)

    def test_running_sequences_without_windowed_layers_are_the_pool(self):
        r = memory_for(get_model(LLAMA31_8B), self.H100, ServingConfig(max_model_len=32768, input_len=30000))
        assert float(r.kv_sequence_tokens) == float(r.kv_pool_tokens)
        assert float(r.kv_sequence_blocks) == float(r.num_blocks)
        assert float(r.kv_bytes_per_sequence_token) == float(r.kv_bytes_per_token)

    def test_llama3_8b_weights_match_vllm_log(self):
        # 16,060,522,496 B / 2^30 = 14.957 GiB: "model weights take 14.96GiB"
        r = memory_for(get_model(LLAMA31_8B), self.H100, ServingConfig(max_model_len=8192))
        assert round(float(r.weights_bytes) / GiB, 2) == 14.96

    def test_llama3_8b_tp2_weights_match_vllm_log(self):
        # TP2: (16,060,522,496 - norms 266,240*2) / 2 + 266,240*2 = 8,030,527,488 B = 7.479 GiB -> "7.48GiB"
        r = memory_for(get_model(LLAMA31_8B), self.H100, ServingConfig(max_model_len=8192, tensor_parallel_size=2))
        assert float(r.weights_bytes) == 8_030_527_488
        assert round(float(r.weights_bytes) / GiB, 2) == 7.48

    def test_llama3_8b_pool_with_logged_components(self):
        # The calculator's stack with the log's measured activation / non-torch terms gives the logged pool
        weights = memory_for(get_model(LLAMA31_8B), self.H100, ServingConfig(max_model_len=8192)).weights_bytes
        pool = mem.kv_pool_bytes(usable_memory_bytes=79.22 * GiB, gpu_memory_utilization=0.9, weights_bytes=weights,
                                 activation_bytes=1.26 * GiB, overhead_bytes=1.79 * GiB)
        assert round(float(pool) / GiB, 2) == 53.29

    def test_7b_mha_blocks_from_logged_pool(self):
        # 56.18 GiB / (16 * 524,288 B) = 7191 blocks, as logged
        r = memory_for(get_model(LLAMA2_7B), self.H100, ServingConfig())
        assert round(float(r.weights_bytes) / GiB, 2) == 12.55  # logged "12.55 GiB"
        assert mem.num_kv_blocks(kv_pool_bytes=56.18 * GiB, block_size=16, kv_bytes_per_token=r.kv_bytes_per_token) == 7191

    def test_llama2_7b_h100_end_to_end(self):
        # usable 85,029,615,043 B (79.19 GiB) * 0.9 = 76,526,653,538.7
        # forward (T = 8192): 8192 * (3*11008 + 96*128 + 4*4096 = 61,696) * 2 = 1,010,827,264
        # sampler phase (1024 seqs, V = 32,000): hidden 8192*4096*2 = 67,108,864 + 1024*32,000*14 = 458,752,000
        #   + 132 SMs * 32,000 * 4 = 16,896,000 -> 542,756,864 < forward; + 0.05 GiB workspaces = 1,064,514,355.2
        # pool = 76,526,653,538.7 - 13,476,831,232 - 1,064,514,355.2 - 1 GiB = 60,911,566,127.5
        # blocks = floor(60,911,566,127.5 / 8 MiB) = floor(7261.22) = 7261; 7261 / 256 = 28.36x at 4096 tokens
        r = memory_for(get_model(LLAMA2_7B), self.H100, ServingConfig(), self.EFF)
        assert float(r.activation_bytes) == pytest.approx(1_064_514_355.2)
        assert float(r.kv_pool_bytes) == pytest.approx(60_911_566_127.5, abs=1)
        assert int(r.num_blocks) == 7261
        assert float(r.max_concurrency) == pytest.approx(7261 / 256)
        assert int(r.max_concurrency_at_context) == 28

    def test_kv_per_gpu_under_tp(self):
        # Llama-2-70B: 327,680 B/token whole model; TP 8 -> 1 head per rank = 40,960; TP 16 replicates: 40,960
        r = memory_for(get_model(LLAMA2_70B), get_gpu("h100-sxm"), ServingConfig(tensor_parallel_size=8))
        r16 = memory_for(get_model(LLAMA2_70B), get_gpu("h100-sxm"), ServingConfig(tensor_parallel_size=16))
        assert float(r.kv_bytes_per_token) == float(r16.kv_bytes_per_token) == 40_960

    def test_mla_kv_is_replicated_on_every_rank(self):
        # DeepSeek-V3 at TP 8 still holds 70,272 B per token on each GPU
        r = memory_for(get_model(DEEPSEEK_V3), get_gpu("h200"), ServingConfig(tensor_parallel_size=8, max_model_len=8192))
        assert float(r.kv_bytes_per_token) == 70_272

    def test_fits_is_data(self):
        # DeepSeek-V3 on 8 x H200: BF16 weights 1.342e12 / 8 = 168 GB > 0.9 * 150 GB: does not fit;
        # FP8 weights 6.73e11 / 8 = 84 GB: fits
        arch, h200 = get_model(DEEPSEEK_V3), get_gpu("h200")
        bf16 = memory_for(arch, h200, ServingConfig(tensor_parallel_size=8, max_model_len=8192, quantization="none"))
        fp8 = memory_for(arch, h200, ServingConfig(tensor_parallel_size=8, max_model_len=8192))  # auto = FP8
        assert (bool(bf16.fits), bool(fp8.fits)) == (False, True)
        assert float(bf16.kv_pool_bytes) < 0 and int(bf16.num_blocks) == 0

    def test_concurrency_sweep_broadcasts(self):
        # activation: sampler phase 8192*4096*2 = 67,108,864 + 128,256 * (1024*14 + 132*4) = 1,906,397,184
        #   = 1,973,506,048 (> forward 1 GiB) + 0.05 GiB = 2,027,193,139.2 (vLLM 0.19 logged 1.89 GiB)
        # pool = 76,526,653,538.7 - 16,060,522,496 - 2,027,193,139.2 - 1 GiB = 57,365,196,079.5
        # blocks = floor(pool / 2 MiB) = 27,353; one 8192-token request = 1 GiB = 512 blocks -> 53 requests fit
        r = memory_for(get_model(LLAMA31_8B), self.H100, ServingConfig(max_model_len=8192), self.EFF,
                       concurrency=np.array([1, 10, 100, 1000]), context_tokens=8192)
        assert float(r.activation_bytes) == pytest.approx(2_027_193_139.2)
        assert int(r.num_blocks) == 27_353 and int(r.max_concurrency_at_context) == 53
        assert (r.kv_in_use_bytes / GiB).tolist() == [1.0, 10.0, 53.0, 53.0]
        assert r.concurrency_fits.tolist() == [True, True, False, False]

    def test_mla_activation_counts_per_head_keys_and_values(self):
        # MLA decompresses K and V per head in the profiling pass: the QKV term uses 128 KV heads, not the 1 cached
        # latent. At TP 8, T = 8192, d = 192: (128 + 2*128) * 192 / 8 = 9,216 elements per token for QKV
        arch, h200 = get_model(DEEPSEEK_V3), get_gpu("h200")
        r = memory_for(arch, h200, ServingConfig(tensor_parallel_size=8, max_model_len=8192, quantization="fp8"),
                       self.EFF)
        # MLP: max(dense 8192 * 3*18432/8 * 2 = 113,246,208, fused-MoE workspaces 8192 * 8 experts *
        #   (max(2048/8, 7168) + max(2*2048/8, 7168)) * 2 = 1,879,048,192) = 1,879,048,192
        # forward = 1,879,048,192 + 8192 * (9,216 + 4*7168 = 28,672) * 2 = 1,879,048,192 + 620,756,992 = 2,499,805,184
        # sampler phase: hidden 8192*7168*2 = 117,440,512 + workspaces 1,879,048,192
        #   + 129,280 * (1024*14 + 132*4) = 1,921,617,920 -> 3,918,106,624; + 0.05 GiB = 3,971,793,715.2
        assert float(r.forward_bytes) == 2_499_805_184
        assert float(r.activation_bytes) == pytest.approx(3_971_793_715.2)


class TestVllmBehaviours:
    """What vLLM 0.19 does that the memory model follows (issue 12), with the numbers worked out."""

    def test_sliding_window_running_sequences_free_blocks(self):
        # Mistral-7B on H100, 16,000 + 500 tokens, window 4096, block 16. Start-up worst case (vLLM's
        # "Maximum concurrency" line): blocks(4096 - 1 + 8192) + 1 = 769 blocks per layer; a decoding
        # sequence holds blocks(4096) + 1 = 257 blocks: 257 * 16 * 131,072 B = 538,968,064 B per sequence.
        r = memory_for(get_model("mistralai/Mistral-7B-v0.1"), get_gpu("h100-sxm"),
                       ServingConfig(input_len=16_000, output_len=500), context_tokens=16_500)
        assert float(r.kv_bytes_per_request) == 257 * 16 * 131_072
        assert float(r.kv_bytes_per_request_startup) == 769 * 16 * 131_072
        # 28,918 blocks of 2 MiB -> 28,918 * 16 / 4,112 tokens = 112 running sequences (37.6 by the start-up figure)
        assert int(r.num_blocks) == 28_918
        assert int(r.max_concurrency_at_context) == 28_918 * 16 // 4_112 == 112
        assert float(r.max_concurrency) == pytest.approx(28_918 * 16 / 12_304)

    def test_no_chunked_prefill_profiles_the_whole_model_length(self):
        # Llama-3.1-8B on H100, max_model_len 131,072 without chunked prefill: budget max(131,072, 8192);
        # forward 131,072 * 65,536 * 2 B = 16 GiB (+ 0.05 GiB workspaces), not the 1.0 GiB of the 8192 budget
        arch, h100 = get_model(LLAMA31_8B), get_gpu("h100-sxm")
        rs = resolve_serving(arch, h100, ServingConfig(enable_chunked_prefill=False))
        assert rs.max_num_batched_tokens == 131_072
        r = memory_for(arch, h100, ServingConfig(enable_chunked_prefill=False), Efficiency(activation_live_hidden_buffers=4.0))
        assert float(r.forward_bytes) == 16 * GiB
        assert float(r.activation_bytes) == pytest.approx(16.05 * GiB)
        # an explicit budget is kept (vLLM then rejects budgets below max_model_len)
        assert resolve_serving(arch, h100, ServingConfig(enable_chunked_prefill=False,
                                                         max_num_batched_tokens=4096)).max_num_batched_tokens == 4096

    def test_deepseek_v3_loads_fp8_with_replicated_tensors(self):
        # DeepSeek-V3 on 8 x H200, default quantization (auto = the checkpoint's FP8):
        # sharded: FP8 linears 669,065,734,144 - q_a 61*7168*1536 = 671,612,928 - kv_a 61*7168*576 = 251,854,848
        #   -> 668,142,266,368 B; embedding + LM head 2 * 926,679,040 * 2 B = 3,706,716,160 B; / 8 = 83,981,122,816
        # replicated on every rank: q_a 671,612,928 B (FP8), kv_a 251,854,848 B (FP8, the MLA latent projection),
        #   routers 106,445,312 * 2 B, norms 881,664 * 2 B (+ the latent norms inside attention, counted sharded)
        r = memory_for(get_model(DEEPSEEK_V3), get_gpu("h200"), ServingConfig(tensor_parallel_size=8, max_model_len=8192))
        n = model_numbers(get_model(DEEPSEEK_V3))
        assert n.quantization == "fp8"
        assert n.replicated_weight_bytes == (106_445_312 + 881_664) * 2 + 671_612_928
        assert n.kv_proj_bytes_per_head == 251_854_848
        assert float(r.weights_bytes) == pytest.approx(n.sharded_weight_bytes / 8 + n.replicated_weight_bytes + 251_854_848)
        # 78.55 GiB sharded + 0.72 GiB replicated + the BF16 W_UK/W_UV copies of the FP8 kv_b_proj
        # (16 of 128 heads per GPU: 61 * 16 * 512 * 256 * 2 = 255,852,544 B = 0.24 GiB)
        assert round(float(r.weights_bytes) / GiB, 2) == 79.51
        assert bool(r.fits)
        bf16 = memory_for(get_model(DEEPSEEK_V3), get_gpu("h200"),
                          ServingConfig(tensor_parallel_size=8, max_model_len=8192, quantization="none"))
        assert not bool(bf16.fits) and float(bf16.weights_bytes) / GiB > 157

    def test_gemma3_kv_groups_are_padded_like_v1(self):
        # 52 sliding + 10 full layers: groups of 10 -> 6 sliding groups (60 layers, 8 of them padding) + 1 full;
        # per token 70 layers * 16 KV heads * 128 * 2 (K, V) * 2 B = 573,440 B (62 layers would be 507,904)
        r = memory_for(get_model("google/gemma-3-27b-it"), get_gpu("h100-sxm"), ServingConfig(max_model_len=8192))
        assert float(r.kv_bytes_per_token) == 70 * 16 * 128 * 2 * 2 == 573_440

    def test_pcie_cards_pay_no_nvswitch_buffers(self):
        # TP 2 non-torch: H100 SXM 0.25 + 1.79 + 0.03 GiB; H100 PCIe (bridged pair) and L40S (PCIe): 0.25 + 0.03
        serving = ServingConfig(tensor_parallel_size=2, max_model_len=8192)
        got = {g: float(memory_for(get_model(LLAMA31_8B), get_gpu(g), serving).overhead_bytes) / GiB
               for g in ("h100-sxm", "h100-pcie", "l40s")}
        assert got == pytest.approx({"h100-sxm": 2.07, "h100-pcie": 0.28, "l40s": 0.28})

    def test_vllm_015_sampler_is_larger(self):
        # Qwen3-14B on H100, vLLM 0.15 (sort-based top-k/top-p, 36 B per logit): logged 5.64 GiB, 0.18 logged 2.23
        arch, h100 = get_model("Qwen/Qwen3-14B"), get_gpu("h100-sxm")
        old = memory_for(arch, h100, ServingConfig(max_model_len=8192, vllm_version="0.15"))
        new = memory_for(arch, h100, ServingConfig(max_model_len=8192))
        # 0.15: 8192*5120*2 = 83,886,080 + 1024 * 151,936 * 36 = 5,600,968,704 (no Triton scratch) + 0.05 GiB
        assert float(old.activation_bytes) == pytest.approx(83_886_080 + 5_600_968_704 + 0.05 * GiB)
        assert round(float(old.activation_bytes) / GiB, 2) == 5.34 and round(float(new.activation_bytes) / GiB, 2) == 2.23
