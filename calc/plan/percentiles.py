"""Percentile SLAs for the planner's top candidates, from the request simulator (:mod:`calc.traffic`).

The grid search judges the SLA on the closed-loop model's means (cheap, millions of points). A
percentile (P50/P90/P95/P99) needs the distribution, so only the first few ranked deployments are
simulated: one replica with Poisson arrivals at its share of the rate (λ / N), the lengths of the
request, its ``max_num_seqs``, token budget, chunked prefill and KV pool (blocks from
:func:`calc.sizing.scenario.memory_for`), the engine numbers of
:func:`calc.timing.estimate.engine_numbers`. Where the percentile misses, replicas are added
(each gets less of the rate) up to twice the mean-based count; what still misses is dropped.
Deterministic: a fixed seed.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

from calc.plan.search import Deployment, PlanRequest, PlanResult
from calc.sizing.scenario import memory_for
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.timing.estimate import engine_numbers

try:  # the simulator (issue 9); without it the planner reports the mean
    from calc.traffic.simulator import EngineConfig, simulate
    from calc.traffic.slo import summarize
    from calc.traffic.workload import LengthSpec, make_workload
    AVAILABLE = True
except ImportError:  # pragma: no cover - depends on what is installed
    AVAILABLE = False

SIMULATED_TOP = 4  # candidates simulated
NUM_REQUESTS = 400  # per simulation (the run starts empty: the first requests see an idle engine)
SEED = 0


def simulated_percentiles(arch: ModelArch, gpu: GPUSpec, d: Deployment, *, rate_rps: float, replicas: int,
                          percentile: str, efficiency: Efficiency = Efficiency(), chunked: bool = True,
                          num_requests: int = NUM_REQUESTS, seed: int = SEED) -> tuple[float, float]:
    """(TTFT, TPOT) at ``percentile`` of one replica of ``d`` receiving ``rate_rps / replicas``."""
    serving = ServingConfig(tensor_parallel_size=d.tensor_parallel_size, dtype="auto", quantization=d.quantization,
                            kv_cache_dtype=d.kv_cache_dtype, input_len=d.input_len, output_len=d.output_len,
                            max_model_len=d.max_model_len, max_num_seqs=d.max_num_seqs,
                            max_num_batched_tokens=d.max_num_batched_tokens)
    e = engine_numbers(arch, gpu, serving, efficiency)
    m = memory_for(arch, gpu, serving, efficiency, concurrency=1, context_tokens=d.max_model_len)
    cfg = EngineConfig(max_num_seqs=d.max_num_seqs, max_num_batched_tokens=d.max_num_batched_tokens,
                       enable_chunked_prefill=chunked, num_blocks=int(m.num_blocks))
    w = make_workload(arrival="poisson", num_requests=num_requests, rate_per_s=rate_rps / replicas,
                      input_len=LengthSpec("fixed", d.input_len), output_len=LengthSpec("fixed", d.output_len),
                      max_model_len=d.max_model_len, seed=seed)
    s = summarize(simulate(e, w, cfg))
    key = "mean" if percentile == "mean" else percentile
    return s[f"ttft_s_{key}"], s[f"tpot_s_{key}"]


def check_top(result: PlanResult, arch: ModelArch, gpus: Sequence[GPUSpec], efficiency: Efficiency = Efficiency(), *,
              top: int = SIMULATED_TOP, num_requests: int = NUM_REQUESTS) -> PlanResult:
    """``result`` with its first ``top`` rows re-judged on the requested percentile (replicas
    added where needed, rows that still miss dropped, re-sorted by the request's key); the other
    rows keep the mean and say so. Unchanged when the request asks for the mean or the simulator
    is not available."""
    req: PlanRequest = result.request
    if req.percentile == "mean" or not AVAILABLE or not result.ranked:
        return result
    by_id = {g.id: g for g in gpus}
    checked: list[Deployment] = []
    for d in result.ranked[:top]:
        gpu = by_id[d.gpu]
        price = None if d.usd_per_hour is None else d.usd_per_hour / d.gpus_total
        found = None
        for n in range(d.replicas, 2 * d.replicas + 1):
            if req.max_gpus is not None and n * d.tensor_parallel_size > req.max_gpus:
                break
            if req.budget_usd_per_hour is not None and price is not None and \
                    n * d.tensor_parallel_size * price > req.budget_usd_per_hour:
                break
            ttft, tpot = simulated_percentiles(arch, gpu, d, rate_rps=req.rate_rps, replicas=n,
                                               percentile=req.percentile, efficiency=efficiency,
                                               chunked=req.enable_chunked_prefill, num_requests=num_requests)
            if ttft <= req.ttft_slo_s and tpot <= req.tpot_slo_s:
                found = (n, ttft, tpot)
                break
        if found is None:
            continue
        n, ttft, tpot = found
        scale = n / d.replicas
        checked.append(replace(
            d, replicas=n, gpus_total=n * d.tensor_parallel_size, ttft_s=ttft, tpot_s=tpot,
            usd_per_hour=None if d.usd_per_hour is None else d.usd_per_hour * scale,
            usd_per_million_input_tokens=None if d.usd_per_million_input_tokens is None
            else d.usd_per_million_input_tokens * scale,
            usd_per_million_output_tokens=None if d.usd_per_million_output_tokens is None
            else d.usd_per_million_output_tokens * scale,
            output_tokens_per_s=d.output_tokens_per_s * scale,
            slo_statistic=f"{req.percentile} (simulated, {num_requests} Poisson requests per replica)"))
    key = {"cost": lambda d: (math.inf if d.usd_per_hour is None else d.usd_per_hour, d.gpus_total),
           "gpus": lambda d: (d.gpus_total, math.inf if d.usd_per_hour is None else d.usd_per_hour),
           "throughput": lambda d: (-d.output_tokens_per_s_per_gpu,)}[req.sort]
    rest = [replace(d, slo_statistic="mean (not simulated)") for d in result.ranked[top:]]
    note = (f"{req.percentile}: the first {min(top, len(result.ranked))} options simulated "
            f"({num_requests} Poisson requests per replica; replicas added where the percentile missed); "
            f"the others judged on the closed-loop mean")
    return replace(result, ranked=sorted(checked, key=key) + rest, slo_statistic=req.percentile, percentile_note=note)
