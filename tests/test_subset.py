"""calc.timing.subset: compress by a mask, compute, scatter back; and closed_loop, which computes its
arrival-train and FCFS-wave terms that way, gives on a grid the numbers of one-by-one calls."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import ServingConfig
from calc.timing.estimate import engine_numbers
from calc.timing.serving import EngineNumbers, closed_loop
from calc.timing.subset import Subset, grid_shape


def test_take_gathers_broadcast_inputs_without_expanding_them():
    # grid (2, 3, 2); selected: (0, 1, 0), (1, 2, 1), flat indices 2 and 11
    mask = np.zeros((2, 3, 2), dtype=bool)
    mask[0, 1, 0] = mask[1, 2, 1] = True
    s = Subset(mask, (2, 3, 2))
    assert s.size == 2 and not s.all and s.flat.tolist() == [2, 11]
    full = np.arange(12.0).reshape(2, 3, 2)
    assert s.take(full).tolist() == [2.0, 11.0]
    assert s.take(np.array([10.0, 20.0]).reshape(2, 1, 1)).tolist() == [10.0, 20.0]   # axis 0 only
    assert s.take(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).tolist() == [3.0, 6.0]  # axes 1, 2: [1,0], [2,1]
    assert s.take(np.array([5.0]).reshape(1, 1, 1)) == 5.0 and s.take(7.0) == 7.0 and s.take(None) is None


def test_put_fills_the_rest_from_the_full_array():
    s = Subset(np.array([True, False, True]), (2, 3))
    out = s.put(np.array([[0.0], [1.0]]), np.array([7.0, 8.0, 9.0, 10.0]))
    assert out.tolist() == [[7.0, 0.0, 8.0], [9.0, 1.0, 10.0]]
    assert s.put(np.nan, np.zeros(4)).shape == (2, 3)


def test_zero_dimensional_grid():
    s = Subset(True, ())
    assert s.all and s.size == 1
    assert float(s.put(0.0, np.array([3.0]))) == 3.0


def test_take_fields_and_grid_shape_of_a_dataclass():
    @dataclasses.dataclass
    class Pair:
        a: object
        b: object = None

    p = Pair(a=np.array([1.0, 2.0, 3.0]).reshape(3, 1))
    assert grid_shape(np.zeros(4), obj=p) == (3, 4)
    s = Subset(np.eye(3, 4, dtype=bool), (3, 4))
    q = s.take_fields(p)
    assert q.a.tolist() == [1.0, 2.0, 3.0] and q.b is None


@pytest.mark.parametrize("uniform", [False, True, "mixed"])
def test_closed_loop_grid_equals_one_by_one(uniform):
    """Two GPUs stacked along axis 0 x concurrency x input_len, chunked: the trains mask (spread,
    prompt in one step, C > 1) and the wave mask (uniform) select part of the grid; every element
    equals the scalar call, bit for bit."""
    arch = get_model("meta-llama/Llama-3.1-8B")
    gpus = [get_gpu("a100-80gb"), get_gpu("h100-sxm")]
    engines = [engine_numbers(arch, g, ServingConfig()) for g in gpus]
    fields = {}
    for f in dataclasses.fields(EngineNumbers):
        v = [getattr(x, f.name) for x in engines]
        fields[f.name] = v[0] if all(np.array_equal(v[0], w) for w in v[1:]) else np.asarray(v, float).reshape(2, 1, 1)
    stacked = EngineNumbers(**fields)
    conc = np.array([1.0, 8.0, 64.0]).reshape(1, 3, 1)
    inp = np.array([128.0, 3000.0, 9000.0]).reshape(1, 1, 3)  # 9000 > budget 8192: two chunks, no trains
    uni = np.array(uniform) if uniform != "mixed" else np.array([True, False, False]).reshape(1, 3, 1)
    kw = dict(output_len=200.0, max_num_seqs=256.0, max_num_batched_tokens=8192.0, enable_chunked_prefill=True,
              kv_capacity_tokens=400_000.0, fits=True)
    grid = closed_loop(stacked, input_len=inp, concurrency=conc, uniform_lengths=uni, **kw)
    shape = (2, 3, 3)
    for ix in np.ndindex(*shape):
        one = closed_loop(engines[ix[0]], input_len=float(inp[0, 0, ix[2]]), concurrency=float(conc[0, ix[1], 0]),
                          uniform_lengths=bool(np.broadcast_to(uni, shape)[ix]), **kw)
        for f in dataclasses.fields(one):
            g = np.broadcast_to(getattr(grid, f.name), shape)[ix]
            assert np.array_equal(g, getattr(one, f.name), equal_nan=g.dtype.kind == "f"), (ix, f.name)
