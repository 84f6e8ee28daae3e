"""Why-panels of the prefix-cache page (:class:`ui.memory.explain.Panel`), read like scaling-book
boxes: the formula, the numbers plugged in, a one-line takeaway."""

from __future__ import annotations

from typing import Callable

from ui import format as F
from ui.memory.explain import Panel

T = Callable[..., str]


def _n(x: float, digits: int = 0) -> str:
    return F.number(float(x), digits).replace(",", "{,}")


def prefix_cache_panels(pt, i: int, *, reuse, block_size: int, t: T) -> list[Panel]:
    """Three panels at rate index ``i`` of :class:`ui.prefixcache.sweeps.Point`: what is found, what
    the cache holds (LRU), what the prefill saves."""
    hit = float(pt.hit_rate[i])
    S, n, C = float(pt.item_blocks[i]), float(pt.items[i]), float(pt.cache_blocks[i])
    p = float(pt.request_hit_probability[i])
    found = float(pt.cached_tokens[i]) / p if p > 0 else 0.0
    I = float(pt.input_len[i])
    panels = [Panel(
        key="pc_found", title=t("pc.why.found.title", pct=F.percent(hit, 1)),
        formula=r"\text{hit} = \frac{p \cdot \lfloor \min(P,\ I-1) / b \rfloor \cdot b}{I}",
        plugged=rf"\frac{{{_n(p, 3)} \cdot {_n(found)}}}{{{_n(I)}}} = {_n(hit * 100, 1)}\,\%",
        takeaway=t("pc.why.found.takeaway", bs=block_size),
        notes=[t("pc.why.found.note")])]
    panels.append(Panel(
        key="pc_lru", title=t("pc.why.lru.title", held=F.expected_count(float(pt.cached_items[i])), n=F.number(n, 0)),
        formula=r"n S \left(1-(1-\tfrac1n)^{T_c}\right) + u\,T_c = C,\qquad p = 1-(1-\tfrac1n)^{T_c}",
        plugged=rf"n = {_n(n)},\ S = {_n(S)}\ \text{{blocks}},\ C = {_n(C)}\ \text{{blocks}} \Rightarrow p = {_n(p, 3)}",
        takeaway=t("pc.why.lru.takeaway", fit=F.number(C / S if S > 0 else float('inf'), 0)),
        notes=[t("pc.why.lru.note")]))
    on, off = float(pt.ttft_s[i]), float(pt.ttft_off_s[i])
    panels.append(Panel(
        key="pc_ttft", title=t("pc.why.ttft.title", on=F.number(on * 1e3, 0), off=F.number(off * 1e3, 0)),
        formula=r"T_\text{prefill} \propto I - H \quad (\text{keys still read: } H + \text{new})",
        plugged=rf"I - H = {_n(I)} - {_n(float(pt.cached_tokens[i]))} = {_n(I - float(pt.cached_tokens[i]))}\ \text{{tokens}}",
        takeaway=t("pc.why.ttft.takeaway"),
        notes=[t("pc.why.ttft.note")]))
    return panels
