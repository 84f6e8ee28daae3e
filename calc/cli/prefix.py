"""The prefix-cache options every load command takes (``estimate``, ``simulate``, ``plan``):
``--shared-prefix-len``, ``--num-shared-prefixes``, ``--turns`` and vLLM's
``--enable-prefix-caching`` / ``--no-enable-prefix-caching`` (:mod:`calc.traffic.prefix_cache`)."""

from __future__ import annotations

import argparse
from typing import Any

from calc.spec.untrusted import quote
from calc.traffic.prefix_cache import PrefixReuse

PREFIX_KEYS = ("shared_prefix_len", "num_shared_prefixes", "turns", "enable_prefix_caching")
LIMITS = {"shared_prefix_len": (0, 10_000_000), "num_shared_prefixes": (1, 1_000_000), "turns": (1, 1000)}


def add_prefix_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shared-prefix-len", type=int, default=None, metavar="TOKENS",
                   help="tokens at the start of every prompt shared with other requests (of --input-len): a system "
                        "prompt, few-shot examples, a RAG document (default 0: no reuse)")
    p.add_argument("--num-shared-prefixes", type=int, default=None, metavar="N",
                   help="distinct shared prefixes, each request one at random (default 1)")
    p.add_argument("--turns", type=int, default=None, metavar="K",
                   help="multi-turn chat of K turns: each request's input is the conversation so far; "
                        "--input-len is then the user's new tokens per turn (default 1: no reuse)")
    p.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction, default=None,
                   help="vLLM's automatic prefix caching (V1 default: on)")


def prefix_options(args: argparse.Namespace) -> dict[str, Any]:
    """The prefix options given as flags."""
    return {k: getattr(args, k) for k in PREFIX_KEYS if getattr(args, k, None) is not None}


def reuse_from_options(options: dict[str, Any]) -> PrefixReuse:
    """A :class:`PrefixReuse` from snake_case options (flags or a ``--batch`` line); ValueError
    naming the field and its allowed range on bad input."""
    vals: dict[str, Any] = {}
    for key, (lo, hi) in LIMITS.items():
        v = options.get(key)
        if v is None or (isinstance(v, str) and not v.strip()):
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise ValueError(f"{key}: got {quote(v)}, allowed a whole number {lo:,} – {hi:,}")
        try:
            f = float(v)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{key}: got {quote(v)}, allowed a whole number {lo:,} – {hi:,}") from None
        if not (f == f and lo <= f <= hi and f == int(f)):
            raise ValueError(f"{key}: got {quote(v)}, allowed a whole number {lo:,} – {hi:,}")
        vals[key] = int(f)
    on = options.get("enable_prefix_caching")
    if on is not None:
        if isinstance(on, str) and on.strip().lower() in ("true", "false", "1", "0"):
            on = on.strip().lower() in ("true", "1")
        if not isinstance(on, bool):
            raise ValueError(f"enable_prefix_caching: got {quote(on)}, allowed true or false")
        vals["enable_prefix_caching"] = on
    return PrefixReuse(**vals)


def prefix_record(pc, reuse: PrefixReuse) -> dict[str, Any]:
    """The JSON fields of a result: the hit rate (fraction of prompt tokens served from the cache)
    and the prefill length left, with the reuse asked."""
    return {"shared_prefix_len": reuse.shared_prefix_len, "num_shared_prefixes": reuse.num_shared_prefixes,
            "turns": reuse.turns, "enable_prefix_caching": reuse.enable_prefix_caching,
            "mean_input_len": float(pc.input_len), "prefix_cache_hit_rate": float(pc.prefix_cache_hit_rate),
            "cached_prompt_tokens": float(pc.cached_tokens),
            "uncached_prefill_tokens": float(pc.uncached_prefill_tokens),
            "prefixes_cached": float(pc.cached_items)}
