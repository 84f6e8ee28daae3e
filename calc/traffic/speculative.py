"""Speculative decoding inside the request-level simulator (:func:`calc.traffic.simulator.simulate`):
the scheduler's extra draft slots, the accepted length drawn per sequence and step, and the
drafter's time per step, from the same physics as :mod:`calc.timing.speculative`.

vLLM V1 (``vllm/v1/core/sched/scheduler.py``, ``vllm/v1/spec_decode/eagle.py``):
* a decoding request is scheduled 1 + k tokens (its last token and its k drafts), out of the
  same token budget as prefill chunks, and gets KV slots for all of them;
* the target verifies them as one chunk; j drafts are accepted with P(j ≥ i) = c_i (the
  cumulative per-position acceptance), and the request gains j + 1 tokens (at most what its
  output has left), its computed tokens advance by j + 1 (the rejected drafts' KV is dropped);
* the drafter's first pass runs over every token the target ran this step (prompt chunks too),
  with logits at each sequence's last position, then k − 1 passes of one token per sequence.
"""

from __future__ import annotations

import numpy as np

from calc.timing.speculative import Drafter
from calc.traffic.steptime import StepTimer


class SpeculativeSim:
    """Per-step speculative numbers for the simulator; ``seed`` fixes the accepted lengths drawn."""

    def __init__(self, drafter: Drafter, accepted_at_position, *, max_tokens: int, seed: int = 0) -> None:
        self.k = int(drafter.num_speculative_tokens)
        self.c = np.asarray(accepted_at_position, dtype=float)[: self.k]
        self.d = drafter
        self.rng = np.random.default_rng(seed)
        self.timer = StepTimer(drafter.engine, max_tokens=max_tokens) if drafter.engine is not None else None

    def accepted(self, drafts: np.ndarray) -> np.ndarray:
        """Accepted drafts per sequence with ``drafts`` proposed each: one uniform u per sequence,
        j = #{i ≤ drafts : u < c_i} (so P(j ≥ i) = c_i, c non-increasing)."""
        u = self.rng.random(drafts.size)
        j = (u[:, None] < self.c[None, :]) & (np.arange(1, self.k + 1)[None, :] <= drafts[:, None])
        return j.sum(axis=1)

    def draft_s(self, *, seqs: int, seq_keys_sum: float, tokens: int, pairs: float, cached: float) -> float:
        """The proposer's time this step: ``tokens`` target tokens (with their attention ``pairs``
        and ``cached`` keys) in the first pass, ``seqs`` sequences (Σ keys ``seq_keys_sum``) after."""
        d = self.d
        if seqs <= 0:
            return 0.0
        if self.timer is None:  # n-gram: CPU lookups
            return d.speculative_step_overhead_s + seqs * d.ngram_lookup_s_per_sequence
        first = self.timer(0, 0.0, tokens, pairs, cached, seqs)
        rest = self.timer(seqs, seq_keys_sum + seqs, 0, 0.0, 0.0, seqs) if self.k > 1 else 0.0
        return d.speculative_step_overhead_s + first + (self.k - 1) * rest + self.k * d.draft_pass_overhead_s
