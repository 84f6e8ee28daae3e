"""``python -m calc estimate``: closed-loop TTFT / TPOT / throughput with vLLM's flag names, one
scenario from flags or many from ``--batch FILE`` (one JSON object of snake_case options per
line in, one JSON result per line out). ``--rate R`` adds the open loop at R requests/s
(Poisson; :func:`calc.traffic.queueing.open_loop`: mean and P95 TTFT, TPOT) beside the closed loop."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from pydantic import ValidationError

from calc.spec.catalog import CatalogError, get_model
from calc.timing.estimate import estimate
from calc.spec.hf_config import ConfigError
from calc.spec.inputs import Efficiency, ServingConfig, describe_validation_error
from calc.cli.speculative import add_speculative_args, speculative_drafter, speculative_fields, speculative_option
from calc.spec.untrusted import InputError, json_type, load_json, quote
from calc.cli.args import (UsageError, _add_engine_args, _concurrency, _dtype, _number, _positive_int, add_vllm_command_arg,
                           add_efficiency_arg, check_layout, check_tensor_parallel, layout_record, load_efficiency,
                           option_number, resolve_gpu, spelling_notes)
from calc.cli.report import add_bands, does_not_fit_record, print_table
from calc.timing.bands import api_server_share, gpu_family, load_condition
from calc.traffic.queueing import closed_loop_percentile_s, near_capacity, open_loop
from calc.traffic.workload import open_loop_lengths
from calc.cli import disaggregation
from calc.cli.disaggregation import add_disaggregation_args
from calc.cli.prefix import PREFIX_KEYS, add_prefix_args, prefix_record, reuse_from_options
from calc.traffic.prefix_cache import (check_reuse, conversations_in_flight, estimate_with_prefix_cache, miss_penalty_s,
                                      mixture_quantile_s, prefix_cache)
from calc.sizing.scenario import resolve_serving

MAX_BATCH_LINE_BYTES = 1_000_000  # one line of options is a few hundred bytes

BATCH_KEYS = ("model", "gpu", "gpu_spec", "tensor_parallel_size", "dtype", "quantization", "kv_cache_dtype", "input_len",
              "output_len", "concurrency", "max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill",
              "gpu_memory_utilization", "block_size", "max_model_len", "disable_custom_all_reduce", "vllm_version",
              "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel", "nodes")
NUMERIC_KEYS = ("tensor_parallel_size", "input_len", "output_len", "concurrency", "max_num_seqs",
                "max_num_batched_tokens", "gpu_memory_utilization", "block_size", "max_model_len",
                "pipeline_parallel_size", "data_parallel_size", "nodes")


def add_estimate_parser(sub) -> None:
    e = sub.add_parser("estimate", help="TTFT, TPOT and throughput of a closed-loop load (C clients)")
    _add_engine_args(e, batch=True)  # --batch FILE replaces --model/--gpu
    add_vllm_command_arg(e)
    e.add_argument("--input-len", type=_positive_int, default=None, help="prompt tokens per request")
    e.add_argument("--output-len", type=_positive_int, default=None, help="generated tokens per request")
    e.add_argument("--concurrency", type=_concurrency, default=None, help="clients C (default 1), or 'max' (as many as fit)")
    e.add_argument("--enable-chunked-prefill", action=argparse.BooleanOptionalAction, default=None)
    e.add_argument("--rate", type=_number, default=None,
                   help="requests/s arriving (Poisson, all replicas together): adds the open loop's mean and P95 "
                        "TTFT, TPOT and E2E (open_loop_* fields) beside the closed loop")
    e.add_argument("--replicas", type=_positive_int, default=None,
                   help="independent copies sharing the clients (default 1; at most the concurrency)")
    e.add_argument("--input-len-cv", type=_number, default=None,
                   help="spread of prompt lengths: lognormal of mean --input-len and this coefficient of "
                        "variation (0 = every prompt --input-len; a chat dataset like ShareGPT: about 1); "
                        "the closed loop's token-budget queue where prompts span several chunks, the open "
                        "loop's (--rate) prompt queue and percentiles; draws past --max-model-len are "
                        "cut as simulate cuts them and the open loop takes the cut lengths")
    e.add_argument("--output-len-cv", type=_number, default=None,
                   help="spread of output lengths, as --input-len-cv (0 = fixed, as with --ignore-eos): the "
                        "closed loop's think times at the token budget, the open loop's batch and percentiles")
    add_speculative_args(e)
    add_prefix_args(e)
    e.add_argument("--num-requests", type=_positive_int, default=None,
                   help="with a shared prefix: requests in the run (each prefix's first use misses the cache); "
                        "default: the steady state")
    add_efficiency_arg(e)
    add_disaggregation_args(e)
    e.add_argument("--batch", metavar="FILE", help="JSON lines of options ('-' = stdin); one JSON result per line. "
                   "Option flags given with --batch are defaults for every line (a line's own value wins)")
    # Every option defaults to None = "not given": the input model's defaults (vLLM's) apply, and with
    # --batch only the flags actually given become the lines' defaults.
    e.set_defaults(**{dest: None for dest in BATCH_KEYS})


def _number(x: Any) -> Any:
    v = x.item() if hasattr(x, "item") else x
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def estimate_record(options: dict[str, Any], efficiency: Efficiency = Efficiency()) -> dict[str, Any]:
    """Run one scenario given snake_case options (and the efficiency inputs); raises
    ValueError/ValidationError on bad input."""
    # Unknown keys (e.g. a measurement's id or notes beside the options) are reported back in
    # "ignored_options" rather than failing the line; empty strings mean "the default".
    if disaggregation.wanted(options):  # --prefill-instances / --decode-instances: an xPyD deployment
        return disaggregation.estimate_record(options, efficiency)
    ignored = sorted(set(options) - set(BATCH_KEYS) - set(LOAD_KEYS) - set(PREFIX_KEYS))
    try:
        reuse = reuse_from_options(options)
    except ValueError as exc:  # names the field and its range
        raise UsageError(str(exc)) from None
    options = {k: v for k, v in options.items() if k in BATCH_KEYS or k in LOAD_KEYS}
    options = {k: (None if isinstance(v, str) and not v.strip() else v) for k, v in options.items()}
    rate = _rate(options.pop("rate", None))
    # the lengths' spread (as `simulate --input-len-cv/--output-len-cv`; calc.traffic.workload.length_cvs)
    in_cv = option_number(options, "input_len_cv", 0.0, 0.0, 10.0, "(coefficient of variation)")
    out_cv = option_number(options, "output_len_cv", 0.0, 0.0, 10.0, "(coefficient of variation)")
    options.pop("input_len_cv", None), options.pop("output_len_cv", None)
    spec = speculative_option(options.pop("speculative_config", None), options.pop("acceptance_rate", None))
    replicas = options.pop("replicas", None)
    replicas = 1 if replicas is None else replicas
    if isinstance(replicas, bool) or not isinstance(replicas, (int, str)) or len(str(replicas)) > 6 \
            or not str(replicas).isdigit() or not 1 <= int(replicas) <= 100_000:
        raise InputError("replicas", replicas, allowed="an integer 1 – 100,000 (independent model copies)")
    replicas = int(replicas)
    num_requests = _num_requests(options.pop("num_requests", None))
    for key in ("model", "input_len", "output_len"):
        if options.get(key) is None:
            raise InputError(key, code="required")
    if options.get("gpu") is None and options.get("gpu_spec") is None:
        raise UsageError("gpu is required (a catalog id), or gpu_spec (a JSON object) for a user-defined GPU")
    if not isinstance(options["model"], str):
        raise InputError("model", options["model"], allowed="a string (catalog id or path to a config.json)")
    if options.get("gpu") is not None and not isinstance(options["gpu"], str):
        raise InputError("gpu", options["gpu"], allowed="a string (catalog id)")
    flags = [k for k in NUMERIC_KEYS if isinstance(options.get(k), bool)]
    if flags:  # JSON true/false would otherwise pass as 1/0
        raise UsageError(f"{', '.join(flags)} must be a number, not true/false")
    arch, gpu = get_model(options["model"]), resolve_gpu(options.get("gpu"), options.get("gpu_spec"))
    conc = options.get("concurrency")
    if conc is None:  # one client; with --rate (asked of the replicas together) one per replica, so that
        conc = 1 if rate is None else replicas  # `--rate 3 --replicas 2` is not refused for the closed loop beside it
    if isinstance(conc, str) and conc.strip().lower() == "max":
        conc = None
    fields = {k: v for k, v in options.items() if k not in ("model", "gpu", "gpu_spec") and v is not None}
    fields["concurrency"] = conc
    serving = ServingConfig(**fields)
    check_tensor_parallel(arch, serving.tensor_parallel_size)
    nodes = check_layout(arch, gpu, serving)
    if serving.concurrency is not None and replicas > serving.concurrency:
        # Each replica would get less than one client: refused (the closed-loop model needs C >= 1 per copy).
        raise InputError("replicas", replicas, allowed=f"1 – {serving.concurrency:,}", code="replicas",
                         concurrency=f"{serving.concurrency:,}")
    # Replicas are independent copies behind a load balancer: each serves C / replicas clients;
    # latencies are one replica's, throughputs add up.
    per_replica = None if serving.concurrency is None else serving.concurrency / replicas
    # the steady state (the clients' requests spread out), and beside it the FCFS wave of identical
    # clients started together: the first cycles of a benchmark, a transient (calc.timing.serving)
    if reuse.any_reuse and spec is not None:
        raise UsageError("--speculative-config with --shared-prefix-len or --turns: the two are not modelled "
                         "together yet (ask each apart)")
    if reuse.any_reuse:  # prefix caching: only the uncached prompt tokens are prefilled
        try:
            check_reuse(reuse, input_len=serving.input_len, output_len=serving.output_len,
                        max_model_len=resolve_serving(arch, gpu, serving).max_model_len)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        est, pc = estimate_with_prefix_cache(arch, gpu, serving, efficiency, reuse, concurrency=per_replica,
                                             num_requests=num_requests, output_cv=out_cv)
        wave = estimate_with_prefix_cache(arch, gpu, serving, efficiency, reuse, concurrency=per_replica,
                                          uniform_lengths=True, num_requests=num_requests)[0].serving
    else:
        est = estimate(arch, gpu, serving, efficiency, concurrency=per_replica, speculative=spec, output_cv=out_cv,
                       input_cv=in_cv)
        wave = estimate(arch, gpu, serving, efficiency, concurrency=per_replica, uniform_lengths=True,
                        speculative=spec).serving
    s, m = est.serving, est.memory
    out = {
        "model": arch.id, "gpu": gpu.id, "tensor_parallel_size": serving.tensor_parallel_size,
        "input_len": serving.input_len, "output_len": serving.output_len, "input_len_cv": in_cv,
        "output_len_cv": out_cv, "ttft_s": s.ttft_s, "tpot_s": s.tpot_s, "itl_s": s.itl_s, "e2e_latency_s": s.e2e_latency_s,
        "output_tokens_per_s": s.output_tokens_per_s * replicas, "total_tokens_per_s": s.total_tokens_per_s * replicas,
        "requests_per_s": s.requests_per_s * replicas, "concurrency": s.concurrency * replicas,
        "replicas": replicas, "running": s.running * replicas, "waiting": s.waiting * replicas,
        # max_concurrency means what it means in `memory` and in vLLM's log: requests of max_model_len
        # tokens the KV pool holds (per replica x replicas); kv_sequences_at_mean_context: sequences of
        # this load's mean context I + O/2 that fit (the engine's KV limit on running requests).
        "limited_by": s.limited_by, "max_concurrency": m.max_concurrency * replicas,
        "kv_sequences_at_mean_context": s.kv_sequences_at_mean_context * replicas,
        "fits": s.fits, "weights_bytes": m.weights_bytes, "kv_bytes_per_token": m.kv_bytes_per_token,
        "kv_pool_bytes": m.kv_pool_bytes, "mfu": s.mfu, "mbu": s.mbu, "decode_bound": s.decode_bound,
        "prefill_bound": s.prefill_bound, "prefill_step_bound": s.prefill_step_bound, "decode_step_s": s.decode_step_s,
        "max_num_seqs": est.max_num_seqs, "max_num_batched_tokens": est.max_num_batched_tokens,
        "enable_chunked_prefill": serving.enable_chunked_prefill, "max_model_len": est.max_model_len,
        "wave_ttft_s": wave.ttft_s, "wave_e2e_latency_s": wave.e2e_latency_s,
        # PP / DP / EP (throughputs, concurrency and max_concurrency above are all DP ranks'; memory per GPU)
        **layout_record(serving, nodes),
        "gpus_total": serving.tensor_parallel_size * serving.pipeline_parallel_size * serving.data_parallel_size
        * replicas,
    }
    out["max_concurrency"] = out["max_concurrency"] * serving.data_parallel_size
    drafter, kv_tokens = speculative_drafter(est, spec, gpu=gpu, serving=serving, efficiency=efficiency)
    if not reuse.any_reuse:  # the closed loop's P95 TTFT: its mean + the excess of calc.traffic.queueing.closed_loop_ttft
        out["ttft_p95_s"] = closed_loop_percentile_s(est, input_len=serving.input_len, output_len=serving.output_len,
                                                     kv_capacity_tokens=kv_tokens, input_cv=in_cv, output_cv=out_cv,
                                                     enable_chunked_prefill=serving.enable_chunked_prefill,
                                                     speculative=drafter)
    if reuse.any_reuse:
        out.update(prefix_record(pc, reuse))
    if spec is not None:  # calc.timing.speculative: the same load without speculation beside it
        out.update(speculative_fields(spec, estimate(arch, gpu, serving, efficiency, concurrency=per_replica,
                                                     output_cv=out_cv, input_cv=in_cv).serving,
                                      drafter))
    if rate is not None:  # the open loop at that rate, split evenly over the replicas
        rank_rate = rate / replicas / serving.data_parallel_size  # one engine = one DP rank: its share of the rate
        ol_in = round(float(pc.input_len)) if reuse.turns > 1 else serving.input_len
        if reuse.turns > 1:  # the conversations the arrivals interleave (not the closed loop's clients)
            pc = prefix_cache(reuse=reuse, input_len=serving.input_len, output_len=serving.output_len,
                              block_size=serving.block_size, num_blocks=m.kv_sequence_blocks, running=s.running,
                              conversations=conversations_in_flight(rate_rps=rank_rate,
                                                                    e2e_latency_s=s.e2e_latency_s))
        # spread lengths are cut to max_model_len as `simulate` draws them (make_workload): the open loop
        # takes the cut lengths' means, CVs and own P95 prompt, as the pages do (with reuse: the asked ones)
        lengths = (dict(input_len=ol_in, output_len=serving.output_len, input_cv=in_cv, output_cv=out_cv)
                   if reuse.any_reuse else
                   open_loop_lengths(serving.input_len, serving.output_len, in_cv, out_cv, int(est.max_model_len)))
        ol = open_loop(est.engine, **lengths, rate_rps=rank_rate,
                       cached_prompt_tokens=float(pc.cached_tokens) if reuse.any_reuse else 0.0,
                       max_num_seqs=est.max_num_seqs, max_num_batched_tokens=est.max_num_batched_tokens,
                       kv_capacity_tokens=kv_tokens, enable_chunked_prefill=serving.enable_chunked_prefill,
                       speculative=drafter)
        out.update({
            "rate_rps": rate, "open_loop_ttft_s": ol.ttft_s, "open_loop_ttft_p95_s": ol.ttft_percentile_s,
            "open_loop_tpot_s": ol.tpot_s, "open_loop_e2e_latency_s": ol.e2e_latency_s,
            "open_loop_running": ol.running * replicas * serving.data_parallel_size, "open_loop_stable": ol.stable & s.fits,
            # False past capacity and where the batch meets the KV wall (preemption): the simulator's regime
            "open_loop_closed_form": ol.closed_form & s.fits,
            # the token budget's busy share; at or above NEAR_CAPACITY_BUDGET_UTILIZATION the TTFT is steep in the
            # rate and simulated runs differ by their seed (calc.traffic.queueing.near_capacity)
            "open_loop_budget_utilization": ol.budget_utilization,
            "open_loop_near_capacity": near_capacity(ol.budget_utilization) & ol.stable & s.fits})
        if reuse.active and 0.0 < float(pc.request_hit_probability) < 1.0:  # hits and misses: a mixture's P95
            p_hit = float(pc.request_hit_probability)
            delta = miss_penalty_s(est.engine, prompt_tokens=ol_in, cached_tokens=float(pc.cached_tokens) / p_hit,
                                   running=ol.running, context_tokens=ol_in + serving.output_len / 2.0,
                                   max_num_batched_tokens=est.max_num_batched_tokens,
                                   enable_chunked_prefill=serving.enable_chunked_prefill)
            out["open_loop_ttft_p95_s"] = mixture_quantile_s(mean_s=ol.ttft_s, quantile_s=ol.ttft_percentile_s,
                                                             shift_s=delta, hit_probability=p_hit)
    record = {k: _number(v) for k, v in out.items()}
    single = per_replica is not None and per_replica <= 1
    family, moe = gpu_family(gpu.architecture), arch.moe is not None
    # the API server's share of one engine's predicted requests/s (calc.timing.bands.load_condition)
    t_api = float(est.engine.api_server_request_s)  # the model's path (Harmony or chat template)
    busy = load_condition(api_server_share(s.requests_per_s / serving.data_parallel_size, t_api))
    record = add_bands(record, dict.fromkeys(BANDED, "single" if single else "closed"), family=family, moe=moe,
                       condition=busy)
    if rate is not None:  # the open loop's bands apart: the closed-loop fields stay as without --rate
        record = add_bands(record, dict.fromkeys(OPEN_LOOP_BANDED, "open"), family=family, moe=moe,
                           basis_key="open_loop_band_basis", condition=load_condition(api_server_share(rank_rate, t_api)))
    if not record["fits"]:
        from calc.sizing.fit import what_would_fit  # noqa: PLC0415

        # the goal: this load's requests (input + output tokens), as many at once as one replica serves
        wanted = None if per_replica is None else math.ceil(per_replica)
        record["does_not_fit"] = does_not_fit_record(what_would_fit(
            arch, gpu, serving, efficiency, concurrency=wanted, context_tokens=serving.input_len + serving.output_len))
    notes = spelling_notes(options)
    if in_cv > 0 and rate is None and not float(s.prefill_chunks.max()) > 1:  # accepted: said where it acts
        notes = [*(notes or []), "input_len_cv: the closed loop (--concurrency) takes the prompts' spread where they span "
                                 "several chunked-prefill steps (the token budget's queue); these fit one, so it acts "
                                 "in the open loop (--rate) and in simulate"]
    if notes:
        record["notes"] = notes
    if ignored:
        record["ignored_options"] = ignored
    return record


def _rate(value: Any) -> float | None:
    """``rate`` (requests/s) of a flag or a ``--batch`` line: a number above 0 and at most 1e6."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise UsageError("rate must be a number, not true/false")
    try:
        rate = float(value)
    except (TypeError, ValueError, OverflowError):
        raise UsageError(f"rate: expected a number, got {quote(value)}") from None
    if not (math.isfinite(rate) and 0 < rate <= 1e6):
        raise UsageError(f"rate: got {quote(value)}, allowed above 0 and at most 1,000,000 requests/s")
    return rate


def _num_requests(value: Any) -> float:
    """``num_requests``: a finite run's length, whose first use of each shared prefix misses the
    prefix cache (cold); none given: the steady state (inf)."""
    if value is None:
        return math.inf
    try:
        n = float(str(value).strip()) if isinstance(value, (int, float, str)) and not isinstance(value, bool) else -1.0
    except ValueError:
        n = -1.0
    if not (math.isfinite(n) and n == int(n) and 1 <= n <= 10_000_000):
        raise InputError("num_requests", value, allowed="a whole number 1 – 10,000,000 (requests in the run)")
    return n


LOAD_KEYS = ("replicas", "rate", "num_requests", "speculative_config", "acceptance_rate", "input_len_cv",
             "output_len_cv")
# The headline fields that carry a band (<field>_low / <field>_high, calc.timing.bands).
BANDED = ("ttft_s", "ttft_p95_s", "tpot_s", "itl_s", "e2e_latency_s", "output_tokens_per_s", "total_tokens_per_s", "requests_per_s",
          "max_concurrency", "kv_pool_bytes")
OPEN_LOOP_BANDED = ("open_loop_ttft_s", "open_loop_ttft_p95_s", "open_loop_tpot_s", "open_loop_e2e_latency_s")


def flag_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options given as flags (those left at None were not given)."""
    given = {k: getattr(args, k, None) for k in BATCH_KEYS + LOAD_KEYS + disaggregation.DISAGG_KEYS + PREFIX_KEYS}
    if given.get("dtype") is not None:
        given["dtype"] = _dtype(given["dtype"])
    return {k: v for k, v in given.items() if v is not None}


def _args_to_options(args: argparse.Namespace) -> dict[str, Any]:
    if args.model is None or (args.gpu is None and args.gpu_spec is None):
        raise UsageError("--model and --gpu (or --gpu-spec) are required (or --batch FILE)")
    if args.input_len is None or args.output_len is None:
        raise UsageError("--input-len and --output-len are required")
    return flag_options(args)


def run_estimate(args: argparse.Namespace) -> int:
    efficiency = load_efficiency(args.efficiency)
    return run_records(args, lambda options: estimate_record(options, efficiency), lambda: _args_to_options(args),
                       defaults=flag_options(args))


def run_records(args: argparse.Namespace, record, options, *, defaults: dict[str, Any]) -> int:
    """One record from the flags (``options()``, printed as a table or JSON), or ``--batch FILE``."""
    if args.batch is not None:
        return run_batch(args.batch, record, defaults=defaults)
    out = record(options())
    if args.format == "json":
        print(json.dumps(out))
    else:
        print_table(out)
    return 0


def run_batch(path: str, record, *, defaults: dict[str, Any]) -> int:
    """``--batch FILE`` (``-`` = stdin) for every command that takes one: each line a JSON object
    of options, ``defaults | line`` handed to ``record``, one JSON result (or one error record
    naming the line) printed per line; a bad line never stops the lines after it. Exit status 2
    when any line failed."""
    try:  # bytes: a line that is not UTF-8 is one bad record, not a crash
        fh = getattr(sys.stdin, "buffer", sys.stdin) if path == "-" else open(path, "rb")
    except OSError as exc:
        raise UsageError(f"cannot read --batch file {path!r}: {exc.strerror}") from None
    failures = 0
    with fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8") if isinstance(raw, bytes) else raw
            except UnicodeDecodeError:
                failures += 1
                print(json.dumps({"line": lineno, "error": "not valid UTF-8 text"}))
                continue
            if not line.strip():
                continue
            try:
                options = load_json(line, what=f"line {lineno}", max_bytes=MAX_BATCH_LINE_BYTES)
                if not isinstance(options, dict):
                    raise InputError(f"line {lineno}", json_type(options), code="not_object")
                print(json.dumps(record(defaults | options)))
            except ValidationError as exc:
                failures += 1
                print(json.dumps({"line": lineno, "error": describe_validation_error(exc)}))
            except (UsageError, CatalogError, ConfigError, InputError, ValueError, TypeError, OverflowError,
                    OSError, RecursionError) as exc:
                failures += 1
                print(json.dumps({"line": lineno, "error": str(exc)}))
            except Exception as exc:  # noqa: BLE001 - a bug; the next lines still run
                failures += 1
                print(json.dumps({"line": lineno, "error": f"internal error ({type(exc).__name__}): "
                                                            f"{quote(str(exc))}; please report it"}))
    if failures:
        print(f"error: {failures} line(s) of {path} failed; see the 'error' records", file=sys.stderr)
        return 2
    return 0
