"""``python -m calc plan``: the deployments that serve a request rate within an SLA, ranked
(:mod:`calc.plan.search`). JSON: a list of objects, best first; an empty list when nothing
qualifies (then stderr says how many configurations were out, and why)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict
from typing import Any

from calc.plan.percentiles import WORK_BUDGET, check_top
from calc.plan.search import PERCENTILES, REASONS, SORTS, PlanRequest, chosen_layouts, plan
from calc.spec.untrusted import InputError
from calc.cli.prefix import add_prefix_args, prefix_options
from calc.cli.args import UsageError, add_efficiency_arg, load_efficiency
from calc.cli.speculative import add_speculative_args, speculative_option
from calc.cli.plan_disaggregated import add_link_args, disaggregated_rows, print_disaggregated_table
from calc.traffic.workload import LENGTH_KINDS

# The contract's keys first, in its order; the rest follow.
CONTRACT_KEYS = ("gpu", "tensor_parallel_size", "replicas", "gpus_total", "quantization", "kv_cache_dtype",
                 "max_num_seqs", "ttft_s", "tpot_s", "output_tokens_per_s", "usd_per_hour",
                 "usd_per_million_output_tokens", "meets_slo", "vllm_command")
MAX_GPU_LIST = 64


def _number(flag: str, lo: float, hi: float, *, integer: bool = False, lo_open: bool = True):
    """argparse type: a finite number in (lo, hi] (or [lo, hi]); the message names the flag."""
    kind = "a whole number" if integer else "a number"
    low = f"> {lo:g}" if lo_open else f">= {lo:g}"

    def parse(text: str):
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi and (not integer or v == int(v))
        if not ok:
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise argparse.ArgumentTypeError(f"got {shown!r}, allowed {kind} {low} and <= {hi:g}")
        return int(v) if integer else v
    return parse


def _gpu_list(text: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items or len(items) > MAX_GPU_LIST:
        raise argparse.ArgumentTypeError(f"give 1 to {MAX_GPU_LIST} GPU ids separated by commas")
    return items


def _price(text: str) -> tuple[str, float]:
    gpu, sep, value = text.partition("=")
    v = _number("--price", 0.0, 1e6)(value) if sep else None
    if not sep or not gpu.strip():
        raise argparse.ArgumentTypeError("expected GPU=USD_PER_GPU_HOUR, e.g. h100-sxm=2.49")
    return gpu.strip(), v


def add_plan_parser(sub) -> None:
    p = sub.add_parser("plan", help="which GPU, TP, precision and replicas serve a rate within an SLA, ranked")
    p.add_argument("--model", required=True, help="catalog id (e.g. meta-llama/Llama-3.1-8B) or path to config.json")
    p.add_argument("--rate", required=True, type=_number("--rate", 0.0, 1e6), help="requests per second to serve")
    p.add_argument("--input-len", required=True, type=_number("--input-len", 1, 10_000_000, integer=True, lo_open=False))
    p.add_argument("--output-len", required=True, type=_number("--output-len", 1, 1_000_000, integer=True, lo_open=False))
    p.add_argument("--ttft-slo-ms", required=True, type=_number("--ttft-slo-ms", 0.0, 3_600_000))
    p.add_argument("--tpot-slo-ms", required=True, type=_number("--tpot-slo-ms", 0.0, 60_000))
    p.add_argument("--percentile", choices=PERCENTILES, default="mean",
                   help="statistic the SLA is judged on (the closed-loop model gives means; see slo_statistic)")
    p.add_argument("--gpus", type=_gpu_list, default=None, help="comma-separated GPU ids (default: every catalog GPU)")
    p.add_argument("--max-gpus", type=_number("--max-gpus", 1, 1_000_000, integer=True, lo_open=False), default=None)
    p.add_argument("--budget-usd-per-hour", type=_number("--budget-usd-per-hour", 0.0, 1e9), default=None)
    p.add_argument("--price", type=_price, action="append", default=[], metavar="GPU=USD",
                   help="your own on-demand price per GPU-hour (repeatable), e.g. --price h100-sxm=2.49")
    p.add_argument("--max-model-len", type=_number("--max-model-len", 2, 100_000_000, integer=True, lo_open=False),
                   default=None, help="default: input + output length")
    p.add_argument("--enable-chunked-prefill", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--sort", choices=SORTS, default="cost")
    p.add_argument("--lengths", choices=LENGTH_KINDS, default="fixed",
                   help="how request lengths vary around --input-len/--output-len: the slot queue's service-time "
                        "C² and the --percentile check's requests (as the load test draws them)")
    p.add_argument("--length-spread", type=_number("--length-spread", 0.0, 10.0, lo_open=False), default=None,
                   help="lognormal: coefficient of variation; uniform: ± this fraction of the mean (default 0.5; "
                        "with the default --lengths fixed it has no effect, and a note says so)")
    p.add_argument("--top", type=_number("--top", 1, 1000, integer=True, lo_open=False), default=10)
    p.add_argument("--one-per-gpu", action=argparse.BooleanOptionalAction, default=True,
                   help="the table opens with one row per GPU type (its best-ranked option), then the other options "
                        "in rank order; --no-one-per-gpu: every option in rank order")
    p.add_argument("--work-budget", type=_number("--work-budget", 1, 1e12, integer=True, lo_open=False), default=None,
                   help=f"--percentile: simulator work units for the check (default {WORK_BUDGET:,}, ~8 s of one "
                        "core; a unit is a loop pass or 64 engine steps)")
    add_speculative_args(p)
    add_prefix_args(p)
    # Fix part of the multi-GPU layout (vLLM's flags); default: the planner searches TP, TP × PP and DP + EP
    p.add_argument("--pipeline-parallel-size", "-pp", type=_number("--pipeline-parallel-size", 1, 1024, integer=True,
                                                                  lo_open=False), default=None)
    p.add_argument("--data-parallel-size", "-dp", type=_number("--data-parallel-size", 1, 1024, integer=True,
                                                              lo_open=False), default=None)
    p.add_argument("--enable-expert-parallel", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--nodes", type=_number("--nodes", 1, 1024, integer=True, lo_open=False), default=None,
                   help="servers one replica spans (default: any)")
    add_efficiency_arg(p)
    p.add_argument("--disaggregated", action="store_true",
                   help="add prefill/decode-disaggregated (xPyD) options, marked, and say whether they pay "
                        "(link: --kv-link / --kv-transfer-gb-per-s)")
    add_link_args(p)
    p.add_argument("--format", choices=("table", "json"), default="table")


def _record(d) -> dict[str, Any]:
    raw = asdict(d)
    out = {k: raw[k] for k in CONTRACT_KEYS}
    out.update({k: v for k, v in raw.items() if k not in out})
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in out.items()}


def run_plan(args: argparse.Namespace) -> int:
    from calc.spec.catalog import get_gpu, get_model, list_gpus  # noqa: PLC0415

    arch = get_model(args.model)
    gpus = [get_gpu(g) for g in args.gpus] if args.gpus else list_gpus()
    gpus = list({g.id: g for g in gpus}.values())
    if len(args.price) > MAX_GPU_LIST:  # one catalog look-up each: bounded like --gpus
        raise UsageError(f"--price: at most {MAX_GPU_LIST} (got {len(args.price):,})")
    prices = {}
    for gid, usd in args.price:
        prices[get_gpu(gid).id] = usd
    req = PlanRequest(rate_rps=args.rate, input_len=args.input_len, output_len=args.output_len,
                      ttft_slo_s=args.ttft_slo_ms / 1e3, tpot_slo_s=args.tpot_slo_ms / 1e3, percentile=args.percentile,
                      max_gpus=args.max_gpus, budget_usd_per_hour=args.budget_usd_per_hour, sort=args.sort,
                      top=args.top, one_per_gpu=args.one_per_gpu, max_model_len=args.max_model_len,
                      enable_chunked_prefill=args.enable_chunked_prefill,
                      lengths=args.lengths, length_spread=0.0 if args.lengths == "fixed" else (
                          0.5 if args.length_spread is None else args.length_spread),
                      **prefix_options(args))
    window = req.window_tokens(arch.max_position_embeddings)  # past the context only if asked, or the mean request is
    if window > arch.max_position_embeddings:
        raise UsageError(f"--input-len + --output-len ({window:,}) must be <= max_position_embeddings "
                         f"({arch.max_position_embeddings:,}) of {arch.name}")
    efficiency = load_efficiency(args.efficiency)
    spec = speculative_option(args.speculative_config, args.acceptance_rate)
    grid_kw: dict[str, Any] = {}
    if any(getattr(args, k) is not None for k in ("pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel")):
        try:
            grid_kw["layouts"] = chosen_layouts(arch, pipeline_parallel_size=args.pipeline_parallel_size,
                                                data_parallel_size=args.data_parallel_size,
                                                enable_expert_parallel=args.enable_expert_parallel)
        except InputError as exc:
            raise UsageError(str(exc)) from None
    if args.nodes is not None:
        grid_kw["nodes"] = args.nodes
    try:
        result = plan(arch, gpus, req, efficiency, prices=prices, speculative=spec, **grid_kw)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    result = check_top(result, arch, gpus, efficiency, speculative=spec,
                       work_budget=None if args.work_budget is None else int(args.work_budget))
    rows = [_record(d) for d in result.ranked]
    if args.disaggregated:  # the xPyD options after the colocated ones, marked (calc.plan.disaggregation)
        rows, verdict_line = disaggregated_rows(args, arch, gpus, req, efficiency, prices, result.ranked, rows)
        print(f"note: {verdict_line}", file=sys.stderr)
    if result.percentile_note:
        print(f"note: {result.percentile_note}", file=sys.stderr)
    if args.lengths == "fixed" and args.length_spread:  # given, and not used: said, not dropped in silence
        print(f"note: --length-spread {args.length_spread:g} has no effect with --lengths fixed (every request "
              "--input-len + --output-len); add --lengths lognormal or uniform", file=sys.stderr)
    if not rows:
        out = ", ".join(f"{r}: {n}" for r, n in result.reason_counts.items() if n and r != "ok")
        print(f"note: no deployment meets the SLA and limits ({result.grid.size:,} configurations; {out})",
              file=sys.stderr)
    if args.format == "json":
        print(json.dumps(rows))
        return 0
    if args.disaggregated:
        print_disaggregated_table(result, req, rows)
        return 0
    cols = ("gpu", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel",
            "quantization", "kv_cache_dtype", "max_num_seqs", "replicas", "gpus_total",
            "ttft_s", "tpot_s", "usd_per_hour", "usd_per_million_input_tokens", "usd_per_million_output_tokens")
    heads = ("gpu", "tp", "pp", "dp", "ep", "weights", "kv", "seqs", "replicas", "gpus", "ttft_ms", "tpot_ms", "usd/h",
             "$/M in", "$/M out")
    print(f"{result.model_id}: {req.rate_rps:g} req/s, {req.input_len} in / {req.output_len} out tokens, "
          f"SLA TTFT <= {req.ttft_slo_s * 1e3:g} ms, TPOT <= {req.tpot_slo_s * 1e3:g} ms ({result.slo_statistic}); "
          f"{result.grid.size:,} configurations searched")

    def cell(k: str, v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, bool):
            return "yes" if v else "-"
        if k in ("ttft_s", "tpot_s"):
            return f"{v * 1e3:.1f}"
        if isinstance(v, float):
            return f"{v:.3f}" if k.startswith("usd_per_m") else f"{v:.2f}"
        return str(v)
    table = [heads] + [tuple(cell(k, r[k]) for k in cols) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    counts = ", ".join(f"{r}: {n}" for r, n in result.reason_counts.items() if n)
    print(f"configurations by outcome: {counts}")
    return 0


__all__ = ["REASONS", "add_plan_parser", "run_plan"]
