"""Percentile SLAs for the planner's listed rows, re-checked with the request simulator (:mod:`calc.traffic`).

The grid search sizes every configuration on a percentile with the queueing model
(:func:`calc.plan.costs.ttft_quantile_wait_s`: cheap, millions of points; an estimate within about
0.6–3× of the simulated percentile). The
listed rows are then simulated, in order, while the work budget lasts:
one replica with Poisson arrivals at its share of the rate (λ / N), the lengths of the
request, its ``max_num_seqs``, token budget, chunked prefill and KV pool (blocks from
:func:`calc.sizing.scenario.memory_for`), the engine numbers of
:func:`calc.timing.estimate.engine_numbers`. Where the percentile misses, replicas are added
(each gets less of the rate) up to twice the model's count; what still misses is dropped. Rows with
the same engine numbers and rate (FP8 and INT8 weights give the same) share one simulation.
The statistic is taken in steady state: the first quarter of the requests, which arrive at an idle
engine, is left out (:func:`steady_state_statistic`). Deterministic: a fixed seed.

Bounded: the least replica count is found by bisection (the percentile is non-increasing in the
replicas: each gets less of the rate), at most :data:`MAX_EVALS_PER_OPTION` simulations per
option (a linear search tried every count from N to 2N: millions at 100,000 req/s, each a
simulation), and all the simulations of one call share a budget of :data:`WORK_BUDGET` units (a
unit: one pass of the simulator's loop, or 64 engine steps; 95–300 µs of CPU by the engine, the
dearest a pipeline round or an expert-parallel all-to-all: ``bench/planner_unit_cost.py``). A
caller with a CPU budget (a page) also gives ``cpu_limit_s``: each simulation is then capped at
the passes and steps the CPU left to the call allows at the dearest pass
(:data:`calc.traffic.budget.SLOWEST_PASS_S`), so the call stays within it whatever the engine
(units alone let the 405B pipeline-parallel link spend 22 s of a 15 s budget), and the simulator
stops at the call's CPU deadline (``simulate(deadline_thread_s=…)``: the pass costs were measured
on one machine; on a slower one the caps alone overran a 14 s check by 1.4 s). An option whose
simulation would pass the budget keeps the queueing model's numbers and says so.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Sequence

import numpy as np

from calc.plan.search import Deployment, PlanRequest, PlanResult, distinct_first, model_statistic, rank_key
from calc.sizing.scenario import memory_for
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.timing.estimate import engine_numbers
from calc.timing.serving import EngineNumbers

try:  # the simulator (issue 9); without it the planner reports the mean
    from calc.traffic.simulator import EngineConfig, simulate
    from calc.traffic.slo import statistic
    from calc.traffic.workload import length_spec, make_workload
    AVAILABLE = True
except ImportError:  # pragma: no cover - depends on what is installed
    AVAILABLE = False

SIMULATED_TOP = 10  # rows simulated: the table's default length (PlanRequest.top)
MAX_SIMULATED_TOP = 16  # whatever a caller asks
# Per simulation; the first quarter (an idle engine's warm-up) is not judged, the other 1,500 are
# (400 judged only 300, mostly from a server that had not yet built its queue: issue 17).
NUM_REQUESTS = 2000
MAX_NUM_REQUESTS = 10_000
SEED = 0
# A row whose queueing-model TTFT at the percentile is at most this share of the target is not
# simulated: the model was 0.62-3.2x the simulated percentile over 60 planner rows
# (calc.plan.costs.ttft_quantile_wait_s), so such a row is at most 1 / 0.62 x 0.5 = 0.81 of the target.
CLEAR_TTFT_FRACTION = 0.5
MAX_EVALS_PER_OPTION = 12  # simulations per option: N, 2N, then bisection (2^10 counts resolved exactly)
# Simulator work units per check_top call (10-30 s of one core); see the module doc. 120,000 (was 100,000):
# with one row per GPU first, a dropped row's GPU keeps its place with its next option, one more
# simulation or two; the default question (Llama-2-7B, 2 req/s, P95) then needs 108,241 units (4.2 s).
WORK_BUDGET = 120_000
STEPS_PER_UNIT = 64
# A fast-forwarded speculative step costs about five plain ones (calc.traffic.budget: 6 µs against 1.25 µs).
SPEC_STEP_WEIGHT = 5


class _Budget:
    """Work units left to one :func:`check_top` call (deterministic, unlike a clock), and where the
    caller has a CPU budget, the CPU seconds of this thread left to it (module doc)."""

    def __init__(self, units: int, cpu_limit_s: float | None = None) -> None:
        self.units = int(units)
        self.deadline = None if cpu_limit_s is None else time.thread_time() + float(cpu_limit_s)

    @property
    def left(self) -> int:
        """Units left; 0 once the CPU budget is spent."""
        return 0 if self.cpu_left_s() == 0.0 else self.units

    def cpu_left_s(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.thread_time())

    def caps(self, speculative: bool = False) -> tuple[int, int]:
        """(max_passes, max_steps) of the next simulation: half the units left for loop passes, half
        for engine steps (a speculative step counts :data:`SPEC_STEP_WEIGHT` steps); with a CPU
        budget, also half its seconds left at the dearest pass and half at a fast-forwarded step
        (:mod:`calc.traffic.budget`), so the run costs at most what is left."""
        from calc.traffic.budget import SECONDS_PER_SPEC_STEP, SECONDS_PER_STEP, SLOWEST_PASS_S
        left = max(self.left, 2)
        weight = SPEC_STEP_WEIGHT if speculative else 1
        passes, steps = left // 2, left // 2 * STEPS_PER_UNIT // weight
        if (cpu := self.cpu_left_s()) is not None:
            per_step = SECONDS_PER_SPEC_STEP if speculative else SECONDS_PER_STEP
            passes = max(1, min(passes, int(cpu / 2 / SLOWEST_PASS_S)))
            steps = max(1, min(steps, int(cpu / 2 / per_step)))
        return passes, steps

    def spend(self, r, speculative: bool = False) -> None:
        weight = SPEC_STEP_WEIGHT if speculative else 1
        self.units -= int(r.passes) + int(r.step_s.size) * weight // STEPS_PER_UNIT


def replica_engine(arch: ModelArch, gpu: GPUSpec, d: Deployment, *, efficiency: Efficiency = Efficiency(),
                   chunked: bool = True, speculative=None) -> tuple[EngineNumbers, "EngineConfig", object]:
    """The engine numbers (:func:`calc.timing.estimate.engine_numbers`), scheduler config and the
    simulator's speculative argument (None without a drafter) of one replica of ``d``: its
    max_num_seqs, token budget, chunked prefill and KV blocks (:func:`calc.sizing.scenario.memory_for`;
    with ``speculative``, a :class:`calc.spec.speculative.SpeculativeConfig`, the drafter's memory out
    of the pool, as the planner's grid and the load test take it: :mod:`calc.timing.speculative`)."""
    serving = ServingConfig(tensor_parallel_size=d.tensor_parallel_size, pipeline_parallel_size=d.pipeline_parallel_size,
                            data_parallel_size=d.data_parallel_size, enable_expert_parallel=d.enable_expert_parallel,
                            dtype="auto", quantization=d.quantization,
                            kv_cache_dtype=d.kv_cache_dtype, input_len=d.input_len, output_len=d.output_len,
                            max_model_len=d.max_model_len, max_num_seqs=d.max_num_seqs,
                            max_num_batched_tokens=d.max_num_batched_tokens)
    e = engine_numbers(arch, gpu, serving, efficiency)
    m = memory_for(arch, gpu, serving, efficiency, concurrency=1, context_tokens=d.max_model_len)
    num_blocks, spec = int(m.kv_sequence_blocks), None
    if speculative is not None:
        from calc.timing.speculative import drafter_from_config, kv_capacity_tokens_with_drafter  # noqa: PLC0415
        drafter = drafter_from_config(e, speculative, gpu=gpu, serving=serving, efficiency=efficiency)
        tokens = kv_capacity_tokens_with_drafter(kv_pool_bytes=m.kv_pool_bytes, kv_bytes_per_token=m.kv_bytes_per_sequence_token,
                                                 drafter=drafter)
        num_blocks = max(int(float(tokens) // serving.block_size), 1)
        spec = (drafter, speculative.accepted_at_position)
    cfg = EngineConfig(max_num_seqs=d.max_num_seqs, max_num_batched_tokens=d.max_num_batched_tokens,
                       enable_chunked_prefill=chunked, num_blocks=num_blocks)
    return e, cfg, spec


def simulated_percentiles(arch: ModelArch, gpu: GPUSpec, d: Deployment, *, rate_rps: float, replicas: int,
                          percentile: str, efficiency: Efficiency = Efficiency(), chunked: bool = True,
                          num_requests: int = NUM_REQUESTS, seed: int = SEED,
                          budget: _Budget | None = None, max_steps: int | None = None,
                          lengths: str = "fixed", length_spread: float = 0.0,
                          reuse=None, speculative=None, engine=None) -> tuple[float, float] | None:
    """(TTFT, TPOT) at ``percentile`` of one replica of ``d`` receiving ``rate_rps / replicas``, its
    request lengths drawn around ``d``'s as ``lengths`` / ``length_spread`` say (the load test's
    distributions, :func:`calc.traffic.workload.length_spec`, kept within max_model_len), with the
    request's prefix reuse where it has any (``reuse``, a :class:`calc.traffic.prefix_cache.PrefixReuse`:
    shared prefixes, or chats whose M = :func:`calc.traffic.prefix_cache.conversations_in_flight`
    conversations at the replica's rate and ``d``'s E2E share the arrivals, as the load test runs them);
    None when the simulation would pass what is left of ``budget`` or ``max_steps`` engine steps
    (its memory: :func:`calc.traffic.budget.caps`); it is cut there. ``engine``: :func:`replica_engine`'s
    answer for these arguments where the caller has it already (check_top builds it once per option)."""
    e, cfg, spec = engine if engine is not None else replica_engine(arch, gpu, d, efficiency=efficiency,
                                                                    chunked=chunked, speculative=speculative)
    # one DP rank of one replica: its share of the rate (a replica's DP ranks split its requests)
    w = make_workload(arrival="poisson", num_requests=num_requests, rate_per_s=rate_rps / replicas / d.data_parallel_size,
                      input_len=length_spec(lengths, d.input_len, length_spread, d.max_model_len),
                      output_len=length_spec(lengths, d.output_len, length_spread, d.max_model_len),
                      max_model_len=d.max_model_len, seed=seed)
    chains = None
    if reuse is not None and reuse.any_reuse:
        from calc.traffic.prefix_cache import conversations_in_flight, reuse_workload  # noqa: PLC0415
        convs = conversations_in_flight(rate_rps=rate_rps / replicas / d.data_parallel_size, e2e_latency_s=d.e2e_s)
        w, chains = reuse_workload(w, reuse, conversations=int(convs), seed=seed)
        if reuse.turns > 1:  # conversations that outgrow the model are cut (the engine refuses them)
            w = replace(w, input_len=np.minimum(w.input_len, np.maximum(d.max_model_len - w.output_len, 1)))
        cfg = replace(cfg, enable_prefix_caching=reuse.enable_prefix_caching)
    if budget is None:
        r = simulate(e, w, cfg, max_steps=max_steps, chains=chains, speculative=spec)
    else:  # the run costs at most what is left of the budget (_Budget.caps)
        passes, steps = budget.caps(speculative=spec is not None)
        r = simulate(e, w, cfg, max_passes=passes, max_steps=steps if max_steps is None else min(steps, max_steps),
                     chains=chains, speculative=spec, deadline_thread_s=budget.deadline)
        budget.spend(r, speculative=spec is not None)
    if r.truncated:
        return None
    return steady_state_statistic(r, percentile)


WARMUP_FRACTION = 0.25  # of the requests, by arrival: the run starts from an idle engine


def warmup_requests(n: int) -> int:
    """How many of ``n`` requests (by arrival) the steady state leaves out: the first
    :data:`WARMUP_FRACTION`, none of fewer than 4.

    >>> warmup_requests(1000), warmup_requests(3)
    (250, 0)
    """
    return int(WARMUP_FRACTION * n) if n >= 4 else 0


def steady_state_statistic(r, percentile: str) -> tuple[float, float]:
    """(TTFT, TPOT) at ``percentile`` (or the mean) over the requests after the warm-up: the first
    :data:`WARMUP_FRACTION` of them arrive at an idle engine and see shorter queues than a server
    that has carried the rate for a while (the issue-17 DeepSeek-V3 option passed its 2 s P95 target
    on the whole run and missed it in steady state). Few requests: all of them.

    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(ttft_s=np.array([0.1, 0.1, 1.0, 2.0]), tpot_s=np.array([0.01, 0.01, 0.02, 0.04]))
    >>> [round(x, 4) for x in steady_state_statistic(r, "mean")]   # the first request is the warm-up
    [1.0333, 0.0233]
    """
    start = warmup_requests(int(np.size(r.ttft_s)))
    return statistic(np.asarray(r.ttft_s)[start:], percentile), statistic(np.asarray(r.tpot_s)[start:], percentile)


def least_replicas(meets, lo: int, hi: int, *, max_evals: int = MAX_EVALS_PER_OPTION) -> tuple[int | None, str]:
    """The least n in [lo, hi] with ``meets(n)`` (True / False, or None: could not be judged),
    for ``meets`` non-decreasing in n: lo first (the usual answer), then hi, then bisection; at
    most ``max_evals`` calls. Returns (n, how): how is ``"exact"``, ``"upper_bound"`` (the calls
    ran out: n meets, a smaller count might too), ``"miss"`` (not even hi; n is None) or
    ``"unknown"`` (a call could not judge before any count was found to meet; n is None).

    >>> calls = []
    >>> least_replicas(lambda n: calls.append(n) or n >= 1_234_567, 1_000_000, 2_000_000, max_evals=40)
    (1234567, 'exact')
    >>> len(calls)                     # the linear search: 234,568 simulations
    22
    >>> least_replicas(lambda n: n >= 1_234_567, 1_000_000, 2_000_000)   # 12 calls: within 0.1 %
    (1235351, 'upper_bound')
    >>> least_replicas(lambda n: n >= 5, 1, 4), least_replicas(lambda n: None, 1, 4)
    ((None, 'miss'), (None, 'unknown'))
    """
    first = meets(lo)
    if first is None:
        return None, "unknown"
    if first:
        return lo, "exact"
    if hi <= lo:
        return None, "miss"
    top = meets(hi)
    if top is None:
        return None, "unknown"
    if not top:
        return None, "miss"
    fail, ok, evals = lo, hi, 2  # meets(fail) is False, meets(ok) True
    while ok - fail > 1 and evals < max_evals:
        mid = (fail + ok) // 2
        r = meets(mid)
        evals += 1
        if r is None:
            break
        if r:
            ok = mid
        else:
            fail = mid
    return ok, "exact" if ok - fail == 1 else "upper_bound"


def _most_replicas(d: Deployment, req: PlanRequest, price: float | None) -> int:
    """The largest count the search may try: twice the mean-based count, within --max-gpus and
    the budget (the comparisons of the old one-by-one search, so the same counts pass)."""
    hi = 2 * d.replicas
    tp = d.tensor_parallel_size * d.pipeline_parallel_size * d.data_parallel_size  # GPUs per replica
    if req.max_gpus is not None:
        hi = min(hi, req.max_gpus // tp)
    if req.budget_usd_per_hour is not None and price is not None and price > 0:
        n = min(hi, int(req.budget_usd_per_hour // (tp * price)) + 1)
        while n > 0 and n * tp * price > req.budget_usd_per_hour:
            n -= 1
        hi = min(hi, n)
    return hi


def check_top(result: PlanResult, arch: ModelArch, gpus: Sequence[GPUSpec], efficiency: Efficiency = Efficiency(), *,
              top: int = SIMULATED_TOP, num_requests: int = NUM_REQUESTS, work_budget: int | None = None,
              max_steps: int | None = None, cpu_limit_s: float | None = None, speculative=None) -> PlanResult:
    """``result`` with its first ``top`` rows re-judged on the requested percentile by simulation
    (replicas added where needed; a row that still misses is dropped and the next option, the plan's
    spare ones after its table, takes its place, checked the same way); the other rows keep the queueing
    model's numbers and say so; all of them sorted by the request's key
    (:func:`calc.plan.search.rank_key`). Unchanged when the request asks for the mean or the
    simulator is not available. Bounded (module doc): ``top`` at most :data:`MAX_SIMULATED_TOP`,
    at most :data:`MAX_EVALS_PER_OPTION` simulations per option, one per distinct engine and
    rate, ``work_budget`` units in all, at most ``max_steps`` engine steps per simulation (its
    memory), at most ``cpu_limit_s`` seconds of this thread's CPU where given; with ``speculative``
    (the drafter the grid was planned with) every simulation decodes with it; a row whose simulation did not fit the budget keeps the model's numbers
    (``slo_statistic`` says so)."""
    req: PlanRequest = result.request
    if req.percentile == "mean" or not AVAILABLE or not result.ranked:
        return result
    top = max(1, min(int(top), MAX_SIMULATED_TOP))
    num_requests = max(1, min(int(num_requests), MAX_NUM_REQUESTS))
    work_budget = WORK_BUDGET if work_budget is None else int(work_budget)
    budget = _Budget(work_budget, cpu_limit_s)
    by_id = {g.id: g for g in gpus}
    model = model_statistic(req.percentile)
    seen: dict[tuple, tuple[float, float] | None] = {}  # one simulation per engine, config and replica rate
    checked: list[Deployment] = []
    unchecked: list[Deployment] = []
    clear: list[Deployment] = []
    reused = (", with the prefix reuse" if req.reuse.any_reuse else "") + (
        f", with {speculative.method} drafts (k = {speculative.num_speculative_tokens})" if speculative is not None else "")
    # the rows to check, in order; a row that still misses at its most replicas is dropped and the next
    # option takes its place (the table's next row, else the plan's spare ones), checked the same way
    queue, later, spare = list(result.ranked[:top]), list(result.ranked[top:]), list(result.spare)
    first = {id(d) for d in queue}  # the table's own rows; a replacement the budget cannot check is passed over
    replaced = 0
    # per GPU and parallelism (TP, PP, DP), after an option of it missed at its most replicas: the least
    # simulated / modelled ratio its simulations showed (TTFT, TPOT), at any replica count (:func:`missed_ratio`)
    missed: dict[tuple, tuple[float, float]] = {}
    while queue:
        d = queue.pop(0)
        if d.ttft_s <= CLEAR_TTFT_FRACTION * req.ttft_slo_s and d.tpot_s <= req.tpot_slo_s:
            clear.append(replace(d, slo_statistic=f"{model}, not simulated: at most {CLEAR_TTFT_FRACTION:g} of the "
                                                  "TTFT target"))
            continue
        shape = _shape(d)
        if shape in missed and (d.ttft_s * missed[shape][0] > req.ttft_slo_s
                                or d.tpot_s * missed[shape][1] > req.tpot_slo_s):
            # the same GPU at the same parallelism was simulated this far above the model even with the load
            # spread thinnest: this option misses too; not simulated, the next one takes its place
            if later or spare:
                nxt = _next_option(d, later, spare, req.one_per_gpu)
                queue.insert(0, nxt) if nxt.gpu == d.gpu and req.one_per_gpu else queue.append(nxt)
                replaced += 1
            continue
        gpu = by_id[d.gpu]
        price = None if d.usd_per_hour is None else d.usd_per_hour / d.gpus_total
        engine = replica_engine(arch, gpu, d, efficiency=efficiency, chunked=req.enable_chunked_prefill,
                                speculative=speculative)
        e, cfg, _ = engine
        same = (repr(e), cfg, d.input_len, d.output_len, d.max_model_len, req.lengths, req.length_spread)
        results: dict[int, tuple[float, float]] = {}

        def meets(n: int) -> bool | None:
            key = same + (n,)
            if key not in seen:
                if budget.left <= 0:
                    return None
                seen[key] = simulated_percentiles(arch, gpu, d, rate_rps=req.rate_rps, replicas=n,
                                                  percentile=req.percentile, efficiency=efficiency,
                                                  chunked=req.enable_chunked_prefill, num_requests=num_requests,
                                                  budget=budget, max_steps=max_steps, lengths=req.lengths,
                                                  length_spread=req.length_spread, reuse=req.reuse,
                                                  speculative=speculative, engine=engine)
            got = seen[key]
            if got is None:
                return None
            results[n] = got
            return got[0] <= req.ttft_slo_s and got[1] <= req.tpot_slo_s

        n, how = least_replicas(meets, d.replicas, _most_replicas(d, req, price))
        if how == "miss" and results:
            missed[shape] = missed_ratio(d, results.values(), missed.get(shape))
        if how == "miss" or (how == "unknown" and id(d) not in first):
            if later or spare:
                nxt = _next_option(d, later, spare, req.one_per_gpu)
                # the dropped GPU's next option is checked next (it takes that GPU's place in the table,
                # before the budget is spent on the rows after it); another row, after the queue
                queue.insert(0, nxt) if nxt.gpu == d.gpu and req.one_per_gpu else queue.append(nxt)
                replaced += 1
            continue
        if how == "unknown":
            unchecked.append(replace(d, slo_statistic=f"{model}; not simulated: its {req.percentile} simulation "
                                                      "needs more than the planner's simulation budget"))
            continue
        ttft, tpot = results[n]
        scale = n / d.replicas
        bound = "" if how == "exact" else "; replicas an upper bound: the search stopped at its cap"
        checked.append(replace(
            d, replicas=n, gpus_total=n * d.tensor_parallel_size * d.pipeline_parallel_size * d.data_parallel_size,
            ttft_s=ttft, tpot_s=tpot,
            # the latency its price ties are broken by (rank_key): the simulated statistic's, as shown,
            # E2E = TTFT + (O − 1)·TPOT, not the queueing model's any more
            e2e_s=ttft + (d.output_len - 1) * tpot,
            usd_per_hour=None if d.usd_per_hour is None else d.usd_per_hour * scale,
            usd_per_million_input_tokens=None if d.usd_per_million_input_tokens is None
            else d.usd_per_million_input_tokens * scale,
            usd_per_million_output_tokens=None if d.usd_per_million_output_tokens is None
            else d.usd_per_million_output_tokens * scale,
            output_tokens_per_s=d.output_tokens_per_s * scale,
            slo_statistic=f"{req.percentile} (simulated, {num_requests} Poisson requests per replica, the first "
                          f"quarter dropped{reused}{bound})"))
    rest = unchecked + clear + [replace(d, slo_statistic=f"{model}, not simulated") for d in later]
    note = (f"{req.percentile}: every configuration sized with the queueing model (TTFT at full batch + the waits "
            f"for a sequence slot and the prefill room at {req.percentile}); the first "
            f"{min(top, len(result.ranked))} options simulated ({num_requests} Poisson requests per replica, the "
            f"first quarter dropped; replicas added where the percentile missed) but those whose modelled TTFT is at "
            f"most {CLEAR_TTFT_FRACTION:g} of the target")
    if replaced:
        note += (f"; {replaced} option(s) that missed at their most replicas (or, in another's place, did not fit the "
                 "simulation budget) replaced by the next ones")
    if unchecked:
        cpu = "" if cpu_limit_s is None else f" within {cpu_limit_s:g} s of CPU"
        note += (f"; {len(unchecked)} of them needed more than the planner's simulation budget ({work_budget:,} "
                 f"units: loop passes of the simulator, or 64 engine steps each{cpu}) and kept the queueing model's "
                 "numbers")
    # One order for every row, by the request's key (calc.plan.search.rank_key): a checked row with
    # replicas added can cost more than a row below it (issue #19: $1.95 listed above $1.78).
    ranked = sorted(checked + rest, key=lambda d: rank_key(d, req.sort))
    if req.one_per_gpu:  # one row per GPU first, as the plan listed them (calc.plan.search.distinct_first)
        ranked = [ranked[i] for i in distinct_first([d.gpu for d in ranked], [rank_key(d, req.sort)[0] for d in ranked])]
    return replace(result, ranked=ranked, slo_statistic=req.percentile, percentile_note=note)


def _shape(d: Deployment) -> tuple:
    """An option's GPU and parallelism: what :func:`missed_ratio` carries over between options."""
    return d.gpu, d.tensor_parallel_size, d.pipeline_parallel_size, d.data_parallel_size


def missed_ratio(d: Deployment, simulated, before: tuple[float, float] | None = None) -> tuple[float, float]:
    """The least simulated / modelled ratio (TTFT, TPOT) over an option's simulations at each replica count
    (``simulated``: (TTFT, TPOT) pairs), the smaller of it and ``before`` (the same GPU's earlier misses).
    An option that missed at its most replicas, where each replica has the least of the load, shows how far
    the queueing model reads that GPU's latency below the simulation at that parallelism; another option of
    the GPU at the same TP, PP and DP (other weight or KV precision, sequence cap) whose modelled latency times
    this ratio is over the target misses too (:func:`check_top` drops it unsimulated).

    >>> from types import SimpleNamespace as N
    >>> missed_ratio(N(ttft_s=0.5, tpot_s=0.04), [(0.62, 0.025), (0.59, 0.018)])
    (1.18, 0.45)
    >>> missed_ratio(N(ttft_s=0.5, tpot_s=0.04), [(0.55, 0.05)], before=(1.18, 0.45))
    (1.1, 0.45)
    """
    t = min(s[0] for s in simulated) / d.ttft_s
    p = min(s[1] for s in simulated) / d.tpot_s
    if before is not None:
        t, p = min(t, before[0]), min(p, before[1])
    return round(t, 6), round(p, 6)


def _next_option(dropped: Deployment, later: list[Deployment], spare: list[Deployment], same_gpu: bool) -> Deployment:
    """The row that takes a dropped row's place (taken out of ``later``, the table's rows after the
    checked ones, or ``spare``): the table's next row, else the next spare one; with one row per GPU
    first, the dropped GPU's next option wherever it stands, so that the GPU keeps its place."""
    if same_gpu:
        for rows in (later, spare):
            for i, d in enumerate(rows):
                if d.gpu == dropped.gpu:
                    return rows.pop(i)
    return later.pop(0) if later else spare.pop(0)
