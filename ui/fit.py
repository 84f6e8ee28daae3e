"""Why a scenario does not fit, in words (the same message on every page).

vLLM refuses to start for two different reasons, and the fix differs:
1. weights + activation peak + overhead exceed usable × gpu_memory_utilization (no KV pool at all);
2. the KV pool cannot hold one request of max_model_len tokens ("To serve at least one request
   with the model's max seq len ..."): lower --max-model-len, use FP8 KV, or add memory.
"""

from __future__ import annotations

from typing import Callable

from calc.sizing.scenario import MemoryResult
from ui import format as F


def not_fit_message(*, model: str, gpu: str, tp: int, max_model_len: int, mem: MemoryResult,
                    t: Callable[..., str]) -> str:
    if float(mem.kv_pool_bytes) <= 0:
        return t("fit.budget", model=model, gpu=gpu, tp=tp, weights=F.both(mem.weights_bytes),
                 act=F.both(mem.activation_bytes), overhead=F.both(mem.overhead_bytes),
                 budget=F.both(mem.budget_bytes))
    return t("fit.max_model_len", model=model, gpu=gpu, tp=tp, mml=F.integer(max_model_len),
             pool=F.both(mem.kv_pool_bytes), tokens=F.integer(mem.kv_pool_tokens))
