"""Strings of the error bands (:mod:`ui.bands`) and the user's own measurements
(:mod:`ui.measured`), English and Chinese (same keys, same placeholders)."""

from __future__ import annotations

EN: dict[str, str] = {
    "band.regime.any": "any load",
    "band.family.other": "other GPUs",
    "band.api_server": "{regime}, API server busy ≥ {share} % of the time",
    "band.api_shared": "{regime}, API server busy {lo}–{hi} % of the time",
    "band.open_loop": "Likely on real servers: TTFT {ttft} ms, {q} {ttft_q} ms, TPOT {tpot} ms (TTFT band {note}).",
    "band.pareto_note": "Grey: where the Pareto front likely lies on real servers (end-to-end latency and throughput "
                        "errors measured in the open-loop regime of each point's GPU).",
    "band.borrowed": "(no data here: wider)",
    "band.few_short": "(little data here: wider)",
    "mem.band.pool": "KV pool {pool} (range {lo}–{hi}).",
    "band.trace": "Likely range (measurements)",
    "band.pct_note": "Percentiles get the band of their metric (the measurements are mostly means).",
    "band.why.title": "Why these bands: the measurements behind them",
    "band.why.caption": "Each band is the range of measured values that the calculator's errors (predicted ÷ "
                        "measured − 1) on real measurements in the same regime imply (load shape, how busy vLLM's API "
                        "server is, GPU family, dense or MoE): their median and spread, weighed against a wider group's by the number of "
                        "documents (pages or log files) behind them, one deployment counting once however many "
                        "numbers it holds, times the errors' spread on measurements left out one at a time (central "
                        "{central} %: with each source document left out of the table in turn, {held_out} % of the "
                        "measured values fell inside their band). A regime without measurements of its own borrows a wider group's, widened {widen}× per "
                        "level it lacks, and says so.",
    "band.why.col.metric": "Number",
    "band.why.col.basis": "Where the band comes from",
    "band.why.col.errors": "Errors",
    "band.why.col.ids": "Measurements (id, error)",
    "band.why.col.sources": "Sources",
    "band.why.errors": "median {median} %, p90 {p90} %; measured = predicted {lo} % … {hi} %",
    "band.why.more": "… and {n} more",
    "band.why.sources_note": "Every measurement with its source: calc/data/band_measurements.json; the table: "
                             "calc/data/bands.json (bench/make_bands.py). `python -m calc validate` scores your own files.",
    "pl.band.best": "Best deployment: TTFT {ttft} ms ({ttft_r}), TPOT {tpot} ms ({tpot_r}), ${cost} per million tokens, input + output ({cost_r}) "
                    "— ranges from measurements (why: below).",
    "ms.title": "Your measurements: upload a vllm bench serve result, see it on the charts, calibrate",
    "ms.caption": "A `vllm bench serve --save-result` JSON file, the summary block it prints, or rows of "
                  "vllm_benchmarks.jsonl. What a file does not say (GPU, tensor parallel size; the model for a printed "
                  "summary) comes from the sidebar. Each row is asked as its benchmark ran: its lengths, clients or rate, "
                  "and a short closed loop (up to 10 prompts per client) from the clients' common start, every request counted.",
    "ms.upload": "Upload a result file",
    "ms.upload.help": "Read once when uploaded; the rows are kept in this session (at most 40), the file is not.",
    "ms.paste": "…or paste a result (JSON, summary block, jsonl rows)",
    "ms.paste.add": "Add the pasted result",
    "ms.no_scenario": "The scenario is not ready yet: try again.",
    "ms.problem": "Not used: {problem}",
    "ms.more_problems": "… and {n} more rows not used.",
    "ms.added": "Added {n} measured row(s) from {name}.",
    "ms.dropped": "Kept the newest {max} rows: {n} older row(s) dropped.",
    "ms.empty": "The paste box is empty.",
    "ms.nothing": "No measured rows to calibrate on.",
    "ms.cal_no_gain": "Calibration found no efficiency values that lower the error on these rows: nothing changed.",
    "ms.hover": "{id} — {metric}: measured {measured}, predicted {predicted} (error {error} %)",
    "ms.metric.ttft_s": "TTFT (ms)", "ms.metric.tpot_s": "TPOT (ms)", "ms.metric.e2e_s": "E2E latency (ms)",
    "ms.metric.output_tokens_per_s": "Output tok/s", "ms.metric.total_tokens_per_s": "Total tok/s",
    "ms.metric.requests_per_s": "Requests/s",
    "ms.trace.measured": "Your measurement",
    "ms.trace.predicted": "Predicted for its settings",
    "ms.trace.measured_mean": "Your measurement (mean)",
    "ms.col.row": "Row", "ms.col.metric": "Metric", "ms.col.measured": "Measured", "ms.col.predicted": "Predicted",
    "ms.col.error": "Error", "ms.col.inside": "Inside the band",
    "ms.summary": "**Median |error| on your {n} row(s): {median} %** (error = predicted ÷ measured − 1).",
    "ms.calibrate": "Calibrate the efficiency inputs on these results",
    "ms.calibrate.help": "Fits the achievable bandwidth and FLOP/s fractions and the per-step, per-sequence and "
                         "per-request overheads to these rows (python -m calc calibrate), and sets them in the sidebar "
                         "(Efficiency): the link and the scenario file carry them. Fitted on these rows only: eight inputs fit a "
                         "single file exactly; check on results you did not fit.",
    "ms.forget": "Forget these measurements",
    "ms.calibrated": "Calibrated on {n} row(s): median |error| {before} % → {after} %. Set in the sidebar: {values}.",
    "ms.cdf_note": "Crosses: your measured means, each at the share of simulated requests at or under it (the hover "
                   "gives the calculator's answer for that file's own load and its error). The curves are this load test.",
    "ms.frontier_note": "Crosses: your measurements; hollow circles: the calculator's answer for each one's own settings "
                        "(a dotted line between). The curves are the sidebar's scenario.",
}

ZH: dict[str, str] = {
    "band.regime.any": "任意负载",
    "band.family.other": "其他 GPU",
    "band.api_server": "{regime}，API 服务器忙碌 ≥ {share}% 的时间",
    "band.api_shared": "{regime}，API 服务器忙碌 {lo}–{hi}% 的时间",
    "band.open_loop": "真实服务器上可能为：TTFT {ttft} 毫秒，{q} {ttft_q} 毫秒，TPOT {tpot} 毫秒（TTFT 范围{note}）。",
    "band.pareto_note": "灰色：帕累托前沿在真实服务器上可能所在的范围（依据各点 GPU 在开环场景下测得的端到端延迟与吞吐误差）。",
    "band.borrowed": "（此处无数据，加宽）",
    "band.few_short": "（此处数据少，加宽）",
    "mem.band.pool": "KV 池 {pool}（范围 {lo}–{hi}）。",
    "band.trace": "可能范围（依据测量）",
    "band.pct_note": "百分位数沿用其指标的范围（测量大多是均值）。",
    "band.why.title": "这些范围从何而来：背后的测量",
    "band.why.caption": "每个范围是计算器在同一场景（负载形态、vLLM 的 API 服务器繁忙程度、GPU 系列、稠密或 MoE）的真实测量上的误差"
                        "（预测 ÷ 实测 − 1）所对应的实测值范围：误差的中位数和离散度按来源文档数（页面或日志文件；同一部署无论有多少个数值只计一次）"
                        "与更宽一组的加权，再乘以逐一留出测量时的误差分布（中间 {central}%；每次留出一个来源文档、用其余测量重建后，{held_out}% 的实测值落在其范围内）。本场景没有测量时，借用更宽一组的测量，"
                        "每缺一个维度加宽 {widen} 倍，并注明。",
    "band.why.col.metric": "数值",
    "band.why.col.basis": "范围的来源",
    "band.why.col.errors": "误差",
    "band.why.col.ids": "测量（编号、误差）",
    "band.why.col.sources": "出处",
    "band.why.errors": "中位数 {median}%，P90 {p90}%；实测 = 预测 {lo}% … {hi}%",
    "band.why.more": "……另有 {n} 条",
    "band.why.sources_note": "每条测量及其出处：calc/data/band_measurements.json；范围表：calc/data/bands.json"
                             "（bench/make_bands.py）。`python -m calc validate` 可为你自己的文件打分。",
    "pl.band.best": "最佳部署：TTFT {ttft} 毫秒（{ttft_r}），TPOT {tpot} 毫秒（{tpot_r}），每百万 token（输入 + 输出）${cost}（{cost_r}）"
                    "——范围依据测量（原因见下）。",
    "ms.title": "你的测量：上传 vllm bench serve 结果，在图上对比预测，并校准",
    "ms.caption": "`vllm bench serve --save-result` 的 JSON 文件、它打印的汇总块，或 vllm_benchmarks.jsonl 的行。"
                  "文件未写明的（GPU、张量并行数；打印汇总的模型）取自侧边栏。每行按其基准测试的运行方式计算：长度、客户端数或速率；"
                  "较短的闭环（每个客户端最多 10 个请求）从所有客户端同时开始算起，计入每个请求。",
    "ms.upload": "上传结果文件",
    "ms.upload.help": "上传时读取一次；各行保存在本会话中（最多 40 行），文件本身不保存。",
    "ms.paste": "……或粘贴结果（JSON、汇总块、jsonl 行）",
    "ms.paste.add": "加入粘贴的结果",
    "ms.no_scenario": "场景尚未就绪：请重试。",
    "ms.problem": "未使用：{problem}",
    "ms.more_problems": "……另有 {n} 行未使用。",
    "ms.added": "已从 {name} 加入 {n} 行测量。",
    "ms.dropped": "只保留最新的 {max} 行：丢弃了 {n} 行较早的。",
    "ms.empty": "粘贴框是空的。",
    "ms.nothing": "没有可用于校准的测量行。",
    "ms.cal_no_gain": "校准没有找到能降低这些行误差的效率值：未作改动。",
    "ms.hover": "{id} — {metric}：实测 {measured}，预测 {predicted}（误差 {error}%）",
    "ms.metric.ttft_s": "TTFT（毫秒）", "ms.metric.tpot_s": "TPOT（毫秒）", "ms.metric.e2e_s": "端到端延迟（毫秒）",
    "ms.metric.output_tokens_per_s": "输出 token/秒", "ms.metric.total_tokens_per_s": "总 token/秒",
    "ms.metric.requests_per_s": "请求/秒",
    "ms.trace.measured": "你的测量",
    "ms.trace.predicted": "按其设置的预测",
    "ms.trace.measured_mean": "你的测量（均值）",
    "ms.col.row": "行", "ms.col.metric": "指标", "ms.col.measured": "实测", "ms.col.predicted": "预测",
    "ms.col.error": "误差", "ms.col.inside": "在范围内",
    "ms.summary": "**你的 {n} 行的 |误差| 中位数：{median}%**（误差 = 预测 ÷ 实测 − 1）。",
    "ms.calibrate": "用这些结果校准效率参数",
    "ms.calibrate.help": "把可达带宽与算力比例、每步/每序列/每请求开销拟合到这些行（python -m calc calibrate），"
                         "并写入侧边栏（效率）：链接和场景文件都会带上它们。只针对这些行拟合：八个参数能完全拟合单个文件；请用未参与拟合的结果检验。",
    "ms.forget": "清除这些测量",
    "ms.calibrated": "已在 {n} 行上校准：|误差| 中位数 {before}% → {after}%。已写入侧边栏：{values}。",
    "ms.cdf_note": "叉号：你实测的均值，放在模拟请求中不超过它的比例处（悬停显示按该文件自身负载的预测及误差）。曲线是本次负载测试。",
    "ms.frontier_note": "叉号：你的测量；空心圆：计算器按各自设置给出的预测（虚线相连）。曲线是侧边栏的场景。",
}
