"""vLLM on GeForce cards (RTX 3090, 4090, 5090) against public runs: ``Efficiency.geforce_flops_fraction``,
the share of the FP32-accumulate tensor peak vLLM's 16-bit GEMMs reach there
(:func:`calc.timing.engine_profile.gemm_flops_fractions`).

Chosen on bench/data/geforce_found.jsonl (public vLLM runs on RTX 4090 and 3090, written down before any
prediction was run on them; asked as ``python -m calc validate`` asks a row): the fraction with the
lowest median |error| over every scored value, ties broken by the lowest TTFT median. Checked on the
RTX 4090 rows of bench/data/prefix_cache_measurements.jsonl (asked as bench/prefix_cache_measured.py
asks them), which were not used to choose it.

    .venv/bin/python bench/geforce_check.py [--sweep]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibration_report as cr  # noqa: E402
import prefix_cache_measured as pcm  # noqa: E402
from calc.cli.args import UsageError  # noqa: E402
from calc.cli.measured import efficiency_for_engine  # noqa: E402
from calc.spec.inputs import Efficiency  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "geforce_found.jsonl"
SWEEP = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)


def rows() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def found_errors(efficiency: Efficiency = Efficiency()) -> tuple[list[tuple[str, str, float, float]], list[str]]:
    """(row id, metric, measured, predicted) for every scored value of the found rows the calculator can
    ask, and the rows it cannot (``id: reason``)."""
    out, not_asked = [], []
    for r in rows():
        try:
            p = cr.ask_vllm_row(r, efficiency)
        except UsageError as e:
            not_asked.append(f"{r['id']}: {e}")
            continue
        out += [(r["id"], m, float(v["value"]), float(p[m])) for m, v in r["measured"].items() if v.get("scored")]
    return out, not_asked


def prefix_4090_errors(efficiency: Efficiency = Efficiency()) -> list[tuple[str, str, float, float]]:
    """The prefix-cache runs on an RTX 4090, each asked as bench/prefix_cache_measured.py asks it."""
    e = efficiency_for_engine("vllm", efficiency, api_server=True)
    out = []
    for r in pcm.rows():
        if r["gpu"] == "rtx-4090":
            p = pcm.open_loop(r, efficiency=e)
            out += [(r["id"], m, float(v), float(p[m])) for m, v in r["measured"].items()]
    return out


def median_abs(errs, metric: str = "") -> float:
    return statistics.median(abs(p / m - 1) for _, k, m, p in errs if metric in k)


def choose(sweep=SWEEP) -> tuple[float, dict[float, tuple[float, float]]]:
    """The rule: lowest median |error| over the found values, then lowest TTFT median."""
    scores = {}
    for f in sweep:
        errs, _ = found_errors(Efficiency(geforce_flops_fraction=f))
        scores[f] = (round(median_abs(errs), 3), round(median_abs(errs, "ttft"), 3))
    return min(scores, key=lambda f: scores[f]), scores


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", action="store_true", help="re-apply the rule over the sweep")
    args = ap.parse_args()
    errs, not_asked = found_errors()
    print("| row | metric | measured | predicted | error |\n|---|---|---|---|---|")
    for i, k, m, p in errs:
        print(f"| {i} | {k} | {m:.4g} | {p:.4g} | {100 * (p / m - 1):+.0f} % |")
    for line in not_asked:
        print("not asked:", line)
    print(f"found runs, geforce_flops_fraction {Efficiency().geforce_flops_fraction}: median |error| "
          f"{100 * median_abs(errs):.1f} % over {len(errs)} values (TTFT {100 * median_abs(errs, 'ttft'):.1f} %)")
    base, _ = found_errors(Efficiency(geforce_flops_fraction=Efficiency().prefill_flops_fraction))
    print(f"  with the datacenter fraction {Efficiency().prefill_flops_fraction}: {100 * median_abs(base):.1f} % "
          f"(TTFT {100 * median_abs(base, 'ttft'):.1f} %)")
    for label, eff in (("default", Efficiency()),
                       ("datacenter fraction", Efficiency(geforce_flops_fraction=Efficiency().prefill_flops_fraction))):
        pe = prefix_4090_errors(eff)
        print(f"prefix-cache runs on an RTX 4090 (kept back), {label}: median |error| {100 * median_abs(pe):.1f} % "
              f"over {len(pe)} values")
    if args.sweep:
        f, scores = choose()
        for x, (a, t) in scores.items():
            print(f"  fraction {x:.2f}: median |error| {100 * a:.1f} %, TTFT {100 * t:.1f} %")
        print(f"the rule chooses {f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
