"""Writes calc/data/bands.json, the error-band table (calc.timing.bands), from the calibration reports.

    .venv/bin/python bench/make_bands.py [--check]

The measurements are those the calibration reports score, with the same efficiency defaults:
``calibration_report.py``'s fit set (high + medium rows of the 2023-24 engines) and every vLLM
serving benchmark row, and ``memory_calibration_report.py``'s vLLM V1 start-up logs (KV pool and
KV tokens: the memory group). Each is classified by load regime, GPU family, dense/MoE and metric
group; the table holds, per cell, the signed-error quantiles and the measurements' names. Prints
how honest the bands are on these measurements (inside fraction, median half-width), in sample and
leaving each measurement out of its own band. ``--check`` exits 1 when the file is out of date.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import calibration_report as cr  # noqa: E402
import memory_calibration_report as mcr  # noqa: E402

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.timing import bands  # noqa: E402

LOAD_SHAPE_ARRIVAL = {"single_request": ("closed", 1), "closed_loop": ("closed", 2), "static_batch": ("static", None)}
MEMORY_TERMS = ("kv_pool", "kv_tokens")  # what a user reads: the KV pool and the requests it holds


def _classify(mid: str, gpu: str, model: str, arrival: str, conc, metric: str, error: float, source: str = "") -> dict:
    return {"id": mid, "regime": bands.load_regime(arrival, conc),
            "family": bands.gpu_family(get_gpu(gpu).architecture), "moe": get_model(model).moe is not None,
            "group": bands.metric_group(metric), "error": error, "source": source}


def measurements() -> list[dict]:
    """Every scored measurement of the calibration reports, classified (module docstring)."""
    out = []
    older = {r["id"]: r for r in cr.load_rows(include_low=False)}
    for c in cr.compare(list(older.values())):
        r = older[c.row_id]
        arrival, conc = LOAD_SHAPE_ARRIVAL[r["load_shape"]]
        out.append(_classify(f"{c.row_id}:{c.metric}", r["gpu"], r["model"], arrival, conc, c.metric, c.error,
                             f"{r['source']}: {r['source_ref']}"))
    vllm = {r["id"]: r for r in cr.load_vllm_rows()}
    for c in cr.compare_vllm(list(vllm.values())):
        r = vllm[c.row_id]
        out.append(_classify(f"{c.row_id}:{c.metric}", r["options"]["gpu"], r["options"]["model"],
                             r["load"]["arrival"], r["load"].get("concurrency"), c.metric, c.error,
                             f"{r['source']}: {r['source_ref']}"))
    logs = {r["id"]: r for r in mcr.load_rows()}
    for c in mcr.compare(list(logs.values())):
        if c.fit_set and c.term in MEMORY_TERMS:
            r = logs[c.row_id]
            # start-up memory does not depend on the load: regime "any" (calc.timing.bands.MEMORY_REGIME)
            out.append({**_classify(f"{c.row_id}:{c.term}", r["calc_gpu"], mcr.MODEL_FOR.get(r["model_id"], r["model_id"]),
                                    "closed", 2, c.term, c.error, f"{r['source_repo']} {r['source_ref']}: {r['source_path']}"),
                        "regime": bands.MEMORY_REGIME})
    return out


def table(ms: list[dict]) -> dict:
    return {
        "source": ("bench/make_bands.py from bench/calibration_report.py (calibration_measurements.csv high+medium "
                   "rows, vllm_benchmarks.jsonl) and bench/memory_calibration_report.py (vllm_memory_logs.jsonl "
                   "V1 rows, kv_pool and kv_tokens, the same errors for every load regime), default Efficiency"),
        "method": {"quantiles": list(bands.QUANTILES), "n_min": bands.N_MIN, "widen_per_dimension_dropped": bands.WIDEN,
                   "ladder": [list(k) for k in bands.LADDER],
                   "error": "predicted / measured - 1; cells hold ln(1 + error) quantiles"},
        "cells": bands.build_table(ms),
    }


def measurement_list(ms: list[dict]) -> dict:
    """Every measurement behind the bands with its error and source (the pages' "why this band")."""
    return {"source": "bench/make_bands.py (the same measurements as calc/data/bands.json)",
            "error": "predicted / measured - 1, default Efficiency",
            "measurements": {m["id"]: {"error": round(m["error"], 6), "source": m["source"]} for m in ms}}


def honesty(subset: list[dict], cells: dict, ms: list[dict]) -> dict:
    """On ``subset`` of the measurements ``ms``: in-sample coverage (the table of all of them), and
    leave-one-out (each measurement against a table built without it)."""
    ins = bands.coverage(subset, cells)
    scored = subset
    loo_inside, loo_half = [], []
    for m in scored:
        rest = [x for x in ms if x["id"] != m["id"]]
        c = bands.coverage([m], bands.build_table(rest))
        loo_inside.append(c["inside_fraction"])
        loo_half.append(c["median_half_width"])
    loo_half.sort()
    return {"in_sample": ins, "leave_one_out": {"n": len(scored), "inside_fraction": sum(loo_inside) / len(scored),
                                                "median_half_width": loo_half[len(loo_half) // 2]}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if calc/data/bands.json is out of date")
    ap.add_argument("--csv", help="write every measurement with its band to this CSV file")
    args = ap.parse_args(argv)
    ms = measurements()
    t = table(ms)
    outputs = {bands.BANDS_PATH: json.dumps(t, indent=1, sort_keys=True) + "\n",
               bands.MEASUREMENTS_PATH: json.dumps(measurement_list(ms), indent=1, sort_keys=True) + "\n"}
    for path, text in outputs.items():
        if args.check:
            current = path.read_text() if path.exists() else ""
            if current != text:
                print(f"{path} is out of date: run bench/make_bands.py", file=sys.stderr)
                return 1
        else:
            path.write_text(text)
    for what, subset in (("all", ms), ("timing", [m for m in ms if m["group"] != "memory"])):
        for name, c in honesty(subset, t["cells"], ms).items():
            print(f"{what:<7} {name:<14} n={c['n']:<4} inside the band {c['inside_fraction']:6.1%}   "
                  f"median half-width {c['median_half_width']:6.1%}")
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["measurement", "regime", "family", "moe", "group", "error", "cell", "n", "error_low", "error_high"])
            for m in ms:
                b = bands.band_basis(bands.BandKey(m["regime"], m["family"], m["moe"], m["group"]), t["cells"])
                w.writerow([m["id"], m["regime"], m["family"], m["moe"], m["group"], round(m["error"], 4), b.cell, b.n,
                            round(b.record()["error_low"], 4), round(b.record()["error_high"], 4)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
