"""bench/plotly_draws.py: Streamlit's Plotly chunk still has the one draw call it logs, and a small run
logs every draw of the minimal app and of a page.

No speed is asserted (shared machines)."""

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


def test_the_chunk_has_the_draw_call_it_logs():
    """A Streamlit upgrade that renames the call makes the benchmark say so, not log nothing."""
    import plotly_draws

    chunk = plotly_draws.instrumented_chunk()
    assert chunk is not None and chunk.count(b"(window.__draws=window.__draws||[]).push(") == 1


@pytest.mark.e2e
def test_plotly_draws_bench_runs(capsys):
    pytest.importorskip("playwright")
    import plotly_draws

    if not Path(plotly_draws.CHROMIUM).exists():
        pytest.skip(f"{plotly_draws.CHROMIUM} not installed")
    from concurrent.futures import ThreadPoolExecutor

    # In a thread of its own: Playwright's sync API refuses a thread where pytest-playwright's loop runs.
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(plotly_draws.main, ["--pages", "memory", "--reps", "1", "--settle", "1"]).result() == 0
    out = capsys.readouterr().out
    # every chart is drawn at least once; the logged draws name their sizes and the page's chart keys
    assert re.search(r"## minimal: \d+ draws", out) and re.search(r"## memory: \d+ draws .* 2 charts", out), out
    assert "memory_chart" in out and "waste_chart" in out, out
