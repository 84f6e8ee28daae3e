"""The planner's results, cached by their inputs in the byte-bounded :data:`ui.budget.RESULTS`
(shared by every session: the same link costs its simulations once), and held to the budget: the
percentile check (:func:`calc.plan.percentiles.check_top`) gets the CLI's work units, the CPU
seconds of ``LLM_CALC_MAX_CPU_S`` less :data:`PLAN_RESERVE_S` and less the grid search's own as its CPU
limit and the memory of ``LLM_CALC_MAX_RUN_MIB`` as its step cap; options it cannot simulate
within them keep the queueing model's numbers and say so. No arithmetic here."""

from __future__ import annotations

import shlex
import time
from typing import Sequence

from calc.plan.percentiles import WORK_BUDGET, check_top
from calc.plan.search import PlanRequest, PlanResult, plan
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch
from calc.spec.speculative import SpeculativeConfig, cli_json
from calc.traffic.budget import caps
from ui.budget import limits
from ui.workers import Job


PLAN_RESERVE_S = 1.5  # of the CPU budget, left to the job's unpickling, the result's pickling and the deadline's last pass (CI ran 1.1-1.4x slower than here)


def work_units() -> int:
    """The percentile check's work units: the CLI's default (the CPU limit binds first on dear engines)."""
    return WORK_BUDGET


def check_cpu_s() -> float:
    """CPU seconds the grid search and its percentile check may take together: the budget less
    :data:`PLAN_RESERVE_S` (the check gets what the search leaves, :func:`_check`)."""
    return max(0.5, limits().cpu_s - PLAN_RESERVE_S)


def _check(arch: ModelArch, gpus: tuple[GPUSpec, ...], req: PlanRequest, efficiency: Efficiency,
           prices: dict[str, float | None], units: int, max_steps: int, cpu_s: float,
           speculative: SpeculativeConfig | None = None) -> PlanResult:
    t0 = time.thread_time()
    result = plan(arch, list(gpus), req, efficiency, prices=prices, speculative=speculative)
    # the check gets what the grid search left of the run's CPU (a slower machine searches longer too)
    left_s = max(0.5, cpu_s - (time.thread_time() - t0))
    return check_top(result, arch, list(gpus), efficiency, work_budget=units, max_steps=max_steps, cpu_limit_s=left_s,
                     speculative=speculative)


def planned_job(arch: ModelArch, gpus: Sequence[GPUSpec], req: PlanRequest, efficiency: Efficiency,
                prices: dict[str, float | None], speculative: SpeculativeConfig | None = None) -> Job:
    """The plan and its percentile check under the budget, as a cacheable :class:`ui.workers.Job`
    (with ``speculative``, every option decodes with that drafter, in the grid and in the check)."""
    lim = limits()
    units = work_units()
    max_steps, _ = caps(cpu_s=lim.cpu_s, memory_bytes=lim.run_bytes)
    key = ("planner", arch.model_dump_json(), tuple(g.model_dump_json() for g in gpus), req.model_dump_json(),
           efficiency.model_dump_json(), tuple(sorted(prices.items())), units, max_steps, check_cpu_s(), speculative)
    return Job(key, _check, (arch, tuple(gpus), req, efficiency, dict(prices), units, max_steps, check_cpu_s(),
                             speculative))


def planned(arch: ModelArch, gpus: Sequence[GPUSpec], req: PlanRequest, efficiency: Efficiency,
            prices: dict[str, float | None], speculative: SpeculativeConfig | None = None) -> PlanResult:
    """:func:`planned_job`, run in this thread (cached)."""
    return planned_job(arch, gpus, req, efficiency, prices, speculative)()


def not_simulated(result: PlanResult) -> int:
    """Options the percentile check could not simulate within the budget (they keep the model's numbers)."""
    return sum("not simulated: its" in d.slo_statistic for d in result.ranked)


def cli_command(arch: ModelArch, gpu_ids: Sequence[str], req: PlanRequest, prices: dict[str, float | None],
                work_budget: int, speculative: SpeculativeConfig | None = None) -> str:
    """The ``python -m calc plan`` command for the same request (values shell-quoted), with
    ``--work-budget`` for the percentile check: what to run on one's own machine."""
    q = shlex.quote
    parts = ["python -m calc plan", f"--model {q(arch.id)}", f"--rate {req.rate_rps:g}", f"--input-len {req.input_len}",
             f"--output-len {req.output_len}", f"--ttft-slo-ms {req.ttft_slo_s * 1e3:g}",
             f"--tpot-slo-ms {req.tpot_slo_s * 1e3:g}", f"--percentile {req.percentile}"]
    if gpu_ids:
        parts.append(f"--gpus {q(','.join(gpu_ids))}")
    if req.max_gpus is not None:
        parts.append(f"--max-gpus {req.max_gpus}")
    if req.budget_usd_per_hour is not None:
        parts.append(f"--budget-usd-per-hour {req.budget_usd_per_hour:g}")
    parts += [f"--price {q(f'{g}={p:g}')}" for g, p in sorted(prices.items()) if p is not None]
    if req.max_model_len is not None:
        parts.append(f"--max-model-len {req.max_model_len}")
    if not req.enable_chunked_prefill:
        parts.append("--no-enable-chunked-prefill")
    if req.lengths != "fixed":
        parts.append(f"--lengths {req.lengths} --length-spread {req.length_spread:g}")
    parts += req.reuse.cli_flags()
    if speculative is not None:
        parts.append(f"--speculative-config {q(cli_json(speculative))}")
    parts += [f"--sort {req.sort}", f"--top {req.top}", f"--work-budget {int(work_budget)}"]
    if not req.one_per_gpu:
        parts.append("--no-one-per-gpu")
    return " ".join(parts)
