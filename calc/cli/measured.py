"""Measured results against the calculator: each row (:mod:`calc.spec.results`) asked as a user
would ask the CLI, scored per metric with its error band. Shared by ``python -m calc validate`` /
``calibrate`` and ``bench/calibration_report.py`` (so that validate reproduces the report).

How a row is asked: as its benchmark ran it. ``closed`` loops (``vllm bench serve --max-concurrency C
--num-prompts N``) with ``estimate --concurrency C`` (its steady state) when the run is long, and a
short run (N/C ≤ :data:`CLOSED_RUN_CYCLES` cycles) with ``simulate --arrival closed --concurrency C
--num-requests N``: the C clients start together and every one of the N requests is counted, so
the synchronized wave of the start, which the steady state leaves out and which takes 10-20 cycles
to dissolve (issue 17), is in the answer; ``burst`` and ``static`` rows (``--request-rate inf``,
``benchmark_latency`` static batches, offline ``benchmark_throughput``: every prompt at t = 0) with
``simulate --arrival burst --num-requests N``; ``poisson``/``gamma`` rows (a finite
``--request-rate``) with ``simulate --arrival poisson|gamma --rate R``, and ``--max-concurrency C`` where the row's
load names the client's cap as its ``concurrency``. Error = predicted / measured − 1.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from calc.cli.estimate import estimate_record
from calc.cli.simulate import simulate_record
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency
from calc.timing.engine_profile import api_server_request_time_s, is_llama_cpp, llama_cpp_efficiency
from calc.traffic.workload import VLLM_SHAREGPT_BOUNDS
from calc.timing.bands import (BandKey, api_server_share, band, band_basis, gpu_family, load_condition, load_regime,
                               metric_group)

# Every measured engine below ran its TP all-reduces through NCCL, not a custom P2P kernel like vLLM's:
# TensorRT-LLM v0.5/v0.6.1 examples/llama/build.py has ``--use_custom_all_reduce`` off by default and
# the Llama-2-70B build command in performance.md @138f96d does not pass it; FasterTransformer and its
# fork TurboMind (LMDeploy v0.1) default ``enable_custom_all_reduce = 0``; the 2023 Databricks server
# predates vLLM's custom all-reduce (PR #2192, Dec 2023). So they run as ``--disable-custom-all-reduce``
# (an engine property, the same for every row of an engine).
NCCL_ONLY_ENGINES = ("TensorRT-LLM v0.5", "TensorRT-LLM v0.6", "LMDeploy (TurboMind) v0.1", "FasterTransformer",
                     "Databricks", "llama.cpp")
# An engine without an HTTP server in front: tokenizer and hand-off only (Efficiency.request_overhead_s).
OFFLINE_REQUEST_OVERHEAD_S = 2.0e-3
# The C++ engines' share of peak in prefill and decode GEMMs: TensorRT-LLM's 128-2048-token TTFT rows
# (pm-001..007) and large-batch rows (pm-008, pm-011) sit near 0.7, above vLLM's 0.6 (Efficiency).
CPP_FLOPS_FRACTION = 0.70
# ShareGPT's first-turn prompt and answer lengths are heavy-tailed (a few prompts of thousands of
# tokens beside many of tens); the rows give only their means. Asked with lognormal lengths of that
# mean and coefficient of variation 1: a stated round assumption, not fitted. The random dataset's
# rows are fixed lengths; a save-result file with per-request lengths gives its own spread.
SHAREGPT_LENGTH_CV = 1.0
# The tokens a ChatML chat template (Qwen2/Qwen3, Qwen3-*-Instruct-2507: ``chat_template`` in the model's
# tokenizer_config.json) puts around ONE user message with the generation prompt and no system prompt:
# ``<|im_start|>`` ``user`` ``\n`` ... ``<|im_end|>`` ``\n`` ``<|im_start|>`` ``assistant`` ``\n`` = 8 (Qwen's
# pre-tokenizer splits the newlines off; the two special tokens are one token each). vLLM's chat endpoint
# renders that template and prefills the whole; ``vllm bench serve`` counts only the dataset's prompt
# (its "Total input tokens" is the sum of the sampled prompt_len, vllm/benchmarks/serve.py).
CHATML_USER_TURN_TOKENS = 8
# Of those, the ones before the user's text (``<|im_start|>`` ``user`` ``\n``): a prompt's shared prefix starts after them.
CHATML_USER_TURN_OPENING_TOKENS = 3
# Sources whose every run went through the chat endpoint: gpustack's performance lab runs
# ``vllm bench serve --backend openai-chat --endpoint /v1/chat/completions`` (the command on each page).
CHAT_ENDPOINT_SOURCES = ("gpustack-performance-lab",)


# vLLM's benchmark clients that send every request over HTTP to its OpenAI API server: the CLI and the
# script it replaced (benchmarks/benchmark_serving.py, the same client code before vLLM 0.9)
SERVING_CLIENTS = ("vllm bench serve", "benchmark_serving")


def through_api_server(row: dict) -> bool:
    """The row's benchmark sent its requests through vLLM's OpenAI API server (:data:`SERVING_CLIENTS`)."""
    return str(row.get("bench_mode", "")).startswith(SERVING_CLIENTS)


def efficiency_for_engine(engine: str, efficiency: Efficiency, *, api_server: bool = False) -> Efficiency:
    """The efficiency inputs for a measured engine and benchmark path. Engine properties, the same
    for every row of that engine: the C++ engines (TensorRT-LLM, LMDeploy's TurboMind,
    FasterTransformer, llama.cpp) schedule and sample without a Python loop per sequence
    (``sequence_overhead_s`` 0), their fused GEMMs reach 0.7 of peak (:data:`CPP_FLOPS_FRACTION`; vLLM's
    0.6) and the same share of Hopper's peak as of Ampere's (``hopper_flops_scale`` 1). Benchmark path: only ``vllm bench serve`` and ``benchmark_serving.py`` go through vLLM's
    OpenAI API server (``api_server``); offline runs (``benchmark_latency``/``benchmark_throughput``,
    the LLM class) and the older engines' own harnesses have none (``api_server_request_s`` 0, and
    ``request_overhead_s`` only the engine's own few ms). llama.cpp rows then take the llama.cpp
    profile (:func:`calc.timing.engine_profile.llama_cpp_efficiency`: FP16-accumulate GEMM peak,
    its own prompt fraction and Hopper share)."""
    update = {} if api_server else {"api_server_request_s": 0.0, "api_server_harmony_request_s": 0.0,
                                    "request_overhead_s": OFFLINE_REQUEST_OVERHEAD_S}
    if engine.startswith(NCCL_ONLY_ENGINES):
        update["sequence_overhead_s"] = 0.0
        update["hopper_flops_scale"] = 1.0  # vLLM's kernels on Hopper, not theirs
        update["ampere_moe_flops_scale"] = 1.0  # vLLM's MoE kernels on Ampere, not theirs
        update["mxfp4_moe_half_saturation_rows"] = efficiency.gemm_half_saturation_tokens  # nor its MXFP4 MoE
        update["moe_layer_fixed_s"] = 0.0  # nor the floor of its fused-MoE kernel sequence
        update["triton_attention_prefill_fraction"] = 1.0  # nor vLLM's attention backend choice
        update["triton_attention_decode_fraction"] = 1.0
        update["mla_layer_fixed_s"] = 0.0  # nor its MLA layers' kernel chain
        update["prefill_flops_fraction"] = CPP_FLOPS_FRACTION  # their fused GEMMs, not vLLM's
        update["decode_flops_fraction"] = CPP_FLOPS_FRACTION
    efficiency = efficiency.model_copy(update=update) if update else efficiency
    return llama_cpp_efficiency(efficiency) if is_llama_cpp(engine) else efficiency


def length_cv(row: dict) -> tuple[float, float]:
    """(input, output) coefficient of variation of the row's lengths: the file's own, else
    ShareGPT's (:data:`SHAREGPT_LENGTH_CV`), else 0 (fixed lengths)."""
    own = row.get("length_cv")
    if isinstance(own, dict):
        return float(own.get("input", 0.0)), float(own.get("output", 0.0))
    cv = SHAREGPT_LENGTH_CV if "sharegpt" in str(row.get("dataset", "")).lower() else 0.0
    return cv, cv


def chat_endpoint(row: dict) -> bool:
    """The row's benchmark sent its requests to vLLM's chat endpoint (:data:`CHAT_ENDPOINT_SOURCES`, or
    ``openai-chat`` named in the row's dataset); else the completions endpoint of ``--backend vllm``."""
    return row.get("source") in CHAT_ENDPOINT_SOURCES or "openai-chat" in str(row.get("dataset", ""))


def chat_template_tokens(row: dict) -> int:
    """Prompt tokens the engine prefilled beyond the benchmark's own count: the row's
    ``chat_template_tokens``, else :data:`CHATML_USER_TURN_TOKENS` for a Qwen model asked through the
    chat endpoint (:data:`CHAT_ENDPOINT_SOURCES`, or ``openai-chat`` named in the row's dataset), else 0."""
    if "chat_template_tokens" in row:
        return int(row["chat_template_tokens"])
    return template_tokens(str(row["options"].get("model", "")), chat=chat_endpoint(row))


def template_tokens(model: str, *, chat: bool) -> int:
    """Tokens a request's chat template adds before the engine prefills it: :data:`CHATML_USER_TURN_TOKENS` for a
    Qwen model (ChatML) asked through the chat endpoint, else 0 (the completions endpoint sends the prompt as is).

    >>> template_tokens("Qwen/Qwen3-8B", chat=True), template_tokens("Qwen/Qwen3-8B", chat=False)
    (8, 0)
    """
    return CHATML_USER_TURN_TOKENS if chat and model.startswith("Qwen/") else 0


# A closed run of at most this many cycles (N ≤ 10·C requests) is simulated as it ran, from its synchronized
# start; a longer one is asked for its steady state. Issue 17's long-run simulations: with ±1-5 % spread
# of output lengths the start's wave dissolves within 10-20 cycles, so a run of ≤ 10 ends inside it. Measured
# (vLLM, gpt-oss-120b, random 1,058 in / 1,038 out, 300 clients, 3,000 prompts, H200 TP 4; vLLM issue
# #40838, bench/data/gptoss_found.jsonl): median TTFT 0.474 s; the steady state says 0.047 s (a mean, -90 %), the run
# simulated as it ran a median of 0.284 s (-40 %; its mean 0.436 s, which this row was compared with before
# 2026-12-05, -8 %).
CLOSED_RUN_CYCLES = 10
# A short closed run of spread lengths is one draw of N lengths: it is asked as the mean over this many
# draws (seeds 0..k-1). One draw of a 100-request ShareGPT run at 8 clients moves output tokens/s by
# -17 … +2 % between seeds (t3-gs-q8-c8, Qwen3-8B H100; seeds 0-9).
CLOSED_RUN_SEEDS = 5


def length_bounds(row: dict, template_tokens: int = 0):
    """The sampler bounds of the row's spread lengths: ``vllm bench``'s ShareGPT filter
    (:data:`calc.traffic.workload.VLLM_SHAREGPT_BOUNDS`) for a ShareGPT row run by vLLM's own benchmark
    client, on prompts ``template_tokens`` longer; else None (no bounds)."""
    vllm_client = through_api_server(row)
    if not (vllm_client and "sharegpt" in str(row.get("dataset", "")).lower()):
        return None
    b = VLLM_SHAREGPT_BOUNDS.shifted(template_tokens)
    return {"min_prompt_len": b.min_prompt_len, "max_prompt_len": b.max_prompt_len,
            "min_output_len": b.min_output_len, "max_total_len": b.max_total_len}


# ROCm's vLLM dev-docker page (github.com/ROCm/vllm docs/dev-docker/README.md, "Throughput Measurements"):
# its "Throughput (tokens/s)" column, which the calibration rows read as benchmark_throughput's total tokens/s.
OUTPUT_THROUGHPUT_SOURCES = ("rocm-vllm-dev-docker",)


def read_as_run(row: dict) -> dict:
    """The row with its measured metrics named as its source reports them, where the row file guessed.

    ROCm's dev-docker table gives one "Throughput (tokens/s)" per offline ``benchmark_throughput`` run
    (which prints requests/s, total and output tokens/s); the calibration rows read it as total tokens/s
    and say the reading is a guess. It is output tokens/s. The page's eight Llama-3.1 70B / 405B runs at
    128, 500 and 2,048 prompt tokens (github.com/ROCm/vllm blob 7545048a0): read as total, the 70B's
    output tokens/s would fall 3.2x from 128 + 2,048 to 2,048 + 2,048 tokens (11,895 -> 3,677), where
    twice the prompt grows a decode step's KV reads about 1.9x; read as output it falls 1.7x
    (12,639 -> 7,355). The calculator's error then does not move with the prompt's share: 70B +6 /
    +13 / +12 / +18 %, 405B +38 / +37 / +36 / +35 % (read as total +12 ... +136 % and +41 ... +169 %).
    Nothing else changes: the row's value, source and scored flag are kept.

    >>> r = {"source": "rocm-vllm-dev-docker", "measured": {"total_tokens_per_s": {"value": 7560.9, "scored": True}}}
    >>> list(read_as_run(r)["measured"]), read_as_run(r)["measured"]["output_tokens_per_s"]["value"]
    (['output_tokens_per_s'], 7560.9)
    >>> read_as_run({"source": "x", "measured": {"total_tokens_per_s": {"value": 1.0}}})["measured"]
    {'total_tokens_per_s': {'value': 1.0}}
    """
    measured = row.get("measured") or {}
    if row.get("source") not in OUTPUT_THROUGHPUT_SOURCES or "total_tokens_per_s" not in measured \
            or "output_tokens_per_s" in measured:
        return row
    m = {k: v for k, v in measured.items() if k != "total_tokens_per_s"}
    m["output_tokens_per_s"] = {**measured["total_tokens_per_s"],
                                "read_as": "output tokens/s: the source's one 'Throughput (tokens/s)' column "
                                           "(calc.cli.measured.read_as_run)"}
    return {**row, "measured": m}


def ask_row(row: dict, efficiency: Efficiency = Efficiency()) -> dict[str, float]:
    """The calculator's answer to a measured row, asked as the CLI would be (module docstring):
    metric name (the row's ``measured`` keys) → predicted value. The engine's prompt is the row's
    plus its chat template's tokens (:func:`chat_template_tokens`, T); the total tokens/s is counted
    as the benchmark counts it, without them: X_total · (I + O) / (I + T + O). ShareGPT rows' spread
    lengths stay inside ``vllm bench``'s sampler bounds (:func:`length_bounds`). A simulated row's latency is the
    statistic the row measured: the simulated median where its ``stat`` is ``median`` (a Poisson run's median TTFT
    sits well under its mean), else the mean; the steady state (``estimate``) has means only."""
    options = {k: v for k, v in row["options"].items() if k != "concurrency"}
    template = chat_template_tokens(row)
    client_share = 1.0
    if template:
        i_client, o_len = float(options["input_len"]), float(options["output_len"])
        options["input_len"] = int(options["input_len"]) + template
        client_share = (i_client + o_len) / (i_client + template + o_len)
    load = row["load"]
    efficiency = efficiency_for_engine(row.get("engine", ""), efficiency,
                                       api_server=through_api_server(row))
    if not chat_endpoint(row):  # the completions endpoint: its tokenizer thread takes requests in order
        efficiency = efficiency.model_copy(update={"api_server_final_share": 1.0})
    in_cv, out_cv = length_cv(row)
    n_req, conc = load.get("num_requests"), load.get("concurrency")
    if load["arrival"] == "closed" and not (n_req and conc and n_req <= CLOSED_RUN_CYCLES * conc):  # steady state
        rec = estimate_record({**options, "concurrency": load["concurrency"], "input_len_cv": in_cv,
                               "output_len_cv": out_cv}, efficiency)
        return {"ttft_s": rec["ttft_s"], "tpot_s": rec["tpot_s"], "e2e_s": rec["e2e_latency_s"],
                "output_tokens_per_s": rec["output_tokens_per_s"],
                "total_tokens_per_s": rec["total_tokens_per_s"] * client_share}
    if load["arrival"] == "closed":  # a short run: C clients from a synchronized start, all N counted
        sim = {"arrival": "closed", "concurrency": load["concurrency"]}
    elif load["arrival"] in ("burst", "static"):
        sim = {"arrival": "burst"}
    else:  # an open loop; with a concurrency, the benchmark client's cap (--request-rate R --max-concurrency C)
        cap = load.get("concurrency")
        sim = {"arrival": load["arrival"], "rate": load.get("rate"), "cv": load.get("cv"),
               **({"max_concurrency": cap} if isinstance(cap, int) and not isinstance(cap, bool) else {})}
    bounds = length_bounds(row, template) if (in_cv or out_cv) else None
    # a short closed run of spread lengths is one draw of N lengths: its expected value is asked for
    seeds = range(CLOSED_RUN_SEEDS) if load["arrival"] == "closed" and (in_cv or out_cv) else (0,)
    recs = [simulate_record({**options, **sim, "num_requests": load["num_requests"], "seed": seed,
                             "input_len_cv": in_cv, "output_len_cv": out_cv,
                             **({"length_bounds": bounds} if bounds else {})}, efficiency) for seed in seeds]

    def mean(key: str) -> float | None:  # None where the simulation has none (e.g. TPOT of 1-token outputs)
        values = [r[key] for r in recs]
        return None if any(v is None for v in values) else statistics.fmean(float(v) for v in values)
    total = mean("total_tokens_per_s")

    def latency(metric: str, key: str) -> float | None:  # the statistic the row measured: its median or its mean
        stat = (row.get("measured") or {}).get(metric)
        return mean(f"{key}_p50" if isinstance(stat, dict) and stat.get("stat") == "median" else f"{key}_mean")
    return {"ttft_s": latency("ttft_s", "ttft_s"), "tpot_s": latency("tpot_s", "tpot_s"),
            "e2e_s": latency("e2e_s", "e2e_latency_s"),
            "output_tokens_per_s": mean("output_tokens_per_s"),
            "total_tokens_per_s": None if total is None else total * client_share,
            "requests_per_s": mean("requests_per_s")}


@dataclass(frozen=True)
class Scored:
    """One measured metric of one row against the prediction and its band."""

    row_id: str
    regime: str
    metric: str
    measured: float
    predicted: float
    low: float
    high: float
    band_cell: str

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0

    @property
    def inside(self) -> bool:
        return self.low <= self.measured <= self.high

    def record(self) -> dict[str, Any]:
        return {"row": self.row_id, "regime": self.regime, "metric": self.metric, "measured": self.measured,
                "predicted": self.predicted, "error": self.error, "low": self.low, "high": self.high,
                "inside_band": self.inside, "band_cell": self.band_cell}


def row_api_server_share(row: dict, predicted: dict[str, float], efficiency: Efficiency = Efficiency()) -> float:
    """The API server's share of its time on the row's predicted load (:func:`ask_row`'s answer;
    :func:`calc.timing.bands.api_server_share`): predicted requests/s (output tokens/s over the
    output length for a closed loop) times the API server's time per request on the row's
    benchmark path (0 offline, :func:`efficiency_for_engine`)."""
    x = predicted.get("requests_per_s")
    if x is None:
        x = predicted["output_tokens_per_s"] / float(row["options"]["output_len"])
    t_api = api_server_request_time_s(model_type=get_model(row["options"]["model"]).model_type,
                                      efficiency=efficiency_for_engine(row.get("engine", ""), efficiency,
                                                                       api_server=through_api_server(row)))
    return float(api_server_share(x, t_api))


def row_band_key(row: dict, metric: str, condition: str = "engine") -> BandKey:
    """The band regime of a measured row's metric (:mod:`calc.timing.bands`); ``condition`` from
    :func:`row_api_server_share` (:func:`calc.timing.bands.load_condition`)."""
    options, load = row["options"], row["load"]
    family = gpu_family(get_gpu(options["gpu"]).architecture) if options.get("gpu") else "other"
    return BandKey(load_regime(load["arrival"], load.get("concurrency")), family,
                   get_model(options["model"]).moe is not None, metric_group(metric), condition)


def score_rows(rows: list[dict], efficiency: Efficiency = Efficiency()) -> list[Scored]:
    """Every scored metric of every row: measured, predicted, the band around the prediction."""
    out = []
    for row in map(read_as_run, rows):
        predicted = ask_row(row, efficiency)
        condition = load_condition(row_api_server_share(row, predicted, efficiency))
        regime = f"{row['load']['arrival']} {row['options'].get('gpu') or 'custom'}"
        for metric, m in row["measured"].items():
            if m.get("scored") and metric in predicted:
                p = float(predicted[metric])
                b = band_basis(row_band_key(row, metric, condition))
                lo, hi = band(p, b)
                out.append(Scored(str(row.get("id", "")), regime, metric, float(m["value"]), p, float(lo), float(hi),
                                  b.cell))
    return out


def error_summary(errors: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per group (and ``all``): n, median and 90th-percentile (nearest rank) |error|."""
    groups = {g: [abs(e) for e in v] for g, v in sorted(errors.items())}
    groups["all"] = [abs(e) for v in errors.values() for e in v]
    return {g: {"n": len(v), "median_abs_error": statistics.median(v),
                "p90_abs_error": sorted(v)[max(int(round(0.9 * len(v))) - 1, 0)]}
            for g, v in groups.items() if v}


def summary(scored: list[Scored]) -> dict[str, Any]:
    """Median and p90 |error| per metric group and overall, and the fraction inside the band."""
    groups: dict[str, list[float]] = {}
    for s in scored:
        groups.setdefault(metric_group(s.metric), []).append(s.error)
    out: dict[str, Any] = error_summary(groups)
    out["inside_band_fraction"] = (sum(s.inside for s in scored) / len(scored)) if scored else math.nan
    return out
