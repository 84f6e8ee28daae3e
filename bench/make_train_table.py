"""Write calc/data/train_table.npz: the mean of the closed loop's arrival-train mixture
(calc.traffic.arrival_trains.train_ttft_s) on the grid of calc.traffic.train_table.AXES, reduced
as that module's docstring says (h = g / (3/2 + P/T_0)). Run after changing arrival_trains or AXES:

    .venv/bin/python bench/make_train_table.py

tests/test_train_table.py recomputes a sample of the nodes and fails when the file is stale.
About 6 minutes on one core (352 s wall, 122 s user + 183 s system, 4.6 GB peak RSS; 347k nodes,
a 1.2 MB file); with the step chain (arrival_trains.step_chain_pmf) 889 s wall, niced beside other jobs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.traffic.train_table import AXES, DELAY_NODES, TABLE_PATH, build_table  # noqa: E402


def main() -> None:
    t = time.perf_counter()
    h = build_table()
    np.savez_compressed(TABLE_PATH, h=h, axes=np.array(AXES), delay_nodes=DELAY_NODES,
                        source=np.array("bench/make_train_table.py: calc.traffic.arrival_trains.train_ttft_s, mean"))
    print(f"{TABLE_PATH.name}: {h.size} nodes, h in [{h.min():.4f}, {h.max():.4f}], {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
