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


# Where a weight precision comes from, best first: the planner prefers the checkpoint as shipped,
# then a quantized checkpoint with a published quality figure, then what vLLM quantizes at load.
PRECISION_SOURCES = ("checkpoint", "published", "quantized_at_load", "dequantized", "no_checkpoint_known")
# vLLM quantizes a 16-bit checkpoint itself at load for these (--quantization fp8: dynamic FP8
# weights with per-tensor scales; bitsandbytes: in-flight). AWQ, GPTQ and INT8 W8A8 need a
# checkpoint quantized beforehand (docs.vllm.ai, "Quantization": FP8 W8A8 "dynamic quantization").
QUANTIZED_AT_LOAD = ("fp8", "bitsandbytes")


@dataclass(frozen=True)
class PrecisionChoice:
    """Where one weight precision of a model comes from, and which quality figure applies."""

    quantization: str  # vLLM --quantization ("none": the 16-bit weights)
    source: str  # one of PRECISION_SOURCES
    quality_table: str  # the published figure that applies (calc/data/quantization_quality.json), or why none

    @property
    def source_rank(self) -> int:
        return PRECISION_SOURCES.index(self.source)


def precision_choice(*, model_id: str, checkpoint_quantization: str | None, quantization: str) -> PrecisionChoice:
    """Where ``quantization`` comes from for this model, and which quality table applies:

    - ``checkpoint``: the format the checkpoint ships in (its ``quantization_config``; none: 16-bit),
      the reference the quality tables compare against;
    - ``published``: a quantized checkpoint of this model with a published quality figure
      (:func:`quality_notes`), named with its figure;
    - ``quantized_at_load``: vLLM quantizes the 16-bit checkpoint at load (:data:`QUANTIZED_AT_LOAD`);
      no published figure for this model;
    - ``dequantized``: 16-bit weights of a model shipped quantized (e.g. DeepSeek-V3's FP8): a
      conversion, not the checkpoint; no more accurate than it;
    - ``no_checkpoint_known``: needs a checkpoint quantized beforehand (AWQ, GPTQ, INT8) that the
      catalog does not know for this model; no published figure.

    >>> c = precision_choice(model_id="meta-llama/Llama-3.1-8B", checkpoint_quantization=None, quantization="int8")
    >>> c.source, c.quality_table[:58]
    ('published', 'neuralmagic / RedHatAI Meta-Llama-3.1-8B-Instruct-quantize')
    >>> [precision_choice(model_id="deepseek-ai/DeepSeek-V3", checkpoint_quantization="fp8", quantization=q).source
    ...  for q in ("fp8", "none", "awq")]
    ['checkpoint', 'dequantized', 'no_checkpoint_known']
    """
    own = checkpoint_quantization or "none"
    if quantization == own:
        what = "16-bit" if own == "none" else own
        return PrecisionChoice(quantization, "checkpoint", f"the checkpoint's own {what} weights: the reference")
    if quantization == "none":
        return PrecisionChoice(quantization, "dequantized", f"16-bit weights converted from the {own} checkpoint "
                                                            f"(vLLM serves it as shipped): the {own} checkpoint's quality")
    notes = quality_notes(model_id=model_id, quantization=quantization)
    if notes:
        n = notes[0]
        figure = (f"{n.recovery_percent:g} % of 16-bit on {n.metric}" if n.recovery_percent is not None
                  else f"\"{n.claim}\"")
        return PrecisionChoice(quantization, "published", f"{n.checkpoint}: {figure} ({n.source})")
    if quantization in QUANTIZED_AT_LOAD:
        return PrecisionChoice(quantization, "quantized_at_load", f"vLLM quantizes the {own if own != 'none' else '16-bit'}"
                                                                  " checkpoint at load; no published quality figure "
                                                                  "for this model")
    return PrecisionChoice(quantization, "no_checkpoint_known", f"needs a {quantization} checkpoint of this model, "
                                                                "none known here; no published quality figure")
