"""The mean of :func:`calc.traffic.arrival_trains.train_ttft_s`, tabulated once and interpolated,
for callers that evaluate it over a million configurations (the closed loop of
:func:`calc.timing.serving.closed_loop`): the mixture itself costs ~0.1–0.6 ms per configuration.

Scaling: with steps linear in the prompts they carry, T_n = T_0 + n·P, every term of the mixture
is a time (T_n, the head's wait r = (b + ½)/R_BINS·T_n, the train spacing i·t_api, the follower's
comparisons of j·t_api with step starts and ends) or a probability that depends on α and on
ratios of times only (the length-biased w_n = P_α(n)·T_n / Σ P_α(j)·T_j). Scaling every time by
T_0 therefore scales (mean − fixed) by T_0:

    mean = fixed + T_0 · g(α, P/T_0, t_api/T_0, δ/T_0)

and g is a function of four numbers, δ = t_api + t_req the delay from a client's last finish (a
step end) to its request at the engine (:func:`calc.traffic.arrival_trains.step_in_flight`). The
table holds h = g / (3/2 + P/T_0), g over its α → 0 limit (half a decode step in flight, then a
step of one prompt: T_0/2 + T_0 + P), on a grid uniform in log α, log(P/T_0), log(t_api/T_0)
(AXES) and on DELAY_NODES in δ/T_0; :func:`train_mean_s` interpolates h multilinearly, linear in
log α and (g being close to affine in them) in P/T_0, t_api/T_0 and δ/T_0, the arguments clipped
to the grid's edges (below its low ends g no longer moves: α → 0 is the limit above, t_api → 0
adds nothing measurable; δ = 0 is the decode step's end itself; above δ = 1000·T_0 every step
likely in flight is shorter than δ, the length-biased limit).

The request reaches the engine D after its finish, D uniform on [0, 2δ]
(:func:`calc.traffic.arrival_trains.delay_half_width_s`; h/T_0 = δ/T_0, so the table keeps four
axes): g is continuous in δ/T_0 (a delay known exactly made δ/T_0 = 1 a step of a whole decode
step) and never falls as T_0 grows at fixed δ. DELAY_NODES, placed for that step (straddling it
at 1 ∓ 0.001), are kept: below δ/T_0 = 1/2 the first step after the finish is always the one
met (its rest T_n − D, g close to affine in δ: few nodes); the steps T_n = T_0 + n·P (n ≥ 1)
end within [0, 2δ] for δ/T_0 ≥ (1 + n·P/T_0)/2, which moves with P/T_0, and cells there carry
the interpolation's error (bench/train_table_check.py).

The table is ``calc/data/train_table.npz``, written by ``bench/make_train_table.py`` from
train_ttft_s itself (one source of truth); tests/test_train_table.py recomputes a sample of its
nodes and checks the interpolation against the mixture on random configurations.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from calc.traffic.arrival_trains import train_ttft_s

TABLE_PATH = Path(__file__).resolve().parents[1] / "data" / "train_table.npz"
# (low, high, points) of each axis, log-uniform: α (prompts per step), P/T_0, t_api/T_0
AXES = ((1e-3, 32.0, 31), (1e-3, 300.0, 31), (1e-3, 30.0, 19))
# δ/T_0 (δ = t_api + t_req; the defaults' 50 ms over decode steps of 5-100 ms: 0.5-10; offline
# runs' 2 ms: 0.02-0.4; the inputs' limits 0.2 ms-1.2 s): evenly below 1, dense just above it
# (where the steps T_n of small P/T_0 end), then about log-spaced; 11 nodes (0, 0.5, 0.999, 1.001,
# 1.3, 2, 4, 10, 30, 100, 1000) gave max 26.9 % / p99 4.4 % in bench/train_table_check.py, these 17.7 % / 3.3 %
DELAY_NODES = np.array([0.0, 0.25, 0.5, 0.75, 0.9, 0.999, 1.001, 1.05, 1.15, 1.3, 1.6, 2.0, 3.0, 4.0, 6.0, 10.0,
                        30.0, 100.0, 1000.0])


def axis_values(i: int) -> np.ndarray:
    """Grid values of axis ``i`` of AXES (log-uniform)."""
    lo, hi, n = AXES[i]
    return np.geomspace(lo, hi, n)


def reduced_mean(*, clump, prompt_ratio, api_ratio, delay_ratio):
    """h = g / (3/2 + P/T_0) straight from the mixture (T_0 = 1, fixed 0): what the table holds.

    α → 0 at P/T_0 = 5, δ long (δ/T_0 = 1000, length-biased): g = 1/2 + 1 + 5 = 6.5, h = 1.
    δ/T_0 = 0.5: the decode step that started at the finish is met, its rest 1/2: h = 1 again.

    (The delay spread uniformly on [0, 2δ] meets the decode steps at a phase that is uniform only up to
    an edge term of order T_0/δ: 1.00002 here.)

    >>> round(float(reduced_mean(clump=1e-9, prompt_ratio=5.0, api_ratio=0.5, delay_ratio=1000.0)), 4)
    1.0
    >>> round(float(reduced_mean(clump=1e-9, prompt_ratio=5.0, api_ratio=0.5, delay_ratio=0.5)), 6)
    1.0
    """
    a, p, t, d = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (clump, prompt_ratio, api_ratio,
                                                                             delay_ratio)))
    g, _ = train_ttft_s(step_s=lambda n: 1.0 + p * n, clump=a, fixed_s=0.0, api_s=t, q=None, delay_s=d)
    return g / (1.5 + p)


def build_table() -> np.ndarray:
    """h on the grid, shape (len α, len P/T_0, len t_api/T_0, len DELAY_NODES), in chunks of the α axis."""
    a, p, t = (axis_values(i) for i in range(3))
    out = np.empty((a.size, p.size, t.size, DELAY_NODES.size))
    for j in range(a.size):
        out[j] = reduced_mean(clump=a[j], prompt_ratio=p[:, None, None], api_ratio=t[None, :, None],
                              delay_ratio=DELAY_NODES[None, None, :])
    return out


@cache
def _table():
    with np.load(TABLE_PATH) as z:
        h = z["h"]
        if h.shape != (*(n for _, _, n in AXES), DELAY_NODES.size) or not np.allclose(z["axes"], np.array(AXES)) \
                or not np.array_equal(z["delay_nodes"], DELAY_NODES):
            raise ValueError(f"{TABLE_PATH.name} does not match AXES: run bench/make_train_table.py")
    lo = np.log([ax[0] for ax in AXES])
    step = (np.log([ax[1] for ax in AXES]) - lo) / (np.array([ax[2] for ax in AXES]) - 1.0)
    return h.ravel(), lo, step, h.shape, tuple(axis_values(i) for i in range(3))


def _coord(x, i, lo, step, nodes, linear):
    """(lower node index, weight of the upper node) of x on axis i, clipped to the grid; the
    weight linear in log x, or in x itself (``linear``: g is close to affine in P and in t_api)."""
    n = nodes.size
    x = np.clip(x, nodes[0], nodes[-1])
    u = (np.log(x) - lo[i]) / step[i]
    j = np.clip(u.astype(np.intp), 0, n - 2)
    if linear:
        below = nodes[j]
        return j, np.clip((x - below) / (nodes[j + 1] - below), 0.0, 1.0)
    return j, np.clip(u - j, 0.0, 1.0)


def train_mean_s(*, decode_step_s, prompt_s, clump, fixed_s, api_s, delay_s):
    """Mean TTFT of :func:`calc.traffic.arrival_trains.train_ttft_s` (its ``delay_s`` δ) for
    linear steps T_n = T_0 + n·P (``decode_step_s`` T_0, ``prompt_s`` P), from the table (module
    docstring): fixed + T_0 · (3/2 + P/T_0) · h(α, P/T_0, t_api/T_0, δ/T_0). Broadcasts.

    α → 0 (prompts rare), T_0 = 10 ms, P = 50 ms, fixed 50 ms, δ long (10 s, the length-biased
    limit): 50 + 10/2 + 60 = 115 ms, as train_ttft_s's own hand-worked example; α below the grid
    reads as its edge, α = 0.001, where a prompt is rarely in the step in flight: 115.2 ms.
    δ = 5 ms: the decode step that started at the finish is met with 5 ms left, as the 10/2 above
    (115.1 ms at α = 0.001).

    >>> round(float(train_mean_s(decode_step_s=0.01, prompt_s=0.05, clump=1e-9, fixed_s=0.05, api_s=0.02, delay_s=10.0)), 4)
    0.1152
    >>> round(float(train_mean_s(decode_step_s=0.01, prompt_s=0.05, clump=1e-9, fixed_s=0.05, api_s=0.02, delay_s=0.005)), 4)
    0.1151
    """
    flat, lo, step, (na, npr, nt, nd), nodes = _table()
    t0 = np.maximum(np.asarray(decode_step_s, dtype=float), 1e-300)
    p = np.asarray(prompt_s, dtype=float) / t0
    ia, fa = _coord(np.asarray(clump, dtype=float), 0, lo, step, nodes[0], False)
    ip, fp = _coord(p, 1, lo, step, nodes[1], True)
    it, ft = _coord(np.asarray(api_s, dtype=float) / t0, 2, lo, step, nodes[2], True)
    d = np.clip(np.asarray(delay_s, dtype=float) / t0, DELAY_NODES[0], DELAY_NODES[-1])
    idl = np.clip(np.searchsorted(DELAY_NODES, d, side="right") - 1, 0, nd - 2)
    below = DELAY_NODES[idl]
    fd = np.clip((d - below) / (DELAY_NODES[idl + 1] - below), 0.0, 1.0)
    base = ((ia * npr + ip) * nt + it) * nd + idl
    h = 0.0
    for da, wa in ((0, 1.0 - fa), (npr * nt * nd, fa)):
        for dp, wp in ((0, 1.0 - fp), (nt * nd, fp)):
            for dt, wt in ((0, 1.0 - ft), (nd, ft)):
                k = base + (da + dp + dt)
                h = h + (wa * wp * wt) * ((1.0 - fd) * flat[k] + fd * flat[k + 1])
    return np.asarray(fixed_s, dtype=float) + t0 * (1.5 + p) * h
