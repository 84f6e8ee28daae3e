"""Labels and help of the user-defined GPU controls (``gpu=custom``), English and Chinese."""

from __future__ import annotations

EN: dict[str, str] = {
    "sidebar.custom_gpu": "Your own GPU",
    "sidebar.custom_gpu.caption": "Datasheet numbers of one GPU; every page computes with them as with a catalog GPU. "
                                  "Dense (not 2:4-sparse) tensor-core peaks.",
    "word.none": "none",
    "ctl.cgpu_memory_gib": "Memory per GPU (GiB)",
    "ctl.cgpu_memory_gib.help": "Total memory CUDA reports (torch.cuda.mem_get_info, GiB = 2^30 bytes), what vLLM "
                                "multiplies by gpu_memory_utilization. An '80 GB' H100 reports 79.19 GiB.",
    "ctl.cgpu_hbm_tbps": "Memory bandwidth (TB/s)",
    "ctl.cgpu_hbm_tbps.help": "Peak DRAM bandwidth from the datasheet, TB/s = 10^12 bytes/s (H100 SXM 3.35).",
    "ctl.cgpu_bf16_tflops": "Dense FP16/BF16 TFLOPS",
    "ctl.cgpu_bf16_tflops.help": "Dense 16-bit tensor-core peak (half the datasheet's 'with sparsity' figure; H100 SXM "
                                 "989.4). Used for FP16 and BF16, and for 4-bit integer weights (AWQ/GPTQ), which compute in 16 bit.",
    "ctl.cgpu_fp8_tflops": "Dense FP8 TFLOPS (optional)",
    "ctl.cgpu_fp8_tflops.help": "Dense FP8 tensor-core peak (H100 SXM 1,978.9). Empty: no FP8 tensor cores, so FP8 "
                                "weights run at the 16-bit rate, as vLLM does on Ampere.",
    "ctl.cgpu_int8_tops": "Dense INT8 TOPS (optional)",
    "ctl.cgpu_int8_tops.help": "Dense INT8 tensor-core peak. Empty: INT8 W8A8 runs at the 16-bit rate.",
    "ctl.cgpu_fp4_tflops": "Dense FP4 TFLOPS (optional)",
    "ctl.cgpu_fp4_tflops.help": "Dense FP4 tensor-core peak (B200 9,000; Blackwell and CDNA4 only). Empty: no FP4 "
                                "tensor cores, so NVFP4 weights run weight-only at the 16-bit rate, as vLLM does on "
                                "Hopper.",
    "ctl.cgpu_link_gbps": "GPU link, one direction (GB/s)",
    "ctl.cgpu_link_gbps.help": "Bandwidth per GPU per direction that a tensor-parallel all-reduce uses at every TP size "
                               "(half the bidirectional datasheet figure: NVLink 4 900 -> 450; PCIe Gen5 x16 -> 64; "
                               "Gen4 -> 32).",
    "ctl.cgpu_price_usd_h": "Price per GPU-hour (USD, optional)",
    "ctl.cgpu_price_usd_h.help": "For the cost per million tokens; empty = no price.",
}
ZH: dict[str, str] = {
    "sidebar.custom_gpu": "自定义 GPU",
    "sidebar.custom_gpu.caption": "一张 GPU 的规格参数；所有页面都像使用目录中的 GPU 一样用它计算。算力填稠密（非 2:4 稀疏）"
                                  "Tensor Core 峰值。",
    "word.none": "无",
    "ctl.cgpu_memory_gib": "每卡显存（GiB）",
    "ctl.cgpu_memory_gib.help": "CUDA 报告的总显存（torch.cuda.mem_get_info，GiB = 2^30 字节），即 vLLM 乘以 "
                                "gpu_memory_utilization 的那个数。标称 80 GB 的 H100 报告 79.19 GiB。",
    "ctl.cgpu_hbm_tbps": "显存带宽（TB/s）",
    "ctl.cgpu_hbm_tbps.help": "规格书中的峰值显存带宽，TB/s = 10^12 字节/秒（H100 SXM 为 3.35）。",
    "ctl.cgpu_bf16_tflops": "稠密 FP16/BF16 TFLOPS",
    "ctl.cgpu_bf16_tflops.help": "稠密 16 位 Tensor Core 峰值（规格书“稀疏”数值的一半；H100 SXM 为 989.4）。用于 FP16、BF16，"
                                 "以及按 16 位计算的 4 比特整数权重（AWQ/GPTQ）。",
    "ctl.cgpu_fp8_tflops": "稠密 FP8 TFLOPS（可选）",
    "ctl.cgpu_fp8_tflops.help": "稠密 FP8 Tensor Core 峰值（H100 SXM 为 1,978.9）。留空表示没有 FP8 Tensor Core：FP8 权重按 "
                                "16 位速率计算，与 vLLM 在 Ampere 上一样。",
    "ctl.cgpu_int8_tops": "稠密 INT8 TOPS（可选）",
    "ctl.cgpu_int8_tops.help": "稠密 INT8 Tensor Core 峰值。留空表示 INT8 W8A8 按 16 位速率计算。",
    "ctl.cgpu_fp4_tflops": "稠密 FP4 TFLOPS（可选）",
    "ctl.cgpu_fp4_tflops.help": "稠密 FP4 Tensor Core 峰值（B200 为 9,000；仅 Blackwell 与 CDNA4 有）。留空表示没有 FP4 "
                                "Tensor Core：NVFP4 权重只按权重量化、以 16 位速率计算，与 vLLM 在 Hopper 上一样。",
    "ctl.cgpu_link_gbps": "GPU 互联，单向（GB/s）",
    "ctl.cgpu_link_gbps.help": "张量并行 All-reduce 在任意 TP 大小下可用的每卡单向带宽（规格书双向数值的一半：NVLink 4 "
                               "900 -> 450；PCIe Gen5 x16 -> 64；Gen4 -> 32）。",
    "ctl.cgpu_price_usd_h": "每卡每小时价格（美元，可选）",
    "ctl.cgpu_price_usd_h.help": "用于计算每百万 token 成本；留空表示没有价格。",
}
