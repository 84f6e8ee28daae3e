"""The SLA and the traffic every page shares: one spec per control, one default, one URL key.

The frontier, the load test and the planner judge the same SLA (targets and statistic); the load
test and the planner carry the same arrival rate; the frontier and the load test the same
replicas; every page the sidebar's prompt and output lengths (context − output, output). Each page draws these controls with :func:`ui.state.render_control` (the statistic with
translated options, :mod:`ui.labelled`); the value lives under one key in the session and the URL,
so moving between pages keeps it. Nothing here imports streamlit (unit-testable).

Older links named these controls per page (``lt_ttft_ms``, ``pl_ttft_ms``, ``slo_ttft_ms`` …).
:func:`migrate_params` reads such a key once as the new one and drops it, before any widget reads
the URL (:func:`ui.state.sanitize_query_params`); the link is then written with the new keys.

Defaults: the course's chat SLA (§3.4: TTFT < 500 ms, TPOT < 50 ms) judged at P95 (§3.6: a tail
percentile, not the mean; the load test's default before the controls were shared).
"""

from __future__ import annotations

from typing import Any

from calc.plan.search import PERCENTILES
from calc.traffic.workload import LENGTH_KINDS
from calc.timing.frontier import COURSE_TPOT_SLO_S, COURSE_TTFT_SLO_S
from ui.controls import Control

# ----------------------------------------------------------------------------- the SLA

SLA_TTFT_MS = Control("sla_ttft_ms", "number", int(COURSE_TTFT_SLO_S * 1000), lo=10, hi=600_000, step=50)
SLA_TPOT_MS = Control("sla_tpot_ms", "number", int(COURSE_TPOT_SLO_S * 1000), lo=1, hi=10_000, step=5)
SLA_STAT = Control("sla_stat", "select", "p95", options=PERCENTILES)  # mean, p50, p90, p95, p99
SLA = (SLA_TTFT_MS, SLA_TPOT_MS, SLA_STAT)

# ----------------------------------------------------------------------------- the traffic

# Requests per second offered to the whole deployment; replicas split it evenly (a load balancer).
# 2 req/s: under one replica's capacity in the default scenario (Llama-2-7B on an A100, 1,792 + 256
# tokens: about 2.9 req/s by calc.timing.estimate), so the load test opens on a loaded, stable engine.
RATE = Control("rate", "number", 2.0, lo=0.01, hi=100_000.0, step=0.5, integer=False)
# Independent copies of the engine behind a load balancer (the frontier's key before it was shared).
REPLICAS = Control("replicas", "number", 1, lo=1, hi=10_000, step=1)
# How request lengths vary around the sidebar's prompt and output lengths: the load test draws its
# requests so, the planner sizes its slot queue (C_s², calc.traffic.workload.length_cv2) and simulates
# its percentile check so. Lognormal, CV 0.5: a ShareGPT-like spread (the load test's default before).
LENGTHS = Control("lengths", "select", "lognormal", options=LENGTH_KINDS)
LENGTH_SPREAD = Control("length_spread", "slider", 0.5, lo=0.0, hi=2.0, step=0.05, integer=False)
TRAFFIC = (RATE, REPLICAS, LENGTHS, LENGTH_SPREAD)

# Keys several pages draw: their value follows the user from page to page (ui.state.render_control).
ACROSS_PAGES = frozenset(c.key for c in SLA + TRAFFIC)

# New key -> the old per-page keys it replaces, in the order they are read when a link holds several.
RENAMED: dict[str, tuple[str, ...]] = {
    SLA_TTFT_MS.key: ("lt_ttft_ms", "pl_ttft_ms", "slo_ttft_ms"),
    SLA_TPOT_MS.key: ("lt_tpot_ms", "pl_tpot_ms", "slo_tpot_ms"),
    SLA_STAT.key: ("lt_percentile", "pl_percentile"),
    RATE.key: ("lt_rate", "pl_rate"),
    # the closed loop's clients are the sidebar's concurrency (requests at once), one number for every page
    "concurrency": ("lt_concurrency",),
    LENGTHS.key: ("lt_lengths",),
    LENGTH_SPREAD.key: ("lt_spread",),
}
# The load test's own lengths before they were shared: a mean prompt and output, and their defaults
# then. They become the sidebar's context (prompt + output) and output length.
OLD_LENGTHS = {"lt_input_len": 1024, "lt_output_len": 256}


def stat_label(stat: str, mean_word: str) -> str:
    """How a statistic token is shown in a sentence: ``p95`` → ``P95``, ``mean`` → ``mean_word``.

    >>> stat_label("p95", "mean"), stat_label("mean", "均值")
    ('P95', '均值')
    """
    return mean_word if stat == "mean" else stat.upper()


def migrate_params(params: dict[str, list[str]]) -> tuple[dict[str, list[str] | None], list[tuple[str, str]]]:
    """The URL changes that turn old per-page keys into the shared ones (pure, no streamlit).

    ``params`` maps a key to all its values. Returns the changes (key → values, or None to remove
    the key) and the (old, new) pairs read. A new key already in the link wins; otherwise the first
    old key present (in :data:`RENAMED` order) gives its values. The load test's old lengths
    (:data:`OLD_LENGTHS`, prompt and output) become context = prompt + output and output_len,
    over the link's own: they were what that page computed with. Every old key is removed. The
    values are not checked here: the new control's validation (:func:`ui.controls.sanitize_params`)
    names a bad one under the new key.

    >>> migrate_params({"pl_ttft_ms": ["1000"], "pl_percentile": ["mean"], "model": ["x"]})
    ({'sla_ttft_ms': ['1000'], 'pl_ttft_ms': None, 'sla_stat': ['mean'], 'pl_percentile': None}, [('pl_ttft_ms', 'sla_ttft_ms'), ('pl_percentile', 'sla_stat')])
    >>> migrate_params({"sla_tpot_ms": ["40"], "slo_tpot_ms": ["30"]})   # the new key wins
    ({'slo_tpot_ms': None}, [])
    >>> migrate_params({"rate": ["3"]})
    ({}, [])
    >>> migrate_params({"lt_input_len": ["512"], "context": ["4096"]})[0]   # prompt 512 + the old 256 output
    {'context': ['768'], 'output_len': ['256'], 'lt_input_len': None}
    """
    changes: dict[str, list[str] | None] = {}
    read: list[tuple[str, str]] = []
    if any(k in params for k in OLD_LENGTHS):  # the load test's lengths: they defined its view, so they win
        got = {k: params.get(k, [str(d)])[-1] for k, d in OLD_LENGTHS.items()}
        try:
            prompt, output = int(got["lt_input_len"]), int(got["lt_output_len"])
            changes["context"], changes["output_len"] = [str(prompt + output)], [str(output)]
            read += [(k, "context") for k in OLD_LENGTHS if k in params]
        except ValueError:  # not whole numbers: dropped, the sidebar's lengths apply
            pass
        changes.update({k: None for k in OLD_LENGTHS if k in params})
    for new, olds in RENAMED.items():
        present = [old for old in olds if old in params]
        if not present:
            continue
        if new not in params:
            changes[new] = list(params[present[0]])
            read.append((present[0], new))
        for old in present:
            changes[old] = None
    return changes, read

