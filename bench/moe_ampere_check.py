"""MoE kernels on Ampere: public vLLM 0.11 runs against the calculator with and without
``Efficiency.ampere_moe_flops_scale`` (calc.timing.moe_kernels).

    PYTHONPATH=. .venv/bin/python bench/moe_ampere_check.py

Rows: the calibration set's Qwen3-235B-A22B A100 bursts (where the share was fitted) and
``bench/data/moe_ampere_found.jsonl`` (gpustack performance lab pages found by this project:
GLM-4.5-Air at TP 4 on A100 and H100, the 32K-prompt Qwen3-235B runs, an FP8 (Marlin) TP 4 run and
dense Qwen3-32B controls on one A100), asked the way ``bench/calibration_report.py`` asks them.
Before = the share at 1 (no MoE-specific term), after = the default.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.calibration_report import JSONL_PATH, compare_vllm, load_vllm_rows  # noqa: E402
from calc.spec.inputs import Efficiency  # noqa: E402

FOUND_PATH = ROOT / "bench" / "data" / "moe_ampere_found.jsonl"
CALIBRATION_IDS = ("t3-gs-q235a-sharegpt", "t3-gs-q235a-long", "t3-gs-q235a-medium")


def rows() -> list[dict]:
    """The calibration set's Qwen3-235B A100 rows, then the found rows."""
    cal = [r for r in load_vllm_rows(JSONL_PATH) if r["id"] in CALIBRATION_IDS]
    return cal + load_vllm_rows(FOUND_PATH)


def before_after(rs: list[dict]) -> list[tuple[str, str, float, float, float]]:
    """(row, metric, measured, predicted before, predicted after) for every scored metric."""
    before = compare_vllm(rs, Efficiency(ampere_moe_flops_scale=1.0))
    after = compare_vllm(rs, Efficiency())
    return [(b.row_id, b.metric, b.measured, b.predicted, a.predicted) for b, a in zip(before, after)]


def main() -> int:
    out = before_after(rows())
    print(f"{'row':28s} {'metric':20s} {'measured':>10s} {'before':>8s} {'after':>8s}")
    groups: dict[str, list[tuple[float, float]]] = {}
    for rid, metric, m, b, a in out:
        print(f"{rid:28s} {metric:20s} {m:10.4g} {b / m - 1:+8.1%} {a / m - 1:+8.1%}")
        if "-q32a-" not in rid and "-fp8-" not in rid and "h100" not in rid and "q235h" not in rid:
            groups.setdefault(metric, []).append((abs(b / m - 1), abs(a / m - 1)))
    print("\nA100 16-bit MoE rows, median |error| before -> after:")
    for metric, errs in groups.items():
        print(f"  {metric:20s} {statistics.median(e[0] for e in errs):6.1%} -> {statistics.median(e[1] for e in errs):6.1%}  (n={len(errs)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
