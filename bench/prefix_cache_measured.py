"""Prefix caching against published measurements (bench/data/prefix_cache_measurements.jsonl), each
asked the way it was run: an offline burst of prompts sent twice (the simulator with each prompt a
chain of its own, vLLM's LLM class: no API server), or an open loop at a rate with a shared prefix
(`simulate`). Prints every row's predicted / measured and the median |error| over the rows of
medium confidence and over all.

    .venv/bin/python bench/prefix_cache_measured.py
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.cli.measured import efficiency_for_engine  # noqa: E402
from calc.cli.simulate import simulate_record  # noqa: E402
from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.traffic.prefix_cache import PrefixChains  # noqa: E402
from calc.traffic.simulator import EngineConfig, simulate  # noqa: E402
from calc.traffic.workload import Workload  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "prefix_cache_measurements.jsonl"


def rows() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def offline_repeat(row: dict, seed: int = 0) -> dict:
    """benchmark_prefix_caching.py: ``distinct_prompts`` prompts of lengths uniform in the range, each
    ``repeat_count`` times in a shuffled order, all at t = 0 through the LLM class."""
    ld = row["load"]
    arch, gpu = get_model(row["model_proxy"]), get_gpu(row["gpu"])
    lo, hi = ld["input_len_range"]
    sv = ServingConfig(quantization=row.get("quantization", "auto"), input_len=hi, output_len=ld["output_len"],
                       max_model_len=4096)
    est = estimate(arch, gpu, sv, efficiency_for_engine("vllm", Efficiency()))
    rng = np.random.default_rng(seed)
    n, k = ld["distinct_prompts"], ld["repeat_count"]
    lens = rng.integers(lo, hi + 1, size=n)
    order = rng.permutation(np.repeat(np.arange(n), k))
    I = lens[order].astype(np.int64)
    w = Workload(arrival_s=np.zeros(n * k), input_len=I, output_len=np.full(n * k, ld["output_len"], dtype=np.int64))
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks),
                       enable_prefix_caching=ld["enable_prefix_caching"])
    r = simulate(est.engine, w, cfg, chains=PrefixChains(chain=order.astype(np.int64), chain_tokens=I, chain_after=I,
                                                         num_chains=n))
    span = float(np.nanmax(r.finish_s))
    return {"cost_time_s": span, "input_tokens_per_s": float(I.sum()) / span,
            "output_tokens_per_s": float(w.output_len.sum()) / span, "prefix_cache_hit_rate": r.prefix_cache_hit_rate}


def open_loop(row: dict) -> dict:
    ld = row["load"]
    rec = simulate_record(dict(model=row["model_proxy"], gpu=row["gpu"], dtype="float16", input_len=ld["input_len"],
                               output_len=ld["output_len"], rate=ld["rate_rps"], num_requests=1000,
                               shared_prefix_len=ld["shared_prefix_len"], enable_chunked_prefill=False,
                               enable_prefix_caching=ld["enable_prefix_caching"]))
    return {"ttft_s": rec["ttft_s_mean"], "e2e_latency_s": rec["e2e_latency_s_mean"],
            "requests_per_s": rec["requests_per_s"], "prefix_cache_hit_rate": rec["prefix_cache_hit_rate"]}


def predict(row: dict) -> dict:
    return offline_repeat(row) if row["load"]["shape"] == "offline burst" else open_loop(row)


def score() -> list[tuple[dict, str, float, float]]:
    """(row, metric, predicted, measured) for every measured metric of every row."""
    out = []
    for row in rows():
        pred = predict(row)
        for metric, measured in row["measured"].items():
            out.append((row, metric, float(pred[metric]), float(measured)))
    return out


def main() -> int:
    scored = score()
    print("| row | confidence | metric | predicted | measured | error |")
    print("|---|---|---|---|---|---|")
    for row, metric, p, m in scored:
        print(f"| {row['id']} | {row['confidence']} | {metric} | {p:,.3f} | {m:,.3f} | {(p / m - 1) * 100:+.0f} % |")
    for label, keep in (("medium confidence", lambda r: r["confidence"] != "low"), ("all", lambda r: True)):
        errs = [abs(p / m - 1) for row, _, p, m in scored if keep(row)]
        print(f"median |error|, {label}: {statistics.median(errs) * 100:.0f} % over {len(errs)} values")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
