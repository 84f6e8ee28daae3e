"""ui.background: a page's wait for a worker redraws its progress bar only when what it shows changes,
or when Streamlit holds a rerun or stop request (the redraw is then the yield point that raises it)."""

from types import SimpleNamespace

import pytest

from ui import background
from ui.workers import Job


def _job_fn():  # pragma: no cover - never run: the fake pool answers
    return 0


class Clock:
    def __init__(self):
        self.now = 100.0

    def monotonic(self):
        return self.now


class Ticket:
    """Waits ``polls`` times (each POLL_S of the fake clock), queued or running, then answers 42."""

    def __init__(self, clock, polls, running):
        self.clock, self.polls, self.running = clock, polls, running
        self.cpu_s, self.ahead = 0.0, 2

    def wait(self, timeout_s):
        if self.polls == 0:
            return True
        self.polls -= 1
        self.clock.now += timeout_s
        if self.running:
            self.cpu_s += timeout_s  # a busy worker: its CPU seconds grow with the wait
        return False

    def result(self):
        return 42

    def cancel(self):
        pass


class Bar:
    def __init__(self):
        self.drawn = []

    def progress(self, value, text):
        self.drawn.append((int(value * 100), text))

    def empty(self):
        pass


def _wait(monkeypatch, *, polls, running, state):
    clock, bar = Clock(), Bar()
    ticket = Ticket(clock, polls, running)
    ctx = SimpleNamespace(session_id="s", script_requests=SimpleNamespace(_state=SimpleNamespace(name=state)))
    monkeypatch.setattr(background, "_serving", lambda: True)
    monkeypatch.setattr(background, "pool", lambda: SimpleNamespace(submit=lambda job, **kw: ticket, queue=16))
    monkeypatch.setattr(background, "limits", lambda: SimpleNamespace(cpu_s=15.0))
    monkeypatch.setattr(background, "time", clock)
    monkeypatch.setattr(background, "get_script_run_ctx", lambda suppress_warning=True: ctx)
    monkeypatch.setattr(background.st, "empty", lambda: bar)
    t = lambda key, **kw: f"{key} " + " ".join(f"{k}={v}" for k, v in sorted(kw.items()))  # noqa: E731
    assert background.result(Job(("test_background", polls, running, state), _job_fn), t, label="run") == 42
    return bar.drawn


def test_a_queued_wait_draws_once_a_second_not_every_poll(monkeypatch):
    # 20 polls of 0.25 s = 5 s queued; the one at 0.25 s is under SHOW_AFTER_S (0.5 s): 19 polls at
    # 0.5 … 5.0 s. Their text counts whole seconds (F.number(x, 0), half to even): 0.5 -> "0",
    # 0.75 … 1.25 -> "1", 1.5 … 2.5 -> "2", …, 5.0 -> "5": 19 polls, 6 distinct texts.
    drawn = _wait(monkeypatch, polls=20, running=False, state="CONTINUE")
    texts = [text for _, text in drawn]
    assert len(texts) == len(set(texts)) == 6, texts  # each new text once; was 19 redraws
    assert all("ahead=3" in x for x in texts)  # 2 queued before it, + itself


def test_a_running_wait_still_draws_every_poll(monkeypatch):
    # running: the text carries the worker's CPU seconds to 0.1 s, +0.25 s each poll: every poll differs
    drawn = _wait(monkeypatch, polls=20, running=True, state="CONTINUE")
    assert len(drawn) == 19 and len(set(drawn)) == 19


@pytest.mark.parametrize("state", ["RERUN", "STOP"])
def test_a_pending_rerun_or_stop_gets_its_yield_point_at_every_poll(monkeypatch, state):
    drawn = _wait(monkeypatch, polls=20, running=False, state=state)
    assert len(drawn) == 19  # every poll redraws, as before: Streamlit raises its request there


def test_yield_due_where_the_request_state_cannot_be_read(monkeypatch):
    for ctx in (None, SimpleNamespace(), SimpleNamespace(script_requests=None),
                SimpleNamespace(script_requests=SimpleNamespace())):
        monkeypatch.setattr(background, "get_script_run_ctx", lambda suppress_warning=True, c=ctx: c)
        assert background._yield_due()  # unknown: redraw every poll (the behaviour before)


def test_yield_due_reads_streamlits_request_state():
    """The attribute read is Streamlit 1.67's: a real ScriptRequests, CONTINUE then STOP."""
    from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequests

    requests = ScriptRequests()
    ctx = SimpleNamespace(script_requests=requests)
    original = background.get_script_run_ctx
    try:
        background.get_script_run_ctx = lambda suppress_warning=True: ctx
        assert not background._yield_due()
        requests.request_stop()
        assert background._yield_due()
    finally:
        background.get_script_run_ctx = original
