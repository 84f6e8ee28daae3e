"""A page waits for a heavy job (:class:`ui.workers.Job`) run in a worker process.

:func:`result` returns the cached value at once; otherwise it hands the job to the process's pool
(:func:`ui.workers.pool`) and waits, redrawing a progress bar every :data:`POLL_S` with the
worker's CPU seconds against the budget (or the jobs queued ahead) and the time waited. Each
redraw is a Streamlit yield point: when the user changes an input or the tab closes, Streamlit
raises its rerun or stop exception there, and the job is cancelled (dropped from the queue, or
interrupted in the worker, unless another session waits for it too). A poll whose bar and text
would be the same as the last drawn (a queued job: its text counts whole seconds) sends nothing,
unless Streamlit holds a rerun or stop request for the script (:func:`_yield_due`): in issue 18's
room the waiting sessions' redraws were a tenth of the server's messages (bench/ui_profile.py).
Where there is no Streamlit server (AppTest), or ``LLM_CALC_WORKERS`` is 0, the job runs in the
script's thread as before.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Hashable

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui import command_block
from ui import format as F
from ui.budget import RESULTS, limits
from ui.workers import CpuBudgetExceeded, Job, QueueFull, Ticket, WorkerLost, pool

POLL_S = 0.25  # how often the bar is redrawn (and a rerun or a closed tab noticed)
SHOW_AFTER_S = 0.5  # a run shorter than this shows no bar
_LOG = logging.getLogger(__name__)
_AHEAD: dict[str, dict[Hashable, Ticket]] = {}  # session id -> tickets queued by submit_ahead, by job key
_AHEAD_LOCK = threading.Lock()


def _serving() -> bool:
    """A Streamlit server runs this session. AppTest has none: it installs a ``MagicMock(spec=Runtime)``
    as the runtime (``app_test.py``), which passes ``runtime.exists()`` and ``isinstance``."""
    return runtime.exists() and type(runtime.get_instance()) is runtime.Runtime


def _session_id() -> str:
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else ""


def _take_ahead(key: Hashable | None = None) -> Ticket | None:
    """The ticket queued ahead for ``key`` (taken out); every other one of the session is cancelled."""
    with _AHEAD_LOCK:
        tickets = _AHEAD.pop(_session_id(), {})
    mine = tickets.pop(key, None)
    for ticket in tickets.values():
        ticket.cancel()
    return mine


def _yield_due() -> bool:
    """Streamlit holds a rerun or stop request for this script (the next message raises it), or
    that cannot be told here (no script context, another Streamlit): then a poll redraws the bar,
    the yield point. Reads ``ScriptRequests._state`` (Streamlit 1.67), which Streamlit itself reads
    without its lock on the same fast path (``on_scriptrunner_yield``)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    state = getattr(getattr(ctx, "script_requests", None), "_state", None)
    return getattr(state, "name", None) != "CONTINUE"


def _progress(ticket: Ticket, t, *, label: str, waited_s: float, limit_s: float) -> tuple[float, str]:
    """The bar's value and text for a job waited for ``waited_s``: running (CPU against the budget)
    or queued (jobs ahead)."""
    elapsed = F.number(waited_s, 0)
    if ticket.running:
        return min(ticket.cpu_s / limit_s, 1.0), t("work.running", label=label, elapsed=elapsed,
                                                     cpu=F.number(ticket.cpu_s, 1), limit=F.number(limit_s, 0))
    return 0.0, t("work.queued", label=label, ahead=F.integer(ticket.ahead + 1), elapsed=elapsed)


def submit_ahead(job: Job) -> None:
    """Queue ``job`` now for a :func:`result` later in this run: a page that waits for two runs in turn
    (the load test's simulation, then its rate search) queues both at once, so the second does not
    go to the back of the queue when the first is done. Tickets still queued from an earlier run of
    the session are cancelled; so is this one if the run stops before it asks for the result."""
    _take_ahead()
    workers = pool() if _serving() else None
    if workers is None or RESULTS.lookup(job.key)[0]:
        return
    ticket = workers.submit(job, cpu_limit_s=limits().cpu_s, companion=True)  # the bound is on sessions
    with _AHEAD_LOCK:
        _AHEAD[_session_id()] = {job.key: ticket}


def result(job: Job, t, *, label: str, command: str | None = None, in_worker: bool = True) -> Any:
    """The job's value: cached, or computed in a worker while the page shows its progress (module
    doc); ``in_worker=False`` for a job too light to queue behind heavy ones. A run stopped at the
    CPU budget, a full queue or a lost worker is shown (with ``command``, what runs it on one's own
    machine) and the page stops there."""
    hit, value = RESULTS.lookup(job.key)
    with _AHEAD_LOCK:  # queued by submit_ahead: this wait takes it over
        queued = _AHEAD.get(_session_id(), {})
        ahead = queued.pop(job.key, None)
        if not queued:
            _AHEAD.pop(_session_id(), None)
    if hit:
        if ahead is not None:
            ahead.cancel()
        return value
    workers = pool() if in_worker and _serving() else None
    if workers is None:
        with st.spinner(label):
            return job()
    limit_s = limits().cpu_s
    try:
        ticket = ahead or workers.submit(job, cpu_limit_s=limit_s)
    except QueueFull as exc:
        _LOG.warning("run refused, queue full: %s", exc)  # for the operator: LLM_CALC_QUEUE / _WORKERS
        _refuse(t("work.busy", n=F.integer(workers.queue)), command, t)
    bar = st.empty()
    t0 = time.monotonic()
    done = False
    shown = None  # (percent, text) last drawn: Streamlit's bar has whole percents
    try:
        while not ticket.wait(POLL_S):
            waited = time.monotonic() - t0
            if waited < SHOW_AFTER_S:
                continue
            fraction, text = _progress(ticket, t, label=label, waited_s=waited, limit_s=limit_s)
            if (int(fraction * 100), text) != shown or _yield_due():
                bar.progress(fraction, text=text)
                shown = (int(fraction * 100), text)
        value = ticket.result()
        done = True
    except CpuBudgetExceeded:
        _LOG.warning("run stopped at the CPU budget after %.1f s", ticket.cpu_s)
        _refuse(t("work.over_cpu", cpu=F.number(ticket.cpu_s, 1), limit=F.number(limit_s, 0)), command, t, bar)
    except WorkerLost as exc:
        _LOG.warning("worker lost: %s", exc)
        _refuse(t("work.lost", reason=str(exc)[:200]), command, t, bar)
    finally:
        ticket.cancel()  # nothing if the result came; else the rerun or closed tab ends the job
        if not done:
            _take_ahead()  # and the runs queued ahead for this page run
    bar.empty()
    return value


def _refuse(message: str, command: str | None, t, bar=None) -> None:
    if bar is not None:  # the progress bar goes with the run (it stayed, at "running", above the refusal)
        bar.empty()
    st.error(message)
    if command:
        command_block.render(command, t)  # no syntax highlighter (ui.command_block)
    st.stop()
