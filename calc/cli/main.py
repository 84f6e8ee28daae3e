"""Command line: ``python -m calc {memory,estimate,plan,simulate,models,gpus}`` with vLLM's flag names.

Bad input exits with status 2 and one line on stderr naming the field; no traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any, Sequence

import numpy as np
from pydantic import ValidationError

from calc.spec.catalog import CUSTOM_GPU_ID, CatalogError, custom_gpu, get_gpu, get_model, list_gpus, list_models
from calc.spec.hf_config import ConfigError
from calc.spec.inputs import Efficiency, ModelArch, ServingConfig, describe_validation_error
from calc.spec.params import param_counts
from calc.sizing.memory import SAMPLER_VERSIONS
from calc.spec.parallelism import check_tensor_parallel as _check_tp
from calc.spec.precision import (ALIAS_REASONS, DTYPES, KV_CACHE_DTYPE_ALIASES, KV_CACHE_DTYPES, QUANTIZATION_ALIASES,
                                 QUANTIZATIONS)
from calc.spec.untrusted import MAX_SHOWN_CHARS, InputError, quote
from calc.sizing.fit import DoesNotFit, what_would_fit
from calc.sizing.scenario import memory_for, resolve_serving
from calc.spec.units import GB, GiB, KiB, MiB


class UsageError(Exception):
    """A command-line value that cannot be used."""


_QUOTED = re.compile(r"'([^'\n]{%d,})'" % (MAX_SHOWN_CHARS + 1))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        # argparse quotes the user's text whole ("invalid choice: '<5,000 characters>'"): cut it
        message = _QUOTED.sub(lambda m: quote(m.group(1)), message)
        raise UsageError(" ".join(message.split()) if "\n" in message else message)


def _positive_int(text: str) -> int:
    # Range checks are the input model's (it names the field); here only "is it a whole number",
    # bounded so a 5,000-digit argument is a usage error, not Python's int-digit-limit message.
    stripped = text.strip()
    if len(stripped.lstrip("+-")) > 18 or not stripped.lstrip("+-").isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number, got {quote(text)}")
    return int(stripped)


def _number(text: str) -> float:
    import math  # noqa: PLC0415

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {quote(text)}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {quote(text)}")
    return value


def _concurrency(text: str) -> int | str:
    return "max" if text.strip().lower() == "max" else _positive_int(text)


def _add_engine_args(p: argparse.ArgumentParser, *, batch: bool = False) -> None:
    """The engine flags every command takes; ``batch``: --model may be left out (--batch FILE gives it)."""
    p.add_argument("--model", required=not batch,
                   help="catalog id (e.g. meta-llama/Llama-3.1-8B) or path to config.json")
    p.add_argument("--gpu", help="GPU id, see `python -m calc gpus` (or 'custom' with --gpu-spec)")
    p.add_argument("--gpu-spec", metavar="JSON", default=None,
                   help="a user-defined GPU: JSON object with memory_gib, hbm_tb_per_s, bf16_tflops, link_gb_per_s "
                        "(one direction, per GPU) and optionally fp8_tflops, int8_tops, price_usd_per_hour, name")
    p.add_argument("--tensor-parallel-size", "-tp", type=_positive_int, default=1)
    p.add_argument("--dtype", choices=DTYPES + ("fp16", "bf16", "fp32", "half"), default="auto")
    # Old spellings (nf4; fp16/bf16/int8 KV cache) are accepted and read as vLLM's, with a note.
    p.add_argument("--quantization", "-q", choices=QUANTIZATIONS + tuple(QUANTIZATION_ALIASES), default="auto",
                   help="weight format; auto (default) = the checkpoint's own (config.json quantization_config), "
                        "as vLLM does; none = unquantized")
    p.add_argument("--kv-cache-dtype", choices=KV_CACHE_DTYPES + tuple(KV_CACHE_DTYPE_ALIASES), default="auto")
    p.add_argument("--gpu-memory-utilization", type=_number, default=0.9)
    p.add_argument("--block-size", type=_positive_int, default=16)
    p.add_argument("--max-model-len", type=_positive_int, default=None)
    p.add_argument("--max-num-seqs", type=_positive_int, default=None)
    p.add_argument("--max-num-batched-tokens", type=_positive_int, default=None)
    p.add_argument("--vllm-version", choices=SAMPLER_VERSIONS, default="0.19",
                   help="the vLLM line whose start-up profile run the memory model follows (0.19 also covers 0.18; "
                        "0.15: the sort-based sampler, a larger activation peak)")
    p.add_argument("--disable-custom-all-reduce", action="store_true",
                   help="vLLM's flag: every TP all-reduce through NCCL (no custom P2P kernel)")
    p.add_argument("--format", choices=("table", "json"), default="table")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m calc", description="LLM inference memory and performance calculator")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    m = sub.add_parser("memory", help="per-GPU memory stack, KV pool and maximum concurrency")
    _add_engine_args(m)
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
    return parser


def resolve_gpu(gpu: str | None, gpu_spec: Any) -> Any:
    """The GPU of ``--gpu`` / ``--gpu-spec`` (a JSON object or its text): catalog or user-defined.

    >>> resolve_gpu(None, {"memory_gib": 24, "hbm_tb_per_s": 1, "bf16_tflops": 165, "link_gb_per_s": 32}).id
    'custom'
    """
    if gpu_spec is not None:
        if gpu is not None and gpu.strip().lower() != CUSTOM_GPU_ID:
            raise UsageError(f"--gpu {gpu!r} and --gpu-spec both given: use one (or --gpu custom --gpu-spec ...)")
        return custom_gpu(gpu_spec)
    if gpu is None or gpu.strip().lower() == CUSTOM_GPU_ID:
        raise UsageError("--gpu is required (a catalog id), or --gpu-spec JSON for a user-defined GPU")
    return get_gpu(gpu)


def _dtype(value: str) -> str:
    return {"fp16": "float16", "half": "float16", "bf16": "bfloat16", "fp32": "float32"}.get(value, value)


def serving_from_args(args: argparse.Namespace, **load: Any) -> ServingConfig:
    return ServingConfig(
        tensor_parallel_size=args.tensor_parallel_size, dtype=_dtype(args.dtype), quantization=args.quantization,
        kv_cache_dtype=args.kv_cache_dtype, gpu_memory_utilization=args.gpu_memory_utilization,
        block_size=args.block_size, max_model_len=args.max_model_len, max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens, disable_custom_all_reduce=args.disable_custom_all_reduce,
        vllm_version=args.vllm_version, **load)


def _plain(x: Any) -> Any:
    a = np.asarray(x)
    return a.item() if a.ndim == 0 else a.tolist()


def check_tensor_parallel(arch: ModelArch, tensor_parallel_size: int) -> None:
    """vLLM's TP rule (:mod:`calc.spec.parallelism`, the same one the dashboard applies), as a
    one-line :class:`UsageError`."""
    try:
        _check_tp(arch, tensor_parallel_size, field="tensor_parallel_size", candidates=range(1, 1025))
    except InputError as exc:
        raise UsageError(str(exc)) from None


def memory_report(args: argparse.Namespace) -> dict[str, Any]:
    arch, gpu = get_model(args.model), resolve_gpu(args.gpu, args.gpu_spec)
    if args.max_model_len is not None and args.max_model_len < 2:
        raise UsageError(f"--max-model-len must be at least 2 (one prompt and one output token) (got {args.max_model_len})")
    # The memory command's load is --concurrency requests of --context-len tokens; the prompt and
    # output lengths of ServingConfig do not enter, so keep them minimal (they must fit max_model_len).
    serving = serving_from_args(args, concurrency=args.concurrency, input_len=1, output_len=1)
    check_tensor_parallel(arch, serving.tensor_parallel_size)
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
        "weights_bytes": r.weights_bytes, "weights_total_bytes": r.weights_bytes * serving.tensor_parallel_size,
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
    }
    record = {k: _plain(v) for k, v in out.items()}
    if not record["fits"]:
        record["does_not_fit"] = does_not_fit_record(what_would_fit(
            arch, gpu, serving, Efficiency(), concurrency=args.concurrency, context_tokens=args.context_len))
    return record


def does_not_fit_record(d: DoesNotFit | None) -> dict[str, Any] | None:
    """The JSON object beside ``fits: false``: vLLM's estimated maximum model length, the
    alternatives that fit (:func:`calc.sizing.fit.what_would_fit`) and a one-line message."""
    if d is None:
        return None
    return {
        "max_model_len_that_fits": d.max_model_len_that_fits,
        "kv_needed_bytes": d.kv_needed_bytes, "kv_available_bytes": d.kv_available_bytes,
        "alternatives": [{"change": a.change, "value": a.value, "vllm_flags": a.vllm_flags,
                          "max_model_len": a.max_model_len, "max_concurrency": round(a.max_concurrency, 4),
                          "requests_at_context": a.requests_at_context, "meets_goal": a.meets_goal}
                         for a in d.alternatives],
        "message": d.message,
    }


def _fmt(key: str, value: Any) -> str:
    if key.endswith("_bytes") or key.endswith("_bytes_per_request") or key == "kv_bytes_per_token":
        v = float(value)
        if abs(v) >= GiB:
            return f"{v / GiB:,.2f} GiB ({v / GB:,.2f} GB)"
        if abs(v) >= MiB:
            return f"{v / MiB:,.2f} MiB ({v:,.0f} B)"
        if abs(v) >= KiB:
            return f"{v / KiB:,.2f} KiB ({v:,.0f} B)"
        return f"{v:,.0f} B"
    if isinstance(value, float):
        return f"{value:,.4g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def print_table(d: dict[str, Any], out=None) -> None:
    out = sys.stdout if out is None else out  # looked up per call, so redirection (capsys) works
    advice = d.get("does_not_fit")
    d = {k: v for k, v in d.items() if k != "does_not_fit"}
    width = max(len(k) for k in d)
    for k, v in d.items():
        print(f"{k:<{width}}  {_fmt(k, v)}", file=out)
    if advice:  # after the table: vLLM's refusal in one line, then one alternative a line
        print(f"\ndoes not fit: {advice['message']}", file=out)
        for a in advice["alternatives"]:
            goal = "  meets the goal" if a["meets_goal"] else ""
            print(f"  {a['vllm_flags']:<42}  {a['max_concurrency']:,.1f} requests of {a['max_model_len']:,} tokens{goal}",
                  file=out)


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


def spelling_notes(options: dict[str, Any]) -> list[str]:
    """Notes for old option spellings that are read as vLLM's (``nf4`` -> ``bitsandbytes``).

    >>> spelling_notes({"quantization": "nf4", "kv_cache_dtype": "fp8"})
    ["quantization 'nf4' read as 'bitsandbytes': vLLM spells bitsandbytes NF4 `bitsandbytes`"]
    """
    aliases = {"quantization": QUANTIZATION_ALIASES, "kv_cache_dtype": KV_CACHE_DTYPE_ALIASES}
    return [f"{k} {v!r} read as {aliases[k][v]!r}: {ALIAS_REASONS[(k, v)]}"
            for k, v in options.items() if k in aliases and isinstance(v, str) and v in aliases[k]]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
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
