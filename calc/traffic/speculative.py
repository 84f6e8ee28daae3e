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

Fast-forward (:meth:`SpeculativeSim.decode_run`): while every running request decodes, nobody
can be admitted and the batch's 1 + k tokens each fit the budget, the batch is fixed until a
request finishes, a request arrives into an empty queue or the KV pool runs out. Each step every
sequence gains 1 + j tokens, j drawn as in :meth:`SpeculativeSim.accepted`; so the draws of m
steps are one (m, R) matrix, their cumulative sums per sequence give each step's computed
tokens, and with them the first finish, the first step whose blocks do not fit, and every
step's time (the same :class:`~calc.traffic.steptime.StepTimer` calls as the scheduler's pass).
The uniforms come from one stream in the same order as step by step (draws not used are put
back), so a seed gives the same accepted lengths, step times and per-request times either way.
"""

from __future__ import annotations

import numpy as np

from calc.timing.roofline import causal_attention_pairs, windowed_context_tokens
from calc.timing.speculative import Drafter
from calc.traffic.steptime import StepTimer


def _ceil_div(a, b):
    return -(-a // b)


class SpeculativeSim:
    """Per-step speculative numbers for the simulator; ``seed`` fixes the accepted lengths drawn."""

    def __init__(self, drafter: Drafter, accepted_at_position, *, max_tokens: int, seed: int = 0) -> None:
        self.k = int(drafter.num_speculative_tokens)
        self.c = np.asarray(accepted_at_position, dtype=float)[: self.k]
        self.d = drafter
        self.rng = np.random.default_rng(seed)
        self._spare = np.zeros(0)  # uniforms drawn ahead by decode_run and not used, next in the stream
        self.timer = StepTimer(drafter.engine, max_tokens=max_tokens) if drafter.engine is not None else None

    def accepted(self, drafts: np.ndarray) -> np.ndarray:
        """Accepted drafts per sequence with ``drafts`` proposed each: one uniform u per sequence,
        j = #{i ≤ drafts : u < c_i} (so P(j ≥ i) = c_i, c non-increasing)."""
        u = self._uniforms(drafts.size)
        j = (u[:, None] < self.c[None, :]) & (np.arange(1, self.k + 1)[None, :] <= drafts[:, None])
        return j.sum(axis=1)

    def _uniforms(self, n: int) -> np.ndarray:
        """The next ``n`` uniforms of the stream (the spare ones first)."""
        if self._spare.size >= n:
            u, self._spare = self._spare[:n], self._spare[n:]
            return u
        u = np.concatenate([self._spare, self.rng.random(n - self._spare.size)])
        self._spare = np.zeros(0)
        return u

    def decode_run(self, timer, *, now: float, rc, rg, ro, rh, free: int, bs: int, arrival_s: float,
                   steps_left: int, sequence_overhead_s: float, sliding=None):
        """Speculative decode steps of a fixed batch, fast-forwarded (module doc). ``rc`` / ``rg`` /
        ``ro`` / ``rh``: the running requests' computed tokens, generated and output tokens, blocks
        held; ``free`` blocks in the pool; ``arrival_s``: no step starts at or after it (except the
        first); ``sliding``: (φ, W) or None. Every sequence is scheduled its token and k drafts.
        Returns None when the first step's blocks do not fit, else (step starts, step seconds,
        blocks taken through each step, tokens gained per sequence, blocks held after)."""
        R, k = int(rc.size), self.k
        c = k + 1
        left = ro - rg
        min_left = int(left.min())
        tau = 1.0 + float(self.c.sum())
        # steps drawn: the expected steps to the first finish and 3 standard deviations (the gain per
        # step varies by ~1.2 tokens), at most 2^18 draws; when no event comes within them the
        # scheduler's next pass continues the run
        x = min_left / tau
        m = max(1, min(min_left, int(steps_left), int(x + 3.0 * np.sqrt(x)) + 4, (1 << 18) // R))
        u = self._uniforms(m * R).reshape(m, R)
        cum = np.cumsum((u[:, :, None] < self.c[None, None, :]).sum(axis=2) + 1, axis=0)  # gained through step t
        done = (cum >= left[None, :]).any(axis=1)
        n = int(np.argmax(done)) + 1 if done.any() else m  # through the first step someone finishes
        start = rc[None, :] + np.vstack([np.zeros((1, R), dtype=cum.dtype), cum[:-1]])  # computed at each step's start
        taken = _ceil_div(start + c, bs).sum(axis=1) - int(rh.sum())  # blocks taken through step t
        fits = taken <= free
        n = min(n, int(np.argmin(fits)) if not fits.all() else m)
        if n == 0:
            self._spare = np.concatenate([u.ravel(), self._spare])
            return None
        st = start[:n].astype(float)
        if sliding is None:
            cached = st.sum(axis=1)
            pairs = c * cached + R * c * (c + 1) / 2.0
        else:
            phi, window = sliding
            pairs = ((1.0 - phi) * causal_attention_pairs(new_tokens=float(c), cached_tokens=st)
                     + phi * causal_attention_pairs(new_tokens=float(c), cached_tokens=st, window=window)).sum(axis=1)
            cached = windowed_context_tokens(context_tokens=st, sliding_window=window, sliding_fraction=phi).sum(axis=1)
        gained = np.minimum(cum[:n], left[None, :])
        keys_after = (rc[None, :] + gained).sum(axis=1).astype(float)
        extra = R * k
        starts, dts = [], []
        t = now
        for i, (pr, ca, ka) in enumerate(zip(pairs.tolist(), cached.tolist(), keys_after.tolist())):
            if i and t >= arrival_s - 1e-12:
                break
            dt = timer(0, 0.0, R * c, pr, ca, R + extra) - extra * sequence_overhead_s
            dt += self.draft_s(seqs=R, seq_keys_sum=ka, tokens=R * c, pairs=0.0 + pr, cached=ca)
            starts.append(t)
            dts.append(dt)
            t = t + dt
        n_run = len(dts)
        self._spare = np.concatenate([u[n_run:].ravel(), self._spare])
        return starts, dts, taken[:n_run], gained[n_run - 1], _ceil_div(start[n_run - 1] + c, bs)

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
