"""The speculative view's numbers: speed-up over batch size for one drafter (pure, no streamlit)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calc.spec.speculative import SpeculativeConfig, default_accepted_at_position, parse_speculative_config
from calc.timing.estimate import engine_numbers
from calc.timing.speculative import Drafter, SpeculativeStep, drafter_for, speculative_step

BATCHES = np.unique(np.round(np.geomspace(1, 1024, 41))).astype(int)


@dataclass(frozen=True)
class SpeedupSweep:
    batch: np.ndarray
    step: SpeculativeStep
    drafter: Drafter
    config: SpeculativeConfig
    crossover_batch: float  # first batch where speculation no longer pays (NaN: never in the range)


def speculative_config(method: str, k: int, acceptance: float) -> SpeculativeConfig:
    """The page's three controls as the CLI's config (the same validation)."""
    return parse_speculative_config({"method": method, "num_speculative_tokens": int(k)}, acceptance_rate=acceptance)


def speedup_sweep(arch, gpu, serving, efficiency, config: SpeculativeConfig, *, context_tokens) -> SpeedupSweep:
    e = engine_numbers(arch, gpu, serving, efficiency)
    d = drafter_for(e, config)
    s = speculative_step(e, d, batch=BATCHES, context_tokens=context_tokens)
    below = np.flatnonzero(np.asarray(s.speedup) < 1.0)
    cross = float(BATCHES[below[0]]) if below.size else float("nan")
    return SpeedupSweep(batch=BATCHES, step=s, drafter=d, config=config, crossover_batch=cross)


def published(method: str, k: int) -> tuple[float, float]:
    """(tokens per step, first-position acceptance) of the method's sourced default at k."""
    c = default_accepted_at_position(method, int(k))
    return 1.0 + sum(c), c[0]


def outcome(sw: SpeedupSweep, fit: float | None) -> tuple[str, dict[str, float]]:
    """What the speed-up does over the batches shown, as a translation key and its numbers (the
    page says what its chart shows, not a fixed claim: for an MHA model at 2k context the gain stays
    ~1.8x up to batch 1,024, where an 8B GQA model at a short context loses it).

    ``top``: the largest batch of the sweep the KV pool holds (``fit``; the sweep's end without
    one); ``lo``/``hi`` the speed-up's range up to it; ``cross`` the first batch below 1. At ``top``
    the verify's memory time (``mem_ms``: every operator's bytes at the HBM rate, of which the KV
    read ``kv_ms`` is attention's) is set against its compute (``compute_ms``): a plain decode step
    reads the same bytes, only the verify does (k + 1) times the compute.

    - ``sd.outcome.reverses``: falls below 1 from ``cross`` ≤ ``top``;
    - ``sd.outcome.beyond_fit``: stays ≥ 1 up to the ``pool`` requests that fit, below 1 past them;
    - ``sd.outcome.memory_bound``: never below 1; at ``top`` the verify's reads outweigh its compute;
    - ``sd.outcome.shrinks``: never below 1; at ``top`` its compute outweighs its reads.
    """
    b = np.asarray(sw.batch, dtype=float)
    sp = np.asarray(sw.step.speedup, dtype=float)
    shown = b <= (fit if fit else b[-1])
    i = int(np.flatnonzero(shown)[-1]) if shown.any() else 0
    v = sw.step.verify
    at = lambda a: float(np.asarray(a, dtype=float).reshape(-1)[i]) * 1e3  # noqa: E731  (ms at batch top)
    nums = dict(top=float(b[i]), pool=float(fit or b[-1]), last=float(b[-1]), lo=float(sp[:i + 1].min()),
                hi=float(sp[:i + 1].max()), s1=float(sp[0]), s_top=float(sp[i]), cross=sw.crossover_batch,
                kv_ms=at(v.op_memory_s["attention"]), mem_ms=sum(at(m) for m in v.op_memory_s.values()),
                compute_ms=sum(at(c) for c in v.op_compute_s.values()))
    if sw.crossover_batch == sw.crossover_batch:  # not NaN
        return ("sd.outcome.reverses" if sw.crossover_batch <= nums["top"] else "sd.outcome.beyond_fit"), nums
    return ("sd.outcome.memory_bound" if nums["mem_ms"] >= nums["compute_ms"] else "sd.outcome.shrinks"), nums
