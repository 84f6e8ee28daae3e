"""ui.workers: jobs in worker processes, shared by key, cancelled, held to their CPU limit."""

import os
import time
from pathlib import Path

import pytest

import worker_jobs as W
from ui import workers
from ui.budget import RESULTS
from ui.workers import CpuBudgetExceeded, Job, JobCancelled, Pool, QueueFull


@pytest.fixture
def pool(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))  # the worker imports worker_jobs
    p = Pool(1, 1)
    yield p
    p.close()


def wait(ticket, timeout_s=30.0):
    assert ticket.wait(timeout_s), "the job did not end"
    return ticket


def test_a_job_runs_in_another_process_and_its_result_is_cached(pool):
    RESULTS.clear()
    job = Job(("t", "pid"), W.pid_and, ("x",))
    pid, x = wait(pool.submit(job, cpu_limit_s=10)).result()
    assert pid != os.getpid() and x == "x"
    assert RESULTS.lookup(("t", "pid")) == (True, (pid, "x"))
    assert pool.worker_pids() == [pid]  # the worker stays for the next job
    assert wait(pool.submit(Job(("t", 2), W.pid_and, (2,)), cpu_limit_s=10)).result() == (pid, 2)


def test_sessions_asking_for_the_same_key_share_one_run(pool):
    job = Job(("t", "shared"), W.spin, (0.5,))
    a, b = pool.submit(job, cpu_limit_s=10), pool.submit(job, cpu_limit_s=10)
    assert a._task is b._task
    a.cancel()  # one session leaves: the other still gets the result
    assert isinstance(wait(b).result(), int)


def test_a_job_nobody_waits_for_is_interrupted_and_the_worker_kept(pool):
    pid = wait(pool.submit(Job(("t", "warm"), W.pid_and, (0,)), cpu_limit_s=10)).result()[0]
    ticket = pool.submit(Job(("t", "long"), W.spin, (60,)), cpu_limit_s=100)
    time.sleep(0.5)
    assert ticket.running
    t0 = time.monotonic()
    ticket.cancel()
    task = ticket._task
    assert task.done.wait(workers.CANCEL_GRACE_S + 1) and time.monotonic() - t0 < 2
    assert isinstance(task.value, JobCancelled)
    assert pool.worker_pids() == [pid]


def test_a_worker_deaf_to_the_interrupt_is_killed_and_replaced(pool):
    ticket = pool.submit(Job(("t", "deaf"), W.spin, (60, True)), cpu_limit_s=100)
    time.sleep(0.5)
    pid = pool.worker_pids()[0]
    ticket.cancel()
    assert ticket._task.done.wait(workers.CANCEL_GRACE_S + 2)
    assert wait(pool.submit(Job(("t", "after"), W.pid_and, (1,)), cpu_limit_s=10)).result()[0] != pid


def test_the_cpu_budget_is_enforced_in_the_worker(pool):
    ticket = wait(pool.submit(Job(("t", "cpu"), W.spin, (60,)), cpu_limit_s=1))
    with pytest.raises(CpuBudgetExceeded):
        ticket.result()
    assert 1 <= ticket.cpu_s <= 1 + workers.CANCEL_GRACE_S + 1


def test_errors_come_back_as_raised_and_the_queue_is_bounded(pool):
    with pytest.raises(ValueError, match="bad trace"):
        wait(pool.submit(Job(("t", "fail"), W.fail, ("bad trace",)), cpu_limit_s=10)).result()
    running = pool.submit(Job(("t", "run"), W.spin, (30,)), cpu_limit_s=100)
    time.sleep(0.3)
    waiting = pool.submit(Job(("t", "wait"), W.pid_and, (1,)), cpu_limit_s=10)
    assert waiting.ahead == 0 and not waiting.running
    with pytest.raises(QueueFull):
        pool.submit(Job(("t", "third"), W.pid_and, (2,)), cpu_limit_s=10)
    companion = pool.submit(Job(("t", "second of a session"), W.pid_and, (3,)), cpu_limit_s=10, companion=True)
    companion.cancel()
    waiting.cancel()  # dropped from the queue without running, once the worker is free
    running.cancel()
    assert waiting._task.done.wait(workers.LINGER_S + workers.CANCEL_GRACE_S + 1)
    assert isinstance(waiting._task.value, JobCancelled) and waiting._task.started is None


def test_a_rerun_with_the_same_inputs_takes_the_job_back(pool):
    first = pool.submit(Job(("t", "again"), W.spin, (1.5,)), cpu_limit_s=10)
    time.sleep(0.5)
    first.cancel()  # the script stopped for a rerun...
    second = pool.submit(Job(("t", "again"), W.spin, (1.5,)), cpu_limit_s=10)  # ...that asks for the same job
    assert second._task is first._task
    assert isinstance(wait(second).result(), int)


def test_settings(monkeypatch):
    for raw, n in (("", 1), ("0", 0), ("3", 3), ("-1", 1), ("x", 1), ("99", 1)):
        monkeypatch.setenv("LLM_CALC_WORKERS", raw)
        assert workers.max_workers() == n
    monkeypatch.setenv("LLM_CALC_WORKERS", "0")
    assert workers.pool() is None


def test_lanes_take_turns_so_a_planner_check_does_not_wait_for_every_simulation(monkeypatch):
    # One worker, queue of 4. A 0.6 s job of lane worker_jobs runs; two more of that lane queue, then one
    # of lane "posix" (os.getpid). FIFO would run the posix job last; the lanes take turns: it runs second.
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    p = Pool(1, 4)
    try:
        running = p.submit(Job(("lane", 0), W.spin, (0.6,)), cpu_limit_s=10)
        deadline = time.monotonic() + 10
        while not running.running and time.monotonic() < deadline:
            time.sleep(0.01)
        same = [p.submit(Job(("lane", i), W.spin, (0.3,)), cpu_limit_s=10) for i in (1, 2)]
        other = p.submit(Job(("lane", "pid"), os.getpid), cpu_limit_s=10)
        assert other.ahead == 1  # about one job of the other lane before it, not two
        wait(other)
        assert not same[1].wait(0)  # the last simulation-like job has not run yet
        assert not same[0].wait(0) or not same[1].wait(0)
        for ticket in (running, *same):
            wait(ticket)
    finally:
        p.close()


def test_workers_can_run_below_the_server_in_the_os_scheduler(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    monkeypatch.setenv("LLM_CALC_WORKER_NICE", "10")
    base = os.getpriority(os.PRIO_PROCESS, 0)
    p = Pool(1, 1)
    try:
        got = wait(p.submit(Job(("t", "nice"), W.niceness), cpu_limit_s=10)).result()
    finally:
        p.close()
    assert got == min(base + 10, 19)
    for raw, n in (("", 0), ("0", 0), ("19", 19), ("20", 0), ("x", 0)):
        monkeypatch.setenv("LLM_CALC_WORKER_NICE", raw)
        assert workers.worker_nice() == n
