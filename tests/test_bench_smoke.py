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
