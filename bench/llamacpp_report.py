"""llama.cpp prompt processing (llama-bench pp512) against found public runs: before/after the engine profile.

    .venv/bin/python bench/llamacpp_report.py

Rows: bench/data/llamacpp_found.jsonl (each with its URL and what was run; rows marked
``scored: false`` are printed, not scored). Each row is asked as the calibration report asks the
llama.cpp rows: ``estimate`` at concurrency 1, input_len 512, output_len 1, the C++ engines' inputs
(``efficiency_for_engine``); TTFT = 512 / (prompt tokens/s). "before": the C++ engines' profile
without the llama.cpp one (FP32-accumulate peak, 0.7 of it); "after": with it
(calc.timing.engine_profile). Error = predicted / measured − 1, median |error| per GPU architecture.
The Dec 2023 ``./main`` rows (``scored: false``) are printed per GPU at the end: the snapshot of
calibration row pm-131-pp, asked at its own 494-token prompt.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calc.cli.measured import efficiency_for_engine  # noqa: E402
from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402

PATH = ROOT / "bench" / "data" / "llamacpp_found.jsonl"
CPP_ENGINE = "FasterTransformer"  # the C++ engines' inputs without the llama.cpp profile ("before")


def load_rows(path: Path = PATH) -> list[dict]:
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def predicted_ttft_s(row: dict, engine: str, efficiency: Efficiency = Efficiency()) -> float:
    n = int(row["input_len"])
    serving = ServingConfig(dtype="float16", quantization=row["quantization"], input_len=n, output_len=1,
                            concurrency=1, max_model_len=n + 1, enable_chunked_prefill=False,
                            disable_custom_all_reduce=True)
    est = estimate(get_model(row["model"]), get_gpu(row["gpu"]), serving, efficiency_for_engine(engine, efficiency))
    return float(est.serving.ttft_s)


def errors(rows: list[dict], efficiency: Efficiency = Efficiency()) -> list[tuple[dict, float, float, float]]:
    """(row, measured TTFT, before error, after error) per row."""
    out = []
    for row in rows:
        measured = int(row["input_len"]) / row["measured"]["prompt_tokens_per_s"]
        before = predicted_ttft_s(row, CPP_ENGINE, efficiency) / measured - 1.0
        after = predicted_ttft_s(row, row["engine"], efficiency) / measured - 1.0
        out.append((row, measured, before, after))
    return out


def main() -> None:
    res = errors(load_rows())
    print(f"{'row':24} {'gpu':15} {'weights':7} {'measured s':>10} {'before':>8} {'after':>8}")
    by_arch: dict[str, list[tuple[float, float]]] = {}
    for row, measured, before, after in res:
        mark = "" if row.get("scored", True) else "  (not scored)"
        print(f"{row['id']:24} {row['gpu']:15} {row['weights']:7} {measured:10.4f} {before:+8.1%} {after:+8.1%}{mark}")
        if row.get("scored", True):
            arch = get_gpu(row["gpu"]).architecture + (" GeForce" if row["gpu"].startswith("rtx") else "")
            kind = "F16" if row["weights"] == "F16" else "quantized"
            for group in (arch, f"{arch} {kind}", f"all {kind}", "all"):
                by_arch.setdefault(group, []).append((abs(before), abs(after)))
    for arch, pairs in sorted(by_arch.items()):
        print(f"median |error| {arch:26} before {statistics.median(b for b, _ in pairs):6.1%}  "
              f"after {statistics.median(a for _, a in pairs):6.1%}  (n={len(pairs)})")
    # Kept back: the Dec 2023 ./main runs (494-token prompt, one fresh process per run) of every GPU on the page,
    # the snapshot calibration row pm-131-pp (H100 PCIe) comes from: is its error Hopper's or the build's?
    dec = [(row, after) for row, _, _, after in res if str(row["engine"]).startswith("llama.cpp Dec 2023")]
    for kind in ("F16", "Q4_0"):
        errs = [after for row, after in dec if row["weights"] == kind]
        if errs:
            print(f"kept back, Dec 2023 ./main {kind:5} after: " + ", ".join(
                f"{row['gpu']} {after:+.0%}" for row, after in dec if row["weights"] == kind))


if __name__ == "__main__":
    main()
