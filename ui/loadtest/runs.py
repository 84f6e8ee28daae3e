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
from dataclasses import dataclass

import numpy as np

from calc.plan.percentiles import steady_state_statistic
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.timing.estimate import estimate
from calc.traffic import simulator
from calc.traffic.budget import WorkEstimate, caps, estimate_work
from calc.traffic.simulator import EngineConfig, SimResult, simulate
from calc.traffic.slo import RateSearch, max_sustainable_rate, steady_means
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


_spec = length_spec  # mean ± spread·mean (uniform), CV = spread (lognormal): calc.traffic.workload


def workload(load: Load, max_model_len: int, trace: bytes | None) -> Workload:
    if trace is not None:
        return parse_trace(trace, max_model_len=max_model_len)
    return make_workload(arrival=load.arrival, num_requests=load.num_requests, rate_per_s=load.rate_per_s, cv=load.cv,
                         concurrency=load.concurrency, input_len=_spec(load.lengths, load.input_len, load.spread, max_model_len),
                         output_len=_spec(load.lengths, load.output_len, load.spread, max_model_len),
                         max_model_len=max_model_len, seed=load.seed)


def _engine(arch_json: str, gpu_json: str, serving_json: str, eff_json: str):
    arch, gpu = ModelArch.model_validate_json(arch_json), GPUSpec.model_validate_json(gpu_json)
    serving, eff = ServingConfig.model_validate_json(serving_json), Efficiency.model_validate_json(eff_json)
    est = estimate(arch, gpu, serving, eff)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=serving.enable_chunked_prefill, num_blocks=int(est.memory.num_blocks),
                       block_size=serving.block_size)
    return est, cfg


def _caps(share: float = 1.0) -> tuple[int, int]:
    """(max_steps, max_passes) of the budget's ``share`` (never above the simulator's own cap)."""
    lim = limits()
    steps, passes = caps(cpu_s=lim.cpu_s * share, memory_bytes=lim.run_bytes)
    return min(steps, int(simulator.MAX_STEPS)), passes


def _trace_key(trace: bytes | None) -> str | None:
    return None if trace is None else hashlib.sha256(trace).hexdigest()


def work(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, trace: bytes | None) -> WorkEstimate:
    """Lower bounds on what :func:`run` would cost (:func:`calc.traffic.budget.estimate_work`)."""
    est, cfg = _engine(arch_json, gpu_json, serving_json, eff_json)
    w = workload(load, est.max_model_len, trace)
    return estimate_work(input_len=w.input_len, output_len=w.output_len, max_num_batched_tokens=cfg.max_num_batched_tokens,
                         max_num_seqs=cfg.max_num_seqs, enable_chunked_prefill=cfg.enable_chunked_prefill,
                         closed_clients=w.closed_clients)


def sweep_work(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load) -> WorkEstimate:
    """What one of the sweep's simulations costs at least (its rate does not change the bound)."""
    return work(arch_json, gpu_json, serving_json, eff_json,
                Load(**{**load.__dict__, "num_requests": min(load.num_requests, SWEEP_REQUESTS)}), None)


def _simulate(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, trace: bytes | None,
              max_steps: int, max_passes: int) -> SimResult:
    est, cfg = _engine(arch_json, gpu_json, serving_json, eff_json)
    return simulate(est.engine, workload(load, est.max_model_len, trace), cfg, max_steps=max_steps, max_passes=max_passes)


def run_job(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, trace: bytes | None) -> Job:
    """The simulation of the page's inputs, held to the budget's caps, as a cacheable :class:`ui.workers.Job`."""
    max_steps, max_passes = _caps()
    return Job(("lt.run", arch_json, gpu_json, serving_json, eff_json, load, _trace_key(trace), max_steps, max_passes),
               _simulate, (arch_json, gpu_json, serving_json, eff_json, load, trace, max_steps, max_passes))


def run(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, trace: bytes | None) -> SimResult:
    """:func:`run_job`, run in this thread (cached)."""
    return run_job(arch_json, gpu_json, serving_json, eff_json, load, trace)()


def _sweep(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, ttft_slo_s: float,
           tpot_slo_s: float, percentile: int, capacity_rps: float, max_steps: int, max_passes: int) -> RateSearch:
    est, cfg = _engine(arch_json, gpu_json, serving_json, eff_json)
    n = min(load.num_requests, SWEEP_REQUESTS)

    def one(rate: float) -> SimResult:
        w = workload(Load(**{**load.__dict__, "rate_per_s": rate, "num_requests": n}), est.max_model_len, None)
        return simulate(est.engine, w, cfg, max_steps=max_steps, max_passes=max_passes)

    hi = max(2.0 * capacity_rps, 0.02)
    return max_sustainable_rate(one, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s, percentile=percentile,
                                rate_lo=hi / 100.0, rate_hi=hi, iterations=SWEEP_ITERATIONS)


def sweep_job(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, *, ttft_slo_s: float,
              tpot_slo_s: float, percentile: int, capacity_rps: float) -> Job:
    """The highest sustainable rate (a bisection of short simulations sharing the budget), as a :class:`ui.workers.Job`."""
    max_steps, max_passes = _caps(1.0 / (SWEEP_ITERATIONS + 2))  # the bisection's runs share the budget
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
    if load.arrival == "closed":
        parts.append(f"--concurrency {load.concurrency}")
    elif load.arrival in ("poisson", "gamma"):
        parts.append(f"--rate {load.rate_per_s:g}")
        if load.arrival == "gamma":
            parts.append(f"--cv {load.cv:g}")
    if load.lengths != "fixed" and load.spread > 0:
        parts.append(f"--input-len-cv {load.spread:g} --output-len-cv {load.spread:g}")
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


def finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def simulated_closed_loop(arch: ModelArch, v, eff: Efficiency, concurrency: int) -> dict[str, float]:
    """Mean TTFT / TPOT / E2E (and P95 TTFT) of a simulated closed loop of ``concurrency`` clients
    sending the variant's requests, steady state after the first C requests: what the frontier page
    shows where the closed-form model does not match the simulator. Lengths spread (lognormal, CV
    0.5, the variant's means) as the steady state the page draws assumes: identical requests would
    stay in the FCFS wave of clients started together (calc.timing.estimate)."""
    serving = v.serving.model_copy(update={"enable_chunked_prefill": bool(v.chunked), "concurrency": concurrency})
    n = int(min(max(4 * concurrency, 400), 4000))
    load = Load(arrival="closed", rate_per_s=1.0, cv=1.0, concurrency=concurrency, num_requests=n, lengths="lognormal",
                input_len=serving.input_len, output_len=serving.output_len, spread=0.5, seed=0)
    r = run(arch.model_dump_json(), v.gpu.model_dump_json(), serving.model_dump_json(), eff.model_dump_json(), load, None)
    ttft = np.asarray(r.ttft_s[concurrency:], dtype=float)
    ttft = ttft[np.isfinite(ttft)]
    return {**steady_means(r, skip=concurrency), "num_requests": n,
            "ttft_s_p95": float(np.percentile(ttft, 95)) if ttft.size else float("nan")}
