"""Two languages, English and Chinese: one dict of strings per language, the same keys in both.

The language comes from ``?lang=`` in the URL, else the browser locale (``st.context.locale``),
else English; the sidebar switch changes it and writes it back to the URL (only when it
changed: it is not a bound widget, see the testing recipe §2.3). It is resolved per session,
never at import time. Numbers and units are formatted by :mod:`ui.format`, the same in both.
"""

from __future__ import annotations

from typing import Any

LANGS = ("en", "zh")
LANG_NAMES = {"en": "English", "zh": "中文"}
_WIDGET_KEY = "ui_lang"

EN: dict[str, str] = {
    "app.title": "LLM inference trade-offs",
    "fv.more": "Loading the controls…",
    "nav.memory": "Memory",
    "nav.kv_table": "KV table (course §3.2)",
    "lang.label": "Language / 语言",
    "count.replica.one": "{n} replica",
    "count.replica.other": "{n} replicas",
    "count.gpu.one": "{n} GPU",
    "count.gpu.other": "{n} GPUs",
    "count.setting.one": "{n} setting",
    "count.setting.other": "{n} settings",
    "lang.help": "Interface language. Also set by ?lang=en or ?lang=zh in the URL.",
    "word.vllm_default": "vLLM default",
    "word.yes": "yes",
    "word.no": "no",
    # heavy runs in a worker process (ui.background)
    "work.queued": "{label} Waiting for a free worker: {ahead} ahead · {elapsed} s",
    "work.running": "{label} {cpu} s of CPU of this server's budget of {limit} s · {elapsed} s",
    "work.busy": "**The server is busy:** {n} heavy runs are already waiting. Try again in a minute, or run it on "
                 "your own machine:",
    "work.over_cpu": "**Stopped at this server's budget:** the run used {cpu} s of CPU, over the {limit} s a run may use "
                     "here (LLM_CALC_MAX_CPU_S). Run it on your own machine:",
    "work.lost": "**The run failed in its worker process** ({reason}). Try again; if it fails again, run it on your own "
                 "machine:",
    # the SLA and traffic every page shares (ui.traffic)
    "ctl.sla_ttft_ms": "SLA: TTFT (ms)",
    "ctl.sla_ttft_ms.help": "Target for the time to first token (TTFT), in milliseconds, judged on the statistic beside it. Course §3.4: chat "
                            "needs < 500 ms. The same SLA on the frontier, the load test and the planner.",
    "ctl.sla_tpot_ms": "SLA: TPOT (ms)",
    "ctl.sla_tpot_ms.help": "Target for the time per output token (TPOT, inter-token latency), in milliseconds. Course §3.4: chat needs < 50 ms. "
                            "The same SLA on the frontier, the load test and the planner.",
    "ctl.sla_stat": "SLA statistic",
    "ctl.sla_stat.help": "Which statistic must meet the targets (course §3.6: P95 or P99, not the mean). The load "
                         "test measures it; the planner re-checks its first options with the same simulation; the "
                         "frontier's closed-loop model has means only and says so.",
    "opt.sla_stat.mean": "Mean",
    "opt.sla_stat.p50": "P50 (median)",
    "opt.sla_stat.p90": "P90",
    "opt.sla_stat.p95": "P95",
    "opt.sla_stat.p99": "P99",
    "word.mean": "mean",
    "ctl.rate": "Rate (requests/s)",
    "ctl.rate.help": "Requests per second the whole deployment receives; replicas split them evenly (each replica "
                     "gets rate ÷ replicas). The same rate on the load test and the planner.",
    # sidebar
    "sidebar.custom_config": "Your own model (config.json)",
    "sidebar.engine": "Engine (vLLM)",
    "sidebar.precision": "Precision (weights, KV cache)",
    "sidebar.unused": "Not used on this page.",
    "sidebar.changed": "↑ {n} changed from the defaults (open to see)",
    "word.weights_plain": "{dtype} weights",
    "word.weights_quant": "{quant} weights (activations {dtype})",
    "ctl.present": "Presenter mode",
    "ctl.present.help": "Larger text and charts, a compact header, sidebar folded: for a projector. In the link as "
                        "?present=1.",
    "sidebar.share": "Share and save",
    "sidebar.model_caption": "{name}: {kind}, {layers} layers, {kv_heads} KV heads, up to {max_len} tokens",
    "sidebar.checkpoint_quant": "The checkpoint ships {quant} weights (config.json quantization_config): vLLM loads that format when --quantization is not given (Weight precision = auto).",
    "sidebar.checkpoint_quant_auto": "Weights load in the checkpoint's own {quant} format (config.json quantization_config), as vLLM does without --quantization.",
    "sidebar.gpu_caption": "{name}: {gib} GiB usable, {tbps} TB/s HBM",
    "ctl.model": "Model",
    "ctl.model.help": "A catalog model (Hugging Face id) or 'custom' after you upload or paste a config.json. "
                      "Its architecture sets the weights and the KV cache per token.",
    "ctl.gpu": "GPU",
    "ctl.gpu.help": "One accelerator; memory per GPU in GiB (2^30 bytes) as CUDA reports it, datasheet in GB (10^9).",
    "ctl.tp": "Tensor parallelism (GPUs)",
    "ctl.tp.help": "vLLM --tensor-parallel-size: number of GPUs that split every layer. "
                   "Weights and KV heads are divided among them; all numbers are per GPU.",
    "ctl.dtype": "Model dtype (--dtype)",
    "ctl.dtype.help": "vLLM --dtype: precision of unquantized weights and activations. "
                      "float16/bfloat16 = 2 bytes per value, float32 = 4 bytes; 'auto' (vLLM's default) = the checkpoint's 16-bit type. "
                      "For FP8 or INT8 weights choose them under Weight precision.",
    "ctl.quantization": "Weight precision: FP8, INT8, 4-bit (--quantization)",
    "ctl.quantization.help": "vLLM --quantization. auto (default): the checkpoint's own format from its config.json quantization_config (e.g. FP8 for DeepSeek-V3), as vLLM does; none: unquantized. fp8/int8 store linear weights in 1 byte; awq/gptq about 4.16 bits "
                             "(0.52 bytes) and bitsandbytes (NF4) about 4.13 bits per weight, scales included. FP4: mxfp4 "
                             "4.25 bits (MoE experts only, computed in 16 bit), modelopt_fp4 (NVFP4) 4.5 bits (FP4 tensor "
                             "cores on Blackwell, 16-bit elsewhere). 'none' = dtype.",
    "ctl.kv_cache_dtype": "KV-cache precision",
    "ctl.kv_cache_dtype.help": "vLLM --kv-cache-dtype: bytes per cached key/value element. "
                               "'auto' follows dtype (2 bytes); float16/bfloat16 = 2 bytes; fp8 (= fp8_e4m3) and fp8_e5m2 = "
                               "1 byte, half the KV memory; nvfp4 = 4.5 bits (datacenter Blackwell only).",
    "ctl.context": "Context length (tokens per request)",
    "ctl.context.help": "Tokens held in the KV cache by one request: prompt + generated output, in tokens. "
                        "At most max_model_len.",
    "ctl.concurrency": "Concurrency (requests at once)",
    "ctl.concurrency.help": "Requests whose KV cache is in GPU memory at the same time (running batch), "
                            "a count of requests.",
    "ctl.gpu_memory_utilization": "gpu_memory_utilization",
    "ctl.gpu_memory_utilization.help": "vLLM --gpu-memory-utilization: fraction (0–1) of GPU memory vLLM may use; "
                                       "the rest is left to other processes. Default 0.90.",
    "ctl.block_size": "block_size (tokens per KV block)",
    "ctl.block_size.help": "vLLM --block-size: tokens per PagedAttention block. KV memory is allocated in whole "
                           "blocks, so a request wastes less than one block.",
    "ctl.max_model_len": "max_model_len (tokens)",
    "ctl.max_model_len.help": "vLLM --max-model-len: longest request in tokens (prompt + output). "
                              "Empty = the model's max_position_embeddings.",
    "ctl.max_num_seqs": "max_num_seqs (requests)",
    "ctl.max_num_seqs.help": "vLLM --max-num-seqs: most requests in one batch. Sizes the sampler's buffers in the "
                             "activation peak. Empty = vLLM's default (1024 on ≥70 GiB GPUs except A100, else 256).",
    "ctl.vllm_version": "vLLM version (memory profile)",
    "ctl.vllm_version.help": "Which vLLM line's start-up profile run the memory model follows. 0.19 (also 0.18): the "
                             "sampler warm-up holds 14 B per logit; 0.15 and earlier V1 lines sorted the logits for "
                             "top-k/top-p (36 B per logit), a much larger activation peak with large vocabularies.",
    "ctl.max_num_batched_tokens": "max_num_batched_tokens (tokens)",
    "ctl.max_num_batched_tokens.help": "vLLM --max-num-batched-tokens: most tokens in one forward pass; sets the "
                                       "activation peak vLLM profiles. Empty = vLLM's default (8192 or 2048).",
    "ctl.input_tokens": "Input tokens",
    "ctl.input_tokens.help": "Prompt tokens per request. With the output tokens they make the context, the tokens one "
                             "request holds in the KV cache: memory depends on that sum, latency on each part "
                             "(prefill on the input, decode steps on the output). At most max_model_len together.",
    "ctl.output_len": "Output tokens",
    "ctl.output_len.help": "Tokens generated per request (its decode steps). Changing it keeps the input: the "
                           "context grows with it.",
    "sidebar.lengths": "Context {i} + {o} = {ctx} tokens per request (KV cache; max_model_len {mml}).",
    "ctl.config_upload": "Upload config.json",
    "ctl.config_upload.help": "A Hugging Face config.json (at most 1 MB). Supported model_type: llama, mistral, "
                              "mixtral, qwen2, qwen3, qwen2_moe, qwen3_moe, gemma, gemma2, deepseek_v2, deepseek_v3.",
    "ctl.config_text": "…or paste config.json",
    "ctl.config_text.help": "The text of a Hugging Face config.json.",
    "ctl.config_apply": "Use pasted config",
    "ctl.sweep_context": "Sweep context length instead of concurrency",
    "ctl.sweep_context.help": "Off: x axis = concurrency at your context length. On: x axis = context length "
                              "(tokens) at your concurrency.",
    "share.link_help": "Link to this view, with every page's settings of this session:",
    "share.link_label": "Link to this view",
    "share.copy": "Copy link",
    "share.copied": "Copied",
    "cmd.copy": "Copy",  # a command block's button (ui.command_block)
    "cmd.copied": "Copied",
    "share.download": "Download scenario (JSON)",
    "share.download.help": "All controls as a JSON file; upload it below (or on another machine) to restore them.",
    "share.upload": "Load scenario (JSON)",
    "share.upload.help": "A scenario file saved with the button above; every control is restored.",
    # messages
    "warn.old_spelling": "URL parameter `{key}={raw}` is an old spelling, read as `{new}`: {reason}.",
    "warn.old_spelling_file": "Scenario file: `{key}: {raw}` is an old spelling, read as `{new}`: {reason}.",
    "alias.quantization.nf4": "vLLM spells bitsandbytes NF4 `bitsandbytes`",
    "alias.quantization.nvfp4": "vLLM spells NVFP4 weights `modelopt_fp4`",
    "alias.kv_cache_dtype.fp16": "vLLM spells it `float16`",
    "alias.kv_cache_dtype.bf16": "vLLM spells it `bfloat16`",
    "alias.kv_cache_dtype.int8": "vLLM has no int8 KV-cache dtype; `fp8` stores the same 1 byte per element",
    "msg.invalid_scenario": "These settings cannot be computed: {reason}. Showing the last valid scenario ({model}); "
                            "your inputs are kept.",
    "msg.scenario_rejected": "Scenario file not loaded: {reason}",
    "msg.scenario_loaded": "Scenario {name} loaded: all controls restored.",
    "msg.config_rejected": "config.json not used: {reason}",
    "msg.config_loaded": "Custom model {name} loaded (model = custom).",
    # memory page
    "mem.title": "GPU memory: weights, KV cache and how many requests fit",
    "mem.intro": "{model} on {tp} × {gpu}, {weights}, KV cache {kv}, context {ctx} tokens, "
                 "block size {block}. All bytes are per GPU.",
    "mem.metric.weights": "Weights per GPU",
    "mem.metric.kv_token": "KV cache per token",
    "mem.metric.kv_request": "KV cache per request",
    "mem.metric.max_conc": "Max concurrency",
    "mem.metric.max_conc.help": "Requests of {ctx} tokens whose KV fits at once. vLLM logs {vllm} for "
                                "max_model_len = {mml} tokens.",
    "mem.metric.in_use": "KV in use ({conc} req.)",
    "mem.metric.in_use_partial": "KV in use ({fit} of {conc} req. fit)",
    "mem.metric.no_start.help": "vLLM refuses to start with these settings (see the message below the cards): "
                                "it serves no request, so nothing is in use.",
    "mem.metric.in_use.help": "{used} of a KV pool of {pool}.",
    "fit.budget": "{model} does not fit on {tp} × {gpu}: per GPU, weights {weights} + activation peak {act} "
                       "+ runtime overhead {overhead} exceed vLLM's budget {budget} (usable × gpu_memory_utilization).",
    "fit.max_model_len": "{model} does not fit on {tp} × {gpu}: one request of max_model_len = {mml} tokens needs "
                              "{need} of KV cache per GPU, more than the KV pool's {pool}, so vLLM refuses to "
                              "start (\"To serve at least one request with the model's max seq len…\").",
    "fit.alt.title": "What would fit instead (each checked with the same memory model):",
    "fit.alt.line": "{what} (`{flags}`): {conc} requests of {mml} tokens at once; {goal}",
    "fit.alt.none": "No single change fits: not gpu_memory_utilization up to 0.98, nor a lighter weight or KV "
                    "precision, nor up to 8 GPUs of tensor parallelism. Pick a larger GPU.",
    "fit.change.gpu_memory_utilization": "raise gpu_memory_utilization to {value}",
    "fit.change.quantization": "weights in {value}",
    "fit.change.kv_cache_dtype": "KV cache in {value}",
    "fit.change.tensor_parallel_size": "tensor parallelism on {value} GPUs",
    "fit.change.max_model_len": "lower max_model_len to {value}",
    "fit.goal.met": "meets your goal of {n} × {ctx} tokens",
    "fit.goal.missed": "misses your goal of {n} × {ctx} tokens",
    "mem.conc_not_fit": "{conc} requests of {ctx} tokens do not fit at once: only {fit} do. vLLM keeps the rest "
                        "waiting (or preempts), so latency grows.",
    "mem.chart.title_conc": "Memory per GPU vs concurrency ({ctx} tokens per request)",
    "mem.chart.title_ctx": "Memory per GPU vs context length ({conc} requests)",
    "mem.chart.x_conc": "Concurrency (requests)",
    "mem.chart.x_ctx": "Context length (tokens per request)",
    "mem.chart.y": "Memory per GPU (GiB)",
    "mem.chart.capacity": "GPU memory ({value})",
    "mem.chart.budget": "vLLM budget: × {util} ({value})",
    "mem.chart.max": "max {value}",
    "mem.chart.no_fit": "does not fit",
    "mem.chart.yours": "your setting",
    "part.weights": "Weights",
    "part.kv": "KV cache in use",
    "part.activations": "Activations (peak)",
    "part.overhead": "Runtime overhead",
    "part.reserved": "Reserved (1 − utilization)",
    "part.free": "Free KV pool",
    "waste.title": "Paged vs contiguous KV cache (block size {block}, {ctx}-token requests)",
    "waste.left": "Wasted KV<br>per request (MiB)",
    "waste.right": "Requests that fit<br>in the KV pool",
    "waste.right_no_start": "Requests served: none<br>(vLLM refuses to start)",
    "waste.no_start": "0: does not start",
    "waste.paged": "Paged (vLLM)",
    "waste.contiguous": "Contiguous<br>(reserve max_model_len)",
    "waste.caption": "Contiguous allocation reserves max_model_len = {mml} tokens for every request; paged "
                     "allocation rounds up to whole blocks of {block} tokens and wastes less than one block.",
    "csv.memory": "Download chart data (CSV)",
    "csv.waste": "Download paged vs contiguous data (CSV)",
    "checks.col.run": "Run",
    "checks.col.confidence": "Confidence",
    "checks.col.metric": "Number",
    "checks.col.measured": "Measured",
    "checks.col.predicted": "Predicted",
    "checks.col.error": "Error",
    "checks.col.source": "Source",
    "checks.conf.high": "high",
    "checks.conf.medium": "medium",
    "checks.conf.low": "low",
    "checks.col.role": "Role",
    "checks.role.fit": "fit",
    "checks.role.held_out": "held out",
    "checks.role.check": "check",
    "why.title": "Why this number",
    "why.formula": "Formula",
    "why.values": "With your values",
    "why.takeaway": "Takeaway:",
    "why.weights": "Weights per GPU = {value}",
    "why.weights.take": "Every decode step reads all of these bytes from HBM once: this is the memory wall "
                        "(course §3.1). Quantization and tensor parallelism shrink it.",
    "why.weights.terms": "W_shard: matrices split across GPUs (attention, MLP, embedding, LM head) = {shard}; "
                         "W_repl: norms on every GPU = {repl}; W_kv: K/V projections of the KV heads this GPU "
                         "holds = {kvp}.",
    "why.kv_token": "KV cache per token = {value}",
    "why.kv_token.take_mha": "MHA: every attention head caches its own K and V, as in the course's formula.",
    "why.kv_token.take_gqa": "GQA: only {kv} of {q} heads have their own K and V, so the cache is {ratio}× "
                             "smaller than the course's MHA formula would say.",
    "why.kv_token.take_mla": "MLA caches one compressed latent per layer instead of K and V per head.",
    "why.kv_token.sliding": "{n} of {L} layers use a sliding window of {w} tokens: past the window they stop "
                            "growing; the per-request number below accounts for it.",
    "why.kv_request": "KV cache per request = {value}",
    "why.kv_request.take": "KV grows linearly with context: double the context, double the KV. Paged blocks add "
                           "less than one block ({block} tokens).",
    "why.pool": "KV pool = {value}",
    "why.pool.take": "Whatever the weights, activation peak and runtime leave of the budget holds the KV cache.",
    "why.max_conc": "Max concurrency = {value}",
    "why.max_conc.take": "vLLM's own log line reports {vllm} for requests of max_model_len = {mml} tokens; "
                         "shorter requests fit more.",
    "why.max_conc.no_start": "Max concurrency: none, vLLM refuses to start",
    "why.max_conc.take_no_start": "At start-up vLLM checks that one request of max_model_len = {mml} tokens fits in "
                                  "the KV pool; this pool holds {tokens} tokens (vLLM would log {vllm}×), so vLLM "
                                  "stops with an error and serves no request. Lower max_model_len (Engine settings) "
                                  "to at most {tokens}, use an FP8 KV cache, or add GPU memory.",
    "why.max_conc.take_no_pool": "The weights, activation peak and runtime overhead take the whole budget: nothing "
                                 "is left for KV blocks, so vLLM refuses to start and serves no request. Add GPUs "
                                 "(tensor parallelism), quantize the weights, pick a larger GPU, or raise "
                                 "gpu_memory_utilization.",
    "why.max_conc.would_fit": "Once vLLM starts (max_model_len at most {tokens}), this pool would hold about {fit} requests "
                              "of {ctx} tokens at once.",
    "why.activations": "Activation peak = {value}",
    "why.activations.take": "vLLM measures this peak in its profile run: one forward pass over max_num_batched_tokens "
                            "tokens, then a sampler warm-up over max_num_seqs rows of logits. With a large vocabulary "
                            "the sampler sets the peak, so lowering max_num_seqs frees KV memory as much as lowering "
                            "max_num_batched_tokens.",
    "why.activations.sampler": "Sampler warm-up (vLLM {version}): {n} sequences × {v} vocabulary entries × {b} B "
                               "(logits in the model dtype, their float32 copy, the probabilities and the random "
                               "noise of the sampler) plus the top-k/top-p scratch of {rows} rows (one per SM).",
    "why.activations.which": "Here the {which} sets the peak: forward pass {fwd}, sampler phase {phase}.",
    "why.activations.which_sampler": "sampler warm-up",
    "why.activations.which_forward": "forward pass",
    "why.activations.moe": "MoE: the fused-MoE kernel's workspaces ({ws}: tokens × {k} experts × intermediate and "
                           "hidden widths) stay allocated after the forward pass, so they count in the sampler phase too.",
    "why.activations.no_chunk": "Chunked prefill is off: a whole prompt must fit one step, so vLLM raises the token "
                                "budget to max_model_len ({T} tokens) and profiles that many.",
    "why.activations.ws": "W_ws: cuBLAS workspaces PyTorch's allocator holds ({ws}), the residual the vLLM 0.19 logs share.",
    "why.overhead": "Runtime overhead = {value}",
    "why.overhead.take": "Memory outside PyTorch's allocator that vLLM's profile run adds; values from vLLM 0.19 "
                         "start-up logs on H100 (0.24–0.27 GiB at TP 1, +1.82/+1.88 GiB at TP 2/4), adjustable "
                         "under Assumptions.",
    "why.overhead.tp1": "TP 1: kernel images loaded during the profile run and cuBLAS handles only.",
    "why.overhead.switch": "NVSwitch system: NCCL's NVLink-SHARP buffers and vLLM's custom all-reduce buffers, plus "
                           "NCCL's buffers per peer.",
    "why.overhead.no_switch": "No NVSwitch (PCIe, bridged pairs, A100, AMD mesh): only NCCL's buffers per peer; the "
                              "1.8 GiB seen on NVSwitch servers is not allocated.",
    "why.kv_request.sliding_running": "A running sequence keeps only the blocks of its last {w} tokens (vLLM V1 frees "
                                      "blocks that leave the window): {run} here. vLLM's start-up check and its "
                                      "'Maximum concurrency' line use the worst case, window + one step of {T} "
                                      "tokens: {start}.",
    "why.weights.auto": "Weight quantization auto: the checkpoint ships {quant} weights (its config.json "
                        "quantization_config), so vLLM loads {quant} without --quantization.",
    "why.weights.replicated": "Replicated on every GPU, not split: the MoE routers ({router} parameters, kept in 16 "
                              "bits) and DeepSeek's low-rank query projection q_a_proj ({qa} parameters).",
    "why.waste": "Wasted KV: paged {paged} vs contiguous {contig} per request",
    "why.waste.take": "Paging wastes less than one block per request; reserving max_model_len wastes everything "
                      "a request does not use.",
    # kv table page
    "kv.title": "Course §3.2: weights and KV cache, printed vs computed",
    "kv.intro": "The course prints a table of weights and KV cache for 7B/13B/70B models. Here every printed "
                "number sits beside the value computed from the real config.json, with the reason they differ.",
    "kv.course_table": "The course's figures",
    "kv.col.figure": "Figure",
    "kv.col.section": "Section",
    "kv.col.model": "Model",
    "kv.col.printed": "Printed",
    "kv.col.computed": "Computed",
    "kv.col.why": "Why they differ",
    "kv.chart.title": "Printed (hatched) vs computed (solid); blue bars: weights, orange bars: KV cache",
    "kv.chart.y": "Bytes (GiB, log scale)",
    "kv.short.weights": "weights",
    "kv.short.kv": "KV {ctx}",
    "kv.short.kv_total": "KV {ctx} ×{n}",
    "kv.chart.printed": "Printed",
    "kv.chart.computed": "Computed",
    "kv.own": "Your own table",
    "kv.own.intro": "Any catalog models, your context lengths (type your own) and your precisions (weight dtype, "
                    "quantization and KV-cache precision from the sidebar). Bytes for the whole model (TP = 1).",
    "ctl.kv_models": "Models",
    "ctl.kv_models.help": "Catalog models to tabulate (Hugging Face ids).",
    "ctl.kv_contexts": "Context lengths (tokens)",
    "ctl.kv_contexts.help": "One column of KV cache per request for each length, in tokens.",
    "kv.col.weights": "Weights",
    "kv.col.kv_token": "KV / token",
    "kv.col.kv_at": "KV @ {ctx}",
    "kv.col.params": "Parameters",
    "kv.col.attention": "Attention",
    "kv.own.note": "{weights}, KV cache {kv}, block size {block} (sidebar). "
                   "† = longer than the model's context window (max_position_embeddings).",
    "kv.course_note": "Computed at the course's precision (FP16 weights and KV cache), whole model, exact tokens.",
    "kv.unavailable": "The course figures are not available yet (calc/sizing/course.py is missing); your own table "
                      "below works.",
    "csv.kv_course": "Download course comparison (CSV)",
    "csv.kv_own": "Download your table (CSV)",
}

ZH: dict[str, str] = {
    "app.title": "大模型推理权衡",
    "fv.more": "正在载入控件…",
    "nav.memory": "显存",
    "nav.kv_table": "KV 表（课程 §3.2）",
    "lang.label": "Language / 语言",
    "count.replica.one": "{n} 个副本",  # Chinese nouns have no plural: one and other read the same
    "count.replica.other": "{n} 个副本",
    "count.gpu.one": "{n} 张 GPU",
    "count.gpu.other": "{n} 张 GPU",
    "count.setting.one": "{n} 项设置",
    "count.setting.other": "{n} 项设置",
    "lang.help": "界面语言。也可在网址中用 ?lang=en 或 ?lang=zh 设置。",
    "word.vllm_default": "vLLM 默认值",
    "word.yes": "是",
    "word.no": "否",
    # 在工作进程中运行的重任务（ui.background）
    "work.queued": "{label} 正在等待空闲的工作进程：前面还有 {ahead} 个 · {elapsed} 秒",
    "work.running": "{label} 已用 {cpu} 秒 CPU，本服务器的预算为 {limit} 秒 · {elapsed} 秒",
    "work.busy": "**服务器上的任务太多**：已有 {n} 个重任务在排队。请等一下再试，或在自己的机器上运行：",
    "work.over_cpu": "**已在本服务器的预算处停止**：这次运行用了 {cpu} 秒 CPU，超过了这里每次运行允许的 {limit} 秒"
                     "（LLM_CALC_MAX_CPU_S）。请在自己的机器上运行：",
    "work.lost": "**工作进程中的运行没有完成**（{reason}）。请重试；如果仍然不行，请在自己的机器上运行：",
    "ctl.sla_ttft_ms": "SLA：TTFT（毫秒）",
    "ctl.sla_ttft_ms.help": "首 Token 延迟（TTFT）目标，单位毫秒，按旁边的统计量判断。课程 §3.4：对话需要 < 500 毫秒。前沿、压测和部署规划页共用同一个 SLA。",
    "ctl.sla_tpot_ms": "SLA：TPOT（毫秒）",
    "ctl.sla_tpot_ms.help": "单 Token 延迟（TPOT：每个输出 Token 的平均时间）目标，单位毫秒。课程 §3.4：对话需要 < 50 毫秒。前沿、压测和部署规划页共用同一个 SLA。",
    "ctl.sla_stat": "SLA 统计量",
    "ctl.sla_stat.help": "必须满足目标的统计量（课程 §3.6：看 P95 或 P99，而不是均值）。压测页直接测量它；部署规划页用同样的模拟复核前几个方案；前沿页的闭环模型只有均值，并会注明。",
    "opt.sla_stat.mean": "均值",
    "opt.sla_stat.p50": "P50（中位数）",
    "opt.sla_stat.p90": "P90",
    "opt.sla_stat.p95": "P95",
    "opt.sla_stat.p99": "P99",
    "word.mean": "均值",
    "ctl.rate": "速率（请求/秒）",
    "ctl.rate.help": "整个部署每秒收到的请求数；副本之间平均分配（每个副本承担 速率 ÷ 副本数）。压测和部署规划页共用同一个速率。",
    "sidebar.custom_config": "自定义模型（config.json）",
    "sidebar.engine": "推理引擎（vLLM）",
    "sidebar.precision": "精度（权重、KV Cache）",
    "sidebar.unused": "本页未使用此项。",
    "sidebar.changed": "↑ 已改 {n} 项默认值（展开查看）",
    "word.weights_plain": "权重 {dtype}",
    "word.weights_quant": "权重 {quant}（激活 {dtype}）",
    "ctl.present": "演示模式",
    "ctl.present.help": "更大的文字和图表、紧凑的页眉、侧边栏收起：适合投影。链接中写作 ?present=1。",
    "sidebar.share": "分享与保存",
    "sidebar.model_caption": "{name}：{kind}，{layers} 层，{kv_heads} 个 KV 头，最长 {max_len} token",
    "sidebar.checkpoint_quant": "该模型权重以 {quant} 格式发布（config.json 的 quantization_config）：不指定 --quantization 时 vLLM 按此格式加载（“权重精度”选 auto）。",
    "sidebar.checkpoint_quant_auto": "权重按检查点自身的 {quant} 格式加载（config.json 的 quantization_config），与不指定 --quantization 时的 vLLM 一致。",
    "sidebar.gpu_caption": "{name}：可用 {gib} GiB，HBM 带宽 {tbps} TB/s",
    "ctl.model": "模型",
    "ctl.model.help": "目录中的模型（Hugging Face ID），或上传/粘贴 config.json 后选择 'custom'。"
                      "模型结构决定权重大小和每个 token 的 KV Cache。",
    "ctl.gpu": "GPU",
    "ctl.gpu.help": "单张加速卡；每卡显存以 GiB（2^30 字节，CUDA 的口径）显示，规格书用 GB（10^9 字节）。",
    "ctl.tp": "张量并行（GPU 数）",
    "ctl.tp.help": "vLLM --tensor-parallel-size：把每一层切分到多少张 GPU 上。权重和 KV 头在它们之间均分；"
                   "所有数字均为每卡数值。",
    "ctl.dtype": "模型数据类型（--dtype）",
    "ctl.dtype.help": "vLLM --dtype：未量化权重与激活的精度。float16/bfloat16 每个值 2 字节，float32 为 4 字节；"
                      "'auto'（vLLM 默认值）即检查点自带的 16 位类型。FP8 或 INT8 权重请在“权重精度”中选择。",
    "ctl.quantization": "权重精度：FP8、INT8、4 比特（--quantization）",
    "ctl.quantization.help": "vLLM --quantization。auto（默认）：按检查点 config.json 中 quantization_config 的格式加载（如 DeepSeek-V3 为 FP8），与 vLLM 一致；none：不量化。fp8/int8 每个线性层权重 1 字节；awq/gptq 约 4.16 比特（0.52 字节），"
                             "bitsandbytes（NF4）约 4.13 比特（含缩放因子）。FP4：mxfp4 为 4.25 比特（仅 MoE 专家，按 16 位计算），"
                             "modelopt_fp4（NVFP4）为 4.5 比特（Blackwell 上用 FP4 Tensor Core，其他 GPU 按 16 位）。'none' 表示按 dtype 存储。",
    "ctl.kv_cache_dtype": "KV Cache 精度",
    "ctl.kv_cache_dtype.help": "vLLM --kv-cache-dtype：每个缓存的 K/V 元素的字节数。'auto' 跟随 dtype（2 字节）；"
                               "float16/bfloat16 为 2 字节；fp8（= fp8_e4m3）与 fp8_e5m2 为 1 字节，KV 显存减半；nvfp4 为 4.5 比特"
                               "（仅数据中心 Blackwell）。",
    "ctl.context": "上下文长度（每请求 token 数）",
    "ctl.context.help": "单个请求在 KV Cache 中保存的 token 数：提示词 + 生成的输出，单位 token。不超过 max_model_len。",
    "ctl.concurrency": "并发数（同时处理的请求）",
    "ctl.concurrency.help": "KV Cache 同时驻留在显存中的请求数（运行中的批次），单位：个请求。",
    "ctl.gpu_memory_utilization": "gpu_memory_utilization",
    "ctl.gpu_memory_utilization.help": "vLLM --gpu-memory-utilization：vLLM 可使用的显存比例（0–1），"
                                       "其余留给其他进程。默认 0.90。",
    "ctl.block_size": "block_size（每个 KV 块的 token 数）",
    "ctl.block_size.help": "vLLM --block-size：PagedAttention 每块的 token 数。KV 显存按整块分配，"
                           "每个请求浪费不到一个块。",
    "ctl.max_model_len": "max_model_len（token）",
    "ctl.max_model_len.help": "vLLM --max-model-len：单个请求的最大长度（提示词 + 输出），单位 token。"
                              "留空 = 模型的 max_position_embeddings。",
    "ctl.max_num_seqs": "max_num_seqs（请求数）",
    "ctl.max_num_seqs.help": "vLLM --max-num-seqs：一个批次中最多的请求数，决定激活峰值中采样器缓冲区的大小。"
                             "留空 = vLLM 默认值（≥70 GiB 且非 A100 的 GPU 为 1024，否则 256）。",
    "ctl.vllm_version": "vLLM 版本（显存剖析）",
    "ctl.vllm_version.help": "显存模型按哪个 vLLM 版本的启动剖析计算。0.19（0.18 相同）：采样器预热每个 logit 占 14 B；"
                             "0.15 及更早的 V1 版本对 logits 排序做 top-k/top-p（每个 logit 36 B），词表大时激活峰值大得多。",
    "ctl.max_num_batched_tokens": "max_num_batched_tokens（token）",
    "ctl.max_num_batched_tokens.help": "vLLM --max-num-batched-tokens：一次前向计算最多处理的 token 数，"
                                       "决定 vLLM 预分析时的激活峰值。留空 = vLLM 默认值（8192 或 2048）。",
    "ctl.input_tokens": "输入 token 数",
    "ctl.input_tokens.help": "每个请求的提示词 token 数。与输出 token 数相加即上下文，也就是一个请求在 KV Cache 中"
                             "保存的 token 数：显存取决于这个和，延迟取决于各部分（预填充看输入，解码步数看输出）。"
                             "两者之和不超过 max_model_len。",
    "ctl.output_len": "输出 token 数",
    "ctl.output_len.help": "每个请求生成的 token 数（解码步数）。修改它时输入不变，上下文随之变长。",
    "sidebar.lengths": "上下文 {i} + {o} = {ctx} token/请求（KV Cache；max_model_len {mml}）。",
    "ctl.config_upload": "上传 config.json",
    "ctl.config_upload.help": "Hugging Face 的 config.json（不超过 1 MB）。支持的 model_type：llama、mistral、"
                              "mixtral、qwen2、qwen3、qwen2_moe、qwen3_moe、gemma、gemma2、deepseek_v2、deepseek_v3。",
    "ctl.config_text": "……或粘贴 config.json",
    "ctl.config_text.help": "Hugging Face config.json 的文本内容。",
    "ctl.config_apply": "使用粘贴的配置",
    "ctl.sweep_context": "横轴改为上下文长度（而非并发数）",
    "ctl.sweep_context.help": "关闭：横轴为并发数，上下文长度取你的设置。打开：横轴为上下文长度（token），"
                              "并发数取你的设置。",
    "share.link_help": "指向当前视图的链接，包含本次会话中各页面的设置：",
    "share.link_label": "当前视图的链接",
    "share.copy": "复制链接",
    "share.copied": "已复制",
    "cmd.copy": "复制",
    "cmd.copied": "已复制",
    "share.download": "下载场景（JSON）",
    "share.download.help": "把所有控件的值保存为 JSON 文件；在下方（或另一台机器上）上传即可恢复。",
    "share.upload": "加载场景（JSON）",
    "share.upload.help": "用上面按钮保存的场景文件；所有控件都会恢复。",
    "warn.old_spelling": "网址参数 `{key}={raw}` 是旧写法，按 `{new}` 读取：{reason}。",
    "warn.old_spelling_file": "场景文件：`{key}: {raw}` 是旧写法，按 `{new}` 读取：{reason}。",
    "alias.quantization.nf4": "vLLM 把 bitsandbytes NF4 写作 `bitsandbytes`",
    "alias.quantization.nvfp4": "vLLM 把 NVFP4 权重写作 `modelopt_fp4`",
    "alias.kv_cache_dtype.fp16": "vLLM 写作 `float16`",
    "alias.kv_cache_dtype.bf16": "vLLM 写作 `bfloat16`",
    "alias.kv_cache_dtype.int8": "vLLM 没有 int8 的 KV Cache 类型；`fp8` 同样每个元素 1 字节",
    "msg.invalid_scenario": "当前设置无法计算：{reason}。显示上一个有效场景（{model}）；你的输入已保留。",
    "msg.scenario_rejected": "场景文件未加载：{reason}",
    "msg.scenario_loaded": "场景 {name} 已加载：所有控件已恢复。",
    "msg.config_rejected": "config.json 未采用：{reason}",
    "msg.config_loaded": "自定义模型 {name} 已加载（model = custom）。",
    "mem.title": "显存：权重、KV Cache，以及能容纳多少请求",
    "mem.intro": "{model}，{tp} × {gpu}，{weights}，KV Cache {kv}，上下文 {ctx} token，"
                 "块大小 {block}。所有字节数均为每卡数值。",
    "mem.metric.weights": "每卡权重",
    "mem.metric.kv_token": "每 token 的 KV Cache",
    "mem.metric.kv_request": "每请求的 KV Cache",
    "mem.metric.max_conc": "最大并发数",
    "mem.metric.max_conc.help": "KV 能同时容纳的 {ctx} token 请求数。按 max_model_len = {mml} token，"
                                "vLLM 日志会显示 {vllm}。",
    "mem.metric.in_use": "已用 KV（{conc} 个请求）",
    "mem.metric.in_use_partial": "已用 KV（{conc} 个请求中容纳 {fit} 个）",
    "mem.metric.no_start.help": "按当前设置 vLLM 无法启动（见卡片下方的提示）：不服务任何请求，因此没有 KV 在用。",
    "mem.metric.in_use.help": "KV 池共 {pool}，已用 {used}。",
    "fit.budget": "{model} 放不进 {tp} × {gpu}：每卡权重 {weights} + 激活峰值 {act} + 运行时开销 {overhead} "
                       "超过 vLLM 的显存预算 {budget}（可用显存 × gpu_memory_utilization）。",
    "fit.max_model_len": "{model} 放不进 {tp} × {gpu}：一条 max_model_len = {mml} token 的请求每卡需要 {need} 的 "
                              "KV 缓存，超过 KV 池的 {pool}，vLLM 会拒绝启动（“To serve at least one "
                              "request with the model's max seq len…”）。",
    "fit.alt.title": "改成下面任一项即可放下（均用同一显存模型核算）：",
    "fit.alt.line": "{what}（`{flags}`）：可同时容纳 {conc} 个 {mml} token 的请求；{goal}",
    "fit.alt.none": "单项调整都放不下：gpu_memory_utilization 提到 0.98、换更轻的权重或 KV 精度、张量并行到 8 卡都不够。"
                    "请换更大的 GPU。",
    "fit.change.gpu_memory_utilization": "把 gpu_memory_utilization 提高到 {value}",
    "fit.change.quantization": "权重用 {value}",
    "fit.change.kv_cache_dtype": "KV Cache 用 {value}",
    "fit.change.tensor_parallel_size": "张量并行到 {value} 张 GPU",
    "fit.change.max_model_len": "把 max_model_len 降到 {value}",
    "fit.goal.met": "满足你的目标（{n} 个 {ctx} token 的请求）",
    "fit.goal.missed": "达不到你的目标（{n} 个 {ctx} token 的请求）",
    "mem.conc_not_fit": "{conc} 个 {ctx} token 的请求无法同时放下：只能放下 {fit} 个。vLLM 会让其余请求排队"
                        "（或抢占），延迟随之上升。",
    "mem.chart.title_conc": "每卡显存随并发数的变化（每请求 {ctx} token）",
    "mem.chart.title_ctx": "每卡显存随上下文长度的变化（{conc} 个请求）",
    "mem.chart.x_conc": "并发数（请求）",
    "mem.chart.x_ctx": "上下文长度（每请求 token 数）",
    "mem.chart.y": "每卡显存（GiB）",
    "mem.chart.capacity": "GPU 显存（{value}）",
    "mem.chart.budget": "vLLM 预算：× {util}（{value}）",
    "mem.chart.max": "最多 {value}",
    "mem.chart.no_fit": "放不下",
    "mem.chart.yours": "你的设置",
    "part.weights": "权重",
    "part.kv": "已用 KV Cache",
    "part.activations": "激活（峰值）",
    "part.overhead": "运行时开销",
    "part.reserved": "预留（1 − 利用率）",
    "part.free": "空闲 KV 池",
    "waste.title": "分页 vs 连续 KV Cache（块大小 {block}，每请求 {ctx} token）",
    "waste.left": "每请求浪费的<br>KV（MiB）",
    "waste.right": "KV 池能容纳的<br>请求数",
    "waste.right_no_start": "可服务的请求：无<br>（vLLM 拒绝启动）",
    "waste.no_start": "0：无法启动",
    "waste.paged": "分页（vLLM）",
    "waste.contiguous": "连续<br>（按 max_model_len 预留）",
    "waste.caption": "连续分配为每个请求预留 max_model_len = {mml} 个 token；分页分配按 {block} token "
                     "的整块向上取整，浪费不到一个块。",
    "csv.memory": "下载图表数据（CSV）",
    "csv.waste": "下载分页 vs 连续数据（CSV）",
    "checks.col.run": "测量",
    "checks.col.confidence": "可信度",
    "checks.col.metric": "数值",
    "checks.col.measured": "实测",
    "checks.col.predicted": "预测",
    "checks.col.error": "误差",
    "checks.col.source": "出处",
    "checks.conf.high": "高",
    "checks.conf.medium": "中",
    "checks.conf.low": "低",
    "checks.col.role": "用途",
    "checks.role.fit": "拟合",
    "checks.role.held_out": "留出",
    "checks.role.check": "检验",
    "why.title": "这个数字是怎么来的",
    "why.formula": "公式",
    "why.values": "代入你的数值",
    "why.takeaway": "结论：",
    "why.weights": "每卡权重 = {value}",
    "why.weights.take": "每个解码步都要从 HBM 读一遍这些字节：这就是“内存墙”（课程 §3.1）。量化和张量并行可以缩小它。",
    "why.weights.terms": "W_shard：在 GPU 间切分的矩阵（注意力、MLP、词嵌入、LM head）= {shard}；"
                         "W_repl：每卡都有的归一化层 = {repl}；W_kv：本卡所持 KV 头的 K/V 投影 = {kvp}。",
    "why.kv_token": "每 token 的 KV Cache = {value}",
    "why.kv_token.take_mha": "MHA：每个注意力头都缓存自己的 K 和 V，与课程中的公式一致。",
    "why.kv_token.take_gqa": "GQA：{q} 个头中只有 {kv} 个拥有自己的 K 和 V，所以缓存比课程的 MHA 公式小 {ratio} 倍。",
    "why.kv_token.take_mla": "MLA 每层只缓存一个压缩后的潜向量，而不是每个头的 K 和 V。",
    "why.kv_token.sliding": "{L} 层中有 {n} 层使用 {w} token 的滑动窗口：超过窗口后不再增长；下面的每请求数值已考虑这一点。",
    "why.kv_request": "每请求的 KV Cache = {value}",
    "why.kv_request.take": "KV 随上下文线性增长：上下文翻倍，KV 翻倍。分页块带来的额外开销不到一个块（{block} token）。",
    "why.pool": "KV 池 = {value}",
    "why.pool.take": "显存预算减去权重、激活峰值和运行时开销后，剩下的全部用来存放 KV Cache。",
    "why.max_conc": "最大并发数 = {value}",
    "why.max_conc.take": "vLLM 自己的日志按 max_model_len = {mml} token 的请求报告 {vllm}；更短的请求能放下更多。",
    "why.max_conc.no_start": "最大并发数：无，vLLM 拒绝启动",
    "why.max_conc.take_no_start": "vLLM 启动时会检查 KV 池能否放下一条 max_model_len = {mml} token 的请求；"
                                  "这个 KV 池只能容纳 {tokens} 个 token（vLLM 日志会显示 {vllm}×），所以 vLLM "
                                  "报错退出，不服务任何请求。请在引擎设置中把 max_model_len 降到 {tokens} 以内，"
                                  "或使用 FP8 KV Cache，或增加显存。",
    "why.max_conc.take_no_pool": "权重、激活峰值和运行时开销占满了显存预算：没有空间留给 KV 块，所以 vLLM "
                                 "拒绝启动，不服务任何请求。可以增加 GPU（张量并行）、量化权重、换更大的 GPU，"
                                 "或提高 gpu_memory_utilization。",
    "why.max_conc.would_fit": "等 vLLM 能启动后（max_model_len 不超过 {tokens}），这个 KV 池大约可同时容纳 {fit} 个 "
                              "{ctx} token 的请求。",
    "why.activations": "激活峰值 = {value}",
    "why.activations.take": "vLLM 在显存剖析中测量这个峰值：先用 max_num_batched_tokens 个 token 做一次前向，"
                            "再用 max_num_seqs 行 logits 预热采样器。词表较大时采样器决定峰值，所以调低 max_num_seqs "
                            "与调低 max_num_batched_tokens 一样能给 KV 腾出显存。",
    "why.activations.sampler": "采样器预热（vLLM {version}）：{n} 个序列 × {v} 个词表项 × {b} B（模型精度的 logits、"
                               "其 float32 副本、概率和采样用的随机噪声），再加 {rows} 行（每个 SM 一行）的 top-k/top-p 临时缓冲。",
    "why.activations.which": "此处峰值由{which}决定：前向 {fwd}，采样阶段 {phase}。",
    "why.activations.which_sampler": "采样器预热",
    "why.activations.which_forward": "前向计算",
    "why.activations.moe": "MoE：融合 MoE kernel 的工作区（{ws}：token 数 × {k} 个专家 × 中间维与 hidden 维）在前向之后"
                           "仍然保留，所以采样阶段也要算上。",
    "why.activations.no_chunk": "关闭了分块预填充：整个提示词必须在一步内处理，vLLM 把 token 预算提高到 max_model_len"
                                "（{T} 个 token），并按这个数做剖析。",
    "why.activations.ws": "W_ws：PyTorch 分配器持有的 cuBLAS 工作区（{ws}），即 vLLM 0.19 各条日志共有的残差。",
    "why.overhead": "运行时开销 = {value}",
    "why.overhead.take": "vLLM 显存剖析新增的 PyTorch 分配器之外的显存；数值来自 H100 上 vLLM 0.19 的启动日志"
                         "（TP 1 时 0.24–0.27 GiB，TP 2/4 时多 1.82/1.88 GiB），可在“模型假设”中调整。",
    "why.overhead.tp1": "TP 1：只有剖析中加载的 kernel 镜像和 cuBLAS 句柄。",
    "why.overhead.switch": "NVSwitch 系统：NCCL 的 NVLink-SHARP 缓冲和 vLLM 自定义 All-reduce 的缓冲，再加每个对端的 NCCL 缓冲。",
    "why.overhead.no_switch": "没有 NVSwitch（PCIe、两卡桥接、A100、AMD 全互联）：只有每个对端的 NCCL 缓冲；"
                              "NVSwitch 服务器上看到的 1.8 GiB 不会分配。",
    "why.kv_request.sliding_running": "运行中的序列只保留最近 {w} 个 token 所在的块（vLLM V1 会释放移出窗口的块）：此处为 {run}。"
                                      "vLLM 启动检查和“Maximum concurrency”日志按最坏情况计算，即窗口加一步 {T} 个 token：{start}。",
    "why.weights.auto": "权重量化为 auto：该检查点以 {quant} 格式发布（config.json 的 quantization_config），"
                        "不指定 --quantization 时 vLLM 按 {quant} 加载。",
    "why.weights.replicated": "在每张 GPU 上复制而不切分：MoE 路由器（{router} 个参数，保持 16 位）和 DeepSeek 的低秩查询投影 "
                              "q_a_proj（{qa} 个参数）。",
    "why.waste": "浪费的 KV：分页 {paged}，连续 {contig}（每请求）",
    "why.waste.take": "分页每个请求浪费不到一个块；按 max_model_len 预留则浪费请求没用到的全部空间。",
    "kv.title": "课程 §3.2：权重与 KV Cache，书中数值 vs 计算值",
    "kv.intro": "课程给出了 7B/13B/70B 模型的权重和 KV Cache 表。这里把每个书中数值与根据真实 config.json "
                "计算出的数值并列，并说明差异的原因。",
    "kv.course_table": "课程中的数字",
    "kv.col.figure": "数字",
    "kv.col.section": "章节",
    "kv.col.model": "模型",
    "kv.col.printed": "书中数值",
    "kv.col.computed": "计算值",
    "kv.col.why": "差异原因",
    "kv.chart.title": "书中数值（斜线）vs 计算值（实心）；蓝色：权重，橙色：KV Cache",
    "kv.chart.y": "字节数（GiB，对数坐标）",
    "kv.short.weights": "权重",
    "kv.short.kv": "KV {ctx}",
    "kv.short.kv_total": "KV {ctx} ×{n}",
    "kv.chart.printed": "书中数值",
    "kv.chart.computed": "计算值",
    "kv.own": "你自己的表",
    "kv.own.intro": "任选目录中的模型、你的上下文长度（可自行输入）和精度（侧边栏中的权重 dtype、量化和 KV Cache 精度）。"
                    "字节数为整个模型（TP = 1）。",
    "ctl.kv_models": "模型",
    "ctl.kv_models.help": "要列入表中的目录模型（Hugging Face ID）。",
    "ctl.kv_contexts": "上下文长度（token）",
    "ctl.kv_contexts.help": "每个长度一列“每请求 KV Cache”，单位 token。",
    "kv.col.weights": "权重",
    "kv.col.kv_token": "KV / token",
    "kv.col.kv_at": "KV @ {ctx}",
    "kv.col.params": "参数量",
    "kv.col.attention": "注意力",
    "kv.own.note": "{weights}，KV Cache {kv}，块大小 {block}（见侧边栏）。"
                   "† = 超过模型的上下文窗口（max_position_embeddings）。",
    "kv.course_note": "按课程的精度计算（权重和 KV Cache 均为 FP16），整个模型，按实际 token 数。",
    "kv.unavailable": "课程数字暂不可用（calc/sizing/course.py 尚不存在）；下方你自己的表可以使用。",
    "csv.kv_course": "下载课程对比（CSV）",
    "csv.kv_own": "下载你的表（CSV）",
}

# Strings of the performance pages (roofline, frontier, scheduler): their own module, merged here.
from ui.perf import i18n as _perf  # noqa: E402

EN.update(_perf.EN)
ZH.update(_perf.ZH)
from ui import i18n_assumptions as _assumptions  # noqa: E402
from ui import i18n_gpu as _gpu  # noqa: E402

EN.update(_assumptions.EN)
ZH.update(_assumptions.ZH)
EN.update(_gpu.EN)
ZH.update(_gpu.ZH)
from ui.planner import i18n as _planner  # noqa: E402

EN.update(_planner.EN)
ZH.update(_planner.ZH)
from ui import i18n_input as _input  # noqa: E402  (messages about untrusted input)

EN.update(_input.EN)
ZH.update(_input.ZH)

from ui.loadtest import i18n as _loadtest  # noqa: E402

EN.update(_loadtest.EN)
ZH.update(_loadtest.ZH)
from ui.disagg import i18n as _disagg  # noqa: E402

EN.update(_disagg.EN)
ZH.update(_disagg.ZH)

from ui import i18n_layout as _layout  # noqa: E402  (multi-GPU layout: PP, DP, EP, nodes)

EN.update(_layout.EN)
ZH.update(_layout.ZH)

from ui import i18n_bands as _bands  # noqa: E402  (error bands, the user's measurements)

EN.update(_bands.EN)
ZH.update(_bands.ZH)

from ui.prefixcache import i18n as _prefixcache  # noqa: E402

EN.update(_prefixcache.EN)
ZH.update(_prefixcache.ZH)
STRINGS: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}


# Catalog GPU names whose English note in brackets a Chinese reader would otherwise see (calc/data/gpus.json
# ``name``; the product name before the note is kept as NVIDIA writes it). tests/test_ui_i18n.py holds that
# every id is in the catalog and the name before the note unchanged.
GPU_NAMES_ZH = {
    "h100-nvl": "NVIDIA H100 NVL 94GB（每张 GPU）",
    "gh200": "NVIDIA GH200 Grace Hopper Superchip 96GB HBM3（GPU 部分）",
    "gb200": "NVIDIA GB200（GB200 NVL72 中的 B200，每张 GPU）",
}


class Translator:
    """``t("key", **values)``: the string in this language, ``str.format``-ed with the values.

    >>> Translator("zh")("nav.memory"), Translator("en")("mem.chart.max", value=12)
    ('显存', 'max 12')
    """

    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in STRINGS else "en"
        self._strings = STRINGS[self.lang]

    def __call__(self, msg_id: str, /, **values: Any) -> str:
        text = self._strings.get(msg_id) or EN.get(msg_id) or msg_id
        return text.format(**values) if values else text

    def gpu(self, gpu: Any) -> str:
        """A catalog GPU's name as this language shows it (:data:`GPU_NAMES_ZH`; else the catalog's).

        >>> from calc.spec.catalog import get_gpu
        >>> Translator("zh").gpu(get_gpu("h100-nvl")), Translator("en").gpu(get_gpu("h100-nvl"))
        ('NVIDIA H100 NVL 94GB（每张 GPU）', 'NVIDIA H100 NVL 94GB (per GPU)')
        """
        return (GPU_NAMES_ZH.get(gpu.id) if self.lang == "zh" else None) or gpu.name

    def count(self, word: str, n: int) -> str:
        """``n`` things, in this language's grammar (``count.<word>.one`` for 1, else ``.other``):
        no "1 replica(s)", "1 GPUs".

        >>> en, zh = Translator("en"), Translator("zh")
        >>> en.count("replica", 1), en.count("replica", 3), en.count("gpu", 1), en.count("gpu", 1024)
        ('1 replica', '3 replicas', '1 GPU', '1,024 GPUs')
        >>> zh.count("replica", 1), zh.count("gpu", 8)
        ('1 个副本', '8 张 GPU')
        """
        return self(f"count.{word}.{'one' if int(n) == 1 else 'other'}", n=f"{int(n):,}")


def language_from_locale(locale: str | None) -> str:
    """``zh-CN`` / ``zh-Hant-TW`` → ``zh``; anything else → ``en``.

    >>> language_from_locale("zh-CN"), language_from_locale("de-DE"), language_from_locale(None)
    ('zh', 'en', 'en')
    """
    return "zh" if (locale or "").lower().startswith("zh") else "en"


# ----------------------------------------------------------------------------- streamlit side

def resolve_language() -> tuple[str, list[tuple[str, str]]]:
    """This session's language (first run: URL, else browser locale) and any warning about ?lang."""
    import streamlit as st

    warnings: list[tuple[str, str]] = []
    if _WIDGET_KEY not in st.session_state:
        raw = st.query_params.get("lang")
        if raw in LANGS:
            lang = raw
        else:
            lang = language_from_locale(st.context.locale)
            if raw is not None:
                from ui.safe import user_text  # noqa: PLC0415

                warnings.append(("warning", Translator(lang)("warn.bad_param", key="lang", raw=user_text(raw),
                                                             allowed="{en, zh}", default=lang)))
        st.session_state[_WIDGET_KEY] = lang
    return st.session_state[_WIDGET_KEY], warnings


def current_language() -> str:
    import streamlit as st

    return st.session_state.get(_WIDGET_KEY, "en")


def render_language_switch(t: Translator) -> str:
    """The language radio; keeps ``?lang=`` in the URL (written only when it differs)."""
    import streamlit as st

    lang = st.radio(t("lang.label"), LANGS, format_func=LANG_NAMES.__getitem__, key=_WIDGET_KEY,
                    horizontal=True, help=t("lang.help"))
    if st.query_params.get("lang") != lang:
        st.query_params["lang"] = lang
    return lang


def weights_phrase(t: "Translator", *, dtype: str, quantization: str) -> str:
    """How the weights are stored, in words: ``float16 weights`` or ``FP8 weights (activations auto)``.

    >>> weights_phrase(Translator("en"), dtype="float16", quantization="fp8")
    'FP8 weights (activations float16)'
    """
    if quantization in ("none", "auto"):  # auto: the checkpoint's own format (the sidebar names it when quantized)
        return t("word.weights_plain", dtype=dtype)
    return t("word.weights_quant", quant=quantization.upper(), dtype=dtype)


from ui.speculative import i18n as _speculative  # noqa: E402

EN.update(_speculative.EN)
ZH.update(_speculative.ZH)

from ui import i18n_upload as _upload  # noqa: E402  (Streamlit's own uploader text, ui.uploader)

EN.update(_upload.EN)
ZH.update(_upload.ZH)
