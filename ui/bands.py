"""Error bands on the pages: around every headline number, the range real servers would likely
show (:mod:`calc.timing.bands`: how far the calculator has been from measurements in the same
regime), beside the value, as a shaded region around the curves, and a "why this band" panel that
names the measurements behind it (ids, sources, their errors).

A band never comes from a guess: a regime without measurements of its own borrows a wider group's
errors, widened, and its label says so (:func:`calc.timing.bands.band_basis`). In presenter mode
the range under each value is left out (one line per card) and the shaded regions are lighter.

``CALC_BANDS=0`` in the server's environment turns every band off: ``bench/bench_pages.py
--compare-bands`` measures a page's CPU with and without them, side by side.
"""

from __future__ import annotations

import math
import os
from functools import lru_cache
from typing import Any, Callable, Iterable

import numpy as np

from calc.timing.bands import (API_SERVER_BUSY, API_SERVER_SHARED, CONDITIONS, N_MIN, WIDEN, BandBasis, BandKey,
                               api_server_share, band_basis, gpu_family, load_condition, load_measurements, load_regime,
                               load_table)
from calc.timing.engine_profile import api_server_request_time_s
from ui import format as F
from ui.budget import shared_memo
from ui.charts import encode_arrays
from ui.i18n import Translator

T = Callable[..., str]
ENABLED = os.environ.get("CALC_BANDS", "1") != "0"
FILL = "rgba(128, 128, 128, 0.20)"  # neutral grey: readable on the light and the dark theme
FILL_PRESENTING = "rgba(128, 128, 128, 0.09)"
MAX_EDGE_POINTS = 80  # points per edge of a shaded band (the curves have up to a few hundred)
MAX_IDS_SHOWN = 12  # measurement ids listed per band (the rest counted)


@lru_cache(maxsize=256)
def _basis(regime: str, family: str, moe: bool, group: str, condition: str = "engine") -> BandBasis:
    return band_basis(BandKey(regime, family, moe, group, condition))


def api_server_time_s(arch, efficiency) -> float:
    """The API server's time per request of this model under these efficiency inputs: the chat
    template's or, for a Harmony-format model (gpt-oss), the Harmony path's
    (:func:`calc.timing.engine_profile.api_server_request_time_s`, as the engine takes it)."""
    return api_server_request_time_s(model_type=arch.model_type, efficiency=efficiency)


def condition(requests_per_s, efficiency, arch) -> str:
    """Which process sets the pace of a load of ``requests_per_s`` (one engine's, predicted) of this
    model under these efficiency inputs: ``"api_server"`` where vLLM's API server is busy
    :data:`calc.timing.bands.API_SERVER_BUSY` of its time or more, ``"api_shared"`` from
    :data:`calc.timing.bands.API_SERVER_SHARED`, else ``"engine"``
    (:func:`calc.timing.bands.load_condition`; the time per request: :func:`api_server_time_s`)."""
    return load_condition(api_server_share(float(requests_per_s), api_server_time_s(arch, efficiency)))


def basis(arch, gpu, group: str, *, arrival: str = "closed", concurrency: float | None = None,
          condition: str = "engine") -> BandBasis:
    """The band of metric ``group`` (ttft, tpot, e2e, throughput, memory) for this model on this
    GPU under this load (``arrival`` closed / poisson / gamma / burst / static; ``condition``:
    :func:`condition`)."""
    return _basis(load_regime(arrival, concurrency), gpu_family(gpu.architecture), arch.moe is not None, group,
                  condition)


def limits(value: Any, b: BandBasis) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) around a predicted value (any shape): measured = predicted / (1 + error)."""
    v = np.asarray(value, dtype=float)
    return v * math.exp(-b.log_hi), v * math.exp(-b.log_lo)


def inverse_limits(value: Any, b: BandBasis) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of a quantity inversely proportional to the banded one: cost per token is the
    price over the throughput, so its low end is at the throughput's high end."""
    v = np.asarray(value, dtype=float)
    return v * math.exp(b.log_lo), v * math.exp(b.log_hi)


# The GPU family as it is written (calc.timing.bands.FAMILIES keys are lower-case identifiers)
FAMILY_NAMES = {"ampere": "Ampere", "hopper": "Hopper", "cdna3": "CDNA3", "ada": "Ada", "blackwell": "Blackwell"}


def condition_text(regime: str, condition: str, t: T) -> str:
    """The regime's name with how busy vLLM's API server is (:func:`calc.timing.bands.load_condition`)
    where that is its condition; the engine's: the name alone."""
    if condition == "api_server":  # the API server sets the pace
        return t("band.api_server", regime=regime, share=F.number(API_SERVER_BUSY * 100, 0))
    if condition == "api_shared":  # the engine sets it, the API server is busy part of the time
        return t("band.api_shared", regime=regime, lo=F.number(API_SERVER_SHARED * 100, 0),
                 hi=F.number(API_SERVER_BUSY * 100, 0))
    return regime


def where_text(b: BandBasis, t: T) -> str:
    regime = t(f"band.regime.{b.key.regime}") if b.key.regime in ("single", "closed", "open", "burst") \
        else t("band.regime.any")
    regime = condition_text(regime, b.key.condition, t)
    family = FAMILY_NAMES.get(b.key.family) or t("band.family.other")
    return t("band.where", regime=regime, family=family, kind=t("band.moe" if b.key.moe else "band.dense"))


def own_text(b: BandBasis, t: T) -> str:
    """Whether the regime has measurements of its own (else: borrowed, widened)."""
    if isinstance(t, Translator):
        return _texts(b, t.lang)[0]
    return _own_text(b, t)


def help_text(b: BandBasis, t: T) -> str:
    if isinstance(t, Translator):
        return _texts(b, t.lang)[1]
    return _help_text(b, t)


def _own_text(b: BandBasis, t: T) -> str:
    where = where_text(b, t)
    if b.n_exact >= b.n:
        return t("band.own", n=b.n, where=where)
    if b.n_exact == 0:
        return t("band.none", where=where, n=b.n)
    return t("band.few", where=where, k=b.n_exact, n=b.n)


def _help_text(b: BandBasis, t: T) -> str:
    return t("band.help", own=_own_text(b, t), median=F.number(b.median_abs_error * 100, 0),
             p90=F.number(b.p90_abs_error * 100, 0))


@lru_cache(maxsize=256)
def _texts(b: BandBasis, lang: str) -> tuple[str, str]:
    """(own text, help text) of a band in a language: the same on every rerun (the cards' help)."""
    t = Translator(lang)
    return _own_text(b, t), _help_text(b, t)


def curve_limits(arch, gpu, group: str, values, concurrency, busy=False) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) along a closed-loop sweep: one client is the single-request regime, more a
    closed loop, and each point under its condition ``busy`` (:func:`conditions_along`: the names of
    :data:`calc.timing.bands.CONDITIONS`, or True where the API server sets the pace) gets its own
    regime's band."""
    return _curve_limits(gpu_family(gpu.architecture), arch.moe is not None, group, values, concurrency, busy)


def conditions_along(f, efficiency, arch) -> np.ndarray:
    """How busy the API server is along a frontier series ``f`` (:class:`ui.perf.view.FrontierSeries`):
    each point's condition (:func:`calc.timing.bands.load_condition`) from one engine's requests/s,
    its output tokens/s over the output length (per data-parallel rank), times the API server's time
    per request."""
    serving = f.variant.serving
    x = np.asarray(f.output_tokens_per_s, dtype=float) / (serving.output_len * serving.data_parallel_size)
    return np.asarray(load_condition(api_server_share(x, api_server_time_s(arch, efficiency))))


def _condition_names(busy, shape) -> np.ndarray:
    """Condition names of :data:`calc.timing.bands.CONDITIONS` from names, from their indices (floats
    of a cache key), or from True / False (the API server's / the engine's), broadcast to ``shape``."""
    a = np.asarray(busy)
    if a.dtype == bool:
        a = np.where(a, "api_server", "engine")
    elif a.dtype.kind in "fiu":
        a = np.asarray(CONDITIONS)[a.astype(int)]
    return np.broadcast_to(a, shape)


# along a closed-loop sweep: one client is the single-request regime, more a closed loop
REGIMES_ALONG = (load_regime("closed", 1), load_regime("closed", 2))


def _curve_limits(family: str, moe: bool, group: str, values, concurrency, busy=False) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(concurrency, dtype=float)
    (lo1, hi1), (lo2, hi2) = (limits(values, _basis(regime, family, moe, group)) for regime in REGIMES_ALONG)
    lo, hi = np.where(c <= 1, lo1, lo2), np.where(c <= 1, hi1, hi2)
    names = _condition_names(busy, np.shape(lo))
    for cond in CONDITIONS[1:]:
        on = names == cond
        if not on.any():  # the usual case: the engine's alone, one lookup per regime
            continue
        (blo1, bhi1), (blo2, bhi2) = (limits(values, _basis(regime, family, moe, group, cond)) for regime in REGIMES_ALONG)
        lo, hi = np.where(on, np.where(c <= 1, blo1, blo2), lo), np.where(on, np.where(c <= 1, bhi1, bhi2), hi)
    return lo, hi


def cdf_region(values_s, b: BandBasis, t: T, *, presenting: bool) -> list[dict]:
    """The band around a latency distribution (ms): each quantile from its low to its high end."""
    if not ENABLED:
        return []
    v = np.sort(np.asarray(values_s, dtype=float))
    v = v[np.isfinite(v)] * 1e3
    if not v.size:
        return []
    idx = np.unique(np.linspace(0, v.size - 1, min(v.size, 400)).astype(int))
    frac = (idx + 1) / v.size * 100.0
    lo, hi = limits(v[idx], b)
    return [region(lo, hi, frac, frac, name=t("band.trace"), presenting=presenting)]


def sweep_regions(goodput: BandBasis, ttft: BandBasis, t: T, *, presenting: bool,
                  busy: dict[str, tuple[BandBasis, BandBasis]] | None = None, api_server_s: float = 0.0):
    """The load test's rate sweep bands (a callable for :func:`ui.loadtest.figures.sweep_figure`):
    goodput (left axis) from the throughput band, P95 TTFT (right axis) from the TTFT band; at the
    rates (one replica's) that keep the API server busy (``rate × api_server_s``:
    :func:`calc.timing.bands.load_condition`), ``busy[condition]``'s two bands instead."""
    if not ENABLED:
        return None

    def traces(rates, good, ttft_ms) -> list[dict]:
        g_lo, g_hi = limits(good, goodput)
        f_lo, f_hi = limits(ttft_ms, ttft)
        names = np.asarray(load_condition(api_server_share(rates, api_server_s)))
        for cond, (bg, bf) in (busy or {}).items():
            on = names == cond
            if not on.any():
                continue
            (bg_lo, bg_hi), (bf_lo, bf_hi) = limits(good, bg), limits(ttft_ms, bf)
            g_lo, g_hi = np.where(on, bg_lo, g_lo), np.where(on, bg_hi, g_hi)
            f_lo, f_hi = np.where(on, bf_lo, f_lo), np.where(on, bf_hi, f_hi)
        return [region(rates, rates, g_lo, g_hi, name=t("band.trace"), presenting=presenting),
                {**region(rates, rates, f_lo, f_hi, name=t("band.trace"), presenting=presenting), "yaxis": "y2",
                 "showlegend": False}]
    return traces


def pareto_regions(arch, gpu_of: Callable[[str], Any], t: T, *, presenting: bool, rate_rps: float = 0.0,
                   efficiency=None):
    """The planner's Pareto front band (a callable for :func:`ui.planner.figures.pareto_figure`):
    end-to-end latency from the open-loop E2E band of each point's GPU, cost per token from its
    throughput band (a deployment that serves less per GPU needs more of them for the same rate);
    with ``efficiency``, each point's condition from its engines' share of ``rate_rps``."""
    if not ENABLED:
        return None

    def traces(e2e_s, cost, gpu_ids, engines=None) -> list[dict]:
        e_lo, e_hi, c_lo, c_hi = [], [], [], []
        engines = [None] * len(gpu_ids) if engines is None else engines
        for e, c, g, n in zip(e2e_s, cost, gpu_ids, engines):
            cond = "engine" if efficiency is None or n is None else condition(rate_rps / n, efficiency, arch)
            be = basis(arch, gpu_of(g), "e2e", arrival="poisson", condition=cond)
            bt = basis(arch, gpu_of(g), "throughput", arrival="poisson", condition=cond)
            lo, hi = limits(e, be)
            e_lo.append(float(lo))
            e_hi.append(float(hi))
            lo, hi = inverse_limits(c, bt)
            c_lo.append(float(lo))
            c_hi.append(float(hi))
        # optimistic: faster and cheaper (y low), pessimistic: slower and dearer
        # no legend entry: the planner's legend lists up to 17 GPUs (one row more squeezed the plot on a
        # phone); the caption under the chart says what the grey is
        return [{**region(e_lo, e_hi, c_hi, c_lo, name=t("band.trace"), presenting=presenting), "showlegend": False}]
    return traces


def frontier_regions(f, arch, gpu, t: T, *, per_gpu: bool, presenting: bool,
                     efficiency=None) -> tuple[list[dict], list[dict]]:
    """The base series' bands on the frontier: (SLA figure's two panels, concurrency figure).
    Latency from its band, throughput from its own: the region spans the optimistic curve
    (faster, more) to the pessimistic one. With ``efficiency``, the points where the API server
    is busy (:func:`conditions_along`) get their condition's bands.

    The SLA targets do not move a band: a rerun that only moves an SLA slider (or anything else
    that leaves the sweep as it was) gets the regions already built, arrays already encoded for
    the browser (:func:`_frontier_regions`, keyed by the sweep's values)."""
    if not ENABLED:
        return [], []
    y = f.output_tokens_per_s_per_gpu if per_gpu else f.output_tokens_per_s
    busy = (np.zeros(np.shape(f.concurrency)) if efficiency is None else  # each point's condition, by index
            (conditions_along(f, efficiency, arch)[..., None] == np.asarray(CONDITIONS)).argmax(-1).astype(float))
    sla, conc = _frontier_regions(arch.moe is not None, gpu_family(gpu.architecture), t("band.trace"), presenting,
                                  *(_Values(a) for a in (y, f.concurrency, f.tpot_s, f.ttft_shown_s, busy)))
    return [dict(tr) for tr in sla], [dict(tr) for tr in conc]  # the caller's own dicts (ui.layout.chart copies the rest)


class _Values:
    """A float array as a cache key: equal when the values are (its shape and bytes, kept alone)."""

    __slots__ = ("_key", "_hash")

    def __init__(self, values) -> None:
        a = np.ascontiguousarray(values, dtype=float)
        self._key = (a.shape, a.tobytes())
        self._hash = hash(self._key)

    @property
    def array(self) -> np.ndarray:
        return np.frombuffer(self._key[1]).reshape(self._key[0])

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return isinstance(other, _Values) and self._key == other._key


# Frontier band sets kept per server process: one per (sweep, GPU family, dense/MoE, language, view).
# Each holds its key's five sweep arrays (the fifth: each point's condition, calc.timing.bands.CONDITIONS' index) (as bytes: 8 kB for the ~256-point sweep of ui.perf.view) and
# three encoded polygons of up to 2 x MAX_EDGE_POINTS points (~5 kB): ~13 kB, at most ~0.5 MB in all.
REGION_CACHE_SIZE = 32


@shared_memo(REGION_CACHE_SIZE)
def _frontier_regions(moe: bool, family: str, name: str, presenting: bool, y: _Values, concurrency: _Values,
                      tpot_s: _Values, ttft_s: _Values, busy: _Values) -> tuple[tuple[dict, ...], tuple[dict, ...]]:
    """:func:`frontier_regions` from the values it depends on; the traces' arrays as plotly.js
    typed arrays (what :func:`ui.charts.encoded` would send), so a rerun encodes nothing again."""
    c, b = concurrency.array, busy.array
    y_lo, y_hi = _curve_limits(family, moe, "throughput", y.array, c, b)
    sla = []
    for k, (values, group, xa, ya) in enumerate(((tpot_s, "tpot", "x", "y"), (ttft_s, "ttft", "x2", "y2"))):
        x_lo, x_hi = _curve_limits(family, moe, group, values.array * 1e3, c, b)
        sla.append({**region(x_lo, x_hi, y_lo, y_hi, name=name, presenting=presenting, xaxis=xa, yaxis=ya),
                    "showlegend": k == 0})
    conc = region(c, c, y_lo, y_hi, name=name, presenting=presenting)
    return tuple(encode_arrays(tr) for tr in sla), (encode_arrays(conc),)


def card(cards, t: T, label: str, shown: str, lo_hi: tuple[float, float] | None, b: BandBasis | None,
         fmt: Callable[[float], str], *, unit: str = "", presenting: bool = False, help: str | None = None,
         **metric_kw) -> None:
    """A metric card with its band: the range under the value (left out in presenter mode) and,
    in the help, where the band comes from. Without a band (``b`` None, or bands off): the plain card."""
    if b is None or lo_hi is None or not ENABLED or not all(np.isfinite(lo_hi)):
        cards.metric(label, shown, border=True, help=help, **metric_kw)
        return
    lo, hi = float(lo_hi[0]), float(lo_hi[1])
    rng = t("band.range", lo=fmt(lo), hi=fmt(hi)) + (f" {unit}" if unit else "")
    if b.n_exact < N_MIN:  # borrowed from a wider group, widened: said where the range is
        rng += " " + t("band.borrowed" if b.n_exact == 0 else "band.few_short")
    if presenting:
        extra = {}
    elif metric_kw.get("delta"):  # a delta already (e.g. against the SLA): the range after it
        metric_kw = {**metric_kw, "delta": f"{metric_kw['delta']} · {rng}"}
        extra = {}
    else:
        extra = dict(delta=rng, delta_color="gray", delta_arrow="off")
    cards.metric(label, shown, border=True, help=((help + "\n\n") if help else "") + rng + ". " + help_text(b, t),
                 **extra, **metric_kw)


def region(x_lo, x_hi, y_lo, y_hi, *, name: str, presenting: bool = False, **axes) -> dict:
    """A shaded region between the optimistic curve (x_lo, y_hi: faster and more) and the
    pessimistic one (x_hi, y_lo), as one closed polygon (Plotly ``fill="toself"``), under the lines."""
    x_lo, x_hi, y_lo, y_hi = (np.asarray(a, dtype=float) for a in (x_lo, x_hi, y_lo, y_hi))
    if x_lo.size > MAX_EDGE_POINTS:  # a shaded band needs no more: fewer bytes per rerun
        keep_idx = np.unique(np.linspace(0, x_lo.size - 1, MAX_EDGE_POINTS).astype(int))
        x_lo, x_hi, y_lo, y_hi = x_lo[keep_idx], x_hi[keep_idx], y_lo[keep_idx], y_hi[keep_idx]
    xs = np.concatenate([x_lo, x_hi[::-1]])
    ys = np.concatenate([y_hi, y_lo[::-1]])
    keep = np.isfinite(xs) & np.isfinite(ys)
    return dict(type="scatter", mode="lines", x=xs[keep].astype(np.float32), y=ys[keep].astype(np.float32),
                fill="toself", fillcolor=FILL_PRESENTING if presenting else FILL, line=dict(width=0),
                name=name, legendgroup="band", hoverinfo="skip", **axes)


def why_rows(bases: dict[str, BandBasis], t: T) -> list[dict[str, str]]:
    """One row per banded number: the metric, the regime and where its band comes from, the errors
    (median, p90, the 5-95 % range) and the measurements (ids with their error and source)."""
    known = load_measurements()
    rows = []
    for label, b in bases.items():
        ids = list(b.measurements)
        shown = []
        for mid in ids[:MAX_IDS_SHOWN]:
            m = known.get(mid)
            shown.append(mid if m is None else f"{mid} ({m['error'] * 100:+.0f} %)")
        more = t("band.why.more", n=len(ids) - MAX_IDS_SHOWN) if len(ids) > MAX_IDS_SHOWN else ""
        sources = sorted({known[m]["source"].split(":")[0].split(" ")[0] for m in ids if m in known})
        rows.append({t("band.why.col.metric"): label, t("band.why.col.basis"): own_text(b, t),
                     t("band.why.col.errors"): t("band.why.errors", median=F.number(b.median_abs_error * 100, 0),
                                                 p90=F.number(b.p90_abs_error * 100, 0),
                                                 lo=f"{math.expm1(-b.log_hi) * 100:+.0f}",
                                                 hi=f"{math.expm1(-b.log_lo) * 100:+.0f}"),
                     t("band.why.col.ids"): ", ".join(shown) + (f" {more}" if more else ""),
                     t("band.why.col.sources"): ", ".join(sources)})
    return rows


def render_why(bases: dict[str, BandBasis], t: T, key: str, where=None) -> None:
    """The "why this band" panel (lazy: drawn only while open)."""
    if not ENABLED or not bases:
        return
    import streamlit as st  # noqa: PLC0415

    from ui import tables  # noqa: PLC0415
    from ui.layout import lazy_expander  # noqa: PLC0415

    exp = lazy_expander(where or st, t("band.why.title"), f"why_band_{key}")
    if not exp.open:
        return
    with exp:
        st.caption(t("band.why.caption", widen=f"{WIDEN:g}", **coverage_words()))
        st.table(tables.arrow(why_rows(bases, t)), hide_index=True)
        st.caption(t("band.why.sources_note"))


def coverage_words() -> dict[str, str]:
    """The band's central share and its held-out coverage, as the caption states them (from the table:
    bench/make_bands.py records both).

    >>> sorted(coverage_words())
    ['central', 'held_out']
    """
    method = load_table()["method"]
    lo, hi = method["quantiles_of_loo_standardised_residuals"]
    return {"central": F.number(100 * (hi - lo), 1), "held_out": F.number(100 * method["held_out"]["inside_fraction"], 1)}


def errors_of(ids: Iterable[str]) -> list[float]:
    known = load_measurements()
    return [known[i]["error"] for i in ids if i in known]


def render_best(d, arch, gpu, t: T, *, rate_rps: float, tokens: int, efficiency=None) -> dict[str, BandBasis]:
    """The planner's best deployment's TTFT, TPOT and cost per million tokens with their ranges
    (one caption line; open-loop regime: the planner serves a rate, each engine its share of it,
    whose API server load sets the condition with ``efficiency``). Returns the bases shown."""
    if not ENABLED or d is None:
        return {}
    import streamlit as st  # noqa: PLC0415

    from calc.plan.costs import usd_per_million_tokens  # noqa: PLC0415

    cond = "engine" if efficiency is None else condition(rate_rps / (d.replicas * d.data_parallel_size), efficiency,
                                                         arch)
    bases = {t("fr.metric.ttft"): basis(arch, gpu, "ttft", arrival="poisson", condition=cond),
             t("fr.metric.tpot"): basis(arch, gpu, "tpot", arrival="poisson", condition=cond),
             t("fr.metric.x"): basis(arch, gpu, "throughput", arrival="poisson", condition=cond)}
    b_ttft, b_tpot, b_x = bases.values()
    ttft, tpot = d.ttft_s * 1e3, d.tpot_s * 1e3
    r = lambda lo_hi, digits, pre="": t("band.range", lo=pre + F.number(float(lo_hi[0]), digits),  # noqa: E731
                                         hi=pre + F.number(float(lo_hi[1]), digits))
    if d.usd_per_hour is None:
        cost_text, cost_range = "—", "—"
    else:
        cost = float(usd_per_million_tokens(usd_per_hour=d.usd_per_hour, tokens_per_s=rate_rps * tokens))
        cost_text, cost_range = F.number(cost, 3), r(inverse_limits(cost, b_x), 3, "$")
    st.caption(t("pl.band.best", ttft=F.number(ttft, 0), ttft_r=r(limits(ttft, b_ttft), 0),
                 tpot=F.number(tpot, 1), tpot_r=r(limits(tpot, b_tpot), 1), cost=cost_text, cost_r=cost_range))
    return bases
