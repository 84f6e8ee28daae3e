"""Workloads for the simulator: arrival processes, length distributions and traces (seeded).

Arrivals (seconds from t = 0, sorted):
* ``poisson``: exponential inter-arrival times of mean 1/λ (coefficient of variation 1);
* ``gamma``: gamma inter-arrival times of mean 1/λ and coefficient of variation CV (shape
  k = 1/CV², scale 1/(λ·k)); CV > 1 is burstier than Poisson, CV < 1 smoother, CV = 1 Poisson;
* ``burst``: all N requests at t = 0;
* ``closed``: C clients, each sending its next request ``think_s`` after the previous one
  returns (the simulator assigns those arrival times; vLLM's ``benchmark_serving
  --max-concurrency C`` with think time 0).
A client cap on an open loop (``max_concurrency`` C with poisson, gamma or burst arrivals: ``vllm bench
serve --request-rate R --max-concurrency C``): request i is sent at max(a_i, the time one of the C slots
frees), in order; the benchmark starts a request's clock when it is sent (after its semaphore).
Lengths: ``fixed``, ``uniform`` on [lo, hi], or ``lognormal`` by mean and CV
(σ² = ln(1 + CV²), μ = ln(mean) − σ²/2), rounded to whole tokens ≥ 1 and cut at a maximum.
Lognormal pairs may be kept only inside a benchmark sampler's bounds (:class:`SampleBounds`,
:func:`bounded_lognormal_pairs`: ``vllm bench``'s ShareGPT filter), with their sample means the asked means.
A trace (CSV with a header, or JSON lines) gives arrival_s, input_len, output_len per request;
lines may end in LF, CRLF or a lone CR (old Excel / Mac exports).
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
import statistics
from dataclasses import dataclass
from typing import Literal

import numpy as np

from calc.spec.untrusted import InputError, load_json, shorten

ARRIVALS: tuple[str, ...] = ("poisson", "gamma", "closed", "burst")
LENGTH_KINDS: tuple[str, ...] = ("fixed", "uniform", "lognormal")
MAX_REQUESTS = 200_000
MAX_TRACE_BYTES = 20_000_000
MAX_TOKENS = 10_000_000


class WorkloadError(ValueError):
    """Invalid workload input; the message names the field (and line for traces)."""


@dataclass(frozen=True)
class Workload:
    """Requests to simulate. ``arrival_s`` is NaN for a closed loop (the simulator assigns it); with
    ``closed_clients`` C and finite ``arrival_s``, an open loop capped at C requests in flight (module
    docstring: each request is sent at the later of its arrival and a free slot)."""

    arrival_s: np.ndarray  # (N,) sorted, or NaN for closed loop
    input_len: np.ndarray  # (N,) int64
    output_len: np.ndarray  # (N,) int64
    closed_clients: int = 0  # C > 0: closed loop of C clients (or the cap of an open loop)
    think_s: float = 0.0

    @property
    def num_requests(self) -> int:
        return int(self.input_len.size)

    @property
    def closed(self) -> bool:
        return self.closed_clients > 0

    @functools.cached_property  # read at every completion of a run: computed once
    def capped(self) -> bool:
        """An open loop with a client cap (``closed_clients`` slots, arrivals given)."""
        return self.closed and bool(np.isfinite(self.arrival_s).all())


@dataclass(frozen=True)
class LengthSpec:
    """A token-length distribution: fixed ``mean``; uniform on [lo, hi]; lognormal by mean and cv."""

    kind: Literal["fixed", "uniform", "lognormal"] = "fixed"
    mean: float = 1024.0
    lo: int = 1
    hi: int = 1
    cv: float = 0.5

    def sample(self, n: int, rng: np.random.Generator, *, field: str, max_tokens: int = MAX_TOKENS) -> np.ndarray:
        """``n`` whole-token lengths in [1, max_tokens].

        >>> LengthSpec("fixed", mean=128).sample(3, np.random.default_rng(0), field="input_len").tolist()
        [128, 128, 128]
        """
        if self.kind not in LENGTH_KINDS:
            raise WorkloadError(f"{field}: distribution must be one of {', '.join(LENGTH_KINDS)} (got {self.kind!r})")
        if self.kind == "fixed":
            if not 1 <= self.mean <= max_tokens:
                raise WorkloadError(f"{field}: must be between 1 and {max_tokens:,} (got {self.mean})")
            x = np.full(n, float(self.mean))
        elif self.kind == "uniform":
            if not 1 <= self.lo <= self.hi <= max_tokens:
                raise WorkloadError(f"{field}: uniform needs 1 <= lo <= hi <= {max_tokens:,} (got {self.lo}, {self.hi})")
            x = rng.integers(int(self.lo), int(self.hi) + 1, size=n).astype(float)
        else:
            if not 1 <= self.mean <= max_tokens or not 0 <= self.cv <= 10:
                raise WorkloadError(f"{field}: lognormal needs 1 <= mean <= {max_tokens:,} and 0 <= cv <= 10 "
                                    f"(got mean {self.mean}, cv {self.cv})")
            s2 = math.log1p(self.cv ** 2)
            x = rng.lognormal(math.log(self.mean) - s2 / 2.0, math.sqrt(s2), size=n)
        return np.clip(np.rint(x), 1, max_tokens).astype(np.int64)


@dataclass(frozen=True)
class SampleBounds:
    """Which (prompt, output) length pairs a benchmark's dataset sampler keeps: min ≤ prompt ≤ max,
    output ≥ min_output_len, prompt + output ≤ max_total_len (tokens)."""

    min_prompt_len: int = 4
    max_prompt_len: int = 1024
    min_output_len: int = 4
    max_total_len: int = 2048

    def shifted(self, prompt_tokens: int) -> "SampleBounds":
        """The same bounds on prompts ``prompt_tokens`` longer (a chat template's tokens around each)."""
        t = int(prompt_tokens)
        return SampleBounds(self.min_prompt_len + t, self.max_prompt_len + t, self.min_output_len,
                            self.max_total_len + t)


# vLLM's benchmark datasets (``vllm bench serve --dataset-name sharegpt``, and benchmark_serving.py /
# benchmark_throughput.py before it) keep a ShareGPT conversation only when
# ``is_valid_sequence(prompt_len, output_len)`` holds: min_len = 4 (prompt and output), max_prompt_len = 1024,
# max_total_len = 2048 (vllm/benchmarks/datasets.py, "Default pruning criteria are copied from the original
# sample_sharegpt_requests"). The rows' mean lengths are means of that filtered sample.
VLLM_SHAREGPT_BOUNDS = SampleBounds(4, 1024, 4, 2048)
LENGTH_BOUNDS: dict[str, SampleBounds] = {"vllm-sharegpt": VLLM_SHAREGPT_BOUNDS}


def bounded_lognormal_pairs(n: int, rng: np.random.Generator, *, input_len: LengthSpec, output_len: LengthSpec,
                            bounds: SampleBounds, rounds: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (prompt, output) lengths drawn as a benchmark sampler draws them: independent pairs of
    ``input_len`` and ``output_len`` (:meth:`LengthSpec.sample`: lognormal or fixed), a pair kept only inside ``bounds`` (the sampler skips the
    others and takes the next), then each side scaled so that its SAMPLE mean is the asked mean and
    put back inside the bounds, ``rounds`` times (the filter drops the long tail, so the kept pairs'
    mean is below the distribution's; a run's stated mean is its kept sample's)::

        keep (I, O) with  min_I ≤ I ≤ max_I,  O ≥ min_O,  I + O ≤ max_total
        I ← clip(round(I · Ī / mean(I)), min_I, max_I),  O ← clip(round(O · Ō / mean(O)), min_O, max_total − I)

    >>> i, o = bounded_lognormal_pairs(1000, np.random.default_rng(0), input_len=LengthSpec("lognormal", 217, cv=1.0),
    ...                                output_len=LengthSpec("lognormal", 202, cv=1.0), bounds=VLLM_SHAREGPT_BOUNDS)
    >>> round(float(i.mean())), round(float(o.mean())), int(i.max()) <= 1024, int((i + o).max()) <= 2048
    (217, 202, True, True)
    """
    b, input_mean, output_mean = bounds, float(input_len.mean), float(output_len.mean)
    if not (1 <= b.min_prompt_len <= input_mean <= b.max_prompt_len and 1 <= b.min_output_len <= output_mean
            and input_mean + output_mean <= b.max_total_len):
        raise WorkloadError(f"length bounds: mean lengths {input_mean:g} + {output_mean:g} must lie inside prompt "
                            f"{b.min_prompt_len}-{b.max_prompt_len}, output >= {b.min_output_len}, total <= "
                            f"{b.max_total_len} tokens")

    kept_i, kept_o, have = [], [], 0
    for _ in range(1000):  # the bounds above keep a share of the pairs bounded away from 0
        i = input_len.sample(2 * n, rng, field="input_len")
        o = output_len.sample(2 * n, rng, field="output_len")
        ok = (i >= b.min_prompt_len) & (i <= b.max_prompt_len) & (o >= b.min_output_len) & (i + o <= b.max_total_len)
        kept_i.append(i[ok])
        kept_o.append(o[ok])
        have += int(ok.sum())
        if have >= n:
            break
    i, o = np.concatenate(kept_i)[:n], np.concatenate(kept_o)[:n]
    if i.size < n:
        raise WorkloadError("length bounds: too few lengths fall inside them (a CV too large for the bounds)")
    for _ in range(rounds):
        i = np.clip(np.rint(i * input_mean / i.mean()), b.min_prompt_len, b.max_prompt_len)
        o = np.clip(np.rint(o * output_mean / o.mean()), b.min_output_len, b.max_total_len - i)
    return i.astype(np.int64), o.astype(np.int64)


def _check_count(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_REQUESTS:
        raise WorkloadError(f"num_requests: must be a whole number between 1 and {MAX_REQUESTS:,} (got {n!r})")
    return int(n)


def arrivals(kind: str, *, n: int, rate_per_s: float = 1.0, cv: float = 1.0,
             rng: np.random.Generator) -> np.ndarray:
    """Arrival times (s) of ``n`` requests (module docstring); NaN for ``closed``.

    >>> arrivals("burst", n=3, rng=np.random.default_rng(0)).tolist()
    [0.0, 0.0, 0.0]
    >>> a = arrivals("poisson", n=100_000, rate_per_s=4.0, rng=np.random.default_rng(1))
    >>> round(float(len(a) / a[-1]), 1)      # ≈ the rate
    4.0
    """
    n = _check_count(n)
    if kind not in ARRIVALS:
        raise WorkloadError(f"arrival: must be one of {', '.join(ARRIVALS)} (got {kind!r})")
    if kind == "burst":
        return np.zeros(n)
    if kind == "closed":
        return np.full(n, np.nan)
    if not (np.isfinite(rate_per_s) and 0 < rate_per_s <= 1e6):
        raise WorkloadError(f"rate: must be above 0 and at most 1,000,000 requests/s (got {rate_per_s})")
    if kind == "poisson":
        gaps = rng.exponential(1.0 / rate_per_s, size=n)
    else:
        if not (np.isfinite(cv) and 0.05 <= cv <= 20):
            raise WorkloadError(f"cv: coefficient of variation must be between 0.05 and 20 (got {cv})")
        k = 1.0 / cv ** 2
        gaps = rng.gamma(k, 1.0 / (rate_per_s * k), size=n)
    gaps[0] = 0.0  # the first request opens the run
    return np.cumsum(gaps)


def length_spec(kind: str, mean: int, spread: float, hi: int = MAX_TOKENS) -> LengthSpec:
    """A length distribution from the traffic the UI describes: its kind, mean and spread.

    Uniform: mean ± spread·mean (spread capped at 1, kept in [1, ``hi``]); lognormal: coefficient
    of variation ``spread``; fixed: the mean. The load test and the planner's percentile check
    build their requests with it.

    >>> length_spec("uniform", 1000, 0.5)
    LengthSpec(kind='uniform', mean=1000, lo=500, hi=1500, cv=0.5)
    >>> length_spec("lognormal", 256, 0.5).cv, length_spec("fixed", 256, 0.5).kind
    (0.5, 'fixed')
    """
    if kind == "uniform":
        lo, top = max(1, round(mean * (1 - min(spread, 1.0)))), min(hi, round(mean * (1 + min(spread, 1.0))))
        return LengthSpec("uniform", mean=mean, lo=lo, hi=max(lo, top))
    if kind == "lognormal":
        return LengthSpec("lognormal", mean=mean, cv=spread)
    return LengthSpec("fixed", mean=mean)


# The share of requests a planned window holds whole: 1 in 1,000 may be longer (and is cut, or refused by vLLM).
WINDOW_QUANTILE = 0.999


def covering_window_tokens(kind: str, input_mean: int, output_mean: int, spread: float, q: float = WINDOW_QUANTILE) -> int:
    """The max_model_len that holds a request of the q-quantile prompt and the q-quantile output of
    :func:`length_spec`'s distributions (so at least a share q of the requests whole), in whole KV
    blocks of 16 tokens where the lengths spread; I + O for fixed lengths. Lognormal of mean m and CV c:
    m·exp(σ·z_q − σ²/2), σ² = ln(1 + c²); uniform: its top, mean·(1 + s).

    Lognormal CV 0.5, 1,000 + 200 tokens, q = 0.999: σ = √ln 1.25 = 0.4724, z = 3.090, factor
    exp(0.4724·3.090 − 0.1116) = 3.850: 3,850 + 770 = 4,620 → 4,624, past which 0.04 % of the
    requests reach (:func:`cut_lengths`; 10⁶ draws: 0.036 %). I + O = 1,200 would cut 41 % of them: a
    planner that sized max_model_len so planned a deployment that vLLM would refuse them on.

    >>> covering_window_tokens("lognormal", 1000, 200, 0.5), covering_window_tokens("fixed", 1000, 200, 0.5)
    (4624, 1200)
    >>> covering_window_tokens("uniform", 1000, 200, 0.5)
    1808
    """
    if kind == "fixed" or spread <= 0.0:
        return int(input_mean) + int(output_mean)

    def top(mean: int) -> float:
        if kind == "uniform":
            return float(length_spec(kind, mean, spread).hi)
        s2 = math.log1p(spread * spread)
        return mean * math.exp(math.sqrt(s2) * statistics.NormalDist().inv_cdf(q) - s2 / 2.0)

    return int(math.ceil((top(input_mean) + top(output_mean)) / 16.0) * 16)


def length_cv2(kind: str, spread: float) -> float:
    """Squared coefficient of variation C² of a :func:`length_spec` distribution (before rounding
    and the [1, hi] clip): fixed 0; uniform on mean·[1 − s, 1 + s], variance (2sm)² / 12, so
    C² = s² / 3 (s capped at 1); lognormal: C = s, C² = s².

    A request holds its sequence slot for about its output length in decode steps, so this is the
    service-time C_s² of the planner's slot queue (:func:`calc.plan.costs.slot_wait_s`, the M/G/c
    factor (1 + C_s²) / 2).

    >>> length_cv2("fixed", 0.5), round(length_cv2("uniform", 0.6), 4), length_cv2("lognormal", 0.5)
    (0.0, 0.12, 0.25)
    """
    if kind == "uniform":
        return min(float(spread), 1.0) ** 2 / 3.0
    if kind == "lognormal":
        return float(spread) ** 2
    return 0.0


def length_cvs(kind: str, spread: float) -> tuple[float, float]:
    """(input_cv, output_cv): the coefficients of variation of the prompt and output lengths that
    :func:`length_spec` draws from one traffic description (its kind and spread), C = √C² of
    :func:`length_cv2`. Both sides are drawn with the same kind and spread (the load test,
    calc.plan.percentiles), so both get the same C: what the analytic models take as ``input_cv``
    / ``output_cv`` (:func:`calc.timing.estimate.estimate`, :mod:`calc.traffic.queueing`).

    >>> length_cvs("lognormal", 0.5), length_cvs("fixed", 0.5)
    ((0.5, 0.5), (0.0, 0.0))
    >>> round(length_cvs("uniform", 0.6)[1], 4)      # 0.6 / √3
    0.3464
    """
    c = math.sqrt(length_cv2(kind, spread))
    return c, c


@dataclass(frozen=True)
class CutLengths:
    """Means and coefficients of variation of the lengths a workload runs after :func:`make_workload`
    cuts them to the model's window, and the share of requests cut (:func:`cut_lengths`)."""

    input_mean: float
    input_cv: float
    output_mean: float
    output_cv: float
    cut_fraction: float


CUT_GRID = 256  # quantile points of the output distribution (midpoints): the prompt's room m − O' at each


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.vectorize(math.erf, otypes=[float])(np.asarray(x, dtype=float) / math.sqrt(2.0)))


def _over(spec: LengthSpec, cv: float, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P(X > c), E[(X − c)⁺], E[(X² − c²)⁺]) of ``spec`` at each cap ``c``, in closed form: lognormal
    by its partial moments (E[X^k; X > c] = E[X^k]·(1 − Φ(d_k)), d_k = (ln c − μ − kσ²)/σ), uniform on
    [lo, hi] as a continuous one, fixed as its point."""
    c = np.maximum(np.asarray(c, dtype=float), 1e-300)
    mean = float(spec.mean)
    if spec.kind == "lognormal" and cv > 0:
        s2 = math.log1p(cv ** 2)
        s, mu = math.sqrt(s2), math.log(mean) - s2 / 2.0
        tail = [1.0 - _normal_cdf((np.log(c) - mu - k * s2) / s) for k in (0, 1, 2)]
        p = tail[0]
        return p, np.maximum(mean * tail[1] - c * p, 0.0), np.maximum(mean * mean * (1.0 + cv * cv) * tail[2] - c * c * p, 0.0)
    if spec.kind == "uniform" and spec.hi > spec.lo:
        lo, hi = float(spec.lo), float(spec.hi)
        x = np.clip(c, lo, hi)  # above the cap: (x, hi]; below lo everything is over
        w = hi - lo
        p = (hi - x) / w
        e1 = (hi - x) ** 2 / (2.0 * w) + (x - c) * p
        e2 = ((hi ** 3 - x ** 3) / 3.0 - c * c * (hi - x)) / w
        return p, e1, e2
    x = float(spec.mean if spec.kind != "uniform" else spec.lo)
    over = x > c
    return over.astype(float), np.where(over, x - c, 0.0), np.where(over, x * x - c * c, 0.0)


def _moments(spec: LengthSpec, mean: float, cv: float) -> tuple[float, float]:
    """(E[X], E[X²]) of ``spec`` before the cut: the asked mean and CV, but a uniform's own [lo, hi]
    (:func:`length_spec` keeps it inside the window, which moves its mean: 1,792 ± 50 % in 2,048 tokens
    is [896, 2,048], mean 1,472)."""
    if spec.kind == "uniform":
        lo, hi = float(spec.lo), float(spec.hi)
        m = (lo + hi) / 2.0
        return m, m * m + (hi - lo) ** 2 / 12.0
    return mean, mean * mean * (1.0 + cv * cv)


@functools.lru_cache(maxsize=1024)
def cut_lengths(kind: str, input_mean: float, output_mean: float, spread: float, max_model_len: int,
                output_spread: float | None = None) -> CutLengths:
    """The lengths the simulator runs for one traffic description, as the analytic models should take
    them: :func:`length_spec` draws of prompt I and output O (independent), cut as
    :func:`make_workload` cuts them, O' = min(O, m − 1), I' = min(I, m − O') for a window of
    m = ``max_model_len`` tokens. Their moments are the asked ones (means, :func:`length_cvs`) less
    what the cut removes,

        E[O'] = E[O] − E[(O − (m − 1))⁺],   E[O'²] = E[O²] − E[(O² − (m − 1)²)⁺],
        E[I'] = E[I] − E[(I − c)⁺],         E[I'²] = E[I²] − E[(I² − c²)⁺],   c = m − O',

    each (·)⁺ in closed form (:func:`_over`), the prompt's over :data:`CUT_GRID` quantiles of O' (so
    nothing changes where no draw can reach the window). Mean 1,792 + 256, lognormal 0.5, m = 2,048
    (the default scenario): prompts 1,454 on average, CV 0.26, 41 % of the requests cut (200,000 drawn
    by make_workload: 1,454.4, 0.264, 41.2 %).

    >>> c = cut_lengths("lognormal", 1792, 256, 0.5, 2048)
    >>> round(c.input_mean), round(c.input_cv, 2), round(c.output_mean), round(c.output_cv, 2), round(c.cut_fraction, 2)
    (1454, 0.26, 256, 0.5, 0.41)
    >>> cut_lengths("lognormal", 1792, 256, 0.5, 131072) == CutLengths(1792.0, 0.5, 256.0, 0.5, 0.0)
    True

    ``output_spread``: the outputs' own spread where it is not the prompts' (the CLI's
    ``--input-len-cv`` / ``--output-len-cv``); None: ``spread`` for both.
    """
    m = int(max_model_len)
    spread_o = spread if output_spread is None else output_spread
    cv_i, cv_o = length_cvs(kind, spread)[0], length_cvs(kind, spread_o)[1]
    si, so = length_spec(kind, int(input_mean), spread, m), length_spec(kind, int(output_mean), spread_o, m)
    mi, mo = float(input_mean), float(output_mean)
    top_o = float(max(m - 1, 1))
    p_o, x1_o, x2_o = (float(v[0]) for v in _over(so, cv_o, np.array([top_o])))
    # O' at CUT_GRID midpoint quantiles: the lognormal's inverse CDF, the uniform's line, or the point
    u = (np.arange(CUT_GRID) + 0.5) / CUT_GRID
    if so.kind == "lognormal" and cv_o > 0:
        from statistics import NormalDist  # noqa: PLC0415

        s2 = math.log1p(cv_o ** 2)
        qo = mo * np.exp(math.sqrt(s2) * np.array([NormalDist().inv_cdf(float(x)) for x in u]) - s2 / 2.0)
    elif so.kind == "uniform":
        qo = float(so.lo) + u * float(so.hi - so.lo)
    else:
        qo = np.full(CUT_GRID, mo)
    c = np.maximum(m - np.minimum(qo, top_o), 1.0)
    p_i, x1_i, x2_i = _over(si, cv_i, c)
    cut = 1.0 - (1.0 - p_o) * (1.0 - float(p_i.mean()))  # about: the two cuts treated as independent
    if cut < 1e-12:
        return CutLengths(mi, cv_i, mo, cv_o, 0.0)
    (mo, mo2), (mi, mi2) = _moments(so, mo, cv_o), _moments(si, mi, cv_i)
    e_o, e_o2 = mo - x1_o, mo2 - x2_o
    e_i, e_i2 = mi - float(x1_i.mean()), mi2 - float(x2_i.mean())

    def cv(mean: float, second: float) -> float:
        return math.sqrt(max(second / (mean * mean) - 1.0, 0.0)) if mean > 0 else 0.0

    return CutLengths(e_i, cv(e_i, e_i2), e_o, cv(e_o, e_o2), cut)


@functools.lru_cache(maxsize=1024)
def cut_input_quantile(kind: str, input_mean: float, output_mean: float, spread: float, max_model_len: int,
                       q: float, output_spread: float | None = None) -> float:
    """The q-quantile of the prompt lengths a workload runs after :func:`make_workload`'s cut (as
    :func:`cut_lengths`: O' = min(O, m − 1), I' = min(I, m − O'), I and O independent), which the
    models' percentile takes for its own prompt's length. I' > x needs I > x and room for x, so

        P(I' > x) = P(I > x) · P(O < m − x)      (1 ≤ x < m),

    decreasing from 1 to 0; its 1 − q crossing by bisection (closed-form tails, :func:`_over`). Where no
    draw reaches the window it is the asked distribution's own quantile (a lognormal's is
    ``calc.traffic.queueing.lognormal_quantile``). Mean 1,792 + 256, lognormal 0.5, m = 2,048 (the
    default scenario): P95 1,910 tokens (200,000 draws of make_workload: 1,911), where a lognormal of
    the cut mean and CV (1,454, 0.26) puts it at 2,154 and the uncut one at 3,486.

    >>> round(cut_input_quantile("lognormal", 1792, 256, 0.5, 2048, 0.95))
    1910
    >>> round(cut_input_quantile("lognormal", 1792, 256, 0.5, 131072, 0.95))   # uncut: the lognormal's
    3486
    >>> cut_input_quantile("fixed", 1000, 200, 0.0, 4096, 0.99), round(cut_input_quantile("uniform", 1000, 200, 0.5, 4096, 0.9))
    (1000.0, 1400)
    """
    m = int(max_model_len)
    spread_o = spread if output_spread is None else output_spread
    cv_i, cv_o = length_cvs(kind, spread)[0], length_cvs(kind, spread_o)[1]
    si, so = length_spec(kind, int(input_mean), spread, m), length_spec(kind, int(output_mean), spread_o, m)
    if si.kind == "fixed" and so.kind == "fixed":
        return float(min(float(si.mean), m - min(float(so.mean), m - 1.0)))

    def over(x: float) -> float:  # P(I' > x)
        room = 1.0 - float(_over(so, cv_o, np.array([m - x]))[0][0]) if x >= 1.0 else 1.0
        return float(_over(si, cv_i, np.array([x]))[0][0]) * room

    lo, hi = 0.0, float(m)
    for _ in range(48):  # [0, m] to well under a token
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if over(mid) > 1.0 - q else (lo, mid)
    return 0.5 * (lo + hi)


def serving_window(serving, model_window: int | None) -> int:
    """The window a serving config's requests are cut to: its max_model_len, else ``model_window``
    (the model's own), else :data:`MAX_TOKENS`."""
    return serving.max_model_len or model_window or MAX_TOKENS


def cut_serving_input_quantile(serving, kind: str, spread: float, model_window: int | None, q: float) -> float | None:
    """:func:`cut_input_quantile` for a serving config's lengths and window (:func:`cut_serving`'s);
    None where no request is cut (the models then take their lognormal of the asked mean and CV, as before)."""
    spread, window = 0.0 if kind == "fixed" else float(spread), serving_window(serving, model_window)
    if cut_lengths(kind, serving.input_len, serving.output_len, spread, window).cut_fraction == 0.0:
        return None
    return cut_input_quantile(kind, serving.input_len, serving.output_len, spread, window, float(q))


def cut_serving(serving, kind: str, spread: float, model_window: int | None):
    """(serving config, :class:`CutLengths`): ``serving`` (a :class:`calc.spec.inputs.ServingConfig`)
    with the mean prompt and output its requests have once cut to its max_model_len (else
    ``model_window``, the model's own; None: not cut), whole tokens, as the analytic models should
    take them; ``serving`` itself where nothing is cut (:func:`cut_lengths`)."""
    c = cut_lengths(kind, serving.input_len, serving.output_len, 0.0 if kind == "fixed" else float(spread),
                    serving_window(serving, model_window))
    if c.cut_fraction == 0.0:
        return serving, c
    return serving.model_copy(update={"input_len": max(1, round(c.input_mean)),
                                      "output_len": max(1, round(c.output_mean))}), c


def open_loop_lengths(input_len: float, output_len: float, input_cv: float, output_cv: float, max_model_len: int,
                      q: float = 0.95) -> dict:
    """The lengths the analytic open loop takes for lognormal draws of these CVs cut to ``max_model_len``
    as ``simulate`` draws them (:func:`cut_lengths`): the cut means and CVs and the cut prompts' own
    q-quantile (:func:`cut_input_quantile`) where anything is cut, else the asked ones; keyword
    arguments of :func:`calc.traffic.queueing.open_loop`. Shared by ``estimate --rate`` for one engine
    and for a disaggregated deployment.

    >>> open_loop_lengths(1000, 200, 0.0, 0.0, 4096)
    {'input_len': 1000, 'output_len': 200, 'input_cv': 0.0, 'output_cv': 0.0}
    >>> d = open_loop_lengths(1792, 256, 0.5, 0.5, 2048)
    >>> round(d["input_len"]), round(d["input_quantile_tokens"])
    (1454, 1910)
    """
    lengths = dict(input_len=input_len, output_len=output_len, input_cv=input_cv, output_cv=output_cv)
    if input_cv > 0 or output_cv > 0:
        traffic = ("lognormal", input_len, output_len, input_cv, int(max_model_len))
        cut = cut_lengths(*traffic, output_spread=output_cv)
        if cut.cut_fraction > 0.0:
            lengths = dict(input_len=cut.input_mean, output_len=cut.output_mean, input_cv=cut.input_cv,
                           output_cv=cut.output_cv,
                           input_quantile_tokens=cut_input_quantile(*traffic, q, output_spread=output_cv))
    return lengths


def sample_cv(lengths: np.ndarray) -> float:
    """The coefficient of variation of a trace's lengths, C = σ / μ (population σ), what the
    analytic models take as ``input_cv`` / ``output_cv`` where the lengths come from a trace
    rather than a named distribution (:func:`length_cvs`); 0 for an empty or all-zero trace.

    >>> sample_cv(np.array([100, 300])), sample_cv(np.array([256, 256])), sample_cv(np.array([]))
    (0.5, 0.0, 0.0)
    """
    v = np.asarray(lengths, dtype=float)
    mean = float(v.mean()) if v.size else 0.0
    return float(v.std() / mean) if mean > 0 else 0.0


def make_workload(*, arrival: str = "poisson", num_requests: int = 1000, rate_per_s: float = 1.0,
                  cv: float = 1.0, concurrency: int = 1, think_s: float = 0.0,
                  input_len: LengthSpec = LengthSpec("fixed", 1024), output_len: LengthSpec = LengthSpec("fixed", 256),
                  max_model_len: int | None = None, seed: int = 0, bounds: SampleBounds | None = None,
                  max_concurrency: int | None = None) -> Workload:
    """A seeded workload; lengths cut so that input + output ≤ ``max_model_len`` (the prompt keeps
    at least one token, as vLLM rejects longer requests and benchmarks cut them). With ``bounds``,
    lognormal or fixed lengths are drawn as a benchmark sampler keeps them
    (:func:`bounded_lognormal_pairs`). ``max_concurrency``: the client cap of an open loop (module
    docstring).

    >>> w = make_workload(arrival="poisson", num_requests=4, rate_per_s=2.0, max_concurrency=2)
    >>> w.capped, w.closed_clients, bool(np.isfinite(w.arrival_s).all())
    (True, 2, True)
    """
    n = _check_count(num_requests)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2 ** 63:
        raise WorkloadError(f"seed: must be a whole number >= 0 (got {seed!r})")
    rng = np.random.default_rng(int(seed))
    arr = arrivals(arrival, n=n, rate_per_s=rate_per_s, cv=cv, rng=rng)
    if bounds is not None and {input_len.kind, output_len.kind} <= {"fixed", "lognormal"}:
        i, o = bounded_lognormal_pairs(n, rng, input_len=input_len, output_len=output_len, bounds=bounds)
    else:
        i = input_len.sample(n, rng, field="input_len")
        o = output_len.sample(n, rng, field="output_len")
    if max_model_len is not None:
        o = np.minimum(o, max(int(max_model_len) - 1, 1))
        i = np.minimum(i, np.maximum(int(max_model_len) - o, 1))
    clients = 0
    if arrival == "closed":
        if isinstance(concurrency, bool) or not isinstance(concurrency, (int, np.integer)) or not 1 <= concurrency <= 100_000:
            raise WorkloadError(f"concurrency: must be a whole number between 1 and 100,000 (got {concurrency!r})")
        if not (np.isfinite(think_s) and 0 <= think_s <= 3600):
            raise WorkloadError(f"think_s: must be between 0 and 3600 s (got {think_s})")
        clients = int(concurrency)
    elif max_concurrency is not None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, (int, np.integer)) \
                or not 1 <= max_concurrency <= 100_000:
            raise WorkloadError(f"max_concurrency: must be a whole number between 1 and 100,000 (got {max_concurrency!r})")
        clients = int(max_concurrency)
    return Workload(arrival_s=arr, input_len=i, output_len=o, closed_clients=clients, think_s=float(think_s))


TRACE_FIELDS = ("arrival_s", "input_len", "output_len")
_ALIASES = {"arrival_s": ("arrival_s", "arrival_time", "timestamp", "arrival"),
            "input_len": ("input_len", "prompt_len", "input_tokens", "prompt_tokens"),
            "output_len": ("output_len", "output_tokens", "completion_tokens")}


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _short(text: str, limit: int = 40) -> str:
    text = str(text)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def parse_trace(data: bytes | str, *, max_model_len: int | None = None) -> Workload:
    """A trace from CSV (header row naming the fields) or JSON lines (one object per line) with
    ``arrival_s`` (seconds, ≥ 0; rows are sorted by it), ``input_len`` and ``output_len`` (whole
    tokens ≥ 1). Errors name the line and the field.

    >>> w = parse_trace("arrival_s,input_len,output_len\\n0.5,100,10\\n0,200,20\\n")
    >>> w.arrival_s.tolist(), w.input_len.tolist()
    ([0.0, 0.5], [200, 100])
    >>> parse_trace('{"arrival_s": 0, "input_len": -3, "output_len": 5}')
    Traceback (most recent call last):
    ...
    calc.traffic.workload.WorkloadError: trace line 1: input_len must be a whole number between 1 and 10,000,000 (got '-3')
    """
    if isinstance(data, bytes):
        if len(data) > MAX_TRACE_BYTES:
            raise WorkloadError(f"trace: file larger than {MAX_TRACE_BYTES // 1_000_000} MB")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise WorkloadError("trace: not UTF-8 text") from None
    if len(data) > MAX_TRACE_BYTES:
        raise WorkloadError(f"trace: file larger than {MAX_TRACE_BYTES // 1_000_000} MB")
    text = data.lstrip()
    rows: list[tuple[int, dict]] = []
    if text.startswith("{"):
        # LF, CRLF or a lone CR (not str.splitlines: U+2028 and friends may sit inside a JSON string)
        for lineno, line in enumerate(_LINE_BREAK.split(data), 1):
            if not line.strip():
                continue
            try:  # huge integers stay text (HugeInt): no int-digit-limit error, no float overflow
                obj = load_json(line, what=f"trace line {lineno}", max_bytes=MAX_TRACE_BYTES)
            except InputError:
                raise WorkloadError(f"trace line {lineno}: not a JSON object") from None
            if not isinstance(obj, dict):
                raise WorkloadError(f"trace line {lineno}: not a JSON object")
            rows.append((lineno, obj))
            if len(rows) > MAX_REQUESTS:
                raise WorkloadError(f"trace: more than {MAX_REQUESTS:,} requests")
    else:
        # newline="": the csv module sees the line ends itself and takes LF, CRLF and a lone CR
        reader = csv.DictReader(io.StringIO(data, newline=""))
        try:
            header = [h.strip() for h in (reader.fieldnames or [])]
            reader.fieldnames = header
            for row in reader:
                rows.append((reader.line_num, row))
                if len(rows) > MAX_REQUESTS:
                    raise WorkloadError(f"trace: more than {MAX_REQUESTS:,} requests")
        except csv.Error as exc:  # a field over the csv module's size limit, a NUL, a stray quote
            # the bad record is the one after the last line read in full
            raise WorkloadError(f"trace line {reader.line_num + 1}: not valid CSV "
                                f"({shorten(str(exc), 120)})") from None
    if not rows:
        raise WorkloadError("trace: no requests (expected a CSV header arrival_s,input_len,output_len "
                            "or JSON lines)")
    out = {f: np.empty(len(rows)) for f in TRACE_FIELDS}
    for k, (lineno, row) in enumerate(rows):
        for f in TRACE_FIELDS:
            key = next((a for a in _ALIASES[f] if a in row), None)
            if key is None:
                raise WorkloadError(f"trace line {lineno}: missing field {f}")
            raw = row[key]
            try:
                v = float(raw) if not isinstance(raw, bool) else math.nan
            except (TypeError, ValueError, OverflowError):  # OverflowError: float() of a 400-digit int
                v = math.nan
            if f == "arrival_s":
                if not (math.isfinite(v) and 0 <= v <= 1e9):
                    raise WorkloadError(f"trace line {lineno}: arrival_s must be seconds between 0 and 1e9 "
                                        f"(got {_short(raw)})")
            elif not (math.isfinite(v) and v == int(v) and 1 <= v <= MAX_TOKENS):
                raise WorkloadError(f"trace line {lineno}: {f} must be a whole number between 1 and "
                                    f"{MAX_TOKENS:,} (got {_short(raw)})")
            out[f][k] = v
    order = np.argsort(out["arrival_s"], kind="stable")
    i = out["input_len"][order].astype(np.int64)
    o = out["output_len"][order].astype(np.int64)
    if max_model_len is not None:
        too_long = np.flatnonzero(i + o > max_model_len)
        if too_long.size:
            j = int(order[too_long[0]])
            raise WorkloadError(f"trace line {rows[j][0]}: input_len + output_len ({int(i[too_long[0]] + o[too_long[0]])}) "
                                f"exceeds max_model_len ({max_model_len})")
    arr = out["arrival_s"][order]
    return Workload(arrival_s=arr - arr[0], input_len=i, output_len=o)
