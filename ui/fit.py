"""Why a scenario does not fit, in words (the same message on every page).

vLLM refuses to start for two different reasons, and the fix differs:
1. weights + activation peak + overhead exceed usable × gpu_memory_utilization (no KV pool at all);
2. the KV pool cannot hold one request of max_model_len tokens ("To serve at least one request
   with the model's max seq len ..."): lower --max-model-len, use FP8 KV, or add memory.

Given the computed alternatives (:func:`calc.sizing.fit.what_would_fit`), the message lists them,
each with the requests it holds, instead of the generic advice.
"""

from __future__ import annotations

from typing import Callable

from calc.sizing.fit import DoesNotFit, FitAlternative, what_would_fit
from calc.sizing.scenario import MemoryResult
from ui import format as F


def not_fit_message(*, model: str, gpu: str, tp: int, max_model_len: int, mem: MemoryResult,
                    t: Callable[..., str], advice: DoesNotFit | None = None) -> str:
    """Why vLLM refuses to start; with ``advice``, the computed alternatives (a Markdown list).

    A KV pool too small is said as vLLM says it: the KV one request of max_model_len needs against
    the pool (``advice.kv_needed_bytes``, its start-up worst case: windowed layers hold their window
    plus a step's tokens), not as the pool's token count at every layer's bytes per token, which
    undercounts what fits for models with windowed layers (gpt-oss: half its layers).
    """
    budget = float(mem.kv_pool_bytes) <= 0
    key = "fit.budget" if budget else "fit.max_model_len"
    # without advice: every layer holds every token (exact without windowed layers)
    need = advice.kv_needed_bytes if advice is not None else float(mem.kv_bytes_per_token) * max_model_len
    text = t(key, model=model, gpu=gpu, tp=tp,
             weights=F.both(mem.weights_bytes), act=F.both(mem.activation_bytes),
             overhead=F.both(mem.overhead_bytes), budget=F.both(mem.budget_bytes), mml=F.integer(max_model_len),
             pool=F.both(mem.kv_pool_bytes), need=F.both(need))
    if advice is None:
        return text
    if not advice.alternatives:
        return text + "\n\n" + t("fit.alt.none")
    lines = [alternative_line(a, advice, t) for a in advice.alternatives]
    return text + "\n\n" + t("fit.alt.title") + "\n\n" + "\n".join(f"- {x}" for x in lines)


def _value(change: str, value: str) -> str:
    return F.integer(int(value)) if change in ("max_model_len", "tensor_parallel_size") else str(value)


def alternative_line(a: FitAlternative, advice: DoesNotFit, t: Callable[..., str]) -> str:
    """One alternative: what changes, the vLLM flags, and the requests it holds.

    FP8 weights for Llama-3.1-70B on 2 × H100 at 32k: "weights in fp8 (`--quantization fp8`): 6.7
    requests of 32,768 tokens at once; meets your goal of 1 × 32,768 tokens".
    """
    changes = zip(a.change.split(","), str(a.value).split(","))
    what = " + ".join(t(f"fit.change.{c}", value=_value(c, v)) for c, v in changes)
    wanted = advice.concurrency or 1
    goal = t("fit.goal.met" if a.meets_goal else "fit.goal.missed", n=F.integer(wanted),
             ctx=F.integer(advice.context_tokens))
    return t("fit.alt.line", what=what, flags=a.vllm_flags, conc=f"{a.max_concurrency:,.1f}",
             mml=F.integer(a.max_model_len), goal=goal)


def scenario_not_fit_message(sc, mem: MemoryResult, t: Callable[..., str], *, serving=None,
                             concurrency: int | None = None, context_tokens: int | None = None) -> str:
    """:func:`not_fit_message` for a page's scenario (``ui.state.Scenario``), with the alternatives
    computed for its goal: ``concurrency`` requests of ``context_tokens`` tokens (default one
    request of max_model_len)."""
    s = sc.serving if serving is None else serving
    advice = what_would_fit(sc.arch, sc.gpu, s, sc.efficiency, concurrency=concurrency, context_tokens=context_tokens)
    return not_fit_message(model=sc.arch.name, gpu=t.gpu(sc.gpu), tp=s.tensor_parallel_size,
                           max_model_len=sc.resolved.max_model_len, mem=mem, t=t, advice=advice)
