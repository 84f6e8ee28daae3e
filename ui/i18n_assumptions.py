"""Labels and tooltips of the efficiency-assumption controls (sidebar "Assumptions").

English tooltips are the field descriptions of :class:`calc.spec.inputs.Efficiency` (one source for
the sources); the Chinese ones translate them.
"""

from __future__ import annotations

from calc.spec.inputs import Efficiency
from ui.controls import EFFICIENCY_FIELDS

_LABELS_EN = {
    "eff_expert_load_imbalance": "Expert load imbalance (busiest EP rank / mean)",
    "eff_all_to_all_latency_us": "EP all-to-all fixed time (µs)",
    "eff_scale_out_bw_fraction": "Achievable scale-out NIC bandwidth (fraction)",
    "eff_expert_parallel_buffer_gib": "EP all-to-all buffers (GiB)",
    "eff_hbm_bw_fraction": "Achievable HBM bandwidth (fraction)",
    "eff_prefill_flops_fraction": "Achievable FLOP/s, prefill (fraction)",
    "eff_decode_flops_fraction": "Achievable FLOP/s, decode (fraction)",
    "eff_hopper_flops_scale": "vLLM on Hopper: share of those FLOP/s",
    "eff_ampere_moe_flops_scale": "vLLM MoE experts on Ampere: share of those FLOP/s",
    "eff_geforce_flops_fraction": "Achievable FLOP/s on GeForce (RTX 3090/4090/5090, fraction)",
    "eff_triton_attention_prefill_fraction": "vLLM Triton attention (sinks / FP8 KV on Ampere, Ada): share of prefill attention FLOP/s",
    "eff_triton_attention_decode_fraction": "vLLM Triton attention (sinks / FP8 KV on Ampere, Ada): share of decode KV bandwidth",
    "eff_fp16_accumulate_share": "GEMM work with FP16 accumulation (share)",

    "eff_mxfp4_moe_half_saturation_rows": "MXFP4 MoE experts (no FP4 cores): half-saturation (rows per expert)",
    "eff_moe_layer_fixed_us": "MoE layer fixed time per step (µs)",
    "eff_mla_layer_fixed_us": "MLA layer fixed time per step (µs)",
    "eff_gemm_half_saturation_tokens": "GEMM half-saturation (tokens)",
    "eff_step_overhead_ms": "Per-step overhead (ms)",
    "eff_sequence_overhead_us": "Per-sequence CPU per step (µs)",
    "eff_request_overhead_ms": "Per-request overhead (ms)",
    "eff_api_server_request_ms": "API server time per request (ms)",
    "eff_api_server_harmony_request_ms": "API server time per request, Harmony models (gpt-oss) (ms)",
    "eff_api_server_final_share": "API server: share after its last wait (1 = first come first served)",
    "eff_allreduce_latency_us": "All-reduce latency (µs)",
    "eff_interconnect_bw_fraction": "Achievable link bandwidth (fraction)",
    "eff_custom_allreduce_latency_us": "Custom all-reduce latency (µs)",
    "eff_rocm_custom_allreduce_latency_us": "Custom all-reduce latency on AMD / ROCm (µs)",
    "eff_custom_allreduce_bus_bw_gbps": "Custom all-reduce bus bandwidth (GB/s)",
    "eff_non_torch_overhead_gib": "Non-torch memory (GiB)",
    "eff_nccl_overhead_gib": "NVSwitch buffers at TP > 1 (GiB)",
    "eff_nccl_per_peer_gib": "NCCL buffers per TP peer (GiB)",
    "eff_allocator_workspace_gib": "cuBLAS workspaces in the torch peak (GiB)",
    "eff_cuda_context_gib": "CUDA context (GiB)",
    "eff_cuda_graph_gib": "CUDA graphs (GiB)",
    "eff_activation_live_hidden_buffers": "Live activation buffers (× hidden)",
}
_LABELS_ZH = {
    "eff_expert_load_imbalance": "专家负载不均衡（最忙 EP rank / 平均）",
    "eff_all_to_all_latency_us": "EP all-to-all 固定时间（µs）",
    "eff_scale_out_bw_fraction": "跨节点网卡可达带宽（比例）",
    "eff_expert_parallel_buffer_gib": "EP all-to-all 缓冲区（GiB）",
    "eff_hbm_bw_fraction": "可达到的显存带宽（比例）",
    "eff_prefill_flops_fraction": "可达到的算力，Prefill（比例）",
    "eff_decode_flops_fraction": "可达到的算力，Decode（比例）",
    "eff_hopper_flops_scale": "vLLM 在 Hopper 上：上述算力的比例",
    "eff_ampere_moe_flops_scale": "vLLM 在 Ampere 上的 MoE 专家：上述算力的比例",
    "eff_geforce_flops_fraction": "GeForce（RTX 3090/4090/5090）上可达到的算力比例",
    "eff_triton_attention_prefill_fraction": "vLLM Triton 注意力（Ampere、Ada 上的 sink / FP8 KV）：Prefill 注意力算力的比例",
    "eff_triton_attention_decode_fraction": "vLLM Triton 注意力（Ampere、Ada 上的 sink / FP8 KV）：Decode KV 读取带宽的比例",
    "eff_fp16_accumulate_share": "以 FP16 累加的 GEMM 工作量（比例）",

    "eff_mxfp4_moe_half_saturation_rows": "MXFP4 MoE 专家（无 FP4 核心）：半饱和行数（每个专家）",
    "eff_moe_layer_fixed_us": "每步每个 MoE 层的固定时间（µs）",
    "eff_mla_layer_fixed_us": "每步每个 MLA 层的固定时间（µs）",
    "eff_gemm_half_saturation_tokens": "GEMM 半饱和行数（token）",
    "eff_step_overhead_ms": "每步固定开销（ms）",
    "eff_sequence_overhead_us": "每步每序列 CPU 开销（µs）",
    "eff_request_overhead_ms": "每请求固定开销（ms）",
    "eff_api_server_request_ms": "API 服务器处理每个请求的时间（ms）",
    "eff_api_server_harmony_request_ms": "API 服务器处理每个请求的时间，Harmony 模型（gpt-oss）（ms）",
    "eff_api_server_final_share": "API 服务器：最后一次等待之后的时间占比（1 = 先到先服务）",
    "eff_allreduce_latency_us": "All-reduce 延迟（µs）",
    "eff_interconnect_bw_fraction": "可达到的互联带宽（比例）",
    "eff_custom_allreduce_latency_us": "自定义 All-reduce 延迟（µs）",
    "eff_rocm_custom_allreduce_latency_us": "AMD / ROCm 上的自定义 All-reduce 延迟（µs）",
    "eff_custom_allreduce_bus_bw_gbps": "自定义 All-reduce 总线带宽（GB/s）",
    "eff_non_torch_overhead_gib": "PyTorch 之外的显存（GiB）",
    "eff_nccl_overhead_gib": "TP > 1 时 NVSwitch 上的通信缓冲（GiB）",
    "eff_nccl_per_peer_gib": "每个 TP 对端的 NCCL 缓冲（GiB）",
    "eff_allocator_workspace_gib": "计入 torch 峰值的 cuBLAS 工作区（GiB）",
    "eff_cuda_context_gib": "CUDA 上下文（GiB）",
    "eff_cuda_graph_gib": "CUDA Graph（GiB）",
    "eff_activation_live_hidden_buffers": "激活峰值时存活的 hidden 缓冲数",
}
_HELP_ZH = {
    "eff_expert_load_imbalance": "专家并行：最忙的 EP rank 上的 token 数与平均值之比（MoE 层要等它）。DeepSeek（V3 报告、"
                                 "推理系统概述）和 SGLang（EPLB 文档）都因路由不均而增加冗余专家；LMSYS 的 Waterfill/LPLB "
                                 "文章（2026-06）指出即使开了 EPLB，单个批次在各 rank 上仍不均衡，削减最忙 rank 可提速 1–7%。"
                                 "1.3 是估计值（未找到 DeepSeek-V3 在 EPLB 下公开的最大/平均比）；用它时 "
                                 "bench/data/wide_ep_measurements.jsonl 中的宽 EP 数据误差在 6% 以内。",
    "eff_all_to_all_latency_us": "每个 MoE 层一次 EP all-to-all（dispatch 或 combine）的固定时间。DeepEP README 的低延迟 kernel"
                                 "（H800，128 个 token，hidden 7168，top-8）：EP8 dispatch 7.3 MB 用 77 µs，EP16–EP128 为 118–192 µs；"
                                 "扣除按链路速度传输的时间后剩 30–40 µs。",
    "eff_scale_out_bw_fraction": "EP all-to-all 或流水线阶段传输可达到的跨节点网卡（InfiniBand/RoCE）带宽比例。DeepEP README："
                                 "400 Gb/s（50 GB/s）CX7 上 normal kernel 每 GPU 43–58 GB/s RDMA，低延迟 kernel 39–63 GB/s：取 0.9。",
    "eff_expert_parallel_buffer_gib": "EP all-to-all kernel 在每张 GPU 上占用的非 torch 显存：vLLM 的 DeepEP 缓冲区，"
                                      "VLLM_DEEPEP_BUFFER_SIZE_MB = 1024 MiB 的 NVLink 缓冲，EP 跨节点时再加同样大小的 RDMA 缓冲。",
    "eff_hbm_bw_fraction": "流式读取权重和 KV Cache 时能达到的 HBM 带宽占标称值的比例。来源：kipply（FasterTransformer "
                           "矩阵乘“最高约 90%”，端到端 76%）；Databricks 端到端 MBU 55–60%；校准数据 pm-057..059。",
    "eff_prefill_flops_fraction": "vLLM 中大规模 Prefill GEMM 与 Prefill 注意力能达到的稠密 Tensor Core 峰值比例。vLLM 0.11、"
                                  "单卡 A100 上 Qwen3-14B 的 2,000–4,000 token 提示突发请求比 0.7 的预测慢 13–23%，0.55–0.6 "
                                  "与之吻合（gpustack performance lab）；TensorRT-LLM 的融合 kernel 可达 0.7（其 128–2048 token "
                                  "TTFT 数据；kipply 512 token 时 MLP 72%；PaLM Prefill MFU 76%）。在 GeForce 显卡上由下面的 GeForce 比例代替。",
    "eff_decode_flops_fraction": "纯 Decode 步（大批量 GEMM、分页注意力）能达到的峰值比例；只有当 Decode 变成算力瓶颈（大批量）"
                                 "时才起作用。vLLM 在 Decode 中用的是与 Prefill 相同的 GEMM，所以同为 0.6；TensorRT-LLM "
                                 "大批量吞吐数据（pm-008、pm-011）约为 0.7。在 GeForce 显卡上由下面的 GeForce 比例代替。",
    "eff_hopper_flops_scale": "vLLM 在 Hopper GPU（H100、H200、GH200）上只能达到上面算力比例的一部分：它的 kernel 离 Hopper "
                              "标称峰值比离 Ampere 更远。vLLM 0.11、单卡 H100 SXM 上 Qwen3-14B 的突发请求，比同一套物理模型"
                              "（在 A100 上与这些测量吻合，也与 TensorRT-LLM 的 H100 数据吻合）慢 1.6–1.8 倍（gpustack performance "
                              "lab；TensorRT-LLM performance.md pm-003..013）；0.5–0.65 都符合这一对比，取 0.6。不用于 TensorRT-LLM、LMDeploy；llama.cpp 的引擎配置按它自己的 H100/A100 对比另取 0.6（calc.timing.engine_profile）。",
    "eff_ampere_moe_flops_scale": "vLLM 在 Ampere GPU 上运行 16 位路由专家 GEMM（Triton fused_moe kernel）时，只能达到上面算力"
                                  "比例的一部分。vLLM 0.11、A100 SXM 上 Qwen3-235B-A22B（TP 8）的突发请求，比同一套物理模型"
                                  "（与 H100 上的同类测量、同一批 A100 上稠密的 Qwen3-14B/32B 吻合）慢 1.3–1.6 倍（gpustack "
                                  "performance lab）；0.4–0.45 符合，取 0.4。已用 A100 上 TP 4 的 GLM-4.5-Air 检验"
                                  "（bench/data/moe_ampere_found.jsonl）。并非缺少调优文件：vLLM 自 PR #17328（2025-04）"
                                  "起已带有该形状的 A100 调优配置。",
    "eff_geforce_flops_fraction": "vLLM 的 16 位 GEMM（Prefill 与 Decode）在 GeForce 显卡（RTX 3090、4090、5090）上能达到的 "
                                  "Tensor Core 峰值比例，代替上面两个比例。这些 kernel 用 FP32 累加，其速率只有 FP16 累加的一半"
                                  "（GA102/AD102 白皮书），所以每个 SM 每个周期的 Tensor 计算量只有 A100 的四分之一（4090：512 "
                                  "FLOPs，A100：2,048，H100：4,096），而加载、softmax、收尾运算照常全速进行：几乎只有被限速的 "
                                  "MMA 速率起作用。RTX 4090 上 PyTorch BF16 矩阵乘实测 151–165 TFLOP/s（标称 165.2），A100 约为"
                                  "其 312 的 0.87。取值依据 RTX 4090、3090 上公开的 vLLM 测量（bench/data/geforce_found.jsonl："
                                  "用 0.6 时中位误差 28%）。",
    "eff_triton_attention_prefill_fraction": "vLLM 的 TRITON_ATTN 后端在 Prefill 注意力上能达到的 FlashAttention 算力比例。"
                                             "对带 attention sink 的模型（gpt-oss）或 FP8 KV Cache，vLLM 0.11 在 Ampere、Ada 上"
                                             "选用它，因为 FlashAttention 2 两者都不支持（vllm/platforms/cuda.py；vLLM recipes "
                                             "GPT-OSS.md 的 A100 一节）；Hopper 用 FlashAttention 3，Blackwell 用 FlashInfer。"
                                             "它的统一 kernel 每个程序只算 16 行查询，并为这 16 行重新读取每个 key tile（每 "
                                             "131,072 次 MMA 运算读 8 KiB K/V，v0.11.0 中的 gpt-oss 与 v0.9.0 中 8B Llama 相同）。"
                                             "vLLM issue #18152：A100 上 8,192 token 的 Prefill 用它需 1,500 ms，用旧 kernel 为 "
                                             "600 ms（600 ms 即 8B 稠密模型的 Prefill：2 × 7e9 × 8,192 次运算、312 TFLOP/s 的 0.6；"
                                             "Llama-3.1-8B 的注意力 1.76e13 次因果运算在此需 94 ms）。94 + 900 ms 处理了 2 × 1.76e13 "
                                             "次运算（v0.9 的 kernel 对每个查询块都算完整条序列；PR #20308 加入了 v0.11.0 已有的因果"
                                             " tile 跳过），即 35 TFLOP/s，峰值的 0.113：0.113 / 0.6 = 0.19"
                                             "（calc.timing.attention_backend）。",
    "eff_triton_attention_decode_fraction": "vLLM 的 TRITON_ATTN 后端在 Decode 读取 KV 时能达到的 FlashAttention 带宽比例（何时"
                                            "选用它见上面的 Prefill 比例）。它的 kernel 对每个 KV 头只读一次每条序列缓存的 key，"
                                            "每次 16–32 个 key，与 FlashAttention 的分页 Decode 相同；没有找到 vLLM 0.11 的 kernel "
                                            "在 Ampere 上 Decode 时与 FlashAttention 对比的公开测量（vLLM PR #30191 的 Decode 计时"
                                            "没有 FlashAttention 一栏，且都在约 0.2 ms 的启动下限上），所以保持 1。",
    "eff_fp16_accumulate_share": "引擎以 FP16 累加运行的 16 位 GEMM 工作量所占比例。GeForce 张量核心（RTX 3090/4090/5090）"
                                 "FP16 累加的速率是目录中 fp16/bf16 峰值（FP32 累加）的两倍（GA102/AD102 白皮书）；数据中心和"
                                 "专业卡两者速率相同，因此这里不改变任何结果。vLLM 和 TensorRT-LLM 以 FP32 累加：0。llama.cpp "
                                 "的 F16 提示处理路径（ggml_cuda_op_mul_mat_cublas，默认精度）调用 cublasGemmEx 并使用 "
                                 "CUBLAS_COMPUTE_16F：1（calc.timing.engine_profile）。在 GeForce 卡上，这部分工作以预填充/解码的"
                                 "可达比例对 FP16 累加峰值运行，其余部分以 GeForce 可达比例运行，两者之间连续变化。",
    "eff_mxfp4_moe_half_saturation_rows": "在没有 FP4 张量核心的 GPU 上（Hopper：triton_kernels 的 matmul_ogs；Ampere、Ada："
                                          "Marlin MoE），vLLM 的 MXFP4 路由专家 GEMM 在每个专家的行数达到该值时效率为上限的"
                                          "一半，代替下面稠密 GEMM 的半饱和值。两种 kernel 都在寄存器中把权重转为 BF16，并且"
                                          "一层的所有专家只启动一次，SM 在专家之间填满，每个专家的少量行只付出补齐到 M tile "
                                          "的代价：matmul_ogs 的 block_m = max(16, next_pow2(行数))（triton-lang/triton 的 "
                                          "opt_flags.py），Marlin 为 8–64（vLLM fused_marlin_moe.py）；取 16。gpt-oss-120b、"
                                          "llm-d P/D Decode 池（TP 4，约 50 条序列，H100）：TPOT 9.2 ms，用稠密的 64 预测为 "
                                          "20 ms，用 16 为 12 ms（加上下面的 MoE 层固定时间为 14 ms）；H100 与 A100 上的 gpustack 突发请求（bench/data/"
                                          "gptoss_found.jsonl，bench/gptoss_check.py）。",
    "eff_moe_layer_fixed_us": "每个引擎步中一个 MoE 层的固定 GPU 时间，在其权重字节 /（HBM 带宽 × 上面的比例）之外：融合 MoE "
                              "的 kernel 序列（top-k、专家对齐、每个专家只有少量行的两个分组 GEMM、激活、求和）有执行下限，"
                              "CUDA Graph 去不掉，更快的 HBM 也不会缩短。vLLM benchmark_moe.py（CUDA Graph，每次回放 10 次"
                              "调用），batch 1，减去字节项：H100 上 Qwen3-30B-A3B FP8 40.4 − 14.1 = 26 µs（vLLM PR #24700）；"
                              "H100 上 TP 4 的 Qwen3-Next-80B FP8 29.5 − 2.9 = 27 µs（vLLM PR #44830）；H200 上 TP 8 的 "
                              "Qwen3-235B FP8 31.7 − 4.9 = 27 µs（SGLang PR #11730）；H100 上 TP 2 的 Mixtral-8x7B BF16 "
                              "144.0 − 131.4 = 13 µs（vLLM PR #24700）。取 25 µs（calc.timing.moe_kernels.moe_fixed_time_s）。",
    "eff_mla_layer_fixed_us": "vLLM 每个引擎步中一个 MLA 解码层（DeepSeek-V2/V3/R1、Kimi-K2）的固定时间，在其字节、上面的 "
                              "MoE 下限和它的 all-reduce 之外：MLA 的 Decode 路径约有 12 个 kernel（GQA 约 5 个），"
                              "每个块 FP8 线性层前还有一个激活量化 kernel，DeepSeek 的分组 top-k 路由和共享专家也各有自己的 "
                              "kernel；每个都有 CUDA Graph 和更快的 HBM 去不掉的下限。8 × H200、TP 8 上的 vLLM："
                              "DeepSeek-R1-0528 单个请求 TPOT 15.85 ms，而步的其余部分为 5.5 ms（vLLM recipes，每层 170 µs）；"
                              "DeepSeek-V3.1 16 个客户端 Decode：每秒 684 个输出 token，预测为 1,058（vLLM PR #28992，每层 "
                              "132 µs）；与 batch 无关（bench/data/mla_moe_lowbatch_found.jsonl，bench/mla_layer_check.py；"
                              "取 150 µs，calc.timing.mla_layers）。不用于其他引擎。",
    "eff_gemm_half_saturation_tokens": "单卡 GEMM 行数（token 数）达到该值时效率为上限的一半（tile / wave 量化）。"
                                       "Sarathi-Serve：Prefill 吞吐约在 512 token 处饱和。",
    "eff_step_overhead_ms": "每个引擎步的固定时间：调度、采样、kernel 启动（CPU 侧）。",
    "eff_sequence_overhead_us": "引擎在每一步里为每个序列花的 CPU 时间（调度、准备输入、采样、输出处理），加在这一步上："
                                "vLLM 0.11 默认不开异步调度，这段 CPU 时间不与 GPU 重叠，换更快的 GPU 也不会变短。"
                                "vLLM 0.11、H100 上的 Qwen3-8B、ShareGPT 闭环：从 1 个客户端到 8 个，TPOT 增加 0.43 ms，"
                                "而 GPU 计算只多 0.17 ms，即每多一个序列约 37 µs（gpustack performance lab）。",
    "eff_request_overhead_ms": "每个请求在引擎步之外的固定延迟：分词、API 服务与调度交接、首 token 采样/反分词"
                               "（课程误区四：CPU 侧开销）。只计入一次 TTFT 与端到端延迟。",
    "eff_api_server_request_ms": "vLLM 的 OpenAI API 服务器（单个进程）处理每个请求的时间：HTTP、聊天模板、"
                                 "分词和流式响应。它在 TTFT 里只算一次；一批同时到达的请求要排队等它；无论 GPU 多快，"
                                 "服务器每秒最多处理 1/该值 个请求。vLLM 0.11、H100 上的 Qwen3-14B：1,000 个 128 进 / 4 出的"
                                 "聊天请求同时发出，实测 43.9 个/秒（gpustack performance lab），按轮流处理计算为每个 14.5 ms（先到先服务算作 22.8 ms）。离线运行"
                                 "（LLM 类）为 0。",
    "eff_api_server_harmony_request_ms": "对话格式为 OpenAI Harmony 的模型（gpt-oss）每个聊天请求在 API 服务器上的时间，代替上面的值："
                                         "vLLM 用 openai_harmony（Rust）直接把对话转为 token，跳过其他模型都要走的 "
                                         "_preprocess_chat（Hugging Face 聊天模板的 jinja 处理和分词）（vllm/entrypoints/openai/"
                                         "serving_chat.py）。H100 上的 gpt-oss-20b：1,000 个 128 进 / 4 出的聊天请求同时发出，"
                                         "实测 212.4 个/秒（gpustack performance lab，vLLM 0.11.0），先到先服务算作每个 4.7 ms（H100 上的 Qwen3-14B 为 22.8 ms），"
                                         "按轮流处理为 2.5 ms（Qwen3-14B 为 14.5 ms）。用未参与取值的数据检查：A100 上的 gpt-oss-20b 183.8 个/秒，"
                                         "vLLM 0.10.2、H100 上的 gpt-oss-120b 129.2 个/秒，以及同一批主机的 ShareGPT 突发请求。离线运行（LLM 类）为 0。",
    "eff_api_server_final_share": ("vLLM 的 API 服务器是一个 asyncio event loop：一个请求的任务运行到 await 为止，然后其"
                                   "他就绪的任务各运行一段，所以同时到达的请求一起推进、一起离开，而不是一个接一个。vLLM 0.11 的聊天接口在 loo"
                                   "p 里生成聊天模板的文本，再等待分词线程，然后生成并发送引擎请求：N 个同时到达的请求在 N·(1−f)·t 之后开始离"
                                   "开，之后每 f·t 离开一个。1 = 先到先服务。在校准集的 gpustack 突发请求上从 0、0.1、0.2、0.3"
                                   "3、0.5、1 中选出（每次都在同一组测量上重新拟合每请求时间）：0.2 与 0.33 的中位误差最小。它把 128 进"
                                   " / 4 出突发请求的 TPOT 误差从 −97 % 变为 +10 %（Qwen3-14B，H100）：这些请求一起进入"
                                   "引擎，它们的 Decode 与其他请求的 Prefill 块共用同一步。Harmony 模型（gpt-oss）同样适用，"
                                   "在它自己的测量上重新拟合。不用于 completions 接口（没有聊天模板，先后由分词线程决定）。"),
    "eff_allreduce_latency_us": "一次 NCCL All-reduce 的延迟项 α（张量并行每层两次；用于 vLLM 自定义 All-reduce 不适用的情况："
                                "没有 P2P、TP > 2 走 PCIe、消息 ≥ 8 MiB，或 NCCL 更快时）。kipply 测得每层约 40–50 µs 通信"
                                "（13B，TP 2，A100）；2023 年 Databricks 的 TP 数据意味着更大，默认 50 µs 取中间。",
    "eff_interconnect_bw_fraction": "环形 All-reduce 能达到的单向链路带宽比例（NCCL bus bandwidth）。",
    "eff_custom_allreduce_latency_us": "vLLM 自定义 All-reduce（一次/两次 P2P kernel；NVLink/xGMI，或两卡 P2P；消息 < 8 MiB）"
                                       "的延迟项。H100 上 vLLM 的 kernel 在 512 B–32 KB、TP 2/4/8 时为 8.5–10.1 µs"
                                       "（sglang PR #2904 表格，未用 CUDA Graph）；vLLM PR #2192。",
    "eff_rocm_custom_allreduce_latency_us": "AMD GPU（vLLM 的 ROCm 版本，xGMI 全互连）上自定义 All-reduce 的延迟项，取代上一项。"
                                            "拟合而来：校准集中 7 组 MI300X 整批测量（ROCm vLLM 0.10，Llama-3.1-70B FP8，TP 8，"
                                            "批 1–128）在批 1 时每步比用 8 µs 的模型慢 3.4 ms（每步 160 次 All-reduce：每次约多 21 µs）；"
                                            "30 µs 使它们的中位误差最小（21.9 % → 2.5 %）。留作检验：同一页面的 16 组 Llama-3.1-405B"
                                            "（126 层，bench/data/rocm_dev_docker_found.jsonl）中位误差 26.6 % → 9.2 %。未单独测量：ROCm kernel 在 TP 8 时的每层固定开销同样能拟合这些数据；"
                                            "这里 AMD 上 TP 1 不计这项开销。",
    "eff_custom_allreduce_bus_bw_gbps": "自定义 All-reduce kernel 能达到的总线带宽（受 SM 与同步限制，远低于 NVLink）："
                                        "sglang PR #2904 中 H100、0.26–1 MiB 消息时为 50–59 GB/s（TP 2/4/8）；不超过链路本身"
                                        "（乘以链路比例）。",
    "eff_non_torch_overhead_gib": "vLLM 显存剖析在 TP 1 时新增的 PyTorch 之外的显存（按需加载的 kernel 镜像、cuBLAS 句柄）。"
                                  "vLLM 0.18/0.19 在 H100 上的日志：0.24–0.27 GiB（18 条）；0.15：0.13 GiB；旧 V0 引擎记录 1.79 GiB。",
    "eff_nccl_overhead_gib": "TP > 1 且 GPU 经 NVSwitch 全互联时额外的非 torch 显存：NCCL 的 NVLink-SHARP 缓冲和 vLLM "
                             "自定义 All-reduce 的 IPC 缓冲。vLLM 0.19 在 H100 SXM 上：TP 2 多 1.82 GiB，TP 4 多 1.88 GiB"
                             "（含每对端一项）。没有 NVSwitch 的 PCIe 卡不付这部分。",
    "eff_nccl_per_peer_gib": "每多一个 TP 对端增加的非 torch 显存：NCCL 每对端的通道缓冲（H100 SXM 日志：TP 4 比 TP 2 "
                             "多 2 个对端，多 0.06 GiB）。",
    "eff_allocator_workspace_gib": "首次 GEMM 后 PyTorch 分配器持有的 cuBLAS/cuBLASLt 工作区，计入 vLLM 的 torch 峰值："
                                   "从 0.19 的 H100 日志中减去采样器与前向两项后，每条日志共有的 0.05 GiB 残差。",
    "eff_cuda_context_gib": "CUDA 上下文与 kernel 镜像，在 vLLM 的显存快照之前创建：它占用的是 (1 − gpu_memory_utilization) "
                            "的预留部分，而不是 vLLM 的预算。当前驱动下约几百 MiB（估计值）。",
    "eff_cuda_graph_gib": "捕获的 CUDA Graph 占用的显存；vLLM 日志“took 0.21 GiB”（Llama-3.2-1B），每个捕获尺寸 6–28 MiB。"
                          "在 KV Cache 分配之后捕获，所以也必须放进预留部分。",
    "eff_activation_live_hidden_buffers": "vLLM 显存剖析前向中，激活峰值时同时存活的 hidden 大小缓冲数量（残差、norm 输出、"
                                          "注意力输出）；physics.md A4 建议 2–4。",
}

EN: dict[str, str] = {
    "sidebar.efficiency": "Assumptions (efficiency)",
    "sidebar.efficiency.caption": "The model's efficiency and overhead inputs, with their sources in each tooltip. "
                                  "The defaults match 49 published measurements with a median error of about 7 %.",
}
ZH: dict[str, str] = {
    "sidebar.efficiency": "模型假设（效率）",
    "sidebar.efficiency.caption": "计算器使用的效率与开销参数，来源见各自的提示。默认值与 49 条公开实测数据的中位误差约 7%。",
}
for _key, (_field, _scale) in EFFICIENCY_FIELDS.items():
    EN[f"ctl.{_key}"] = _LABELS_EN[_key]
    EN[f"ctl.{_key}.help"] = Efficiency.model_fields[_field].description or ""
    ZH[f"ctl.{_key}"] = _LABELS_ZH[_key]
    ZH[f"ctl.{_key}.help"] = _HELP_ZH[_key]
