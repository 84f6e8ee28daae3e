"""gpt-oss (MXFP4 routed experts) against public vLLM runs, with and without
``Efficiency.mxfp4_moe_half_saturation_rows`` (calc.timing.moe_kernels).

    PYTHONPATH=. .venv/bin/python bench/gptoss_check.py          # the found runs (seconds)
    PYTHONPATH=. .venv/bin/python bench/gptoss_check.py --pd     # + the held-out llm-d P/D row (minutes)

Rows: ``bench/data/gptoss_found.jsonl`` (gpustack performance lab: gpt-oss-120b on one H100 with vLLM
0.10.2 and on one A100 with vLLM 0.11.0, gpt-oss-20b on one H100 with vLLM 0.11.0: bursts of ShareGPT
and random prompts, one ShareGPT closed loop of 4 clients; vLLM PR #23696: gpt-oss-120b TP 8 on B200,
a control the term does not touch), asked the way ``bench/calibration_report.py`` asks them, and with
``--pd`` the held-out llm-d gpt-oss-120b 4P2D decode-pool row of
``bench/data/disaggregation_measurements.jsonl`` (asked as ``bench/disaggregation_report.py`` asks it).
Before = the experts at the dense GEMM half-saturation (64 rows), after = the default (16). Nothing is
fitted: 16 is the smallest M tile of triton_kernels' matmul_ogs.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.calibration_report import compare_vllm, load_vllm_rows  # noqa: E402
from calc.spec.inputs import Efficiency  # noqa: E402

FOUND_PATH = ROOT / "bench" / "data" / "gptoss_found.jsonl"
PD_ROW = "llmd-gptoss120b-4p2d-tpot-mean"
BEFORE = Efficiency(mxfp4_moe_half_saturation_rows=Efficiency().gemm_half_saturation_tokens)


def rows() -> list[dict]:
    return load_vllm_rows(FOUND_PATH)


def before_after(rs: list[dict]) -> list[tuple[str, str, str, float, float, float]]:
    """(row, gpu, metric, measured, predicted before, predicted after) for every scored metric."""
    gpu = {r["id"]: r["options"]["gpu"] for r in rs}
    before = compare_vllm(rs, BEFORE)
    after = compare_vllm(rs, Efficiency())
    return [(b.row_id, gpu[b.row_id], b.metric, b.measured, b.predicted, a.predicted) for b, a in zip(before, after)]


def group(metric: str) -> str:
    return "throughput" if "per_s" in metric else metric.removesuffix("_s")


def pd_before_after(n: int = 1500) -> tuple[float, float, float]:
    """(measured, predicted before, predicted after) of the held-out P/D row (simulated mean TPOT)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import disaggregation_report as d  # noqa: PLC0415

    row = next(r for r in d.rows() if r["id"] == PD_ROW)
    before, _ = d.predict(row, n=n, efficiency=BEFORE)
    after, _ = d.predict(row, n=n, efficiency=Efficiency())
    return row["measured"], before, after


def main() -> int:
    out = before_after(rows())
    print(f"{'row':34s} {'metric':20s} {'measured':>10s} {'before':>8s} {'after':>8s}")
    groups: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for rid, gpu, metric, m, b, a in out:
        print(f"{rid:34s} {metric:20s} {m:10.4g} {b / m - 1:+8.1%} {a / m - 1:+8.1%}")
        groups.setdefault((gpu, group(metric)), []).append((abs(b / m - 1), abs(a / m - 1)))
    print("\nmedian |error| before -> after, per GPU and metric:")
    for (gpu, metric), errs in sorted(groups.items()):
        print(f"  {gpu:10s} {metric:11s} {statistics.median(e[0] for e in errs):6.1%} -> "
              f"{statistics.median(e[1] for e in errs):6.1%}  (n={len(errs)})")
    if "--pd" in sys.argv:
        m, b, a = pd_before_after()
        print(f"\n{PD_ROW} (held out): measured {m * 1e3:.2f} ms, predicted {b * 1e3:.2f} ms ({b / m - 1:+.0%}) "
              f"-> {a * 1e3:.2f} ms ({a / m - 1:+.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
