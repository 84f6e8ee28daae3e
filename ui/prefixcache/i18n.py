"""Strings of the prefix-cache page, English and Chinese (same keys, same placeholders); merged into
:data:`ui.i18n.EN` / :data:`ui.i18n.ZH`."""

from __future__ import annotations

EN: dict[str, str] = {
    "nav.prefix_cache": "Prefix cache",
    "pc.page_title": "Prefix caching: what the cache serves, and when it forgets",
    "pc.intro": "{model} on {gpu} (TP {tp}), {input} prompt tokens, {output} output tokens. vLLM keeps every full "
                "KV block of {bs} tokens under the hash of its prefix; a request that starts with the same tokens "
                "computes only the rest. The cache is the KV pool the running requests leave, forgetting the least "
                "recently used blocks first: with more distinct prefixes or more load, less stays.",
    "ctl.pc_kind": "Reuse in the workload",
    "ctl.pc_kind.help": "Shared prefix: every prompt starts with one of N prefixes (system prompt, few-shot examples, "
                        "a RAG document). Multi-turn chat: each turn re-sends the conversation so far. None: random "
                        "tokens, as benchmarks send.",
    "opt.pc_kind.none": "None",
    "pc.inputs.title": "Prefix reuse",
    "pc.mem.result": "**Shared prefixes:** with prefix caching vLLM holds each of the {n} prefixes once ({p} of the "
                     "{ctx} tokens of a request, whole blocks) and every request that starts with it uses the same "
                     "blocks: **{fit} requests fit** instead of {alone}; {conc} of them hold {used} of KV instead of "
                     "{used_alone}. (Worst case: every prefix in use.)",
    "pc.mem.chat": "A chat's context is its own: running requests share no blocks, so the KV pool holds as many "
                   "requests as without reuse (the prefix-cache page shows the hit rate).",
    "pc.mem.off": "Prefix caching is off: every request holds its own copy of the prefix.",
    "pc.mem.sliding": "Shared prefixes with sliding-window layers are not modelled here yet (their blocks leave the "
                      "window); the count above is without sharing.",
    "pc.mem.why.title": "Requests that fit with shared prefixes",
    "pc.mem.why.alone": "without sharing",
    "pc.mem.why.take": "The {p}-token prefix ({s}) is held once, so each further request costs only its own part: "
                       "{per} less the prefix.",
    "pc.mem.why.note": "N prefixes of S bytes each held once (vLLM counts a cached block's users), R the KV of one "
                       "request of the context; with fewer requests than prefixes each may have its own (⌊pool / R⌋).",
    "pc.what.frontier": "frontier",
    "pc.what.load_test": "run",
    "pc.what.planner": "plan",
    "pc.with_spec": "Prefix reuse and speculative decoding are not modelled together yet: this {what} uses "
                    "speculative decoding and leaves the prefix cache out.",
    "ctl.pc_reuse": "Reuse in the workload",
    "ctl.pc_reuse.help": "Shared prefix or multi-turn chat: the prompt tokens found in vLLM's prefix cache are not "
                         "prefilled (the prefix-cache page shows the hit rate). None: random tokens, as benchmarks send.",
    "opt.pc_kind.shared": "Shared prefix",
    "opt.pc_kind.chat": "Multi-turn chat",
    "ctl.pc_prefix_len": "Shared prefix (tokens)",
    "ctl.pc_prefix_len.help": "Tokens at the start of the prompt shared with other requests (at most the prompt).",
    "ctl.pc_prefixes": "Distinct prefixes",
    "ctl.pc_prefixes.help": "How many different prefixes the requests pick from (each one at random).",
    "ctl.pc_turns": "Turns per conversation",
    "ctl.pc_turns.help": "Each turn sends the conversation so far; the prompt length of the sidebar is the user's new "
                         "tokens per turn.",
    "ctl.pc_rate": "Arrival rate (req/s)",
    "ctl.pc_rate.help": "Requests per second (Poisson) for the cards and the marked point.",
    "ctl.pc_caching": "Caching on",
    "ctl.pc_caching.help": "vLLM V1: on by default (--enable-prefix-caching / --no-enable-prefix-caching).",
    "ctl.pc_simulate": "Check with the simulator",
    "ctl.pc_simulate.help": "Run 1,500 requests block by block through vLLM's scheduler and LRU free-block queue at "
                            "the chosen point (a second or two).",
    "pc.metric.hit": "Prefix cache hit rate",
    "pc.metric.hit.help": "Share of prompt tokens served from the cache instead of computed.",
    "pc.metric.uncached": "Prefill per request",
    "pc.metric.held": "Kept in the cache",
    "pc.metric.held.help": "Expected prefixes (conversations) whose blocks stay cached at this load.",
    "pc.metric.ttft": "Mean TTFT",
    "pc.metric.vs_off": "{delta} vs no cache",
    "pc.tokens": "{n} tokens",
    "pc.of": "{k} of {n}",
    "pc.unstable": "At {rate} req/s the engine cannot keep up (past capacity): no steady-state TTFT.",
    "pc.prefix_cut": "The shared prefix is cut to the prompt length ({n} tokens).",
    "pc.too_long": "The last turn ({n} tokens) is longer than max_model_len ({mml}): fewer turns or shorter turns.",
    "pc.fig.hit_title": "Hit rate against distinct prefixes, light to heavy load",
    "pc.fig.hit_x": "Distinct shared prefixes (log)",
    "pc.fig.hit_x_chat": "Conversations in flight (log)",
    "pc.fig.hit_y": "Hit rate (%)",
    "pc.fig.prefixes": "prefixes",
    "pc.fig.conversations": "conversations",
    "pc.fig.load": "{rate} req/s ({r} running)",
    "pc.fig.simulated": "Simulator (block by block)",
    "pc.fig.ttft_title": "TTFT against the arrival rate, with and without the cache",
    "pc.fig.rate_x": "Arrival rate (req/s, log)",
    "pc.fig.ttft_y": "TTFT (ms, log)",
    "pc.fig.on_mean": "Cache: mean",
    "pc.fig.on_p95": "Cache: P95",
    "pc.fig.off_mean": "No cache: mean",
    "pc.fig.off_p95": "No cache: P95",
    "pc.caption.hit": "Each line is one load; a dashed vertical line marks how many prefixes the pool left by that "
                      "load holds. Past it, least-recently-used eviction drops prefixes before they come back.",
    "pc.caption.ttft": "Where a line stops, the engine is past capacity. The cache moves that wall to the right: "
                       "fewer prompt tokens to compute per request.",
    "pc.checks.title": "How close to real servers: published runs with prefix reuse",
    "pc.checks.caption": "Each published run is asked the way it was run (its GPU, model, vLLM settings, arrivals and "
                         "lengths). Median |error| {all} over {n} values; {medium} over the {nm} of medium confidence. "
                         "The cache's effect itself (with the cache ÷ without, at the same rate) is within {effect} "
                         "(median of {ne}). Most of the error is the engine on those hosts (vLLM 0.2 in 2023, a V1 "
                         "prototype of October 2024 on an L40S, 4-bit weights on an RTX 4090), not the cache; the target is "
                         "20\u00a0%. Rows and sources: bench/data/prefix_cache_measurements.jsonl, asked by "
                         "bench/prefix_cache_measured.py.",
    "pc.sim_note": "Simulator at {rate} req/s: hit rate {hit}, mean TTFT {ttft} ms, P95 {p95} ms (analytic: {ahit}, "
                   "{attft} ms, {ap95} ms).",
    "pc.why.found.title": "Why {pct} of prompt tokens come from the cache",
    "pc.why.found.takeaway": "Only full blocks of {bs} tokens are cached and the last prompt token is always "
                             "computed, so a prefix is found rounded down to a block.",
    "pc.why.found.note": "p is the chance a request finds its prefix still cached (next panel); I the mean prompt.",
    "pc.why.lru.title": "Why about {held} of {n} prefixes stay cached",
    "pc.why.lru.takeaway": "The pool left by the running requests holds about {fit} prefixes; past that the hit rate "
                           "falls roughly as that count over the number of prefixes.",
    "pc.why.lru.note": "Che's approximation of an LRU cache: u is the private tail each request leaves cached (it "
                       "is never asked again, but takes room), T_c the requests a block survives.",
    "pc.why.ttft.title": "Why TTFT is {on} ms instead of {off} ms",
    "pc.why.ttft.takeaway": "The prompt's cached tokens cost only the attention that reads them; the prefill "
                            "FLOPs and the token budget go to the uncached rest.",
    "pc.why.ttft.note": "The fixed API-server and tokenizer time (about 50 ms by default) does not shrink: with a "
                        "small model the cut in TTFT is smaller than the cut in prefill.",
}

ZH: dict[str, str] = {
    "nav.prefix_cache": "前缀缓存",
    "pc.page_title": "前缀缓存：缓存能提供多少，又何时会遗忘",
    "pc.intro": "{model}，{gpu}（TP {tp}），输入 {input} 个 token，输出 {output} 个 token。vLLM 把每个满的 {bs} token "
                "KV 块按其前缀的哈希保存；以相同 token 开头的请求只计算其余部分。缓存就是运行中请求剩下的 KV 池，"
                "最久未使用的块最先被淘汰：不同前缀越多、负载越高，留下的越少。",
    "ctl.pc_kind": "负载中的复用",
    "ctl.pc_kind.help": "共享前缀：每个提示以 N 个前缀之一开头（系统提示、少样本示例、RAG 文档）。多轮对话：每轮重新发送"
                        "到目前为止的对话。无：随机 token，与基准测试一致。",
    "opt.pc_kind.none": "无",
    "pc.inputs.title": "前缀复用",
    "pc.mem.result": "**共享前缀**：开启前缀缓存后，vLLM 对 {n} 个前缀各只保存一份（每个请求 {ctx} 个 token 中的 {p} 个，按整块计），"
                     "以同一前缀开头的请求共用这些块：**可容纳 {fit} 个请求**，而不共享时为 {alone} 个；其中 {conc} 个请求占用 "
                     "{used} KV，不共享时为 {used_alone}。（最坏情况：所有前缀都在使用中。）",
    "pc.mem.chat": "对话的上下文各不相同：运行中的请求不共享块，KV 池容纳的请求数与不复用时相同（前缀缓存页显示命中率）。",
    "pc.mem.off": "前缀缓存已关闭：每个请求各自保存一份前缀。",
    "pc.mem.sliding": "含滑动窗口层的共享前缀此处尚未建模（这些块会移出窗口）；上面的数量不计共享。",
    "pc.mem.why.title": "共享前缀时可容纳的请求数",
    "pc.mem.why.alone": "不共享",
    "pc.mem.why.take": "{p} 个 token 的前缀（{s}）只保存一份，因此每多一个请求只需其自身部分：{per} 减去前缀。",
    "pc.mem.why.note": "N 个前缀各 S 字节、只保存一份（vLLM 统计缓存块的使用者），R 为一个该上下文请求的 KV；请求数少于前缀数时，"
                       "每个请求可能各用各的前缀（⌊池 / R⌋）。",
    "pc.what.frontier": "前沿曲线",
    "pc.what.load_test": "模拟",
    "pc.what.planner": "规划",
    "pc.with_spec": "前缀复用与投机解码尚未联合建模：此处{what}使用投机解码，不计前缀缓存。",
    "ctl.pc_reuse": "负载中的复用",
    "ctl.pc_reuse.help": "共享前缀或多轮对话：在 vLLM 前缀缓存中找到的提示 token 不再预填充（前缀缓存页显示命中率）。"
                         "无：随机 token，与基准测试一致。",
    "opt.pc_kind.shared": "共享前缀",
    "opt.pc_kind.chat": "多轮对话",
    "ctl.pc_prefix_len": "共享前缀（token）",
    "ctl.pc_prefix_len.help": "提示开头与其他请求共享的 token 数（不超过提示长度）。",
    "ctl.pc_prefixes": "不同前缀数",
    "ctl.pc_prefixes.help": "请求从多少个不同前缀中随机选取。",
    "ctl.pc_turns": "每段对话的轮数",
    "ctl.pc_turns.help": "每轮发送到目前为止的对话；侧栏的提示长度为用户每轮新增的 token 数。",
    "ctl.pc_rate": "到达速率（请求/秒）",
    "ctl.pc_rate.help": "每秒请求数（泊松），用于指标卡和标记点。",
    "ctl.pc_caching": "开启缓存",
    "ctl.pc_caching.help": "vLLM V1 默认开启（--enable-prefix-caching / --no-enable-prefix-caching）。",
    "ctl.pc_simulate": "用模拟器核对",
    "ctl.pc_simulate.help": "在所选点让 1,500 个请求逐块经过 vLLM 的调度器和 LRU 空闲块队列（一两秒）。",
    "pc.metric.hit": "前缀缓存命中率",
    "pc.metric.hit.help": "由缓存提供而无需计算的提示 token 比例。",
    "pc.metric.uncached": "每个请求的预填充",
    "pc.metric.held": "留在缓存中",
    "pc.metric.held.help": "在此负载下其块仍被缓存的前缀（对话）的期望数量。",
    "pc.metric.ttft": "平均 TTFT",
    "pc.metric.vs_off": "{delta}（相对无缓存）",
    "pc.tokens": "{n} 个 token",
    "pc.of": "{n} 个中的 {k} 个",
    "pc.unstable": "在 {rate} 请求/秒时引擎跟不上（超出容量）：没有稳态 TTFT。",
    "pc.prefix_cut": "共享前缀被截到提示长度（{n} 个 token）。",
    "pc.too_long": "最后一轮（{n} 个 token）超过 max_model_len（{mml}）：请减少轮数或缩短每轮。",
    "pc.fig.hit_title": "命中率与不同前缀数的关系（由轻到重的负载）",
    "pc.fig.hit_x": "不同共享前缀数（对数）",
    "pc.fig.hit_x_chat": "进行中的对话数（对数）",
    "pc.fig.hit_y": "命中率（%）",
    "pc.fig.prefixes": "个前缀",
    "pc.fig.conversations": "段对话",
    "pc.fig.load": "{rate} 请求/秒（{r} 个运行中）",
    "pc.fig.simulated": "模拟器（逐块）",
    "pc.fig.ttft_title": "TTFT 与到达速率的关系：有缓存与无缓存",
    "pc.fig.rate_x": "到达速率（请求/秒，对数）",
    "pc.fig.ttft_y": "TTFT（毫秒，对数）",
    "pc.fig.on_mean": "有缓存：平均",
    "pc.fig.on_p95": "有缓存：P95",
    "pc.fig.off_mean": "无缓存：平均",
    "pc.fig.off_p95": "无缓存：P95",
    "pc.caption.hit": "每条线代表一种负载；虚线竖线标出该负载剩下的池能容纳多少前缀。超过它，最久未使用淘汰会在前缀再次"
                      "到来之前把它丢掉。",
    "pc.caption.ttft": "线条终止处，引擎已超出容量。缓存把这堵墙推向右边：每个请求要计算的提示 token 更少。",
    "pc.checks.title": "离真实服务器有多近：有前缀复用的公开测量",
    "pc.checks.caption": "每条公开测量都按它的运行方式提问（GPU、模型、vLLM 设置、到达方式与长度）。{n} 个数值的 |误差| "
                         "中位数为 {all}；其中 {nm} 个中等可信度的数值为 {medium}。缓存本身的效果（同一速率下开缓存 ÷ "
                         "不开）相差在 {effect} 以内（{ne} 个的中位数）。误差大多来自这些机器上的引擎（2023 年的 vLLM "
                         "0.2、2024 年 L40S 上的早期 V1 原型、RTX 4090 上的 4 位权重），而不是缓存；目标是 20\u00a0%。测量与出处："
                         "bench/data/prefix_cache_measurements.jsonl，由 bench/prefix_cache_measured.py 提问。",
    "pc.sim_note": "模拟器在 {rate} 请求/秒：命中率 {hit}，平均 TTFT {ttft} 毫秒，P95 {p95} 毫秒（解析模型：{ahit}，"
                   "{attft} 毫秒，{ap95} 毫秒）。",
    "pc.why.found.title": "为什么 {pct} 的提示 token 来自缓存",
    "pc.why.found.takeaway": "只有满的 {bs} token 块会被缓存，且提示的最后一个 token 总要计算，所以前缀按块向下取整被找到。",
    "pc.why.found.note": "p 是请求发现其前缀仍在缓存中的概率（下一面板）；I 是平均提示长度。",
    "pc.why.lru.title": "为什么 {n} 个前缀中约 {held} 个留在缓存中",
    "pc.why.lru.takeaway": "运行中请求剩下的池约能容纳 {fit} 个前缀；超过后，命中率大致按该数除以前缀数下降。",
    "pc.why.lru.note": "LRU 缓存的 Che 近似：u 是每个请求留在缓存中的私有尾部（不会再被请求，但占空间），T_c 是一个块能"
                       "存活的请求数。",
    "pc.why.ttft.title": "为什么 TTFT 是 {on} 毫秒而不是 {off} 毫秒",
    "pc.why.ttft.takeaway": "提示中已缓存的 token 只花读取它们的注意力；预填充的 FLOPs 和 token 预算都用于未缓存的其余部分。",
    "pc.why.ttft.note": "固定的 API 服务器和分词时间（默认约 50 毫秒）不会缩短：对小模型，TTFT 的缩减小于预填充的缩减。",
}
