"""Measured benchmark results a user has, read into one row format (untrusted input).

Three formats are accepted, told apart by their content:

* the JSON file ``vllm bench serve --save-result`` writes (``completed``, ``total_input_tokens``,
  ``mean_ttft_ms``, ...; per-request ``input_lens``/``output_lens`` where kept). It has no GPU or
  tensor-parallel fields: the caller's scenario supplies them (and the model if ``model_id`` is
  not a catalog model);
* the summary block ``vllm bench serve`` prints ("Successful requests: 100", "Mean TTFT (ms): 59.01",
  "Output token throughput (tok/s): 132.86", ...). It names no model either;
* rows of ``bench/data/vllm_benchmarks.jsonl`` (one JSON object per line, or one object).

Every format becomes rows of the jsonl form: ``id``, ``engine``, ``bench_mode``, ``dataset``,
``options`` (the CLI's snake_case options), ``load`` (``arrival`` closed / burst / static /
poisson, ``concurrency``, ``num_requests``, ``rate``), ``measured`` (metric → ``{"value", "scored"}``)
and, where per-request lengths were kept, ``length_cv`` (their coefficient of variation). A file
that cannot be used raises :class:`ResultsError` naming the file and what is missing.

>>> rows = parse_results("Successful requests: 10\\nMaximum request concurrency: 2\\n"
...                      "Total input tokens: 1000\\nTotal generated tokens: 500\\nMean TTFT (ms): 50\\n",
...                      name="out.txt", scenario={"model": "Qwen/Qwen3-8B", "gpu": "h100-sxm"})
>>> rows[0]["options"]["input_len"], rows[0]["load"], rows[0]["measured"]["ttft_s"]["value"]
(100, {'arrival': 'closed', 'concurrency': 2, 'num_requests': 10}, 0.05)
"""

from __future__ import annotations

import math
import re
from typing import Any

from calc.spec.untrusted import InputError, json_type, load_json, quote

MAX_RESULT_BYTES = 64 * 2**20  # a save-result file keeps per-request lists: 10,000 requests ≈ a few MB
MAX_ROWS = 10_000
ARRIVALS = ("closed", "burst", "static", "poisson", "gamma")
VLLM_SERVE_ENGINE = "vLLM (vllm bench serve result)"

# The save-result JSON's fields → the calculator's metric and the factor to SI (ms → s).
SAVE_RESULT_METRICS = {"mean_ttft_ms": ("ttft_s", 1e-3), "mean_tpot_ms": ("tpot_s", 1e-3),
                       "mean_e2el_ms": ("e2e_s", 1e-3), "output_throughput": ("output_tokens_per_s", 1.0),
                       "total_token_throughput": ("total_tokens_per_s", 1.0)}
# The printed summary's labels (lower case, unit in brackets kept) → the save-result field.
SUMMARY_LABELS = {
    "successful requests": "completed", "benchmark duration (s)": "duration",
    "total input tokens": "total_input_tokens", "total generated tokens": "total_output_tokens",
    "request throughput (req/s)": "request_throughput", "output token throughput (tok/s)": "output_throughput",
    "total token throughput (tok/s)": "total_token_throughput", "mean ttft (ms)": "mean_ttft_ms",
    "mean tpot (ms)": "mean_tpot_ms", "mean itl (ms)": "mean_itl_ms", "mean e2el (ms)": "mean_e2el_ms",
    "maximum request concurrency": "max_concurrency", "max request concurrency": "max_concurrency",
    "traffic request rate": "request_rate", "request rate configured (rps)": "request_rate",
}
SCENARIO_KEYS = ("model", "gpu", "gpu_spec", "tensor_parallel_size", "dtype", "quantization", "kv_cache_dtype",
                 "max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill", "gpu_memory_utilization",
                 "block_size", "max_model_len", "disable_custom_all_reduce", "vllm_version")


class ResultsError(ValueError):
    """A result file that cannot be scored: the message names the file and what is missing."""


def _number(doc: dict, key: str, name: str) -> float | None:
    v = doc.get(key)
    if v is None:
        return None
    if isinstance(v, str) and v.strip().lower() in ("inf", "infinity"):
        return math.inf
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ResultsError(f"{name}: {key} is {json_type(v)}, expected a number")
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        raise ResultsError(f"{name}: {key} is {quote(v)}, expected a number") from None
    if math.isnan(f) or f < 0:
        raise ResultsError(f"{name}: {key} is {quote(v)}, expected a number >= 0")
    return f


def _spread(values: Any) -> tuple[float, float] | None:
    """(mean, coefficient of variation) of a per-request length list, None if it is not one."""
    if not isinstance(values, list) or not values or len(values) > 10 * MAX_ROWS * 100:
        return None
    xs = [float(x) for x in values if isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0]
    if len(xs) != len(values):
        return None
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    return mean, (math.sqrt(var) / mean if mean > 0 else 0.0)


def from_save_result(doc: dict, *, name: str, scenario: dict[str, Any]) -> dict[str, Any]:
    """One row from a ``vllm bench serve --save-result`` JSON object (or the summary's fields)."""
    completed = _number(doc, "completed", name)
    if not completed:
        raise ResultsError(f"{name}: no 'completed' requests (the number of successful requests is needed)")
    lengths = {}
    for side, total_key, list_key in (("input", "total_input_tokens", "input_lens"),
                                      ("output", "total_output_tokens", "output_lens")):
        spread = _spread(doc.get(list_key))
        total = _number(doc, total_key, name)
        if spread is not None:
            lengths[side] = spread
        elif total:
            lengths[side] = (total / completed, None)
        else:
            raise ResultsError(f"{name}: missing '{total_key}' (or '{list_key}'): the {side} length is needed")
    measured = {}
    for key, (metric, scale) in SAVE_RESULT_METRICS.items():
        v = _number(doc, key, name)
        if v is not None and v > 0 and math.isfinite(v):
            measured[metric] = {"value": v * scale, "scored": True}
    if not measured:
        raise ResultsError(f"{name}: no measured metric: expected at least one of "
                           + ", ".join(repr(k) for k in SAVE_RESULT_METRICS))
    rate = _number(doc, "request_rate", name)
    conc = _number(doc, "max_concurrency", name)
    n = int(completed)
    if rate is not None and math.isfinite(rate) and rate > 0:  # with a max concurrency: the client's cap
        load = {"arrival": "poisson", "rate": rate, "num_requests": n, **({"concurrency": int(conc)} if conc else {})}
        burstiness = _number(doc, "burstiness", name)
        if burstiness and burstiness != 1.0:  # vLLM's gamma arrivals of shape `burstiness`
            load = {**load, "arrival": "gamma", "cv": 1.0 / math.sqrt(burstiness)}
    elif conc:
        load = {"arrival": "closed", "concurrency": int(conc), "num_requests": n}
    else:
        load = {"arrival": "burst", "num_requests": n}
    model = scenario.get("model") or doc.get("model_id")
    if not model or not isinstance(model, str):
        raise ResultsError(f"{name}: no model: the file names none ('model_id'); pass --model")
    if not scenario.get("gpu") and not scenario.get("gpu_spec"):
        raise ResultsError(f"{name}: no GPU: result files do not name one; pass --gpu (and --tensor-parallel-size)")
    options = {k: v for k, v in scenario.items() if k in SCENARIO_KEYS and v is not None}
    options |= {"model": model, "input_len": max(1, round(lengths["input"][0])),
                "output_len": max(1, round(lengths["output"][0]))}
    row = {"id": name, "engine": VLLM_SERVE_ENGINE, "bench_mode": "vllm bench serve", "dataset": "",
           "options": options, "load": load, "measured": measured, "confidence": "user"}
    cvs = {side: cv for side, (_, cv) in lengths.items() if cv is not None}
    if cvs:
        row["length_cv"] = cvs
    return row


_SUMMARY_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 /()_.-]*?)\s*:\s*(\S+)\s*$")


def parse_summary(text: str, *, name: str) -> dict[str, Any]:
    """The fields of a printed ``vllm bench serve`` summary block, as the save-result JSON names them."""
    doc: dict[str, Any] = {}
    for line in text.splitlines():
        m = _SUMMARY_LINE.match(line)
        if m and m.group(1).strip().lower() in SUMMARY_LABELS:
            value = m.group(2)
            doc[SUMMARY_LABELS[m.group(1).strip().lower()]] = None if value.lower() == "none" else value
    if not doc:
        raise ResultsError(f"{name}: no 'vllm bench serve' summary lines found (e.g. 'Successful requests: 100', "
                           "'Mean TTFT (ms): 59.0')")
    return doc


def _check_row(row: Any, *, name: str) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise ResultsError(f"{name}: expected a JSON object, got {json_type(row)}")
    missing = [k for k in ("options", "load", "measured") if not isinstance(row.get(k), dict)]
    if missing:
        raise ResultsError(f"{name}: a benchmark row without {', '.join(repr(k) for k in missing)}")
    load = row["load"]
    if load.get("arrival") not in ARRIVALS:
        raise ResultsError(f"{name}: a benchmark row whose load 'arrival' is {quote(load.get('arrival'))}, "
                           f"expected one of {', '.join(ARRIVALS)}")
    needed = "concurrency" if load["arrival"] == "closed" else "num_requests"
    count = load.get(needed)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 100_000:
        raise ResultsError(f"{name}: a benchmark row whose load has no usable '{needed}' (a whole number 1 - 100,000)")
    if load["arrival"] in ("poisson", "gamma"):
        _number(load, "rate", name)
    for metric, m in row["measured"].items():
        value = m.get("value") if isinstance(m, dict) else None
        if m.get("scored") if isinstance(m, dict) else False:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ResultsError(f"{name}: measured {quote(metric)} has value {quote(value)}, expected a number > 0")
    return row


def parse_results(data: str | bytes, *, name: str, scenario: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows (module docstring) from the text of a result file in any of the three formats;
    ``scenario``: the options the file lacks (gpu, tensor_parallel_size, model, ...)."""
    scenario = scenario or {}
    if len(data) > MAX_RESULT_BYTES:
        raise ResultsError(f"{name}: larger than {MAX_RESULT_BYTES // 2**20} MiB")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ResultsError(f"{name}: not UTF-8 text") from None
    text = data.strip()
    if not text:
        raise ResultsError(f"{name}: empty")
    if text.startswith("["):
        raise ResultsError(f"{name}: a JSON list; expected a JSON object (a --save-result file), JSON lines of "
                           "benchmark rows, or the printed summary")
    if text.startswith("{"):
        try:
            doc = load_json(text, what=name, max_bytes=MAX_RESULT_BYTES)
        except InputError:
            doc = None  # several JSON lines, or broken: tried line by line below
        if isinstance(doc, dict):
            if "measured" in doc or "options" in doc:
                return [_check_row(doc, name=name)]
            return [from_save_result(doc, name=name, scenario=scenario)]
        rows = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                where = f"{name} line {lineno}"
                try:
                    rows.append(_check_row(load_json(line, what=where, max_bytes=MAX_RESULT_BYTES), name=where))
                except InputError as exc:
                    raise ResultsError(str(exc)) from None
                if len(rows) > MAX_ROWS:
                    raise ResultsError(f"{name}: more than {MAX_ROWS:,} rows")
        return rows
    return [from_save_result(parse_summary(text, name=name), name=name, scenario=scenario)]
