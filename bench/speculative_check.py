"""Speculative decoding against published measurements (bench/data/speculative_decoding.jsonl).

Each row is asked the way it was measured: batch 1 (one client), the row's method and k, its
measured mean acceptance length as the acceptance (so the check is of the step physics: verify +
drafting), and a context of about an MT-Bench turn (≈ 100 prompt + 250 output tokens → 300).
Prints predicted and measured TPOT and the median |error|.

    .venv/bin/python bench/speculative_check.py [--write]

``--write`` also writes calc/data/speculative_checks.json, what the speculative-decoding page shows
(:func:`checks`; tests/test_speculative.py keeps it current).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.speculative import SpeculativeConfig  # noqa: E402
from calc.timing.estimate import engine_numbers  # noqa: E402
from calc.timing.serving import decode_step  # noqa: E402
from calc.timing.speculative import CHECKS_PATH, drafter_for, speculative_step  # noqa: E402

CONTEXT_TOKENS = 300  # MT-Bench: ~100-token prompts, ~250 tokens out; mean context ≈ 300


def predict(row: dict) -> float:
    """Predicted TPOT (seconds) of one row."""
    e = engine_numbers(get_model(row["model"]), get_gpu(row["gpu"]))
    if not row.get("method"):
        return float(decode_step(e, batch=row["batch"], context_tokens=CONTEXT_TOKENS).step_s)
    k = row["num_speculative_tokens"]
    # the measured acceptance length τ as k positions summing to τ − 1 (only the sum matters here)
    cfg = SpeculativeConfig(method=row["method"], num_speculative_tokens=k,
                            accepted_at_position=((row["mean_acceptance_length"] - 1.0) / k,) * k)
    d = drafter_for(e, cfg)
    return float(speculative_step(e, d, batch=row["batch"], context_tokens=CONTEXT_TOKENS).tpot_s)




def rows() -> list[dict]:
    return [json.loads(x) for x in Path(__file__).with_name("data").joinpath("speculative_decoding.jsonl").open()]


def checks() -> dict:
    """What the speculative-decoding page shows (calc/data/speculative_checks.json, ``--write``): every row's
    TPOT predicted and measured, with its source, and the median |error| (the rows state no confidence)."""
    out = []
    for r in rows():
        p, m = predict(r), r["tpot_ms"] / 1e3
        out.append({"id": r["id"], "source": r["source"], "metric": "tpot_s", "predicted": float(f"{p:.4g}"),
                    "measured": m, "error": round(p / m - 1.0, 4)})
    return {"source": "bench/speculative_check.py --write (bench/data/speculative_decoding.jsonl), default Efficiency",
            "median_abs_error": round(float(np.median([abs(r["error"]) for r in out])), 4), "n": len(out), "rows": out}


def main() -> int:
    errs = []
    for r in rows():
        p = predict(r) * 1e3
        err = p / r["tpot_ms"] - 1.0
        errs.append(err)
        print(f"{r['id']:24s} k={r['num_speculative_tokens']}  TPOT predicted {p:5.2f} ms  measured {r['tpot_ms']:5.2f} ms  "
              f"{err:+6.1%}")
    print(f"median |error| {np.median(np.abs(errs)):.1%} over {len(errs)} rows")
    if "--write" in sys.argv[1:]:
        CHECKS_PATH.write_text(json.dumps(checks(), indent=1) + "\n")
        print(f"wrote {CHECKS_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
