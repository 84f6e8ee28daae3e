"""The memory page's calculator calls, memoized by every input and shared by every session.

A room of people on one scenario asks the same questions: the memory stack at their concurrency
and the sweep around it. :func:`memory_for` is :func:`calc.sizing.scenario.memory_for` with an LRU
cache keyed by its inputs (the pydantic models, the GPU by its JSON as in
:func:`ui.perf.view.cached_estimate`, the arrays by their bytes): a rerun that asks again what
this process already computed (the same concurrency, a language switch, a control that does not
change the numbers) takes ~15 µs instead of ~0.6 ms per call. Results are shared between sessions:
their arrays are made read-only, so a caller that would change one in place fails loudly instead
of changing another session's numbers.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from calc.sizing.scenario import MemoryResult, memory_for as _memory_for
from calc.spec.inputs import Efficiency, ModelArch, ServingConfig
from ui.budget import shared_memo
from ui.perf.view import _ByJson, array_key, array_of_key

CACHE_SIZE = 512  # scalar results ~5 kB, sweeps (≤ ~60 points) ~20 kB: a few MB shared by every session


def _read_only(r: MemoryResult) -> MemoryResult:
    for f in dataclasses.fields(r):
        v = getattr(r, f.name)
        if isinstance(v, np.ndarray):
            v.setflags(write=False)
    return r


@shared_memo(CACHE_SIZE)
def _cached(arch: ModelArch, gpu: _ByJson, serving: ServingConfig, efficiency: Efficiency, conc: tuple,
            ctx: tuple) -> MemoryResult:
    return _read_only(_memory_for(arch, gpu.model, serving, efficiency, concurrency=array_of_key(conc),
                                  context_tokens=array_of_key(ctx)))


def memory_for(arch: ModelArch, gpu, serving: ServingConfig, efficiency: Efficiency, *, concurrency=None,
               context_tokens=None) -> MemoryResult:
    """:func:`calc.sizing.scenario.memory_for`, memoized (same arguments, same result; read-only arrays).

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> arch, gpu = get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm")
    >>> a = memory_for(arch, gpu, ServingConfig(max_model_len=8192), Efficiency(), concurrency=4)
    >>> a is memory_for(arch, gpu, ServingConfig(max_model_len=8192), Efficiency(), concurrency=4)
    True
    >>> round(float(a.weights_bytes) / 2**30, 2)
    14.96
    """
    return _cached(arch, _ByJson(gpu), serving, efficiency, array_key(concurrency), array_key(context_tokens))


@shared_memo(CACHE_SIZE)
def _panels(arch: ModelArch, gpu: _ByJson, serving: ServingConfig, efficiency: Efficiency, resolved, concurrency: int,
            context_tokens: int, lang: str) -> tuple:
    from calc.sizing.layout import rank_numbers  # noqa: PLC0415
    from calc.sizing.scenario import model_numbers, mxfp4_backend  # noqa: PLC0415
    from ui.i18n import Translator  # noqa: PLC0415
    from ui.memory import explain  # noqa: PLC0415

    s = serving
    numbers = rank_numbers(arch, model_numbers(arch, dtype=s.dtype, quantization=s.quantization,  # PP/EP share
                                               kv_cache_dtype=s.kv_cache_dtype, mxfp4_backend=mxfp4_backend(gpu.model)),
                           tensor_parallel_size=s.tensor_parallel_size, pipeline_parallel_size=s.pipeline_parallel_size,
                           data_parallel_size=s.data_parallel_size, enable_expert_parallel=s.enable_expert_parallel)
    r = memory_for(arch, gpu.model, s, efficiency, concurrency=concurrency, context_tokens=context_tokens)
    inputs = explain.Inputs(arch=arch, serving=s, resolved=resolved, efficiency=efficiency, numbers=numbers,
                            result=r, context_tokens=context_tokens)
    return tuple(explain.memory_panels(inputs, Translator(lang)))


def memory_panels(sc, t) -> list:
    """The memory page's "why this number" panels (:func:`ui.memory.explain.memory_panels`) of the
    scenario ``sc`` (:class:`ui.state.Scenario`) at its concurrency and context, in ``t``'s language,
    memoized: pure text of the inputs, the same for every session that shows them. Shared: do not
    change the panels."""
    return list(_panels(sc.arch, _ByJson(sc.gpu), sc.serving, sc.efficiency, sc.resolved, int(sc.concurrency),
                        int(sc.context_tokens), t.lang))
