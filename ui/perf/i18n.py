"""Strings of the performance pages (roofline, frontier, scheduler), English and Chinese.

Merged into :data:`ui.i18n.EN` / :data:`ui.i18n.ZH` (same keys, same placeholders). Kept in
their own module so the two developers of ``ui/i18n.py`` never edit the same lines.
"""

from __future__ import annotations

EN: dict[str, str] = {
    "nav.roofline": "Roofline (course §3.3)",
    "nav.frontier": "Latency vs throughput (§3.4)",
    "nav.scheduler": "Scheduler (chunked prefill)",
    # shared words
    "op.qkv_proj": "QKV projection",
    "op.attention": "Attention (KV read)",
    "op.o_proj": "Output projection",
    "op.mlp": "MLP",
    "op.lm_head": "LM head",
    "op.elementwise": "Norms & elementwise",
    "phase.decode": "Decode",
    "phase.prefill": "Prefill",
    "phase.queued": "Waiting (not admitted yet)",
    "phase.stalled": "Stalled (running, skipped)",
    "bound.memory": "memory-bound",
    "bound.compute": "compute-bound",
    # controls
    "ctl.rf_batch": "Decode batch size (sequences per step)",
    "ctl.rf_batch.help": "Sequences decoded together in one step (the running batch). Each adds 2 FLOPs per weight "
                         "but no weight bytes: the decode points move right, toward the ridge.",
    "ctl.chunked_prefill": "Chunked prefill",
    "ctl.chunked_prefill.help": "vLLM --enable-chunked-prefill (on by default in V1): prompts are split into chunks "
                                "that ride along with the decodes under the max_num_batched_tokens budget.",
    "ctl.per_gpu": "Throughput per GPU",
    "ctl.per_gpu.help": "Divide throughput by the tensor-parallel size: fair when comparing TP 1 with TP 2.",
    "ctl.overlays": "Compare (≤ 4 variants)",
    "ctl.overlays.help": "Up to 4 variants, each drawn beside your scenario. Each variant changes one thing of the "
                         "sidebar scenario: the KV-cache precision, the tensor "
                         "parallelism (TP), the weight quantization, chunked prefill, a course §3.4 preset "
                         "(max_num_seqs / max_num_batched_tokens) or the GPU. The link keeps short codes "
                         "(kv:fp8, tp:2, preset:low_latency, gpu:h100-sxm …), the same in every language.",
    "ctl.sched_requests": "Requests",
    "ctl.sched_requests.help": "How many requests arrive, one every 'arrival gap'; odd-numbered ones have the long "
                               "prompt, even-numbered ones the short prompt.",
    "ctl.sched_long_prompt": "Long prompt (tokens)",
    "ctl.sched_long_prompt.help": "Prompt tokens of requests 2, 4, 6, 8.",
    "ctl.sched_short_prompt": "Short prompt (tokens)",
    "ctl.sched_short_prompt.help": "Prompt tokens of requests 1, 3, 5, 7.",
    "ctl.sched_output": "Output tokens",
    "ctl.sched_output.help": "Tokens each request generates (the first comes out of its prefill step).",
    "ctl.sched_gap_ms": "Arrival gap (ms)",
    "ctl.sched_gap_ms.help": "Time between two arrivals, in milliseconds.",
    "ctl.sched_budget": "max_num_batched_tokens",
    "ctl.sched_budget.help": "Token budget per step, vLLM --max-num-batched-tokens: most tokens one step may process. With chunked prefill "
                             "it is the chunk budget; without, vLLM needs it ≥ the longest prompt (raised if not).",
    "ctl.sched_max_seqs": "max_num_seqs",
    "ctl.sched_max_seqs.help": "Requests running at once, vLLM --max-num-seqs: requests beyond it wait in the queue.",
    # roofline page
    "rf.page_title": "Roofline: why decode is memory-bound and where batching stops paying",
    "rf.intro": "{model} on {tp} × {gpu}, {weights}, KV cache {kv}. Decode: each sequence attends "
                "{ctx} tokens; prefill: one prompt of {prompt} tokens. All numbers per GPU; FLOPs count a "
                "multiply-add as 2.",
    "rf.metric.mfu": "Decode MFU (batch {b})",
    "rf.metric.mfu.help": "Model FLOPs utilization: the step's FLOPs ÷ (step time × peak FLOP/s).",
    "rf.metric.mbu": "Decode MBU (batch {b})",
    "rf.metric.mbu.help": "Memory-bandwidth utilization: bytes moved ÷ (step time × HBM bandwidth).",
    "rf.metric.step": "Decode step (batch {b})",
    "rf.metric.step.help": "Time of one decode step; {tps} tokens/s for the batch.",
    "rf.metric.bstar": "Critical batch B*",
    "rf.metric.bstar.help": "Batch at which the MLP's intensity 2B/b_w reaches the ridge: below it adding sequences "
                            "is nearly free.",
    "rf.metric.pf_mfu": "Prefill MFU",
    "rf.metric.pf_mfu.help": "The same utilization for the prefill step of one {p}-token prompt: compute-bound.",
    "rf.kv_warning": "A batch of {b} sequences of {ctx} tokens does not fit the KV cache (at most {fit}): vLLM would "
                     "never run this batch. The roofline still shows the arithmetic.",
    "rf.caption": "Read it left to right: points under the sloped line are limited by memory bandwidth, points under a "
                  "flat roof by compute. Circles are the operators of one decode step, diamonds those of a prefill. "
                  "Points sit below the roof by the achievable efficiencies. Move the batch slider: the linear layers "
                  "(QKV, output, MLP, LM head) slide right toward the ridge, attention does not move: every sequence "
                  "reads its own KV cache.",
    "csv.roofline": "Download operator table (CSV)",
    "csv.decode_batch": "Download batch sweep (CSV)",
    "rf.trace.bandwidth": "HBM bandwidth {bw} TB/s",
    "rf.hover.bandwidth": "Memory roof: FLOP/s = intensity × {bw} TB/s",
    "rf.trace.roof": "{precision} peak {peak} {unit}",
    "rf.hover.roof": "{precision} tensor cores: {peak} {unit} dense; ridge {ridge} FLOP/B",
    "rf.trace.ridge": "Ridge point {ridge} FLOP/B",
    "rf.ridge_label": "ridge {ridge} FLOP/B<br>≈ batch B* {bstar}",
    "rf.hover.ridge": "Ridge = peak ÷ bandwidth = {ridge} FLOP/B; decode linear layers reach it at batch B* = {bstar}",
    "rf.hover.op": "<b>{op}</b> ({phase})<br>FLOPs: {flops} GFLOP<br>bytes: {bytes} MB<br>intensity: {ai} FLOP/B<br>"
                   "achieved: {achieved} TFLOP/s (roof {roof})<br>{bound}<br>time: {time} µs ({share} of the step)",
    "rf.legend.decode": "Decode step, batch {batch}",
    "rf.legend.prefill": "Prefill, {prompt} tokens",
    "rf.title": "Roofline of {gpu}: decode at batch {batch} vs prefill of {prompt} tokens",
    "rf.x": "Arithmetic intensity (FLOP/byte)",
    "rf.y": "Performance (TFLOP/s)",
    "db.title": "Decode step vs batch size: where batching stops paying",
    "db.hover.time": "batch {b}: {v} ms",
    "db.hover.tokens": "batch {b}: {v} tokens/s",
    "db.trace.step": "Step time",
    "db.trace.memory": "Memory time (bytes ÷ bandwidth)",
    "db.trace.compute": "Compute time (FLOPs ÷ peak)",
    "db.trace.tokens": "Tokens/s = batch ÷ step time",
    "db.trace.bstar": "B* = {v}",
    "db.trace.kv": "KV cache full at {v}",
    "db.trace.yours": "Your batch {b}",
    "db.x": "Decode batch<br>(sequences)",
    "db.y_left": "Time per step (ms)",
    "db.y_right": "Decode throughput (tokens/s)",
    "db.caption": "While memory time dominates, a bigger batch costs little more per step, so tokens/s grow with "
                  "the batch. {cross} Here the KV cache holds at most {fit} sequences of this context.",
    "db.cross.at": "Here compute time reaches memory time at batch {x} (B* ≈ {bstar} is the ridge of the weights "
                   "alone: the KV reads and the achievable rates move it); past that every sequence adds compute.",
    "db.cross.none": "Here compute time never reaches memory time up to batch {last}: B* ≈ {bstar} counts the weights "
                     "only, and each more sequence adds {mem} ms of reading (its KV cache) to a step but {comp} ms of "
                     "compute.",
    "op.table_title": "Operators of one step",
    "op.col.phase": "Step",
    "op.col.operator": "Operator",
    "op.col.flops": "FLOPs (GFLOP)",
    "op.col.weights": "Weights (MiB)",
    "op.col.kv": "KV cache (MiB)",
    "op.col.act": "Activations (MiB)",
    "op.col.intensity": "Intensity (FLOP/B)",
    "op.col.bound": "Bound",
    "op.col.time": "Time (µs)",
    "op.col.share": "Share of step",
    "mfu.title": "Check the course (§3.3): MFU at 1 and at 32 requests",
    "mfu.intro": "The course: “on an A100, MFU is 8–12 % for one request and 25–35 % at 32 concurrent, with 3–5× the "
                 "throughput and latency rising from 50 to 200 ms”. Computed for your scenario (prompt {i}, output {o} "
                 "tokens): the decode step alone, and whole requests with their prefill (closed loop).",
    "mfu.col.claim": "Claim",
    "mfu.col.course": "Course says",
    "mfu.col.calc": "Calculator says",
    "mfu.col.why": "Why",
    "mfu.claim.one": "MFU, 1 request",
    "mfu.claim.many": "MFU, 32 concurrent",
    "mfu.claim.throughput": "Throughput gain 1 → 32",
    "mfu.claim.latency": "Latency 1 → 32",
    "mfu.calc.mfu": "decode step {decode}; whole request {request}",
    "mfu.why.one": "A decode step does 2 FLOPs per weight while streaming b_w bytes per weight, so even at full "
                   "bandwidth its MFU is at most B/B* = 1/{bstar} = {cap1} at batch 1. 8–12 % cannot be decode alone: "
                   "it needs compute-bound prefill averaged in, i.e. long prompts and short outputs ({i} in / {o} out "
                   "here).",
    "mfu.why.many": "At 32 sequences the decode bound is 32/{bstar} = {cap32}; attention (KV reads, intensity ≈ 2G/b_kv) "
                    "and the per-step overhead keep the step below it. 25–35 % again needs the prefill work counted "
                    "in: compare the whole-request figure.",
    "mfu.why.throughput": "Decode is memory-bound: 32 sequences share one pass over the weights, so tokens per step "
                          "grow almost 32× while the step only grows by the KV reads and compute. How close to 32× "
                          "depends on the KV bytes per sequence (context, GQA, KV precision).",
    "mfu.why.latency": "The calculator's per-token latency (TPOT) rises for the same reason throughput saturates: "
                       "every sequence adds KV reads and compute to each step. The course does not say which latency "
                       "it measured or on which model.",
    "why.rf.mfu": "Decode MFU = {value}",
    "why.rf.mfu.take": "The decode step is {bound}: at small batches the tensor cores wait for the weights to arrive.",
    "why.rf.mfu.note": "P = peak of the linear layers' precision (dense tensor cores); B* = critical batch; the bound "
                       "B/B* ignores KV reads, so the real MFU is lower.",
    "why.rf.mbu": "Decode MBU = {value}",
    "why.rf.mbu.take": "MBU close to the achievable bandwidth fraction means the step is limited by moving bytes: "
                       "fewer bytes (quantized weights, FP8 KV) make it faster; more FLOP/s would not.",
    "why.rf.step": "Decode step time = {value}",
    "why.rf.step.take": "Each operator takes the longer of its compute and memory time (the roofline); this step is "
                        "{bound} and yields {tps} tokens/s.",
    "why.rf.comm": "Tensor-parallel communication: {value} per decode step",
    "why.rf.comm.take_custom": "At this size vLLM's custom all-reduce (a P2P kernel, a few µs) does the reduction; "
                               "NCCL would take {nccl} µs each. Decode-sized messages are latency, not bandwidth.",
    "why.rf.comm.take_nccl_link": "NCCL does this all-reduce: vLLM's custom kernel needs GPU peer-to-peer access, TP "
                                  "2/4/6/8, and beyond 2 GPUs an NVLink switch or xGMI mesh; {n} GPUs here lack one of them.",
    "why.rf.comm.take_nccl_size": "NCCL does this all-reduce: the message is 8 MiB or more, beyond vLLM's custom kernel.",
    "why.rf.comm.take_nccl_faster": "NCCL does this all-reduce: at this size its bandwidth beats the custom kernel's.",
    "why.rf.comm.note": "B_link is the achievable one-direction bandwidth of the link this TP size crosses: NVLink "
                        "(switch) at any size, a bridge only for a pair (PCIe beyond), xGMI (n − 1) × 64 GB/s.",
    "why.rf.bstar": "Critical batch B* = {value}",
    "why.rf.bstar.take": "Below about {bstar} sequences, one more sequence costs almost no time per step (the weights "
                         "are read once for all). Quantizing weights to 4 bits moves B* down: compute-bound sooner.",
    "why.rf.ridge": "Ridge point = {value} FLOP/B",
    "why.rf.ridge.take": "An operator needs more FLOPs per byte than the ridge to be compute-bound. The MLP's intensity "
                         "grows with the batch; attention's does not (each sequence reads its own KV), so decode "
                         "attention stays memory-bound at any batch.",
    "why.rf.pf_mfu": "Prefill MFU = {value}",
    "why.rf.pf_mfu.take": "A prompt of {prompt} tokens reuses every weight {prompt} times: far right of the ridge, "
                          "compute-bound. This is why TTFT scales with FLOPs and TPOT with bytes.",
    # frontier page
    "fr.page_title": "Latency vs throughput: the frontier and your SLA",
    "fr.cost_section": "Price, replicas, rate and lengths",
    "fr.intro": "{model} on {tp} × {gpu}; each client sends a prompt ({i} tokens on average) and reads its answer "
                "({o} tokens on average), then sends the next (closed loop). Each curve sweeps the number of clients from 1 past the engine's limit. Bold "
                "where both SLA targets are met.",
    "fr.preset.low_latency": "Low latency (8 / 2048)",
    "fr.preset.high_throughput": "High throughput (256 / 8192)",
    "fr.preset.default": "vLLM defaults",
    "fr.preset.help": "Course §3.4 preset: sets max_num_seqs / max_num_batched_tokens in the sidebar (Engine).",
    "fr.overlay_invalid": "Variant “{name}” cannot be computed: {reason}",
    "fr.overlay_not_fit": "Variant “{name}” does not fit in GPU memory: not drawn.",
    "fr.series.base": "Your scenario",
    "fr.variant.gpu": "GPU: {name}",
    "fr.variant.kv": "KV cache {value}",
    "fr.variant.tp": "TP = {value}",
    "fr.variant.quant": "Weights {value}",
    "fr.variant.chunked": "Chunked prefill {value}",
    "fr.variant.preset": "Preset: {value}",
    "fr.value.on": "on",
    "fr.value.off": "off",
    "fr.value.low_latency": "low latency (8 / 2048)",
    "fr.value.high_throughput": "high throughput (256 / 8192)",
    "fr.value.kv_auto": "auto (as the model)",
    "fr.value.low_latency.short": "low latency",
    "fr.value.high_throughput.short": "high throughput",
    "fr.value.quant_none": "unquantized",
    "fr.metric.best": "Best concurrency meeting the SLA",
    "fr.metric.best.help": "The number of clients with the highest throughput among those meeting both targets.",
    "fr.metric.x": "Throughput there",
    "fr.metric.x_gpu": "Throughput per GPU there",
    "fr.metric.x.help": "Output tokens/s of the whole TP group; {per_gpu} per GPU (TP {tp}); {total} tokens/s "
                        "including prompt tokens.",
    "fr.metric.ttft": "TTFT there",
    "fr.metric.tpot": "TPOT there",
    "ctl.price_usd": "Price ($ / GPU-hour)",
    "ctl.price_usd.help": "On-demand price of one GPU per hour; empty = the catalog's sourced price (calc/data/"
                          "gpu_prices.json: provider, date and the other providers' quotes).",
    "ctl.replicas": "Replicas",
    "ctl.replicas.help": "Independent copies of this deployment behind a load balancer: throughput and cost add up, "
                         "latencies are one replica's (each serves its share of the clients, or of the request rate "
                         "on the load test). The same replicas on the frontier and the load test.",
    "fr.price.catalog": "{price}",  # the catalog price as the placeholder (the help says empty = catalog); "catalog: …" was cut at 1440 px
    "fr.price.none": "—",
    "fr.cost.split": "Bill split by engine time: \\${cin} per million input tokens, \\${cout} per million output tokens "
                     "(\\${price}/GPU-hour × {gpus}).",
    "fr.replicas.total": "× {replicas}: {gpus}, {x} output tokens/s, \\${usd}/hour.",
    "fr.sim.running": "Simulating the closed loop request by request…",
    "fr.sim.instead": "At {c} clients the closed-form model is outside the regime where it matches the request "
                      "simulator (past the KV wall, or clients queueing for the token budget). Simulated closed loop "
                      "({n} requests, steady state): mean TTFT {ttft} ms (P95 {ttft95} ms), TPOT {tpot} ms, "
                      "E2E {e2e} s. Percentiles under other traffic: the Load test page.",
    "fr.cmd.replicas": "Run {replicas} of it ({gpus} each) behind a load balancer.",
    "fr.quality": "Weights {q}: published accuracy {value} (sources on the planner page).",
    "fr.metric.cost": "Cost per million output tokens",
    "fr.metric.cost.help": "GPU price per hour × GPUs ÷ 3,600 ÷ output tokens/s × 10⁶ (price and source in the GPU "
                           "catalog).",
    "fr.metric.cost.none": "This GPU has no sourced price in the catalog.",
    "fr.metric.knee": "Knee (max throughput ÷ latency)",
    "fr.metric.knee.help": "Past the knee, doubling the clients adds less than 41 % throughput and more than 41 % "
                           "latency (Kleinrock's power; see “why”).",
    "fr.none_feasible": "No concurrency meets TTFT ≤ {ttft} ms and TPOT ≤ {tpot} ms: the best this scenario reaches "
                        "is TTFT {min_ttft} ms and TPOT {min_tpot} ms. Relax the SLA, or use a faster GPU, more GPUs, "
                        "quantization or a shorter prompt.",
    "fr.sla_stat_mean": "SLA judged on the mean here: with the prefix cache's reuse, the frontier's closed-loop model "
                        "gives mean TTFT and TPOT only, not {q}. The load test measures {q} with the request simulator, "
                        "and the planner re-checks its "
                        "options at {q}, against the same SLA.",
    "fr.caption.sla": "Green: where the target on that axis is met; a point meets the SLA only if it is inside both. "
                      "Star: the best point that meets both; open diamond: the knee. Latencies are steady-state means "
                      "(percentiles need a load test, course §3.6).",
    "fr.caption.sla_q": "Green: where the target on that axis is met; a point meets the SLA only if it is inside both. "
                        "Star: the best point that meets both; open diamond: the knee. The TTFT panel shows the closed "
                        "loop's {q} TTFT, the statistic the SLA is judged on (the mean is in the hover); TPOT is the "
                        "steady-state mean per-token time. Percentiles come from the queueing model of C clients, "
                        "checked against long simulated runs; a load test measures them (course §3.6).",
    "fr.metric.ttft_q": "{q} TTFT there",
    "fr.metric.ttft_q.help": "The closed loop's TTFT at this percentile, which the SLA is judged on; the mean TTFT "
                             "there is {mean} ms.",
    "fr.caption.conc": "Throughput climbs while adding clients fills the batch, then stops at the engine's limit "
                       "(dotted: KV cache full or max_num_seqs; {wall} for your scenario). Beyond it clients only wait "
                       "in the queue: TTFT grows, throughput does not. The KV limit counts running requests at their "
                       "mean context (prompt + half the output), so it is a little above the memory page's max "
                       "concurrency, which counts every request at its full context.",
    "csv.frontier": "Download frontier data (CSV)",
    "fr.compare": "Scenarios side by side",
    "fr.col.scenario": "Scenario",
    "fr.col.best": "Best concurrency (clients)",
    "fr.col.x": "Output tok/s there",
    "fr.col.x_gpu": "Per GPU (tok/s)",
    "fr.col.knee": "Knee (clients)",
    "fr.col.wall": "Engine limit (sequences)",
    "fr.col.cost": "$ per M output tokens",
    "fr.cmd.title": "The vLLM command for your scenario",
    "fr.cmd.caption": "max_num_seqs is set to the best SLA-meeting concurrency ({c}): vLLM will not batch more, so "
                      "send at most {c} concurrent requests to this replica (or add replicas).",
    "fr.cmd.caption_none": "No point meets the SLA, so max_num_seqs keeps its value ({c}).",
    "fr.hover": "<b>{name}</b><br>concurrency {c} (running {r})<br>TTFT {ttft} ms · TPOT {tpot} ms<br>{x} output tok/s "
                "({xg} per GPU)<br>$ {cost} per M tokens",
    "fr.trace.best": "Best point meeting the SLA",
    "fr.hover.best": "<b>best point meeting the SLA</b>",
    "fr.trace.knee": "Knee",
    "fr.hover.knee": "<b>knee: maximum throughput ÷ latency</b>",
    "fr.trace.wall_kv": "{name}: KV cache full at {v}",
    "fr.trace.wall_seqs": "{name}: max_num_seqs = {v}",
    "fr.trace.wall_legend": "Engine limit (KV cache or max_num_seqs)",
    "fr.trace.yours": "Your concurrency {c}",
    "fr.title.concurrency": "Throughput vs concurrency: where more clients stop helping",
    "fr.x.concurrency": "Concurrency (clients)",
    "fr.y.total": "Output throughput (tokens/s)",
    "fr.y.per_gpu": "Output throughput per GPU (tokens/s)",
    "fr.sub.tpot": "vs TPOT",
    "fr.sub.ttft": "vs TTFT",
    "fr.hover.region_tpot": "TPOT ≤ {v} ms",
    "fr.hover.region_ttft": "TTFT ≤ {v} ms",
    "fr.trace.feasible": "Meets the target",
    "fr.trace.traffic": "Your traffic: {rate} req/s ÷ {replicas}<br>= {x} output tok/s each",
    "fr.trace.traffic_gpu": "Your traffic: {rate} req/s ÷ {replicas}<br>= {x} output tok/s per GPU",
    "fr.trace.sla_tpot": "SLA TPOT {v} ms",
    "fr.trace.sla_ttft": "SLA TTFT {v} ms",
    "fr.x.tpot": "TPOT (ms per token)",
    "fr.x.ttft": "TTFT (ms)",
    "fr.x.ttft_q": "{q} TTFT (ms)",
    "fr.title.sla": "Throughput vs latency, SLA TTFT ≤ {ttft} ms and TPOT ≤ {tpot} ms",
    "why.fr.best": "Best SLA-meeting concurrency = {value}",
    "why.fr.best.next_tpot": "its TPOT breaks the target",
    "why.fr.best.next_ttft": "its TTFT breaks the target",
    "why.fr.best.next_flat": "throughput no longer grows (engine limit)",
    "why.fr.best.take": "The next point, {cn} clients, is not better: {next} (TTFT {ttft} ms, TPOT {tpot} ms). "
                        "Move an SLA slider and this point moves with it.",
    "why.fr.x": "Throughput at the best point = {value}",
    "why.fr.x.take": "Little's law: clients ÷ time per request. {per_gpu} tokens/s per GPU (TP {tp}).",
    "why.fr.tpot": "TPOT at the best point = {value}",
    "why.fr.tpot.take": "TPOT is at least one decode step of R sequences, which is at least the time to stream the "
                        "weights and their KV once; other requests' prompts interleaved with the decodes add to it.",
    "why.fr.ttft": "TTFT at the best point = {value}",
    "why.fr.ttft.take": "TTFT is the prompt's own prefill (k steps, each shared with the running decodes; "
                        "compute-bound), stretched by other requests' prefills interleaved with it, plus waiting for a "
                        "free slot (C − R clients) once clients exceed the engine's limit.",
    "why.fr.cost": "Cost per million output tokens = {value}",
    "why.fr.cost.take": "Cost falls as throughput rises: the SLA that caps concurrency is also what sets the price.",
    "why.fr.none": "No concurrency meets the SLA",
    "why.fr.none.take": "Even one client misses a target: relax the SLA, or make prefill (TTFT) or decode (TPOT) "
                        "faster: more GPUs, quantized weights or KV, a faster GPU, shorter prompts.",
    "why.fr.knee": "Knee = {value} clients",
    "why.fr.knee.take": "Kleinrock's power (throughput ÷ latency) is highest here: by Little's law, X = C ÷ E2E, so "
                        "below the knee a doubling of clients buys more than 41 % extra throughput for less than 41 % "
                        "extra latency, and past it less for more (course §3.6: find the knee, don't pass it).",
    "why.fr.wall": "Engine limit = {value} sequences",
    "why.fr.wall.take": "Beyond this many clients the extra requests wait: throughput stays flat and TTFT grows "
                        "linearly with the queue. FP8 KV, more GPUs or shorter contexts move the KV wall right; with "
                        "chunked prefill, a larger max_num_batched_tokens raises the token-budget limit.",
    # case study
    "nav.case_study": "Course §3.5: before vs after",
    "cs.link": "Check the course (§3.5): the case study, before and after, recomputed",
    "cs.page_title": "Course §3.5: the case study, before (A) and after (B)",
    "cs.series.before": "A: before ({c} clients, unchunked, FP16 KV)",  # ≤ 42 characters: one legend line at 390 px
    "cs.series.after": "B: after ({c} clients, chunked 512, FP8 KV)",
    "cs.delta.help": "{label}; the small number is the change from A",
    "cs.chart.title": "A and B on one chart, against the course's chat SLA (TTFT ≤ {ttft} ms, TPOT ≤ {tpot} ms)",
    "cs.chart.caption": "Each line sweeps the clients of one setup; the filled circles are the case's own {a} and {b} "
                        "clients; thick where both targets are met, the star is each setup's best point inside them. "
                        "Steady-state means (percentiles: the load-test page). Fixed inputs: the sidebar's model and "
                        "engine do not apply here, its efficiency assumptions do.",
    "cs.table.title": "What the course prints, what the calculator computes, and why",
    "cs.table.caption": "Each explanation is chosen from the computed numbers: move an efficiency assumption and the "
                        "text follows the direction the numbers take.",
    "fr.trace.chosen": "{label} at {c} clients",
    "case.why.ttft_ms_drop": "Here the calculator's TTFT falls too ({ttft_before} → {ttft_after} ms): with these "
                             "efficiencies the 512-token chunks ({k} per prompt) let a new prompt start beside the "
                             "decodes sooner than whole prompts queue behind each other. The course's 50 % drop is "
                             "larger; its setup (prompt length, arrivals, vLLM version) is not given.",
    "band.range": "range {lo}–{hi}",
    "band.where": "{regime}, {family}, {kind}",
    "band.regime.single": "single request", "band.regime.closed": "closed loop", "band.regime.open": "open loop",
    "band.regime.burst": "burst", "band.moe": "MoE", "band.dense": "dense",
    "band.own": "from {n} measurements in this regime ({where})",
    "band.few": "only {k} measurements in this regime ({where}): weighed with {n} of a wider group",
    "band.none": "no measurements in this regime ({where}): from {n} of a wider group, widened",
    "band.help": "The range real servers would likely show, {own}; their median error {median} %, p90 {p90} %. "
                 "`python -m calc estimate … --format json` lists them (band_basis).",
    "fr.open_loop": "At your rate, {rate} requests/s over {replicas} (an open loop, Poisson arrivals; the queueing model "
                    "`estimate --rate` reports, checked against the request simulator): TTFT {ttft} ms mean, {ttft_q} ms "
                    "{q}; TPOT {tpot} ms; {running} sequences running per replica. {verdict}",
    "fr.open_loop.meets": "It meets the SLA.",
    "fr.open_loop.misses": "It misses the SLA: add replicas (the planner sizes them) or change the engine.",
    "fr.open_loop.kv_wall": "The batch often reaches its sequence or KV limit here: the load test's simulation is the "
                            "better answer.",
    "fr.open_loop.over": "{rate} requests/s over {replicas} is past what one replica of this scenario can serve: its "
                         "queue grows without bound. Add replicas or change the engine.",
    "fr.open_loop.near_capacity": "The token budget is busy with prompts {busy} % of the time here. Near capacity the "
                                  "TTFT climbs steeply with the rate: long simulations (100,000 requests) put the P95 "
                                  "within about 20 % of this model (up to 1.2× it), and runs of 20,000 requests differed "
                                  "from one another by up to 1.5×: the load test with more requests is the surer answer.",
    "fr.open_loop.no_drain": "Here the token budget can stay full and not drain: while prompts queue the "
                             "decode batch grows, each step leaves less room for prompts, and the queue keeps "
                             "growing; the load test's simulation is the better answer.",
    "case.title": "Check the course (§3.5): the case study, recomputed",
    "case.intro": "Llama-2-7B in FP16 on one A100 80GB. Before: 16 clients, context 2,048 tokens (read here as a "
                  "{i}-token prompt + {o} output), no chunked prefill. After: chunked prefill with a 512-token budget, "
                  "32 clients, FP8 KV cache. Throughput = output tokens/s.",
    "case.col.metric": "Metric",
    "case.col.course": "Course says (before → after)",
    "case.col.calc": "Calculator says",
    "case.col.why": "Why they differ",
    "case.metric.ttft_ms": "TTFT",
    "case.metric.tpot_ms": "TPOT",
    "case.metric.tokens_per_s": "Throughput",
    "case.metric.memory_gb": "Memory in use",
    "case.why.ttft_ms": "Chunked prefill does not shrink a prompt's compute: with a 512-token budget the prompt is "
                        "split into {k} chunks, each sharing a step with the decodes, which tends to raise TTFT "
                        "(Sarathi-Serve measured chunked-only P50 TTFT 1.04 s vs 0.76 s), and twice the clients add "
                        "queueing. The course's 50 % drop needs its “before” TTFT to be mostly waiting behind other "
                        "whole prompts, which a steady closed loop does not have; its setup (prompt length, arrivals, "
                        "vLLM version) is not given. The scheduler page shows both effects step by step.",
    "case.why.tpot_ms": "Both rise: twice the sequences read twice the KV per step (FP8 halves it back) and prompt "
                        "chunks ride along. The absolute values differ: streaming the weights and the KV of 16 requests "
                        "once takes {floor} ms at full bandwidth; the course's 45 ms is several times that, the "
                        "calculator adds the efficiencies, interleaved prefill and the per-step overhead.",
    "case.why.tokens_per_s": "In a decode-dominated closed loop, throughput ≈ clients ÷ TPOT (Little's law). The "
                             "course's own numbers obey it: 16 ÷ 45 ms = {little_before} and 32 ÷ 52 ms = "
                             "{little_after} tok/s, close to its 320 and 680. The calculator's clients ÷ TPOT gives "
                             "{calc_little_before} and {calc_little_after} tok/s; its throughput in the table, "
                             "{calc_before} → {calc_after} tok/s, is a little lower because every request also spends "
                             "its TTFT in prefill before producing tokens. Its lower TPOT is why its throughput is higher.",
    "case.why.memory_gb": "Computed: weights + activations + runtime overhead + the KV of the running requests "
                          "(16 × 2,048 tokens in FP16, then 32 × 2,048 in FP8: the same bytes). vLLM preallocates its "
                          "whole budget (gpu_memory_utilization × memory = {budget} GB) at start-up, so nvidia-smi "
                          "would show about that in both cases, not 38 or 41 GB.",
    # scheduler page
    "sc.page_title": "Scheduler: chunked prefill vs whole prefills, step by step",
    "sc.intro": "{model} on {tp} × {gpu}. A few requests arrive one after another; every engine step runs one forward "
                "pass over the tokens the scheduler picked, and its duration comes from the same roofline model as "
                "the other pages. Top: chunked prefill (vLLM V1): decodes first, then prompt chunks in the leftover "
                "token budget. Bottom: without it (vLLM V0): a waiting prompt runs whole in its own step while every "
                "decode waits.",
    "sc.too_long": "A prompt of {p} tokens plus {o} output tokens exceeds max_model_len = {mml}: shorten the prompt "
                   "or the output.",
    "sc.truncated": "The simulation stopped at its step limit before every request finished (a request larger than "
                    "the KV cache never runs); metrics cover the finished requests.",
    "sc.policy.chunked": "Chunked prefill (vLLM V1)",
    "sc.policy.whole": "Whole prefills (vLLM V0, no chunking)",
    "sc.metric.ttft_mean": "Mean TTFT",
    "sc.metric.ttft_max": "Worst TTFT",
    "sc.metric.tpot": "Mean TPOT",
    "sc.metric.gap": "Worst token gap",
    "sc.metric.gap.help": "The longest wait between two consecutive tokens of any request: a decode stalled by a "
                          "prefill shows up here (what a user sees as the text freezing).",
    "sc.delta_caption": "Small numbers under each metric: difference from the other policy (green = better).",
    "sc.title.chunked": "Chunked prefill: budget {budget} tokens per step, max_num_seqs {seqs}",
    "sc.title.whole": "Whole prefills: budget {budget} tokens (≥ longest prompt), max_num_seqs {seqs}",
    "sc.caption.chunked": "Each rose bar in a request's row is one prompt chunk sharing a step with the indigo decodes: "
                          "decodes never stop, so the worst token gap stays small; a long prompt needs several steps, "
                          "and a short one that arrives behind it can wait for budget (grey).",
    "sc.caption.whole": "Each long rose bar is a whole prompt in its own step; meanwhile every running request is "
                        "stalled (sand): its next token waits for the whole prefill. TTFT can be shorter, the token "
                        "gaps are much longer.",
    "csv.schedule_steps": "Download steps (CSV)",
    "csv.schedule_requests": "Download per-request metrics (CSV)",
    "sc.table_title": "Per request: TTFT, TPOT and worst token gap",
    "sc.col.request": "Request",
    "sc.col.arrival": "Arrival (ms)",
    "sc.col.prompt": "Prompt (tokens)",
    "sc.col.output": "Output (tokens)",
    "sc.col.ttft_chunked": "TTFT chunked (ms)",
    "sc.col.ttft_whole": "TTFT whole (ms)",
    "sc.col.tpot_chunked": "TPOT chunked (ms)",
    "sc.col.tpot_whole": "TPOT whole (ms)",
    "sc.col.gap_chunked": "Worst gap chunked (ms)",
    "sc.col.gap_whole": "Worst gap whole (ms)",
    "sc.col.decode": "decodes",
    "sc.col.prefill": "prompt tokens",
    "sc.request": "Request {i} ({p} tok)",
    "sc.request.short": "#{i} · {p}",  # on a phone: the Gantt's labels took half its width
    "sc.sub.tokens": "Tokens in each step<br>(bar width = step duration)",
    "sc.sub.gantt": "What each request is doing",
    "sc.hover.step": "step {j}: starts {s} ms, lasts {d} ms<br>{dec} decodes + {pf} prompt tokens",
    "sc.trace.budget": "Token budget {v}",
    "sc.hover.segment": "{s} → {e} ms<br>{n} tokens in {k} steps",
    "sc.trace.first": "First token (TTFT)",
    "sc.hover.first": "first token: TTFT {v} ms",
    "sc.x": "Time since the first arrival (ms)",
    "sc.y.tokens": "Tokens",
    "why.sc.ttft": "{policy}: worst TTFT (request {i}) = {value}",
    "why.sc.steps": "steps",
    "why.sc.waiting": "waiting",
    "why.sc.ttft.take_chunked": "The prompt only gets the budget the decodes leave, one chunk per step, so a long "
                                "prompt needs several steps; a request behind it waits for budget.",
    "why.sc.ttft.take_whole": "A waiting prompt runs as soon as a slot is free, in one step: the prompt itself is "
                              "fast, but it may queue behind other whole prompts.",
    "why.sc.ttft_mean": "{policy}: mean TTFT = {value}",
    "why.sc.gap": "{policy}: worst token gap = {value}",
    "why.sc.gap.take_chunked": "No step is longer than the budget allows, so no running request waits more than one "
                               "(mixed) step for its next token.",
    "why.sc.gap.take_whole": "A whole prefill step carries no decodes: every running request waits for it, so the gap "
                             "is at least the longest prefill.",
    "why.sc.tpot": "{policy}: mean TPOT = {value}",
    "why.sc.mean": "mean over requests",
    "why.sc.tpot.take": "TPOT averages the gaps after the first token: stalls raise it, and so do prompt chunks that "
                        "make shared steps longer.",
}

ZH: dict[str, str] = {
    "nav.roofline": "Roofline 模型（课程 §3.3）",
    "nav.frontier": "延迟与吞吐（§3.4）",
    "nav.scheduler": "调度器（Chunked Prefill）",
    "op.qkv_proj": "QKV 投影",
    "op.attention": "注意力（读 KV）",
    "op.o_proj": "输出投影",
    "op.mlp": "MLP（前馈层）",
    "op.lm_head": "LM head（输出层）",
    "op.elementwise": "归一化与逐元素运算",
    "phase.decode": "Decode（解码）",
    "phase.prefill": "Prefill（预填充）",
    "phase.queued": "等待（尚未被调度）",
    "phase.stalled": "停顿（在运行但本步被跳过）",
    "bound.memory": "访存受限",
    "bound.compute": "计算受限",
    "ctl.rf_batch": "Decode 批量（每步序列数）",
    "ctl.rf_batch.help": "同一步里一起解码的序列数（运行中的批）。每多一个序列，每个权重多 2 次 FLOP，但不多读权重字节："
                         "Decode 的点向右移动，靠近屋脊点。",
    "ctl.chunked_prefill": "分块预填充",
    "ctl.chunked_prefill.help": "vLLM --enable-chunked-prefill（V1 默认开启）：提示词被切成小块，在 max_num_batched_tokens "
                                "预算内与 Decode 同步执行。",
    "ctl.per_gpu": "按每卡计吞吐量",
    "ctl.per_gpu.help": "吞吐除以张量并行数：比较 TP 1 与 TP 2 时更公平。",
    "ctl.overlays": "对比（最多 4 个变体）",
    "ctl.overlays.help": "每个变体只改侧栏场景中的一项：KV Cache 精度、张量并行（TP）、权重量化、分块预填充、"
                         "课程 §3.4 预设（max_num_seqs / max_num_batched_tokens）或 GPU。链接中保存简短代码"
                         "（kv:fp8、tp:2、preset:low_latency、gpu:h100-sxm …），与语言无关。",
    "ctl.sched_requests": "请求数",
    "ctl.sched_requests.help": "依次到达的请求个数，间隔为“到达间隔”；奇数号请求用短提示词，偶数号用长提示词。",
    "ctl.sched_long_prompt": "长提示词（token）",
    "ctl.sched_long_prompt.help": "请求 2、4、6、8 的提示词 token 数。",
    "ctl.sched_short_prompt": "短提示词（token）",
    "ctl.sched_short_prompt.help": "请求 1、3、5、7 的提示词 token 数。",
    "ctl.sched_output": "输出 token 数",
    "ctl.sched_output.help": "每个请求生成的 token 数（第一个来自它的预填充步）。",
    "ctl.sched_gap_ms": "到达间隔（ms）",
    "ctl.sched_gap_ms.help": "相邻两个请求到达的时间差，单位毫秒。",
    "ctl.sched_budget": "max_num_batched_tokens（每步预算）",
    "ctl.sched_budget.help": "vLLM --max-num-batched-tokens：一步最多处理的 token 数。开启分块预填充时即分块预算；"
                             "不开启时 vLLM 要求它不小于最长提示词（不足时自动提高）。",
    "ctl.sched_max_seqs": "max_num_seqs（并发上限）",
    "ctl.sched_max_seqs.help": "vLLM --max-num-seqs：超出的请求在队列中等待。",
    "rf.page_title": "Roofline：为什么 Decode 受限于访存，批处理在哪里不再划算",
    "rf.intro": "{model} 运行在 {tp} × {gpu} 上，{weights}，KV Cache {kv}。Decode：每个序列关注 {ctx} 个 token；"
                "Prefill：一条 {prompt} token 的提示词。所有数字均为每卡数值；一次乘加记为 2 次 FLOP。",
    "rf.metric.mfu": "Decode MFU（批量 {b}）",
    "rf.metric.mfu.help": "模型算力利用率：本步 FLOPs ÷（步时 × 峰值 FLOP/s）。",
    "rf.metric.mbu": "Decode MBU（批量 {b}）",
    "rf.metric.mbu.help": "显存带宽利用率：搬运字节数 ÷（步时 × HBM 带宽）。",
    "rf.metric.step": "Decode 单步（批量 {b}）",
    "rf.metric.step.help": "一个 Decode 步的耗时；整批每秒 {tps} 个 token。",
    "rf.metric.bstar": "临界批量 B*",
    "rf.metric.bstar.help": "MLP 的算术强度 2B/b_w 达到屋脊点时的批量：低于它时，多加序列几乎不花时间。",
    "rf.metric.pf_mfu": "Prefill 的 MFU",
    "rf.metric.pf_mfu.help": "同样的利用率，算在一条 {p} token 提示词的预填充步上：计算受限。",
    "rf.kv_warning": "{b} 个 {ctx} token 的序列放不进 KV Cache（最多 {fit} 个）：vLLM 不会运行这么大的批。"
                     "Roofline 图仍显示其算术关系。",
    "rf.caption": "从左往右看：斜线下方的点受显存带宽限制，水平屋顶下方的点受算力限制。圆点是一个 Decode 步的各算子，"
                  "菱形是 Prefill 的各算子。点落在屋顶下方的距离即可达效率。拖动批量滑块：线性层（QKV、输出投影、MLP、LM head）"
                  "向右滑向屋脊点，注意力不动：每个序列都要读自己的 KV Cache。",
    "csv.roofline": "下载算子表（CSV）",
    "csv.decode_batch": "下载批量扫描数据（CSV）",
    "rf.trace.bandwidth": "HBM 带宽 {bw} TB/s",
    "rf.hover.bandwidth": "访存屋顶：FLOP/s = 算术强度 × {bw} TB/s",
    "rf.trace.roof": "{precision} 峰值 {peak} {unit}",
    "rf.hover.roof": "{precision} Tensor Core：稠密 {peak} {unit}；屋脊点 {ridge} FLOP/B",
    "rf.trace.ridge": "屋脊点 {ridge} FLOP/B",
    "rf.ridge_label": "屋脊点 {ridge} FLOP/B<br>≈ 批量 B* {bstar}",
    "rf.hover.ridge": "屋脊点 = 峰值 ÷ 带宽 = {ridge} FLOP/B；Decode 线性层在批量 B* = {bstar} 时到达",
    "rf.hover.op": "<b>{op}</b>（{phase}）<br>FLOPs：{flops} GFLOP<br>字节：{bytes} MB<br>算术强度：{ai} FLOP/B<br>"
                   "实际：{achieved} TFLOP/s（屋顶 {roof}）<br>{bound}<br>耗时：{time} µs（占本步 {share}）",
    "rf.legend.decode": "Decode 步，批量 {batch}",
    "rf.legend.prefill": "Prefill，{prompt} token",
    "rf.title": "{gpu} 的 Roofline：批量 {batch} 的 Decode 与 {prompt} token 的 Prefill",
    "rf.x": "算术强度（FLOP/字节）",
    "rf.y": "性能（TFLOP/s）",
    "db.title": "Decode 单步随批量变化：批处理在哪里不再划算",
    "db.hover.time": "批量 {b}：{v} ms",
    "db.hover.tokens": "批量 {b}：{v} token/s",
    "db.trace.step": "单步耗时",
    "db.trace.memory": "访存时间（字节 ÷ 带宽）",
    "db.trace.compute": "计算时间（FLOPs ÷ 峰值）",
    "db.trace.tokens": "token/s = 批量 ÷ 单步耗时",
    "db.trace.bstar": "临界批量 B* = {v}",
    "db.trace.kv": "KV Cache 在 {v} 时占满",
    "db.trace.yours": "你的批量 {b}",
    "db.x": "Decode 批量<br>（序列数）",
    "db.y_left": "每步耗时（ms）",
    "db.y_right": "Decode 吞吐量（token/s）",
    "db.caption": "访存时间占主导时，增大批量只略微增加单步耗时，token/s 随批量增长。{cross}此上下文下 KV Cache 最多容纳 {fit} 个序列。",
    "db.cross.at": "此处计算时间在批量 {x} 时达到访存时间（B* ≈ {bstar} 只按权重计算：KV 读取和可达效率会使它移动）；之后每个序列都会增加计算量。",
    "db.cross.none": "此处直到批量 {last}，计算时间都达不到访存时间：B* ≈ {bstar} 只计权重，而每多一个序列，"
                     "单步增加 {mem} ms 的读取（它的 KV Cache），计算只增加 {comp} ms。",
    "op.table_title": "一个步骤中的各算子",
    "op.col.phase": "步骤",
    "op.col.operator": "算子",
    "op.col.flops": "FLOPs（GFLOP）",
    "op.col.weights": "权重（MiB）",
    "op.col.kv": "KV Cache（MiB）",
    "op.col.act": "激活（MiB）",
    "op.col.intensity": "算术强度（FLOP/B）",
    "op.col.bound": "瓶颈",
    "op.col.time": "耗时（µs）",
    "op.col.share": "占本步比例",
    "mfu.title": "核对课程（§3.3）：1 个与 32 个请求时的 MFU",
    "mfu.intro": "课程原文：“在A100上，单请求推理的MFU约为8%～12%；并发数提升到32时，MFU可提升至25%～35%，吞吐量提升3～5倍，"
                 "但单请求延迟会从50ms增加到200ms左右”。按你的场景计算（提示词 {i}、输出 {o} token）：仅 Decode 步，"
                 "以及含预填充的完整请求（闭环）。",
    "mfu.col.claim": "说法",
    "mfu.col.course": "课程数值",
    "mfu.col.calc": "计算器数值",
    "mfu.col.why": "原因",
    "mfu.claim.one": "MFU，1 个请求",
    "mfu.claim.many": "MFU，32 个并发",
    "mfu.claim.throughput": "吞吐提升 1 → 32",
    "mfu.claim.latency": "延迟 1 → 32",
    "mfu.calc.mfu": "Decode 步 {decode}；完整请求 {request}",
    "mfu.why.one": "一个 Decode 步对每个权重做 2 次 FLOP，却要读 b_w 字节，所以即使带宽跑满，批量 1 时 MFU 最多为 "
                   "B/B* = 1/{bstar} = {cap1}。8%～12% 不可能只来自 Decode：必须把计算受限的预填充平均进来，即长提示词、"
                   "短输出（此处为输入 {i} / 输出 {o}）。",
    "mfu.why.many": "32 个序列时 Decode 的上限是 32/{bstar} = {cap32}；注意力（读 KV，算术强度 ≈ 2G/b_kv）与每步固定开销"
                    "使实际值更低。25%～35% 同样需要把预填充算进去：请对照“完整请求”一栏。",
    "mfu.why.throughput": "Decode 受限于访存：32 个序列共享一次权重读取，每步产出的 token 几乎增加 32 倍，而单步只因 KV 读取"
                          "和计算略有变长。离 32 倍有多近取决于每个序列的 KV 字节数（上下文、GQA、KV 精度）。",
    "mfu.why.latency": "计算器的单 Token 延迟（TPOT）上升，与吞吐饱和是同一原因：每个序列都给每一步增加 KV 读取与计算。"
                       "课程没有说明测的是哪种延迟、哪个模型。",
    "why.rf.mfu": "Decode 的 MFU = {value}",
    "why.rf.mfu.take": "这个 Decode 步{bound}：小批量时 Tensor Core 在等待权重从显存送达。",
    "why.rf.mfu.note": "P = 线性层所用精度的峰值（稠密 Tensor Core）；B* = 临界批量；上限 B/B* 未计入 KV 读取，实际 MFU 更低。",
    "why.rf.mbu": "Decode 的 MBU = {value}",
    "why.rf.mbu.take": "MBU 接近可达带宽比例，说明这一步卡在搬运字节上：字节更少（量化权重、FP8 KV）就更快；"
                       "算力更强则无济于事。",
    "why.rf.step": "Decode 单步耗时 = {value}",
    "why.rf.step.take": "每个算子取其计算时间与访存时间的较大者（即 Roofline）；这一步{bound}，每秒产出 {tps} 个 token。",
    "why.rf.comm": "张量并行通信：每个 Decode 步 {value}",
    "why.rf.comm.take_custom": "在这个消息大小下由 vLLM 的自定义 All-reduce（P2P kernel，几微秒）完成归约；用 NCCL 每次需要 "
                               "{nccl} µs。Decode 大小的消息受延迟限制，而不是带宽。",
    "why.rf.comm.take_nccl_link": "这次 All-reduce 走 NCCL：vLLM 的自定义 kernel 需要 GPU 点对点访问、TP 为 2/4/6/8，"
                                  "且超过 2 卡时需要 NVLink 交换机或 xGMI 全互联；这里的 {n} 卡缺少其中一项。",
    "why.rf.comm.take_nccl_size": "这次 All-reduce 走 NCCL：消息 ≥ 8 MiB，超出 vLLM 自定义 kernel 的范围。",
    "why.rf.comm.take_nccl_faster": "这次 All-reduce 走 NCCL：在这个大小下它的带宽优于自定义 kernel。",
    "why.rf.comm.note": "B_link 是该 TP 大小实际经过的链路可达到的单向带宽：NVLink（交换机）任意大小；桥接只连两卡"
                        "（更多卡走 PCIe）；xGMI 为 (n − 1) × 64 GB/s。",
    "why.rf.bstar": "临界批量 B* = {value}",
    "why.rf.bstar.take": "少于约 {bstar} 个序列时，多一个序列几乎不增加单步时间（权重只读一次，所有序列共享）。"
                         "把权重量化到 4 比特会使 B* 变小：更早进入计算受限。",
    "why.rf.ridge": "屋脊点 = {value} FLOP/B",
    "why.rf.ridge.take": "算子每字节的 FLOP 数超过屋脊点才是计算受限。MLP 的算术强度随批量增长；注意力的不会（每个序列读自己的 KV），"
                         "所以 Decode 的注意力在任何批量下都受限于访存。",
    "why.rf.pf_mfu": "Prefill 的 MFU = {value}",
    "why.rf.pf_mfu.take": "{prompt} token 的提示词让每个权重被复用 {prompt} 次：远在屋脊点右侧，计算受限。"
                          "这就是 TTFT 随 FLOPs、TPOT 随字节数变化的原因。",
    "fr.page_title": "延迟与吞吐：性能前沿与你的 SLA",
    "fr.cost_section": "价格、副本数、请求率与长度",
    "fr.intro": "{model} 运行在 {tp} × {gpu} 上；每个客户端发送一个提示词（平均 {i} token）、读取回答（平均 {o} token），然后立刻发送下一个"
                "（闭环）。每条曲线把客户端数从 1 扫到超过引擎上限。加粗部分同时满足两个 SLA 目标。",
    "fr.preset.low_latency": "低延迟（8 / 2048）",
    "fr.preset.high_throughput": "高吞吐（256 / 8192）",
    "fr.preset.default": "vLLM 默认值",
    "fr.preset.help": "课程 §3.4 的预设：在侧栏（推理引擎）中设置 max_num_seqs / max_num_batched_tokens。",
    "fr.overlay_invalid": "变体“{name}”无法计算：{reason}",
    "fr.overlay_not_fit": "变体“{name}”放不进显存：未绘制。",
    "fr.series.base": "你的场景",
    "fr.variant.gpu": "GPU：{name}",
    "fr.variant.kv": "KV Cache {value}",
    "fr.variant.tp": "张量并行 = {value}",
    "fr.variant.quant": "权重 {value}",
    "fr.variant.chunked": "分块预填充 {value}",
    "fr.variant.preset": "预设：{value}",
    "fr.value.on": "开",
    "fr.value.off": "关",
    "fr.value.low_latency": "低延迟（8 / 2048）",
    "fr.value.high_throughput": "高吞吐（256 / 8192）",
    "fr.value.kv_auto": "auto（与模型相同）",
    "fr.value.low_latency.short": "低延迟",
    "fr.value.high_throughput.short": "高吞吐",
    "fr.value.quant_none": "不量化",
    "fr.metric.best": "满足 SLA 的最佳并发",
    "fr.metric.best.help": "在同时满足两个目标的客户端数中，吞吐最高的那个。",
    "fr.metric.x": "此时吞吐量",
    "fr.metric.x_gpu": "此时每卡吞吐量",
    "fr.metric.x.help": "整个张量并行组的输出 token/s；每卡 {per_gpu}（TP {tp}）；含提示词 token 共 {total} token/s。",
    "fr.metric.ttft": "此时 TTFT",
    "fr.metric.tpot": "此时 TPOT",
    "ctl.price_usd": "价格（美元/GPU·小时）",
    "ctl.price_usd.help": "一张 GPU 每小时的按需价格；留空 = 目录中有来源的价格（calc/data/gpu_prices.json：厂商、日期和其他厂商报价）。",
    "ctl.replicas": "副本数",
    "ctl.replicas.help": "负载均衡器后的独立部署副本：吞吐和费用相加，延迟是单个副本的（每个副本承担自己那份客户端，压测页上则是自己那份请求率）。前沿页和压测页共用同一个副本数。",
    "fr.price.catalog": "{price}",
    "fr.price.none": "—",
    "fr.cost.split": "按引擎时间分摊费用：每百万输入 token \\${cin}，每百万输出 token \\${cout}（每 GPU 每小时 \\${price} × {gpus}）。",
    "fr.replicas.total": "× {replicas}：{gpus}，每秒 {x} 个输出 token，每小时 \\${usd}。",
    "fr.sim.running": "正在逐请求模拟闭环负载…",
    "fr.sim.instead": "在 {c} 个客户端时，闭式模型处于与请求级模拟不一致的区间（超过 KV 上限，或客户端排队等待 token 预算）。"
                      "模拟闭环（{n} 个请求，稳态）：平均 TTFT {ttft} ms（P95 {ttft95} ms），TPOT {tpot} ms，"
                      "端到端 {e2e} s。其他流量下的分位数见“负载测试”页。",
    "fr.cmd.replicas": "在负载均衡器后运行 {replicas}（每个 {gpus}）。",
    "fr.quality": "权重 {q}：公开的精度数据 {value}（来源见部署规划页）。",
    "fr.metric.cost": "每百万输出 token 成本",
    "fr.metric.cost.help": "每卡每小时价格 × GPU 数 ÷ 3,600 ÷ 输出 token/s × 10⁶（价格及来源见 GPU 目录）。",
    "fr.metric.cost.none": "GPU 目录中没有这款 GPU 的可靠价格。",
    "fr.metric.knee": "拐点（吞吐 ÷ 延迟最大）",
    "fr.metric.knee.help": "过了拐点，客户端数翻倍带来的吞吐增长不到 41%，延迟增长却超过 41%（Kleinrock 的 power，见“原因”）。",
    "fr.none_feasible": "没有任何并发能同时满足 TTFT ≤ {ttft} ms 和 TPOT ≤ {tpot} ms：此场景最好只能做到 TTFT {min_ttft} ms、"
                        "TPOT {min_tpot} ms。请放宽 SLA，或换更快的 GPU、更多 GPU、量化或更短的提示词。",
    "fr.sla_stat_mean": "此处 SLA 按均值判断：在前缀缓存复用下，前沿页的闭环模型只给出平均 TTFT 和 TPOT，而不是 {q}。压测页用请求模拟器测量 {q}，部署规划页按 {q} 复核方案，用的是同一个 SLA。",
    "fr.caption.sla": "绿色：满足该坐标轴上目标的区域；一个点只有在两个区域内才满足 SLA。星号：满足两者的最佳点；空心菱形：拐点。"
                      "延迟为稳态平均值（分位数需要压测，课程 §3.6）。",
    "fr.caption.sla_q": "绿色：满足该坐标轴上目标的区域；一个点只有在两个区域内才满足 SLA。星号：满足两者的最佳点；空心菱形：拐点。"
                        "TTFT 面板显示闭环的 {q} TTFT，即 SLA 所按的统计量（均值见悬停提示）；TPOT 为稳态平均单 Token 延迟。"
                        "分位数来自 C 个客户端的排队模型，并与长时间的模拟运行对照检验；压测可实际测量（课程 §3.6）。",
    "fr.metric.ttft_q": "此时 {q} TTFT",
    "fr.metric.ttft_q.help": "闭环在该分位数下的 TTFT，SLA 按它判断；此时平均 TTFT 为 {mean} ms。",
    "fr.caption.conc": "增加客户端会填满批次，吞吐随之上升，直到引擎上限（虚线：KV Cache 占满或 max_num_seqs；你的场景为 {wall}）。"
                       "超过之后客户端只是在队列中等待：TTFT 增长，吞吐不变。KV 上限按运行中请求的平均上下文（提示词 + 一半输出）计，"
                       "所以略高于显存页按每个请求完整上下文计的最大并发数。",
    "csv.frontier": "下载前沿数据（CSV）",
    "fr.compare": "场景对比",
    "fr.col.scenario": "场景",
    "fr.col.best": "最佳并发（客户端）",
    "fr.col.x": "此时输出 token/s",
    "fr.col.x_gpu": "每卡（token/s）",
    "fr.col.knee": "拐点（客户端）",
    "fr.col.wall": "引擎上限（序列数）",
    "fr.col.cost": "每百万输出 token 美元",
    "fr.cmd.title": "你的场景对应的 vLLM 命令",
    "fr.cmd.caption": "max_num_seqs 设为满足 SLA 的最佳并发（{c}）：vLLM 不会批处理更多请求，因此每个副本最多发送 {c} 个并发请求"
                      "（或增加副本）。",
    "fr.cmd.caption_none": "没有点满足 SLA，因此 max_num_seqs 保持原值（{c}）。",
    "fr.hover": "<b>{name}</b><br>并发 {c}（运行中 {r}）<br>TTFT {ttft} ms · TPOT {tpot} ms<br>输出 {x} token/s"
                "（每卡 {xg}）<br>每百万 token $ {cost}",
    "fr.trace.best": "满足 SLA 的最佳点",
    "fr.hover.best": "<b>满足 SLA 的最佳点</b>",
    "fr.trace.knee": "拐点",
    "fr.hover.knee": "<b>拐点：吞吐 ÷ 延迟最大</b>",
    "fr.trace.wall_kv": "{name}：KV Cache 在 {v} 时占满",
    "fr.trace.wall_seqs": "{name}：max_num_seqs = {v}",
    "fr.trace.wall_legend": "引擎上限（KV Cache 或 max_num_seqs）",
    "fr.trace.yours": "你的并发 {c}",
    "fr.title.concurrency": "吞吐随并发变化：客户端再多也不再有帮助的位置",
    "fr.x.concurrency": "并发（客户端数）",
    "fr.y.total": "输出吞吐量（token/s）",
    "fr.y.per_gpu": "每卡输出吞吐量（token/s）",
    "fr.sub.tpot": "对 TPOT",  # short, as "vs TPOT": the two subplot titles ran into each other at 390 px
    "fr.sub.ttft": "对 TTFT",
    "fr.hover.region_tpot": "满足 TPOT ≤ {v} ms",
    "fr.hover.region_ttft": "满足 TTFT ≤ {v} ms",
    "fr.trace.feasible": "满足该目标",
    "fr.trace.traffic": "你的流量：{rate} 请求/秒 ÷ {replicas}<br>= 每个副本 {x} 输出 tok/s",
    "fr.trace.traffic_gpu": "你的流量：{rate} 请求/秒 ÷ {replicas}<br>= 每 GPU {x} 输出 tok/s",
    "fr.trace.sla_tpot": "SLA：TPOT {v} ms",
    "fr.trace.sla_ttft": "SLA：TTFT {v} ms",
    "fr.x.tpot": "TPOT（毫秒/Token）",
    "fr.x.ttft": "TTFT（毫秒）",
    "fr.x.ttft_q": "{q} TTFT（毫秒）",
    "fr.title.sla": "吞吐与延迟，SLA：TTFT ≤ {ttft} ms、TPOT ≤ {tpot} ms",
    "why.fr.best": "满足 SLA 的最佳并发 = {value}",
    "why.fr.best.next_tpot": "它的 TPOT 超出目标",
    "why.fr.best.next_ttft": "它的 TTFT 超出目标",
    "why.fr.best.next_flat": "吞吐不再增长（到达引擎上限）",
    "why.fr.best.take": "下一个点（{cn} 个客户端）并不更好：{next}（TTFT {ttft} ms，TPOT {tpot} ms）。拖动 SLA 滑块，这个点会随之移动。",
    "why.fr.x": "最佳点的吞吐量 = {value}",
    "why.fr.x.take": "Little 定律：客户端数 ÷ 每个请求的耗时。每卡 {per_gpu} token/s（TP {tp}）。",
    "why.fr.tpot": "最佳点的 TPOT = {value}",
    "why.fr.tpot.take": "TPOT 至少是 R 个序列的一个 Decode 步，而这至少是把权重及其 KV 读一遍的时间；"
                        "与 Decode 穿插执行的其他请求的提示词还会再加上一些。",
    "why.fr.ttft": "最佳点的 TTFT = {value}",
    "why.fr.ttft.take": "TTFT 是提示词自己的预填充（k 步，每步与运行中的 Decode 共享；计算受限），再被穿插执行的其他请求的"
                        "预填充拉长；客户端数超过引擎上限后，还要加上等待空位的时间（C − R 个客户端在排队）。",
    "why.fr.cost": "每百万输出 token 成本 = {value}",
    "why.fr.cost.take": "吞吐越高成本越低：限制并发的 SLA 同时也决定了价格。",
    "why.fr.none": "没有任何并发满足 SLA",
    "why.fr.none.take": "即使只有一个客户端也达不到目标：请放宽 SLA，或加快预填充（TTFT）或解码（TPOT）：更多 GPU、"
                        "量化权重或 KV、更快的 GPU、更短的提示词。",
    "why.fr.knee": "拐点 = {value} 个客户端",
    "why.fr.knee.take": "Kleinrock 的 power（吞吐 ÷ 延迟）在这里最大：由 Little 定律 X = C ÷ E2E，拐点之前客户端数翻倍可以"
                        "用不到 41% 的额外延迟换来超过 41% 的额外吞吐，之后则相反（课程 §3.6：找到拐点，不要越过它）。",
    "why.fr.wall": "引擎上限 = {value} 个序列",
    "why.fr.wall.take": "客户端数超过它之后，多出的请求只能等待：吞吐不变，TTFT 随队列线性增长。FP8 KV、更多 GPU 或更短的"
                        "上下文会把 KV 上限右移；开启 Chunked Prefill 时，更大的 max_num_batched_tokens 会提高 token 预算上限。",
    "nav.case_study": "课程 §3.5：优化前后对比",
    "cs.link": "核对课程（§3.5）：重新计算案例的优化前后",
    "cs.page_title": "课程 §3.5：案例的优化前（A）与优化后（B）",
    "cs.series.before": "A：优化前（{c} 个客户端，不分块，FP16 KV）",
    "cs.series.after": "B：优化后（{c} 个客户端，分块 512，FP8 KV）",
    "cs.delta.help": "{label}；小字是相对 A 的变化",
    "cs.chart.title": "A 与 B 画在同一张图上，对照课程的聊天 SLA（TTFT ≤ {ttft} ms，TPOT ≤ {tpot} ms）",
    "cs.chart.caption": "每条线扫描一种配置的客户端数；实心圆是案例自己的 {a} 和 {b} 个客户端；加粗部分同时满足两个目标，"
                        "星号是每种配置在目标内的最佳点。均为稳态均值（百分位数见负载测试页）。输入固定：侧边栏的模型和"
                        "引擎设置在此不适用，效率假设适用。",
    "cs.table.title": "课程印的数字、计算器算出的数字，以及差异的原因",
    "cs.table.caption": "每条解释都按计算结果选取：调整效率假设后，文字会跟着数字变化的方向走。",
    "fr.trace.chosen": "{label}：{c} 个客户端时",
    "case.why.ttft_ms_drop": "这里计算器的 TTFT 也下降了（{ttft_before} → {ttft_after} ms）：在这些效率下，512 token 的分块"
                             "（每个提示词 {k} 块）让新提示词能更早地与 Decode 并行开始，而不是整段提示词彼此排队。课程中"
                             "50% 的降幅更大；它的设置（提示词长度、到达方式、vLLM 版本）没有给出。",
    "band.range": "范围 {lo}–{hi}",
    "band.where": "{regime}、{family}、{kind}",
    "band.regime.single": "单请求", "band.regime.closed": "闭环", "band.regime.open": "开环",
    "band.regime.burst": "突发", "band.moe": "MoE", "band.dense": "稠密",
    "band.own": "依据本场景下的 {n} 条测量（{where}）",
    "band.few": "本场景只有 {k} 条测量（{where}）：与更宽一组的 {n} 条加权",
    "band.none": "本场景没有测量（{where}）：取自更宽一组的 {n} 条，并加宽",
    "band.help": "真实服务器可能给出的范围，{own}；这些测量的误差中位数 {median}%，P90 {p90}%。"
                 "`python -m calc estimate … --format json` 会列出它们（band_basis）。",
    "fr.open_loop": "按你的请求速率，{rate} 请求/秒分给 {replicas}（开环、泊松到达；即 `estimate --rate` 给出的排队模型，"
                    "已与请求模拟器核对）：TTFT 均值 {ttft} ms、{q} {ttft_q} ms；TPOT {tpot} ms；每个副本约 {running} 个序列在运行。{verdict}",
    "fr.open_loop.meets": "满足 SLA。",
    "fr.open_loop.misses": "未满足 SLA：增加副本（部署规划会计算数量）或调整引擎设置。",
    "fr.open_loop.kv_wall": "此时批次常常碰到序列数或 KV 上限：负载测试的模拟给出的答案更可靠。",
    "fr.open_loop.over": "{rate} 请求/秒分给 {replicas} 已超出本场景一个副本的服务能力：队列会无限增长。请增加副本或调整引擎设置。",
    "fr.open_loop.near_capacity": "此时 token 预算有 {busy}% 的时间在处理提示词。接近容量时 TTFT 随请求速率快速上升：长时间模拟（100,000 个请求）给出的 P95 与本模型相差约 20% 以内（最高为其 1.2 倍），而 20,000 个请求的多次运行之间相差可达 1.5 倍：请求数更多的负载测试更可靠。",
    "fr.open_loop.no_drain": "此处 token 预算可能持续占满而无法清空：提示词排队时解码批次增大，每步留给提示词的空间变少，队列会越来越长；负载测试的模拟给出的答案更可靠。",
    "case.title": "核对课程（§3.5）：重新计算案例",
    "case.intro": "Llama-2-7B FP16，单卡 A100 80GB。优化前：16 个客户端，上下文 2,048 token（此处理解为 {i} token 提示词 + "
                  "{o} 输出），不分块预填充。优化后：分块预填充、预算 512 token，32 个客户端，FP8 KV Cache。吞吐 = 输出 token/s。",
    "case.col.metric": "指标",
    "case.col.course": "课程数值（优化前 → 优化后）",
    "case.col.calc": "计算器数值",
    "case.col.why": "差异原因",
    "case.metric.ttft_ms": "首 Token 延迟",
    "case.metric.tpot_ms": "单 Token 延迟",
    "case.metric.tokens_per_s": "吞吐量",
    "case.metric.memory_gb": "显存占用",
    "case.why.ttft_ms": "分块预填充并不减少提示词的计算量：预算 512 token 时提示词被切成 {k} 块，每块都与 Decode 共享一步，"
                        "这往往会提高 TTFT（Sarathi-Serve 实测仅分块时 P50 TTFT 为 1.04 s，对比 0.76 s），客户端翻倍还会增加排队。"
                        "课程中 50% 的下降要求“优化前”的 TTFT 主要是在其他整段提示词后面排队，而稳态闭环中没有这种情况；"
                        "课程也没有给出其设置（提示词长度、到达方式、vLLM 版本）。调度器页面逐步展示了这两种效应。",
    "case.why.tpot_ms": "两者都上升：序列数翻倍，每步读取的 KV 也翻倍（FP8 又把它减半），提示词分块也会随 Decode 一起执行。"
                        "绝对值不同：把权重和 16 个请求的 KV 读一遍，带宽跑满也要 {floor} ms；课程的 45 ms 是它的好几倍，"
                        "计算器则加上了效率、穿插的预填充和每步固定开销。",
    "case.why.tokens_per_s": "在以 Decode 为主的闭环中，吞吐 ≈ 客户端数 ÷ TPOT（Little 定律）。课程自己的数字符合这一点："
                             "16 ÷ 45 ms = {little_before}、32 ÷ 52 ms = {little_after} token/s，接近其 320 和 680。"
                             "计算器的客户端数 ÷ TPOT 为 {calc_little_before} 和 {calc_little_after} token/s；表中的吞吐 {calc_before} → "
                             "{calc_after} token/s 略低，因为每个请求在产出 token 之前还要花 TTFT 做预填充。它的 TPOT 更低，所以吞吐更高。",
    "case.why.memory_gb": "计算值：权重 + 激活 + 运行时开销 + 运行中请求的 KV（16 × 2,048 token 的 FP16，然后 32 × 2,048 的 FP8："
                          "字节数相同）。vLLM 在启动时就预先分配整个预算（gpu_memory_utilization × 显存 = {budget} GB），"
                          "所以 nvidia-smi 在两种情况下都会显示接近这个值，而不是 38 或 41 GB。",
    "sc.page_title": "调度器：分块预填充与整段预填充，逐步对比",
    "sc.intro": "{model} 运行在 {tp} × {gpu} 上。几个请求先后到达；引擎每一步对调度器挑出的 token 做一次前向计算，"
                "耗时来自与其他页面相同的 Roofline 模型。上图：分块预填充（vLLM V1）：先安排 Decode，剩余的 token 预算留给提示词分块。"
                "下图：不分块（vLLM V0）：等待中的提示词在单独的一步中整段执行，期间所有 Decode 都要等待。",
    "sc.too_long": "{p} token 的提示词加 {o} 个输出 token 超过了 max_model_len = {mml}：请缩短提示词或输出。",
    "sc.truncated": "模拟在所有请求完成前达到了步数上限（比 KV Cache 还大的请求永远不会运行）；指标只统计已完成的请求。",
    "sc.policy.chunked": "分块预填充（vLLM V1）",
    "sc.policy.whole": "整段预填充（vLLM V0，不分块）",
    "sc.metric.ttft_mean": "平均 TTFT",
    "sc.metric.ttft_max": "最差 TTFT",
    "sc.metric.tpot": "平均 TPOT",
    "sc.metric.gap": "最长 token 间隔",
    "sc.metric.gap.help": "任一请求相邻两个 token 之间的最长等待：被预填充阻塞的 Decode 会体现在这里（用户看到的就是文字卡住）。",
    "sc.delta_caption": "每个指标下方的小字：与另一种策略的差值（绿色 = 更好）。",
    "sc.title.chunked": "分块预填充：每步预算 {budget} token，max_num_seqs {seqs}",
    "sc.title.whole": "整段预填充：预算 {budget} token（≥ 最长提示词），max_num_seqs {seqs}",
    "sc.caption.chunked": "请求行中每一段玫红色条是一个提示词分块，与靛蓝色的 Decode 共享一步：Decode 从不停止，"
                          "因此最长 token 间隔很小；长提示词需要好几步，排在它后面的短提示词可能要等预算（灰色）。",
    "sc.caption.whole": "每一段长玫红色条是一整条提示词单独占用一步；与此同时所有运行中的请求都停顿（沙色）："
                        "它们的下一个 token 要等整段预填充结束。TTFT 可能更短，但 token 间隔长得多。",
    "csv.schedule_steps": "下载各步数据（CSV）",
    "csv.schedule_requests": "下载各请求指标（CSV）",
    "sc.table_title": "各请求的 TTFT、TPOT 与最长 token 间隔",
    "sc.col.request": "请求",
    "sc.col.arrival": "到达（ms）",
    "sc.col.prompt": "提示词（token）",
    "sc.col.output": "输出（token）",
    "sc.col.ttft_chunked": "TTFT 分块（ms）",
    "sc.col.ttft_whole": "TTFT 整段（ms）",
    "sc.col.tpot_chunked": "TPOT 分块（ms）",
    "sc.col.tpot_whole": "TPOT 整段（ms）",
    "sc.col.gap_chunked": "最长间隔 分块（ms）",
    "sc.col.gap_whole": "最长间隔 整段（ms）",
    "sc.col.decode": "Decode 数",
    "sc.col.prefill": "提示词 token",
    "sc.request": "请求 {i}（{p} token）",
    "sc.request.short": "#{i} · {p}",
    "sc.sub.tokens": "每一步的 token 数<br>（条宽 = 步时长）",
    "sc.sub.gantt": "每个请求在做什么",
    "sc.hover.step": "第 {j} 步：开始于 {s} ms，持续 {d} ms<br>{dec} 个 Decode + {pf} 个提示词 token",
    "sc.trace.budget": "token 预算 {v}",
    "sc.hover.segment": "{s} → {e} ms<br>{k} 步共 {n} 个 token",
    "sc.trace.first": "第一个 token（TTFT）",
    "sc.hover.first": "第一个 token：TTFT {v} ms",
    "sc.x": "自第一个请求到达起的时间（ms）",
    "sc.y.tokens": "token 数",
    "why.sc.ttft": "{policy}：最差 TTFT（请求 {i}）= {value}",
    "why.sc.steps": "步",
    "why.sc.waiting": "等待",
    "why.sc.ttft.take_chunked": "提示词只能用 Decode 剩下的预算，每步一块，长提示词需要好几步；排在它后面的请求要等预算。",
    "why.sc.ttft.take_whole": "一有空位，等待中的提示词就在一步内整段执行：提示词本身很快，但可能排在其他整段提示词后面。",
    "why.sc.ttft_mean": "{policy}：平均 TTFT = {value}",
    "why.sc.gap": "{policy}：最长 token 间隔 = {value}",
    "why.sc.gap.take_chunked": "没有哪一步超过预算允许的长度，所以运行中的请求等下一个 token 最多只等一个（混合）步。",
    "why.sc.gap.take_whole": "整段预填充步中没有 Decode：所有运行中的请求都要等它，所以间隔至少是最长的一次预填充。",
    "why.sc.tpot": "{policy}：平均 TPOT = {value}",
    "why.sc.mean": "各请求平均",
    "why.sc.tpot.take": "TPOT 是第一个 token 之后各间隔的平均：停顿会提高它，让共享步变长的提示词分块也会。",
}
