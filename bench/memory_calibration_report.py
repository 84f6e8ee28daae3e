"""Memory calibration report: the memory model against vLLM's own start-up logs, term by term.

    .venv/bin/python bench/memory_calibration_report.py [--csv OUT]

For each of the logs in ``bench/data/vllm_memory_logs.jsonl`` (vLLM's "Model loading took",
"torch peak memory increase", "non-torch forward increase memory", "Available KV cache memory"
and "GPU KV cache size" lines) the calculator is run with the logged settings and the catalog
defaults for everything else: the SAME Efficiency defaults for every row, nothing per row.
Error = predicted / logged - 1 for weights, activation peak, non-torch memory and KV pool (GiB)
and KV tokens. The fit set is the vLLM V1 rows (0.15-0.19); the two V0 rows (vLLM 0.6.x, PR
#10511) are printed apart: V0 profiled differently (its sampler warm-up, its non-torch figure).

``BEFORE`` keeps the same comparison for the model as it was before the profile-run terms
(main at fc76bde: fixed 1 GiB non-torch, 4 B per logit, checkpoint quantization ignored),
computed once with that commit's calc on these rows (see --before).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calc.sizing.scenario import memory_for  # noqa: E402
from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402

LOGS_PATH = ROOT / "bench" / "data" / "vllm_memory_logs.jsonl"
GiB = 2**30
TERMS = ("weights", "activation", "non_torch", "kv_pool", "kv_tokens")
LOGGED_KEY = {"weights": "weights_gib", "activation": "activation_peak_gib", "non_torch": "non_torch_gib",
              "kv_pool": "kv_cache_gib", "kv_tokens": "kv_tokens"}

# The logged repository ids -> catalog architecture (fine-tunes and re-quantized copies share the
# base model's config.json) and the weight format the log's engine line names.
MODEL_FOR = {
    "meta-llama/Llama-3.1-8B-Instruct": "meta-llama/Llama-3.1-8B",
    "meta-llama/Meta-Llama-3-8B": "meta-llama/Llama-3.1-8B",  # same architecture, 8192-token config
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16": "meta-llama/Llama-3.1-8B",
    "Qwen/Qwen2.5-7B-Instruct": "Qwen/Qwen2.5-7B",
    "Qwen/Qwen2.5-72B-Instruct": "Qwen/Qwen2.5-72B",
    "mistralai/Mixtral-8x7B-Instruct-v0.1": "mistralai/Mixtral-8x7B-v0.1",
    "google/gemma-2-9b-it": "google/gemma-2-9b",
    "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic": "meta-llama/Llama-3.3-70B-Instruct",
}
QUANT_FOR = {"None": "auto", "fp8": "fp8", "gptq_marlin": "gptq", "compressed-tensors": "fp8"}


def is_v0(row: dict) -> bool:
    return row["engine"] == "V0"


def serving_for_log(row: dict) -> ServingConfig:
    version = "0.15" if row["vllm_version"].startswith("0.15") else "0.19"
    return ServingConfig(
        tensor_parallel_size=row["tp"], dtype=row["dtype"], quantization=QUANT_FOR[str(row["quantization"])],
        kv_cache_dtype=row["kv_cache_dtype"], gpu_memory_utilization=row["gpu_memory_utilization"],
        max_model_len=row["max_model_len"], block_size=row["block_size"],
        # V0 (0.6.x) defaults: 256 sequences; without chunked prefill the budget is max(len, 2048).
        max_num_seqs=row["max_num_seqs"] or (256 if is_v0(row) else None),
        max_num_batched_tokens=row["max_num_batched_tokens"] or (max(row["max_model_len"], 2048) if is_v0(row) else None),
        vllm_version=version, input_len=1, output_len=1)


@dataclass(frozen=True)
class Comparison:
    row_id: str
    label: str
    term: str
    logged: float
    predicted: float
    fit_set: bool

    @property
    def error(self) -> float:
        return self.predicted / self.logged - 1.0


def load_rows() -> list[dict]:
    return [json.loads(line) for line in LOGS_PATH.read_text().splitlines() if line.strip()]


def predict(row: dict, efficiency: Efficiency = Efficiency()) -> dict[str, float]:
    arch = get_model(MODEL_FOR.get(row["model_id"], row["model_id"]))
    r = memory_for(arch, get_gpu(row["calc_gpu"]), serving_for_log(row), efficiency)
    return {"weights": float(r.weights_bytes) / GiB, "activation": float(r.activation_bytes) / GiB,
            "non_torch": float(r.overhead_bytes) / GiB, "kv_pool": float(r.kv_pool_bytes) / GiB,
            "kv_tokens": float(r.kv_pool_tokens)}


def label(row: dict) -> str:
    q = "" if str(row["quantization"]) == "None" else f" {row['quantization']}"
    kv = "" if row["kv_cache_dtype"] == "auto" else f" kv={row['kv_cache_dtype']}"
    return f"{row['model_id'].split('/')[-1][:30]} TP{row['tp']} {row['dtype']}{q}{kv} v{row['vllm_version'][:6]}"


def compare(rows: list[dict], efficiency: Efficiency = Efficiency()) -> list[Comparison]:
    out = []
    for row in rows:
        pred = predict(row, efficiency)
        for term in TERMS:
            logged = row["logged"].get(LOGGED_KEY[term])
            if logged:
                out.append(Comparison(row["id"], label(row), term, float(logged), pred[term], not is_v0(row)))
    return out


def summarize(comps: list[Comparison], fit_set: bool = True) -> dict[str, tuple[float, float, int]]:
    """(median |error|, worst |error|, n) per term."""
    out = {}
    for term in TERMS:
        errs = [abs(c.error) for c in comps if c.term == term and c.fit_set == fit_set]
        if errs:
            out[term] = (statistics.median(errs), max(errs), len(errs))
    return out


# The model before this report's changes (main @ fc76bde), on the same rows: per term
# (median |error|, worst |error|, n) over the V1 rows. Computed with that commit's calc on the
# same logs (models missing from its catalog parsed from this catalog's config.json files).
BEFORE = {
    "weights": (0.0018, 0.0085, 20),
    "activation": (0.2132, 0.6811, 20),
    "non_torch": (3.0000, 6.6923, 20),
    "kv_pool": (0.0062, 0.0712, 20),
    "kv_tokens": (0.0062, 0.0711, 20),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", help="write the comparison table to this CSV file")
    args = ap.parse_args(argv)
    comps = compare(load_rows())
    print(f"{'row':<4} {'log':<54} {'term':<11} {'logged':>10} {'predicted':>10} {'error':>8}")
    for c in comps:
        print(f"{c.row_id:<4} {c.label:<54} {c.term:<11} {c.logged:>10.4g} {c.predicted:>10.4g} {c.error:>+8.1%}"
              + ("" if c.fit_set else "  (V0, apart)"))
    print("\nV1 logs (vLLM 0.15-0.19): median |error| / worst |error| per term, before -> now")
    for term, (med, worst, n) in summarize(comps).items():
        b = BEFORE.get(term)
        before = f"{b[0]:6.1%} / {b[1]:6.1%}  ->  " if b else ""
        print(f"  {term:<11} {before}{med:6.1%} / {worst:6.1%}   (n={n})")
    v0 = summarize(comps, fit_set=False)
    if v0:
        print("V0 logs (vLLM 0.6.x, in-sample for the old docstrings; not in the targets):")
        for term, (med, worst, n) in v0.items():
            print(f"  {term:<11} {med:6.1%} / {worst:6.1%}   (n={n})")
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["row", "log", "term", "logged", "predicted", "error", "fit_set"])
            for c in comps:
                w.writerow([c.row_id, c.label, c.term, c.logged, c.predicted, c.error, c.fit_set])
    return 0


if __name__ == "__main__":
    sys.exit(main())
