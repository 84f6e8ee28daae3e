"""``vllm serve`` command lines, both ways: :func:`serve_command` writes one for a scenario,
:func:`parse_serve_command` reads a pasted one (or the flags after a ``docker run …
vllm/vllm-openai`` image) back into options. Pure text processing, no UI.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from typing import Any

from calc.spec.inputs import ServingConfig
from calc.spec.speculative import parse_speculative_config
from calc.spec.untrusted import InputError


def serve_command(*, model_id: str, serving: ServingConfig, max_model_len: int, max_num_seqs: int,
                  max_num_batched_tokens: int, chunked: bool, speculative=None,
                  enable_prefix_caching: bool = True) -> str:
    """The ``vllm serve`` line of a scenario (one flag per line, ready to paste in a shell).
    ``speculative`` (:class:`calc.spec.speculative.SpeculativeConfig`) adds ``--speculative-config``
    (EAGLE needs its draft weights: ``DRAFT_MODEL_ID`` stands for them); ``enable_prefix_caching``
    False adds ``--no-enable-prefix-caching`` (vLLM V1 caches prefixes by default).

    >>> print(serve_command(model_id="meta-llama/Llama-2-7b-hf", serving=ServingConfig(dtype="float16"),
    ...       max_model_len=4096, max_num_seqs=24, max_num_batched_tokens=2048, chunked=True))
    vllm serve meta-llama/Llama-2-7b-hf \\
      --tensor-parallel-size 1 \\
      --dtype float16 \\
      --max-model-len 4096 \\
      --max-num-seqs 24 \\
      --max-num-batched-tokens 2048 \\
      --gpu-memory-utilization 0.9 \\
      --kv-cache-dtype auto \\
      --enable-chunked-prefill
    """
    s = serving
    flags = [f"--tensor-parallel-size {s.tensor_parallel_size}", f"--dtype {s.dtype}"]
    if s.pipeline_parallel_size > 1:
        flags.append(f"--pipeline-parallel-size {s.pipeline_parallel_size}")
    if s.data_parallel_size > 1:
        flags.append(f"--data-parallel-size {s.data_parallel_size}")
    if s.enable_expert_parallel:
        flags.append("--enable-expert-parallel")
    if s.quantization not in ("none", "auto"):  # auto = the checkpoint's own format: no flag
        flags.append(f"--quantization {s.quantization}")
    flags += [f"--max-model-len {max_model_len}", f"--max-num-seqs {max_num_seqs}",
              f"--max-num-batched-tokens {max_num_batched_tokens}",
              f"--gpu-memory-utilization {s.gpu_memory_utilization:g}", f"--kv-cache-dtype {s.kv_cache_dtype}"]
    if s.block_size != 16:
        flags.append(f"--block-size {s.block_size}")
    if s.disable_custom_all_reduce:
        flags.append("--disable-custom-all-reduce")
    flags.append("--enable-chunked-prefill" if chunked else "--no-enable-chunked-prefill")
    if not enable_prefix_caching:
        flags.append("--no-enable-prefix-caching")
    if speculative is not None:
        import json  # noqa: PLC0415

        cfg = {"method": speculative.method, "num_speculative_tokens": speculative.num_speculative_tokens}
        if speculative.method in ("eagle", "eagle3", "draft_model"):
            cfg["model"] = speculative.draft_model or "DRAFT_MODEL_ID"
        flags.append(f"--speculative-config {shlex.quote(json.dumps(cfg))}")
    return " \\\n  ".join([f"vllm serve {shlex.quote(model_id)}"] + flags)


# ----------------------------------------------------------------------------- parsing

MAX_COMMAND_CHARS = 20_000
SHOWN_CHARS = 60  # user text is cut to this when echoed in a message
ERROR_CHARS = 240  # a nested check's message (its user part already cut) is cut to this
# vLLM flag -> (scenario field, kind). Names and spellings as `vllm serve --help`.
FLAGS: dict[str, tuple[str, str]] = {
    "--tensor-parallel-size": ("tensor_parallel_size", "int"), "-tp": ("tensor_parallel_size", "int"),
    "--dtype": ("dtype", "str"), "--quantization": ("quantization", "str"), "-q": ("quantization", "str"),
    "--kv-cache-dtype": ("kv_cache_dtype", "str"),
    "--gpu-memory-utilization": ("gpu_memory_utilization", "float"), "--block-size": ("block_size", "int"),
    "--max-model-len": ("max_model_len", "int"), "--max-num-seqs": ("max_num_seqs", "int"),
    "--max-num-batched-tokens": ("max_num_batched_tokens", "int"), "--model": ("model", "str"),
    "--enable-chunked-prefill": ("enable_chunked_prefill", "bool"),
    "--no-enable-chunked-prefill": ("enable_chunked_prefill", "false"),
    # multi-GPU layout (calc.spec.parallelism checks the combination)
    "--pipeline-parallel-size": ("pipeline_parallel_size", "int"), "-pp": ("pipeline_parallel_size", "int"),
    "--data-parallel-size": ("data_parallel_size", "int"), "-dp": ("data_parallel_size", "int"),
    "--enable-expert-parallel": ("enable_expert_parallel", "bool"),
    "--no-enable-expert-parallel": ("enable_expert_parallel", "false"),
    # the serving features (issue #21): vLLM V1 caches prefixes unless told not to; the speculative
    # JSON is read by calc.spec.speculative.parse_speculative_config, as the command line reads it
    "--enable-prefix-caching": ("enable_prefix_caching", "bool"),
    "--no-enable-prefix-caching": ("enable_prefix_caching", "false"),
    "--speculative-config": ("speculative_config", "json"),
}
_BOOL_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
# Flags of `vllm serve` / `docker run` that take no value (so the next word is not eaten as one).
_NO_VALUE = {"--trust-remote-code", "--enforce-eager", "--disable-log-requests", "--disable-log-stats",
             "--enable-auto-tool-choice",
             "--disable-custom-all-reduce", "--rm", "-it", "-d", "-i", "-t", "--ipc=host", "--privileged"}


@dataclass(frozen=True)
class ParsedCommand:
    """What a pasted command says: the model, the scenario options it sets (snake_case, vLLM
    names), the flags the calculator does not model (ignored) and the values it cannot use."""

    model: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # option -> (flag as typed, raw text) of the numbers that could not be read (their message is in
    # ``errors`` too): a UI can re-check the text with its own control and name the allowed range
    bad_numbers: dict[str, tuple[str, str]] = field(default_factory=dict)
    # option -> its text as given, for the options read from JSON (--speculative-config): the command line
    # passes the text on to its own flag, acceptance keys and all
    texts: dict[str, str] = field(default_factory=dict)


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """User text as echoed in a message: control characters dropped, cut to ``limit`` characters.

    >>> shown("abc\\x07def" + "x" * 100, 10)
    'abcdefxxx…'
    """
    clean = "".join(ch for ch in str(text) if ch.isprintable())
    return clean if len(clean) <= limit else clean[:limit - 1] + "…"


def flag_error(flag: str, exc: InputError) -> str:
    """A nested check's problem named by the flag it came with (its key in brackets), cut short.

    >>> flag_error("--speculative-config", InputError("speculative_config.method", "medusa", allowed="one of ngram, eagle"))
    "--speculative-config (method): got 'medusa', allowed one of ngram, eagle"
    """
    key = exc.field.partition(".")[2]
    named = InputError(f"{flag} ({key})" if key else flag, exc.raw, allowed=exc.allowed, code=exc.code,
                       detail=exc.detail, **exc.params)
    return shown(str(named), ERROR_CHARS)


MAX_NUMBER_CHARS = 40  # longer number text is refused before float() (no 5,000-digit parse)


def _number(text: str, kind: str) -> float | int:
    """``4096``, ``32k`` (× 1000), ``32K`` (× 1024), ``1m`` / ``1M`` as vLLM's human-readable sizes.

    Raises ``ValueError`` for anything else, ``inf``/``nan``/``1e309`` included (``int(inf)``
    raised ``OverflowError`` past the paste box's handler).

    >>> _number("32k", "int"), _number("0.9", "float")
    (32000, 0.9)
    >>> _number("1e309", "int")
    Traceback (most recent call last):
    ...
    ValueError: 1e309
    """
    t = text.strip()
    if len(t) > MAX_NUMBER_CHARS:
        raise ValueError(shown(text))
    mult = {"k": 1000, "K": 1024, "m": 1_000_000, "M": 1 << 20, "g": 1_000_000_000, "G": 1 << 30}
    if kind == "int" and t and t[-1] in mult:
        value = float(t[:-1]) * mult[t[-1]]
    else:
        value = float(t)
    if not math.isfinite(value):
        raise ValueError(shown(text))
    if kind == "int":
        if value != int(value):
            raise ValueError(text)
        return int(value)
    return value


def number_error(flag: str, value: str) -> str:
    """The message of a numeric flag whose value is not a (finite) number.

    >>> number_error("-tp", "inf")
    "-tp: got 'inf', allowed a whole number"
    """
    what = "a whole number" if FLAGS[flag][1] == "int" else "a number"
    return f"{flag}: got {shown(value)!r}, allowed {what}"


def _tokens(text: str) -> list[str]:
    """Shell words of a command pasted from a terminal, a README or a compose file."""
    if len(text) > MAX_COMMAND_CHARS:
        raise ValueError(f"command: longer than {MAX_COMMAND_CHARS:,} characters")
    t = text.replace("\r\n", "\n")
    for cont in ("\\\n", "`\n", "^\n"):  # POSIX, PowerShell and cmd line continuations
        t = t.replace(cont, " ")
    t = " ".join(line.split("#", 1)[0] if line.lstrip().startswith("#") else line for line in t.split("\n"))
    try:
        return shlex.split(t, posix=True)
    except ValueError as exc:  # unbalanced quotes
        raise ValueError(f"command: {exc} (check the quotes)") from None


def parse_serve_command(text: str) -> ParsedCommand:
    """Read ``vllm serve MODEL --flag value …`` (or ``python -m vllm.entrypoints.openai.api_server
    --model MODEL …``, or ``docker run … vllm/vllm-openai[:tag] --model MODEL …``).

    Values are checked for their type here (ranges are the scenario's job); flags the calculator
    does not model are listed in ``ignored``; bad values are named in ``errors``. Raises
    ``ValueError`` only when the text is not a vLLM command at all.

    >>> p = parse_serve_command('''vllm serve meta-llama/Llama-3.1-8B \\\\
    ...   --tensor-parallel-size 2 --max-model-len=32k --kv-cache-dtype fp8 \\\\
    ...   --enforce-eager --max-num-seqs lots''')
    >>> p.model, p.options, p.ignored, p.errors
    ('meta-llama/Llama-3.1-8B', {'tensor_parallel_size': 2, 'max_model_len': 32000, 'kv_cache_dtype': 'fp8'}, ['--enforce-eager'], ["--max-num-seqs: got 'lots', allowed a whole number"])
    """
    words = _tokens(text)
    start = None
    for i, w in enumerate(words):
        if w == "serve" and i > 0 and words[i - 1].endswith("vllm"):
            start = i + 1
            break
        if w.startswith("vllm/vllm-openai") or w.endswith("vllm.entrypoints.openai.api_server"):
            start = i + 1
            break
    if start is None:
        raise ValueError("command: expected 'vllm serve MODEL …', 'python -m vllm.entrypoints.openai.api_server …' "
                         "or 'docker run … vllm/vllm-openai … --model MODEL …'")
    model: str | None = None
    options: dict[str, Any] = {}
    ignored: list[str] = []
    errors: list[str] = []
    bad_numbers: dict[str, tuple[str, str]] = {}
    texts: dict[str, str] = {}
    i = start
    if i < len(words) and not words[i].startswith("-"):
        model = words[i]  # `vllm serve MODEL`
        i += 1
    while i < len(words):
        w = words[i]
        i += 1
        if not w.startswith("-"):
            ignored.append(shown(w))
            continue
        flag, eq, inline = w.partition("=")
        if flag not in FLAGS:
            ignored.append(shown(flag))
            if not eq and flag not in _NO_VALUE and i < len(words) and not words[i].startswith("-"):
                i += 1  # its value
            continue
        name, kind = FLAGS[flag]
        if kind == "false":
            options[name] = False
            continue
        if kind == "bool":
            value = inline if eq else (words[i] if i < len(words) and words[i].lower() in _BOOL_WORDS else None)
            if value is not None and not eq:
                i += 1
            if value is None:
                options[name] = True
            elif value.lower() in _BOOL_WORDS:
                options[name] = _BOOL_WORDS[value.lower()]
            else:
                errors.append(f"{flag}: got {shown(value)!r}, allowed true or false")
            continue
        if eq:
            value = inline
        elif i < len(words):
            value = words[i]
            i += 1
        else:
            errors.append(f"{flag}: needs a value")
            continue
        if kind == "str":
            if name == "model":
                model = value
            else:
                options[name] = value
            continue
        if kind == "json":  # --speculative-config: checked as the command line checks it
            options.pop(name, None)  # given again: the last one counts, right or wrong
            errors[:] = [e for e in errors if not e.startswith((f"{flag}:", f"{flag} "))]
            texts.pop(name, None)
            try:
                options[name] = parse_speculative_config(value)
                texts[name] = value
            except InputError as exc:
                errors.append(flag_error(flag, exc))
            continue
        if name in bad_numbers:  # given again: the last one counts (argparse), the earlier problem goes
            errors.remove(number_error(*bad_numbers.pop(name)))
        try:
            options[name] = _number(value, kind)
        except ValueError:  # not a (finite) number: inf, nan, 1e309, a 5,000-digit integer, a word
            errors.append(number_error(flag, value))
            options.pop(name, None)  # an earlier good value of the same flag does not stand for this one
            bad_numbers[name] = (flag, value)
    return ParsedCommand(model=model, options=options, ignored=ignored, errors=errors, bad_numbers=bad_numbers,
                         texts=texts)
