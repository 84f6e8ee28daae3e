"""ui.overlap: which points of a scatter sit in the same small cell (drawn on top of one another)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.overlap import first_per_cell


def test_by_hand_log_cells():
    # span 1..100 in log10 = 0..2, 10 cells: width 0.2 decade. log10(1.2)=0.079 -> cell 0 (as 1);
    # log10(2)=0.301 -> cell 1; log10(100)=2 -> the top edge, last cell 9
    x = [1.0, 1.2, 2.0, 100.0]
    y = [1.0, 1.0, 1.0, 100.0]
    assert first_per_cell(x, y, cells_x=10, cells_y=10).tolist() == [True, False, True, True]


def test_first_in_order_wins_and_linear_axes():
    # linear span 0..10, 5 cells of 2: 0.5 and 1.5 share cell 0; the first one given is kept
    assert first_per_cell([1.5, 0.5, 9.0], [0.0, 0.0, 10.0], cells_x=5, cells_y=5, log=False).tolist() == [True, False, True]


def test_explicit_span_and_non_finite_kept():
    m = first_per_cell([1.0, 1.0, np.nan, -1.0], [1.0, 1.0, 1.0, 1.0], cells_x=4, cells_y=4, span_x=(1, 10), span_y=(1, 10))
    assert m.tolist() == [True, False, True, True]  # NaN and a non-positive x on a log axis: not drawn anyway, kept


def test_rejects_no_cells():
    with pytest.raises(ValueError, match="cells_x"):
        first_per_cell([1.0], [1.0], cells_x=0, cells_y=1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 1e4), st.floats(0.01, 1e4)), min_size=1, max_size=60),
       st.integers(1, 50), st.integers(1, 50))
def test_one_per_occupied_cell(points, cx, cy):
    x, y = np.array(points).T
    m = first_per_cell(x, y, cells_x=cx, cells_y=cy)
    u, v = np.log10(x), np.log10(y)

    def cell(a, n):
        w = a.max() - a.min()
        return np.zeros(a.shape, int) if w == 0 else np.clip(np.floor((a - a.min()) / w * n), 0, n - 1).astype(int)

    cells = list(zip(cell(u, cx), cell(v, cy)))
    assert m.sum() == len(set(cells))  # one kept per occupied cell
    assert m[0]  # the first point is always kept
    seen = set()
    for c, keep in zip(cells, m):  # the kept one is the first of its cell
        assert keep == (c not in seen)
        seen.add(c)
