"""The memory page's shared prefixes: with prefix caching vLLM holds a cached KV block once and
counts its users, so requests that start with the same prefix (a system prompt, few-shot
examples) share its blocks and more of them fit (:func:`calc.traffic.prefix_cache.shared_prefix_requests`).
The reuse inputs are the frontier's, load test's and planner's (same URL keys, ui.prefixcache.widgets).
No arithmetic here beyond picking the numbers to show."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from calc.traffic.prefix_cache import PrefixReuse, cached_prefix_tokens, shared_prefix_kv_bytes, shared_prefix_requests
from ui import format as F
from ui.memory.explain import Panel
from ui.memory.explain import latex_number as _n
from ui.prefixcache.widgets import prefix_inputs


@dataclass(frozen=True)
class SharedPrefix:
    """The counts with and without the sharing, per GPU."""

    prefix_tokens: int  # tokens of the prefix found in the cache (whole blocks)
    num_prefixes: int
    prefix_bytes: float
    requests: int  # whole requests of the page's context that fit, sharing
    requests_alone: int  # without sharing (the page's card)
    in_use_bytes: float  # KV of the page's concurrency (at most what fits), sharing
    in_use_alone_bytes: float


def shared_prefix(sc, r, reuse: PrefixReuse | None) -> SharedPrefix | None:
    """The page's numbers with its shared prefix, or None when the workload has none (or caching is off)."""
    if reuse is None or reuse.turns > 1 or reuse.shared_prefix_len <= 0 or not reuse.enable_prefix_caching:
        return None
    bs = sc.serving.block_size
    tokens = int(cached_prefix_tokens(prefix_tokens=reuse.shared_prefix_len, prompt_tokens=sc.context_tokens,
                                      block_size=bs))
    per = float(r.kv_bytes_per_request)
    s = tokens * float(r.kv_bytes_per_token)
    n = int(reuse.num_shared_prefixes)
    fit = int(shared_prefix_requests(pool_bytes=float(r.kv_pool_bytes), bytes_per_request=per, prefix_bytes=s,
                                     num_prefixes=n))
    alone = int(r.max_concurrency_at_context)
    c = sc.concurrency
    return SharedPrefix(prefix_tokens=tokens, num_prefixes=n, prefix_bytes=s, requests=fit, requests_alone=alone,
                        in_use_bytes=float(shared_prefix_kv_bytes(concurrency=min(c, fit), bytes_per_request=per,
                                                                  prefix_bytes=s, num_prefixes=n)),
                        in_use_alone_bytes=float(r.kv_in_use_bytes))


def render(sc, r, t, starts: bool) -> tuple[PrefixReuse, SharedPrefix | None]:
    """The reuse inputs (a closed expander) and, with a shared prefix, what it changes; the reuse and
    the counts with sharing (None where the page shows none: hand it to :func:`panel`)."""
    reuse = prefix_inputs(t, input_len=sc.context_tokens)
    if not starts or not reuse.any_reuse:
        return reuse, None
    if reuse.turns > 1:
        st.caption(t("pc.mem.chat"))
        return reuse, None
    if not reuse.enable_prefix_caching:
        st.caption(t("pc.mem.off"))
        return reuse, None
    if sc.arch.num_sliding_layers:
        st.caption(t("pc.mem.sliding"))
        return reuse, None
    got = shared_prefix(sc, r, reuse)
    if got is None:
        return reuse, None
    st.info(t("pc.mem.result", n=F.integer(got.num_prefixes), p=F.integer(got.prefix_tokens),
              ctx=F.integer(sc.context_tokens), fit=F.integer(got.requests), alone=F.integer(got.requests_alone),
              conc=F.integer(min(sc.concurrency, got.requests)), used=F.gib(got.in_use_bytes),
              used_alone=F.gib(got.in_use_alone_bytes)))
    return reuse, got


def panel(r, t, got: SharedPrefix | None) -> Panel | None:
    """Why-panel of the count with shared prefixes (the formula, then its values): ``got`` is
    :func:`render`'s count."""
    if got is None:
        return None
    gib = 2.0 ** 30
    pool, per = float(r.kv_pool_bytes) / gib, float(r.kv_bytes_per_request) / gib
    s = got.prefix_bytes / gib
    return Panel(
        key="shared_prefix", title=t("pc.mem.why.title"),
        formula=r"C = \left\lfloor \frac{\text{pool} - N \cdot S}{R - S} \right\rfloor \quad (C \ge N)",
        plugged=(rf"C = \left\lfloor \frac{{{_n(pool)} - {got.num_prefixes} \times {_n(s, 3)}}}{{{_n(per, 3)} - "
                 rf"{_n(s, 3)}}} \right\rfloor = {_n(got.requests, 0)}\ \text{{({_n(got.requests_alone, 0)} "
                 rf"{t('pc.mem.why.alone')})}}"),
        takeaway=t("pc.mem.why.take", p=F.integer(got.prefix_tokens), s=F.gib(got.prefix_bytes),
                   per=F.gib(r.kv_bytes_per_request)),
        notes=[t("pc.mem.why.note")])


__all__ = ["SharedPrefix", "shared_prefix", "render", "panel"]
