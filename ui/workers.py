"""Heavy runs off the UI process: a small pool of worker processes shared by every session.

The load test's simulations and the planner's percentile check are pure functions of their inputs
(:class:`Job`: a cache key, a module-level function, its arguments). Run in the Streamlit process
they hold its GIL for seconds and every other session's rerun waits; here they run in
``LLM_CALC_WORKERS`` processes (default 1, for a 2-core box: the UI keeps one core, the runs get
the other), at most ``LLM_CALC_QUEUE`` jobs waiting (default 16, first come first served; a
session's script waits for its one job, so a session never holds two places: issue 18's room of
50 has 12 sessions on the two heavy pages; with 8 places about half their changes were refused).

* **Shared**: a job asked for while the same key is queued or running joins it (one run for every
  session asking); its result goes to the byte-bounded cache :data:`ui.budget.RESULTS`.
* **Cancelled** when nobody waits for it any more (the user changed the inputs, the tab closed)
  and nobody takes it back within :data:`LINGER_S` (a rerun with the same inputs, say after the
  language switch, does): a queued job is dropped, a running one is interrupted (``SIGUSR1``; the
  worker stays) or, if it does not answer within :data:`CANCEL_GRACE_S`, killed and replaced.
* **Held to the CPU budget in the worker**: each job gets ``RLIMIT_CPU`` = the worker's CPU so far
  + ``cpu_limit_s``; ``SIGXCPU`` ends the job with :class:`CpuBudgetExceeded`, and the pool kills a
  worker whose job passes the limit by :data:`CANCEL_GRACE_S` (stuck in C code).
* **Fair between pages**: each job has a ``lane`` (the module of its function: the load test's
  simulator, the planner's check); a free worker takes the oldest job of the lane served longest
  ago, so a planner check waits for at most one simulation per worker, not for every simulation
  queued before it (issue 18's room: the planner's p95 went from 13.9 to 18.9 s behind the load test's runs).
* **Optionally below the UI in the OS scheduler**: a worker runs at ``nice`` ``LLM_CALC_WORKER_NICE``
  (default 0): at 10, where the cores are contended, a session's rerun goes first and the batch job
  takes what is left. Not the default: under a steady foreground load (a browser test's Chromium and
  server on 2 cores) a nice-10 worker got about a tenth of a core and the 405B planner link's 15 s of
  CPU took more than 120 s; the room benchmark showed no gain beyond its noise.
* **Without workers** (``LLM_CALC_WORKERS=0``, AppTest, the CLI) :meth:`Job.__call__` runs the same
  function in the caller's thread, through the cache: the behaviour before the pool.

Why not ``multiprocessing`` or ``concurrent.futures.ProcessPoolExecutor``: their ``spawn`` and
``forkserver`` children re-import ``__main__`` from its file, and Streamlit installs the running
page as ``__main__`` (``script_runner.py``: ``sys.modules["__main__"] = module``), so each worker
would run the app; ``fork`` copies a threaded server's locks; and an executor cannot stop a job
that has started. A worker here is ``python -m ui.workers``: pickles over its stdin and stdout.
Nothing here imports streamlit.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import os
import pickle
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Hashable

from ui.budget import RESULTS

DEFAULT_WORKERS, DEFAULT_QUEUE, DEFAULT_NICE = 1, 16, 0
MAX_WORKERS = 16
CANCEL_GRACE_S = 3.0  # a cancelled job's answer, or a job past its CPU limit, is waited for this long
LINGER_S = 0.5  # a job nobody waits for is kept this long: a rerun with the same inputs takes it back
_HEADER = struct.Struct("<Q")


class CpuBudgetExceeded(RuntimeError):
    """The job used more CPU seconds than its limit and was stopped."""


class QueueFull(RuntimeError):
    """Every worker is busy and ``LLM_CALC_QUEUE`` jobs already wait."""


class JobCancelled(RuntimeError):
    """Raised in the worker when the pool interrupts a job nobody waits for."""


class WorkerLost(RuntimeError):
    """The worker process died during the job (killed, out of memory)."""


def _int_setting(name: str, default: int, lo: int, hi: int) -> int:
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if lo <= value <= hi else default


def max_workers() -> int:
    """``LLM_CALC_WORKERS``: worker processes (0 = run jobs in the server process, as before).

    >>> max_workers()   # nothing set
    1
    """
    return _int_setting("LLM_CALC_WORKERS", DEFAULT_WORKERS, 0, MAX_WORKERS)


def max_queue() -> int:
    """``LLM_CALC_QUEUE``: jobs that may wait for a worker (a further one is refused)."""
    return _int_setting("LLM_CALC_QUEUE", DEFAULT_QUEUE, 0, 1000)


def worker_nice() -> int:
    """``LLM_CALC_WORKER_NICE``: the niceness added to each worker process (0-19; 0 = the server's own).

    >>> worker_nice()   # nothing set
    0
    """
    return _int_setting("LLM_CALC_WORKER_NICE", DEFAULT_NICE, 0, 19)


@dataclasses.dataclass(frozen=True)
class Job:
    """One cacheable run: ``fn(*args)`` (``fn`` module-level, arguments picklable), cached under ``key``."""

    key: Hashable
    fn: Callable[..., Any]
    args: tuple = ()

    @property
    def lane(self) -> str:
        """The fairness lane: the module of the function (one per kind of heavy run)."""
        return getattr(self.fn, "__module__", "") or ""

    def __call__(self) -> Any:
        """Run here (in this thread), through the shared cache: the synchronous path."""
        return RESULTS.get(self.key, lambda: self.fn(*self.args))


# ---- the pool (server side) ------------------------------------------------------------------


class _Task:
    def __init__(self, job: Job, cpu_limit_s: float) -> None:
        self.job, self.cpu_limit_s = job, float(cpu_limit_s)
        self.waiters = 0
        self.orphaned_at: float | None = None  # when its last waiter left (monotonic), None while waited for
        self.cancelled = False
        self.done = threading.Event()
        self.ok, self.value = False, None
        self.started: float | None = None  # monotonic time the worker took it
        self.cpu_s = 0.0  # the worker's CPU seconds on it so far
        self.companion = False  # a session's second job: not counted against the queue's bound


class Ticket:
    """One session's wait for a job (several tickets may share one job)."""

    def __init__(self, pool: "Pool", task: _Task) -> None:
        self._pool, self._task, self._open = pool, task, True

    def wait(self, timeout_s: float) -> bool:
        return self._task.done.wait(timeout_s)

    @property
    def running(self) -> bool:
        return self._task.started is not None

    @property
    def cpu_s(self) -> float:
        return self._task.cpu_s

    @property
    def ahead(self) -> int:
        """Jobs queued before this one (0 once it runs)."""
        return self._pool._ahead(self._task)

    def result(self) -> Any:
        """The job's value, or its exception re-raised (after :meth:`wait` returned True)."""
        self._task.done.wait()
        self.close()
        if self._task.ok:
            return self._task.value
        raise self._task.value

    def cancel(self) -> None:
        """Stop waiting; the job is dropped or interrupted when no other ticket waits for it."""
        if self._open:
            self._open = False
            self._pool._release(self._task)

    def close(self) -> None:
        if self._open:
            self._open = False
            with self._pool._lock:
                self._task.waiters -= 1


class Pool:
    """``size`` worker processes (started on first use), a FIFO of at most ``queue`` waiting jobs,
    one job per key at a time (module doc)."""

    def __init__(self, size: int, queue: int) -> None:
        self.size, self.queue = size, queue
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._waiting: collections.deque[_Task] = collections.deque()
        self._by_key: dict[Hashable, _Task] = {}
        self._slots: list[_Slot] = []
        self._closed = False
        self._served: dict[str, int] = {}  # lane -> when a worker last took one of its jobs (a counter)
        self._turn = itertools.count(1)

    def submit(self, job: Job, *, cpu_limit_s: float, companion: bool = False) -> Ticket:
        """A ticket for ``job``: joins the same key's queued or running job, else queues a new one
        (raises :class:`QueueFull` when ``queue`` jobs already wait). A ``companion`` is a second job
        of a session already waiting (the load test's rate search beside its simulation): never
        refused, not counted, so the bound is on sessions."""
        with self._lock:
            task = self._by_key.get(job.key)
            if task is None or task.cancelled:
                waiting = sum(t.orphaned_at is None and not t.companion for t in self._waiting)
                busy = sum(s.task is not None for s in self._slots)
                if not companion and waiting >= self.queue and busy + waiting >= self.size:
                    raise QueueFull(f"{waiting} jobs are waiting for {self.size} worker(s)")
                task = _Task(job, cpu_limit_s)
                task.companion = companion
                self._by_key[job.key] = task
                self._waiting.append(task)
                if len(self._slots) < self.size:
                    self._slots.append(_Slot(self, len(self._slots)))
                self._wake.notify_all()
            task.waiters += 1
            task.orphaned_at = None
            return Ticket(self, task)

    def _ahead(self, task: _Task) -> int:
        """Jobs that will start before ``task``: those of its lane queued before it, and about one of
        each other lane with a job waiting (the lanes take turns, :meth:`_pick`)."""
        with self._lock:
            if task not in self._waiting:
                return 0
            live = [t for t in self._waiting if t.orphaned_at is None]
            lane = task.job.lane
            same = sum(t.job.lane == lane for t in itertools.islice(live, live.index(task) if task in live else 0))
            return same + len({t.job.lane for t in live} - {lane})

    def _release(self, task: _Task) -> None:
        with self._lock:
            task.waiters -= 1
            if task.waiters <= 0 and not task.done.is_set():
                task.orphaned_at = time.monotonic()  # dropped or interrupted after LINGER_S (_Slot)

    def _next(self, slot: "_Slot") -> _Task | None:
        with self._lock:
            while True:
                while not self._waiting and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return None
                task = self._pick()
                self._waiting.remove(task)
                if task.orphaned_at is None:
                    self._served[task.job.lane] = next(self._turn)
                    task.started = time.monotonic()
                    slot.task = task
                    return task
                task.cancelled = True  # nobody waits: dropped without running
                self._finish(task, False, JobCancelled("cancelled before it started"))

    def _pick(self) -> _Task:
        """With the lock held and something waiting: an orphaned job first (dropped at once), else the
        oldest job of the lane served longest ago (FIFO within a lane)."""
        best: _Task | None = None
        for task in self._waiting:
            if task.orphaned_at is not None:
                return task
            if best is None or self._served.get(task.job.lane, 0) < self._served.get(best.job.lane, 0):
                best = task
        return best

    def _finish(self, task: _Task, ok: bool, value: Any) -> None:
        """Called with the lock held: the result is cached before anyone can miss it."""
        if ok and not task.cancelled:
            RESULTS.store(task.job.key, value)
        if self._by_key.get(task.job.key) is task:
            del self._by_key[task.job.key]
        task.ok, task.value = ok, value
        task.done.set()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._wake.notify_all()
        for slot in self._slots:
            slot.stop()

    def worker_pids(self) -> list[int]:
        return [s.proc.pid for s in self._slots if s.proc is not None and s.proc.poll() is None]


def _proc_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux ``/proc``), None where unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _Slot:
    """One worker process and the thread that feeds it jobs and watches them."""

    def __init__(self, pool: Pool, index: int) -> None:
        self.pool, self.task = pool, None
        self.proc: subprocess.Popen | None = None
        self._thread = threading.Thread(target=self._loop, name=f"llm-calc-worker-{index}", daemon=True)
        self._thread.start()

    def _start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
            self.proc = subprocess.Popen([sys.executable, "-m", "ui.workers"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         cwd=root, env=env)
        return self.proc

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _loop(self) -> None:
        while True:
            try:
                self._start()  # before the job comes: a fresh worker costs ~0.5 s of imports
            except OSError:
                pass  # tried again with the job, which then reports the failure
            if (task := self.pool._next(self)) is None:
                return
            try:
                ok, value = self._run(task)
            except Exception as exc:  # noqa: BLE001 - a broken pipe or an unpicklable job: the page shows it
                self.stop()
                ok, value = False, WorkerLost(f"worker failed: {type(exc).__name__}: {exc}")
            with self.pool._lock:
                self.task = None
                self.pool._finish(task, ok, value)

    def _run(self, task: _Task) -> tuple[bool, Any]:
        proc = self._start()
        payload = pickle.dumps((task.job.fn, task.job.args, task.cpu_limit_s), protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.write(_HEADER.pack(len(payload)) + payload)
        proc.stdin.flush()
        cpu0 = _proc_cpu_s(proc.pid)
        stop_by: float | None = None  # after an interrupt: when to kill
        why: BaseException | None = None
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], 0.1)
            if ready:
                answer = _read(proc.stdout)
                if answer is None:
                    break  # the worker died
                ok, value = answer
                return (False, why) if why is not None else (ok, value)
            now = time.monotonic()
            cpu = _proc_cpu_s(proc.pid)
            task.cpu_s = now - task.started if cpu is None or cpu0 is None else cpu - cpu0
            with self.pool._lock:
                if task.orphaned_at is not None and now - task.orphaned_at > LINGER_S:
                    task.cancelled = True
            if stop_by is None and task.cancelled:
                why, stop_by = JobCancelled("nobody waits for it"), now + CANCEL_GRACE_S
                proc.send_signal(signal.SIGUSR1)
            elif stop_by is None and task.cpu_s > task.cpu_limit_s + CANCEL_GRACE_S:
                why, stop_by = CpuBudgetExceeded(f"stopped after {task.cpu_s:.1f} s of CPU"), now
            if stop_by is not None and now >= stop_by:
                break
            if proc.poll() is not None:
                break
        self.stop()
        return False, why or WorkerLost(f"the worker exited with status {proc.returncode}")


_POOL: Pool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> Pool | None:
    """The process's pool (started on first use), or None when ``LLM_CALC_WORKERS`` is 0."""
    global _POOL
    size = max_workers()
    with _POOL_LOCK:
        if size == 0:
            return None
        if _POOL is None or _POOL.size != size:
            if _POOL is not None:
                _POOL.close()
            _POOL = Pool(size, max_queue())
        _POOL.queue = max_queue()
        return _POOL


# ---- the worker (``python -m ui.workers``) -----------------------------------------------------


def _read(stream) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (n,) = _HEADER.unpack(header)
    return pickle.loads(stream.read(n))


def _write(stream, obj: Any) -> None:
    try:
        payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a value or exception that does not pickle: its text travels
        payload = pickle.dumps((False, RuntimeError(f"{type(obj[1]).__name__}: {obj[1]}"[:2000])))
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


_busy = False


def _interrupt(exc_type: type[BaseException]) -> Callable:
    def handler(signum, frame):  # noqa: ARG001
        if _busy:  # between jobs a late signal changes nothing
            raise exc_type("interrupted" if exc_type is JobCancelled else "CPU budget of the job used up")
    return handler


def serve(inp=None, out=None) -> None:
    """The worker loop: read (fn, args, cpu_limit_s), answer (ok, value) until stdin closes."""
    global _busy
    out = out or os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints go to stderr, not into the answers
    inp = inp or sys.stdin.buffer
    signal.signal(signal.SIGUSR1, _interrupt(JobCancelled))
    signal.signal(signal.SIGXCPU, _interrupt(CpuBudgetExceeded))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C on the server: the server stops us
    soft0, hard = resource.getrlimit(resource.RLIMIT_CPU)
    try:
        os.nice(worker_nice())
    except OSError:
        pass  # not allowed here: the worker runs at the server's priority
    while (msg := _read(inp)) is not None:
        fn, args, cpu_limit_s = msg
        used = time.process_time()
        limit = int(used + cpu_limit_s) + 1
        if hard == resource.RLIM_INFINITY or limit < hard:
            resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
        try:
            try:
                _busy = True
                answer = (True, fn(*args))
            finally:
                _busy = False
        except BaseException as exc:  # noqa: BLE001 - every failure is the page's to show
            answer = (False, exc)
        resource.setrlimit(resource.RLIMIT_CPU, (soft0, hard))
        _write(out, answer)


if __name__ == "__main__":  # run as ui.workers, not __main__: its exceptions pickle under their module's name
    import ui.workers

    ui.workers.serve()
