"""The command line's shared arguments: the engine flags every command takes, their value
types (one-line errors, user text cut short), the GPU of --gpu / --gpu-spec, vLLM's TP rule and
the notes for old spellings. The commands (:mod:`calc.cli.estimate`, :mod:`calc.cli.plan`,
:mod:`calc.cli.simulate`) and :mod:`calc.cli.main` import from here; nothing here imports them.
"""

from __future__ import annotations

import argparse
import math
import re
from typing import Any, Callable

from calc.sizing.memory import SAMPLER_VERSIONS
from calc.spec.catalog import CUSTOM_GPU_ID, custom_gpu, get_gpu
from calc.spec.inputs import Efficiency, ModelArch
from calc.spec.parallelism import check_tensor_parallel as _check_tp
from calc.spec.precision import (ALIAS_REASONS, DTYPES, KV_CACHE_DTYPE_ALIASES, KV_CACHE_DTYPES, QUANTIZATION_ALIASES,
                                 QUANTIZATIONS)
from calc.spec.untrusted import MAX_SHOWN_CHARS, InputError, load_json, quote


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


def option_number(options: dict, key: str, default: float | None, lo: float, hi: float, what: str = "", *,
                  above_lo: bool = False) -> float | None:
    """A number option of a batch line or flag dict: ``default`` when absent; else a finite number in
    [lo, hi] (``above_lo``: lo itself refused), or a UsageError naming the key and the range
    (user text quoted and cut short).

    >>> option_number({"rate": "2.5"}, "rate", None, 0.0, 10.0, "requests/s", above_lo=True)
    2.5
    >>> option_number({"rate": "0"}, "rate", None, 0.0, 10.0, "requests/s", above_lo=True)
    Traceback (most recent call last):
    calc.cli.args.UsageError: rate: got '0', allowed above 0 and at most 10 requests/s
    """
    v = options.get(key)
    if v is None:
        return default
    if isinstance(v, bool):
        raise UsageError(f"{key} must be a number, not true/false")
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        raise UsageError(f"{key}: expected a number, got {quote(v)}") from None
    if not (math.isfinite(f) and lo <= f <= hi and (f > lo or not above_lo)):
        span = f"above {lo:g} and at most {hi:g}" if above_lo else f"{lo:g} – {hi:g}"
        raise UsageError(f"{key}: got {quote(v)}, allowed {span} {what}".rstrip())
    return f


def _concurrency(text: str) -> int | str:
    return "max" if text.strip().lower() == "max" else _positive_int(text)


def _add_engine_args(p: argparse.ArgumentParser, *, batch: bool = False) -> None:
    """The engine flags every command takes; ``batch``: --model may be left out (--batch FILE gives it)."""
    p.add_argument("--model", required=not batch,
                   help="catalog id (e.g. meta-llama/Llama-3.1-8B) or path to config.json")
    p.add_argument("--gpu", help="GPU id, see `python -m calc gpus` (or 'custom' with --gpu-spec)")
    p.add_argument("--gpu-spec", metavar="JSON", default=None,
                   help="a user-defined GPU: JSON object with memory_gib, hbm_tb_per_s, bf16_tflops, link_gb_per_s "
                        "(one direction, per GPU) and optionally fp8_tflops, int8_tops, fp4_tflops, price_usd_per_hour, name")
    p.add_argument("--tensor-parallel-size", "-tp", type=_positive_int, default=1)
    # Multi-GPU layout, vLLM's flags (checked by calc.spec.parallelism.check_parallel_layout)
    p.add_argument("--pipeline-parallel-size", "-pp", type=_positive_int, default=None,
                   help="pipeline stages (layers split across them; default 1)")
    p.add_argument("--data-parallel-size", "-dp", type=_positive_int, default=None,
                   help="data-parallel engine replicas (with MoE: attention per rank, experts shared; default 1)")
    p.add_argument("--enable-expert-parallel", action="store_true", default=None,
                   help="shard the routed experts over TP x DP ranks (MoE models)")
    p.add_argument("--nodes", type=_positive_int, default=None,
                   help="servers the TP x PP x DP GPUs span (default: as few as hold them, calc/data/nodes.json)")
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


def check_tensor_parallel(arch: ModelArch, tensor_parallel_size: int) -> None:
    """vLLM's TP rule (:mod:`calc.spec.parallelism`, the same one the dashboard applies), as a
    one-line :class:`UsageError`."""
    try:
        _check_tp(arch, tensor_parallel_size, field="tensor_parallel_size", candidates=range(1, 1025))
    except InputError as exc:
        raise UsageError(str(exc)) from None


def spelling_notes(options: dict[str, Any]) -> list[str]:
    """Notes for old option spellings that are read as vLLM's (``nf4`` -> ``bitsandbytes``).

    >>> spelling_notes({"quantization": "nf4", "kv_cache_dtype": "fp8"})
    ["quantization 'nf4' read as 'bitsandbytes': vLLM spells bitsandbytes NF4 `bitsandbytes`"]
    """
    aliases = {"quantization": QUANTIZATION_ALIASES, "kv_cache_dtype": KV_CACHE_DTYPE_ALIASES}
    return [f"{k} {v!r} read as {aliases[k][v]!r}: {ALIAS_REASONS[(k, v)]}"
            for k, v in options.items() if k in aliases and isinstance(v, str) and v in aliases[k]]


def add_efficiency_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--efficiency", metavar="FILE", default=None,
                   help="efficiency inputs: a JSON object of their fields, or the output of `calibrate`")


def load_efficiency(path: str | None) -> Efficiency:
    """The efficiency inputs of ``--efficiency FILE``: a JSON object of Efficiency fields, or
    calibrate's output (its ``efficiency`` object). None: the defaults."""
    if path is None:
        return Efficiency()
    try:
        with open(path, "rb") as fh:
            data = fh.read(1_000_001)
    except OSError as exc:
        raise UsageError(f"cannot read --efficiency file {path!r}: {exc.strerror}") from None
    doc = load_json(data, what=f"--efficiency file {path!r}", max_bytes=1_000_000)
    if isinstance(doc, dict) and isinstance(doc.get("efficiency"), dict):
        doc = doc["efficiency"]
    if not isinstance(doc, dict):
        raise UsageError(f"--efficiency file {path!r}: expected a JSON object of efficiency inputs")
    return Efficiency(**doc)


LAYOUT_KEYS = ("pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel", "nodes")


def layout_options(args: argparse.Namespace) -> dict[str, Any]:
    """The layout flags actually given (None = the input model's default)."""
    return {k: getattr(args, k) for k in LAYOUT_KEYS if getattr(args, k, None) is not None}


def check_layout(arch: ModelArch, gpu: Any, serving: Any) -> int:
    """vLLM's rules for TP × PP × DP, EP and the nodes (:func:`calc.spec.parallelism.check_parallel_layout`)
    as a one-line :class:`UsageError`; returns the nodes used."""
    from calc.spec.nodes import node_for  # noqa: PLC0415
    from calc.spec.parallelism import check_parallel_layout  # noqa: PLC0415

    try:
        return check_parallel_layout(arch, serving, gpus_per_node=node_for(gpu).gpus_per_node, gpu_name=gpu.name)
    except InputError as exc:
        raise UsageError(str(exc)) from None


def layout_record(serving: Any, nodes: int) -> dict[str, Any]:
    """The layout fields every command reports."""
    tp, pp, dp = serving.tensor_parallel_size, serving.pipeline_parallel_size, serving.data_parallel_size
    return {"pipeline_parallel_size": pp, "data_parallel_size": dp,
            "enable_expert_parallel": bool(serving.enable_expert_parallel),
            "expert_parallel_size": tp * dp if serving.enable_expert_parallel else 1,
            "nodes": nodes, "gpus_per_replica": tp * pp * dp}


# --vllm-command: the flags of a pasted `vllm serve` line (calc.spec.vllm_command, the dashboard's paste box),
# as the command line's own flags. ParsedCommand option -> flag taking a value / an on-off flag.
VLLM_COMMAND_FLAG = "--vllm-command"
_VALUE_FLAGS = {"tensor_parallel_size": "--tensor-parallel-size", "dtype": "--dtype", "quantization": "--quantization",
                "kv_cache_dtype": "--kv-cache-dtype", "gpu_memory_utilization": "--gpu-memory-utilization",
                "block_size": "--block-size", "max_model_len": "--max-model-len", "max_num_seqs": "--max-num-seqs",
                "max_num_batched_tokens": "--max-num-batched-tokens",
                "pipeline_parallel_size": "--pipeline-parallel-size", "data_parallel_size": "--data-parallel-size"}
_SWITCHES = {"enable_chunked_prefill": "--enable-chunked-prefill", "enable_prefix_caching": "--enable-prefix-caching",
             "enable_expert_parallel": "--enable-expert-parallel"}


def add_vllm_command_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(VLLM_COMMAND_FLAG, metavar="TEXT", default=None,
                   help="a `vllm serve MODEL --flag ...` line (or docker run ... vllm/vllm-openai ...): its model and "
                        "engine flags, as the dashboard's paste box reads them; a flag also given here wins")


def vllm_command_flags(text: str, accepts: Callable[[str], bool]) -> tuple[list[str], list[str]]:
    """The command line's flags for a pasted ``vllm serve`` line, and notes (the flags it does not
    model, and those this subcommand does not take: ``accepts(flag)`` is False). Problems with the
    line's values raise :class:`UsageError`, each named by its flag.

    >>> flags, notes = vllm_command_flags("vllm serve Qwen/Qwen3-8B -tp 2 --max-model-len 32k "
    ...                                   "--no-enable-prefix-caching --enforce-eager", lambda f: "prefix" not in f)
    >>> flags
    ['--model', 'Qwen/Qwen3-8B', '--tensor-parallel-size', '2', '--max-model-len', '32000']
    >>> notes
    ['--vllm-command: not modelled, ignored: --enforce-eager', '--vllm-command: not taken by this command: --no-enable-prefix-caching']
    """
    from calc.spec.vllm_command import parse_serve_command  # noqa: PLC0415

    try:
        p = parse_serve_command(text)
    except ValueError as exc:
        raise UsageError(f"{VLLM_COMMAND_FLAG}: {exc}") from None
    if p.errors:
        raise UsageError(f"{VLLM_COMMAND_FLAG}: " + "; ".join(p.errors))
    flags: list[str] = ["--model", p.model] if p.model else []
    skipped: list[str] = []
    for name, value in p.options.items():
        if name == "enable_expert_parallel" and not value:  # off unless asked (the flag has no --no- form here)
            continue
        if name in _SWITCHES:
            flag = _SWITCHES[name] if value else _SWITCHES[name].replace("--", "--no-", 1)
            words = [flag]
        elif name == "speculative_config":
            flag = "--speculative-config"
            words = [flag, p.texts[name]]
        else:
            flag = _VALUE_FLAGS[name]
            words = [flag, f"{value:g}" if isinstance(value, float) else str(value)]
        if accepts(flag):
            flags += words
        else:
            skipped.append(flag)
    notes = [f"{VLLM_COMMAND_FLAG}: not modelled, ignored: {' '.join(p.ignored)}"] if p.ignored else []
    if skipped:
        notes.append(f"{VLLM_COMMAND_FLAG}: not taken by this command: {' '.join(skipped)}")
    return flags, notes


def expand_vllm_command(argv: list[str], parser: argparse.ArgumentParser) -> tuple[list[str], list[str]]:
    """``argv`` with ``--vllm-command TEXT`` replaced by :func:`vllm_command_flags`, placed right after the
    subcommand so that a flag the user also gives (later on the line) wins, as argparse keeps the last.

    >>> p = argparse.ArgumentParser(); sub = p.add_subparsers(dest="command"); e = sub.add_parser("estimate")
    >>> _ = e.add_argument("--model"); _ = e.add_argument("--tensor-parallel-size"); add_vllm_command_arg(e)
    >>> expand_vllm_command(["estimate", "--vllm-command=vllm serve a/b -tp 4", "--tensor-parallel-size", "2"], p)[0]
    ['estimate', '--model', 'a/b', '--tensor-parallel-size', '4', '--tensor-parallel-size', '2']
    """
    at = [i for i, w in enumerate(argv) if w == VLLM_COMMAND_FLAG or w.startswith(VLLM_COMMAND_FLAG + "=")]
    if not at or not argv:
        return argv, []
    if len(at) > 1:
        raise UsageError(f"{VLLM_COMMAND_FLAG}: given {len(at)} times; give one command")
    i = at[0]
    if i == 0:
        raise UsageError(f"{VLLM_COMMAND_FLAG}: give the subcommand first (python -m calc estimate {VLLM_COMMAND_FLAG} ...)")
    if "=" in argv[i]:
        text, rest = argv[i].partition("=")[2], argv[:i] + argv[i + 1:]
    elif i + 1 < len(argv):
        text, rest = argv[i + 1], argv[:i] + argv[i + 2:]
    else:
        raise UsageError(f"{VLLM_COMMAND_FLAG}: needs a value (the vllm serve line, quoted)")
    sub = next((a.choices.get(argv[0]) for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    taken = set(sub._option_string_actions) if sub is not None else set()
    if VLLM_COMMAND_FLAG not in taken:
        raise UsageError(f"{VLLM_COMMAND_FLAG}: not taken by {quote(argv[0])} (memory, estimate and simulate take it)")
    flags, notes = vllm_command_flags(text, lambda f: f in taken)
    return [rest[0], *flags, *rest[1:]], notes
