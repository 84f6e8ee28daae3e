"""Which tensor-parallel sizes vLLM accepts for a model: one rule for the UI and the CLI.

vLLM checks two things (source: vllm-project/vllm):

- ``ModelConfig.verify_with_parallel_config`` (vllm/config.py): "Total number of attention heads
  ({heads}) must be divisible by tensor parallel size ({tp})": ``heads % tp == 0``.
- ``QKVParallelLinear.__init__`` (vllm/model_executor/layers/linear.py): if ``tp >= kv_heads`` the KV
  heads are replicated, ``divide(tp, kv_heads)``; else partitioned, ``divide(kv_heads, tp)``;
  ``divide`` asserts exact division. So ``kv_heads % tp == 0 or tp % kv_heads == 0``.
  MLA models (DeepSeek-V2/V3) cache one latent per token and do not split KV heads: only the first rule.
"""

from __future__ import annotations

from calc.spec.inputs import ModelArch
from calc.spec.untrusted import InputError


def tensor_parallel_reason(arch: ModelArch, tensor_parallel_size: int) -> str | None:
    """``None`` when vLLM accepts this TP size for ``arch``, else ``tp_heads`` or ``tp_kv_heads``.

    >>> from calc.spec.catalog import get_model
    >>> tensor_parallel_reason(get_model("meta-llama/Llama-2-7b-hf"), 64)
    'tp_heads'
    >>> tensor_parallel_reason(get_model("Qwen/Qwen2.5-7B"), 7), tensor_parallel_reason(get_model("Qwen/Qwen2.5-7B"), 4)
    ('tp_kv_heads', None)
    """
    tp, heads, kv = int(tensor_parallel_size), arch.num_attention_heads, arch.num_key_value_heads
    if tp < 1 or heads % tp:
        return "tp_heads"
    if arch.mla is None and kv % tp and tp % kv:
        return "tp_kv_heads"
    return None


def tensor_parallel_sizes(arch: ModelArch, candidates=(1, 2, 4, 8, 16, 32, 64)) -> tuple[int, ...]:
    """The candidate TP sizes vLLM accepts for ``arch``.

    >>> from calc.spec.catalog import get_model
    >>> tensor_parallel_sizes(get_model("meta-llama/Llama-2-13b-hf"))  # 40 heads
    (1, 2, 4, 8)
    """
    return tuple(tp for tp in candidates if tensor_parallel_reason(arch, tp) is None)


def check_tensor_parallel(arch: ModelArch, tensor_parallel_size: int, *, field: str = "tensor_parallel_size",
                          candidates=(1, 2, 4, 8, 16, 32, 64)) -> None:
    """Raise :class:`InputError` (naming ``field``, the allowed sizes and the heads) if vLLM would refuse.

    >>> from calc.spec.catalog import get_model
    >>> check_tensor_parallel(get_model("meta-llama/Llama-2-7b-hf"), 64, field="tp")
    Traceback (most recent call last):
    ...
    calc.spec.untrusted.InputError: tp: got 64, allowed 1, 2, 4, 8, 16, 32 (it must divide the 32 attention heads of Llama-2-7B)
    """
    reason = tensor_parallel_reason(arch, tensor_parallel_size)
    if reason is not None:
        allowed = ", ".join(str(t) for t in tensor_parallel_sizes(arch, candidates))
        raise InputError(field, tensor_parallel_size, allowed=allowed, code=reason,
                         heads=arch.num_attention_heads, kv_heads=arch.num_key_value_heads, model=arch.name)


def check_parallel_layout(arch: ModelArch, serving, *, gpus_per_node: int, gpu_name: str = "GPU",
                          max_gpus: int = 1024) -> int:
    """Check TP × PP × DP (+ EP, nodes) the way vLLM would refuse it; return the nodes used.

    - TP: :func:`check_tensor_parallel` (heads);
    - PP ≤ L: ``get_pp_indices`` gives every stage ⌊L/PP⌋ ≥ 1 layers;
    - ``--enable-expert-parallel`` needs routed experts (a dense model has no FusedMoE layer);
    - nodes: TP × PP × DP GPUs split evenly, at most ``gpus_per_node`` per node (vLLM's
      ``--data-parallel-size-local`` / Ray placement); None = ⌈world / gpus_per_node⌉.

    >>> from calc.spec.catalog import get_model
    >>> from calc.spec.inputs import ServingConfig
    >>> check_parallel_layout(get_model("deepseek-ai/DeepSeek-V3"), ServingConfig(data_parallel_size=16,
    ...     enable_expert_parallel=True), gpus_per_node=8)
    2
    >>> check_parallel_layout(get_model("meta-llama/Llama-3.1-8B"), ServingConfig(enable_expert_parallel=True),
    ...     gpus_per_node=8)
    Traceback (most recent call last):
    ...
    calc.spec.untrusted.InputError: enable_expert_parallel: got true, allowed false (Llama-3.1-8B has no routed experts: expert parallelism needs an MoE model)
    >>> check_parallel_layout(get_model("meta-llama/Llama-3.1-405B"), ServingConfig(tensor_parallel_size=8,
    ...     pipeline_parallel_size=2, nodes=1), gpus_per_node=8, gpu_name="H100 SXM")
    Traceback (most recent call last):
    ...
    calc.spec.untrusted.InputError: nodes: got 1, allowed 2, 4, 8, 16 (16 GPUs = TP × PP × DP must split evenly over the nodes, at most 8 GPUs per H100 SXM node)
    """
    tp, pp, dp = serving.tensor_parallel_size, serving.pipeline_parallel_size, serving.data_parallel_size
    check_tensor_parallel(arch, tp)
    L = arch.num_hidden_layers
    if pp > L:
        raise InputError("pipeline_parallel_size", pp, allowed=f"1 – {L}", code="pp_layers", layers=L, model=arch.name)
    if serving.enable_expert_parallel and arch.moe is None:
        raise InputError("enable_expert_parallel", True, allowed="false", code="ep_dense", model=arch.name)
    world = tp * pp * dp
    if world > max_gpus:
        raise InputError("data_parallel_size", dp, allowed=f"TP × PP × DP ≤ {max_gpus:,}", code="world_size")
    g = max(int(gpus_per_node), 1)
    nodes = serving.nodes if serving.nodes is not None else -(-world // g)
    if world % nodes or world // nodes > g:
        allowed = ", ".join(str(k) for k in range(1, world + 1) if world % k == 0 and world // k <= g)
        raise InputError("nodes", nodes, allowed=allowed or "none", code="nodes_split", world=world, per_node=g,
                         gpu=gpu_name)
    return nodes
