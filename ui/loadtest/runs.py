"""Cached simulations for the load-test page: results keyed by every input (the scenario as JSON,
the workload parameters, the trace bytes), so reruns, other visitors and the language switch
reuse them. Thin wrappers around :mod:`calc.traffic` (no arithmetic here)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import streamlit as st

from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.timing.estimate import estimate
from calc.traffic.simulator import EngineConfig, SimResult, simulate
from calc.traffic.slo import RateSearch, max_sustainable_rate
from calc.traffic.workload import LengthSpec, Workload, make_workload, parse_trace


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


def _spec(kind: str, mean: int, spread: float, hi: int) -> LengthSpec:
    if kind == "uniform":  # mean ± spread·mean
        lo, top = max(1, round(mean * (1 - min(spread, 1.0)))), min(hi, round(mean * (1 + min(spread, 1.0))))
        return LengthSpec("uniform", mean=mean, lo=lo, hi=max(lo, top))
    if kind == "lognormal":
        return LengthSpec("lognormal", mean=mean, cv=spread)
    return LengthSpec("fixed", mean=mean)


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


@st.cache_data(max_entries=64, show_spinner=False)
def run(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, trace: bytes | None) -> SimResult:
    est, cfg = _engine(arch_json, gpu_json, serving_json, eff_json)
    return simulate(est.engine, workload(load, est.max_model_len, trace), cfg)


@st.cache_data(max_entries=32, show_spinner=False)
def sweep(arch_json: str, gpu_json: str, serving_json: str, eff_json: str, load: Load, *, ttft_slo_s: float,
          tpot_slo_s: float, percentile: int, capacity_rps: float) -> RateSearch:
    est, cfg = _engine(arch_json, gpu_json, serving_json, eff_json)
    n = min(load.num_requests, 400)

    def one(rate: float) -> SimResult:
        w = workload(Load(**{**load.__dict__, "rate_per_s": rate, "num_requests": n}), est.max_model_len, None)
        return simulate(est.engine, w, cfg)

    hi = max(2.0 * capacity_rps, 0.02)
    return max_sustainable_rate(one, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s, percentile=percentile,
                                rate_lo=hi / 100.0, rate_hi=hi, iterations=6)


def finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def simulated_closed_loop(arch: ModelArch, v, eff: Efficiency, concurrency: int) -> dict[str, float]:
    """Mean TTFT / TPOT / E2E (and P95 TTFT) of a simulated closed loop of ``concurrency`` clients
    sending the variant's fixed-length requests, steady state after the first C requests: what the
    frontier page shows where the closed-form model does not match the simulator."""
    serving = v.serving.model_copy(update={"enable_chunked_prefill": bool(v.chunked), "concurrency": concurrency})
    n = int(min(max(4 * concurrency, 400), 4000))
    load = Load(arrival="closed", rate_per_s=1.0, cv=1.0, concurrency=concurrency, num_requests=n, lengths="fixed",
                input_len=serving.input_len, output_len=serving.output_len, spread=0.0, seed=0)
    r = run(arch.model_dump_json(), v.gpu.model_dump_json(), serving.model_dump_json(), eff.model_dump_json(), load, None)
    steady = slice(concurrency, None)
    return {"ttft_s": float(np.nanmean(r.ttft_s[steady])), "tpot_s": float(np.nanmean(r.tpot_s[steady])),
            "e2e_latency_s": float(np.nanmean(r.e2e_latency_s[steady])),
            "ttft_s_p95": float(np.nanpercentile(r.ttft_s[steady], 95)), "num_requests": n}
