"""Messages about untrusted input, in both languages: the reason codes of
:class:`calc.spec.untrusted.InputError` (worded by :func:`ui.safe.describe`) and the URL-parameter
warnings. Every placeholder that carries user text is escaped before it is formatted in.
"""

from __future__ import annotations

EN: dict[str, str] = {
    # reason codes (calc.spec.untrusted.REASONS_EN has the same English)
    "reason.range": "{field}: got {raw}, allowed {allowed}",
    "reason.tp_heads": "{field}: got {raw}, allowed {allowed} (it must divide the {heads} attention heads of {model})",
    "reason.tp_kv_heads": "{field}: got {raw}, allowed {allowed} (it must divide the {kv_heads} KV heads of {model} "
                          "or be a multiple of them)",
    "reason.output_len": "{field}: got {raw}, allowed {allowed} (less than the context length {context})",
    "reason.context": "{field} (input + output tokens): got {raw}, allowed {allowed} (max_model_len of {model})",
    "reason.context_max_model_len": "{field} (input + output tokens): got {raw}, allowed {allowed}: context length {raw} > "
                                    "--max-model-len {max_model_len}; shorten the input or output, or raise "
                                    "max_model_len (Engine)",
    "reason.max_positions": "{field}: got {raw}, allowed {allowed} (the shortest context this calculator handles)",
    "reason.replicas": "{field}: got {raw}, allowed {allowed} (at most the concurrency {concurrency}: every "
                       "replica needs at least one client)",
    "reason.budget_below_len": "{field}: got {raw}, allowed {allowed} (without chunked prefill a whole prompt of "
                               "up to max_model_len = {max_model_len} tokens must fit one step; vLLM refuses to "
                               "start: turn chunked prefill on or lower max_model_len)",
    "reason.gpu_format": "{field}: got {raw}, allowed {allowed} (vLLM has no {raw} kernels on {gpu})",

    "reason.pp_layers": "{field}: got {raw}, allowed {allowed} (every pipeline stage needs at least one of the "
                        "{layers} decoder layers of {model})",
    "reason.ep_dense": "{field}: got {raw}, allowed {allowed} ({model} has no routed experts: expert parallelism "
                       "needs an MoE model)",
    "reason.nodes_split": "{field}: got {raw}, allowed {allowed} ({world} GPUs = TP × PP × DP must split evenly "
                          "over the nodes, at most {per_node} GPUs per {gpu} node)",
    "reason.world_size": "{field}: got {raw}, allowed {allowed} (TP × PP × DP GPUs in all)",
    "reason.required": "{field}: required",
    "reason.custom_missing": "{field}: 'custom' needs a config.json (upload or paste one)",
    "reason.json": "{field} is not valid JSON: {detail}",
    "reason.too_deep": "{field} is not valid JSON: nested more than {allowed} levels deep",
    "reason.too_large": "{field} is larger than {allowed} bytes",
    "reason.not_object": "{field} must be a JSON object (got {raw})",
    "reason.unknown_fields": "{field}: unknown field(s) {raw}; allowed: {allowed}",
    "reason.invalid": "{field}: {detail}",
    # URL parameters
    "warn.bad_param": "URL parameter {key}={raw} is not valid (allowed: {allowed}); using the default {default}.",
    "warn.repeated_param": "URL parameter {key} is given {count} times ({raw}); using the last one, {value}.",
    "warn.custom_not_in_link": "URL parameter model=custom: the link holds no config.json (model_config). "
                               "Upload it again, or share a scenario file. Using the default {default}.",
    "warn.model_config_bad": "URL parameter model_config (your own model) is not used: {reason}.",
    "warn.model_config_too_large": "Your model's config.json is longer than a link takes ({chars} characters "
                                   "encoded): a reload or a link will not keep it; share a scenario file instead.",
    "allowed.integer": "integer",
    "allowed.number": "number",
    "allowed.or_empty": "(or empty)",
    "allowed.list_of": "a list of",
    "allowed.in_all": "({n} in all)",
    "allowed.in_all_scenario": "({n} in all, as in a downloaded scenario)",
    "allowed.prices": "GPU=USD pairs separated by commas, USD a number > 0 and <= {max}, GPU one of the catalog ids",
    "allowed.compare_pairs": "key=value pairs separated by ';', keys from: ",
    "allowed.max_chars": "at most {n} characters",
    "allowed.bool": "true or false",
    "allowed.whole_number": "a whole number",
    "allowed.a_number": "a number",
    "msg.config_rejected_kept": "config.json not used: {reason}. Still showing {model}.",
    "msg.config_adjusted": "Custom model {name} loaded (model = custom); context lowered to {context} tokens "
                           "(its max_position_embeddings).",
}

ZH: dict[str, str] = {
    "reason.pp_layers": "{field}：收到 {raw}，允许 {allowed}（{model} 共 {layers} 个解码层，每个流水线阶段至少要分到一层）",
    "reason.ep_dense": "{field}：收到 {raw}，允许 {allowed}（{model} 没有路由专家：专家并行只适用于 MoE 模型）",
    "reason.nodes_split": "{field}：收到 {raw}，允许 {allowed}（TP × PP × DP 共 {world} 张 GPU 必须平均分到各节点，"
                          "每个 {gpu} 节点最多 {per_node} 张）",
    "reason.world_size": "{field}：收到 {raw}，允许 {allowed}（TP × PP × DP 的 GPU 总数）",
    "reason.range": "{field}：收到 {raw}，允许 {allowed}",
    "reason.tp_heads": "{field}：收到 {raw}，允许 {allowed}（必须整除 {model} 的 {heads} 个注意力头）",
    "reason.tp_kv_heads": "{field}：收到 {raw}，允许 {allowed}（必须整除 {model} 的 {kv_heads} 个 KV 头，或是它的整数倍）",
    "reason.output_len": "{field}：收到 {raw}，允许 {allowed}（须小于上下文长度 {context}）",
    "reason.context": "{field}（输入 + 输出 token）：收到 {raw}，允许 {allowed}（{model} 的 max_model_len）",
    "reason.context_max_model_len": "{field}（输入 + 输出 token）：收到 {raw}，允许 {allowed}：上下文长度 {raw} > "
                                    "--max-model-len {max_model_len}；请缩短输入或输出，或调大 max_model_len（推理引擎）",
    "reason.max_positions": "{field}：收到 {raw}，允许 {allowed}（本计算器支持的最短上下文）",
    "reason.replicas": "{field}：收到 {raw}，允许 {allowed}（不超过并发数 {concurrency}：每个副本至少需要一个客户端）",
    "reason.budget_below_len": "{field}：收到 {raw}，允许 {allowed}（不开分块预填充时，长达 max_model_len = "
                               "{max_model_len} 个 token 的整段提示词必须放进一步；vLLM 会拒绝启动：请开启分块预填充或调低 "
                               "max_model_len）",
    "reason.gpu_format": "{field}：收到 {raw}，允许 {allowed}（vLLM 在 {gpu} 上没有 {raw} 的内核）",
    "reason.required": "{field}：缺少此项",
    "reason.custom_missing": "{field}：'custom' 需要一个 config.json（上传或粘贴）",
    "reason.json": "{field} 不是有效的 JSON：{detail}",
    "reason.too_deep": "{field} 不是有效的 JSON：嵌套超过 {allowed} 层",
    "reason.too_large": "{field} 超过 {allowed} 字节",
    "reason.not_object": "{field} 必须是 JSON 对象（收到 {raw}）",
    "reason.unknown_fields": "{field}：未知字段 {raw}；允许：{allowed}",
    "reason.invalid": "{field}：{detail}",
    "warn.bad_param": "网址参数 {key}={raw} 无效（允许：{allowed}）；改用默认值 {default}。",
    "warn.repeated_param": "网址参数 {key} 出现了 {count} 次（{raw}）；使用最后一个值 {value}。",
    "warn.custom_not_in_link": "网址参数 model=custom：链接中没有 config.json（model_config）。请重新上传，"
                               "或分享场景文件。改用默认值 {default}。",
    "warn.model_config_bad": "网址参数 model_config（自定义模型）未采用：{reason}。",
    "warn.model_config_too_large": "自定义模型的 config.json 超出链接长度（编码后 {chars} 个字符）："
                                   "重新加载或链接都不会保留它；请改为分享场景文件。",
    "allowed.integer": "整数",
    "allowed.number": "数值",
    "allowed.or_empty": "（或留空）",
    "allowed.list_of": "列表，元素为",
    "allowed.in_all": "（共 {n} 个）",
    "allowed.in_all_scenario": "（共 {n} 个，与下载的场景文件一致）",
    "allowed.prices": "GPU=美元 的键值对，用逗号分隔；美元为大于 0、不超过 {max} 的数；GPU 为目录中的 id",
    "allowed.compare_pairs": "用 ';' 分隔的 key=value 对，key 取自：",
    "allowed.max_chars": "最多 {n} 个字符",
    "allowed.bool": "true 或 false",
    "allowed.whole_number": "整数",
    "allowed.a_number": "数值",
    "msg.config_rejected_kept": "config.json 未采用：{reason}。仍显示 {model}。",
    "msg.config_adjusted": "自定义模型 {name} 已加载（model = custom）；上下文已降至 {context} 个 token"
                           "（其 max_position_embeddings）。",
}
