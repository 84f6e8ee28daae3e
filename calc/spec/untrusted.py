"""Untrusted input: how a raw value is quoted in a message, one structured error, a guarded JSON reader.

Everything a user supplies (a URL parameter, a scenario file, a config.json, a CLI argument or a
``--batch`` line) enters calc's messages through :func:`quote` (cut to :data:`MAX_SHOWN_CHARS`
characters with the original length, huge integers summarised, never ``str()`` of a 5,000-digit
int), and invalid values raise :class:`InputError`: the field, the raw value, what is allowed and a
reason code, so a UI can word the same error in another language while the CLI prints English.
:func:`load_json` parses untrusted JSON with a size limit, a nesting limit and huge integers kept
as :class:`HugeInt` text (rejected by the field that receives them, which names itself), so no
parser failure escapes as a traceback. Markdown/HTML escaping is the UI's job (``ui.safe``).
"""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Any

MAX_SHOWN_CHARS = 80  # a raw value longer than this is cut in messages (with its length)
MAX_JSON_DEPTH = 32  # scenario files and config.json are a few levels deep
MAX_INT_DIGITS = 30  # larger JSON integers stay text (no float overflow, no int-digit-limit error)
_MISSING = object()


class HugeInt(str):
    """A JSON integer literal with more than :data:`MAX_INT_DIGITS` digits, kept as its text."""


def shorten(text: str, limit: int = MAX_SHOWN_CHARS, unit: str = "characters") -> str:
    """``text`` cut to ``limit`` characters, with an ellipsis and the original length.

    >>> shorten("abc"), shorten("x" * 100, 5)
    ('abc', 'xxxxx… (100 characters)')
    """
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} {unit})"


def quote(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """A raw value as a message quotes it: short, one line, whatever its type or size.

    >>> quote("16"), quote(16), quote(1.5), quote(float("inf")), quote(None), quote([1])
    ("'16'", '16', '1.5', 'inf', 'null', 'a list')
    >>> quote(HugeInt("9" * 400)), quote(10 ** 5000)
    ('99999999999999999999… (400 digits)', 'an integer of 5,001 digits')
    >>> quote("a" * 200)
    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…' (200 characters)"
    """
    if isinstance(value, HugeInt):
        return shorten(str(value), 20, "digits")
    if isinstance(value, str):
        text = value if len(value) <= limit else value[:limit] + "…"
        text = "".join(c if c.isprintable() else " " for c in text)
        return repr(text) + (f" ({len(value):,} characters)" if len(value) > limit else "")
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if value.bit_length() > 100:  # str() of a > 4,300-digit int raises; this never does
            digits = math.floor(value.bit_length() * math.log10(2)) + 1
            digits = len(str(abs(value))) if digits < 4000 else digits
            return f"an integer of {digits:,} digits"
        return f"{value:,}"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "a " + type(value).__name__


# Reason codes and their English wording (the CLI prints these; the UI translates the code).
REASONS_EN: dict[str, str] = {
    "range": "{field}: got {raw}, allowed {allowed}",
    "tp_heads": "{field}: got {raw}, allowed {allowed} (it must divide the {heads} attention heads of {model})",
    "tp_kv_heads": "{field}: got {raw}, allowed {allowed} (it must divide the {kv_heads} KV heads of {model} "
                   "or be a multiple of them)",
    "output_len": "{field}: got {raw}, allowed {allowed} (less than the context length {context})",
    "context": "{field} (input + output tokens): got {raw}, allowed {allowed} (max_model_len of {model})",
    "context_max_model_len": "{field} (input + output tokens): got {raw}, allowed {allowed}: context length {raw} > "
                             "--max-model-len {max_model_len}; shorten the input or output, or raise max_model_len "
                             "(Engine)",
    "max_positions": "{field}: got {raw}, allowed {allowed} (the shortest context this calculator handles)",
    "replicas": "{field}: got {raw}, allowed {allowed} (at most the concurrency {concurrency}: every replica "
                "needs at least one client)",
    "budget_below_len": "{field}: got {raw}, allowed {allowed} (without chunked prefill a whole prompt of up to "
                        "max_model_len = {max_model_len} tokens must fit one step; vLLM refuses to start: turn "
                        "chunked prefill on or lower max_model_len)",
    "gpu_format": "{field}: got {raw}, allowed {allowed} (vLLM has no {raw} kernels on {gpu})",
    "pp_layers": "{field}: got {raw}, allowed {allowed} (every pipeline stage needs at least one of the {layers} "
                 "decoder layers of {model})",
    "ep_dense": "{field}: got {raw}, allowed {allowed} ({model} has no routed experts: expert parallelism needs an "
                "MoE model)",
    "nodes_split": "{field}: got {raw}, allowed {allowed} ({world} GPUs = TP × PP × DP must split evenly over the "
                   "nodes, at most {per_node} GPUs per {gpu} node)",
    "world_size": "{field}: got {raw}, allowed {allowed} (TP × PP × DP GPUs in all)",
    "required": "{field}: required",
    "custom_missing": "{field}: 'custom' needs a config.json (upload or paste one)",
    "json": "{field} is not valid JSON: {detail}",
    "too_deep": "{field} is not valid JSON: nested more than {allowed} levels deep",
    "too_large": "{field} is larger than {allowed} bytes",
    "not_object": "{field} must be a JSON object (got {raw})",
    "unknown_fields": "{field}: unknown field(s) {raw}; allowed: {allowed}",
    "invalid": "{field}: {detail}",
}


class InputError(ValueError):
    """An untrusted value that cannot be used: the field, the raw value, what is allowed, a reason code.

    ``str(err)`` is the English message (CLI); a UI words ``err.code`` in its own language from
    the same parts. ``params`` carries the extra values a reason names (heads, model, ...).

    >>> print(InputError("concurrency", "0", allowed="integer 1 – 1,024"))
    concurrency: got '0', allowed integer 1 – 1,024
    >>> InputError("context", 8192, allowed="16 – 4,096", code="context", model="Llama-2-7B").params
    {'model': 'Llama-2-7B'}
    """

    def __init__(self, field: str, raw: Any = _MISSING, *, allowed: str = "", code: str = "range",
                 detail: str = "", **params: Any) -> None:
        self.field, self.raw, self.allowed, self.code, self.detail, self.params = (
            field, None if raw is _MISSING else raw, allowed, code, detail, params)
        super().__init__(self.english())

    @property
    def raw_text(self) -> str:
        """The raw value quoted for a message (cut, one line)."""
        return self.raw if self.code in ("unknown_fields", "not_object") else quote(self.raw)

    def parts(self) -> dict[str, Any]:
        return {"field": self.field, "raw": self.raw_text, "allowed": self.allowed, "detail": self.detail,
                **self.params}

    def english(self) -> str:
        return REASONS_EN.get(self.code, REASONS_EN["invalid"]).format(**self.parts())


def safe_name(text: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """A user-supplied model name as every page may print it: letters, digits, spaces and ``-._/+()``
    only (no Markdown or HTML can form), one line, at most ``limit`` characters.

    >>> safe_name("meta-llama/Llama-3.1-8B"), safe_name("x` ![t](http://127.0.0.1:9/p.png)")
    ('meta-llama/Llama-3.1-8B', 'x- --t-(http-//127.0.0.1-9/p.png)')
    """
    out = []
    for c in unicodedata.normalize("NFC", str(text)):
        if c.isalnum() or c in "-._/+() ":
            out.append(c)
        elif c.isspace():
            out.append(" ")
        else:
            out.append("-")
    name = " ".join("".join(out).split())
    name = name[:limit - 1] + "…" if len(name) > limit else name
    return name or "custom"


def _parse_int(text: str) -> int | HugeInt:
    return HugeInt(text) if len(text.lstrip("-")) > MAX_INT_DIGITS else int(text)


def depth(doc: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of a parsed JSON value (iterative; stops counting past ``limit``).

    >>> depth(1), depth([1, {"a": [2]}])
    (0, 3)
    """
    deepest, stack = 0, [(doc, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (list, dict)):
            level += 1
            deepest = max(deepest, level)
            if level > limit:
                return level
            stack.extend((v, level) for v in (node.values() if isinstance(node, dict) else node))
    return deepest


def load_json(text: str | bytes, *, what: str, max_bytes: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse untrusted JSON; every failure is an :class:`InputError` naming ``what``.

    Size-limited (bytes), nesting-limited, integers over :data:`MAX_INT_DIGITS` digits kept as
    :class:`HugeInt`, ``NaN``/``Infinity`` literals read as floats (the field rejects them).

    >>> load_json('{"a": 1}', what="f", max_bytes=100)
    {'a': 1}
    >>> load_json('[' * 1000, what="scenario file", max_bytes=10_000)
    Traceback (most recent call last):
    ...
    calc.spec.untrusted.InputError: scenario file is not valid JSON: nested more than 32 levels deep
    """
    size = len(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) and len(text) <= max_bytes else len(text)
    if size > max_bytes:
        raise InputError(what, code="too_large", allowed=f"{max_bytes:,}")
    if isinstance(text, str):
        opening = text.count("[") + text.count("{")
    else:
        opening = text.count(b"[") + text.count(b"{")
    try:
        doc = json.loads(text, parse_int=_parse_int)
    except RecursionError:
        raise InputError(what, code="too_deep", allowed=str(max_depth)) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if opening > max_depth and "Expecting" in detail and text.lstrip()[:max_depth + 1].count(
                "[" if isinstance(text, str) else b"[") > max_depth:
            raise InputError(what, code="too_deep", allowed=str(max_depth)) from None
        raise InputError(what, code="json", detail=shorten(detail, 120)) from None
    if opening > max_depth and depth(doc, max_depth) > max_depth:
        raise InputError(what, code="too_deep", allowed=str(max_depth))
    return doc


def json_type(value: Any) -> str:
    """``a list`` / ``a string`` / ``a number`` / ... for 'must be a JSON object (got ...)'."""
    if isinstance(value, HugeInt):
        return "a number"
    return {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number",
            dict: "an object"}.get(type(value), "null")
