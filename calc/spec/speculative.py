"""Speculative decoding inputs: vLLM's ``--speculative-config`` JSON read as untrusted input, the
acceptance per draft position, and the sourced defaults per method (``calc/data/speculative.json``).

vLLM (``vllm/config/speculative.py``) takes a JSON object with ``method`` ("ngram", "eagle",
"eagle3", "mtp", "draft_model"), ``num_speculative_tokens`` (k) and, for EAGLE and draft
models, ``model``. We read the same keys, plus two of our own: ``acceptance_rate`` (per draft
token, i.i.d.) or ``position_acceptance`` (per position, each given that the ones before were
accepted). Without either, the method's sourced default applies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from calc.spec.untrusted import InputError, load_json, quote

METHODS = ("ngram", "eagle", "eagle3", "mtp", "draft_model")
# vLLM keys that do not change our answer (read and ignored); anything else is refused by name.
IGNORED_VLLM_KEYS = ("prompt_lookup_max", "prompt_lookup_min", "draft_tensor_parallel_size", "quantization",
                     "max_model_len", "revision", "code_revision", "enforce_eager")
OWN_KEYS = ("acceptance_rate", "position_acceptance")
KEYS = ("method", "model", "num_speculative_tokens") + OWN_KEYS + IGNORED_VLLM_KEYS
MAX_SPECULATIVE_TOKENS = 16
_DATA = Path(__file__).resolve().parent.parent / "data" / "speculative.json"


@lru_cache(maxsize=1)
def speculative_data() -> dict:
    """The defaults file (acceptance per method and position, overheads), with sources."""
    return json.loads(_DATA.read_text())


@dataclass(frozen=True)
class SpeculativeConfig:
    """A validated speculative-decoding setup.

    ``accepted_at_position[i]``: probability that draft i + 1 and every draft before it are
    accepted (non-increasing, length k). The mean tokens a sequence gains per step is then
    1 + Σ accepted_at_position (:func:`calc.timing.speculative.mean_accepted_tokens_per_step`).
    """

    method: str
    num_speculative_tokens: int
    accepted_at_position: tuple[float, ...]
    draft_model: str | None = None  # catalog id of the draft model (method "draft_model")
    acceptance_source: str = ""


def default_accepted_at_position(method: str, k: int) -> tuple[float, ...]:
    """The method's sourced cumulative acceptance for k positions; past the list the ratio of
    its last two entries continues (i.i.d. beyond what was measured).

    >>> default_accepted_at_position("mtp", 2)
    (0.875, 0.765625)
    """
    c = list(speculative_data()["methods"][method]["accepted_at_position"])
    ratio = c[-1] / c[-2] if len(c) > 1 and c[-2] > 0 else c[-1]
    while len(c) < k:
        c.append(c[-1] * ratio)
    return tuple(c[:k])


def _fraction(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) < 1.0:
        raise InputError(field, value, allowed="a number from 0 to below 1 (probability a draft token is accepted)")
    return float(value)


def parse_speculative_config(raw: Any, *, acceptance_rate: Any = None) -> SpeculativeConfig:
    """``--speculative-config`` (JSON text or an already parsed object) → :class:`SpeculativeConfig`.
    ``acceptance_rate`` (``--acceptance-rate``) overrides the JSON's and the default.

    >>> c = parse_speculative_config('{"method": "eagle3", "num_speculative_tokens": 3}', acceptance_rate=0.7)
    >>> c.method, c.num_speculative_tokens, [round(x, 3) for x in c.accepted_at_position]
    ('eagle3', 3, [0.7, 0.49, 0.343])
    >>> parse_speculative_config('{"method": "medusa", "num_speculative_tokens": 3}')
    Traceback (most recent call last):
    ...
    calc.spec.untrusted.InputError: speculative_config.method: got 'medusa', allowed one of ngram, eagle, eagle3, mtp, draft_model
    """
    doc = load_json(raw, what="speculative_config", max_bytes=10_000) if isinstance(raw, (str, bytes)) else raw
    if not isinstance(doc, dict):
        raise InputError("speculative_config", raw, allowed="a JSON object such as "
                         '{"method": "eagle3", "num_speculative_tokens": 3}')
    unknown = [k for k in doc if k not in KEYS]
    if unknown:
        raise InputError("speculative_config", str(unknown[0]), allowed="keys " + ", ".join(KEYS), code="range")
    model = doc.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip() or len(model) > 300):
        raise InputError("speculative_config.model", model, allowed="a model id (text, at most 300 characters)")
    method = doc.get("method")
    if method is None:  # vLLM infers it from the draft model's name
        if model is None:
            raise InputError("speculative_config.method", code="required")
        low = model.lower()
        method = "eagle3" if "eagle3" in low else "eagle" if "eagle" in low else "draft_model"
    if not isinstance(method, str) or method not in METHODS:
        raise InputError("speculative_config.method", method, allowed="one of " + ", ".join(METHODS))
    if method == "draft_model" and model is None:
        raise InputError("speculative_config.model", code="required")
    k = doc.get("num_speculative_tokens")
    if k is None:
        raise InputError("speculative_config.num_speculative_tokens", code="required")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SPECULATIVE_TOKENS:
        raise InputError("speculative_config.num_speculative_tokens", k,
                         allowed=f"an integer 1 – {MAX_SPECULATIVE_TOKENS}")
    source = speculative_data()["methods"][method]["source"]
    if acceptance_rate is None:
        acceptance_rate = doc.get("acceptance_rate")
    positions = doc.get("position_acceptance")
    if acceptance_rate is not None:
        a = _fraction("acceptance_rate", acceptance_rate)
        cum = tuple(a ** (i + 1) for i in range(k))
        source = f"given: {a:g} per draft token, i.i.d."
    elif positions is not None:
        if not isinstance(positions, list) or len(positions) != k:
            raise InputError("speculative_config.position_acceptance", positions,
                             allowed=f"a list of {k} numbers (one per draft position)")
        cum, p = [], 1.0
        for i, x in enumerate(positions):
            p *= _fraction(f"speculative_config.position_acceptance[{i}]", x)
            cum.append(p)
        cum = tuple(cum)
        source = "given per position"
    else:
        cum = default_accepted_at_position(method, k)
    return SpeculativeConfig(method=method, num_speculative_tokens=k, accepted_at_position=cum,
                             draft_model=model if method == "draft_model" else None, acceptance_source=source)


def describe(config: SpeculativeConfig) -> str:
    """One line for reports: method, k and the mean accepted length.

    >>> describe(parse_speculative_config({"method": "ngram", "num_speculative_tokens": 2}, acceptance_rate=0.5))
    'ngram, k = 2, 1.75 tokens per step'
    """
    return (f"{config.method}, k = {config.num_speculative_tokens}, "
            f"{1.0 + sum(config.accepted_at_position):.2f} tokens per step")


def cli_json(config: SpeculativeConfig) -> str:
    """The ``--speculative-config`` JSON that gives ``python -m calc`` this config back: method, k and
    the acceptance per position (each given the ones before: c_i / c_(i-1) of the cumulative
    ``accepted_at_position``), kept below 1 as the reader requires.

    >>> cli_json(parse_speculative_config({"method": "ngram", "num_speculative_tokens": 2}, acceptance_rate=0.5))
    '{"method": "ngram", "num_speculative_tokens": 2, "position_acceptance": [0.5, 0.5]}'
    """
    cum = config.accepted_at_position
    return json.dumps({"method": config.method, "num_speculative_tokens": config.num_speculative_tokens,
                       "position_acceptance": [min(round(c / (cum[i - 1] if i else 1.0), 6), 0.999999)
                                               for i, c in enumerate(cum)]})


__all__ = ["SpeculativeConfig", "parse_speculative_config", "default_accepted_at_position", "describe", "METHODS",
           "speculative_data", "quote", "cli_json"]
