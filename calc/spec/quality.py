"""Published accuracy changes of quantized checkpoints (``calc/data/quantization_quality.json``):
what the planner and the frontier page show next to each precision. Data only, with sources."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "quantization_quality.json"
# awq and gptq are both 4-bit weight-only (W4A16): a published W4A16 figure speaks for either.
_SAME_FORMAT = {"awq": ("awq", "gptq"), "gptq": ("gptq", "awq")}


@dataclass(frozen=True)
class QualityNote:
    """One published result: recovery in % of the 16-bit score (None: a qualitative claim)."""

    quantization: str
    format: str
    checkpoint: str
    metric: str
    recovery_percent: float | None
    claim: str
    source: str
    other_metrics: dict[str, float] = field(default_factory=dict)


@lru_cache(maxsize=1)
def _entries() -> tuple[dict, ...]:
    return tuple(json.loads(DATA.read_text())["entries"])


def quality_notes(*, model_id: str, quantization: str) -> list[QualityNote]:
    """Published results for this model and weight format, numbers first; [] when none is known
    (``none`` = the 16-bit original: nothing to report).

    >>> [n.recovery_percent for n in quality_notes(model_id="meta-llama/Llama-3.1-8B", quantization="int8")]
    [100.3, None]
    >>> quality_notes(model_id="mistralai/Mistral-7B-v0.1", quantization="fp8")
    []
    """
    if quantization == "none":
        return []
    formats = _SAME_FORMAT.get(quantization, (quantization,))
    out = [QualityNote(quantization=e["quantization"], format=e["format"], checkpoint=e["checkpoint"],
                       metric=e["metric"], recovery_percent=e.get("recovery_percent"), claim=e.get("claim", ""),
                       source=e["source"], other_metrics=dict(e.get("other_metrics", {})))
           for e in _entries() if model_id in e["applies_to"] and e["quantization"] in formats]
    return sorted(out, key=lambda n: n.recovery_percent is None)
