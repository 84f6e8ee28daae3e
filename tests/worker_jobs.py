"""Jobs for tests/test_workers.py: module-level, so a worker process can import them by name."""

import os
import signal
import time


def pid_and(x):
    return os.getpid(), x


def spin(seconds: float, deaf: bool = False):
    """Busy CPU for ``seconds`` (``deaf``: ignoring the pool's interrupt, as C code would)."""
    if deaf:
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return os.getpid()


def fail(message: str):
    raise ValueError(message)


def niceness():
    """The worker's own niceness (ui.workers lowers it below the server's)."""
    return os.getpriority(os.PRIO_PROCESS, 0)
