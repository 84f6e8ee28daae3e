"""The benchmarks' own correctness checks (vectorized == per-config loop) on a small sample.

No timing is asserted here: bench/ reports ratios; this only keeps the scripts working.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


def test_memory_bench_vectorized_equals_loop(capsys):
    import bench_memory

    assert bench_memory.main(["--configs", "4096", "--sample", "64"]) == 0
    out = capsys.readouterr().out
    assert "64 of 64 sampled configurations identical" in out


def test_plan_bench_vectorized_equals_one_by_one(capsys):
    import bench_plan

    assert bench_plan.main(["--sample", "12", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "12 of 12 sampled configurations identical" in out and "configurations/s" in out


def test_pages_bench_measures_server_cpu_per_rerun(tmp_path):
    """bench_pages' measurement on the minimal app's server: one sample per batch, in ms, positive."""
    import bench_pages
    from conftest import ROOT, SERVER_PIDS, streamlit_server
    from load import run_blocking

    with streamlit_server(tmp_path, app=ROOT / "bench" / "minimal_app.py") as url:
        samples = run_blocking(bench_pages.measure(url, SERVER_PIDS[url], *bench_pages.MINIMAL, runs=4, batch=2,
                                                  warmup=1))
        # --compare-bands / --baseline: two sessions in lockstep (here both on the one server)
        pair = run_blocking(bench_pages.measure_side_by_side([(url, SERVER_PIDS[url])] * 2, *bench_pages.MINIMAL,
                                                             runs=4, batch=2, warmup=1))
    assert len(samples) == 2 and all(s >= 0 for s in samples) and sum(samples) > 0
    assert [len(xs) for xs in pair] == [2, 2] and all(s >= 0 for xs in pair for s in xs)


def test_burst_mechanisms_runs_one_row(capsys):
    """bench/burst_mechanisms.py on one burst row: every variant printed, today's error equals the
    calibration report's (the what-ifs leave the simulator as it was once they end)."""
    import burst_mechanisms
    from calc.cli.measured import ask_row
    from calibration_report import load_vllm_rows

    assert burst_mechanisms.main(["--rows", "t3-gs-q14h-short"]) == 0
    out = capsys.readouterr().out
    assert "round-robin entry f=0.5" in out and "output stage c=150us" in out and "R = X_out x TPOT" in out
    row = next(r for r in load_vllm_rows() if r["id"] == "t3-gs-q14h-short")
    ttft = ask_row(row)["ttft_s"]  # after the patches are gone: today's simulator
    assert f"{ttft / row['measured']['ttft_s']['value'] - 1:>+22.1%}" in out


def test_heavy_links_rss_builds_distinct_links_and_refuses_bad_counts(capsys):
    """bench/heavy_links_rss.py: every kind is issue 18's load-test link with its own seed (no cache
    entry shared between tabs); counts outside 1..8 and unknown kinds end with a message."""
    from urllib.parse import parse_qs

    import heavy_links_rss
    import pytest

    for kind in heavy_links_rss.LINKS:
        a, b = (parse_qs(heavy_links_rss.link_query(kind, s)) for s in (1, 2))
        assert a["lt_seed"] == ["1"] and b["lt_seed"] == ["2"]
        assert {k: v for k, v in a.items() if k != "lt_seed"} == {k: v for k, v in b.items() if k != "lt_seed"}
    assert parse_qs(heavy_links_rss.link_query("memory", 3))["lt_output_len"] == ["100000"]
    for argv in (["--links", "0"], ["--kinds", "nope"]):
        with pytest.raises(SystemExit):
            heavy_links_rss.main(argv)
    err = capsys.readouterr().err
    assert "--links: 1..8" in err and "--kinds: each one of memory, cpu, admitted" in err


def test_interval_coverage_bench_runs(capsys):
    """bench/interval_coverage.py (the load test's "how sure" interval against long runs) on a tiny case."""
    import interval_coverage

    assert interval_coverage.main(["--runs", "2", "--long", "2000", "--cases", "2:1000"]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.startswith("| 2 | 1,000 | ") and " / 2 | " in row
