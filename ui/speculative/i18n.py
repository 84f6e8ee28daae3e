"""Strings of the speculative-decoding view, English and Chinese (merged into ui.i18n)."""

from __future__ import annotations

EN: dict[str, str] = {
    "sd.checks.title": "How close to real servers: published speculative-decoding runs",
    "sd.checks.caption": "Each published run is asked the way it was measured (its model, GPU, batch, method and k, "
                         "with its measured acceptance length, so the check is of the step's physics: verification and "
                         "drafting). Median |error| of TPOT {all} over {n} runs. Rows and sources: "
                         "bench/data/speculative_decoding.jsonl, asked by bench/speculative_check.py.",
    "nav.speculative": "Speculative decoding",
    "sd.page_title": "Speculative decoding: speed-up vs batch size",
    "sd.intro": "{model} on {gpu}, context {ctx} tokens. Each step the drafter proposes k tokens, the target verifies "
                "them in one forward and keeps the accepted ones plus one. At batch 1 the verify costs about a decode "
                "step; as the batch grows the (k + 1)·B verified tokens add compute that a plain decode step does not "
                "have, while reading the weights and the KV cache costs both the same: the gain shrinks where that "
                "compute dominates (what it does here: under the cards).",
    "sd.outcome.reverses": "Here the speed-up goes from {s1}× at batch 1 to below 1 from batch {cross}: the verify's "
                           "extra compute outweighs what the accepted drafts save.",
    "sd.outcome.beyond_fit": "Here the speed-up stays at {range} up to the {pool} requests the KV pool "
                             "holds; it falls below 1 only from batch {cross}, which does not fit.",
    "sd.outcome.memory_bound": "Here the speed-up stays at {range} up to batch {top} and never falls "
                               "below 1 (up to {last}): at batch {top} the verify still spends longer reading the "
                               "weights and the KV cache ({mem_ms} ms a step, the KV cache {kv_ms} ms) than computing "
                               "({compute_ms} ms), and a plain decode step reads the same.",
    "sd.outcome.shrinks": "Here the speed-up goes from {s1}× at batch 1 to {s_top}× at batch {top} and never falls "
                          "below 1 (up to {last}): at batch {top} the verify's compute ({compute_ms} ms a step) "
                          "outweighs reading the weights and the KV cache ({mem_ms} ms).",
    "ctl.spec_on": "Speculative decoding",
    "ctl.spec_on.help": "vLLM's --speculative-config: each step drafts k tokens and verifies them in one forward. "
                        "The drafter's method, k and acceptance appear when on (see the speculative decoding page).",
    "ctl.spec_method": "Drafter (vLLM method)",
    "ctl.spec_method.help": "ngram: prompt lookup on the CPU; eagle / eagle3: one extra decoder layer fed with the "
                            "target's hidden states; mtp: the model's own multi-token-prediction layer.",
    "ctl.spec_k": "Draft tokens per step (num_speculative_tokens)",
    "ctl.spec_k.help": "k in vLLM's --speculative-config. More drafts: more tokens when they are accepted, more "
                       "verify work always.",
    "ctl.spec_acceptance": "Acceptance per draft token",
    "ctl.spec_acceptance.help": "Probability each draft token is accepted (i.i.d.). Published: EAGLE-3 on Llama-3.1-8B "
                                "chat ≈ 0.77 at the first position (vLLM issue #20780); DeepSeek-V3 MTP 0.85–0.90; n-gram on "
                                "chat ≈ 0.27 (TensorRT-LLM), far more on code edits and summaries.",
    "sd.published": "Published default for {method} at k = {k}: {tau} tokens per step (first draft accepted {a1}); "
                    "the sources are in calc/data/speculative.json.",
    "sd.metric.tau": "Tokens per step τ",
    "sd.metric.speedup1": "Speed-up at batch 1",
    "sd.metric.cross": "No longer pays from batch",
    "sd.metric.cross.none": "none up to {n}",
    "sd.metric.cross.fit": "The KV pool holds {n} requests of this context: larger batches do not fit, so the "
                           "sweep beyond them is the roofline only.",
    "sd.kv_full": "KV cache full ({n})",
    "sd.metric.memory": "Drafter memory",
    "sd.trace.speedup": "Speed-up",
    "sd.trace.plain": "Without speculation",
    "sd.trace.spec": "With speculation",
    "sd.hover": "batch %{x}<br>speed-up %{y:.2f}×",
    "sd.hover.tpot": "batch %{x}<br>TPOT %{y:.2f} ms",
    "sd.break_even": "Break-even",
    "sd.fig.title": "TPOT speed-up from speculative decoding vs batch size",
    "sd.fig.x": "Running batch (sequences)",
    "sd.fig.y": "Speed-up (TPOT without / with speculation)",
    "sd.fig2.title": "Time per output token",
    "sd.fig2.y": "TPOT (ms)",
    "sd.caption": "Steady decoding at the context above; the same step physics as the closed-loop estimate "
                  "(calc.timing.speculative). Drafting costs: its roofline time plus launch and bookkeeping times "
                  "fitted to vLLM's batch-1 measurements.",
    "sd.why.tau.title": "Tokens per step",
    "sd.why.tau.takeaway": "Each step gains {tau} tokens on average out of at most {k} + 1.",
    "sd.why.tau.note": "i.i.d. acceptance; real drafters accept early positions more often (per-position acceptance "
                       "via the CLI's position_acceptance).",
    "sd.why.step.title": "Time per output token at batch 1",
    "sd.why.step.takeaway": "At batch 1 speculation cuts TPOT {x}-fold: the verify reads the weights once for k + 1 "
                            "tokens.",
    "sd.why.step.note": "At large batches the verify's FLOPs grow (k + 1)-fold while a decode step's do not; where "
                        "they outweigh reading the weights and the KV cache, the speed-up falls below 1.",
}

ZH: dict[str, str] = {
    "sd.checks.title": "离真实服务器有多近：投机解码的公开测量",
    "sd.checks.caption": "每条公开测量都按它的测量方式提问（模型、GPU、批大小、方法与 k，并用它实测的接受长度，"
                         "所以检查的是每步的物理：验证与草稿）。{n} 条测量的 TPOT |误差| 中位数为 {all}。"
                         "测量与出处：bench/data/speculative_decoding.jsonl，由 bench/speculative_check.py 提问。",
    "nav.speculative": "投机解码",
    "sd.page_title": "投机解码：加速比与批大小",
    "sd.intro": "{model}，{gpu}，上下文 {ctx} 个 token。每一步由草稿器提出 k 个 token，目标模型一次前向验证，保留被接受的 token 再加一个。"
                "批大小为 1 时验证的代价约等于一次解码步；批越大，(k + 1)·B 个验证 token 带来不使用投机解码时没有的计算量，"
                "而读取权重和 KV Cache 的代价两者相同：这部分计算占主导时收益缩小（此处的情况见指标卡下方）。",
    "sd.outcome.reverses": "此处加速比从批大小 1 的 {s1}× 下降，批大小 {cross} 起低于 1：验证多出的计算超过了被接受的草稿带来的收益。",
    "sd.outcome.beyond_fit": "此处在 KV Cache 池能容纳的 {pool} 个请求以内，加速比保持在 {range}；"
                             "要到批大小 {cross} 才低于 1，而那样的批放不下。",
    "sd.outcome.memory_bound": "此处加速比在批大小 {top} 以内保持在 {range}，直到 {last} 都不低于 1："
                               "批大小 {top} 时验证读取权重和 KV Cache 的时间（每步 {mem_ms} ms，其中 KV Cache {kv_ms} ms）"
                               "仍长于计算时间（{compute_ms} ms），而不使用投机解码时每步读取的数据相同。",
    "sd.outcome.shrinks": "此处加速比从批大小 1 的 {s1}× 变为批大小 {top} 的 {s_top}×，直到 {last} 都不低于 1："
                          "批大小 {top} 时验证的计算（每步 {compute_ms} ms）超过读取权重和 KV Cache 的时间（{mem_ms} ms）。",
    "ctl.spec_on": "投机解码",
    "ctl.spec_on.help": "vLLM 的 --speculative-config：每一步起草 k 个 token 并在一次前向中验证。打开后显示草稿方法、k 与接受率"
                        "（详见投机解码页面）。",
    "ctl.spec_method": "草稿方法（vLLM method）",
    "ctl.spec_method.help": "ngram：在 CPU 上查找提示词；eagle / eagle3：一个额外的解码层，输入目标模型的隐藏状态；"
                            "mtp：模型自带的多 token 预测层。",
    "ctl.spec_k": "每步草稿 token 数（num_speculative_tokens）",
    "ctl.spec_k.help": "vLLM --speculative-config 中的 k。草稿越多，被接受时得到的 token 越多，但验证工作总是更多。",
    "ctl.spec_acceptance": "每个草稿 token 的接受率",
    "ctl.spec_acceptance.help": "每个草稿 token 被接受的概率（独立同分布）。公开数据：Llama-3.1-8B 对话上 EAGLE-3 第一个位置约 0.77"
                                "（vLLM issue #20780）；DeepSeek-V3 MTP 为 0.85–0.90；对话上 n-gram 约 0.27（TensorRT-LLM），"
                                "代码修改与摘要则高得多。",
    "sd.published": "{method} 在 k = {k} 时的公开默认值：每步 {tau} 个 token（第一个草稿的接受率 {a1}）；"
                    "来源见 calc/data/speculative.json。",
    "sd.metric.tau": "每步 token 数 τ",
    "sd.metric.speedup1": "批大小 1 的加速比",
    "sd.metric.cross": "从此批大小起不再划算",
    "sd.metric.cross.none": "{n} 以内都划算",
    "sd.metric.cross.fit": "KV Cache 池只能容纳 {n} 个此上下文长度的请求：更大的批放不下，超出部分只是屋顶线推算。",
    "sd.kv_full": "KV Cache 已满（{n}）",
    "sd.metric.memory": "草稿器显存",
    "sd.trace.speedup": "加速比",
    "sd.trace.plain": "不使用投机解码",
    "sd.trace.spec": "使用投机解码",
    "sd.hover": "批大小 %{x}<br>加速比 %{y:.2f}×",
    "sd.hover.tpot": "批大小 %{x}<br>TPOT %{y:.2f} ms",
    "sd.break_even": "持平",
    "sd.fig.title": "投机解码的 TPOT 加速比与批大小",
    "sd.fig.x": "运行中的批（序列数）",
    "sd.fig.y": "加速比（不用 / 使用投机解码的 TPOT）",
    "sd.fig2.title": "单 Token 延迟（TPOT）",
    "sd.fig2.y": "TPOT（毫秒）",
    "sd.caption": "在上述上下文长度下的稳态解码；与闭环估计使用同一套步长物理模型（calc.timing.speculative）。"
                  "草稿代价：屋顶线时间加上按 vLLM 批大小 1 实测拟合的启动与簿记时间。",
    "sd.why.tau.title": "每步 token 数",
    "sd.why.tau.takeaway": "每一步平均得到 {tau} 个 token，最多 {k} + 1 个。",
    "sd.why.tau.note": "假设接受独立同分布；实际草稿器在靠前的位置接受率更高（命令行的 position_acceptance 可逐位置给出）。",
    "sd.why.step.title": "批大小 1 时的单 Token 延迟",
    "sd.why.step.takeaway": "批大小 1 时投机解码把 TPOT 缩短为原来的 1/{x}：验证一次读权重即处理 k + 1 个 token。",
    "sd.why.step.note": "批很大时验证的计算量增加到 (k + 1) 倍，而解码步不变；当它超过读取权重和 KV Cache 的时间时，加速比降到 1 以下。",
}
