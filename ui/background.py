"""A page waits for a heavy job (:class:`ui.workers.Job`) run in a worker process.

:func:`result` returns the cached value at once; otherwise it hands the job to the process's pool
(:func:`ui.workers.pool`) and waits, redrawing a progress bar every :data:`POLL_S` with the
worker's CPU seconds against the budget (or the jobs queued ahead) and the time waited. Each
redraw is a Streamlit yield point: when the user changes an input or the tab closes, Streamlit
raises its rerun or stop exception there, and the job is cancelled (dropped from the queue, or
interrupted in the worker, unless another session waits for it too). Where there is no Streamlit
server (AppTest), or ``LLM_CALC_WORKERS`` is 0, the job runs in the script's thread as before.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import streamlit as st
from streamlit import runtime

from ui import format as F
from ui.budget import RESULTS, limits
from ui.workers import CpuBudgetExceeded, Job, QueueFull, WorkerLost, pool

POLL_S = 0.25  # how often the bar is redrawn (and a rerun or a closed tab noticed)
SHOW_AFTER_S = 0.5  # a run shorter than this shows no bar
_LOG = logging.getLogger(__name__)


def _serving() -> bool:
    """A Streamlit server runs this session. AppTest has none: it installs a ``MagicMock(spec=Runtime)``
    as the runtime (``app_test.py``), which passes ``runtime.exists()`` and ``isinstance``."""
    return runtime.exists() and type(runtime.get_instance()) is runtime.Runtime


def result(job: Job, t, *, label: str, command: str | None = None, in_worker: bool = True) -> Any:
    """The job's value: cached, or computed in a worker while the page shows its progress (module
    doc); ``in_worker=False`` for a job too light to queue behind heavy ones. A run stopped at the
    CPU budget, a full queue or a lost worker is shown (with ``command``, what runs it on one's own
    machine) and the page stops there."""
    hit, value = RESULTS.lookup(job.key)
    if hit:
        return value
    workers = pool() if in_worker and _serving() else None
    if workers is None:
        with st.spinner(label):
            return job()
    limit_s = limits().cpu_s
    try:
        ticket = workers.submit(job, cpu_limit_s=limit_s)
    except QueueFull as exc:
        _LOG.warning("run refused, queue full: %s", exc)  # for the operator: LLM_CALC_QUEUE / _WORKERS
        _refuse(t("work.busy", n=F.integer(workers.queue)), command)
    bar = st.empty()
    t0 = time.monotonic()
    try:
        while not ticket.wait(POLL_S):
            waited = time.monotonic() - t0
            if waited < SHOW_AFTER_S:
                continue
            elapsed = F.number(waited, 0)
            if ticket.running:
                bar.progress(min(ticket.cpu_s / limit_s, 1.0), text=t("work.running", label=label, elapsed=elapsed,
                                                                       cpu=F.number(ticket.cpu_s, 1), limit=F.number(limit_s, 0)))
            else:
                bar.progress(0.0, text=t("work.queued", label=label, ahead=F.integer(ticket.ahead + 1), elapsed=elapsed))
        value = ticket.result()
    except CpuBudgetExceeded:
        _LOG.warning("run stopped at the CPU budget after %.1f s", ticket.cpu_s)
        _refuse(t("work.over_cpu", cpu=F.number(ticket.cpu_s, 1), limit=F.number(limit_s, 0)), command)
    except WorkerLost as exc:
        _LOG.warning("worker lost: %s", exc)
        _refuse(t("work.lost", reason=str(exc)[:200]), command)
    finally:
        ticket.cancel()  # nothing if the result came; else the rerun or closed tab ends the job
    bar.empty()
    return value


def _refuse(message: str, command: str | None) -> None:
    st.error(message)
    if command:
        st.code(command, language="bash")
    st.stop()
