"""Writes calc/data/bands.json, the error-band table (calc.timing.bands), from the calibration reports
and the vLLM runs found since (:data:`FOUND_SETS`).

    .venv/bin/python bench/make_bands.py [--check]

The measurements are those the calibration reports score, with the same efficiency defaults:
``calibration_report.py``'s fit set (high + medium rows of the 2023-24 engines) and every vLLM
serving benchmark row, and ``memory_calibration_report.py``'s vLLM V1 start-up logs (KV pool and
KV tokens: the memory group). Each is classified by load regime and its condition (the API server's
share of the predicted load, calc.cli.measured.row_api_server_share), GPU family, dense/MoE and metric
group; the table holds, per cell, the location and spread of the log errors and the measurements'
names, and the pooled shape (calc.timing.bands). Prints how honest the bands are on these
measurements (inside fraction, median half-width), in sample: all, the calibration set's, the found sets'. ``--check`` exits 1 when the file is
out of date. ``--validate`` also scores the bands on measurements left out of the table
(calc.timing.bands.cross_validate): each measurement, each benchmark (a table of a document, one
log file), each document (a page or log file: one deployment) and each publisher in turn, overall,
timing alone and per metric group, and each found set in turn (:func:`found_left_out`) (inside fraction,
median half-width and mean interval score,
calc.timing.bands.interval_score: lower is better, and a change that only trades width for coverage does
not lower it), and lists the
measurements outside their band when their benchmark is left out (what misses, and by how much).

    .venv/bin/python bench/make_bands.py --validate
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import calibration_report as cr  # noqa: E402
import memory_calibration_report as mcr  # noqa: E402

from calc.cli.args import UsageError  # noqa: E402
from calc.cli.measured import row_api_server_share  # noqa: E402
from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.timing import bands  # noqa: E402

LOAD_SHAPE_ARRIVAL = {"single_request": ("closed", 1), "closed_loop": ("closed", 2), "static_batch": ("static", None)}
MEMORY_TERMS = ("kv_pool", "kv_tokens")  # what a user reads: the KV pool and the requests it holds


def _classify(mid: str, gpu: str, model: str, arrival: str, conc, metric: str, error: float, source: str = "") -> dict:
    return {"id": mid, "regime": bands.load_regime(arrival, conc),
            "family": bands.gpu_family(get_gpu(gpu).architecture), "moe": get_model(model).moe is not None,
            "group": bands.metric_group(metric), "error": error, "source": source}


# vLLM serving runs this project found itself after the calibration set was fixed (bench/data/README.md,
# each row with its source), in the calibration set's row format and asked the same way. Each set was
# first scored blind against bands built without it (2026-12-01 to 12-03: 48.6-88.9 % of its values inside,
# 65.5 % over all seven), which showed the calibration set alone under-states the error where it has few
# runs: MoE at large batch, FP8 MoE, TP 8, MI300X, the API server on bursts. Bands are the model's measured
# error, so these runs now join the table; the model itself is fitted on none of them. What a new set
# of runs would see is estimated by leaving each set out in turn (``--validate``, :func:`found_left_out`).
FOUND_SETS = ("vllm_found", "moe_ampere_found", "vllm_found_2026_12", "vllm_found_2026_12b", "gptoss_found",
              "fp8_moe_hopper_found", "mla_moe_lowbatch_found", "weight_only_found", "vllm_found_2026_12c")


def _vllm_measurements(rows: list[dict], found_set: str = "") -> tuple[list[dict], list[str]]:
    """The scored metrics of vLLM benchmark rows, classified; and the rows the calculator cannot ask
    (``id: reason``: a model that does not fit the row's GPU as stated), left out of the table."""
    out, not_asked = [], []
    for r in rows:
        try:
            predicted = cr.ask_vllm_row(r)  # once: the errors (cr.compare_vllm's) and the API server's share
        except UsageError as e:
            not_asked.append(f"{r['id']}: {e}")
            continue
        share = row_api_server_share(r, predicted)
        for metric, m in r["measured"].items():
            if m.get("scored"):
                error = float(predicted[metric]) / float(m["value"]) - 1.0
                out.append({**_classify(f"{r['id']}:{metric}", r["options"]["gpu"], r["options"]["model"],
                                        r["load"]["arrival"], r["load"].get("concurrency"), metric, error,
                                        f"{r['source']}: {r['source_ref']}"),
                            "api_server_share": share, "condition": bands.load_condition(share), "set": found_set})
    return out, not_asked


def found_rows(name: str) -> list[dict]:
    """The rows of one found set (:data:`FOUND_SETS`) in the benchmark-row format."""
    with open(ROOT / "bench" / "data" / f"{name}.jsonl") as fh:
        return [r for r in (json.loads(line) for line in fh if line.strip()) if "options" in r and "load" in r]


def measurements(found: tuple[str, ...] = FOUND_SETS, not_asked: list[str] | None = None) -> list[dict]:
    """Every scored measurement of the calibration reports and of the ``found`` sets, classified (module
    docstring). Rows the calculator cannot ask are appended to ``not_asked`` when given."""
    out = []
    older = {r["id"]: r for r in cr.load_rows(include_low=False)}
    for c in cr.compare(list(older.values())):
        r = older[c.row_id]
        arrival, conc = LOAD_SHAPE_ARRIVAL[r["load_shape"]]
        # the 2023-24 engines' own harnesses and offline runs: no API server in front (share 0)
        out.append({**_classify(f"{c.row_id}:{c.metric}", r["gpu"], r["model"], arrival, conc, c.metric, c.error,
                                f"{r['source']}: {r['source_ref']}"), "api_server_share": 0.0, "condition": "engine"})
    calibration, skipped = _vllm_measurements(cr.load_vllm_rows())
    if skipped:  # the calibration rows are all askable (tests/test_calibration.py)
        raise ValueError(f"calibration rows the calculator cannot ask: {skipped}")
    out += calibration
    for name in found:
        ms, skipped = _vllm_measurements(found_rows(name), name)
        out += ms
        if not_asked is not None:
            not_asked += [f"{name}: {s}" for s in skipped]
    logs = {r["id"]: r for r in mcr.load_rows()}
    for c in mcr.compare(list(logs.values())):
        if c.fit_set and c.term in MEMORY_TERMS:
            r = logs[c.row_id]
            # start-up memory does not depend on the load: regime "any" (calc.timing.bands.MEMORY_REGIME)
            out.append({**_classify(f"{c.row_id}:{c.term}", r["calc_gpu"], mcr.MODEL_FOR.get(r["model_id"], r["model_id"]),
                                    "closed", 2, c.term, c.error, f"{r['source_repo']} {r['source_ref']}: {r['source_path']}"),
                        "regime": bands.MEMORY_REGIME, "condition": bands.MEMORY_REGIME})
    return out


def calibration(ms: list[dict]) -> list[dict]:
    """The calibration set's measurements of ``ms`` (not a found set's): where issue #20 states its
    targets (80 % inside, median half-width at most 30 %; the quantile rule holds them held out over every
    measurement, calc.timing.bands.held_out_quantiles)."""
    return [m for m in ms if not m.get("set")]


def table(ms: list[dict], quantiles: tuple[float, float] | None = None) -> dict:
    """The band table of ``ms`` (its quantiles: bands.held_out_quantiles's choice unless given)."""
    scores = dict(bands.held_out_choices(ms, choices=bands.QUANTILE_CHOICES if quantiles is None else (tuple(quantiles),)))
    quantiles = bands.choose_quantiles(list(scores.items())) if quantiles is None else quantiles
    held = scores[tuple(quantiles)]
    return {
        "source": ("bench/make_bands.py from bench/calibration_report.py (calibration_measurements.csv high+medium "
                   "rows, vllm_benchmarks.jsonl), the runs found since (bench/data/" + ", ".join(FOUND_SETS) +
                   " .jsonl) and bench/memory_calibration_report.py (vllm_memory_logs.jsonl "
                   "V1 rows, kv_pool and kv_tokens, the same errors for every load regime), default Efficiency"),
        "method": {"quantiles_of_loo_standardised_residuals": list(quantiles),
                   "quantile_rule": (f"the widest central interval of {len(bands.QUANTILE_CHOICES)} choices "
                                     f"({bands.QUANTILE_CHOICES[0][0]:g}-{bands.QUANTILE_CHOICES[-1][0]:g} per tail) "
                                     "whose bands, with each document left out of the table in turn, hold at least "
                                     f"{bands.MIN_INSIDE:g} of the measured values at a median half-width of at most "
                                     f"{bands.MAX_MEDIAN_HALF_WIDTH:g} (calc.timing.bands.held_out_quantiles)"), "prior_n": bands.PRIOR_N,
                   "held_out": {"unit": "document", "units": held["units"], "n": held["n"],
                                "inside_fraction": round(held["inside_fraction"], 4),
                                "median_half_width": round(held["median_half_width"], 4)},
                   "n_min": bands.N_MIN, "widen_per_empty_rung": bands.WIDEN, "spread_floor": bands.SPREAD_FLOOR,
                   "ladder": [list(k) for k in bands.LADDER], "root": bands.ROOT_CELL,
                   "error": ("predicted / measured - 1; cells hold the median and 1.4826 x MAD of ln(1 + error), "
                             "shrunk at look-up toward the coarser rungs by d / (d + prior_n), d = n_documents (the "
                             "source documents, a page or a log file, behind the cell: one deployment counts once); "
                             "the root holds z_lo, z_hi, the quantiles of the leave-one-out standardised residuals")},
        "cells": bands.build_table(ms, tuple(quantiles)),
    }


def measurement_list(ms: list[dict]) -> dict:
    """Every measurement behind the bands with its error and source (the pages' "why this band")."""
    return {"source": "bench/make_bands.py (the same measurements as calc/data/bands.json)",
            "error": "predicted / measured - 1, default Efficiency",
            "measurements": {m["id"]: {"error": round(m["error"], 6), "source": m["source"]} for m in ms}}


def _line(what: str, name: str, c: dict) -> str:
    groups = "  ".join(f"{g} {v['inside_fraction']:.0%}/{v['median_half_width']:.0%}" for g, v in c["by_group"].items())
    return (f"{what:<8} {name:<24} n={c['n']:<4} inside the band {c['inside_fraction']:6.1%}   median half-width "
            f"{c['median_half_width']:6.1%}   interval score {c['interval_score']:.3f}   timing {c['timing']['inside_fraction']:.1%}/"
            f"{c['timing']['median_half_width']:.1%}   ({groups})")


def validate(ms: list[dict], quantiles: tuple[float, float]) -> dict[str, dict]:
    """The bands scored on measurements left out of the table, per hold-out unit (the table's quantiles)."""
    return {unit: bands.cross_validate(ms, unit, quantiles) for unit in bands.HOLDOUT_UNITS}


def found_left_out(ms: list[dict]) -> dict[str, dict]:
    """Each found set (:data:`FOUND_SETS`) scored by bands built without it (quantiles chosen again by the
    rule on what is left): what a new set of public runs would see. ``"all"`` pools the sets' values."""
    out, pairs = {}, []
    for name in sorted({m.get("set", "") for m in ms} - {""}):
        rest = [m for m in ms if m.get("set", "") != name]
        cells = bands.build_table(rest, bands.held_out_quantiles(rest))
        held = [m for m in ms if m.get("set", "") == name]
        out[name] = bands.coverage(held, cells)
        pairs += [(m, cells) for m in held]
    out["all"] = bands.coverage_of(pairs)
    return out


def print_misses(ms: list[dict], quantiles: tuple[float, float], unit: str = "benchmark") -> None:
    """Every measurement outside its band when its ``unit`` is left out: its cell, log error and band."""
    tables: dict[str, dict] = {}
    for m in sorted(ms, key=lambda m: (m["group"], m["regime"], m["family"], m["id"])):
        u = bands.holdout_unit(m, unit)
        if u not in tables:
            tables[u] = bands.build_table([x for x in ms if bands.holdout_unit(x, unit) != u], quantiles)
        cells = tables[u]
        b = bands.band_basis(bands.BandKey(m["regime"], m["family"], m["moe"], m["group"], m["condition"]), cells)
        r = math.log1p(m["error"])
        if not b.log_lo - 1e-12 <= r <= b.log_hi + 1e-12:
            print(f"  outside  {m['id']:<42} {b.key.regime}/{b.key.condition}/{b.key.family}/{'moe' if b.key.moe else 'dense'}/"
                  f"{b.key.group:<10} ln(pred/meas) {r:+.3f}  band [{b.log_lo:+.3f}, {b.log_hi:+.3f}]  "
                  f"({b.n_exact} in its cell)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if calc/data/bands.json is out of date")
    ap.add_argument("--csv", help="write every measurement with its band to this CSV file")
    ap.add_argument("--validate", action="store_true",
                    help="also score the bands on measurements left out of the table (slower: about a minute)")
    args = ap.parse_args(argv)
    not_asked: list[str] = []
    ms = measurements(not_asked=not_asked)
    for line in not_asked:
        print(f"not asked (left out of the table): {line}", file=sys.stderr)
    t = table(ms)
    quantiles = tuple(t["method"]["quantiles_of_loo_standardised_residuals"])
    if quantiles != tuple(bands.QUANTILES):
        print(f"note: the rule chose quantiles {quantiles}; set calc.timing.bands.QUANTILES to it", file=sys.stderr)
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
    print(_line("all", "in sample", bands.coverage(ms, t["cells"])))
    print(_line("all", "calibration, in sample", bands.coverage(calibration(ms), t["cells"])))
    print(_line("all", "found sets, in sample", bands.coverage([m for m in ms if m.get("set")], t["cells"])))
    if args.validate:
        for unit, c in validate(ms, quantiles).items():
            print(_line("all", f"{unit} left out ({c['units']})", c))
        cal_doc = bands.cross_validate(ms, "document", quantiles, lambda m: not m.get("set"))
        print(_line("all", f"calibration, document left out ({cal_doc['units']})", cal_doc))
        print("the quantile rule (calc.timing.bands.held_out_quantiles), each document left out, widest first:")
        for q, c in bands.held_out_choices(ms):
            print(f"  central {q[1] - q[0]:6.1%}  inside {c['inside_fraction']:6.1%}  median half-width "
                  f"{c['median_half_width']:6.1%}{'   <- chosen' if tuple(q) == quantiles else ''}")
        left_out = found_left_out(ms)
        for name, c in left_out.items():
            if name != "all":
                print(f"found set {name:<24} left out: n={c['n']:<4} inside the band {c['inside_fraction']:6.1%}   "
                      f"median half-width {c['median_half_width']:6.1%}")
        print(f"found sets, each left out: {left_out['all']['inside_fraction']:.1%} of {left_out['all']['n']} values inside, "
              f"median half-width {left_out['all']['median_half_width']:.1%}")
        print("outside their band, their benchmark left out:")
        print_misses(ms, quantiles)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["measurement", "regime", "condition", "family", "moe", "group", "error", "cell", "n", "error_low",
                        "error_high"])
            for m in ms:
                key = bands.BandKey(m["regime"], m["family"], m["moe"], m["group"], m["condition"])
                b = bands.band_basis(key, t["cells"])
                w.writerow([m["id"], m["regime"], m["condition"], m["family"], m["moe"], m["group"], round(m["error"], 4),
                            b.cell, b.n,
                            round(b.record()["error_low"], 4), round(b.record()["error_high"], 4)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
