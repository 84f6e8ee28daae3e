"""The headline numbers of a scenario, for comparing two side by side: memory per GPU, maximum
concurrency, TTFT, TPOT, throughput and cost. Every number from the functions the pages use."""

from __future__ import annotations

from dataclasses import dataclass, fields

from calc.sizing.scenario import memory_for
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.timing.frontier import cost_per_million_tokens_usd
from calc.timing.estimate import estimate


@dataclass(frozen=True)
class Headline:
    """One scenario's headline numbers (NaN where it does not fit; cost None without a price)."""

    memory_per_gpu_bytes: float  # weights + activations + overhead + KV of the running requests
    weights_per_gpu_bytes: float
    kv_pool_bytes: float
    max_concurrency: float  # whole requests of the context length that fit the KV pool
    ttft_s: float
    tpot_s: float
    output_tokens_per_s: float  # the TP group
    usd_per_million_output_tokens: float | None
    fits: bool


HEADLINE_FIELDS = tuple(f.name for f in fields(Headline) if f.name != "fits")


def headline(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig, efficiency: Efficiency = Efficiency(), *,
             concurrency: int, context_tokens: int, chunked: bool = True, price: float | None = None) -> Headline:
    """Memory (:func:`calc.sizing.scenario.memory_for`) and closed-loop latency/throughput
    (:func:`calc.timing.estimate.estimate`) of one scenario at its concurrency.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> h = headline(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"),
    ...              ServingConfig(dtype="float16", input_len=1792, output_len=256, concurrency=16),
    ...              concurrency=16, context_tokens=2048)
    >>> round(h.weights_per_gpu_bytes / 2**30, 2), h.fits
    (12.55, True)
    """
    m = memory_for(arch, gpu, serving, efficiency, concurrency=concurrency, context_tokens=context_tokens)
    e = estimate(arch, gpu, serving, efficiency, concurrency=concurrency, enable_chunked_prefill=chunked).serving
    price = gpu.price_usd_per_hour if price is None else price
    x = float(e.output_tokens_per_s)
    cost = None if price is None else float(cost_per_million_tokens_usd(
        price_usd_per_gpu_hour=price, tokens_per_s=x,  # every GPU of the layout (TP × PP × DP)
        num_gpus=serving.tensor_parallel_size * serving.pipeline_parallel_size * serving.data_parallel_size))
    return Headline(
        memory_per_gpu_bytes=float(m.weights_bytes + m.activation_bytes + m.overhead_bytes + m.kv_in_use_bytes),
        weights_per_gpu_bytes=float(m.weights_bytes), kv_pool_bytes=float(m.kv_pool_bytes),
        max_concurrency=float(m.max_concurrency_at_context), ttft_s=float(e.ttft_s), tpot_s=float(e.tpot_s),
        output_tokens_per_s=x, usd_per_million_output_tokens=cost, fits=bool(m.fits))


def deltas(a: Headline, b: Headline) -> dict[str, float | None]:
    """B − A per headline number, as a fraction of A (None where A is 0, missing or NaN).

    >>> import math
    >>> a = Headline(1.0, 1.0, 1.0, 10.0, 0.5, 0.05, 100.0, 1.0, True)
    >>> b = Headline(2.0, 1.0, 1.0, 5.0, 0.5, 0.04, 150.0, None, True)
    >>> d = deltas(a, b); d["memory_per_gpu_bytes"], d["max_concurrency"], d["usd_per_million_output_tokens"]
    (1.0, -0.5, None)
    """
    out: dict[str, float | None] = {}
    for name in HEADLINE_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        ok = x is not None and y is not None and x == x and y == y and x != 0
        out[name] = (y - x) / x if ok else None
    return out
