"""Hostile generators and the properties every input path must hold (shared by
tests/test_input_fuzz.py, a bounded CI run, and bench/fuzz.py, the long run).

Paths: URL parameters (pure sanitizer, and AppTest on every page), scenario files, config.json,
CLI argument vectors, ``--batch`` lines, the vLLM-command paste box, load-test traces and the planner's replica search (CSV / JSON lines, any line ending). Generators: inf/nan, huge integers, deep nesting,
long and non-ASCII strings, Markdown and HTML, plus valid values so accepted paths run too.
Properties: no exception escapes (no traceback, no exception element), every rejection names
its field in a short message, the other state is kept, accepted inputs give finite,
non-negative, consistent outputs (E2E ≥ TTFT, MFU and MBU in [0, 1]).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from calc.cli.main import main
from calc.spec.catalog import gpu_ids, model_config_json, model_ids
from calc.spec.hf_config import ConfigError, parse_config_text
from calc.spec.untrusted import InputError
from ui import controls as C
from ui.perf.controls import ALL as PERF_CONTROLS
from ui.planner.controls import PLANNER
from ui.disagg.controls import DISAGG
from ui.loadtest.controls import LOADTEST
from ui.prefixcache.controls import PC_RATE, PC_SIMULATE, REUSE
from ui.prefixcache.widgets import KIND_ELSEWHERE
from ui.speculative.controls import SPECULATIVE
from ui.speculative.inputs import INPUTS as SPECULATIVE_INPUTS

LINK = "`[click me](https://evil.example/phish)`"
PIXEL = "x` ![t](http://127.0.0.1:9/pixel.png) `"
MAX_MESSAGE = 700  # characters: a message about one field stays short, whatever the input
# Python's / pydantic's own wording of a number it could not take: a message must never carry it
INTERNAL_MESSAGES = ("Exceeds the limit", "int_max_str_digits", "exceeded maximum size", "OverflowError",
                     "could not convert", "invalid literal", "cannot convert float")

SPECIAL_TEXTS = ["inf", "-inf", "nan", "NaN", "Infinity", "1e309", "-1e309", "9" * 400, "9" * 5000, "", " ", "0",
                 "-1", "1e3", "0x10", "1_000", "１２", "٣", "true", "false", "null", "[]", "{}", "custom", LINK, PIXEL,
                 "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "`", "\\", "%00", "\x00", "a\nb",
                 "x" * 5000, "**bold** _i_ $x$ :red[x]", "www.evil.example", "a@b.co", "💥" * 50, "中文" * 30]

hostile_text = st.one_of(
    st.sampled_from(SPECIAL_TEXTS),
    st.integers(min_value=-10 ** 40, max_value=10 ** 40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=120),
    st.text(alphabet="[]()`!<>*_#|~$:\\&{}", max_size=40),
)

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10 ** 40, max_value=10 ** 40),
                         st.floats(allow_nan=True, allow_infinity=True), hostile_text)
json_values = st.recursive(json_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                 st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                           max_leaves=8)


def all_controls() -> tuple[C.Control, ...]:
    """Every URL control of every page (one per key): the shared ones, each page's own, and the inputs the
    load test, frontier and planner share with the speculative, prefix-cache and P/D pages."""
    every = (C.SHARED + C.PAGE + tuple(PERF_CONTROLS) + tuple(PLANNER) + tuple(SPECULATIVE_INPUTS) + SPECULATIVE
             + LOADTEST + REUSE + (PC_RATE, PC_SIMULATE, KIND_ELSEWHERE) + DISAGG)
    return tuple({c.key: c for c in every}.values())


def valid_text(ctl: C.Control) -> st.SearchStrategy[str]:
    """A value the control accepts, as URL text (so accepted paths are exercised too)."""
    if ctl.kind in ("select", "multi"):
        return st.sampled_from([str(o) for o in ctl.choices()] or [""])
    if ctl.kind == "toggle":
        return st.sampled_from(["true", "false"])
    if ctl.kind == "multi_int" or ctl.integer:
        return st.integers(int(ctl.lo), int(min(ctl.hi, 10 ** 6))).map(str)
    return st.floats(ctl.lo, ctl.hi).map(lambda v: f"{v:.4g}")


_STRATEGIES: dict[str, st.SearchStrategy[str]] = {}


def _value_strategy(ctl: C.Control) -> st.SearchStrategy[str]:
    """Hostile or valid text for one control (built once: strategy construction dominated the run)."""
    if ctl.key not in _STRATEGIES:
        _STRATEGIES[ctl.key] = st.one_of(hostile_text, valid_text(ctl))
    return _STRATEGIES[ctl.key]


@st.composite
def query_params(draw, controls: tuple[C.Control, ...] | None = None, max_keys: int = 6) -> dict[str, list[str]]:
    """A query string as parse_qs gives it: key → all values (repeated keys included)."""
    controls = controls or all_controls()
    keys = draw(st.lists(st.sampled_from(controls), max_size=max_keys, unique_by=lambda c: c.key))
    out: dict[str, list[str]] = {}
    for ctl in keys:
        n = draw(st.integers(1, 3)) if draw(st.booleans()) else 1
        out[ctl.key] = [draw(_value_strategy(ctl)) for _ in range(n)]
    if draw(st.booleans()):
        out[draw(st.text(min_size=1, max_size=20))] = [draw(hostile_text)]  # a key no control has
    return out


@st.composite
def valid_query_params(draw, controls: tuple[C.Control, ...] | None = None, max_keys: int = 6) -> dict[str, list[str]]:
    """A link of valid values only (one each): most get a browser's first view (ui.first_view), which a hostile
    value, reported by the sidebar, does not."""
    controls = controls or all_controls()
    keys = draw(st.lists(st.sampled_from(controls), max_size=max_keys, unique_by=lambda c: c.key))
    return {ctl.key: [draw(valid_text(ctl))] for ctl in keys}


# ----------------------------------------------------------------------------- pure sanitizer

def check_sanitize(params: dict[str, list[str]]) -> None:
    """Changes are valid canonical values or removals; issues name their key; idempotent."""
    controls = all_controls()
    changes, issues = C.sanitize_params(params, controls)
    by_key = {c.key: c for c in controls}
    for key, values in changes.items():
        assert key in by_key and key in params
        if values is not None:
            ctl = by_key[key]
            raw = values if ctl.kind in ("multi", "multi_int") else values[-1]
            if not (key == "model" and raw == C.CUSTOM_MODEL):
                ctl.parse(raw)  # accepted
    for issue in issues:
        assert issue.key in params
        if issue.kind == "invalid":
            assert issue.error is not None and str(issue.error).startswith(issue.key)
            assert len(str(issue.error)) < MAX_MESSAGE
            assert changes[issue.key] is None
    fixed = {k: v for k, v in params.items() if changes.get(k, v) is not None}
    fixed |= {k: v for k, v in changes.items() if v is not None}
    again, issues2 = C.sanitize_params(fixed, controls)
    assert again == {} and [i for i in issues2 if i.kind != "alias"] == [], (again, issues2)


# ----------------------------------------------------------------------------- scenario files

SCENARIO_KEYS = [c.key for c in C.SHARED]


@st.composite
def scenario_texts(draw) -> str | bytes:
    kind = draw(st.sampled_from(["controls", "controls", "doc", "raw", "deep"]))
    if kind == "raw":
        return draw(st.one_of(hostile_text, st.binary(max_size=200)))
    if kind == "deep":
        n = draw(st.integers(20, 5000))
        return "[" * n + ("]" * n if draw(st.booleans()) else "")
    doc = {"format": "llm-inference-calculator/scenario", "version": 1, "controls": {}}
    if kind == "doc":
        key = draw(st.sampled_from(["format", "version", "controls", "custom_config", "model"]))
        doc[key] = draw(json_values)
    ctls = draw(st.lists(st.sampled_from(SCENARIO_KEYS), max_size=4, unique=True))
    for key in ctls if isinstance(doc["controls"], dict) else ():
        doc["controls"][key] = draw(st.one_of(json_values, valid_text(C.BY_KEY[key])))
    text = json.dumps(doc, allow_nan=True)
    if draw(st.booleans()):  # integers beyond what JSON libraries like (the 400- and 5,000-digit cases)
        text = text.replace('"version": 1', '"version": ' + "9" * draw(st.sampled_from([1, 400, 5000])), 1)
    return text


def check_scenario(text) -> bool:
    """True when accepted; a rejection is an InputError naming a field, short."""
    from ui.state import build_scenario, load_scenario_text  # noqa: PLC0415

    try:
        values, arch, _ = load_scenario_text(text)
    except InputError as exc:
        assert exc.field and str(exc).startswith(exc.field.split(":")[0]) and len(str(exc)) < MAX_MESSAGE, str(exc)
        return False
    sc = build_scenario(values, custom_arch=arch)
    assert sc.context_tokens >= 16 and sc.concurrency >= 1
    return True


# ----------------------------------------------------------------------------- config.json

BASE_CONFIG = {k: v for k, v in model_config_json("meta-llama/Llama-3.1-8B").items() if not k.startswith("_")}
CONFIG_FIELDS = sorted(BASE_CONFIG) + ["_name", "_name_or_path", "head_dim", "sliding_window", "quantization_config"]


@st.composite
def config_texts(draw) -> str | bytes:
    kind = draw(st.sampled_from(["field", "field", "fields", "raw", "deep"]))
    if kind == "raw":
        return draw(st.one_of(hostile_text, st.binary(max_size=200)))
    if kind == "deep":
        n = draw(st.integers(20, 5000))
        return '{"model_type": "llama", "x": ' + "[" * n + "]" * n + "}"
    cfg = dict(BASE_CONFIG)
    for key in draw(st.lists(st.sampled_from(CONFIG_FIELDS), min_size=1, max_size=1 if kind == "field" else 4)):
        if draw(st.integers(0, 5)) == 0:
            cfg.pop(key, None)
        else:
            cfg[key] = draw(json_values)
    text = json.dumps(cfg, allow_nan=True)
    if draw(st.integers(0, 4)) == 0:
        text = text.replace('"hidden_size": 4096', '"hidden_size": ' + "9" * 5000, 1)
    return text


def check_config(text) -> bool:
    try:
        arch = parse_config_text(text)
    except ConfigError as exc:
        assert exc.field.startswith("config.json") and len(str(exc)) < MAX_MESSAGE, str(exc)
        return False
    assert arch.max_position_embeddings >= 16 and len(arch.name) <= 80
    assert not set(arch.name) & set("`[]<>!*#|$~\\:")
    return True


# ----------------------------------------------------------------------------- CLI

def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # --help
            rc = exc.code if isinstance(exc.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


FLAGS = {"--tensor-parallel-size": ["1", "2", "4", "8", "3", "0"], "--dtype": ["auto", "fp16", "bf16", "float32"],
         "--quantization": ["none", "fp8", "awq", "nf4"], "--kv-cache-dtype": ["auto", "fp8"],
         "--gpu-memory-utilization": ["0.9", "0.5", "1", "0"], "--block-size": ["16", "32", "7"],
         "--max-model-len": ["2048", "4096", "1"], "--max-num-seqs": ["1", "64", "256"],
         "--max-num-batched-tokens": ["512", "8192"], "--input-len": ["1", "512", "2048"],
         "--output-len": ["1", "128"], "--concurrency": ["1", "16", "max", "1000"], "--replicas": ["1", "2", "64"],
         "--rate": ["0.5", "20", "1e6", "0", "-1", "inf", "nan"],  # estimate's open loop (calc.traffic.queueing)
         "--vllm-command": ["vllm serve meta-llama/Llama-3.1-8B -tp 2 --max-num-seqs 64 --enforce-eager",
                            "vllm serve Qwen/Qwen3-8B --no-enable-prefix-caching --speculative-config "
                            "'{\"method\": \"ngram\", \"num_speculative_tokens\": 2}'",
                            "vllm serve Qwen/Qwen3-8B --max-model-len=1 --speculative-config '{\"method\"'",
                            "docker run vllm/vllm-openai --model x -tp"]}


SIM_FLAGS = {"--rate": ["1", "20"], "--cv": ["0.5", "2"], "--think-time-s": ["0", "0.5"], "--seed": ["0", "7"],
             "--ttft-slo-ms": ["100"], "--tpot-slo-ms": ["20"], "--concurrency": ["1", "8"],
             "--arrival": ["poisson", "closed", "burst"]}


PLAN_FLAGS = {"--rate": ["1", "40", "100000", "1e6"], "--input-len": ["1", "1000", "65536"],
              "--output-len": ["1", "200", "65536"], "--ttft-slo-ms": ["100", "600000"], "--tpot-slo-ms": ["10", "10000"],
              "--top": ["1", "50", "1000"], "--max-gpus": ["1", "8", "1000000"], "--budget-usd-per-hour": ["1", "1e9"],
              "--max-model-len": ["131072", "2"], "--gpus": ["h100-sxm", "a100-80gb,h100-sxm"],
              "--price": ["h100-sxm=2.49", "=1", "x=y"], "--sort": ["cost", "gpus", "throughput"]}


@st.composite
def cli_argvs(draw) -> list[str]:
    command = draw(st.sampled_from(["estimate", "estimate", "memory", "simulate", "plan"]))
    if command == "plan":  # the mean (closed loop, no simulation): argument handling and the grid's loops
        values = {f: draw(st.one_of(st.sampled_from(v), hostile_text)) if draw(st.integers(0, 3)) == 0
                  else draw(st.sampled_from(v)) for f, v in PLAN_FLAGS.items()}
        argv = ["plan", "--model", draw(st.sampled_from(model_ids()[:3]))]
        for flag in ("--rate", "--input-len", "--output-len", "--ttft-slo-ms", "--tpot-slo-ms"):
            argv += [flag, values[flag]]
        for flag in draw(st.lists(st.sampled_from(sorted(set(PLAN_FLAGS) - set(argv))), max_size=3, unique=True)):
            argv += [flag, values[flag]]
        return argv + ["--format", "json"]
    if command == "simulate":  # few requests: the argument handling is under test, not the simulator
        argv = ["simulate", "--model", draw(st.sampled_from(model_ids()[:3])), "--gpu", "h100-sxm",
                "--input-len", "256", "--output-len", "16", "--num-requests", "20"]
        for flag in draw(st.lists(st.sampled_from(sorted(SIM_FLAGS)), min_size=1, max_size=4, unique=True)):
            argv += [flag, draw(st.one_of(st.sampled_from(SIM_FLAGS[flag]), hostile_text))]
        return argv + ["--format", "json"]
    argv = [command, "--model", draw(st.one_of(st.sampled_from(model_ids()), hostile_text)),
            "--gpu", draw(st.one_of(st.sampled_from(gpu_ids()), hostile_text))]
    if command == "estimate":
        argv += ["--input-len", draw(st.sampled_from(["256", "1024"])), "--output-len", "64"]
    for flag in draw(st.lists(st.sampled_from(sorted(FLAGS)), max_size=4, unique=True)):
        if command == "memory" and flag in ("--input-len", "--output-len", "--replicas", "--rate"):
            continue
        argv += [flag, draw(st.one_of(st.sampled_from(FLAGS[flag]), hostile_text))]
    argv += ["--format", "json"]
    return argv


def check_estimate_record(d: dict) -> None:
    for key in ("ttft_s", "tpot_s", "itl_s", "e2e_latency_s", "output_tokens_per_s", "total_tokens_per_s",
                "requests_per_s", "mfu", "mbu", "weights_bytes", "kv_pool_bytes"):
        v = d[key]
        if d.get("fits") is False and (v is None or key == "kv_pool_bytes"):
            continue  # does not fit: no latency; the KV pool is the (negative) shortfall (data, not an error)
        if key in ("tpot_s", "itl_s") and v is None and d.get("output_len") == 1:
            continue  # one output token: no time per output token after the first (undefined, not 0)
        assert v is not None and math.isfinite(v) and v >= 0, (key, v, d)
    if d.get("fits") is not False:
        assert d["e2e_latency_s"] >= d["ttft_s"] - 1e-12, d
        assert 0 <= d["mfu"] <= 1 + 1e-9 and 0 <= d["mbu"] <= 1 + 1e-9, d


def check_cli(argv: list[str]) -> int:
    rc, out, err = run_cli(argv)
    assert rc in (0, 2), (argv, rc, err)
    assert "Traceback" not in out + err
    if rc == 2:  # one error line (after any "note:" lines about old spellings)
        lines = [x for x in err.splitlines() if not x.startswith("note: ")]
        assert len(lines) == 1 and lines[0].startswith("error: ") and len(lines[0]) < 2000, err
        assert not any(m in err for m in INTERNAL_MESSAGES), err
    elif argv[0] == "estimate":
        check_estimate_record(json.loads(out))
    elif argv[0] == "plan":
        rows = json.loads(out)
        assert isinstance(rows, list) and all(r["meets_slo"] and r["replicas"] >= 1 for r in rows), rows[:1]
    elif argv[0] == "simulate":
        d = json.loads(out)
        assert d["num_requests"] == 20 and d["truncated"] == (d["finished_requests"] < 20), d
        assert ("note: the simulation was cut" in err) == d["truncated"], err  # a partial run always says so
    else:
        d = json.loads(out)
        assert all(d[k] >= 0 for k in ("weights_bytes", "kv_bytes_per_token", "usable_memory_bytes"))
    return rc


GOOD_LINE = {"model": "meta-llama/Llama-2-7b-hf", "gpu": "a100-80gb", "input_len": 512, "output_len": 64}
BATCH_KEYS = ["model", "gpu", "tensor_parallel_size", "dtype", "quantization", "kv_cache_dtype", "input_len",
              "output_len", "concurrency", "max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill",
              "gpu_memory_utilization", "block_size", "max_model_len", "replicas"]
GOOD_VALUES = {"tensor_parallel_size": [1, 2, 4, 8], "concurrency": [1, 4, 16, 64, 256, "max"], "replicas": [1, 2, 4],
               "input_len": [1, 128, 2048], "output_len": [1, 16, 256], "max_num_seqs": [1, 8, 256],
               "gpu_memory_utilization": [0.5, 0.9, 0.95], "enable_chunked_prefill": [True, False],
               "kv_cache_dtype": ["auto", "fp8"], "quantization": ["none", "fp8", "awq"], "max_model_len": [4096],
               "model": list(model_ids()), "gpu": list(gpu_ids())}


HUGE_LITERALS = ["9" * 31, "9" * 400, "1234" * 1250, "-" + "9" * 5000, "1e400", "-1e400"]


def _with_huge_number(draw, line: dict, keys: list[str]) -> str:
    """The line as JSON, sometimes with one value replaced by a number literal no float or int
    conversion survives (400 / 5,000 digits, 1e400): the field must name itself, no internal message."""
    text = json.dumps(line, allow_nan=True).replace("\n", " ")
    if keys and draw(st.integers(0, 3)) == 0:
        key = draw(st.sampled_from(keys))
        line[key] = "@HUGE@"
        text = json.dumps(line, allow_nan=True).replace("\n", " ").replace('"@HUGE@"', draw(st.sampled_from(HUGE_LITERALS)))
    return text


@st.composite
def batch_lines(draw) -> str:
    if draw(st.integers(0, 6)) == 0:
        return draw(st.one_of(hostile_text, st.just("[" * 3000))).replace("\n", " ")  # one line
    line = dict(GOOD_LINE)
    for key in draw(st.lists(st.sampled_from(BATCH_KEYS), max_size=4, unique=True)):
        good = GOOD_VALUES.get(key)
        line[key] = draw(st.sampled_from(good)) if good and draw(st.booleans()) else draw(json_values)
    return _with_huge_number(draw, line, BATCH_KEYS)


SIM_LINE = {"model": "meta-llama/Llama-2-7b-hf", "gpu": "a100-80gb", "input_len": 128, "output_len": 16, "rate": 5,
            "num_requests": 20}
SIM_KEYS = ["rate", "concurrency", "arrival", "cv", "num_requests", "seed", "ttft_slo_ms", "tpot_slo_ms",
            "think_time_s", "input_len", "max_num_seqs"]
SIM_GOOD = {"rate": [1, 20], "concurrency": [1, 8], "arrival": ["poisson", "gamma", "closed", "burst"], "cv": [0.5, 2],
            "num_requests": [1, 30], "seed": [0, 7], "ttft_slo_ms": [100, 5000], "tpot_slo_ms": [20],
            "think_time_s": [0, 0.5], "input_len": [64, 512], "max_num_seqs": [4, 64]}


@st.composite
def simulate_batch_lines(draw) -> str:
    """A ``simulate --batch`` line: the load options hostile (huge numbers too), few requests each."""
    line = dict(SIM_LINE)
    for key in draw(st.lists(st.sampled_from(SIM_KEYS), max_size=3, unique=True)):
        line[key] = draw(st.sampled_from(SIM_GOOD[key])) if draw(st.booleans()) else draw(json_values)
    if isinstance(line.get("num_requests"), int) and not isinstance(line["num_requests"], bool):
        line["num_requests"] = min(line["num_requests"], 50)  # bounded for CI: the simulation itself is not under test
    return _with_huge_number(draw, line, SIM_KEYS)


def check_batch(lines: list[str], command: str = "estimate") -> tuple[int, int]:
    """Every line gives one record or one error line; the valid ones are consistent; no error
    record carries Python's (or pydantic's) internal wording."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "b.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        rc, out, err = run_cli([command, "--batch", str(path)])
    assert rc in (0, 2) and "Traceback" not in out + err, err
    records = [json.loads(x) for x in out.splitlines()]
    nonblank = [x for x in lines if x.strip()]
    assert len(records) == len(nonblank), (len(records), len(nonblank))
    ok = 0
    for r in records:
        if "error" in r:
            assert isinstance(r["line"], int) and "internal error" not in r["error"], r
            assert len(r["error"]) < 2000 and not any(m in r["error"] for m in INTERNAL_MESSAGES), r
        elif command == "estimate":
            check_estimate_record(r)
            ok += 1
        else:
            assert r["num_requests"] >= 1 and all(r[k] is None or r[k] >= 0 for k in ("ttft_s_p99", "tpot_s_p99")), r
            ok += 1
    return ok, len(records) - ok


# ----------------------------------------------------------------------------- vLLM command paste box

NUMBER_TEXTS = ["inf", "-inf", "+inf", "nan", "1e309", "-1e309", "1e309k", "infK", "9" * 400, "9" * 5000, "1e18",
                "-1", "0", "0.5", "2", "8", "16", "32k", "4K", "1m", "1G", "1.5", "0x10", "1_000", "１２"]


GOOD_FLAG_VALUES = {"-tp": ["1", "2"], "--tensor-parallel-size": ["1", "4"], "--block-size": ["16", "32"],
                    "--max-model-len": ["4096", "8k"], "--max-num-seqs": ["64", "256"],
                    "--max-num-batched-tokens": ["2048", "8K"], "--gpu-memory-utilization": ["0.9", "0.85"],
                    "--dtype": ["auto", "bf16"], "--kv-cache-dtype": ["auto", "fp8"],
                    "--speculative-config": ['{"method": "eagle3", "num_speculative_tokens": 3}',
                                             '{"method": "ngram", "num_speculative_tokens": 12}',
                                             '{"method": "draft_model", "model": "x/y", "num_speculative_tokens": 2}',
                                             '{"num_speculative_tokens": 2}', '{"method": "mtp"', '[]'],
                    "--enable-prefix-caching": ["true", "false", "maybe"]}


@st.composite
def vllm_commands(draw) -> str:
    """A pasted ``vllm serve`` line: numeric flags (short and long spellings, ``=`` or a space) with
    hostile or valid values, other flags, a catalog model or hostile text."""
    from calc.spec.vllm_command import FLAGS as VLLM_FLAGS  # noqa: PLC0415

    numeric = sorted(f for f, (_, kind) in VLLM_FLAGS.items() if kind in ("int", "float"))
    head = draw(st.sampled_from(["vllm serve", "python -m vllm.entrypoints.openai.api_server --model",
                                 "docker run --gpus all vllm/vllm-openai:latest --model"]))
    catalog = st.sampled_from(list(model_ids())[:5])
    tuned = st.builds(lambda m, suffix: m + suffix, st.sampled_from(list(model_ids())),  # -Instruct … checkpoints
                      st.sampled_from(["-Instruct", "-Chat", "-it", "-Instruct-2507", "-chat-hf", "-FP8", "-Instruct-x"]))
    model = draw(st.one_of(catalog, catalog, tuned, hostile_text.map(lambda x: x.replace("'", ""))))
    words = [head, "'" + model + "'"]
    for flag in draw(st.lists(st.sampled_from(numeric + ["--dtype", "--enforce-eager", "--kv-cache-dtype",
                                                         "--speculative-config", "--enable-prefix-caching"]),
                              max_size=5)):
        if draw(st.booleans()):  # a value the flag takes (so whole commands get applied too)
            value = draw(st.sampled_from(GOOD_FLAG_VALUES.get(flag, ["auto"])))
        else:
            value = draw(st.one_of(st.sampled_from(NUMBER_TEXTS), hostile_text.map(lambda x: x.replace("'", ""))))
        words.append(f"{flag}='{value}'" if draw(st.booleans()) else f"{flag} '{value}'")
    return " ".join(words)


def check_vllm_command(text: str) -> bool:
    """The paste box's Apply: values every control accepts, or a short message per problem naming
    its flag (a numeric flag with its allowed range); only 'command: …' may be raised."""
    from ui.vllm_paste import FLAG_OF, REFUSED, command_to_values, control_of  # noqa: PLC0415

    try:
        values, ignored, errors = command_to_values(text)
    except ValueError as exc:
        assert str(exc).startswith("command:") and len(str(exc)) < MAX_MESSAGE, str(exc)
        return False
    for key, value in values.items():
        if key not in ("model", "chunked_prefill", REFUSED):
            control_of(key).parse(value)
    for e in errors:
        assert len(e) < MAX_MESSAGE and (e.startswith(("model:", "--")) or e.split(":")[0] in FLAG_OF), e
        if e.startswith("-") and ": got " in e:  # a numeric flag's message says its range
            assert e.split(":")[0].split(" ")[0] in FLAG_OF.values(), e
            assert not e.endswith(("allowed a whole number", "allowed a number")), e
    return not errors


# ----------------------------------------------------------------------------- load-test traces

TRACE_NUMBERS = ["0", "1", "100", "2048", "0.5", "1.5", "-3", "1e9", "1e400", "-1e400", "inf", "nan", "9" * 31,
                 "9" * 400, "1234" * 1250, "10000001", "", " ", "x"]


@st.composite
def trace_texts(draw) -> str | bytes:
    """A trace upload: CSV or JSON lines, LF / CRLF / CR line ends (mixed too), valid and hostile values."""
    kind = draw(st.sampled_from(["csv", "csv", "jsonl", "jsonl", "raw"]))
    if kind == "raw":
        return draw(st.one_of(hostile_text, st.binary(max_size=200)))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    good = st.integers(1, 4096).map(str)
    rows = [[draw(good) for _ in range(3)] for _ in range(draw(st.integers(0, 5)))]
    if rows and draw(st.booleans()):  # one hostile value (else the trace is valid: the accepted path runs too)
        rows[draw(st.integers(0, len(rows) - 1))][draw(st.integers(0, 2))] = draw(
            st.one_of(st.sampled_from(TRACE_NUMBERS), hostile_text))
    if kind == "csv":
        header = draw(st.sampled_from(["arrival_s,input_len,output_len", "timestamp, prompt_len ,output_tokens",
                                       "arrival_s,input_len"]))
        lines = [header] + [",".join(r) for r in rows]
    else:
        lines = []
        for r in rows:
            fields = {k: draw(st.sampled_from(["raw", "str"])) for k in ("arrival_s", "input_len", "output_len")}
            body = ", ".join(f'"{k}": ' + (v if how == "raw" and v and v.strip() and "\n" not in v else json.dumps(v))
                             for (k, how), v in zip(fields.items(), r))
            lines.append("{" + body + "}")
    if eol == "mixed":
        text = "".join(line + draw(st.sampled_from(["\n", "\r\n", "\r"])) for line in lines)
    else:
        text = eol.join(lines) + (eol if draw(st.booleans()) else "")
    return text.encode("utf-8", "surrogatepass") if draw(st.booleans()) else text


def check_trace(text) -> bool:
    """A trace parses into a consistent workload or is refused with a WorkloadError naming the trace
    (and the line), short; no other exception (csv.Error, int-digit limit, OverflowError) escapes."""
    from calc.traffic.workload import MAX_TOKENS, WorkloadError, parse_trace  # noqa: PLC0415

    try:
        w = parse_trace(text, max_model_len=10_000)
    except WorkloadError as exc:
        assert str(exc).startswith("trace") and len(str(exc)) < MAX_MESSAGE, str(exc)
        return False
    assert w.num_requests >= 1 and (w.arrival_s >= 0).all() and (w.arrival_s[1:] >= w.arrival_s[:-1]).all()
    assert (w.input_len >= 1).all() and (w.output_len >= 1).all() and (w.input_len + w.output_len <= 10_000).all()
    assert w.input_len.max() <= MAX_TOKENS
    return True


# ----------------------------------------------------------------------------- planner replica search

@st.composite
def replica_searches(draw) -> tuple[int, int, int, int | None]:
    """(lo, hi, least count that meets, first count the simulation cannot judge or None): counts
    up to 10^7 (the old search simulated every one of them)."""
    lo = draw(st.one_of(st.integers(1, 50), st.integers(1, 10 ** 7)))
    hi = draw(st.integers(lo, 2 * lo))
    need = draw(st.one_of(st.just(lo), st.integers(lo, hi + 1), st.integers(lo, lo + 3)))
    unjudged = draw(st.one_of(st.none(), st.none(), st.integers(lo, hi + 1)))
    return lo, hi, need, unjudged


def check_replica_search(case) -> bool:
    """The planner's search: at most MAX_EVALS_PER_OPTION simulations whatever the counts; its
    answer meets; it is the least count (the old linear answer) when it says exact."""
    from calc.plan.percentiles import MAX_EVALS_PER_OPTION, least_replicas  # noqa: PLC0415

    lo, hi, need, unjudged = case
    calls: list[int] = []

    def meets(n: int) -> bool | None:
        calls.append(n)
        assert lo <= n <= hi, (n, lo, hi)
        return None if unjudged is not None and n >= unjudged else n >= need

    n, how = least_replicas(meets, lo, hi)
    assert len(calls) <= MAX_EVALS_PER_OPTION, len(calls)
    if how == "exact":
        assert n == max(need, lo) and (unjudged is None or n < unjudged), (n, case)
    elif how == "upper_bound":
        assert n >= need and meets(n), (n, case)
    elif how == "miss":
        assert n is None and need > hi and (unjudged is None or unjudged > hi), case
    else:
        assert how == "unknown" and n is None and unjudged is not None, case
    if unjudged is None and hi - lo < 2 ** (MAX_EVALS_PER_OPTION - 2):  # small ranges: always the exact answer
        assert how in ("exact", "miss"), (how, case)
    return how == "exact"


# ----------------------------------------------------------------------------- pages (AppTest)

def check_page(query: dict[str, list[str]], page: str | None, keep_gpu: str = "h100-sxm") -> None:
    """A page opened with this query: no exception, each warning names a field, a valid
    ``gpu`` given beside the hostile values is kept, the sidebar and the page still draw."""
    from apptest_helpers import unescape  # noqa: PLC0415
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    from conftest import APP  # noqa: PLC0415

    at = AppTest.from_file(APP, default_timeout=60)
    query = {k: v for k, v in query.items() if k != "gpu"} | {"gpu": [keep_gpu]}
    for key, values in query.items():
        at.query_params[key] = values if len(values) > 1 else values[0]
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="gpu").value == keep_gpu  # the other state is kept
    keys = set(query) | {"lang"}
    for w in at.warning:
        text = unescape(w.value)
        if text.startswith(("URL parameter", "网址参数")):
            named = re.match(r"(URL parameter |网址参数 )([^ =]+)", text).group(2)
            assert named in keys, (named, text)
            assert len(text) < MAX_MESSAGE + 400, text


def check_first_view(query: dict[str, list[str]], page: str) -> bool:
    """The same link opened in a browser's session (ui.first_view): no exception in the first view or
    after its button is pressed; where there was a first view, its chart is the whole page's first chart
    and the whole page after the press is the page a plain session gets (its charts, Markdown and
    warnings). Returns whether the link got a first view (a hostile value gets the whole page at once)."""
    from apptest_helpers import open_page, plotly_specs as charts  # noqa: PLC0415
    from ui import first_view  # noqa: PLC0415

    link = {key: values if len(values) > 1 else values[0] for key, values in query.items()}
    plain = open_page(page, link)
    assert not plain.exception, [e.value for e in plain.exception]
    browser, first_view.from_browser = first_view.from_browser, lambda: True
    try:
        at = open_page(page, link)
        assert not at.exception, [e.value for e in at.exception]
        button = f"{first_view.KEY}_button"
        if button not in [b.key for b in at.button]:
            return False
        first = charts(at)
        assert len(first) <= 1 and first == charts(plain)[:len(first)]
        at.button(key=button).click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert button not in [b.key for b in at.button]
        assert charts(at) == charts(plain)
        assert [m.value for m in at.main.markdown] == [m.value for m in plain.main.markdown]
        assert sorted(w.value for w in at.warning) == sorted(w.value for w in plain.warning)
        return True
    finally:
        first_view.from_browser = browser
