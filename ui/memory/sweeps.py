"""Which points a sweep shows: inputs for ``calc`` (no model maths here).

A sweep is a short, readable list of x values that always contains the user's setting and the
edge of what fits, so the chart shows exactly where it stops fitting.
"""

from __future__ import annotations

import numpy as np


def concurrency_points(*, chosen: int, max_fit: int, limit: int = 1024) -> np.ndarray:
    """Powers of two up to twice what fits (at least 8; next power of two), plus the user's value, the last
    count that fits and the first that does not.

    >>> concurrency_points(chosen=16, max_fit=28).tolist()
    [1, 2, 4, 8, 16, 28, 29, 32, 64]
    >>> concurrency_points(chosen=3, max_fit=0).tolist()
    [1, 2, 3, 4, 8]
    """
    want = int(min(max(2 * max_fit, 8, chosen), max(limit, chosen)))
    top = 1 << max(0, (want - 1).bit_length())  # first power of two >= want
    pts = {2**k for k in range(0, 31) if 2**k <= top} | {chosen}
    if max_fit >= 1:
        pts |= {max_fit, max_fit + 1}
    return np.array(sorted(p for p in pts if 1 <= p <= max(top, max_fit + 1)), dtype=np.int64)


def context_points(*, chosen: int, max_model_len: int, start: int = 256) -> np.ndarray:
    """Powers of two from ``start`` to ``max_model_len``, plus the user's value and ``max_model_len``.

    >>> context_points(chosen=2048, max_model_len=4096).tolist()
    [256, 512, 1024, 2048, 4096]
    >>> context_points(chosen=3000, max_model_len=5000).tolist()
    [256, 512, 1024, 2048, 3000, 4096, 5000]
    """
    pts = {2**k for k in range(0, 40) if start <= 2**k <= max_model_len} | {chosen, max_model_len}
    return np.array(sorted(p for p in pts if p <= max_model_len), dtype=np.int64)
