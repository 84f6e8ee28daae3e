"""Prefix caching against published measurements (bench/data/prefix_cache_measurements.jsonl), each
asked the way it was run: an offline burst of prompts sent twice (the simulator with each prompt a
chain of its own, vLLM's LLM class: no API server), or an open loop at a rate with a shared prefix
(`simulate`). Prints every row's predicted / measured and the median |error| over the rows of
medium confidence and over all; then, for the open-loop rows, the effect itself (cache / base at the
same rate, measured vs predicted) and the spread of the prediction over arrival seeds.

The open-loop rows (vLLM PR #1983, vLLM 0.2.x) are asked as that engine ran them: whole prompts in
prompt-only steps that stall decoding (``enable_chunked_prefill`` off: the simulator's ``whole``
policy, vLLM 0.2's ``Scheduler._schedule``), ``max_num_batched_tokens`` max(max_model_len, 2048) =
4096 and ``max_num_seqs`` 256 (the defaults the estimate takes), Poisson arrivals and 1,000
requests (vLLM 0.2 ``benchmark_serving.py``: ``np.random.exponential``, ``--num-prompts`` 1000, no
warm-up), through an HTTP API server (``efficiency_for_engine(api_server=True)``). Every open-loop row
takes its endpoint as ``calc.cli.measured.ask_row`` takes a calibration row's: a Qwen model through the chat
endpoint prefills its chat template's 8 tokens; the completions endpoint's requests pass the API server first
come first served.

    .venv/bin/python bench/prefix_cache_measured.py [--engine-checks] [--write]

``--write`` also writes calc/data/prefix_cache_checks.json, what the prefix-cache page shows
(:func:`checks`; tests/test_prefix_cache.py keeps it current).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.cli.estimate import estimate_record  # noqa: E402
from calc.cli.measured import (CHATML_USER_TURN_OPENING_TOKENS, CLOSED_RUN_CYCLES,  # noqa: E402
                               efficiency_for_engine, template_tokens)
from calc.cli.simulate import simulate_record  # noqa: E402
from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.traffic.prefix_cache import CHECKS_PATH, PrefixChains  # noqa: E402
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


def open_loop(row: dict, seed: int = 0, efficiency: Efficiency | None = None) -> dict:
    """``benchmark_serving.py`` against the API server: ``num_requests`` Poisson arrivals at
    ``rate_rps``, or all at once (``arrival`` ``burst``: ``vllm bench serve``'s default request rate
    inf, no ``rate_rps``), or a closed loop of ``concurrency`` clients (``shape`` "closed loop": a
    ``--max-concurrency`` that binds all run long; the benchmark starts a request's clock after its
    semaphore), which, run for over :data:`calc.cli.measured.CLOSED_RUN_CYCLES` cycles, is asked for
    its steady state (``estimate``) as :func:`calc.cli.measured.ask_row` asks the calibration rows:
    real clients drift apart (EOS, the API server one request at a time) where fixed lengths in the
    simulator would keep them in one synchronized wave. The engine as the row's load states it: whole-prompt prefill unless
    ``enable_chunked_prefill`` (vLLM 0.2, module docstring; vLLM V1 chunks), float16 unless ``dtype``,
    the row's ``quantization``; an open loop with a ``concurrency_cap`` under it (``--max-concurrency`` beside
    ``--request-rate``) is simulated with that cap."""
    ld = row["load"]
    chat = "openai-chat" in row.get("command", "")  # vllm bench serve --endpoint-type openai-chat
    # as calc.cli.measured.ask_row asks a row: the engine prefills a Qwen chat template's tokens too (the shared
    # prefix starts after the template's opening, so it grows by those); the completions endpoint (and vLLM 0.2's
    # /generate) has no template, and its tokenizer thread takes the requests in order
    template = template_tokens(row["model"], chat=chat)
    shared = ld["shared_prefix_len"] + (CHATML_USER_TURN_OPENING_TOKENS if template and ld["shared_prefix_len"] else 0)
    options = dict(model=row["model_proxy"], gpu=row["gpu"], dtype=ld.get("dtype", "float16"),
                   quantization=row.get("quantization", "auto"), input_len=ld["input_len"] + template,
                   output_len=ld["output_len"],
                   shared_prefix_len=shared, enable_chunked_prefill=ld.get("enable_chunked_prefill", False),
                   enable_prefix_caching=ld["enable_prefix_caching"],
                   **{k: ld[k] for k in ("max_model_len", "gpu_memory_utilization", "num_shared_prefixes", "max_num_batched_tokens",
                                         "max_num_seqs", "block_size") if k in ld})
    efficiency = efficiency or efficiency_for_engine("vllm", Efficiency(), api_server=True)
    if not chat:
        efficiency = efficiency.model_copy(update={"api_server_final_share": 1.0})
    if ld["shape"] == "closed loop":  # long: its steady state, as calc.cli.measured.ask_row asks one
        assert ld["num_requests"] > CLOSED_RUN_CYCLES * ld["concurrency"], row["id"]
        rec = estimate_record({**options, "concurrency": ld["concurrency"]}, efficiency)
        return {"ttft_s": rec["ttft_s"], "tpot_s": rec["tpot_s"], "e2e_latency_s": rec["e2e_latency_s"],
                "requests_per_s": rec["requests_per_s"], "output_tokens_per_s": rec["output_tokens_per_s"],
                "prefix_cache_hit_rate": rec.get("prefix_cache_hit_rate", float("nan"))}
    cap = ld.get("concurrency_cap")  # vllm bench serve --max-concurrency beside --request-rate
    rec = simulate_record({**options, "rate": ld.get("rate_rps"), "arrival": ld.get("arrival", "poisson"),
                           "num_requests": ld.get("num_requests", 1000), "seed": seed,
                           **({"max_concurrency": cap} if cap else {})}, efficiency)
    return {"ttft_s": rec["ttft_s_mean"], "tpot_s": rec["tpot_s_mean"], "e2e_latency_s": rec["e2e_latency_s_mean"],
            "requests_per_s": rec["requests_per_s"], "output_tokens_per_s": rec["output_tokens_per_s"],
            "prefix_cache_hit_rate": rec.get("prefix_cache_hit_rate", float("nan"))}  # absent without reuse


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


def effect_ratios(scored: list[tuple[dict, str, float, float]]) -> list[tuple[float, str, float, float]]:
    """(rate, metric, measured cache / base, predicted cache / base) for every open-loop rate at
    which both a base and a cache row were measured."""
    by = {(row["load"].get("rate_rps"), row["load"]["enable_prefix_caching"], metric): (p, m)
          for row, metric, p, m in scored if row["load"]["shape"] == "open loop"}
    out = []
    for (rate, cache, metric), (p, m) in by.items():
        if cache and (rate, False, metric) in by:
            pb, mb = by[(rate, False, metric)]
            out.append((rate, metric, m / mb, p / pb))
    return out




def _sig(x: float) -> float:
    return float(f"{x:.4g}")


def checks(scored: list[tuple[dict, str, float, float]] | None = None) -> dict:
    """What the prefix-cache page shows (calc/data/prefix_cache_checks.json, ``--write``): every scored
    value with its source, the median |error| over all and over the rows of medium confidence, and the
    cache's effect (cache / base at the same rate, :func:`effect_ratios`) against the measured one."""
    scored = score() if scored is None else scored
    errs = [abs(p / m - 1) for _, _, p, m in scored]
    medium = [abs(p / m - 1) for row, _, p, m in scored if row["confidence"] != "low"]
    effect = [abs(p / m - 1) for _, _, m, p in effect_ratios(scored)]
    return {
        "source": "bench/prefix_cache_measured.py --write (bench/data/prefix_cache_measurements.jsonl), default Efficiency",
        "median_abs_error": round(statistics.median(errs), 4), "n": len(errs),
        "median_abs_error_medium": round(statistics.median(medium), 4), "n_medium": len(medium),
        "effect_median_abs_error": round(statistics.median(effect), 4), "n_effect": len(effect),
        "rows": [{"id": row["id"], "source": row["source"], "confidence": row["confidence"], "metric": metric,
                  "predicted": _sig(p), "measured": _sig(m), "error": round(p / m - 1, 4)}
                 for row, metric, p, m in scored],
    }


def engine_checks(sequence_overheads_s=(35e-6, 300e-6, 450e-6), distserve_scale: float = 0.69) -> None:
    """vLLM 0.2's capacity on PR #1983's load (1,000 requests at 1,000 req/s) under two candidate
    engine-speed mechanisms, each also asked on rows it was not chosen on: a per-sequence engine CPU
    cost per step (``sequence_overhead_s``), which the DistServe colocated rows (vLLM of 2023, 13B on
    one A100, bench/data/disaggregation_measurements.jsonl) then check; and the step-rate scale
    fitted on DistServe's colocated TPOT row (bench/disaggregation_report.py, 0.69), asked here."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import disaggregation_report as D

    base = efficiency_for_engine("vllm", Efficiency(), api_server=True)
    sat = [r for r in rows() if r["id"] in ("pr1983-qps25-base", "pr1983-qps25-cache")]
    dist = [r for r in D.rows() if r["id"] in ("distserve-13b-colocated-ttft", "distserve-13b-colocated-tpot")]
    print("\n| engine | PR #1983 capacity base / cached (measured 14.08 / 19.81) | DistServe colocated max rate, TTFT / TPOT target (measured 2.3 / 1.6) |")
    print("|---|---|---|")
    cases = [(f"sequence_overhead_s {s * 1e6:.0f} us", base.model_copy(update={"sequence_overhead_s": s}))
             for s in sequence_overheads_s] + [(f"DistServe scale {distserve_scale}", D.engine_efficiency(distserve_scale, base))]
    for label, eff in cases:
        caps = [open_loop({**r, "load": {**r["load"], "rate_rps": 1000.0}}, efficiency=eff)["requests_per_s"] for r in sat]
        rates = [D.predict(r, n=1500, efficiency=eff)[0] for r in dist]
        print(f"| {label} | {caps[0]:.2f} / {caps[1]:.2f} | {rates[0]:.2f} / {rates[1]:.2f} |")


def main() -> int:
    scored = score()
    print("| row | confidence | metric | predicted | measured | error |")
    print("|---|---|---|---|---|---|")
    for row, metric, p, m in scored:
        print(f"| {row['id']} | {row['confidence']} | {metric} | {p:,.3f} | {m:,.3f} | {(p / m - 1) * 100:+.0f} % |")
    for label, keep in (("medium confidence", lambda r: r["confidence"] != "low"), ("all", lambda r: True)):
        errs = [abs(p / m - 1) for row, _, p, m in scored if keep(row)]
        print(f"median |error|, {label}: {statistics.median(errs) * 100:.0f} % over {len(errs)} values")
    lat = [abs(p / m - 1) for row, metric, p, m in scored if row["confidence"] == "low" and metric != "requests_per_s"]
    print(f"median |error|, low-confidence latencies (ttft, e2e): {statistics.median(lat) * 100:.0f} % over {len(lat)} values")
    print("\n| rate (req/s) | metric | measured cache / base | predicted cache / base | error |")
    print("|---|---|---|---|---|")
    for rate, metric, m, p in effect_ratios(scored):
        print(f"| {rate} | {metric} | {m:.3f} | {p:.3f} | {(p / m - 1) * 100:+.0f} % |")
    print("\n| row | measured requests/s (overloaded: the engine's capacity) | simulated capacity (1,000 at 1,000 req/s) |")
    print("|---|---|---|")
    for row in rows():
        if row["load"]["shape"] == "open loop" and row["measured"].get("requests_per_s", np.inf) < 0.9 * row["load"].get("rate_rps", np.inf):
            cap = open_loop({**row, "load": {**row["load"], "rate_rps": 1000.0}})["requests_per_s"]
            print(f"| {row['id']} | {row['measured']['requests_per_s']:.2f} | {cap:.2f} |")
    print("\n| row | metric | predicted over arrival seeds 0-4 (min - max) | measured |")
    print("|---|---|---|---|")
    for row in rows():
        if row["load"]["shape"] != "open loop":
            continue
        preds = [open_loop(row, seed) for seed in range(5)]
        for metric, m in row["measured"].items():
            v = [p[metric] for p in preds]
            print(f"| {row['id']} | {metric} | {min(v):,.3f} - {max(v):,.3f} | {m:,.3f} |")
    if "--engine-checks" in sys.argv[1:]:
        engine_checks()
    if "--write" in sys.argv[1:]:
        CHECKS_PATH.write_text(json.dumps(checks(scored), indent=1) + "\n")
        print(f"wrote {CHECKS_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
