"""Evaluate a term only on the configurations it applies to: compress a grid by a boolean mask,
compute on the selected elements (a 1-D array), scatter the results back.

:func:`calc.timing.serving.closed_loop` runs over a million configurations at once (the frontier,
the planner); some of its terms apply to part of the grid only (the arrival-train mixture to
spread arrivals whose prompt fits one step, the FCFS wave to uniform lengths) and cost as much
per element as the rest. Every formula there is elementwise, so computing on the compressed
elements gives the same numbers, bit for bit, as computing on the whole grid and selecting.

bench/bench_frontier.py's grid (2,097,152 configurations, spread arrivals), per million, medians
of 8 calls alternating trees in one session on a shared 2-core machine: user CPU main 1.54 s,
the trains term over the whole grid (branch table) 1.97 s, computed on its mask with the FCFS
wave on its own (empty) mask 1.22 s; wall 9.9 / 6.0 / 4.6 s (page faults of a loaded machine
dominate wall). The trains mask alone, the wave still over the whole grid: 1.53 s against main's
1.35 s in another 4 alternating calls (+13 %): the wave's mask is what makes it no slower.
Step-time evaluations: main 8 over the grid, table 9, here 6 plus 1 over the 38 % the trains
mask selects.

Inputs broadcast to the grid's shape; a size-1 axis is read at index 0 (a GPU-only array of shape
(4, 1, 1, 1, 1, 1) is gathered, never expanded to the grid), a scalar stays a scalar.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np


class Subset:
    """The elements of a grid of ``shape`` where ``mask`` (broadcast to it) is True.

    >>> s = Subset(np.array([[True], [False]]), (2, 3))
    >>> s.size
    3
    >>> s.take(np.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 2.0, 3.0]
    >>> s.put(np.zeros((2, 1)), np.array([7.0, 8.0, 9.0])).tolist()
    [[7.0, 8.0, 9.0], [0.0, 0.0, 0.0]]
    """

    def __init__(self, mask, shape):
        self.shape = tuple(shape)
        m = np.broadcast_to(np.asarray(mask, dtype=bool), self.shape)
        self.all = bool(m.all())
        self.flat = np.flatnonzero(m)  # flat (C-order) indices of the selected elements
        self.size = int(self.flat.size)
        self._index = {}  # per pattern of non-size-1 axes: flat indices into an array of that shape
        self._coords = None

    def _flat_index(self, axes: tuple):
        """Flat indices of the selected elements in an array whose size-1 axes are all but ``axes``."""
        if axes not in self._index:
            if self._coords is None:
                self._coords = np.unravel_index(self.flat, self.shape)
            self._index[axes] = np.ravel_multi_index([self._coords[d] for d in axes], [self.shape[d] for d in axes])
        return self._index[axes]

    def take(self, x):
        """x (broadcastable to the grid) at the selected elements: a 1-D array, or x if scalar."""
        if x is None or np.ndim(x) == 0:
            return x
        x = np.asarray(x)
        if x.shape == self.shape:
            return x.reshape(-1)[self.flat]
        shape = (1,) * (len(self.shape) - x.ndim) + x.shape
        axes = tuple(d for d, n in enumerate(shape) if n > 1)
        if not axes:
            return x.reshape(())
        return x.reshape(-1)[self._flat_index(axes)]

    def put(self, full, values):
        """A grid-shaped copy of ``full`` (broadcast) with ``values`` at the selected elements."""
        values = np.asarray(values)
        dtype = np.result_type(np.asarray(full).dtype, values.dtype)
        out = np.array(np.broadcast_to(full, self.shape), dtype=dtype)
        out.reshape(-1)[self.flat] = values
        return out

    def take_fields(self, obj):
        """A dataclass (e.g. :class:`calc.timing.serving.EngineNumbers`) with every field taken."""
        return type(obj)(**{f.name: self.take(getattr(obj, f.name)) for f in fields(obj)})


def grid_shape(*arrays, obj=None) -> tuple:
    """The broadcast shape of ``arrays`` and of every field of the dataclass ``obj``."""
    shapes = [np.shape(a) for a in arrays]
    if obj is not None:
        shapes += [np.shape(v) for f in fields(obj) if (v := getattr(obj, f.name)) is not None]
    return np.broadcast_shapes(*shapes)
