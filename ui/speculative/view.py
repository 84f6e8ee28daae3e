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
