"""Streamlit's configuration read without its process-wide lock: no lock convoy between sessions.

Streamlit's ``config.get_option`` takes one ``RLock`` shared by the whole process
(``_config_lock``) for every read, and a page run reads options hundreds of times: once per
message it sends (``forward_msg_cache.populate_hash_if_needed`` reads
``global.minCachedMessageSize``), and in many widgets. With ~50 sessions' script threads in one
process that lock becomes a convoy: the thread holding it is made to give up the GIL (every
``sys.getswitchinterval()``, 5 ms), the others block on the lock, and each waiter that is handed
the lock must then wait for the GIL before it can read and release it, so the lock passes from
thread to thread at about one switch interval each. In issue 18's room of 50 the threads of
every stall longer than 150 ms (``bench/latency_trace.py``, ``LLM_CALC_TRACE_STALL_MS``: every
thread's stack) were ~7 script threads blocked in ``get_option``, while a memory or frontier
run of ~25 ms of CPU took ~200 ms at the median.

Here ``get_option`` reads the parsed options without the lock while they are the dict last seen
under it: Streamlit parses the configuration (and re-parses it, which a running server without a
file watcher does not) by building a new dict under the lock and then binding it to the module's
``_config_options``; a dict lookup and the option's ``value`` are single reads. Where the dict is
another one (not parsed yet, or re-parsed since), the read takes Streamlit's own locked path and
remembers the dict it finds there. A missing key goes to Streamlit's function too (its error).

:func:`install` patches once per process (from :mod:`ui.shell`); it does nothing where
``streamlit.config`` does not look as expected (another Streamlit version), nor while
``get_option`` is patched by someone else (AppTest's run: its overrides would be read past).
"""

from __future__ import annotations

import threading
from typing import Any

_INSTALLED = False
_LOCK = threading.Lock()


def install() -> bool:
    """Patch ``streamlit.config.get_option`` (module doc), once; False where its shape is not the expected one."""
    global _INSTALLED
    with _LOCK:
        if _INSTALLED:
            return True
        from streamlit import config

        original = getattr(config, "get_option", None)
        lock = getattr(config, "_config_lock", None)
        if original is None or lock is None or not hasattr(config, "_config_options"):
            return False
        if getattr(original, "__module__", None) != config.__name__:
            # patched for now (AppTest's run overrides options such as global.appTest with a stand-in):
            # wrapping the stand-in would read past its overrides; install at a later call
            return False
        seen: list[Any] = [None]  # the options dict last found under Streamlit's lock

        def get_option(key: str) -> Any:
            options = config._config_options
            if options is not None and options is seen[0]:
                option = options.get(key)
                if option is not None:
                    return option.value
            with lock:  # Streamlit's path: parsed by now (or raising its error)
                value = original(key)
                seen[0] = config._config_options
            return value

        get_option.__doc__ = original.__doc__
        get_option.__wrapped__ = original  # type: ignore[attr-defined]
        config.get_option = get_option
        _INSTALLED = True
    return True
