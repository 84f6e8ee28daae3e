"""What one rerun may cost on a shared server, and the result caches bounded in bytes.

Budgets are settings (environment variables, read at each use so a test or an operator can change
them), with defaults for a 2-core workshop box serving 30–50 people in a 1 GiB pod:

* ``LLM_CALC_MAX_CPU_S`` (15): CPU seconds of simulation per rerun. A load test whose lower-bound
  estimate (:func:`calc.traffic.budget.estimate_work`) passes it is refused with the CLI command
  that runs it; a run the estimate missed stops at the caps it implies (``truncated``, partial).
  The planner's percentile check gets the same seconds as its work budget.
* ``LLM_CALC_MAX_RUN_MIB`` (256): memory of one simulation (its per-step series).
* ``LLM_CALC_CACHE_MIB`` (256): all cached results together (load test, sweep, planner), least
  recently used evicted first; one result larger than it is computed but not kept.

:class:`ByteCache` is shared by every session of the process (module-level, thread-safe) and lets
a second session asking for a result being computed wait for it instead of computing it again.
Nothing here imports streamlit.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import threading
from collections import OrderedDict, namedtuple
from dataclasses import dataclass
from typing import Any, Callable, Hashable

import numpy as np

MIB = 2**20
DEFAULTS = {"LLM_CALC_MAX_CPU_S": 15.0, "LLM_CALC_MAX_RUN_MIB": 256.0, "LLM_CALC_CACHE_MIB": 256.0}


@dataclass(frozen=True)
class Limits:
    cpu_s: float
    run_bytes: int
    cache_bytes: int


def _setting(name: str) -> float:
    raw = os.environ.get(name, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULTS[name]
    return value if np.isfinite(value) and value > 0 else DEFAULTS[name]


def limits() -> Limits:
    """The budgets now (module doc); a missing, unreadable or non-positive setting is its default.

    >>> limits() == Limits(cpu_s=15.0, run_bytes=256 * MIB, cache_bytes=256 * MIB)   # nothing set
    True
    """
    return Limits(cpu_s=_setting("LLM_CALC_MAX_CPU_S"), run_bytes=int(_setting("LLM_CALC_MAX_RUN_MIB") * MIB),
                  cache_bytes=int(_setting("LLM_CALC_CACHE_MIB") * MIB))


def nbytes(obj: Any, _depth: int = 0) -> int:
    """Approximate bytes held by a result: NumPy buffers, plus the Python objects of dataclasses,
    lists, tuples and dicts (8 levels deep).

    >>> nbytes(np.zeros(1000)) >= 8000, nbytes([np.zeros(10), np.zeros(10)]) >= 160
    (True, True)
    """
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes) + 112
    if _depth > 8:
        return sys.getsizeof(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sys.getsizeof(obj) + sum(nbytes(getattr(obj, f.name), _depth + 1) for f in dataclasses.fields(obj))
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sys.getsizeof(obj) + sum(nbytes(x, _depth + 1) for x in obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(nbytes(k, _depth + 1) + nbytes(v, _depth + 1) for k, v in obj.items())
    return sys.getsizeof(obj)


def _freeze(obj: Any, _depth: int = 0) -> None:
    """Make the arrays of a shared result read-only (sessions share one object)."""
    if isinstance(obj, np.ndarray):
        obj.flags.writeable = False
    elif _depth <= 4 and dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _freeze(getattr(obj, f.name), _depth + 1)


class ByteCache:
    """A least-recently-used cache bounded by the total bytes of its values (``max_bytes``, or the
    ``LLM_CALC_CACHE_MIB`` setting when None), thread-safe, computing each key once at a time.

    >>> c = ByteCache(max_bytes=4000)
    >>> a = c.get("a", lambda: np.zeros(200)); b = c.get("b", lambda: np.zeros(200))
    >>> c.keys(), c.get("a", lambda: None) is a          # a hit moves "a" to the back
    (['a', 'b'], True)
    >>> _ = c.get("c", lambda: np.zeros(200)); c.keys()  # 3 × 1,712 B > 4,000 B: "b" evicted
    ['a', 'c']
    """

    def __init__(self, max_bytes: int | None = None) -> None:
        self._max = max_bytes
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}

    @property
    def max_bytes(self) -> int:
        return limits().cache_bytes if self._max is None else int(self._max)

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def keys(self) -> list:
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def lookup(self, key: Hashable) -> tuple[bool, Any]:
        """(True, value) when ``key`` is cached (it becomes the most recently used), else (False, None)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return True, self._items[key][0]
            return False, None

    def get(self, key: Hashable, compute: Callable[[], Any], size: Callable[[Any], int] = nbytes) -> Any:
        """The value for ``key``: cached, or ``compute()`` (once: other threads asking for the same
        key wait for it), kept if it fits, evicting the least recently used."""
        hit, value = self.lookup(key)
        if hit:
            return value
        with self._lock:
            gate = self._computing.setdefault(key, threading.Lock())
        with gate:
            hit, value = self.lookup(key)
            if hit:
                return value
            try:
                value = compute()
                self.store(key, value, size)
            finally:
                with self._lock:
                    self._computing.pop(key, None)
            return value

    def store(self, key: Hashable, value: Any, size: Callable[[Any], int] = nbytes) -> None:
        """Keep a value computed elsewhere (a worker process): read-only, sized, as :meth:`get` keeps it."""
        _freeze(value)
        self.put(key, value, size(value))

    def put(self, key: Hashable, value: Any, size_bytes: int) -> None:
        cap = self.max_bytes
        with self._lock:
            if key in self._items:
                self._bytes -= self._items.pop(key)[1]
            if size_bytes > cap:
                return
            self._items[key] = (value, int(size_bytes))
            self._bytes += int(size_bytes)
            while self._bytes > cap and self._items:
                _, (_, b) = self._items.popitem(last=False)
                self._bytes -= b


RESULTS = ByteCache()  # every page's results, shared by the sessions of this process


_MISSING = object()
CacheInfo = namedtuple("CacheInfo", ["hits", "misses", "maxsize", "currsize"])  # as functools'


def shared_memo(maxsize: int):
    """``functools.lru_cache(maxsize)`` for results every session shares, computed once at a time:
    a thread that asks for a key another thread is computing waits for that result instead of
    computing it again (as :meth:`ByteCache.get`). In a room that opens one link at once, every
    session's first run asks the same inputs; with ``lru_cache`` each of them missed and computed
    them side by side (issue 18's room of 50: the frontier's open loop, ~44 ms, once per session
    that opened before the first had finished). Keys are the positional and keyword arguments
    (hashable, as for lru_cache); ``cache_info()`` and ``cache_clear()`` as lru_cache's; an
    exception is not cached (the next caller computes again).

    >>> calls = []
    >>> @shared_memo(2)
    ... def square(x):
    ...     calls.append(x)
    ...     return x * x
    >>> [square(3), square(3), square(4), square(5), square(3)], calls   # 3 evicted by 5, computed again
    ([9, 9, 16, 25, 9], [3, 4, 5, 3])
    >>> square.cache_info()
    CacheInfo(hits=1, misses=4, maxsize=2, currsize=2)
    """
    def decorate(fn):
        items: OrderedDict = OrderedDict()
        lock = threading.Lock()
        computing: dict[Hashable, threading.Lock] = {}
        stats = [0, 0]  # hits, misses

        def lookup(key):
            with lock:
                value = items.get(key, _MISSING)
                if value is not _MISSING:
                    items.move_to_end(key)
                return value

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
            value = lookup(key)
            if value is _MISSING:
                with lock:
                    gate = computing.setdefault(key, threading.Lock())
                with gate:  # another thread computing this key: wait for it
                    value = lookup(key)
                    if value is _MISSING:
                        try:
                            value = fn(*args, **kwargs)
                            with lock:
                                stats[1] += 1
                                items[key] = value
                                while len(items) > maxsize:
                                    items.popitem(last=False)
                        finally:
                            with lock:
                                computing.pop(key, None)
                        return value
            with lock:
                stats[0] += 1
            return value

        def cache_info():
            with lock:
                return CacheInfo(stats[0], stats[1], maxsize, len(items))

        def cache_clear():
            with lock:
                items.clear()
                stats[:] = [0, 0]

        wrapper.cache_info, wrapper.cache_clear = cache_info, cache_clear
        return wrapper

    return decorate
