"""bench/first_paint.py, small: one fresh browser session per app, every mark recorded, the ratio printed.

No speed is asserted (shared machines): the benchmark reports the ratio.
"""

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

pytestmark = pytest.mark.e2e


def test_first_paint_bench_runs(capsys):
    pytest.importorskip("playwright")
    import first_paint

    if not Path(first_paint.CHROMIUM).exists():
        pytest.skip(f"{first_paint.CHROMIUM} not installed")
    from concurrent.futures import ThreadPoolExecutor

    # In a thread of its own: Playwright's sync API refuses a thread where pytest-playwright's loop runs.
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(first_paint.main, ["--reps", "1"]).result() == 0
    out = capsys.readouterr().out
    assert re.search(r"\| \*\*first chart\*\* \| \d+ ms \| \d+ ms \| \d+\.\d\d \|", out), out
    assert re.search(r"\| first chart shown \(its second draw\) \| \d+ ms \| \d+ ms \| \d+\.\d\d \|", out), out
    assert re.search(r"server: first chart sent .* \| \d+ ms \| \d+ ms \|", out), out
    assert re.search(r"first chart ratio app / minimal = \d+\.\d\d", out), out
