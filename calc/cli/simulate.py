"""``python -m calc simulate``: request-level simulation of a vLLM engine (``calc.traffic``) under
an arrival process, with vLLM's flag names; percentiles, throughput and goodput out. One scenario
from flags, or many from ``--batch FILE`` (one JSON object of snake_case options per line in, one
JSON result per line out)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any


from calc.spec.catalog import get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.cli.speculative import add_speculative_args, speculative_drafter, speculative_fields, speculative_option
from calc.spec.untrusted import quote
from calc.cli.estimate import run_records
from calc.cli.report import add_bands
from calc.cli import disaggregation
from calc.timing.bands import api_server_share, gpu_family, load_condition, load_regime
from calc.timing.estimate import estimate
from calc.traffic.simulator import EngineConfig, simulate
from calc.traffic.queueing import closed_loop_percentile_s
from calc.traffic.slo import summarize
from calc.traffic.workload import ARRIVALS, LENGTH_BOUNDS, LengthSpec, SampleBounds, WorkloadError, make_workload
from calc.cli.prefix import PREFIX_KEYS, add_prefix_args, prefix_record, reuse_from_options
from calc.traffic.prefix_cache import (check_reuse, conversations_in_flight, estimate_with_prefix_cache,
                                      reuse_workload)
from calc.cli.args import (UsageError, option_number, _add_engine_args, _dtype, _number, _positive_int, add_efficiency_arg, add_vllm_command_arg,
                           check_layout, check_tensor_parallel, layout_options, layout_record, load_efficiency,
                           resolve_gpu)

ENGINE_KEYS = ("model", "gpu", "gpu_spec", "disable_custom_all_reduce", "vllm_version", "tensor_parallel_size", "dtype", "quantization", "kv_cache_dtype", "input_len",
               "output_len", "max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill",
               "gpu_memory_utilization", "block_size", "max_model_len",
               "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel", "nodes")
LOAD_KEYS = ("rate", "concurrency", "max_concurrency", "arrival", "cv", "num_requests", "seed", "ttft_slo_ms", "tpot_slo_ms",
             "think_time_s", "input_len_cv", "output_len_cv", "length_bounds", "speculative_config", "acceptance_rate")
MAX_SIM_REQUESTS = 100_000
# The headline fields that carry a band (<field>_low / <field>_high, calc.timing.bands).
BANDED = tuple(f"{m}_{s}" for m in ("ttft_s", "tpot_s", "itl_s", "e2e_latency_s") for s in ("mean", "p50", "p90", "p95", "p99")) \
    + ("output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "goodput_requests_per_s")
SUMMARY_KEYS = tuple(f"{m}_{s}" for m in ("ttft_s", "tpot_s", "itl_s", "e2e_latency_s", "queue_wait_s")
                     for s in ("mean", "p50", "p90", "p95", "p99"))


def add_simulate_parser(sub) -> None:
    s = sub.add_parser("simulate", help="simulate requests through vLLM's scheduler: P50/P95/P99, goodput")
    _add_engine_args(s, batch=True)  # --batch FILE replaces --model/--gpu
    add_vllm_command_arg(s)
    s.add_argument("--input-len", type=_positive_int, default=None, help="prompt tokens per request")
    s.add_argument("--output-len", type=_positive_int, default=None, help="generated tokens per request")
    s.add_argument("--enable-chunked-prefill", action=argparse.BooleanOptionalAction, default=True)
    s.add_argument("--rate", type=_number, default=None, help="requests per second (poisson, gamma)")
    s.add_argument("--concurrency", type=_positive_int, default=None, help="clients C (closed loop)")
    s.add_argument("--max-concurrency", type=_positive_int, default=None,
                   help="with --rate (or --arrival burst): the benchmark client's cap, vllm bench serve's flag: a request "
                        "waits for one of C slots and its clock starts when it is sent")
    s.add_argument("--arrival", choices=ARRIVALS, default=None,
                   help="arrival process (default: poisson with --rate, closed with --concurrency)")
    s.add_argument("--cv", type=_number, default=1.0, help="gamma: coefficient of variation of inter-arrival times")
    s.add_argument("--think-time-s", type=_number, default=0.0, help="closed loop: pause before a client's next request")
    s.add_argument("--input-len-cv", type=_number, default=0.0,
                   help="spread of prompt lengths: lognormal of mean --input-len and this coefficient of "
                        "variation (0 = every prompt --input-len; a chat dataset like ShareGPT: about 1)")
    s.add_argument("--output-len-cv", type=_number, default=0.0,
                   help="spread of output lengths, as --input-len-cv (0 = fixed, as with --ignore-eos)")
    s.add_argument("--length-bounds", choices=sorted(LENGTH_BOUNDS), default=None,
                   help="keep spread lengths inside a benchmark sampler's bounds, their sample means the asked "
                        "means (vllm-sharegpt: vllm bench's ShareGPT filter, prompt 4-1024, output >= 4, "
                        "total <= 2048 tokens)")
    s.add_argument("--num-requests", type=_positive_int, default=1000)
    s.add_argument("--seed", type=_positive_int, default=0)
    s.add_argument("--ttft-slo-ms", type=_number, default=None, help="TTFT target for goodput")
    s.add_argument("--tpot-slo-ms", type=_number, default=None, help="TPOT target for goodput")
    add_speculative_args(s)
    add_prefix_args(s)
    add_efficiency_arg(s)
    disaggregation.add_disaggregation_args(s)
    s.add_argument("--batch", metavar="FILE", help="JSON lines of options ('-' = stdin); one JSON result per line")


def _num(x: Any) -> Any:
    v = x.item() if hasattr(x, "item") else x
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _whole(options: dict, key: str, default: int | None, lo: int, hi: int) -> int | None:
    """A whole-number option of a ``--batch`` line in [lo, hi]. The digits are counted before int():
    a 5,000-digit JSON number (kept as text by load_json) gave Python's int-digit-limit message."""
    v = options.get(key)
    if v is None:
        return default
    text = str(v).strip() if isinstance(v, (int, str)) and not isinstance(v, bool) else ""
    if not (text.isdigit() and len(text) <= len(str(hi)) and lo <= int(text) <= hi):
        raise UsageError(f"{key}: got {quote(v)}, allowed a whole number {lo:,} – {hi:,}")
    return int(text)


def _lengths(mean: int, cv: float) -> LengthSpec:
    """Every request ``mean`` tokens (cv 0), or lognormal of that mean and coefficient of variation."""
    return LengthSpec("fixed", mean) if cv == 0 else LengthSpec("lognormal", float(mean), cv=cv)


def _length_bounds(value: Any) -> SampleBounds | None:
    """``length_bounds``: a named sampler's bounds (:data:`calc.traffic.workload.LENGTH_BOUNDS`) or an
    object of :class:`calc.traffic.workload.SampleBounds` fields (whole tokens)."""
    if value is None:
        return None
    if isinstance(value, str) and value in LENGTH_BOUNDS:
        return LENGTH_BOUNDS[value]
    if isinstance(value, dict) and set(value) <= set(SampleBounds.__dataclass_fields__) and all(
            isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10_000_000 for v in value.values()):
        return SampleBounds(**value)
    raise UsageError(f"length_bounds: got {quote(value)}, allowed {', '.join(sorted(LENGTH_BOUNDS))} or an object "
                     f"of {', '.join(SampleBounds.__dataclass_fields__)} (whole tokens)")


def simulate_record(options: dict[str, Any], efficiency: Efficiency = Efficiency()) -> dict[str, Any]:
    """Simulate one scenario given snake_case options (and the efficiency inputs); raises on bad
    input (message names the field)."""
    if disaggregation.wanted(options):  # --prefill-instances / --decode-instances: an xPyD deployment
        return disaggregation.simulate_record(options, efficiency)
    ignored = sorted(set(options) - set(ENGINE_KEYS) - set(LOAD_KEYS) - set(PREFIX_KEYS))
    try:
        reuse = reuse_from_options(options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    options = {k: (None if isinstance(v, str) and not v.strip() else v) for k, v in options.items()
               if k in ENGINE_KEYS or k in LOAD_KEYS}
    for key in ("model", "input_len", "output_len"):
        if options.get(key) is None:
            raise UsageError(f"{key} is required")
    if options.get("gpu") is None and options.get("gpu_spec") is None:
        raise UsageError("gpu is required (a catalog id), or gpu_spec (a JSON object) for a user-defined GPU")
    if not isinstance(options["model"], str) or not isinstance(options.get("gpu") or "", str):
        raise UsageError("model and gpu must be strings")
    rate = option_number(options, "rate", None, 1e-6, 1e6, "requests/s")
    spec = speculative_option(options.get("speculative_config"), options.get("acceptance_rate"))
    conc = _whole(options, "concurrency", None, 1, 100_000)
    arrival = options.get("arrival") or ("closed" if conc is not None and rate is None else "poisson")
    if arrival not in ARRIVALS:
        raise UsageError(f"arrival: got {quote(arrival)}, allowed {', '.join(ARRIVALS)}")
    if arrival in ("poisson", "gamma") and rate is None:
        raise UsageError(f"rate is required with arrival {arrival} (requests/s)")
    if arrival == "closed" and conc is None:
        raise UsageError("concurrency is required with arrival closed")
    cap = _whole(options, "max_concurrency", None, 1, 100_000)
    if cap is not None and arrival == "closed":
        raise UsageError("max_concurrency: the cap of an open loop (poisson, gamma, burst); a closed loop's clients "
                         "are concurrency")
    cv = option_number(options, "cv", 1.0, 0.05, 20.0, "")
    think = option_number(options, "think_time_s", 0.0, 0.0, 3600.0, "s")
    in_cv = option_number(options, "input_len_cv", 0.0, 0.0, 10.0, "(coefficient of variation)")
    out_cv = option_number(options, "output_len_cv", 0.0, 0.0, 10.0, "(coefficient of variation)")
    bounds = _length_bounds(options.get("length_bounds"))
    n_req = _whole(options, "num_requests", 1000, 1, MAX_SIM_REQUESTS)
    seed = _whole(options, "seed", 0, 0, 2 ** 63 - 1)
    ttft_slo = option_number(options, "ttft_slo_ms", math.inf, 0.0, 1e9, "ms")
    tpot_slo = option_number(options, "tpot_slo_ms", math.inf, 0.0, 1e9, "ms")
    numeric = ("tensor_parallel_size", "input_len", "output_len", "max_num_seqs", "max_num_batched_tokens",
               "gpu_memory_utilization", "block_size", "max_model_len", "pipeline_parallel_size",
               "data_parallel_size", "nodes")
    flags = [k for k in numeric if isinstance(options.get(k), bool)]
    if flags:
        raise UsageError(f"{', '.join(flags)} must be a number, not true/false")
    arch, gpu = get_model(options["model"]), resolve_gpu(options.get("gpu"), options.get("gpu_spec"))
    fields = {k: v for k, v in options.items()
              if k in ENGINE_KEYS and k not in ("model", "gpu", "gpu_spec") and v is not None}
    serving = ServingConfig(**fields, concurrency=conc or 1)
    check_tensor_parallel(arch, serving.tensor_parallel_size)
    nodes = check_layout(arch, gpu, serving)
    # DP: one rank is simulated with 1/DP of the arrivals (or clients); its throughputs × DP
    dp = serving.data_parallel_size
    # the analytic closed loop beside a closed-loop simulation: the wave for fixed lengths, the
    # spread-arrival steady state for spread ones (as `estimate --input-len-cv/--output-len-cv`)
    if reuse.any_reuse and spec is not None:
        raise UsageError("--speculative-config with --shared-prefix-len or --turns: the two are not modelled "
                         "together yet (ask each apart)")
    est = estimate(arch, gpu, serving, efficiency, concurrency=conc or 1, uniform_lengths=not (in_cv or out_cv),
                   speculative=spec, output_cv=out_cv, input_cv=in_cv)
    pc = None
    if reuse.any_reuse:  # prefix caching: the analytic answer beside the block-by-block one
        try:
            check_reuse(reuse, input_len=serving.input_len, output_len=serving.output_len,
                        max_model_len=est.max_model_len)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        est, pc = estimate_with_prefix_cache(arch, gpu, serving, efficiency, reuse, concurrency=conc or 1,
                                             uniform_lengths=not (in_cv or out_cv), num_requests=n_req)
    drafter, kv_tokens = speculative_drafter(est, spec, gpu=gpu, serving=serving, efficiency=efficiency)
    if not bool(est.memory.fits):
        raise UsageError(f"{arch.name} does not fit {gpu.id} at tensor_parallel_size {serving.tensor_parallel_size}: "
                         "no KV cache pool is left")
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=serving.enable_chunked_prefill,
                       num_blocks=int(kv_tokens // serving.block_size), block_size=serving.block_size,
                       enable_prefix_caching=reuse.enable_prefix_caching)
    try:
        w = make_workload(arrival=arrival, num_requests=max(int(n_req) // dp, 1), rate_per_s=(rate or 1.0) / dp, cv=cv,
                          concurrency=max(-(-(conc or 1) // dp), 1), think_s=think,
                          input_len=_lengths(serving.input_len, in_cv), output_len=_lengths(serving.output_len, out_cv),
                          max_model_len=est.max_model_len, seed=int(seed), bounds=bounds,
                          max_concurrency=None if cap is None else max(-(-cap // dp), 1))
        chains = None
        if reuse.any_reuse:  # conversations in flight: the clients, or at a rate one per request in flight
            convs = max(-(-(conc or 1) // dp), 1) if arrival == "closed" else int(conversations_in_flight(
                rate_rps=(rate or 1.0) / dp, e2e_latency_s=float(est.serving.e2e_latency_s)))
            if w.capped:  # the client's cap: no more conversations in flight than requests
                convs = min(convs, w.closed_clients)
            w, chains = reuse_workload(w, reuse, conversations=int(convs), seed=int(seed))
            if reuse.turns > 1:
                too_long = w.input_len + w.output_len > est.max_model_len
                if too_long.any():
                    raise UsageError("turns: a conversation outgrows max_model_len")
        r = simulate(est.engine, w, cfg, chains=chains,
                     speculative=None if spec is None else (drafter, spec.accepted_at_position))
    except WorkloadError as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:  # a request larger than the KV pool
        raise UsageError(str(exc)) from None
    s = summarize(r, ttft_slo_s=ttft_slo / 1e3, tpot_slo_s=tpot_slo / 1e3)
    out: dict[str, Any] = {"model": arch.id, "gpu": gpu.id, "tensor_parallel_size": serving.tensor_parallel_size,
                           "input_len": serving.input_len, "output_len": serving.output_len, "arrival": arrival,
                           "rate_per_s": rate, "concurrency": conc, "max_concurrency": cap, "seed": int(seed),
                           "input_len_cv": in_cv, "output_len_cv": out_cv}
    if bounds is not None:
        out["length_bounds"] = options["length_bounds"]
    out.update({k: s[k] for k in SUMMARY_KEYS})
    out.update({k: s[k] for k in ("output_tokens_per_s", "total_tokens_per_s", "requests_per_s",
                                  "goodput_requests_per_s", "preemptions", "num_requests", "duration_s",
                                  "finished_requests", "truncated")})
    if r.truncated:  # the JSON says it ("truncated": true); a person reading stderr is told too
        print(f"note: the simulation was cut at its step cap, after {len(r.step_s):,} engine steps, with "
              f"{s['finished_requests']:,} of {s['num_requests']:,} requests finished: latencies, throughputs and "
              "goodput cover the finished requests only (the slowest are left out: the percentiles are lower "
              "bounds)", file=sys.stderr)
    # the API server's share of one engine's simulated requests/s (calc.timing.bands.load_condition)
    busy = load_condition(api_server_share(out["requests_per_s"] if out["requests_per_s"] is not None else math.nan,
                                           float(est.engine.api_server_request_s)))
    for k in ("output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "goodput_requests_per_s"):
        out[k] = out[k] * dp if out[k] is not None else None
    out.update(layout_record(serving, nodes))
    out["ttft_slo_ms"] = None if math.isinf(ttft_slo) else ttft_slo
    out["tpot_slo_ms"] = None if math.isinf(tpot_slo) else tpot_slo
    out["max_num_seqs"] = int(est.max_num_seqs)
    out["max_num_batched_tokens"] = int(est.max_num_batched_tokens)
    out["enable_chunked_prefill"] = serving.enable_chunked_prefill
    out["num_kv_blocks"] = int(cfg.num_blocks)
    if spec is not None:  # the same run's analytic TPOT without speculation beside it
        out.update(speculative_fields(spec, estimate(arch, gpu, serving, efficiency, concurrency=conc or 1,
                                                     uniform_lengths=not (in_cv or out_cv), output_cv=out_cv,
                                                     input_cv=in_cv).serving, drafter))
    if pc is not None:  # the simulator's hit rate; the analytic one beside it
        out.update(prefix_record(pc, reuse))
        out["analytic_prefix_cache_hit_rate"] = out.pop("prefix_cache_hit_rate")
        out["analytic_uncached_prefill_tokens"] = out.pop("uncached_prefill_tokens")
        out.pop("cached_prompt_tokens")
        out["prefix_cache_hit_rate"] = r.prefix_cache_hit_rate
        out["mean_input_len"] = float(r.input_len.mean())
        out["uncached_prefill_tokens"] = float((r.input_len - r.cached_tokens).mean())
    if arrival == "closed":  # the analytic closed-loop model beside the simulation
        a = est.serving
        out["analytic_ttft_s"] = float(a.ttft_s)
        if pc is None and (in_cv or out_cv):  # its P95 (the spread steady state; the wave has none)
            out["analytic_ttft_p95_s"] = float(closed_loop_percentile_s(
                est, input_len=serving.input_len, output_len=serving.output_len, kv_capacity_tokens=kv_tokens,
                input_cv=in_cv, output_cv=out_cv, enable_chunked_prefill=serving.enable_chunked_prefill,
                speculative=drafter))
        out["analytic_e2e_latency_s"] = float(a.e2e_latency_s)
        out["analytic_closed_form"] = bool(a.closed_form)
    record = {k: _num(v) for k, v in out.items()}
    regime = load_regime(arrival, conc)
    record = add_bands(record, dict.fromkeys(BANDED, regime), family=gpu_family(gpu.architecture),
                       moe=arch.moe is not None, condition=busy)
    if ignored:
        record["ignored_options"] = ignored
    return record


def _args_to_options(args: argparse.Namespace) -> dict[str, Any]:
    if args.model is None or (args.gpu is None and args.gpu_spec is None):
        raise UsageError("--model and --gpu (or --gpu-spec) are required (or --batch FILE)")
    if args.input_len is None or args.output_len is None:
        raise UsageError("--input-len and --output-len are required")
    if args.rate is None and args.concurrency is None and args.arrival != "burst":
        raise UsageError("--rate R or --concurrency C is required")
    return {"model": args.model, "gpu": args.gpu, "gpu_spec": args.gpu_spec,
            "disable_custom_all_reduce": args.disable_custom_all_reduce, "vllm_version": args.vllm_version,
            "tensor_parallel_size": args.tensor_parallel_size, **layout_options(args),
            "dtype": _dtype(args.dtype), "quantization": args.quantization, "kv_cache_dtype": args.kv_cache_dtype,
            "input_len": args.input_len, "output_len": args.output_len,
            "max_num_seqs": args.max_num_seqs, "max_num_batched_tokens": args.max_num_batched_tokens,
            "enable_chunked_prefill": args.enable_chunked_prefill,
            "gpu_memory_utilization": args.gpu_memory_utilization, "block_size": args.block_size,
            "max_model_len": args.max_model_len, "rate": args.rate, "concurrency": args.concurrency,
            "max_concurrency": args.max_concurrency,
            "arrival": args.arrival, "cv": args.cv, "think_time_s": args.think_time_s,
            "input_len_cv": args.input_len_cv, "output_len_cv": args.output_len_cv,
            "length_bounds": args.length_bounds, "num_requests": args.num_requests, "seed": args.seed, "ttft_slo_ms": args.ttft_slo_ms,
            "tpot_slo_ms": args.tpot_slo_ms, "speculative_config": args.speculative_config,
            "acceptance_rate": args.acceptance_rate, **disaggregation.flag_options(args),
            **{k: getattr(args, k) for k in PREFIX_KEYS if getattr(args, k, None) is not None}}


def run_simulate(args: argparse.Namespace) -> int:
    efficiency = load_efficiency(args.efficiency)
    return run_records(args, lambda options: simulate_record(options, efficiency), lambda: _args_to_options(args),
                       defaults={})
