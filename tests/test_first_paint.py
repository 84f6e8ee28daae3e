"""bench/first_paint.py, small: one fresh browser session per app, every mark recorded, the ratio printed.

No speed is asserted (shared machines): the benchmark reports the ratio.
"""

import re

import pytest
from bench_runner import run_bench

pytestmark = pytest.mark.e2e


def test_first_paint_bench_runs(capsys):
    run_bench("first_paint", ["--reps", "1"])
    out = capsys.readouterr().out
    assert re.search(r"\| \*\*first chart\*\* \| \d+ ms \| \d+ ms \| \d+\.\d\d \|", out), out
    assert re.search(r"\| first chart shown \(its second draw\) \| \d+ ms \| \d+ ms \| \d+\.\d\d \|", out), out
    assert re.search(r"server: first chart sent .* \| \d+ ms \| \d+ ms \|", out), out
    assert re.search(r"first chart ratio app / minimal = \d+\.\d\d", out), out


def test_paint_trace_bench_runs(capsys):
    """bench/paint_trace.py, small: the app, the minimal app and one synthetic app, one session each."""
    run_bench("paint_trace", ["--reps", "1", "--elements", "button", "--top", "3"])
    out = capsys.readouterr().out
    assert re.search(r"\| TOTAL \| \d+ \| \d+ \| \d+ \|", out), out
    assert re.search(r"\| TOTAL / minimal \| \d+\.\d\d \| 1\.00 \| \d+\.\d\d \|", out), out
    assert re.search(r"one button: -?\d+\.\d ms", out), out
