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
