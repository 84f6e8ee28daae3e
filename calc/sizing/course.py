"""Every memory number printed in the course chapter, beside the figure the calculator computes.

The chapter (``shared/course/chapter3-inference-bottlenecks.zh.md``) prints weights and KV-cache
sizes in "GB". Here each printed number is kept as printed (``printed_text``), read as GB = 1e9
bytes (``printed_bytes``), and recomputed from the catalog architecture of the model the text
names (:func:`computed_bytes`): whole model (TP 1), FP16 unless told otherwise, KV for exactly
``context_tokens`` tokens (no block rounding; every context here is a multiple of 16 anyway).
``reason_en`` / ``reason_zh`` say why the two differ (physics.md section C).

Left out on purpose:
- 3.5's case study (38 GB / 41 GB occupancy of a 7B on an A100 80GB) reports measured
  ``nvidia-smi`` style occupancy of an unnamed setup, not a formula: weights + pool are sized by
  ``--gpu-memory-utilization``, so there is nothing to recompute it from.
- 3.1's "KV cache can take 30%-70% of GPU memory" is a range of shares, not a size.
- "A100 80GB" is a datasheet capacity (see ``calc/data/gpus.json``), not a computed figure.

>>> figs = {f.key: f for f in course_figures()}
>>> f = figs["table_13b_kv_4k"]
>>> f.printed_text, computed_bytes(f)          # 2·40·40·128·4096·2 B
('3.7 GB', 3355443200.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from calc.sizing import memory as mem
from calc.spec.catalog import get_model
from calc.sizing.scenario import model_numbers
from calc.spec.units import GB

LLAMA2_7B = "meta-llama/Llama-2-7b-hf"
LLAMA2_13B = "meta-llama/Llama-2-13b-hf"
LLAMA2_70B = "meta-llama/Llama-2-70b-hf"

QUANTITIES = ("weights", "kv_per_request", "kv_total")


@dataclass(frozen=True)
class CourseFigure:
    """One memory number as the chapter prints it, and what it claims to measure."""

    key: str  # stable id, e.g. "table_13b_kv_4k"
    section: str  # "3.2"
    printed_text: str  # as printed in the chapter, e.g. "3.7 GB"
    printed_bytes: float  # the printed value in bytes, reading the course's "GB" as 1e9
    model_id: str  # catalog id used to recompute
    quantity: str  # "weights" | "kv_per_request" | "kv_total"
    context_tokens: int | None  # tokens per request (KV figures); None for weights
    requests: int  # 1, or 100 for the "100 concurrent requests" claim
    label_en: str
    label_zh: str
    reason_en: str  # why printed and computed differ, or why they match
    reason_zh: str


# Reasons shared by several figures (numbers from physics.md A1, A2 and C).
_W70_EN = ("Matches to rounding: Llama-2-70B has 68.98e9 parameters × 2 B = 137.95 GB (128.5 GiB); "
           "the chapter rounds 70B × 2 B = 140 GB.")
_W70_ZH = "基本一致：Llama-2-70B 实有 68.98e9 个参数 × 2 字节 = 137.95 GB（128.5 GiB）；书中按 70B × 2 字节取整为 140 GB。"
_GQA70_EN = ("Llama-2-70B uses grouped-query attention with 8 KV heads, not 64: "
             "2 × 80 layers × 8 × 128 × 2 B = 327,680 B (320 KiB) per token.")
_GQA70_ZH = "Llama-2-70B 使用分组查询注意力（GQA），只有 8 个 KV 头而非 64 个：每个 Token 2 × 80 层 × 8 × 128 × 2 字节 = 327,680 字节（320 KiB）。"
_CTX4K_EN = " Also, Llama-2's context window is 4,096 tokens (model card): 32K is beyond what the model serves."
_CTX4K_ZH = "另外，Llama-2 的上下文窗口只有 4,096 个 Token（模型卡），32K 超出了模型能处理的长度。"


def course_figures() -> list[CourseFigure]:
    """The chapter's memory figures, in the order they appear (3.1, then 3.2 text, then the table)."""

    def fig(key, section, printed_text, printed_gb, model_id, quantity, context_tokens, requests,
            label_en, label_zh, reason_en, reason_zh):
        return CourseFigure(key=key, section=section, printed_text=printed_text, printed_bytes=printed_gb * GB,
                            model_id=model_id, quantity=quantity, context_tokens=context_tokens, requests=requests,
                            label_en=label_en, label_zh=label_zh, reason_en=reason_en, reason_zh=reason_zh)

    return [
        fig("intro_70b_weights", "3.1", "140GB", 140, LLAMA2_70B, "weights", None, 1,
            "70B model weights (FP16), read from HBM every decode step",
            "70B 模型权重（FP16），每生成一个 Token 都要从 HBM 读一遍",
            _W70_EN, _W70_ZH),
        fig("llama2_70b_kv_2048", "3.2", "1.4GB", 1.4, LLAMA2_70B, "kv_per_request", 2048, 1,
            "Llama 2 70B: KV cache of one 2,048-token request",
            "Llama 2 70B：单条 2048 Token 请求的 KV Cache",
            "Too high by about 2.1×. " + _GQA70_EN + " 2,048 tokens need 671,088,640 B = 0.67 GB "
            "(0.625 GiB); 1.34 GB is the 4,096-token figure.",
            "约高估 2.1 倍。" + _GQA70_ZH + "2048 个 Token 需要 671,088,640 字节 = 0.67 GB（0.625 GiB）；"
            "1.34 GB 是 4096 个 Token 时的数值。"),
        fig("llama2_70b_kv_2048_x100", "3.2", "140GB", 140, LLAMA2_70B, "kv_total", 2048, 100,
            "Llama 2 70B: KV cache of 100 concurrent 2,048-token requests",
            "Llama 2 70B：100 条并发 2048 Token 请求的 KV Cache 总量",
            "Too high by about 2.1×, inherited from the 1.4 GB per request: 100 × 0.67 GB = 67.1 GB "
            "(62.5 GiB). That still exceeds one A100 80GB once the 138 GB of weights are counted.",
            "约高估 2.1 倍，源自每条请求 1.4 GB 的错误：100 × 0.67 GB = 67.1 GB（62.5 GiB）。"
            "算上 138 GB 的权重，单张 A100 80GB 仍然放不下。"),
        fig("example_7b_kv_4096", "3.2", "2GB", 2, LLAMA2_7B, "kv_per_request", 4096, 1,
            "7B (32 layers, 32 heads, head_dim 128, FP16): KV cache of one 4,096-token request",
            "7B（32 层、32 头、头维度 128、FP16）：单条 4096 Token 请求的 KV Cache",
            "Matches: 2 × 32 × 32 × 128 × 4,096 × 2 B = 2,147,483,648 B = 2 GiB exactly (2.15 GB in SI units); "
            "the chapter's \"GB\" here is GiB. True for the MHA Llama-2-7B only: a GQA 7B/8B model "
            "(Llama-3.1-8B, Mistral-7B, 8 KV heads) needs 4× less.",
            "一致：2 × 32 × 32 × 128 × 4096 × 2 字节 = 2,147,483,648 字节，正好 2 GiB（按 1e9 计为 2.15 GB），"
            "这里的“GB”实为 GiB。仅适用于多头注意力（MHA）的 Llama-2-7B；采用 GQA 的 7B/8B 模型"
            "（Llama-3.1-8B、Mistral-7B，8 个 KV 头）只需四分之一。"),
        fig("table_7b_weights", "3.2", "14 GB", 14, LLAMA2_7B, "weights", None, 1,
            "Table, 7B: weights in FP16", "表格，7B：FP16 权重显存",
            "Matches to rounding: Llama-2-7B has 6.74e9 parameters × 2 B = 13.48 GB (12.55 GiB, the figure "
            "vLLM logs); the chapter rounds 7B × 2 B = 14 GB.",
            "基本一致：Llama-2-7B 实有 6.74e9 个参数 × 2 字节 = 13.48 GB（12.55 GiB，即 vLLM 日志中的数值）；"
            "书中按 7B × 2 字节取整为 14 GB。"),
        fig("table_7b_kv_4k", "3.2", "2 GB", 2, LLAMA2_7B, "kv_per_request", 4096, 1,
            "Table, 7B: KV cache at 4K context", "表格，7B：4K 上下文的 KV Cache",
            "Matches: 4,096 × 524,288 B (512 KiB per token, MHA) = 2 GiB (2.15 GB); the chapter's \"GB\" is GiB here.",
            "一致：4096 × 524,288 字节（每 Token 512 KiB，MHA）= 2 GiB（2.15 GB），这里的“GB”实为 GiB。"),
        fig("table_7b_kv_32k", "3.2", "16 GB", 16, LLAMA2_7B, "kv_per_request", 32768, 1,
            "Table, 7B: KV cache at 32K context", "表格，7B：32K 上下文的 KV Cache",
            "Arithmetic right in GiB: 32,768 × 512 KiB = 16 GiB = 17.18 GB, so 16 \"GB\" is 7% low in SI units."
            + _CTX4K_EN + " A 7B GQA model with 8 KV heads at 32K needs 4.29 GB.",
            "按 GiB 计算正确：32768 × 512 KiB = 16 GiB = 17.18 GB，按 1e9 计“16 GB”偏低 7%。"
            + _CTX4K_ZH + "8 个 KV 头的 7B GQA 模型在 32K 时只需 4.29 GB。"),
        fig("table_13b_weights", "3.2", "26 GB", 26, LLAMA2_13B, "weights", None, 1,
            "Table, 13B: weights in FP16", "表格，13B：FP16 权重显存",
            "Matches: Llama-2-13B has 13.02e9 parameters × 2 B = 26.03 GB (24.24 GiB).",
            "一致：Llama-2-13B 实有 13.02e9 个参数 × 2 字节 = 26.03 GB（24.24 GiB）。"),
        fig("table_13b_kv_4k", "3.2", "3.7 GB", 3.7, LLAMA2_13B, "kv_per_request", 4096, 1,
            "Table, 13B: KV cache at 4K context", "表格，13B：4K 上下文的 KV Cache",
            "Too high by 10%: Llama-2-13B (MHA, 40 layers × 40 heads × 128) stores 2 × 40 × 40 × 128 × 2 B "
            "= 819,200 B (800 KiB) per token, so 4,096 tokens take 3.36 GB (3.125 GiB). Neither GB nor GiB "
            "gives 3.7 (the vLLM paper's OPT-13B has the same 800 KB per token).",
            "偏高 10%：Llama-2-13B（MHA，40 层 × 40 头 × 128）每个 Token 存 2 × 40 × 40 × 128 × 2 字节 = "
            "819,200 字节（800 KiB），4096 个 Token 为 3.36 GB（3.125 GiB）。无论按 GB 还是 GiB 都得不到 3.7"
            "（vLLM 论文中的 OPT-13B 每 Token 同样是 800 KB）。"),
        fig("table_13b_kv_32k", "3.2", "29.6 GB", 29.6, LLAMA2_13B, "kv_per_request", 32768, 1,
            "Table, 13B: KV cache at 32K context", "表格，13B：32K 上下文的 KV Cache",
            "Too high by 10% (8 × the 4K figure): 32,768 × 819,200 B = 26.84 GB (25 GiB)." + _CTX4K_EN,
            "偏高 10%（即 4K 数值的 8 倍）：32768 × 819,200 字节 = 26.84 GB（25 GiB）。" + _CTX4K_ZH),
        fig("table_70b_weights", "3.2", "140 GB", 140, LLAMA2_70B, "weights", None, 1,
            "Table, 70B: weights in FP16", "表格，70B：FP16 权重显存", _W70_EN, _W70_ZH),
        fig("table_70b_kv_4k", "3.2", "20 GB", 20, LLAMA2_70B, "kv_per_request", 4096, 1,
            "Table, 70B: KV cache at 4K context", "表格，70B：4K 上下文的 KV Cache",
            "Too high by about 15×. " + _GQA70_EN + " 4,096 tokens take 1.34 GB (1.25 GiB). Even with "
            "multi-head attention (64 KV heads) it would be 10.74 GB (10 GiB); 20 is exactly the GiB figure of "
            "MHA at 4 B per element (2 × 80 × 64 × 128 × 4,096 × 4 B = 20 GiB): GQA ignored and the bytes doubled.",
            "约高估 15 倍。" + _GQA70_ZH + "4096 个 Token 为 1.34 GB（1.25 GiB）。即使按多头注意力（64 个 KV 头）"
            "计算也只有 10.74 GB（10 GiB）；20 恰好是 MHA 且每个元素 4 字节时的 GiB 数"
            "（2 × 80 × 64 × 128 × 4096 × 4 字节 = 20 GiB）：忽略了 GQA，字节数又翻了一倍。"),
        fig("table_70b_kv_32k", "3.2", "160 GB", 160, LLAMA2_70B, "kv_per_request", 32768, 1,
            "Table, 70B: KV cache at 32K context", "表格，70B：32K 上下文的 KV Cache",
            "Too high by about 15×. " + _GQA70_EN + " 32,768 tokens take 10.74 GB (10 GiB); 85.9 GB even "
            "with multi-head attention; 160 is MHA at 4 B per element, in GiB (8 × the 4K figure)." + _CTX4K_EN,
            "约高估 15 倍。" + _GQA70_ZH + "32768 个 Token 为 10.74 GB（10 GiB）；即使按多头注意力也只有 85.9 GB；160 是 MHA、每元素 4 字节时的 GiB 数（4K 数值的 8 倍）。"
            + _CTX4K_ZH),
    ]


def computed_bytes(fig: CourseFigure, *, kv_cache_dtype: str = "auto", dtype: str = "float16") -> float:
    """The calculator's value for ``fig``: whole model (TP 1), ``dtype`` weights, unquantized.

    weights: every parameter × bytes per element (:func:`calc.sizing.scenario.model_numbers`).
    KV: ``requests`` × ``context_tokens`` × KV bytes per token, exact tokens (block size 1), with
    sliding-window layers capped at their window (none of the course's Llama-2 models has one).

    >>> f = {f.key: f for f in course_figures()}["table_70b_kv_4k"]
    >>> computed_bytes(f), computed_bytes(f, kv_cache_dtype="fp8")   # 2·80·8·128·4096·2 B; FP8 halves it
    (1342177280.0, 671088640.0)
    """
    n = model_numbers(get_model(fig.model_id), dtype=dtype, quantization="none", kv_cache_dtype=kv_cache_dtype)
    if fig.quantity == "weights":
        return float(n.weights_total_bytes)
    if fig.quantity not in QUANTITIES or fig.context_tokens is None:
        raise ValueError(f"figure {fig.key!r}: quantity {fig.quantity!r} with context_tokens {fig.context_tokens}")
    per_request = mem.kv_bytes_per_sequence(
        context_tokens=fig.context_tokens,
        kv_bytes_per_token_full=n.kv_bytes_per_token_per_head_full * n.num_kv_heads,
        kv_bytes_per_token_sliding=n.kv_bytes_per_token_per_head_sliding * n.num_kv_heads,
        sliding_window=n.sliding_window, max_num_batched_tokens=1, block_size=1)
    requests = fig.requests if fig.quantity == "kv_total" else 1
    return float(per_request) * requests
