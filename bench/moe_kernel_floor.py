"""The MoE layer's fixed time t_0 from published fused-MoE kernel benchmarks
(``bench/data/moe_kernel_benchmarks.jsonl``; ``calc.timing.moe_kernels``, ``Efficiency.moe_layer_fixed_s``).

    PYTHONPATH=. .venv/bin/python bench/moe_kernel_floor.py

Each row is one kernel-benchmark table (vLLM ``benchmarks/kernels/benchmark_moe.py`` or SGLang's
tuning script: the whole fused-MoE call inside a CUDA graph, random gating). For every batch N
the weight bytes the call reads are E · (1 − (1 − k/E)^N) experts touched (uniform routing,
:func:`calc.timing.roofline.expected_experts_touched`) × 3 · h · I_rank weights × bytes per weight,
at the achievable bandwidth BW · ``hbm_bw_fraction``; t_0 = kernel time − that, at N = 1. The
other batch sizes are checks of t_layer(N) = t_0 + bytes(N) / (BW · η_m) with the row's own t_0
and with the default ``moe_layer_fixed_s``. Nothing here reads a serving measurement.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calc.spec.catalog import get_gpu  # noqa: E402
from calc.spec.inputs import Efficiency  # noqa: E402
from calc.timing.roofline import expected_experts_touched  # noqa: E402

DATA = ROOT / "bench" / "data" / "moe_kernel_benchmarks.jsonl"


def rows() -> list[dict]:
    return [json.loads(x) for x in DATA.read_text().splitlines() if x.strip()]


def bytes_read(row: dict, batch: int) -> float:
    """Expert weight bytes one fused-MoE call reads for a batch of ``batch`` tokens."""
    touched = float(expected_experts_touched(num_experts=row["num_experts"], experts_per_token=row["experts_per_token"],
                                             tokens=batch))
    return touched * 3.0 * row["hidden_size"] * row["expert_intermediate_per_rank"] * row["bytes_per_weight"]


def bytes_time_s(row: dict, batch: int, efficiency: Efficiency = Efficiency()) -> float:
    return bytes_read(row, batch) / (get_gpu(row["gpu"]).hbm_bw_bytes_per_s * efficiency.hbm_bw_fraction)


def fixed_time_s(row: dict, efficiency: Efficiency = Efficiency()) -> float:
    """t_0 of the row: kernel time at batch 1 minus its bytes at the achievable bandwidth."""
    return row["kernel_time_us"]["1"] * 1e-6 - bytes_time_s(row, 1, efficiency)


def main() -> int:
    eff = Efficiency()
    t0s = []
    print(f"{'row':42s} {'N':>3s} {'measured us':>11s} {'bytes us':>9s} {'t0 us':>6s} {'own t0':>8s} {'default':>8s}")
    for r in rows():
        t0 = fixed_time_s(r, eff)
        t0s.append(t0)
        for n, t in r["kernel_time_us"].items():
            b = bytes_time_s(r, int(n), eff)
            own = (t0 + b) * 1e6 / t - 1.0
            dflt = (eff.moe_layer_fixed_s + b) * 1e6 / t - 1.0
            print(f"{r['id']:42s} {n:>3s} {t:11.2f} {b * 1e6:9.1f} {t0 * 1e6 if n == '1' else float('nan'):6.1f} "
                  f"{own:+8.1%} {dflt:+8.1%}")
    print(f"\nt0 per row (us): {', '.join(f'{t * 1e6:.1f}' for t in t0s)}; median {statistics.median(t0s) * 1e6:.1f} us; "
          f"default moe_layer_fixed_s {eff.moe_layer_fixed_s * 1e6:.0f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
