"""MLA layers' fixed time: public vLLM runs of DeepSeek-V3/R1 at low batch against the calculator
with and without ``Efficiency.mla_layer_fixed_s`` (:mod:`calc.timing.mla_layers`).

    PYTHONPATH=. .venv/bin/python bench/mla_layer_check.py

Rows: ``bench/data/mla_moe_lowbatch_found.jsonl`` (found by this project; sources in each row),
asked as ``python -m calc validate`` asks them (:func:`calc.cli.measured.ask_row`). For every
scored TPOT or throughput it prints the error with t_mla = 0 and at the default, and the t_mla that
would make the row's step match (bisection on the per-layer time; TPOT is matched directly, a
throughput through the closed loop). One value per row (its TPOT where scored, else its throughput:
a row is one run); the default is the median of the single-node rows' values (the TP 16 rows span
two nodes: their all-reduces cross the network, so they check the flatness in the batch, not the
value). No serving row outside that file is read.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calc.cli.measured import ask_row  # noqa: E402
from calc.spec.inputs import Efficiency  # noqa: E402

FOUND_PATH = ROOT / "bench" / "data" / "mla_moe_lowbatch_found.jsonl"
STEP_METRICS = ("tpot_s", "output_tokens_per_s")  # the metrics the per-layer time sets


def load_rows(path: Path = FOUND_PATH) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def predicted(row: dict, metric: str, t_mla: float) -> float:
    return float(ask_row(row, Efficiency(mla_layer_fixed_s=t_mla))[metric])


def implied_t_mla(row: dict, metric: str, *, hi: float = 1e-3, iters: int = 18) -> float:
    """The per-layer time at which the row's ``metric`` equals its measured value (bisection on
    [0, hi]; TPOT rises and throughput falls with t_mla). ``hi`` where even that is not enough."""
    target = float(row["measured"][metric]["value"])
    sign = 1.0 if metric == "tpot_s" else -1.0  # error grows with t for TPOT, shrinks for throughput
    lo, up = 0.0, hi
    if sign * (predicted(row, metric, up) - target) < 0:
        return hi
    for _ in range(iters):
        mid = 0.5 * (lo + up)
        if sign * (predicted(row, metric, mid) - target) < 0:
            lo = mid
        else:
            up = mid
    return 0.5 * (lo + up)


def main() -> int:
    rows = load_rows()
    default = Efficiency().mla_layer_fixed_s
    print(f"default mla_layer_fixed_s = {default * 1e6:.0f} us\n")
    print(f"{'row':28s} {'metric':20s} {'measured':>10s} {'t=0':>8s} {'default':>8s} {'implied t_mla':>14s}")
    single_node: list[float] = []
    for row in rows:
        scored = [k for k, m in row["measured"].items() if m.get("scored")]
        per_row = "tpot_s" if "tpot_s" in scored else "output_tokens_per_s"
        for metric, m in row["measured"].items():
            if not m.get("scored"):
                continue
            mv = float(m["value"])
            before, after = predicted(row, metric, 0.0), predicted(row, metric, default)
            line = f"{row['id']:28s} {metric:20s} {mv:10.4g} {before / mv - 1:+8.1%} {after / mv - 1:+8.1%}"
            if metric in STEP_METRICS:
                t = implied_t_mla(row, metric)
                line += f" {t * 1e6:11.0f} us"
                if metric == per_row and int(row["options"].get("nodes", 1)) == 1:
                    single_node.append(t)
            print(line)
    if single_node:
        print(f"\nsingle-node rows (TPOT, else throughput): implied t_mla "
              f"{', '.join(f'{t * 1e6:.0f}' for t in single_node)} us; median {statistics.median(single_node) * 1e6:.0f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
