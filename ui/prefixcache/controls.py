"""Page controls of the prefix-cache page and the reuse inputs the frontier and the load test take
(specs only; :func:`ui.state.render_control` draws them). Every key is page-local and in the URL."""

from __future__ import annotations

from calc.traffic.prefix_cache import PrefixReuse
from ui.controls import Control

PC_KIND = Control("pc_kind", "select", "shared", options=("none", "shared", "chat"))
PC_PREFIX_LEN = Control("pc_prefix_len", "number", 1024, lo=0, hi=10_000_000, step=16)
PC_PREFIXES = Control("pc_prefixes", "number", 10, lo=1, hi=1_000_000, step=1)
PC_TURNS = Control("pc_turns", "slider", 5, lo=2, hi=32, step=1)
PC_RATE = Control("pc_rate", "number", 2.0, lo=0.01, hi=100_000.0, step=0.5, integer=False)
PC_CACHING = Control("pc_caching", "toggle", True)
PC_SIMULATE = Control("pc_simulate", "toggle", False)
REUSE = (PC_KIND, PC_PREFIX_LEN, PC_PREFIXES, PC_TURNS, PC_CACHING)
PREFIX_CACHE = REUSE + (PC_RATE, PC_SIMULATE)


def reuse_of(kind: str, prefix_len: int, prefixes: int, turns: int, caching: bool, *, input_len: int) -> PrefixReuse:
    """The :class:`PrefixReuse` of the controls' values (the prefix cut to the prompt).

    >>> reuse_of("shared", 5000, 3, 5, True, input_len=2100).shared_prefix_len
    2100
    >>> reuse_of("chat", 2000, 3, 5, True, input_len=2100).turns
    5
    """
    if kind == "shared":
        return PrefixReuse(shared_prefix_len=min(int(prefix_len), int(input_len)), num_shared_prefixes=int(prefixes),
                           enable_prefix_caching=bool(caching))
    if kind == "chat":
        return PrefixReuse(turns=int(turns), enable_prefix_caching=bool(caching))
    return PrefixReuse(enable_prefix_caching=bool(caching))
