"""Strings of the load-test page, English and Chinese (same keys, same placeholders); merged into
:data:`ui.i18n.EN` / :data:`ui.i18n.ZH`."""

from __future__ import annotations

EN: dict[str, str] = {
    "nav.load_test": "Load test (P50/P95/P99)",
    "ctl.lt_arrival": "Arrivals",
    "ctl.lt_arrival.help": "Poisson: independent users at a mean rate; Gamma: bursty (coefficient of variation below); "
                           "closed loop: C clients, each sends its next request when the previous returns (vllm bench "
                           "--max-concurrency); all at once: every request at t = 0.",
    "opt.lt_arrival.poisson": "Poisson (independent users)",
    "opt.lt_arrival.gamma": "Gamma (bursty)",
    "opt.lt_arrival.closed": "Closed loop (C clients)",
    "opt.lt_arrival.burst": "All at once (t = 0)",
    "opt.lengths.fixed": "Fixed",
    "opt.lengths.uniform": "Uniform",
    "opt.lengths.lognormal": "Lognormal",
    "ctl.lt_cv": "Burstiness (CV of gaps)",
    "ctl.lt_cv.help": "Gamma arrivals: coefficient of variation of the time between requests. 1 = Poisson, "
                      "above 1 = bursts and lulls.",
    "lt.settings": "Load-test settings: arrivals, rate, lengths, SLA",
    "ctl.lt_clients": "Clients (closed loop)",
    "ctl.lt_clients.help": "Closed loop: requests in flight at once, all started together. The sidebar's "
                           "concurrency: one number with the memory and frontier pages (changing it here changes it there).",
    "ctl.lt_max_concurrency": "Client cap (max in flight)",
    "ctl.lt_max_concurrency.help": "vllm bench serve's --max-concurrency beside its rate: the benchmark client holds at "
                                   "most this many requests in flight; a request that arrives while all are busy is "
                                   "sent when one finishes, and its TTFT starts then. Empty: no cap (an open loop).",
    "ctl.lt_requests": "Requests to simulate",
    "ctl.lt_requests.help": "More requests: steadier percentiles, longer runs (2,000 take well under a second of CPU).",
    "ctl.lengths": "Length distribution",
    "ctl.lengths.help": "Fixed: every request the same (benchmarks); uniform: mean ± spread × mean; lognormal: "
                           "mean and coefficient of variation = spread (chat datasets are lognormal-like). The planner sizes and "
                           "checks with the same distribution.",
    "ctl.length_spread": "Length spread",
    "ctl.length_spread.help": "Lognormal: coefficient of variation; uniform: ± this fraction of the mean. Ignored for fixed. "
                               "Shared with the planner.",
    "ctl.lt_seed": "Random seed",
    "ctl.lt_seed.help": "Same seed, same arrivals and lengths, same result.",
    "ctl.lt_sweep": "Find max rate",
    "ctl.lt_sweep.help": "Simulate a series of rates (bisection, 400 requests each) for the largest one whose percentile "
                         "meets the SLA. Poisson and gamma arrivals only.",
    "lt.page_title": "Load test: tail latency under real traffic",
    "lt.intro": "{model} on {gpu} (TP {tp}): every request simulated step by step through vLLM's scheduler (first come "
                "first served, decodes then chunked prefills within max_num_batched_tokens, KV blocks, preemption), "
                "each step timed by the same step-time model as the other pages.",
    "lt.trace_section": "Or your own trace (upload)",
    "lt.trace": "Or upload a trace (CSV or JSON lines: arrival_s, input_len, output_len)",
    "lt.trace.help": "Replaces the arrivals and lengths above. At most 200,000 requests, 20 MB.",
    "lt.trace_error": "The trace was not used:",
    "lt.err.too_large": "trace: file larger than {n} MB",
    "lt.err.not_utf8": "trace: not UTF-8 text",
    "lt.err.too_many": "trace: more than {n} requests",
    "lt.err.empty": "trace: no requests (expected a CSV header arrival_s,input_len,output_len or JSON lines)",
    "lt.err.not_json": "trace line {line}: not a JSON object",
    "lt.err.bad_csv": "trace line {line}: not valid CSV ({detail})",
    "lt.err.missing": "trace line {line}: missing field {field}",
    "lt.err.arrival": "trace line {line}: arrival_s must be seconds between 0 and 1e9 (got {raw})",
    "lt.err.tokens": "trace line {line}: {field} must be a whole number between 1 and {max} (got {raw})",
    "lt.err.too_long": "trace line {line}: input_len + output_len ({n}) exceeds max_model_len ({max})",
    "lt.err.pool": "request {i}: input_len + output_len = {n} tokens needs more KV blocks than the pool holds "
                   "({blocks} blocks of {bs})",
    "lt.trace_used": "Trace {name}: {n} requests over {span} s.",
    "lt.trace_forget": "Use the workload above instead of the trace",
    "lt.running": "Simulating {n} requests…",
    "lt.sweeping": "Searching the highest sustainable rate…",
    "lt.too_big": "A request does not fit the KV pool: {msg}",
    "lt.over_budget": "**Too large for this shared server:** this simulation needs at least {steps} engine steps "
                      "({passes} of them prefill steps): about {cpu} s of CPU and {mib} MiB of memory, over this server's "
                      "budget of {cpu_limit} s and {mib_limit} MiB per run. Fewer requests, shorter prompts or a larger "
                      "token budget (max_num_batched_tokens) fit; or run it on your own machine:",
    "lt.over_budget.caption": "The same model, GPU, engine settings and workload (an uploaded trace is not included). "
                              "The budgets are the server's settings LLM_CALC_MAX_CPU_S and LLM_CALC_MAX_RUN_MIB.",
    "lt.sweep_over_budget": "The rate search is off for this workload: each of its simulations needs about {cpu} s of "
                            "CPU, over this server's budget of {cpu_limit} s for the whole search.",
    "lt.metric.ttft": "{q} TTFT",
    "lt.metric.tpot": "{q} TPOT",
    "lt.metric.goodput": "Goodput",
    "lt.metric.throughput": "Throughput",
    "lt.metric.preemptions": "Preemptions",
    "lt.metric.attainment": "Meets the SLA",
    "lt.metric.vs_slo": "{delta} vs target",
    "lt.verdict.pass": "{q} meets both targets.",
    "lt.verdict.fail": "{q} misses a target: this load is too much for one engine at this SLA.",
    "lt.truncated": "**Cut short:** the simulation stopped at its step cap, after {steps} engine steps, with {done} "
                    "of {n} requests finished. These numbers are partial: the {q} TTFT and TPOT, goodput, throughput and "
                    "share meeting the SLA above, the distributions, the percentile table and the simulated means "
                    "below count only the finished requests. The unfinished ones, the slowest, are left out, so "
                    "the latencies are lower bounds. Fewer requests or a lighter load give a complete run.",
    "lt.truncated.short": "Partial: {done} of {n} requests finished before the step cap; the rest are left out.",
    "lt.verdict.truncated": "No verdict: the run was cut short at the step cap, and {q} over the finished requests "
                            "only cannot show that this load meets the SLA.",
    "lt.tab.dist": "Latency distributions",
    "lt.tab.sweep": "Goodput vs rate",
    "lt.tab.timeline": "Timeline",
    "lt.tab.table": "Statistics",
    "lt.fig.cdf_name": "Share of requests",
    "lt.fig.pq": "{q}",
    "lt.fig.slo": "SLA {ms} ms",
    "lt.fig.share": "requests at or below (%)",
    "lt.fig.ttft_title": "Time to first token",
    "lt.fig.tpot_title": "Time per output token",
    "lt.fig.e2e_title": "End-to-end latency",
    "lt.fig.ttft_x": "TTFT (ms, log)",
    "lt.fig.tpot_x": "TPOT (ms, log)",
    "lt.fig.e2e_x": "E2E latency (ms, log)",
    "lt.fig.goodput": "goodput (meets both targets)",
    "lt.fig.offered": "offered rate",
    "lt.fig.ttft_p": "{p} TTFT",
    "lt.unit.req_s": "req/s",
    "lt.fig.best": "highest rate meeting P{p}: {rate} req/s",
    "lt.fig.rate": "arrival rate (requests/s, log)",
    "lt.fig.goodput_axis": "requests/s",
    "lt.fig.ttft_axis": "TTFT (ms, log)",
    "lt.fig.sweep_title": "Goodput and tail TTFT against the arrival rate (judged at P{p})",
    "lt.fig.waiting": "waiting",
    "lt.fig.running": "running",
    "lt.fig.kv": "KV blocks in use",
    "lt.fig.step": "step time",
    "lt.fig.requests": "requests",
    "lt.fig.kv_axis": "KV pool used (%)",
    "lt.fig.step_axis": "step (ms, log)",
    "lt.fig.time": "simulated time (s)",
    "lt.fig.timeline_title": "Engine timeline: queue, running sequences, KV use, step time",
    "lt.sweep_only_open": "The rate search needs open arrivals (Poisson or Gamma).",
    "lt.sweep_without_cap": "The search asks what the engine sustains: it runs without the client cap of {c} (with it, "
                            "a request's TTFT starts only once it is sent, so no rate would fail the SLA).",
    "lt.sweep_off": "Switch on 'Find the highest sustainable rate' to search.",
    "lt.sweep_result": "Highest rate meeting {q} TTFT ≤ {ttft} ms and TPOT ≤ {tpot} ms: **{rate} requests/s** "
                       "({n} simulated rates, 400 requests each).",
    "lt.sweep_needs_percentile": "The highest-rate search judges a percentile: choose P50 to P99 as the SLA statistic.",
    "lt.per_replica": "{n} replicas behind a load balancer: one is simulated, at {rate} ÷ {n} = {per} requests/s; its "
                      "latencies are every replica's, its throughput and goodput one replica's.",
    "lt.lengths": "Prompt {i} and output {o} tokens on average: the sidebar's input and output tokens, the same "
                  "requests the frontier and the planner compute with; their spread is chosen here.",
    "lt.sweep_per_replica": "Rates per replica: {n} replicas carry {n} × these.",
    "lt.sampling": "How sure this run is: {q} TTFT {t_lo} – {t_hi}, {q} TPOT {p_lo} – {p_hi} (95 % intervals: the "
                   "{n} steady-state requests in 10 consecutive sections, batch means).",
    "lt.sampling.close": "The {what} target is inside its interval: too close to call with this many requests; more "
                         "simulated requests narrow it.",
    "lt.steady_state": "{q} in steady state: the first quarter of the requests (they arrive at an idle engine) is left "
                       "out, as the planner's check leaves it out; the charts and the table below show every request.",
    "lt.sweep_none": "Even the lowest rate tried ({rate} requests/s) misses the SLA at {q}.",
    "lt.col.metric": "Metric",
    "lt.col.mean": "Mean",
    "lt.analytic.title": "Analytic closed loop beside the simulation",
    "lt.analytic.caption": "The closed-form model (other pages) at C = {c} {how}: its mean TTFT / TPOT / E2E next to the "
                           "simulated means (with spread lengths, its TTFT percentile too, as the frontier judges it).",
    "lt.analytic.closed": "clients",
    "lt.analytic.little": "clients (Little's law: mean requests in the system during the run)",
    "lt.analytic.sim_needed": "Closed form not reliable in this regime (short chunked waves, very long waves, "
                              "or past the KV wall where vLLM preempts): trust the simulated numbers here.",
    "lt.analytic.near_capacity": "The token budget is busy with prompts {busy} % of the time here. Near capacity the "
                                 "TTFT climbs steeply with the rate: long simulations (100,000 requests) put the P95 "
                                 "within about 20 % of the queueing model (up to 1.2× it), and two 20,000-request runs of "
                                 "one engine differed 1.5× in P95: judge with more requests or several seeds.",
    "lt.analytic.no_drain": "Here the token budget can stay full and not drain: while prompts queue the "
                            "decode batch grows, each step leaves less room for prompts, and the queue keeps "
                            "growing; the simulation is the answer here.",
    "lt.col.analytic": "Analytic (closed form)",
    "lt.row.ttft_s": "TTFT (time to first token)",
    "lt.row.tpot_s": "TPOT (time per output token)",
    "lt.row.itl_s": "ITL (gap between tokens)",
    "lt.row.e2e_latency_s": "E2E (end-to-end latency)",
    "lt.row.queue_wait_s": "Queue wait (before the first step)",
    "lt.analytic.steady": "Simulated means over the requests after the first {n}: the loop starts with every client's "
                          "prompt at once, a transient the steady-state formula does not describe.",
    "lt.col.simulated": "Simulated",
    "lt.analytic.open_title": "Analytic open loop beside the simulation",
    "lt.analytic.open_caption": "The open-loop queueing model at {rate} requests/s per replica (Poisson arrivals; the "
                                "frontier's answer to your rate, the planner's model, `estimate --rate`): its mean and {q} "
                                "TTFT, TPOT and E2E next to the simulated ones (after the first quarter of the requests, which arrive at "
                                "an idle engine: the steady state, as the cards above).",
    "lt.col.analytic_open": "Analytic (queueing model)",
    "lt.analytic.open_over": "This rate is past what the queueing model says one replica can serve: its queue grows "
                             "without bound (the simulation shows how far it got).",
    "csv.lt_requests": "Download per-request results (CSV)",
    "csv.lt_steps": "Download the engine timeline (CSV)",
    "lt.why.goodput.title": "Goodput: requests per second that meet both targets",
    "lt.why.goodput.takeaway": "{share} of requests meet both targets: throughput {thr} req/s, goodput {good} req/s.",
    "lt.why.goodput.note": "Goodput (DistServe, 2024) counts only requests within the TTFT and the TPOT target; a "
                           "request with one output token has no TPOT.",
    "lt.why.pass": "passes",
    "lt.why.fail": "fails",
    "lt.why.percentile.title": "Why judge by {q}, not the mean",
    "lt.why.percentile.takeaway": "At {q} this load {verdict}. The mean TTFT ({mean}) hides the tail ({pq}).",
    "lt.why.percentile.note": "Percentiles over requests (TTFT, TPOT, E2E) or over every token gap (ITL), NumPy's "
                              "linear interpolation, as vLLM's benchmark prints them.",
    "lt.why.little.title": "Little's law holds on the run",
    "lt.why.little.takeaway": "On average {L} requests were in the system (waiting or running); the engine held {running} "
                              "running per step.",
    "lt.why.little.note": "∫N(t)dt counted from arrivals and finishes = {area} request·s; the sum of the E2E latencies = "
                          "{total} request·s: the simulator's bookkeeping is consistent.",
    "lt.why.api_burst.title": "A burst at the API server: the requests take turns",
    "lt.why.api_burst.takeaway": "None of the {n} requests reaches the engine before {first}; then one every {gap}, "
                                 "the last at {last}. The first token came at {ttft} at the earliest.",
    "lt.why.api_burst.note": "vLLM's API server is one asyncio event loop: a chat request's task renders the chat "
                             "template, waits for the tokenizer's thread, then rejoins the end of the queue behind "
                             "every request still on its first part, so requests that arrive together advance together "
                             "and reach the engine together (the assumption 'API server: share after its last wait', f; "
                             "1 = one after another). Chosen on gpustack's bursts of 1,000 chat requests: their TPOT "
                             "went from 97 % under the measurement to 10 % over, their TTFT from 40 % under to 4 %.",
    "lt.why.analytic.title": "Analytic mean vs simulated mean",
    "lt.why.analytic.open_note": "Poisson arrivals: the API server's M/D/1 wait, the rest of the step in flight, the "
                                 "token budget's M/G/1 queue of prompts, the wait for a free sequence slot (peaked "
                                 "batch) and the prompt's own chunks (calc.traffic.queueing.open_loop), the frontier's "
                                 "and the planner's model.",
    "lt.why.analytic.takeaway": "The closed form gives {an} mean TTFT, the simulation {sim}.",
    "lt.why.analytic.sim": "The closed form gives {an}, the simulation {sim}: in this regime the simulation is the "
                           "number to use.",
    "lt.why.analytic.note": "Identical requests in a closed loop come back in a wave each cycle and are prefilled first "
                            "come first served in full steps (calc.timing.serving.fcfs_wave); varied lengths spread the "
                            "prompts out.",
}

ZH: dict[str, str] = {
    "nav.load_test": "负载测试（P50/P95/P99）",
    "ctl.lt_arrival": "到达方式",
    "ctl.lt_arrival.help": "泊松：独立用户按平均速率到达；Gamma：突发（见下方变异系数）；闭环：C 个客户端，"
                           "每个在上一个请求返回后发送下一个（vllm bench --max-concurrency）；一次性到达：所有请求在 t = 0 到达。",
    "opt.lt_arrival.poisson": "泊松（独立用户）",
    "opt.lt_arrival.gamma": "Gamma（突发）",
    "opt.lt_arrival.closed": "闭环（C 个客户端）",
    "opt.lt_arrival.burst": "一次性到达（t = 0）",
    "opt.lengths.fixed": "固定",
    "opt.lengths.uniform": "均匀",
    "opt.lengths.lognormal": "对数正态",
    "ctl.lt_cv": "突发程度（间隔变异系数）",
    "ctl.lt_cv.help": "Gamma 到达：请求间隔的变异系数。1 = 泊松，大于 1 = 突发与空闲交替。",
    "lt.settings": "负载测试设置：到达方式、速率、长度、SLA",
    "ctl.lt_clients": "客户端数（闭环）",
    "ctl.lt_clients.help": "闭环：同时在途的请求数，全部同时开始。即侧边栏的并发数：与显存和前沿页面共用同一个数（在此修改，那里也随之改变）。",
    "ctl.lt_max_concurrency": "客户端上限（最多在途）",
    "ctl.lt_max_concurrency.help": "即 vllm bench serve 与速率同用的 --max-concurrency：压测客户端最多同时保持这么多个请求；"
                                   "全部在途时到达的请求要等一个完成后才发出，其 TTFT 从发出时算起。留空：不设上限（开环）。",
    "ctl.lt_requests": "模拟的请求数",
    "ctl.lt_requests.help": "请求越多，分位数越稳定，运行越久（2,000 个请求的 CPU 时间远少于一秒）。",
    "ctl.lengths": "长度分布",
    "ctl.lengths.help": "固定：每个请求相同（基准测试）；均匀：均值 ± 离散度 × 均值；对数正态：均值与变异系数 = "
                           "离散度（对话数据集近似对数正态）。",
    "ctl.length_spread": "长度离散度",
    "ctl.length_spread.help": "对数正态：变异系数；均匀：均值的 ± 该比例。固定时忽略。与规划器共用。",
    "ctl.lt_seed": "随机种子",
    "ctl.lt_seed.help": "相同种子，相同的到达与长度，相同的结果。",
    "ctl.lt_sweep": "搜索最高速率",
    "ctl.lt_sweep.help": "模拟一系列速率（二分查找，每个 400 个请求），找出分位数仍满足 SLA 的最大速率。仅适用于泊松和 Gamma 到达。",
    "lt.page_title": "负载测试：真实流量下的尾延迟",
    "lt.intro": "{model} 运行于 {gpu}（TP {tp}）：每个请求逐步通过 vLLM 调度器模拟（先来先服务，先解码再在 "
                "max_num_batched_tokens 内分块预填充，KV 块，抢占），每一步的时间来自与其他页面相同的步时模型。",
    "lt.trace_section": "或用自己的请求轨迹（上传）",
    "lt.trace": "或上传请求轨迹（CSV 或 JSON lines：arrival_s、input_len、output_len）",
    "lt.trace.help": "替换上面的到达与长度设置。最多 200,000 个请求、20 MB。",
    "lt.trace_error": "未使用该轨迹：",
    "lt.err.too_large": "轨迹：文件大于 {n} MB",
    "lt.err.not_utf8": "轨迹：不是 UTF-8 文本",
    "lt.err.too_many": "轨迹：请求超过 {n} 个",
    "lt.err.empty": "轨迹：没有请求（应为带表头 arrival_s,input_len,output_len 的 CSV，或 JSON lines）",
    "lt.err.not_json": "轨迹第 {line} 行：不是 JSON 对象",
    "lt.err.bad_csv": "轨迹第 {line} 行：不是有效的 CSV（{detail}）",
    "lt.err.missing": "轨迹第 {line} 行：缺少字段 {field}",
    "lt.err.arrival": "轨迹第 {line} 行：arrival_s 必须是 0 到 1e9 之间的秒数（收到 {raw}）",
    "lt.err.tokens": "轨迹第 {line} 行：{field} 必须是 1 到 {max} 之间的整数（收到 {raw}）",
    "lt.err.too_long": "轨迹第 {line} 行：input_len + output_len（{n}）超过 max_model_len（{max}）",
    "lt.err.pool": "第 {i} 个请求：input_len + output_len = {n} 个 token，需要的 KV 块多于池中的 {blocks} 块（每块 {bs} 个 token）",
    "lt.trace_used": "轨迹 {name}：{n} 个请求，历时 {span} 秒。",
    "lt.trace_forget": "改用上面的负载设置，不用该轨迹",
    "lt.running": "正在模拟 {n} 个请求…",
    "lt.sweeping": "正在搜索可持续的最高速率…",
    "lt.too_big": "有请求放不进 KV 池：{msg}",
    "lt.over_budget": "**对这台共享服务器来说太大**：这次模拟至少需要 {steps} 个引擎步（其中 {passes} 个是预填充步），"
                      "约 {cpu} 秒 CPU 和 {mib} MiB 内存，超过本服务器每次运行 {cpu_limit} 秒、{mib_limit} MiB 的预算。"
                      "减少请求数、缩短提示或增大 token 预算（max_num_batched_tokens）即可；或者在你自己的机器上运行：",
    "lt.over_budget.caption": "相同的模型、GPU、引擎设置和负载（不包括上传的轨迹）。"
                              "预算是服务器的设置 LLM_CALC_MAX_CPU_S 和 LLM_CALC_MAX_RUN_MIB。",
    "lt.sweep_over_budget": "此负载下不进行速率搜索：它的每次模拟约需 {cpu} 秒 CPU，超过本服务器整个搜索 {cpu_limit} 秒的预算。",
    "lt.metric.ttft": "{q} 首 Token 延迟",
    "lt.metric.tpot": "{q} 单 Token 延迟",
    "lt.metric.goodput": "有效吞吐（goodput）",
    "lt.metric.throughput": "吞吐量",
    "lt.metric.preemptions": "抢占次数",
    "lt.metric.attainment": "满足 SLA 的比例",
    "lt.metric.vs_slo": "{delta}（相对目标）",  # the sign first: Streamlit picks the arrow from it
    "lt.verdict.pass": "{q} 同时满足两个目标。",
    "lt.verdict.fail": "{q} 未满足目标：在此 SLA 下这个负载超出单个引擎的能力。",
    "lt.truncated": "**模拟被截断**：模拟在 {steps} 个引擎步后达到步数上限而停止，{n} 个请求中只完成了 {done} 个。"
                    "以下数字不完整：上方的 {q} 首 Token 延迟与单 Token 延迟、有效吞吐、吞吐量和满足 SLA 的比例，"
                    "以及下方的延迟分布、百分位表和模拟均值，都只统计已完成的请求。未完成的请求（最慢的那些）没有计入，"
                    "因此这些延迟是下限。减少请求数或降低负载即可得到完整的结果。",
    "lt.truncated.short": "不完整：在步数上限前只完成了 {n} 个请求中的 {done} 个，其余未计入。",
    "lt.verdict.truncated": "无法判定：模拟在步数上限处被截断，只统计已完成请求的 {q} 不能说明此负载满足 SLA。",
    "lt.tab.dist": "延迟分布",
    "lt.tab.sweep": "有效吞吐与速率",
    "lt.tab.timeline": "时间线",
    "lt.tab.table": "统计",
    "lt.fig.cdf_name": "请求占比",
    "lt.fig.pq": "{q}",
    "lt.fig.slo": "SLA {ms} 毫秒",
    "lt.fig.share": "不超过该值的请求（%）",
    "lt.fig.ttft_title": "首 Token 延迟",
    "lt.fig.tpot_title": "单 Token 延迟",
    "lt.fig.e2e_title": "端到端延迟",
    "lt.fig.ttft_x": "TTFT（毫秒，对数）",
    "lt.fig.tpot_x": "TPOT（毫秒，对数）",
    "lt.fig.e2e_x": "端到端延迟（毫秒，对数）",
    "lt.fig.goodput": "有效吞吐（满足两个目标）",
    "lt.fig.offered": "提供的速率",
    "lt.fig.ttft_p": "{p} 首 Token 延迟",
    "lt.unit.req_s": "请求/秒",
    "lt.fig.best": "满足 P{p} 的最高速率：{rate} 请求/秒",
    "lt.fig.rate": "到达速率（请求/秒，对数）",
    "lt.fig.goodput_axis": "请求/秒",
    "lt.fig.ttft_axis": "TTFT（毫秒，对数）",
    "lt.fig.sweep_title": "有效吞吐与尾部 TTFT 随到达速率的变化（按 P{p} 评判）",
    "lt.fig.waiting": "等待中",
    "lt.fig.running": "运行中",
    "lt.fig.kv": "已用 KV 块",
    "lt.fig.step": "步时",
    "lt.fig.requests": "请求数",
    "lt.fig.kv_axis": "KV 池使用率（%）",
    "lt.fig.step_axis": "步时（毫秒，对数）",
    "lt.fig.time": "模拟时间（秒）",
    "lt.fig.timeline_title": "引擎时间线：队列、运行序列、KV 使用、步时",
    "lt.sweep_only_open": "速率搜索需要开放式到达（泊松或 Gamma）。",
    "lt.sweep_without_cap": "搜索的是引擎能承受的速率：它不带 {c} 的客户端上限运行（带上限时，请求的 TTFT 从发出时才开始计，"
                            "任何速率都能满足 SLA）。",
    "lt.sweep_off": "打开“寻找可持续的最高速率”以进行搜索。",
    "lt.sweep_result": "满足 {q} TTFT ≤ {ttft} 毫秒且 TPOT ≤ {tpot} 毫秒的最高速率：**{rate} 请求/秒**（模拟了 {n} 个速率，每个 400 个请求）。",
    "lt.sweep_needs_percentile": "最高速率搜索按分位数判断：请把 SLA 统计量设为 P50 到 P99 之一。",
    "lt.per_replica": "负载均衡器后有 {n} 个副本：只模拟其中一个，其请求率为 {rate} ÷ {n} = {per} 请求/秒；延迟即每个副本的延迟，吞吐和有效吞吐是单个副本的。",
    "lt.lengths": "平均提示 {i} 个 token、输出 {o} 个 token：来自侧栏的输入和输出 token 数，与前沿页和部署规划页计算的请求相同；长度的分布在这里选择。",
    "lt.sweep_per_replica": "以上为每个副本的速率：{n} 个副本可承载 {n} 倍。",
    "lt.sampling": "本次模拟的可信度：{q} 首 Token 延迟 {t_lo} – {t_hi}，{q} 单 Token 延迟 {p_lo} – {p_hi}"
                   "（由 {n} 个稳态请求按到达先后分成 10 段求得的 95 % 区间，即批均值法）。",
    "lt.sampling.close": "{what} 目标落在区间之内：以这么多请求还不足以下结论；增加模拟的请求数可使区间缩小。",
    "lt.steady_state": "{q} 取稳态值：前四分之一的请求（到达时引擎空闲）不计入，与部署规划页的复核相同；下方的图和表包含全部请求。",
    "lt.sweep_none": "即使尝试的最低速率（{rate} 请求/秒）在 {q} 也未满足 SLA。",
    "lt.col.metric": "指标",
    "lt.col.mean": "均值",
    "lt.analytic.title": "解析闭环模型与模拟结果对照",
    "lt.analytic.caption": "闭式模型（其他页面）在 C = {c} {how} 时的平均 TTFT / TPOT / 端到端延迟，与模拟均值并列（长度有分布时还有 TTFT 分位数，与前沿页的判断一致）。",
    "lt.analytic.closed": "个客户端",
    "lt.analytic.little": "个客户端（利特尔定律：运行期间系统中的平均请求数）",
    "lt.analytic.sim_needed": "在此区间闭式模型不可靠（短的分块波、很长的波，或超过 KV 上限时 vLLM 会抢占）：此处请以模拟结果为准。",
    "lt.analytic.near_capacity": "此时 token 预算有 {busy}% 的时间在处理提示词。接近容量时 TTFT 随请求速率快速上升：长时间模拟（100,000 个请求）给出的 P95 与排队模型相差约 20% 以内（最高为其 1.2 倍），而同一引擎的两次 20,000 请求运行的 P95 相差 1.5 倍：请用更多请求或多个种子再判断。",
    "lt.analytic.no_drain": "此处 token 预算可能持续占满而无法清空：提示词排队时解码批次增大，每步留给提示词的空间变少，队列会越来越长；此处请以模拟结果为准。",
    "lt.col.analytic": "解析（闭式）",
    "lt.row.ttft_s": "TTFT（首 Token 延迟）",
    "lt.row.tpot_s": "TPOT（单 Token 延迟）",
    "lt.row.itl_s": "ITL（Token 间隔）",
    "lt.row.e2e_latency_s": "端到端延迟（E2E）",
    "lt.row.queue_wait_s": "排队等待（首个步骤之前）",
    "lt.analytic.steady": "模拟均值取前 {n} 个请求之后的请求：闭环开始时所有客户端的提示同时到达，这一暂态不在稳态公式之内。",
    "lt.col.simulated": "模拟",
    "lt.analytic.open_title": "解析开环模型与模拟结果对照",
    "lt.analytic.open_caption": "开环排队模型在每个副本 {rate} 请求/秒（泊松到达；即前沿页对你的请求速率的回答、部署规划的模型、"
                                "`estimate --rate`）下的平均与 {q} TTFT、TPOT、端到端延迟，与模拟值并列（模拟值不计前四分之一的请求："
                                "它们到达时引擎空闲；即稳态，与上方卡片相同）。",
    "lt.col.analytic_open": "解析（排队模型）",
    "lt.analytic.open_over": "按排队模型，这一速率已超出一个副本的服务能力：队列会无限增长（模拟显示它走到了哪一步）。",
    "csv.lt_requests": "下载逐请求结果（CSV）",
    "csv.lt_steps": "下载引擎时间线（CSV）",
    "lt.why.goodput.title": "有效吞吐：每秒满足两个目标的请求数",
    "lt.why.goodput.takeaway": "{share} 的请求满足两个目标：吞吐量 {thr} 请求/秒，有效吞吐 {good} 请求/秒。",
    "lt.why.goodput.note": "有效吞吐（DistServe，2024）只统计 TTFT 与 TPOT 都在目标内的请求；只有一个输出 token 的请求没有 TPOT。",
    "lt.why.pass": "通过",
    "lt.why.fail": "未通过",
    "lt.why.percentile.title": "为什么按 {q} 而不是均值评判",
    "lt.why.percentile.takeaway": "在 {q}，该负载{verdict}。平均 TTFT（{mean}）掩盖了尾部（{pq}）。",
    "lt.why.percentile.note": "分位数按请求（TTFT、TPOT、端到端）或按每个 token 间隔（ITL）计算，采用 NumPy 线性插值，与 vLLM 基准输出一致。",
    "lt.why.little.title": "本次运行满足利特尔定律",
    "lt.why.little.takeaway": "平均有 {L} 个请求在系统中（等待或运行）；引擎每步平均运行 {running} 个。",
    "lt.why.little.note": "由到达与完成事件计算的 ∫N(t)dt = {area} 请求·秒；端到端延迟之和 = {total} 请求·秒：模拟器的记账一致。",
    "lt.why.api_burst.title": "突发请求在 API 服务器：请求轮流处理",
    "lt.why.api_burst.takeaway": "{n} 个请求在 {first} 之前都到不了引擎；之后每 {gap} 到一个，最后一个在 {last}。"
                                 "最早的首 token 在 {ttft}。",
    "lt.why.api_burst.note": "vLLM 的 API 服务器是一个 asyncio event loop：一个聊天请求的任务先生成聊天模板的文本，再等待分词线程，"
                             "然后排到队尾，排在所有还在做第一部分的请求之后，所以同时到达的请求一起推进、一起进入引擎"
                             "（假设项“API 服务器：最后一次等待之后的时间占比” f；1 = 先到先服务）。在 gpustack 的 1,000 个聊天请求"
                             "突发测试上选定：它们的 TPOT 误差从低 97 % 变为高 10 %，TTFT 从低 40 % 变为低 4 %。",
    "lt.why.analytic.title": "解析均值与模拟均值",
    "lt.why.analytic.open_note": "泊松到达：API 服务器的 M/D/1 等待、在途步骤的剩余时间、Token 预算上提示的 M/G/1 排队、"
                                 "等待空闲序列槽（峰化批次）以及提示自身的分块（calc.traffic.queueing.open_loop），"
                                 "与前沿页和部署规划用的是同一模型。",
    "lt.why.analytic.takeaway": "闭式模型给出平均 TTFT {an}，模拟为 {sim}。",
    "lt.why.analytic.sim": "闭式模型给出 {an}，模拟为 {sim}：在此区间请使用模拟结果。",
    "lt.why.analytic.note": "闭环中相同的请求每个周期成波返回，并按先来先服务在满步中预填充（calc.timing.serving.fcfs_wave）；长度各异时提示会分散开。",
}
