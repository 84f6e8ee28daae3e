"""What a simulation will cost before it runs: a lower bound on its engine steps and loop passes,
the CPU seconds and bytes that follow, and the caps that keep a run within a budget.

The simulator (:func:`calc.traffic.simulator.simulate`) runs one loop pass per engine step,
except runs of pure decode steps, which are fast-forwarded in one pass. So, for N requests of
prompt P_i and output O_i, a token budget B (``max_num_batched_tokens``; without chunked prefill
at least the longest prompt) and at most S sequences per step (``max_num_seqs``, and at most the
C clients of a closed loop):

* steps  ≥ max(Σ(P_i + O_i) / B, Σ O_i / S)  (every token is computed in some step, each step
  computes ≤ B tokens and decodes ≤ S sequences);
* passes ≥ Σ P_i / B  (a step that computes prompt tokens is never fast-forwarded);
* CPU    ≈ passes · :data:`SECONDS_PER_PASS` + steps · :data:`SECONDS_PER_STEP`;
* memory ≈ steps · :data:`BYTES_PER_STEP` (seven per-step series: typed arrays, then NumPy)
  + 8 B per output token for the inter-token gaps, at most :data:`ITL_MAX_SAMPLES` of them kept
  (the simulator keeps a quantile sketch and the exact mean beyond that).

With speculative decoding of k drafts (``num_speculative_tokens``) a decoding sequence is
scheduled 1 + k tokens a step and gains at most 1 + k (its token and every draft accepted), so
the output bound becomes Σ ⌈O_i / (1 + k)⌉ / S, and the token bound counts the 1 + k tokens of
each of a request's ≥ ⌈(O_i − 1) / (1 + k)⌉ verify steps: (Σ P_i + (1 + k)·Σ ⌈(O_i − 1)/(1 + k)⌉) / B.
Runs of pure speculative decode steps are fast-forwarded too (their accepted lengths drawn as a
matrix, :meth:`calc.traffic.speculative.SpeculativeSim.decode_run`), so passes ≥ Σ P_i / B as
without; but such a step costs :data:`SECONDS_PER_SPEC_STEP` (its target and drafter step times
are computed one by one), about five times a plain fast-forwarded step.

Both bounds are lower bounds: a run that passes the budget on them surely passes it for real, so
refusing it is safe; a run they underestimate (preemptions, an open loop that batches less than
S) is stopped by :func:`caps` (``truncated`` set on the result, shown as partial).

The per-pass and per-step constants were measured on one core of a 2-core workshop box
(``bench/budget_urls.py``): a pass is the loop's Python and NumPy overhead, ~80 µs at a few
hundred running requests; a fast-forwarded step ~1 µs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SECONDS_PER_PASS = 80e-6  # one general scheduler pass (measured, see the module doc)
SECONDS_PER_STEP = 1.25e-6  # one fast-forwarded decode step (measured)
SECONDS_PER_SPEC_STEP = 6e-6  # one fast-forwarded speculative step, a few running requests (measured)
SLOWEST_PASS_S = 300e-6  # a general pass of the dearest engine (EP all-to-all, PP round; bench/planner_unit_cost.py): the caps
BYTES_PER_STEP = 128  # 7 series × 8 B typed arrays while running, then 7 × 8 B NumPy arrays (+ slack)
ITL_MAX_SAMPLES = 1 << 20  # inter-token gaps kept exactly (8 MiB); a quantile sketch of this size beyond
BYTES_PER_REQUEST = 12 * 8  # per-request arrays of the result


@dataclass(frozen=True)
class WorkEstimate:
    """Lower bounds on one simulation's work and the CPU / memory they imply."""

    steps: int
    passes: int
    cpu_s: float
    peak_bytes: int


def estimate_work(*, input_len, output_len, max_num_batched_tokens: int, max_num_seqs: int,
                  enable_chunked_prefill: bool = True, closed_clients: int = 0,
                  num_speculative_tokens: int = 0) -> WorkEstimate:
    """Lower bounds on the steps and passes of simulating requests of ``input_len`` / ``output_len``
    tokens (arrays, one per request), the CPU seconds and peak bytes they imply (module doc);
    ``num_speculative_tokens`` k > 0: speculative decoding (module doc).

    >>> w = estimate_work(input_len=[100_000] * 5000, output_len=[16] * 5000, max_num_batched_tokens=16,
    ...                   max_num_seqs=1024)                       # issue 18's load-test link
    >>> w.passes, round(w.cpu_s)                                   # 31 M chunks of 16 tokens: 41 min
    (31250000, 2539)
    >>> estimate_work(input_len=[1024] * 2000, output_len=[256] * 2000, max_num_batched_tokens=8192,
    ...               max_num_seqs=256).cpu_s < 0.1                 # the page's default: nothing
    True
    """
    p = np.asarray(input_len, dtype=np.int64)
    o = np.asarray(output_len, dtype=np.int64)
    budget = int(max_num_batched_tokens)
    if not enable_chunked_prefill and p.size:
        budget = max(budget, int(p.max()))
    budget = max(budget, 1)
    seqs = max(1, int(max_num_seqs))
    if closed_clients > 0:
        seqs = min(seqs, int(closed_clients))
    total_p, total_o = int(p.sum()), int(o.sum())
    k = max(0, int(num_speculative_tokens))
    if k:
        per = k + 1  # tokens a verify step schedules for a sequence, and the most it gains
        verify = -(-np.maximum(o - 1, 0) // per)  # ⌈(O_i − 1)/(1 + k)⌉ verify steps at least
        most_per_step = int((-(-o // per)).sum())  # Σ ⌈O_i / (1 + k)⌉
        steps = max(math.ceil((total_p + per * int(verify.sum())) / budget), math.ceil(most_per_step / seqs))
    else:
        steps = max(math.ceil((total_p + total_o) / budget), math.ceil(total_o / seqs))
    passes = math.ceil(total_p / budget)
    cpu_s = passes * SECONDS_PER_PASS + steps * (SECONDS_PER_SPEC_STEP if k else SECONDS_PER_STEP)
    peak = steps * BYTES_PER_STEP + 8 * min(total_o, ITL_MAX_SAMPLES) + p.size * BYTES_PER_REQUEST
    return WorkEstimate(steps=steps, passes=passes, cpu_s=float(cpu_s), peak_bytes=int(peak))


def caps(*, cpu_s: float, memory_bytes: int, speculative: bool = False) -> tuple[int, int]:
    """(max_steps, max_passes) for :func:`calc.traffic.simulator.simulate` within ``cpu_s`` seconds
    and ``memory_bytes`` of per-step series: a run the estimate missed stops there (truncated);
    ``speculative``: its steps cost :data:`SECONDS_PER_SPEC_STEP`.

    >>> caps(cpu_s=15.0, memory_bytes=256 * 2**20)
    (2097152, 50000)
    """
    max_passes = max(1, round(cpu_s / SLOWEST_PASS_S))
    per_step = SECONDS_PER_SPEC_STEP if speculative else SECONDS_PER_STEP
    max_steps = max(1, min(int(cpu_s / per_step), int(memory_bytes // BYTES_PER_STEP)))
    return max_steps, max_passes
