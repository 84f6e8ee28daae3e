"""bench/bench_simulate.py keeps working (StepTimer and direct engine_step give identical runs)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


def test_bench_simulate_runs_and_paths_agree(capsys):
    import bench_simulate

    assert bench_simulate.main(["--requests", "100", "--repeat", "1", "--sample", "30"]) == 0
    assert "results identical: True" in capsys.readouterr().out
