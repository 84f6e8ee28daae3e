"""Cached simulations for the load-test page: results keyed by every input (the scenario as JSON,
the workload parameters, a hash of the trace bytes, the budget's caps), so reruns, other visitors
and the language switch reuse them, in the byte-bounded :data:`ui.budget.RESULTS`. Each run is a
:class:`ui.workers.Job`: the page runs it in a worker process (:mod:`ui.background`), the frontier
and the tests in their own thread. Each run is
held to the budget (:mod:`ui.budget`): :func:`work` estimates it first, the page refuses what
passes the budget, and the caps stop a run the estimate missed. Thin wrappers around
:mod:`calc.traffic` (no arithmetic here)."""

from __future__ import annotations

import hashlib
import math
import shlex
from dataclasses import dataclass, replace

import numpy as np

from calc.plan.percentiles import steady_state_statistic, warmup_requests
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.spec.speculative import cli_json
from calc.timing.estimate import estimate
from calc.timing.speculative import drafter_and_kv_capacity
from calc.traffic import simulator
from calc.traffic.budget import WorkEstimate, caps, estimate_work
from calc.traffic.simulator import EngineConfig, SimResult, simulate
from calc.traffic.prefix_cache import PrefixReuse, conversations_in_flight, reuse_workload
from calc.traffic.slo import RateSearch, max_sustainable_rate, statistic_interval, steady_means
from calc.traffic.workload import Workload, length_spec, make_workload, parse_trace
from ui.budget import limits
from ui.workers import Job

SWEEP_ITERATIONS = 6
SWEEP_REQUESTS = 400


@dataclass(frozen=True)
class Load:
    """The workload knobs of the page (hashable)."""

    arrival: str
    rate_per_s: float
    cv: float
    concurrency: int
    num_requests: int
    lengths: str
    input_len: int
    output_len: int
    spread: float
    seed: int
    speculative: object = None  # a calc.spec.speculative.SpeculativeConfig (ui.speculative.inputs), or None
    reuse: PrefixReuse | None = None  # a shared prefix or a chat (calc.traffic.prefix_cache); None: random tokens
    max_concurrency: int | None = None  # the client's cap on an open loop (vllm bench serve --max-concurrency); None: none


_spec = length_spec  # mean ± spread·mean (uniform), CV = spread (lognormal): calc.traffic.workload


def workload(load: Load, max_model_len: int, trace: bytes | None, data_parallel_size: int = 1) -> Workload:
    """The load one engine sees; with ``--data-parallel-size`` N one DP rank: 1/N of the rate or clients
    (its latencies are the deployment's; its throughputs are one rank's)."""
    if trace is not None:  # replayed by a client with the cap, where one is set
        w = parse_trace(trace, max_model_len=max_model_len)
        return w if load.max_concurrency is None else replace(w, closed_clients=int(load.max_concurrency))
    dp = max(int(data_parallel_size), 1)
    return make_workload(arrival=load.arrival, num_requests=load.num_requests, rate_per_s=load.rate_per_s / dp,
                         cv=load.cv,
                         concurrency=max(-(-load.concurrency // dp), 1) if load.concurrency else load.concurrency,
                         input_len=_spec(load.lengths, load.input_len, load.spread, max_model_len),
                         output_len=_spec(load.lengths, load.output_len, load.spread, max_model_len),
                         max_model_len=max_model_len, seed=load.seed,
                         max_concurrency=None if load.max_concurrency is None or load.arrival == "closed"
                         else max(-(-load.max_concurrency // dp), 1))


def _engine(arch_json: str, gpu_json: str, serving_json: str, eff_json: str):
    arch, gpu = ModelArch.model_validate_json(arch_json), GPUSpec.model_validate_json(gpu_json)
    serving, eff = ServingConfig.model_validate_json(serving_json), Efficiency.model_validate_json(eff_json)
    est = estimate(arch, gpu, serving, eff)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=serving.enable_chunked_prefill, num_blocks=int(est.memory.kv_sequence_blocks),
                       block_size=serving.block_size)
    return est, cfg


def _caps(share: float = 1.0, speculative: bool = False) -> tuple[int, int]:
    """(max_steps, max_passes) of the budget's ``share`` (never above the simulator's own cap)."""
    lim = limits()
    steps, passes = caps(cpu_s=lim.cpu_s * share, memory_bytes=lim.run_bytes, speculative=speculative)
    return min(steps, int(simulator.MAX_STEPS)), passes


def _trace_key(trace: bytes | None) -> str | None:
    return None if trace is None else hashlib.sha256(trace).hexdigest()


def work(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, trace: bytes | None) -> WorkEstimate:
    """Lower bounds on what :func:`run` would cost (:func:`calc.traffic.budget.estimate_work`)."""
    est, cfg = _engine(arch_json, gpu_json, serving_json, eff_json)
    w = workload(load, est.max_model_len, trace)
    return estimate_work(input_len=w.input_len, output_len=w.output_len, max_num_batched_tokens=cfg.max_num_batched_tokens,
                         max_num_seqs=cfg.max_num_seqs, enable_chunked_prefill=cfg.enable_chunked_prefill,
                         closed_clients=w.closed_clients,
                         num_speculative_tokens=0 if load.speculative is None else load.speculative.num_speculative_tokens)


def sweep_work(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load) -> WorkEstimate:
    """What one of the sweep's simulations costs at least (its rate does not change the bound)."""
    return work(arch_json, gpu_json, serving_json, eff_json,
                Load(**{**load.__dict__, "num_requests": min(load.num_requests, SWEEP_REQUESTS)}), None)


def _speculative(est, cfg: EngineConfig, load: Load, gpu_json: str, serving_json: str, eff_json: str):
    """(engine config, simulator's speculative argument): the drafter's memory out of the KV pool
    (calc.timing.speculative) and its accepted lengths; unchanged without speculation."""
    if load.speculative is None:
        return cfg, None
    d, kv_tokens = drafter_and_kv_capacity(est, load.speculative, gpu=GPUSpec.model_validate_json(gpu_json),
                                           serving=ServingConfig.model_validate_json(serving_json),
                                           efficiency=Efficiency.model_validate_json(eff_json))
    cfg = EngineConfig(max_num_seqs=cfg.max_num_seqs, max_num_batched_tokens=cfg.max_num_batched_tokens,
                       enable_chunked_prefill=cfg.enable_chunked_prefill,
                       num_blocks=max(int(kv_tokens // cfg.block_size), 1), block_size=cfg.block_size)
    return cfg, (d, load.speculative.accepted_at_position)


def _simulate(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, trace: bytes | None,
              max_steps: int, max_passes: int) -> SimResult:
    est, cfg = _engine(arch_json, gpu_json, serving_json, eff_json)
    cfg, spec = _speculative(est, cfg, load, gpu_json, serving_json, eff_json)
    dp = ServingConfig.model_validate_json(serving_json).data_parallel_size
    w, cfg, chains = _with_reuse(workload(load, est.max_model_len, trace, dp), cfg, load, est, dp)
    return simulate(est.engine, w, cfg, max_steps=max_steps, max_passes=max_passes, speculative=spec, chains=chains)


def _with_reuse(w: Workload, cfg: EngineConfig, load: Load, est, dp: int = 1):
    """(workload, engine config, chains) with the load's prefix reuse (none: as given); one DP rank's
    share of the clients or the rate."""
    if load.reuse is None or not load.reuse.any_reuse:
        return w, cfg, None
    if load.speculative is not None:
        raise ValueError("speculative decoding with prefix reuse: not modelled together yet (turn one off)")
    convs = max(-(-load.concurrency // dp), 1) if load.arrival == "closed" else int(conversations_in_flight(
        rate_rps=load.rate_per_s / dp, e2e_latency_s=float(est.serving.e2e_latency_s)))
    if w.capped:  # the client's cap: no more conversations in flight than requests
        convs = min(convs, w.closed_clients)
    w, chains = reuse_workload(w, load.reuse, conversations=int(convs), seed=load.seed)
    if load.reuse.turns > 1:  # conversations that outgrow the model are cut (the engine refuses them)
        w = replace(w, input_len=np.minimum(w.input_len, np.maximum(est.max_model_len - w.output_len, 1)))
    return w, replace(cfg, enable_prefix_caching=load.reuse.enable_prefix_caching), chains


def run_job(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, trace: bytes | None) -> Job:
    """The simulation of the page's inputs, held to the budget's caps, as a cacheable :class:`ui.workers.Job`."""
    max_steps, max_passes = _caps(speculative=load.speculative is not None)
    return Job(("lt.run", arch_json, gpu_json, serving_json, eff_json, load, _trace_key(trace), max_steps, max_passes),
               _simulate, (arch_json, gpu_json, serving_json, eff_json, load, trace, max_steps, max_passes))


def run(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, trace: bytes | None) -> SimResult:
    """:func:`run_job`, run in this thread (cached)."""
    return run_job(arch_json, gpu_json, serving_json, eff_json, load, trace)()


def _sweep(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, ttft_slo_s: float,
           tpot_slo_s: float, percentile: int, capacity_rps: float, max_steps: int, max_passes: int) -> RateSearch:
    est, cfg = _engine(arch_json, gpu_json, serving_json, eff_json)
    cfg, spec = _speculative(est, cfg, load, gpu_json, serving_json, eff_json)
    n = min(load.num_requests, SWEEP_REQUESTS)

    def one(rate: float) -> SimResult:
        at = Load(**{**load.__dict__, "rate_per_s": rate, "num_requests": n})
        dp = ServingConfig.model_validate_json(serving_json).data_parallel_size
        w, c, chains = _with_reuse(workload(at, est.max_model_len, None, dp), cfg, at, est, dp)
        return simulate(est.engine, w, c, max_steps=max_steps, max_passes=max_passes, speculative=spec, chains=chains)

    hi = max(2.0 * capacity_rps, 0.02)
    return max_sustainable_rate(one, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s, percentile=percentile,
                                rate_lo=hi / 100.0, rate_hi=hi, iterations=SWEEP_ITERATIONS)


def sweep_job(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, *, ttft_slo_s: float,
              tpot_slo_s: float, percentile: int, capacity_rps: float) -> Job:
    """The highest sustainable rate (a bisection of short simulations sharing the budget), as a :class:`ui.workers.Job`."""
    # the bisection's runs share the budget
    max_steps, max_passes = _caps(1.0 / (SWEEP_ITERATIONS + 2), speculative=load.speculative is not None)
    args = (arch_json, gpu_json, serving_json, eff_json, load, ttft_slo_s, tpot_slo_s, percentile, capacity_rps,
            max_steps, max_passes)
    return Job(("lt.sweep", *args), _sweep, args)


def sweep_within(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig, eff: Efficiency, load: Load, *, ttft_slo_s: float,
                 tpot_slo_s: float, percentile: int, cpu_limit_s: float) -> Job | None:
    """The rate search's job (between 1 % and 2x the analytic capacity), or None when its
    ``SWEEP_ITERATIONS + 2`` runs would pass ``cpu_limit_s``."""
    key = (arch.model_dump_json(), gpu.model_dump_json(), serving.model_dump_json(), eff.model_dump_json())
    if sweep_work(*key, load).cpu_s * (SWEEP_ITERATIONS + 2) > cpu_limit_s:
        return None
    cap = float(estimate(arch, gpu, serving, eff, concurrency=0, input_len=load.input_len,
                         output_len=load.output_len).serving.requests_per_s)
    return sweep_job(*key, load, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s, percentile=percentile,
                     capacity_rps=cap if math.isfinite(cap) else load.rate_per_s)


def sweep(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, *, ttft_slo_s: float,
          tpot_slo_s: float, percentile: int, capacity_rps: float) -> RateSearch:
    """:func:`sweep_job`, run in this thread (cached)."""
    return sweep_job(arch_json, gpu_json, serving_json, eff_json, load, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s,
                     percentile=percentile, capacity_rps=capacity_rps)()


def cli_command(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig, load: Load) -> str:
    """The ``python -m calc simulate`` command for the same model, GPU, engine and workload (every
    value shell-quoted): what to run on one's own machine when the page's budget is too small.
    Uniform lengths become the CLI's lognormal of the same mean (its only spread)."""
    q = shlex.quote
    parts = ["python -m calc simulate", f"--model {q(arch.id)}", f"--gpu {q(gpu.id)}",
             f"--tensor-parallel-size {serving.tensor_parallel_size}"]
    if serving.max_model_len is not None:
        parts.append(f"--max-model-len {serving.max_model_len}")
    if serving.dtype not in (None, "auto"):
        parts.append(f"--dtype {q(str(serving.dtype))}")
    if serving.quantization not in (None, "auto"):
        parts.append(f"--quantization {q(str(serving.quantization))}")
    if serving.kv_cache_dtype not in (None, "auto"):
        parts.append(f"--kv-cache-dtype {q(str(serving.kv_cache_dtype))}")
    if serving.max_num_seqs is not None:
        parts.append(f"--max-num-seqs {serving.max_num_seqs}")
    if serving.max_num_batched_tokens is not None:
        parts.append(f"--max-num-batched-tokens {serving.max_num_batched_tokens}")
    if not serving.enable_chunked_prefill:
        parts.append("--no-enable-chunked-prefill")
    parts += [f"--input-len {load.input_len}", f"--output-len {load.output_len}", f"--arrival {q(load.arrival)}"]
    if load.speculative is not None:  # vLLM's flag; the acceptance as its per-position list
        parts.append("--speculative-config " + q(cli_json(load.speculative)))
    if load.arrival == "closed":
        parts.append(f"--concurrency {load.concurrency}")
    elif load.arrival in ("poisson", "gamma"):
        parts.append(f"--rate {load.rate_per_s:g}")
        if load.arrival == "gamma":
            parts.append(f"--cv {load.cv:g}")
    if load.max_concurrency is not None and load.arrival != "closed":
        parts.append(f"--max-concurrency {load.max_concurrency}")
    if load.lengths != "fixed" and load.spread > 0:
        parts.append(f"--input-len-cv {load.spread:g} --output-len-cv {load.spread:g}")
    if load.reuse is not None:  # the prefix reuse, as the CLI spells it
        parts += load.reuse.cli_flags()
    parts += [f"--num-requests {load.num_requests}", f"--seed {load.seed}", "--format json"]
    return " ".join(parts)


OPEN_ARRIVALS = ("poisson", "gamma")


def judged(r: SimResult, stats: dict[str, float], *, stat: str, arrival: str, trace: bool) -> tuple[float, float, bool]:
    """(TTFT, TPOT) at the SLA statistic the page judges, and whether in steady state.

    Open arrivals (Poisson, Gamma) are judged as the planner's check judges them
    (:func:`calc.plan.percentiles.steady_state_statistic`): the first quarter of the requests,
    which arrive at an idle engine, left out; so the same deployment, rate and seed give the
    planner's numbers. A closed loop, a burst or a trace: every request (``stats``, from
    :func:`calc.traffic.slo.summarize`)."""
    if arrival in OPEN_ARRIVALS and not trace:
        ttft, tpot = steady_state_statistic(r, stat)
        return ttft, tpot, True
    return stats[f"ttft_s_{stat}"], stats[f"tpot_s_{stat}"], False


def judged_intervals(r: SimResult, stat: str) -> tuple[int, tuple[float, float], tuple[float, float]]:
    """How sure :func:`judged`'s steady-state numbers are: (requests judged, TTFT interval, TPOT interval),
    95 % by sectioning over the requests after the warm-up in arrival order
    (:func:`calc.traffic.slo.statistic_interval`; (nan, nan) with too few requests)."""
    start = warmup_requests(int(np.size(r.ttft_s)))
    ttft, tpot = (np.asarray(x, dtype=float)[start:] for x in (r.ttft_s, r.tpot_s))
    return int(np.isfinite(ttft).sum()), statistic_interval(ttft, stat), statistic_interval(tpot, stat)


def finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def closed_loop_job(arch: ModelArch, v, eff: Efficiency, concurrency: int) -> Job:
    """The simulated closed loop of ``concurrency`` clients sending the variant's requests, as a
    :class:`ui.workers.Job` (the frontier page runs it in a worker, like the load test's runs).
    Lengths spread around the variant's means as the shared traffic says (its ``lengths`` and
    ``length_spread``, the model's ``output_cv`` too); fixed lengths are drawn lognormal, CV 0.5,
    as the steady state the page draws assumes: identical requests would stay in the FCFS wave of
    clients started together (calc.timing.estimate). max(4 C, 400) requests, at most 4,000."""
    serving = v.serving.model_copy(update={"enable_chunked_prefill": bool(v.chunked), "concurrency": concurrency})
    n = int(min(max(4 * concurrency, 400), 4000))
    spread = any(cv > 0 for cv in v.length_cvs)
    lengths, s = (v.lengths, float(v.length_spread)) if spread else ("lognormal", 0.5)
    load = Load(arrival="closed", rate_per_s=1.0, cv=1.0, concurrency=concurrency, num_requests=n, lengths=lengths,
                input_len=serving.input_len, output_len=serving.output_len, spread=s, seed=0,
                speculative=getattr(v, "speculative", None))  # the frontier's speculative decoding, if on
    return run_job(arch.model_dump_json(), v.gpu.model_dump_json(), serving.model_dump_json(), eff.model_dump_json(), load, None)


def closed_loop_summary(r: SimResult, concurrency: int) -> dict[str, float]:
    """Mean TTFT / TPOT / E2E and P95 TTFT of a :func:`closed_loop_job` result, steady state after
    the first C requests: what the frontier page shows where the closed-form model does not match
    the simulator."""
    ttft = np.asarray(r.ttft_s[concurrency:], dtype=float)
    ttft = ttft[np.isfinite(ttft)]
    return {**steady_means(r, skip=concurrency), "num_requests": len(r.ttft_s),
            "ttft_s_p95": float(np.percentile(ttft, 95)) if ttft.size else float("nan")}


def simulated_closed_loop(arch: ModelArch, v, eff: Efficiency, concurrency: int) -> dict[str, float]:
    """:func:`closed_loop_job` run in this thread (cached), summarized by :func:`closed_loop_summary`."""
    return closed_loop_summary(closed_loop_job(arch, v, eff, concurrency)(), concurrency)
