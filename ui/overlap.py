"""Points a chart would draw on top of one another: which of them can be left out unseen.

A scatter of a few thousand configurations (the planner's) holds many points within a pixel or two
of another of the same colour: configurations that differ only in a setting that does not change
their cost or latency (``max_num_seqs`` above the concurrency the rate needs), or hardly. Drawn,
they cost the browser's main thread (and figure JSON) without showing anything: the marker on top
hides the rest, and the hover reaches the one on top. :func:`first_per_cell` keeps, of the points
falling in one cell of a grid over the plotted span, the first in the given order (the caller
orders them: the planner, cheapest first), so what is left is the same picture.
"""

from __future__ import annotations

import numpy as np


def first_per_cell(x, y, *, cells_x: int, cells_y: int, log: bool = True, span_x=None, span_y=None) -> np.ndarray:
    """Boolean mask: True for the first point (in array order) of each grid cell.

    The grid divides the span of ``x`` and ``y`` (``span_x``/``span_y`` as (lo, hi), by default
    the data's own; in log10 when ``log``: the chart's log axes) into ``cells_x`` by ``cells_y``
    equal cells; cell of a point = floor((v - lo) / (hi - lo) * cells), the top edge in the last
    cell. Non-finite (or, on log axes, non-positive) points are kept: nothing is hidden that the
    chart would not draw anyway.

    >>> first_per_cell([1.0, 1.001, 10.0], [1.0, 1.0, 10.0], cells_x=100, cells_y=100).tolist()
    [True, False, True]
    """
    if cells_x < 1 or cells_y < 1:
        raise ValueError("cells_x and cells_y must be at least 1")
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        u, v = (np.log10(x), np.log10(y)) if log else (x, y)
    ok = np.isfinite(u) & np.isfinite(v)
    keep = np.ones(x.shape, dtype=bool)
    if not ok.any():
        return keep

    def cell(a: np.ndarray, span, n: int) -> np.ndarray:
        lo, hi = (float(a[ok].min()), float(a[ok].max())) if span is None else (
            (np.log10(span[0]), np.log10(span[1])) if log else span)
        width = hi - lo
        if not width > 0:
            return np.zeros(a[ok].shape, dtype=np.int64)
        return np.clip(np.floor((a[ok] - lo) / width * n), 0, n - 1).astype(np.int64)

    flat = cell(u, span_x, cells_x) * cells_y + cell(v, span_y, cells_y)
    _, first = np.unique(flat, return_index=True)  # index of each cell's first point
    kept = np.zeros(flat.shape, dtype=bool)
    kept[first] = True
    keep[np.flatnonzero(ok)] = kept
    return keep
