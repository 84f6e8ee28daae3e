"""Strings of the multi-GPU layout (pipeline, data and expert parallelism, nodes): the sidebar
section, the memory page's per-rank lines and the planner's layout columns."""

from __future__ import annotations

EN: dict[str, str] = {
    "sidebar.parallel": "Multi-GPU layout (TP, PP, DP, EP)",
    "ctl.pp": "pipeline_parallel_size (stages)",
    "ctl.pp.help": "vLLM --pipeline-parallel-size: the layers split into this many stages of TP GPUs each (across "
                   "nodes). Each GPU holds its stage's weights and KV cache; a request still passes every stage, "
                   "so PP adds memory and throughput, not speed.",
    "ctl.dp": "data_parallel_size (ranks)",
    "ctl.dp.help": "vLLM --data-parallel-size: engine replicas of TP × PP GPUs. With an MoE model and expert "
                   "parallelism they step together: attention (and MLA's latent KV cache) per rank, experts shared.",
    "ctl.ep": "enable_expert_parallel",
    "ctl.ep.help": "vLLM --enable-expert-parallel: routed experts placed whole on the TP × DP ranks (⌈E / EP⌉ each) "
                   "instead of sliced by TP; tokens reach them by an all-to-all per MoE layer (NVLink in a node, "
                   "InfiniBand/RoCE between nodes).",
    "ctl.nodes": "nodes (servers)",
    "ctl.nodes.help": "Servers the TP × PP × DP GPUs span. Empty = as few as hold them (8 GPUs per HGX node, "
                      "4 per GB200 tray, calc/data/nodes.json).",
    "layout.summary": "Layout: TP {tp} × PP {pp} × DP {dp} = {gpus} GPUs on {nodes} node(s){ep}. Memory below is "
                      "per GPU (the heaviest pipeline stage); the KV pool and concurrency are per DP rank, "
                      "**{total:,.0f} requests of max_model_len across the {dp} ranks**.",
    "layout.ep": ", experts over EP {ep} ranks",
    "layout.mla_dp": "MLA caches one latent per token on every GPU of a TP group: TP {tp} keeps the same request "
                     "{tp} times, DP {dp} keeps {dp} ranks' own requests.",
    "layout.why": "Why {layout}: {gpus} GPUs on {nodes} node(s) per replica; each GPU holds {weights} of weights "
                  "and a {kv} KV pool (experts spread over the ranks, attention and its KV cache per DP rank), so "
                  "its {dp} rank(s) of up to {seqs} sequences run {running} requests at once at {tpot} ms per token: "
                  "the experts' weights are read once per step for all of them.",
    "planner.col.pp": "PP",
    "planner.col.dp": "DP",
    "planner.col.ep": "EP",
    "planner.col.nodes": "nodes",
}

ZH: dict[str, str] = {
    "sidebar.parallel": "多卡布局（TP、PP、DP、EP）",
    "ctl.pp": "pipeline_parallel_size（流水线阶段数）",
    "ctl.pp.help": "vLLM --pipeline-parallel-size：把各层切成这么多个阶段，每个阶段用 TP 张 GPU（可跨节点）。每张 GPU "
                   "只存本阶段的权重和 KV Cache；一个请求仍要依次经过所有阶段，所以 PP 增加的是显存和吞吐，而不是单请求速度。",
    "ctl.dp": "data_parallel_size（数据并行 rank 数）",
    "ctl.dp.help": "vLLM --data-parallel-size：每份 TP × PP 张 GPU 的引擎副本数。MoE 模型开专家并行时它们同步执行："
                   "注意力（以及 MLA 的潜变量 KV Cache）按 rank 各自一份，专家共享。",
    "ctl.ep": "enable_expert_parallel（专家并行）",
    "ctl.ep.help": "vLLM --enable-expert-parallel：路由专家整块放到 TP × DP 个 rank 上（每个 ⌈E / EP⌉ 个），"
                   "而不是按 TP 切分；每个 MoE 层用一次 all-to-all 把 token 送过去（节点内走 NVLink，节点间走 "
                   "InfiniBand/RoCE）。",
    "ctl.nodes": "nodes（服务器数）",
    "ctl.nodes.help": "TP × PP × DP 张 GPU 分布在多少台服务器上。留空 = 能装下的最少台数（HGX 节点 8 张，GB200 "
                      "托盘 4 张，见 calc/data/nodes.json）。",
    "layout.summary": "布局：TP {tp} × PP {pp} × DP {dp} = {gpus} 张 GPU，{nodes} 个节点{ep}。下面的显存是每张 GPU 的"
                      "（最重的流水线阶段）；KV 池与并发按每个 DP rank 计，**{dp} 个 rank 合计可容纳 {total:,.0f} 个 "
                      "max_model_len 长度的请求**。",
    "layout.ep": "，专家分布在 EP {ep} 个 rank 上",
    "layout.mla_dp": "MLA 在一个 TP 组的每张 GPU 上都缓存每个 token 的同一个潜变量：TP {tp} 把同一个请求存 {tp} 份，"
                     "DP {dp} 则是 {dp} 个 rank 各存自己的请求。",
    "layout.why": "为什么选 {layout}：每个副本 {gpus} 张 GPU、{nodes} 个节点；每张 GPU 存 {weights} 权重和 {kv} 的 KV 池"
                  "（专家分布在各 rank 上，注意力及其 KV Cache 每个 DP rank 各一份），所以 {dp} 个 rank（每个最多 {seqs} "
                  "个序列）同时运行 {running} 个请求，每个 token {tpot} ms：专家权重每步只读一次，供所有请求共用。",
    "planner.col.pp": "流水线 PP",
    "planner.col.dp": "数据并行 DP",
    "planner.col.ep": "专家并行 EP",
    "planner.col.nodes": "节点",
}
