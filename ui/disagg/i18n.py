"""Strings of the disaggregation page, English and Chinese (merged into :data:`ui.i18n.EN` / ``ZH``)."""

from __future__ import annotations

EN: dict[str, str] = {
    "nav.disagg": "P/D disaggregation",
    "dg.title": "When does prefill/decode disaggregation pay?",
    "dg.lengths_section": "Lengths",
    "dg.intro": "{model} on {gpu} (TP {tp}), {i} prompt + {o} output tokens on average as asked (sidebar; their spread "
                "in Lengths above; the models take them as the load test draws them, cut to max_model_len). The same GPUs either run "
                "colocated engines (prefill and decode share every step) or are split into P prefill and D decode "
                "instances (vLLM --kv-transfer-config, xPyD): each prompt's KV moves over the link, decode steps "
                "carry no prefill. The highest request rate each serves within the SLA (TTFT at {stat}, TPOT mean).",
    "ctl.dg_gpus": "GPUs compared",
    "ctl.dg_gpus.help": "The GPU count at which the P:D splits are compared (the chart above shows every count).",
    "ctl.dg_link": "KV link",
    "ctl.dg_link.help": "The link a prompt's KV crosses from prefill to decode: bandwidth per GPU and latency, "
                        "each preset with its source (calc/data/kv_links.json), at 80 % of line rate.",
    "ctl.dg_bw_gb_s": "Link bandwidth (GB/s, as achieved)",
    "ctl.dg_bw_gb_s.help": "Your own measured KV transfer bandwidth per GPU, one direction, GB = 10⁹ B. "
                           "Empty: the preset's.",
    "dg.bw_preset": "preset: {v}",
    "opt.dg_link.nvlink4": "NVLink 4 (same node)",
    "opt.dg_link.nvlink3": "NVLink 3 (same node)",
    "opt.dg_link.ib-ndr": "InfiniBand NDR 400 Gb/s",
    "opt.dg_link.ib-hdr": "InfiniBand HDR 200 Gb/s",
    "opt.dg_link.roce-200g": "RoCE 200 Gb/s",
    "opt.dg_link.ethernet-100g": "Ethernet 100 Gb/s",
    "opt.dg_link.ethernet-25g": "Ethernet 25 Gb/s",
    "dg.metric.colocated": "Colocated at {n} GPUs",
    "dg.metric.disagg": "Best xPyD at {n} GPUs",
    "dg.metric.gpus_needed": "GPUs for {rate} req/s: colocated · disaggregated",
    "dg.metric.rps": "{rate} req/s",
    "dg.metric.none": "none meets the SLA",
    "dg.metric.gpus_pair": "{co} · {dis}",
    "dg.verdict.pays": "At {n} GPUs disaggregation pays: {label} serves {dis} req/s within the SLA, colocated {co} req/s.",
    "dg.verdict.not": "At {n} GPUs disaggregation does not pay: colocated serves {co} req/s within the SLA, the best "
                      "split ({label}) {dis} req/s.",
    "dg.verdict.none": "At {n} GPUs neither arrangement meets the SLA (try a looser target or a larger GPU count).",
    "dg.verdict.no_split": "At {n} GPUs disaggregation does not pay: colocated serves {co} req/s within the SLA, and "
                           "no P:D split meets it at any rate: {why}",
    "dg.verdict.no_split.prefill": "a prefill instance's TTFT, with the KV transfer and the decode instance's first "
                                   "token, is over the target even without a queue (Why these numbers, below).",
    "dg.verdict.no_split.decode": "a decode instance's TPOT is over the target even at batch 1 (Why these numbers, "
                                  "below).",
    "dg.fig.frontier.title": "Requests/s within the SLA at the same GPU count",
    "dg.fig.frontier.x": "GPUs",
    "dg.fig.frontier.y": "Requests/s within the SLA",
    "dg.fig.colocated": "Colocated",
    "dg.fig.disagg": "Disaggregated (best P:D)",
    "dg.fig.rate": "Your rate",
    "dg.fig.splits.title": "Every P:D split of {n} GPUs",
    "dg.fig.splits.x": "Split (prefill : decode instances)",
    "dg.fig.splits.prefill": "Prefill pool limit (P × λp)",
    "dg.fig.splits.decode": "Decode pool limit (D × λd)",
    "dg.why.title": "Why these numbers",
    "dg.why.ttft": "**TTFT of a disaggregated request** = prefill queue + prefill on a prefill instance + KV transfer "
                   "+ the decode instance's next step. Transfer: t = α + n·t_d + I·b/B = {lat} + {nd} descriptors × {td} "
                   "(the KV connector posts one per block, layer and K/V) + {i} tokens × {b} per GPU ÷ "
                   "{bw} = **{x}**. The decode instance's first token: the proxy's second request + its API server + "
                   "{steps} steps (its own, and what is left of the step in flight: half a step for the mean, the "
                   "percentile's share of one at a percentile) = "
                   "**{first}**. "
                   "What is left of the {ttft} target is the prefill queue's: one prefill instance then carries "
                   "**λp = {lp} req/s**.",
    "dg.why.unloaded": "With no queue at all, a prefill instance's {what} is {pf}; "
                       "with the transfer {x} and the first token {first}: **{total}** against the {ttft} target, "
                       "{verdict}.",
    "dg.why.unloaded.what_mean": "mean TTFT",
    "dg.why.unloaded.what_q": "{q} TTFT (its prompt: the {q} prompt, {iq} tokens)",
    "dg.why.unloaded.over": "over it before any request waits, so no prefill instance carries any rate",
    "dg.why.unloaded.under": "the rest is what the prefill queue may take",
    "dg.why.decode": "**A decode instance** runs only decodes: its batch R holds each request for O = {o} steps, "
                     "R = λ·O·T(R) (Little). The largest batch whose step stays within {tpot} (and that its KV pool "
                     "holds) is R = {r}, so one decode instance carries **λd = {ld} req/s**.",
    "dg.why.colocated": "**A colocated engine** prefills and decodes in the same steps: every prompt chunk makes "
                        "the running decodes' step longer (prefill interference). Within the same SLA one engine "
                        "carries **λc = {lc} req/s**, so {n} GPUs (⌊N/TP⌋ = {reps} engines) carry {co} req/s.",
    "dg.why.split": "**The best split** of N GPUs maximizes min(P·λp, D·λd): the pools must match. Disaggregation "
                    "pays when λp and λd together beat λc per GPU: when prefill interference costs colocated "
                    "engines a lot (long prompts, tight TPOT) and the transfer is small against the TTFT target.",
    "dg.why.sources": "Model: calc/traffic/disaggregation.py (the same step-time and memory functions as every page; "
                      "checked against the request simulator of P + D engines, within 15 % on means and P95). "
                      "Measurements: bench/data/disaggregation_measurements.jsonl (DistServe, OSDI'24; llm-d; "
                      "Anyscale's Ray Serve runs), each against the model in How close to real servers, below.",
    "dg.checks.title": "How close to real servers: published disaggregated and colocated runs",
    "dg.checks.caption": "Each published run is asked the way it was measured (its model, GPU, P:D split and TP, KV "
                         "link and connector, lengths, and its Poisson rate or closed loop of clients). The {nh} runs "
                         "added after the model was set (held out: never used to choose it): median |error| {held}; "
                         "all {n} scored runs {all}; the {nv} measured on vLLM itself (llm-d, Anyscale's Ray Serve; "
                         "no speed fitted) {vllm}. DistServe's 2023 engine is not vLLM: its speed is fitted on one "
                         "run ({fit}, marked fit and left out of the medians) and its other runs are checks. What "
                         "disaggregation itself changes (disaggregated ÷ colocated at the same concurrency, where the "
                         "engine's own speed error cancels) is within {ratio} (median of {nr}). Rows and sources: "
                         "bench/data/disaggregation_measurements.jsonl, asked by bench/disaggregation_report.py.",
    "dg.cli": "The same question on the command line:",
    "dg.unfit": "{model} on {gpu} at TP {tp}: the KV cache pool holds less than one request of these lengths.",
}

ZH: dict[str, str] = {
    "nav.disagg": "预填充/解码分离",
    "dg.title": "预填充/解码分离什么时候划算？",
    "dg.lengths_section": "长度",
    "dg.intro": "{model}，{gpu}（TP {tp}），平均 {i} 个提示词 token + {o} 个输出 token（侧栏设定值；其分布见上方“长度”；模型采用负载测试实际运行的长度，即截断到 max_model_len 之后的长度）。同样的 GPU 可以跑共置引擎"
                "（预填充和解码共用每一步），也可以拆成 P 个预填充实例和 D 个解码实例（vLLM --kv-transfer-config，xPyD）："
                "每个提示词的 KV 经链路传过去，解码步里没有预填充。比较的是各自在 SLA 内能承载的最高请求速率"
                "（TTFT 取 {stat}，TPOT 取均值）。",
    "ctl.dg_gpus": "比较的 GPU 数",
    "ctl.dg_gpus.help": "在这个 GPU 数下比较各种 P:D 划分（上面的图画出每个 GPU 数）。",
    "ctl.dg_link": "KV 链路",
    "ctl.dg_link.help": "提示词的 KV 从预填充传到解码所经的链路：每 GPU 带宽和延迟，每个预设都有出处"
                        "（calc/data/kv_links.json），按线速的 80% 计。",
    "ctl.dg_bw_gb_s": "链路带宽（GB/s，实测）",
    "ctl.dg_bw_gb_s.help": "你自己实测的每 GPU 单向 KV 传输带宽，GB = 10⁹ 字节。留空：用预设值。",
    "dg.bw_preset": "预设：{v}",
    "opt.dg_link.nvlink4": "NVLink 4（同一节点）",
    "opt.dg_link.nvlink3": "NVLink 3（同一节点）",
    "opt.dg_link.ib-ndr": "InfiniBand NDR 网络（400 Gb/s）",
    "opt.dg_link.ib-hdr": "InfiniBand HDR 网络（200 Gb/s）",
    "opt.dg_link.roce-200g": "RoCE 网络（200 Gb/s）",
    "opt.dg_link.ethernet-100g": "以太网 100 Gb/s",
    "opt.dg_link.ethernet-25g": "以太网 25 Gb/s",
    "dg.metric.colocated": "{n} 张 GPU 共置",
    "dg.metric.disagg": "{n} 张 GPU 最佳 xPyD",
    "dg.metric.gpus_needed": "承载 {rate} 请求/秒所需 GPU：共置 · 分离",
    "dg.metric.rps": "{rate} 请求/秒",
    "dg.metric.none": "没有满足 SLA 的",
    "dg.metric.gpus_pair": "{co} · {dis}",
    "dg.verdict.pays": "在 {n} 张 GPU 上分离划算：{label} 在 SLA 内承载 {dis} 请求/秒，共置 {co} 请求/秒。",
    "dg.verdict.not": "在 {n} 张 GPU 上分离不划算：共置在 SLA 内承载 {co} 请求/秒，最佳划分（{label}）{dis} 请求/秒。",
    "dg.verdict.none": "在 {n} 张 GPU 上两种方式都满足不了 SLA（放宽目标或增加 GPU 数试试）。",
    "dg.verdict.no_split": "在 {n} 张 GPU 上分离不划算：共置在 SLA 内承载 {co} 请求/秒，而任何 P:D 划分在任何速率下都"
                           "满足不了 SLA：{why}",
    "dg.verdict.no_split.prefill": "预填充实例的 TTFT 加上 KV 传输和解码实例的第一个 token，即使不排队也已超过目标（见下方"
                                   "“这些数字从哪来”）。",
    "dg.verdict.no_split.decode": "解码实例的 TPOT 即使在批量 1 时也已超过目标（见下方“这些数字从哪来”）。",
    "dg.fig.frontier.title": "同样 GPU 数下 SLA 内的请求速率",
    "dg.fig.frontier.x": "GPU 数",
    "dg.fig.frontier.y": "SLA 内的请求/秒",
    "dg.fig.colocated": "共置",
    "dg.fig.disagg": "分离（最佳 P:D）",
    "dg.fig.rate": "你的速率",
    "dg.fig.splits.title": "{n} 张 GPU 的每种 P:D 划分",
    "dg.fig.splits.x": "划分（预填充 : 解码实例）",
    "dg.fig.splits.prefill": "预填充池上限（P × λp）",
    "dg.fig.splits.decode": "解码池上限（D × λd）",
    "dg.why.title": "这些数字从哪来",
    "dg.why.ttft": "**分离部署下一个请求的 TTFT** = 预填充排队 + 在预填充实例上预填充 + KV 传输 + 解码实例的下一步。"
                   "传输：t = α + n·t_d + I·b/B = {lat} + {nd} 个描述符 × {td}（KV 连接器按每块、每层、K/V 各发一个）"
                   "+ {i} 个 token × 每 GPU {b} ÷ {bw} = **{x}**。解码实例出第一个 token："
                   "代理的第二次请求 + 它的 API 服务器 + {steps} 步（它自己的一步，加上正在进行那一步的剩余：均值取半步，百分位数取相应比例）= **{first}**。{ttft} 目标剩下的留给预填充排队：一个预填充实例因此承载 "
                   "**λp = {lp} 请求/秒**。",
    "dg.why.unloaded": "完全不排队时，预填充实例的 {what}为 {pf}；"
                       "加上传输 {x} 和第一个 token {first}：**{total}**，对照 {ttft} 目标，{verdict}。",
    "dg.why.unloaded.what_mean": "平均 TTFT",
    "dg.why.unloaded.what_q": "{q} TTFT（按 {q} 提示词，{iq} 个 token）",
    "dg.why.unloaded.over": "还没有请求排队就已超出，所以预填充实例承载不了任何速率",
    "dg.why.unloaded.under": "余下的才是预填充排队可用的时间",
    "dg.why.decode": "**解码实例**只做解码：批大小 R 让每个请求占 O = {o} 步，R = λ·O·T(R)（利特尔定律）。"
                     "步长不超过 {tpot}（且 KV 池放得下）的最大批是 R = {r}，所以一个解码实例承载 **λd = {ld} 请求/秒**。",
    "dg.why.colocated": "**共置引擎**在同一步里既预填充又解码：每个提示词分块都会拉长正在解码的那一步（预填充干扰）。"
                        "在同样的 SLA 内一个引擎承载 **λc = {lc} 请求/秒**，所以 {n} 张 GPU（⌊N/TP⌋ = {reps} 个引擎）"
                        "承载 {co} 请求/秒。",
    "dg.why.split": "**最佳划分**让 min(P·λp, D·λd) 最大：两个池要匹配。当 λp 和 λd 合起来按每 GPU 算胜过 λc 时分离就划算："
                    "预填充干扰对共置引擎代价大（长提示词、TPOT 目标紧），而传输时间相对 TTFT 目标很小。",
    "dg.why.sources": "模型：calc/traffic/disaggregation.py（和每个页面用同一套步长与显存函数；与 P + D 个引擎的请求级"
                      "模拟器对照，均值和 P95 相差在 15% 以内）。实测：bench/data/disaggregation_measurements.jsonl"
                      "（DistServe，OSDI'24；llm-d；Anyscale 的 Ray Serve 测量），每条与模型的对照见下方“离真实服务器有多近”。",
    "dg.checks.title": "离真实服务器有多近：分离与共置部署的公开测量",
    "dg.checks.caption": "每条公开测量都按它的测量方式提问（模型、GPU、P:D 划分与 TP、KV 链路与连接器、长度，以及泊松"
                         "速率或闭环的客户端数）。模型定下之后才加入的 {nh} 条（留出：从未用来选择模型）|误差| 中位数为 "
                         "{held}；全部 {n} 条为 {all}；在 vLLM 上测的 {nv} 条（llm-d、Anyscale 的 Ray Serve；不拟合"
                         "速度）为 {vllm}。DistServe 2023 年的引擎不是 vLLM：它的速度只用一条拟合（{fit}，标为拟合，"
                         "不计入中位数），其余各条都是检验。分离本身带来的变化（同一并发下分离 ÷ 共置，引擎自身速度的"
                         "误差在比值里约掉）相差在 {ratio} 以内（{nr} 个的中位数）。测量与出处："
                         "bench/data/disaggregation_measurements.jsonl，由 bench/disaggregation_report.py 提问。",
    "dg.cli": "命令行上的同一个问题：",
    "dg.unfit": "{model} 在 {gpu} 上（TP {tp}）：KV Cache 池装不下一个这种长度的请求。",
}
