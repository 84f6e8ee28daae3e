"""``python -m calc validate FILE...`` and ``python -m calc calibrate FILE...``: the calculator
against a user's own benchmark results (:mod:`calc.spec.results`: ``vllm bench serve
--save-result`` JSON, the summary block it prints, rows of ``vllm_benchmarks.jsonl``).

``validate`` prints, per row and metric, measured, predicted, error and whether the measured
value fell inside the band (:mod:`calc.timing.bands`). ``calibrate`` fits the efficiency inputs
(:data:`FITTED`: achievable bandwidth and FLOP/s fractions, per-step, per-sequence and per-request
overheads) to the files by a bounded coordinate search on a log grid (:func:`coordinate_search`)
and prints them as JSON, which ``--efficiency FILE`` applies to ``estimate``, ``simulate`` and ``plan``.
The scenario flags supply what a file does not say (GPU, tensor parallel size, the model for a
printed summary); a row's own options win.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any, Callable

from pydantic import ValidationError

from calc.cli.args import UsageError, _add_engine_args, _positive_int, add_efficiency_arg, load_efficiency
from calc.cli.measured import ask_row, read_as_run, score_rows, summary
from calc.spec.catalog import CatalogError, get_gpu, get_model
from calc.spec.hf_config import ConfigError
from calc.spec.inputs import Efficiency, describe_validation_error
from calc.spec.results import MAX_RESULT_BYTES, SCENARIO_KEYS, ResultsError, parse_results
from calc.spec.untrusted import InputError, quote
from calc.timing.engine_profile import HARMONY_MODEL_TYPES, half_rate_gemms

MAX_FILES = 100
# The efficiency inputs calibrate fits, with the search bounds (inside Efficiency's own).
FITTED = {
    "hbm_bw_fraction": (0.2, 1.0),
    "prefill_flops_fraction": (0.1, 1.0),
    "decode_flops_fraction": (0.1, 1.0),
    "hopper_flops_scale": (0.2, 1.0),
    "step_overhead_s": (1e-5, 0.05),
    "sequence_overhead_s": (1e-7, 1e-3),
    "request_overhead_s": (1e-4, 1.0),
    "api_server_request_s": (1e-4, 0.2),
}


def fitted_inputs(rows: list[dict]) -> dict[str, tuple[float, float]]:
    """:data:`FITTED` for these rows: a Harmony-format model's API server takes
    ``api_server_harmony_request_s`` (:func:`calc.timing.engine_profile.api_server_request_time_s`), so
    rows of such models fit that one, the others ``api_server_request_s`` (both where the rows mix); rows on
    a GeForce card (RTX 3090/4090/5090) fit ``geforce_flops_fraction``, which replaces the prefill and decode
    fractions there (:func:`calc.timing.engine_profile.gemm_flops_fractions`), and only rows elsewhere or
    with 8-bit float weights fit those.

    >>> sorted(k for k in fitted_inputs([{"options": {"model": "openai/gpt-oss-20b"}}]) if k.startswith("api"))
    ['api_server_harmony_request_s']
    >>> sorted(k for k in fitted_inputs([{"options": {"model": "Qwen/Qwen3-8B"}}]) if k.startswith("api"))
    ['api_server_request_s']
    >>> sorted(k for k in fitted_inputs([{"options": {"model": "Qwen/Qwen3-8B", "gpu": "rtx-4090"}}]) if "flops" in k)
    ['geforce_flops_fraction', 'hopper_flops_scale']
    >>> sorted(k for k in fitted_inputs([{"options": {"gpu": "rtx-4090"}}, {"options": {"gpu": "a100-80gb"}}]) if "flops" in k)
    ['decode_flops_fraction', 'geforce_flops_fraction', 'hopper_flops_scale', 'prefill_flops_fraction']
    """
    harmony = {_model_type(r) in HARMONY_MODEL_TYPES for r in rows}
    out = dict(FITTED)
    if True in harmony:
        out["api_server_harmony_request_s"] = FITTED["api_server_request_s"]
    if harmony == {True}:  # no row of a chat-template model: its input would not move the fit
        del out["api_server_request_s"]
    geforce = {_geforce_16bit(r) for r in rows}
    if True in geforce:
        out["geforce_flops_fraction"] = FITTED["prefill_flops_fraction"]
    if geforce == {True}:  # the fractions it replaces would not move the fit
        del out["prefill_flops_fraction"], out["decode_flops_fraction"]
    return out


def _geforce_16bit(row: dict) -> bool:
    """Whether a row ran 16-bit GEMMs on a GeForce part (its FP16-accumulate rate above the catalog's peak)."""
    try:
        gpu = get_gpu(str(row["options"]["gpu"]))
    except (CatalogError, KeyError, TypeError):
        return False
    fp8 = str((row.get("options") or {}).get("quantization", "auto")) == "fp8"
    return half_rate_gemms(gpu, "fp8" if fp8 else "bf16")


def _model_type(row: dict) -> str | None:
    try:
        return get_model(str(row["options"]["model"])).model_type
    except (CatalogError, KeyError, TypeError):
        return None


# Multiplicative steps of the search, coarse to fine (a log grid: 2x, then √2, ...).
STEPS = (2.0, 2.0 ** 0.5, 2.0 ** 0.25, 2.0 ** 0.125)
MAX_EVALUATIONS = 150


def _add_scenario_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="result files: vllm bench serve --save-result JSON, its printed summary, or "
                        "vllm_benchmarks.jsonl rows")
    _add_engine_args(p, batch=True)
    add_efficiency_arg(p)
    p.set_defaults(**{k: None for k in SCENARIO_KEYS if k not in ("model", "gpu", "gpu_spec")})


def add_validate_parsers(sub) -> None:
    v = sub.add_parser("validate", help="score the calculator against your benchmark result files")
    _add_scenario_args(v)
    c = sub.add_parser("calibrate", help="fit the efficiency inputs to your benchmark result files (JSON out)")
    _add_scenario_args(c)
    c.add_argument("--max-evaluations", type=_positive_int, default=MAX_EVALUATIONS,
                   help=f"bound on the search's evaluations (each asks every row; default {MAX_EVALUATIONS})")


def _scenario(args: argparse.Namespace) -> dict[str, Any]:
    from calc.cli.args import _dtype  # noqa: PLC0415

    given = {k: getattr(args, k, None) for k in SCENARIO_KEYS}
    if given.get("dtype") is not None:
        given["dtype"] = _dtype(given["dtype"])
    if given.get("disable_custom_all_reduce") is False:
        given["disable_custom_all_reduce"] = None
    return {k: v for k, v in given.items() if v is not None}


def read_rows(paths: list[str], scenario: dict[str, Any]) -> tuple[list[dict], list[str]]:
    """The rows of every file, and one message per file that could not be read."""
    if len(paths) > MAX_FILES:
        raise UsageError(f"at most {MAX_FILES} files (got {len(paths):,})")
    rows, problems = [], []
    for path in paths:
        try:
            if os.path.getsize(path) > MAX_RESULT_BYTES:
                raise ResultsError(f"{path}: larger than {MAX_RESULT_BYTES // 2**20} MiB")
            with open(path, "rb") as fh:
                data = fh.read(MAX_RESULT_BYTES + 1)
            file_rows = parse_results(data, name=os.path.basename(path), scenario=scenario)
        except OSError as exc:
            problems.append(f"{path}: cannot read ({exc.strerror})")
            continue
        except (ResultsError, InputError) as exc:
            problems.append(str(exc))
            continue
        for i, row in enumerate(file_rows):
            row = dict(row)
            row["options"] = {**scenario, **row["options"]}
            rid = row.get("id")  # untrusted: a short printable string, else the file and row number
            row["id"] = rid if isinstance(rid, str) and 0 < len(rid) <= 80 and rid.isprintable() \
                else f"{os.path.basename(path)}#{i + 1}"
            rows.append(row)
    return rows, problems


def _attempt(row: dict, ask: Callable[[dict], Any]) -> tuple[Any, str | None]:
    """``ask(row)``, or None and a message naming the row when the calculator cannot answer it."""
    try:
        return ask(row), None
    except ValidationError as exc:
        return None, f"{row['id']}: {describe_validation_error(exc)}"
    except KeyError as exc:
        return None, f"{row['id']}: the row has no {quote(str(exc.args[0]) if exc.args else '')}"
    except (UsageError, CatalogError, ConfigError, InputError, ValueError, TypeError) as exc:
        return None, f"{row['id']}: {exc}"


def _usable(rows: list[dict], efficiency: Efficiency) -> tuple[list[dict], list[str]]:
    """The rows the calculator can answer (one message per row it cannot)."""
    ok, problems = [], []
    for row in rows:
        answer, problem = _attempt(row, lambda r: ask_row(r, efficiency))
        ok += [row] if problem is None else []
        problems += [] if problem is None else [problem]
    return ok, problems


def _print_problems(problems: list[str]) -> None:
    for p in problems:
        print(f"error: {p}", file=sys.stderr)


def run_validate(args: argparse.Namespace) -> int:
    efficiency = load_efficiency(args.efficiency)
    rows, problems = read_rows(args.files, _scenario(args))
    scored = []
    for row in rows:
        answer, problem = _attempt(row, lambda r: score_rows([r], efficiency))
        scored += answer or []
        problems += [] if problem is None else [problem]
    if args.format == "json":
        print(json.dumps({"rows": [s.record() for s in scored], "summary": summary(scored) if scored else {},
                          "errors": problems}))
    elif scored:
        print(f"{'row':<30} {'metric':<20} {'measured':>11} {'predicted':>11} {'error':>8} "
              f"{'band low':>11} {'band high':>11}  inside")
        for s in scored:
            print(f"{s.row_id[:30]:<30} {s.metric:<20} {s.measured:>11.4g} {s.predicted:>11.4g} {s.error:>+8.1%} "
                  f"{s.low:>11.4g} {s.high:>11.4g}  {'yes' if s.inside else 'NO'}")
        for group, st in summary(scored).items():
            if group != "inside_band_fraction":
                print(f"median |error| {group:<11} {st['median_abs_error']:6.1%}   p90 {st['p90_abs_error']:6.1%}"
                      f"  (n={st['n']})")
        print(f"inside the band: {summary(scored)['inside_band_fraction']:.1%}")
    _print_problems(problems)
    if not scored:
        print("error: nothing to score" + ("" if problems else " (no scored metric in the files)"), file=sys.stderr)
    return 2 if problems or not scored else 0


def coordinate_search(objective: Callable[[dict[str, float]], float], start: dict[str, float],
                      bounds: dict[str, tuple[float, float]], *, steps: tuple[float, ...] = STEPS,
                      max_evaluations: int = MAX_EVALUATIONS) -> tuple[dict[str, float], float, int]:
    """Minimize ``objective`` over the parameters in ``bounds`` from ``start``: for each step
    factor f (coarse to fine), try each parameter × f and ÷ f (clipped to its bounds), keep any
    improvement, repeat until none; at most ``max_evaluations`` calls. Derivative-free, bounded.

    >>> x, f, n = coordinate_search(lambda p: (math.log(p["a"]) - math.log(0.3)) ** 2, {"a": 0.6}, {"a": (0.1, 1.0)})
    >>> round(x["a"], 3), n <= MAX_EVALUATIONS
    (0.3, True)
    """
    x = {k: min(max(start[k], lo), hi) for k, (lo, hi) in bounds.items()}
    best, evaluations = objective(x), 1
    for factor in steps:
        improved = True
        while improved and evaluations < max_evaluations:
            improved = False
            for name, (lo, hi) in bounds.items():
                for candidate in (x[name] * factor, x[name] / factor):
                    candidate = min(max(candidate, lo), hi)
                    if candidate == x[name] or evaluations >= max_evaluations:
                        continue
                    trial = {**x, name: candidate}
                    value, evaluations = objective(trial), evaluations + 1
                    if value < best - 1e-12:
                        best, x, improved = value, trial, True
                        break
    return x, best, evaluations


def mean_log_error(rows: list[dict], efficiency: Efficiency) -> float:
    """Mean |ln(predicted / measured)| over every scored metric of the rows (calibrate's objective)."""
    errs = []
    for row in map(read_as_run, rows):
        predicted = ask_row(row, efficiency)
        errs += [abs(math.log(float(predicted[k]) / float(m["value"])))
                 for k, m in row["measured"].items() if m.get("scored") and k in predicted and predicted[k]]
    return sum(errs) / len(errs) if errs else math.inf


def calibrate(rows: list[dict], start: Efficiency = Efficiency(), *,
              max_evaluations: int = MAX_EVALUATIONS) -> tuple[Efficiency, int]:
    """The efficiency inputs (:data:`FITTED`) that minimize :func:`mean_log_error` on ``rows``."""
    base = start.model_dump()

    def objective(p: dict[str, float]) -> float:
        return mean_log_error(rows, Efficiency(**(base | p)))

    fit = fitted_inputs(rows)
    x, _, n = coordinate_search(objective, {k: base[k] for k in fit}, fit, max_evaluations=max_evaluations)
    return Efficiency(**(base | x)), n


def run_calibrate(args: argparse.Namespace) -> int:
    start = load_efficiency(args.efficiency)
    rows, problems = read_rows(args.files, _scenario(args))
    rows, bad_rows = _usable(rows, start)
    problems += bad_rows
    _print_problems(problems)
    if not rows:
        print("error: nothing to calibrate on", file=sys.stderr)
        return 2
    fitted, evaluations = calibrate(rows, start, max_evaluations=args.max_evaluations)
    before, after = summary(score_rows(rows, start)), summary(score_rows(rows, fitted))
    print(json.dumps({
        "efficiency": {k: getattr(fitted, k) for k in fitted_inputs(rows)},
        "rows": len(rows), "evaluations": evaluations,
        "median_abs_error_before": before["all"]["median_abs_error"],
        "median_abs_error_after": after["all"]["median_abs_error"],
        "before": before, "after": after,
        "note": "apply with --efficiency FILE (estimate, simulate, plan, validate); fitted on these rows only"}))
    return 2 if problems else 0
