"""The prefix-cache page's numbers: calls into ``calc`` over the sweeps the charts show (no maths of
its own; pure, no ``st.*``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calc.timing.estimate import estimate
from calc.traffic.prefix_cache import (PrefixReuse, conversations_in_flight, estimate_with_prefix_cache, miss_penalty_s,
                                       mixture_quantile_s, prefix_cache)
from calc.traffic.queueing import open_loop
from ui.budget import shared_memo


@dataclass(frozen=True)
class Point:
    """The open loop at one rate with and without the cache (seconds, tokens/s)."""

    rate_rps: np.ndarray
    hit_rate: np.ndarray
    ttft_s: np.ndarray
    ttft_p95_s: np.ndarray
    e2e_s: np.ndarray
    ttft_off_s: np.ndarray
    ttft_p95_off_s: np.ndarray
    e2e_off_s: np.ndarray
    running: np.ndarray
    stable: np.ndarray
    stable_off: np.ndarray
    cached_items: np.ndarray
    items: np.ndarray
    item_blocks: np.ndarray
    cache_blocks: np.ndarray
    cached_tokens: np.ndarray
    input_len: np.ndarray
    request_hit_probability: np.ndarray
    num_blocks: float  # the KV pool in blocks


def open_loop_with_cache(arch, gpu, serving, efficiency, reuse: PrefixReuse, rates) -> Point:
    """Mean and P95 TTFT and E2E at each rate (Poisson), with the reuse's hit rate at the batch the
    rate runs, and the same without the cache."""
    rates = np.asarray(rates, dtype=float)
    est = estimate(arch, gpu, serving, efficiency, concurrency=1)
    m = est.memory
    kw = dict(max_num_seqs=est.max_num_seqs, max_num_batched_tokens=est.max_num_batched_tokens,
              kv_capacity_tokens=m.kv_sequence_tokens, enable_chunked_prefill=serving.enable_chunked_prefill)
    I, O = serving.input_len, serving.output_len
    if reuse.turns > 1:  # the mean prompt: the conversation so far
        I = float(prefix_cache(reuse=reuse, input_len=I, output_len=O, block_size=serving.block_size,
                               num_blocks=m.kv_sequence_blocks, running=1.0).input_len)
    off = open_loop(est.engine, input_len=I, output_len=O, rate_rps=rates, **kw)
    e2e_off = np.where(np.isfinite(off.e2e_latency_s), off.e2e_latency_s, est.serving.e2e_latency_s)
    pc = prefix_cache(reuse=reuse, input_len=serving.input_len, output_len=O, block_size=serving.block_size,
                      num_blocks=m.kv_sequence_blocks, running=np.where(off.stable, off.running, off.slots),
                      conversations=conversations_in_flight(rate_rps=rates, e2e_latency_s=e2e_off))
    on = open_loop(est.engine, input_len=I, output_len=O, rate_rps=rates, cached_prompt_tokens=pc.cached_tokens, **kw)
    p = pc.request_hit_probability
    found = np.where(p > 0, pc.cached_tokens / np.maximum(p, 1e-12), 0.0)
    delta = miss_penalty_s(est.engine, prompt_tokens=I, cached_tokens=found, running=on.running,
                           context_tokens=I + O / 2.0, max_num_batched_tokens=est.max_num_batched_tokens,
                           enable_chunked_prefill=serving.enable_chunked_prefill)
    p95 = mixture_quantile_s(mean_s=on.ttft_s, quantile_s=on.ttft_percentile_s, shift_s=delta, hit_probability=p)
    return Point(rate_rps=rates, hit_rate=pc.prefix_cache_hit_rate, ttft_s=on.ttft_s, ttft_p95_s=p95,
                 e2e_s=on.e2e_latency_s, ttft_off_s=off.ttft_s, ttft_p95_off_s=off.ttft_percentile_s,
                 e2e_off_s=off.e2e_latency_s, running=on.running, stable=on.stable, stable_off=off.stable,
                 cached_items=pc.cached_items, items=pc.items, item_blocks=pc.item_blocks,
                 cache_blocks=pc.cache_blocks, cached_tokens=pc.cached_tokens, input_len=pc.input_len,
                 request_hit_probability=p, num_blocks=float(m.kv_sequence_blocks))


def hit_rate_curves(*, reuse: PrefixReuse, input_len, output_len, block_size, num_blocks, running_by_load,
                    items):
    """Hit rate against distinct prefixes (or conversations in flight) ``items``, one curve per
    running batch in ``running_by_load`` (rows = loads, columns = items)."""
    r = np.asarray(running_by_load, dtype=float)[:, None]
    n = np.asarray(items, dtype=float)[None, :]
    if reuse.turns > 1:
        pc = prefix_cache(reuse=reuse, input_len=input_len, output_len=output_len, block_size=block_size,
                          num_blocks=num_blocks, running=r, conversations=n)
    else:
        pcs = [prefix_cache(reuse=PrefixReuse(shared_prefix_len=reuse.shared_prefix_len, num_shared_prefixes=int(k),
                                              enable_prefix_caching=reuse.enable_prefix_caching),
                            input_len=input_len, output_len=output_len, block_size=block_size,
                            num_blocks=num_blocks, running=r[:, 0]).prefix_cache_hit_rate for k in n[0]]
        return np.stack(pcs, axis=1)
    return pc.prefix_cache_hit_rate


def item_points(chosen: int, limit: int = 1_000_000) -> np.ndarray:
    """1, 2, 5, 10 … up to ten times past the chosen count (at least 1,000), plus the chosen.

    >>> item_points(30).tolist()[:6], item_points(30)[-1]
    ([1, 2, 5, 10, 20, 30], np.int64(1000))
    """
    top = max(1000, 10 * int(chosen))
    pts = {m * 10 ** k for k in range(0, 7) for m in (1, 2, 5) if m * 10 ** k <= min(top, limit)} | {int(chosen)}
    return np.array(sorted(pts), dtype=np.int64)


@shared_memo(16)
def _frontier_cached(arch, gpu_json: str, serving, eff, conc_key: tuple, reuse: PrefixReuse, output_cv: float = 0.0):
    from calc.spec.inputs import GPUSpec  # noqa: PLC0415

    conc = np.frombuffer(conc_key[2], dtype=conc_key[0]).reshape(conc_key[1])
    return estimate_with_prefix_cache(arch, GPUSpec.model_validate_json(gpu_json), serving, eff, reuse,
                                      concurrency=conc, output_cv=output_cv)[0]


def frontier_estimate(v, arch, eff, concurrency, reuse: PrefixReuse):
    """The frontier's estimate of a variant over ``concurrency`` with the workload's reuse (memoized;
    shared, do not modify)."""
    c = np.asarray(concurrency, dtype=float)
    serving = v.serving.model_copy(update={"concurrency": None, "enable_chunked_prefill": bool(v.chunked)})
    return _frontier_cached(arch, v.gpu.model_dump_json(), serving, eff, (c.dtype.str, c.shape, c.tobytes()), reuse,
                            float(v.length_cvs[1]))
