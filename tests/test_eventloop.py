"""ui.eventloop: a page run's messages reach the event loop in batches, in order, each run once."""

import asyncio
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui import eventloop
from ui.eventloop import Batch


class Loop:
    """The part of an event loop Batch uses: records call_soon and the exception handler's calls."""

    def __init__(self):
        self.soon, self.errors = [], []

    def call_soon(self, fn, *args):
        self.soon.append((fn, args))

    def call_exception_handler(self, context):
        self.errors.append(context["exception"])


def test_only_the_first_callback_of_a_batch_wakes_the_loop_and_all_run_in_order():
    b, loop, ran = Batch(), Loop(), []
    wakes = [b.add(lambda i=i: ran.append(i)) for i in range(5)]
    assert wakes == [True, False, False, False, False]  # 5 callbacks, 1 wake-up (was 5)
    b.drain(loop)
    assert ran == [0, 1, 2, 3, 4]
    assert loop.soon == [] and not b.scheduled
    assert b.add(lambda: ran.append(5))  # drained: the next one wakes the loop again


def test_an_error_goes_to_the_loops_handler_and_the_next_callback_still_runs():
    b, loop, ran = Batch(), Loop(), []

    def boom():
        raise ValueError("x")

    for cb in (boom, lambda: ran.append("after")):
        b.add(cb)
    b.drain(loop)
    assert ran == ["after"]
    assert [type(e) for e in loop.errors] == [ValueError]  # as asyncio's Handle._run reports it


def test_callbacks_queued_while_draining_get_another_turn_after_the_loops_other_work():
    b, loop, ran = Batch(), Loop(), []
    b.add(lambda: (ran.append(1), b.add(lambda: ran.append(2))))
    b.drain(loop)
    assert ran == [1] and b.scheduled  # not run inside this drain: the loop's other callbacks first
    fn, args = loop.soon.pop()
    fn(*args)
    assert ran == [1, 2] and not b.scheduled


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=60))
def test_each_threads_callbacks_run_once_in_the_order_it_queued_them(owners):
    """Property: callbacks queued from three threads while a real loop drains them run exactly once
    each, and each thread's in its own order (what call_soon_threadsafe per message guaranteed)."""
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    b, ran, wakes = Batch(), [], [0]

    def post(owner, i):
        if b.add(lambda: ran.append((owner, i))):
            wakes[0] += 1
            loop.call_soon_threadsafe(b.drain, loop)

    threads = [threading.Thread(target=lambda o=o: [post(o, i) for i, x in enumerate(owners) if x == o]) for o in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    done = threading.Event()
    if b.add(done.set):  # last in the FIFO: when it runs, everything queued before it has run
        loop.call_soon_threadsafe(b.drain, loop)
    assert done.wait(10)
    loop.call_soon_threadsafe(loop.stop)
    t.join()
    loop.close()
    for o in range(3):
        assert [i for who, i in ran if who == o] == [i for i, x in enumerate(owners) if x == o]
    assert len(ran) == len(owners)
    assert wakes[0] <= len(owners)


def test_install_patches_streamlits_two_hand_offs_once():
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.runtime import Runtime

    assert eventloop.install() and eventloop.install()  # idempotent
    assert AppSession._call_soon_on_event_loop.__name__ == "call_soon_batched"
    assert Runtime._enqueued_some_message.__name__ == "enqueued_some_message"


def test_a_sessions_events_from_its_script_thread_reach_the_loop_in_order_with_fewer_wake_ups():
    """The patched AppSession method on a real loop: 200 events from a script thread, all run, in
    order, on the loop's thread; the loop was woken fewer times than once per event."""
    from streamlit.runtime.app_session import AppSession

    eventloop.install()
    loop = asyncio.new_event_loop()
    wakes = [0]
    real = loop.call_soon_threadsafe

    def counting(*a, **k):
        wakes[0] += 1
        return real(*a, **k)

    loop.call_soon_threadsafe = counting
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    session = type("Session", (), {})()  # the hand-off reads only the session's _event_loop
    session._event_loop = loop
    ran, threads = [], []
    done = threading.Event()

    def script():
        for i in range(200):
            AppSession._call_soon_on_event_loop(session, lambda i=i: (ran.append(i), threads.append(threading.get_ident())))
        AppSession._call_soon_on_event_loop(session, done.set)

    s = threading.Thread(target=script)
    s.start()
    s.join()
    assert done.wait(10)
    real(loop.stop)
    t.join()
    loop.close()
    assert ran == list(range(200))
    assert set(threads) == {t.ident}  # on the loop's thread, as before
    assert wakes[0] < 201


def test_the_send_event_is_set_directly_on_the_loops_thread():
    from types import SimpleNamespace

    from streamlit.runtime.runtime import Runtime

    eventloop.install()

    async def go():
        objs = SimpleNamespace(eventloop=asyncio.get_running_loop(), need_send_data=asyncio.Event())
        rt = SimpleNamespace(_get_async_objs=lambda: objs)
        Runtime._enqueued_some_message(rt)
        return objs.need_send_data.is_set()  # at once, without a trip through the self-pipe

    # its own thread: a browser test's Playwright (sync API) may hold a running loop on this one
    got: list[bool] = []
    t = threading.Thread(target=lambda: got.append(asyncio.run(go())))
    t.start()
    t.join(10)
    assert got == [True]


def test_the_running_servers_sessions_are_rebound_to_the_patched_send_event(monkeypatch):
    """Streamlit's Runtime hands its bound ``_enqueued_some_message`` to its session manager when it
    is built, before any page (and so the patch) runs: :func:`eventloop.rebind` points the manager and
    the sessions that still hold that original bound method at the patched one, and leaves any
    other callback alone."""
    import types
    from types import SimpleNamespace

    from streamlit.runtime.runtime import Runtime

    assert eventloop.install()
    original = eventloop._ORIGINAL_ENQUEUED
    rt = Runtime.__new__(Runtime)  # no server: only what rebind reads
    old = types.MethodType(original, rt)
    other = lambda: None  # noqa: E731 - a callback someone else set
    s1, s2 = SimpleNamespace(_message_enqueued_callback=old), SimpleNamespace(_message_enqueued_callback=other)
    rt._session_mgr = SimpleNamespace(_message_enqueued_callback=old,
                                      list_sessions=lambda: [SimpleNamespace(session=s1), SimpleNamespace(session=s2)])
    monkeypatch.setattr(Runtime, "_instance", rt)
    assert eventloop.rebind() == 2  # the manager and s1
    for holder in (rt._session_mgr, s1):
        assert holder._message_enqueued_callback.__func__.__name__ == "enqueued_some_message"
        assert holder._message_enqueued_callback.__self__ is rt
    assert s2._message_enqueued_callback is other
    assert eventloop.rebind() == 0  # nothing left to do


def test_rebind_does_nothing_without_a_server(monkeypatch):
    from streamlit.runtime.runtime import Runtime

    eventloop.install()
    monkeypatch.setattr(Runtime, "_instance", None)
    assert eventloop.rebind() == 0


def run_on_a_fresh_loop(coro_fn) -> None:
    """asyncio.run(coro_fn()) on a thread of its own, re-raising what it raised: the browser tests'
    session-wide Playwright keeps an event loop running on the main thread, where asyncio.run refuses."""
    raised: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(coro_fn())
        except BaseException as e:  # noqa: BLE001 - handed back to the test's thread
            raised.append(e)

    t = threading.Thread(target=target)
    t.start()
    t.join(30)
    if raised:
        raise raised[0]


def test_a_script_thread_is_started_off_the_loop_in_order(monkeypatch):
    """On the server's loop, ScriptRunner.start returns at once (the starter thread starts the thread),
    with Streamlit's thread (its target, name, daemon); threads start in the order asked; a second
    start raises as Streamlit's does."""
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    assert eventloop.install()
    monkeypatch.setattr(eventloop, "on_server_loop", lambda: True)
    ran: list[int] = []
    done = threading.Event()

    class Runner:
        def __init__(self, i: int) -> None:
            self.i, self._script_thread = i, None

        def _run_script_thread(self) -> None:
            ran.append(self.i)
            if len(ran) == 20:
                done.set()

    runners = [Runner(i) for i in range(20)]

    async def start_all() -> None:
        for r in runners:
            ScriptRunner.start(r)

    run_on_a_fresh_loop(start_all)
    assert done.wait(10)
    assert ran == list(range(20))
    t = runners[0]._script_thread
    assert t.name == "ScriptRunner.scriptThread" and t.daemon
    with pytest.raises(RuntimeError, match="already started"):
        run_on_a_fresh_loop(start_all)


def test_a_script_thread_started_off_the_servers_loop_runs_before_start_returns():
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    assert eventloop.install()
    assert not eventloop.on_server_loop()  # no server here
    ran = []

    class Runner:
        _script_thread = None

        def _run_script_thread(self) -> None:
            ran.append(1)

    r = Runner()
    ScriptRunner.start(r)  # Streamlit's own: Thread.start() waits for the thread to begin
    r._script_thread.join(5)
    assert ran == [1]


def test_sender_yields_once_per_slice_not_per_message():
    # Streamlit's sender awaits asyncio.sleep(0) after each message; the view yields only when the slice's
    # time or message count has passed, and passes every other delay and name through.
    now = [0.0]
    view = eventloop.SlicedAsyncio(clock=lambda: now[0], slice_s=0.005, slice_messages=4)
    went_back = []

    async def sender(n: int) -> None:
        loop_turns = 0

        async def other() -> None:
            nonlocal loop_turns
            while True:
                loop_turns += 1
                await asyncio.sleep(0)

        task = asyncio.get_running_loop().create_task(other())
        await asyncio.sleep(0)  # let it start
        for _ in range(n):
            before = loop_turns
            await view.sleep(0)
            went_back.append(loop_turns > before)
        task.cancel()

    run_on_a_fresh_loop(lambda: sender(8))  # the clock stands still: every 4th message goes back to the loop
    assert went_back == [False, False, False, True, False, False, False, True]
    went_back.clear()
    now[0] = 1.0  # a slice's time has passed: the next one goes back at once
    run_on_a_fresh_loop(lambda: sender(2))
    assert went_back == [True, False]
    assert view.Event is asyncio.Event and view.wait is asyncio.wait
    got = []

    async def delayed() -> None:
        got.append(await view.sleep(0.001, "x"))

    run_on_a_fresh_loop(delayed)
    assert got == ["x"]


def test_install_gives_streamlits_sender_the_sliced_view():
    from streamlit.runtime import runtime as runtime_module

    eventloop.install()
    assert isinstance(runtime_module.asyncio, eventloop.SlicedAsyncio)
