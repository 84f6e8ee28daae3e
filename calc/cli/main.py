"""Command line: ``python -m calc {memory,estimate,plan,simulate,validate,calibrate,models,gpus}`` with vLLM's flag names.

Bad input exits with status 2 and one line on stderr naming the field; no traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from pydantic import ValidationError

# The shared argument helpers live in calc.cli.args (and the output in calc.cli.report), so the
# command modules import them without importing this module: no import cycle. Re-exported here.
from calc.cli.args import (UsageError, _add_engine_args, _concurrency, _dtype, _number, _Parser, add_vllm_command_arg, expand_vllm_command,  # noqa: F401
                           _positive_int, check_layout, check_tensor_parallel, layout_options, layout_record,
                           resolve_gpu, spelling_notes)
from calc.cli.report import _fmt, _plain, does_not_fit_record, print_table  # noqa: F401
from calc.sizing.fit import what_would_fit
from calc.sizing.scenario import check_gpu_formats, effective_quantization, memory_for, resolve_serving
from calc.spec.catalog import CatalogError, get_model, list_gpus, list_models
from calc.spec.hf_config import ConfigError
from calc.spec.inputs import Efficiency, ServingConfig, describe_validation_error
from calc.spec.params import param_counts
from calc.spec.untrusted import InputError, quote


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m calc", description="LLM inference memory and performance calculator")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    m = sub.add_parser("memory", help="per-GPU memory stack, KV pool and maximum concurrency")
    _add_engine_args(m)
    add_vllm_command_arg(m)
    m.add_argument("--concurrency", type=_positive_int, default=1, help="requests held at once")
    m.add_argument("--context-len", type=_positive_int, default=None, help="tokens per request (default max_model_len)")
    for name in ("models", "gpus"):
        s = sub.add_parser(name, help=f"list the {name} catalog")
        s.add_argument("--format", choices=("table", "json"), default="table")
    from calc.cli.estimate import add_estimate_parser  # noqa: PLC0415 (keeps the module small)

    add_estimate_parser(sub)
    from calc.cli.plan import add_plan_parser  # noqa: PLC0415

    add_plan_parser(sub)
    from calc.cli.simulate import add_simulate_parser  # noqa: PLC0415

    add_simulate_parser(sub)
    from calc.cli.validate import add_validate_parsers  # noqa: PLC0415

    add_validate_parsers(sub)
    return parser


def serving_from_args(args: argparse.Namespace, **load: Any) -> ServingConfig:
    return ServingConfig(
        tensor_parallel_size=args.tensor_parallel_size, dtype=_dtype(args.dtype), quantization=args.quantization,
        kv_cache_dtype=args.kv_cache_dtype, gpu_memory_utilization=args.gpu_memory_utilization,
        block_size=args.block_size, max_model_len=args.max_model_len, max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens, disable_custom_all_reduce=args.disable_custom_all_reduce,
        vllm_version=args.vllm_version, **layout_options(args), **load)


def memory_report(args: argparse.Namespace) -> dict[str, Any]:
    arch, gpu = get_model(args.model), resolve_gpu(args.gpu, args.gpu_spec)
    if args.max_model_len is not None and args.max_model_len < 2:
        raise UsageError(f"--max-model-len must be at least 2 (one prompt and one output token) (got {args.max_model_len})")
    # The memory command's load is --concurrency requests of --context-len tokens; the prompt and
    # output lengths of ServingConfig do not enter, so keep them minimal (they must fit max_model_len).
    serving = serving_from_args(args, concurrency=args.concurrency, input_len=1, output_len=1)
    check_tensor_parallel(arch, serving.tensor_parallel_size)
    check_gpu_formats(serving, gpu, quantization=effective_quantization(arch, serving.quantization))
    nodes = check_layout(arch, gpu, serving)
    rs = resolve_serving(arch, gpu, serving)
    if args.context_len is not None and not 1 <= args.context_len <= rs.max_model_len:
        raise UsageError(f"--context-len must be between 1 and max_model_len ({rs.max_model_len:,}) "
                         f"(got {args.context_len})")
    r = memory_for(arch, gpu, serving, Efficiency(), concurrency=args.concurrency, context_tokens=args.context_len)
    p = param_counts(arch)
    out = {
        "model": arch.id, "gpu": gpu.id, "tensor_parallel_size": serving.tensor_parallel_size,
        "attention": arch.attention_kind, "params_total": p.total, "params_active": p.active,
        "max_model_len": rs.max_model_len, "max_num_seqs": rs.max_num_seqs,
        "max_num_batched_tokens": rs.max_num_batched_tokens, "block_size": serving.block_size,
        "gpu_memory_utilization": serving.gpu_memory_utilization,
        "usable_memory_bytes": r.usable_memory_bytes, "budget_bytes": r.budget_bytes,
        "weights_bytes": r.weights_bytes, "weights_total_bytes": r.weights_bytes * serving.tensor_parallel_size * serving.pipeline_parallel_size,
        "activation_bytes": r.activation_bytes, "overhead_bytes": r.overhead_bytes,
        "kv_pool_bytes": r.kv_pool_bytes, "kv_bytes_per_token": r.kv_bytes_per_token,
        "context_len": r.context_tokens, "kv_bytes_per_request": r.kv_bytes_per_request,
        "num_blocks": r.num_blocks, "kv_pool_tokens": r.kv_pool_tokens,
        "max_concurrency": r.max_concurrency, "max_concurrency_at_context_len": r.max_concurrency_at_context,
        "concurrency": r.concurrency, "kv_in_use_bytes": r.kv_in_use_bytes,
        "paged_waste_bytes_per_request": r.paged_waste_bytes,
        "contiguous_waste_bytes_per_request": r.contiguous_waste_bytes,
        "contiguous_max_sequences": r.contiguous_max_sequences,
        "fits": r.fits, "concurrency_fits": r.concurrency_fits,
        # PP / DP / EP: the figures above are per GPU (the heaviest stage) and per DP rank
        **layout_record(serving, nodes),
        "max_concurrency_total": r.max_concurrency * serving.data_parallel_size,
    }
    record = {k: _plain(v) for k, v in out.items()}
    if not record["fits"]:
        record["does_not_fit"] = does_not_fit_record(what_would_fit(
            arch, gpu, serving, Efficiency(), concurrency=args.concurrency, context_tokens=args.context_len))
    return record


def catalog_report(kind: str) -> list[dict[str, Any]]:
    if kind == "models":
        rows = []
        for a in list_models():
            p = param_counts(a)
            rows.append({"id": a.id, "name": a.name, "attention": a.attention_kind, "params_total": p.total,
                         "params_active": p.active, "num_hidden_layers": a.num_hidden_layers,
                         "num_key_value_heads": a.num_key_value_heads, "max_position_embeddings": a.max_position_embeddings,
                         "moe": a.moe is not None, "sliding_window": a.sliding_window, "source": a.source})
        return rows
    return [g.model_dump() for g in list_gpus()]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        argv, notes = expand_vllm_command(list(sys.argv[1:] if argv is None else argv), parser)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        args = parser.parse_args(argv)
        for note in spelling_notes({k: getattr(args, k, None) for k in ("quantization", "kv_cache_dtype")}):
            print(f"note: {note}", file=sys.stderr)
        if args.command in ("models", "gpus"):
            rows = catalog_report(args.command)
            if args.format == "json":
                print(json.dumps(rows, indent=1))
            else:
                cols = (["id", "attention", "params_total", "params_active", "max_position_embeddings"]
                        if args.command == "models" else
                        ["id", "usable_memory_bytes", "hbm_bw_bytes_per_s", "bf16_flops_per_s", "fp8_flops_per_s"])
                for r in rows:
                    print("  ".join(f"{_fmt(c, r[c])}" if c != "id" else f"{r[c]:<32}" for c in cols))
            return 0
        if args.command == "memory":
            report = memory_report(args)
        elif args.command == "plan":
            from calc.cli.plan import run_plan  # noqa: PLC0415

            return run_plan(args)
        elif args.command in ("validate", "calibrate"):
            from calc.cli.validate import run_calibrate, run_validate  # noqa: PLC0415

            return run_validate(args) if args.command == "validate" else run_calibrate(args)
        elif args.command == "simulate":
            from calc.cli.simulate import run_simulate  # noqa: PLC0415

            return run_simulate(args)
        else:
            from calc.cli.estimate import run_estimate  # noqa: PLC0415

            return run_estimate(args)
        if args.format == "json":
            print(json.dumps(report))
        else:
            print_table(report)
        return 0
    except ValidationError as exc:
        print(f"error: {describe_validation_error(exc)}", file=sys.stderr)
    except (UsageError, CatalogError, ConfigError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as Unix tools do
        sys.stdout = None  # nothing more to flush at exit
        return 0
    except Exception as exc:  # noqa: BLE001 - a bug: say so in one line, exit 3 (never a traceback)
        print(f"error: internal error ({type(exc).__name__}): {quote(str(exc))}; please report it", file=sys.stderr)
        return 3
    return 2
