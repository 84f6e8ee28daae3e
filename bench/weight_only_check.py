"""4-bit weight-only checkpoints (AWQ, GPTQ: vLLM's Marlin kernels) against public vLLM runs, beside
16-bit controls on the same hosts.

    PYTHONPATH=. .venv/bin/python bench/weight_only_check.py

Rows: ``bench/data/weight_only_found.jsonl`` (kept back: nothing was chosen on them; the selection is
in ``bench/data/README.md``), asked as ``bench/calibration_report.py`` asks its rows
(:func:`calc.cli.measured.ask_row`). Printed: every scored value, then the median |error| of the
4-bit rows and of the controls, by source.

Tried against these rows and not taken (2026-12-05): Marlin's M tile as the 4-bit GEMMs'
half-saturation (16 rows, vLLM ``gptq_marlin.py`` ``GPTQ_MARLIN_TILE``) in place of the dense 64,
which an RTX 4090 AWQ run (vLLM 0.27.1, ``bench/data/prefix_cache_measurements.jsonl``, TPOT 9.8 ms,
19 ms predicted) pointed to. Here it made the 4-bit rows 7.7 % -> 24.0 % median |error|: the
single A100 requests of vLLM 0.6.3 (Qwen2.5-7B / 72B AWQ and GPTQ) went from within 5 % to 20-36 %
too fast, the L4 batches did not move (bound by 300 GB/s either way), and the A100 ShareGPT bursts
went 19 -> 26 %. Marlin at a few rows reaches about half its weight-streaming rate on A100, which the
dense 64 happens to price.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.calibration_report import compare_vllm, load_vllm_rows  # noqa: E402

FOUND_PATH = ROOT / "bench" / "data" / "weight_only_found.jsonl"


def scored(rows: list[dict]) -> list[tuple[dict, str, float, float]]:
    """(row, metric, measured, predicted) for every scored metric."""
    by_id = {r["id"]: r for r in rows}
    return [(by_id[c.row_id], c.metric, c.measured, c.predicted) for c in compare_vllm(rows)]


def summary(out: list[tuple[dict, str, float, float]]) -> dict[tuple[str, str], tuple[int, float]]:
    """(source or "all", "4-bit" or "16-bit control") -> (n, median |error|)."""
    groups: dict[tuple[str, str], list[float]] = {}
    for row, _, m, p in out:
        kind = "16-bit control" if row["options"]["quantization"] == "auto" else "4-bit"
        for src in (row["source"], "all"):
            groups.setdefault((src, kind), []).append(abs(p / m - 1))
    return {k: (len(v), statistics.median(v)) for k, v in sorted(groups.items())}


def main() -> int:
    out = scored(load_vllm_rows(FOUND_PATH))
    print("| row | quantization | metric | measured | predicted | error |")
    print("|---|---|---|---|---|---|")
    for row, metric, m, p in out:
        print(f"| {row['id']} | {row['options']['quantization']} | {metric} | {m:.4g} | {p:.4g} | {p / m - 1:+.0%} |")
    print()
    for (src, kind), (n, med) in summary(out).items():
        print(f"{src:34s} {kind:15s} n={n:2d}  median |error| {med:6.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
