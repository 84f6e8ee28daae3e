"""Fewer event-loop wake-ups per page run: a script's messages reach the server's event loop in batches.

Streamlit hands every ForwardMsg of a page run (about 100 on the memory or frontier page: one per
element) from the script's thread to the server's event loop with its own
``loop.call_soon_threadsafe`` (``AppSession._call_soon_on_event_loop``), and the loop, once it has
queued the message, wakes its sender loop with another one (``Runtime._enqueued_some_message``,
called on the loop's own thread). Each of these writes a byte to the loop's self-pipe: a system
call, a wake-up of the loop thread and a hand-over of the GIL, twice per message. In issue 18's
room of 50 sessions that was ~96,000 self-pipe writes in two minutes (bench/ui_profile.py).

Here, per session, the callbacks go to a FIFO; only the first one of a batch wakes the loop, which
then runs every callback queued by then, in order (each as the loop would have run it: an error
goes to the loop's exception handler and the next callback still runs). On the loop's own thread,
the "need to send" event is set directly (what the callback would have done, a moment later).
Messages, their order and their content are unchanged: only the wake-ups are fewer.

:func:`install` patches those two Streamlit methods once per process (from :mod:`ui.shell`); it
does nothing where they are not what this module expects (another Streamlit version). The second
one is also re-bound where the running server already holds it: the ``Runtime`` hands its bound
``_enqueued_some_message`` to its session manager when it is built (``runtime.py``:
``message_enqueued_callback``), before any page runs, and the manager to every session it makes,
so the class patch alone never reached a session. Unbound there, each message of a run still cost
the loop one ``call_soon_threadsafe`` (a self-pipe write and a loop turn) from its own thread:
14,317 in 192 runs of the memory and frontier pages, ~75 a run (bench/ui_profile.py, cProfile of the loop's thread).

Third, a rerun's script thread is started off the loop. Streamlit makes a new ``ScriptRunner``, and
so a new thread, for every rerun of a session whose last run has ended, and ``ScriptRunner.start``
runs on the loop: ``threading.Thread.start()`` waits until the new thread has run its first lines,
which needs the GIL, which the other sessions' script threads hold in turns of
``sys.getswitchinterval()``; meanwhile the loop, which forwards every session's messages, stands
still. In issue 18's room of 50 that was 818 starts taking 5.7 s of the loop's ~100 s, ~7 ms each
(bench/latency_trace.py). Here, on the server's loop (:func:`on_server_loop`; AppTest's runner joins its
thread right after starting it, and keeps Streamlit's start), the thread object is made as Streamlit
makes it and handed to one starter thread (a FIFO: the sessions' runs start in the order asked);
the loop goes on at once. Nothing in Streamlit waits for the thread to be running: a rerun or
stop request queued before it runs is read by it first thing, as before.

Fourth, the sender yields to the loop once per time slice, not once per message. Streamlit's
sender (``Runtime._loop_coroutine``) hands each queued message to its session's socket writer and
then ``await asyncio.sleep(0)``: a loop turn, whose ``select`` releases the GIL. With the sessions'
script threads running, getting the GIL back takes the loop up to ``sys.getswitchinterval()``
(5 ms): the convoy effect, up to ~0.5 s for a page run's ~100 messages, and every other session's
messages wait behind it (issue 18's room: script end -> ``script_finished`` handed to the socket
writer, p95 240-630 ms). Here that module's ``asyncio`` is a view of asyncio whose ``sleep(0)`` goes
back to the loop only when :data:`SEND_SLICE_S` has passed since the sender last did, or
:data:`SEND_SLICE_MESSAGES` messages have gone (other delays,
and every other name, are asyncio's own): a page run's messages go out in one or two turns, and
no task waits more than a slice longer than before. Messages, their order and their content are
unchanged.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import queue
import threading
import time
from typing import Any, Callable

_INSTALLED = False
_LOCK = threading.Lock()
_ORIGINAL_ENQUEUED: Callable[..., None] | None = None  # Streamlit's Runtime._enqueued_some_message, once patched
_LOG = logging.getLogger(__name__)
_STARTS: queue.SimpleQueue[threading.Thread] = queue.SimpleQueue()  # script threads to start, in order
_STARTER: list[threading.Thread] = []  # the one starter thread, once running
SEND_SLICE_S = 0.005  # the sender's longest run between two loop turns (module doc, fourth)
# and the most messages it hands over between two (a session's send queue holds 500: Streamlit drops a
# client whose queue is full, and its writer empties the queue only when the loop turns)
SEND_SLICE_MESSAGES = 64


class SlicedAsyncio:
    """``asyncio`` for Streamlit's sender loop: ``sleep(0)`` yields once per :data:`SEND_SLICE_S`
    (module doc, fourth); everything else is asyncio's. One per module it replaces ``asyncio`` in."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter, slice_s: float = SEND_SLICE_S,
                 slice_messages: int = SEND_SLICE_MESSAGES) -> None:
        self._clock, self._slice_s, self._slice_messages = clock, slice_s, slice_messages
        self._last_yield, self._skipped = clock(), 0

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    def sleep(self, delay: float, result: Any = None) -> Any:
        if delay != 0:
            return asyncio.sleep(delay, result)
        now = self._clock()
        if now - self._last_yield < self._slice_s and self._skipped + 1 < self._slice_messages:
            self._skipped += 1
            return _ready(result)
        self._last_yield, self._skipped = now, 0
        return asyncio.sleep(0, result)


async def _ready(result: Any = None) -> Any:
    """An awaitable that completes without going back to the loop."""
    return result


def _start_all() -> None:
    """The starter thread: start each script thread handed to it, in order (module doc)."""
    while True:
        thread = _STARTS.get()
        try:
            thread.start()
        except Exception:  # noqa: BLE001 - as Streamlit, where start() raised on the loop: logged, the rest go on
            _LOG.exception("a script thread did not start")


def start_off_loop(thread: threading.Thread) -> None:
    """Have ``thread`` started by the starter thread (made on first use); returns at once."""
    with _LOCK:
        if not _STARTER:
            starter = threading.Thread(target=_start_all, name="llm-calc-script-starter", daemon=True)
            starter.start()
            _STARTER.append(starter)
    _STARTS.put(thread)


class Batch:
    """One session's callbacks waiting for the loop (any thread appends, the loop drains)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: collections.deque[Callable[[], Any]] = collections.deque()
        self.scheduled = False

    def add(self, callback: Callable[[], Any]) -> bool:
        """Queue ``callback``; True when the loop must be woken to drain (the batch's first)."""
        with self.lock:
            self.items.append(callback)
            if self.scheduled:
                return False
            self.scheduled = True
            return True

    def drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run (on the loop) the callbacks queued so far, in order; later ones get another turn."""
        with self.lock:
            n = len(self.items)
        for _ in range(n):
            with self.lock:
                callback = self.items.popleft()
            try:
                callback()
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException as exc:  # noqa: BLE001 - as asyncio's Handle._run: to the loop's handler
                loop.call_exception_handler({"message": f"Exception in callback {callback!r}", "exception": exc})
        with self.lock:
            if not self.items:
                self.scheduled = False
                return
        loop.call_soon(self.drain, loop)  # queued while draining: after the loop's other ready callbacks


def _batch(session: Any) -> Batch:
    batch = session.__dict__.get("_llm_calc_batch")
    if batch is None:
        with _LOCK:
            batch = session.__dict__.setdefault("_llm_calc_batch", Batch())
    return batch


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def on_server_loop() -> bool:
    """This thread runs the Streamlit server's event loop (not AppTest's runner, not another loop)."""
    from streamlit.runtime.runtime import Runtime

    if not Runtime.exists():
        return False
    try:
        loop = Runtime.instance()._get_async_objs().eventloop
    except Exception:  # noqa: BLE001 - no loop yet, or AppTest's mock runtime
        return False
    return isinstance(loop, asyncio.AbstractEventLoop) and _on_loop_thread(loop)


def install() -> bool:
    """Patch Streamlit's two hand-offs (module doc), once; False where their shape is not the expected one."""
    global _INSTALLED, _ORIGINAL_ENQUEUED
    with _LOCK:
        if _INSTALLED:
            return True
        from streamlit.runtime.app_session import AppSession
        from streamlit.runtime.runtime import Runtime

        from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

        call_soon = getattr(AppSession, "_call_soon_on_event_loop", None)
        enqueued = getattr(Runtime, "_enqueued_some_message", None)
        start = getattr(ScriptRunner, "start", None)
        if (call_soon is None or enqueued is None or not hasattr(Runtime, "_get_async_objs") or start is None
                or not hasattr(ScriptRunner, "_run_script_thread")):
            return False

        def call_soon_batched(self, callback: Callable[[], None]) -> None:
            loop = getattr(self, "_event_loop", None)
            if loop is None:
                return call_soon(self, callback)
            batch = _batch(self)
            if batch.add(callback):
                try:
                    loop.call_soon_threadsafe(batch.drain, loop)
                except RuntimeError:  # the loop is closed (shutdown): dropped, as Streamlit does
                    if not loop.is_closed():
                        raise
                    with batch.lock:
                        batch.items.clear()
                        batch.scheduled = False

        def enqueued_some_message(self) -> None:
            objs = self._get_async_objs()
            if _on_loop_thread(objs.eventloop):
                objs.need_send_data.set()
            else:
                enqueued(self)

        def start_script_thread(self) -> None:
            """``ScriptRunner.start`` (Streamlit 1.67) with the thread started off the loop (module doc)."""
            if not on_server_loop():  # AppTest's runner (it joins the thread next), another thread: Streamlit's own
                return start(self)
            if self._script_thread is not None:
                raise RuntimeError("ScriptRunner was already started")
            self._script_thread = threading.Thread(target=self._run_script_thread, name="ScriptRunner.scriptThread",
                                                   daemon=True)
            start_off_loop(self._script_thread)

        from streamlit.runtime import runtime as runtime_module

        if getattr(runtime_module, "asyncio", None) is asyncio:  # read at each call: the running sender sees it
            runtime_module.asyncio = SlicedAsyncio()
        AppSession._call_soon_on_event_loop = call_soon_batched
        ScriptRunner.start = start_script_thread
        Runtime._enqueued_some_message = enqueued_some_message
        _ORIGINAL_ENQUEUED = enqueued
        _INSTALLED = True
    rebind()
    return True


def rebind() -> int:
    """Point the running server's session manager and its sessions at the patched
    ``Runtime._enqueued_some_message`` where they hold the original bound method (module doc).
    Returns how many holders were re-bound (0: not installed, no server as under AppTest, or nothing to do)."""
    from streamlit.runtime.runtime import Runtime

    original = _ORIGINAL_ENQUEUED
    if original is None or not Runtime.exists():
        return 0
    runtime = Runtime.instance()
    patched = runtime._enqueued_some_message  # the class's function now: enqueued_some_message

    def stale(callback: Any) -> bool:
        return getattr(callback, "__self__", None) is runtime and getattr(callback, "__func__", None) is original

    holders = [getattr(runtime, "_session_mgr", None)]
    try:
        holders += [info.session for info in runtime._session_mgr.list_sessions()]
    except Exception:  # noqa: BLE001 - another Streamlit's manager: leave the sessions as they are
        pass
    n = 0
    for holder in holders:
        if holder is not None and stale(getattr(holder, "_message_enqueued_callback", None)):
            holder._message_enqueued_callback = patched  # one attribute: atomic for a session sending now
            n += 1
    return n
