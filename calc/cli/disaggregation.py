"""Prefill/decode disaggregation on the command line: ``estimate`` and ``simulate`` take
``--prefill-instances P --decode-instances D`` and a link (``--kv-transfer-gb-per-s X`` or
``--kv-link PRESET``), optionally a TP per pool; their records then describe the xPyD deployment
(:mod:`calc.traffic.disaggregation`) and carry ``kv_transfer_s``. Without these options nothing
changes in either command."""

from __future__ import annotations

import argparse
import math
from typing import Any

from calc.cli.args import UsageError, _number, option_number, _positive_int, check_tensor_parallel, resolve_gpu
from calc.spec.catalog import get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.spec.units import GB
from calc.spec.untrusted import quote
from calc.traffic.disaggregation import (MAX_INSTANCES, disaggregated_closed_loop, disaggregated_open_loop,
                                         kv_descriptor_s, kv_links, make_pools, simulate_disaggregated)
from calc.traffic.workload import open_loop_lengths

DISAGG_KEYS = ("prefill_instances", "decode_instances", "kv_transfer_gb_per_s", "kv_link", "kv_transfer_latency_ms",
               "prefill_tensor_parallel_size", "decode_tensor_parallel_size", "kv_descriptor_us")
DEFAULT_LINK = "ib-ndr"
MAX_LINK_GB_PER_S = 10_000.0


def add_disaggregation_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("prefill/decode disaggregation (vLLM --kv-transfer-config, xPyD)")
    g.add_argument("--prefill-instances", type=_positive_int, default=None,
                   help=f"P prefill instances (1-{MAX_INSTANCES}); with --decode-instances: a disaggregated deployment")
    g.add_argument("--decode-instances", type=_positive_int, default=None, help=f"D decode instances (1-{MAX_INSTANCES})")
    g.add_argument("--kv-transfer-gb-per-s", type=_number, default=None,
                   help="KV transfer bandwidth per GPU, one direction, GB/s (1e9 B/s) as achieved; "
                        f"default: the --kv-link preset ({DEFAULT_LINK}) at its achievable fraction")
    g.add_argument("--kv-link", choices=tuple(kv_links()), default=None, help="link preset (sources in calc/data/kv_links.json)")
    g.add_argument("--kv-transfer-latency-ms", type=_number, default=None, help="fixed time per transfer (default: the preset's)")
    g.add_argument("--kv-descriptor-us", type=_number, default=None,
                   help="KV connector's time to post one transfer descriptor (one block of one layer's K or V), "
                        f"microseconds (default {kv_descriptor_s() * 1e6:g}, sourced in calc/data/kv_links.json; 0: none)")
    g.add_argument("--prefill-tensor-parallel-size", type=_positive_int, default=None, help="TP of a prefill instance (default -tp)")
    g.add_argument("--decode-tensor-parallel-size", type=_positive_int, default=None, help="TP of a decode instance (default -tp)")


def flag_options(args: argparse.Namespace) -> dict[str, Any]:
    return {k: getattr(args, k) for k in DISAGG_KEYS if getattr(args, k, None) is not None}


def wanted(options: dict[str, Any]) -> bool:
    """Does this record ask for a disaggregated deployment?"""
    return any(options.get(k) is not None for k in DISAGG_KEYS)


def _count(options: dict, key: str, default: int | None, hi: int) -> int | None:
    v = options.get(key)
    if v is None:
        return default
    text = str(v).strip() if isinstance(v, (int, str)) and not isinstance(v, bool) else ""
    if not (text.isdigit() and len(text) <= len(str(hi)) and 1 <= int(text) <= hi):
        raise UsageError(f"{key}: got {quote(v)}, allowed a whole number 1 – {hi:,}")
    return int(text)


def link_from_options(options: dict) -> tuple[float, float, str]:
    """(bandwidth bytes/s, latency s, what it is) of the options: the preset's achievable rate, or
    the bandwidth given (as achieved)."""
    name = options.get("kv_link")
    links = kv_links()
    if name is not None and name not in links:
        raise UsageError(f"kv_link: got {quote(name)}, allowed {', '.join(links)}")
    link = links[name or DEFAULT_LINK]
    gbps = option_number(options, "kv_transfer_gb_per_s", None, 0.0, MAX_LINK_GB_PER_S, "GB/s", above_lo=True)
    lat_ms = option_number(options, "kv_transfer_latency_ms", None, 0.0, 10_000.0, "ms")
    bw = gbps * GB if gbps is not None else link.effective_bytes_per_s()
    lat = lat_ms / 1e3 if lat_ms is not None else link.latency_s
    what = f"{gbps:g} GB/s given" if gbps is not None else f"{link.name}, {bw / GB:g} GB/s achievable"
    return bw, lat, what


def _pools(options: dict, efficiency: Efficiency):
    for key in ("model", "input_len", "output_len"):
        if options.get(key) is None:
            raise UsageError(f"{key} is required")
    if options.get("gpu") is None and options.get("gpu_spec") is None:
        raise UsageError("gpu is required (a catalog id), or gpu_spec (a JSON object) for a user-defined GPU")
    P = _count(options, "prefill_instances", 1, MAX_INSTANCES)
    D = _count(options, "decode_instances", 1, MAX_INSTANCES)
    tp_p = _count(options, "prefill_tensor_parallel_size", None, 1024)
    tp_d = _count(options, "decode_tensor_parallel_size", None, 1024)
    bw, lat, what = link_from_options(options)
    desc_us = option_number(options, "kv_descriptor_us", None, 0.0, 1000.0, "microseconds")
    arch, gpu = get_model(options["model"]), resolve_gpu(options.get("gpu"), options.get("gpu_spec"))
    keep = ("tensor_parallel_size", "dtype", "quantization", "kv_cache_dtype", "input_len", "output_len", "max_num_seqs",
            "max_num_batched_tokens", "enable_chunked_prefill", "gpu_memory_utilization", "block_size", "max_model_len",
            "disable_custom_all_reduce", "vllm_version")
    serving = ServingConfig(**{k: v for k, v in options.items() if k in keep and v is not None})
    for tp in (tp_p or serving.tensor_parallel_size, tp_d or serving.tensor_parallel_size):
        check_tensor_parallel(arch, tp)
    pools = make_pools(arch, gpu, serving, efficiency, prefill_instances=P, decode_instances=D,
                       link_bw_bytes_per_s=bw, link_latency_s=lat, prefill_tensor_parallel_size=tp_p,
                       decode_tensor_parallel_size=tp_d, descriptor_s=None if desc_us is None else desc_us / 1e6)
    for side, est in (("prefill", pools.prefill), ("decode", pools.decode)):
        if not bool(est.memory.fits):
            raise UsageError(f"{arch.name} does not fit a {side} instance ({gpu.id}, tensor_parallel_size "
                             f"{int(est.engine.tensor_parallel_size)}): no KV cache pool is left")
    return arch, gpu, serving, pools, what


KNOWN = DISAGG_KEYS + ("model", "gpu", "gpu_spec", "tensor_parallel_size", "dtype", "quantization", "kv_cache_dtype",
                       "input_len", "output_len", "max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill",
                       "gpu_memory_utilization", "block_size", "max_model_len", "disable_custom_all_reduce",
                       "vllm_version", "rate", "arrival", "cv", "num_requests", "seed", "ttft_slo_ms", "tpot_slo_ms",
                       "input_len_cv", "output_len_cv", "concurrency")


# what `simulate` reads and an analytic `estimate` does not: reported back there, not dropped in silence
SIMULATION_KEYS = ("arrival", "cv", "num_requests", "seed", "ttft_slo_ms", "tpot_slo_ms")


def _ignored(options: dict, unused: tuple[str, ...] = ()) -> list[str]:
    """Options this record does not use (a batch line's notes, --replicas, --think-time-s, and ``unused``),
    reported back."""
    return sorted(k for k, v in options.items() if (k not in KNOWN or k in unused) and v is not None)


def _head(arch, gpu, serving, pools, what) -> dict[str, Any]:
    return {"model": arch.id, "gpu": gpu.id, "disaggregated": True,
            "deployment": f"{pools.prefill_instances}P{pools.decode_instances}D",
            "prefill_instances": pools.prefill_instances, "decode_instances": pools.decode_instances,
            "prefill_tensor_parallel_size": int(pools.prefill.engine.tensor_parallel_size),
            "decode_tensor_parallel_size": int(pools.decode.engine.tensor_parallel_size),
            "gpus_total": pools.gpus_total, "input_len": serving.input_len, "output_len": serving.output_len,
            "kv_transfer_gb_per_s": pools.link_bw_bytes_per_s / GB, "kv_transfer_latency_s": pools.link_latency_s,
            "kv_descriptor_s": pools.kv_descriptor_s,
            "kv_link": what, "kv_bytes_per_token_per_rank": pools.kv_bytes_per_token_per_rank,
            "kv_transfer_s": float(pools.transfer_s(serving.input_len))}


def _clean(d: dict) -> dict:
    def num(v):
        v = v.item() if hasattr(v, "item") else v
        return None if isinstance(v, float) and not math.isfinite(v) else v
    return {k: num(v) for k, v in d.items()}


def estimate_record(options: dict[str, Any], efficiency: Efficiency = Efficiency()) -> dict[str, Any]:
    """``estimate`` of an xPyD deployment: the analytic open loop at ``rate`` (required: a
    disaggregated deployment is judged at a request rate)."""
    from calc.cli.estimate import _rate  # noqa: PLC0415

    rate = _rate(options.get("rate"))
    conc = options.get("concurrency")
    if conc is not None:
        if rate is not None:
            raise UsageError("rate and concurrency both given: a disaggregated deployment is estimated either at a "
                             "rate (open loop) or for C clients (closed loop)")
        return _closed_loop_record(options, efficiency, _count(options, "concurrency", None, 100_000))
    if rate is None:
        raise UsageError("rate (requests/s arriving) or concurrency (clients) is required with prefill_instances / "
                         "decode_instances")
    in_cv, out_cv = _length_cvs(options)
    arch, gpu, serving, pools, what = _pools(options, efficiency)
    a = _open_loop(pools, serving, rate, in_cv, out_cv)
    out = _head(arch, gpu, serving, pools, what)
    out.update({"rate_rps": rate, "input_len_cv": in_cv, "output_len_cv": out_cv, "ttft_s": a.ttft_s,
                "ttft_p95_s": a.ttft_percentile_s, "tpot_s": a.tpot_s,
                "tpot_p95_s": a.tpot_percentile_s, "e2e_latency_s": a.e2e_latency_s,
                "prefill_ttft_s": a.prefill_ttft_s, "prefill_ttft_p95_s": a.prefill_ttft_percentile_s,
                "decode_first_token_s": a.decode_first_s, "decode_running": a.decode_batch,
                "decode_slots": a.decode_slots, "output_tokens_per_s": rate * serving.output_len,
                "prefill_stable": a.prefill_stable, "decode_stable": a.decode_stable, "stable": a.stable})
    out = _clean(out)
    if ignored := _ignored(options, SIMULATION_KEYS):
        out["ignored_options"] = ignored
    return out


def _length_cvs(options: dict[str, Any]) -> tuple[float, float]:
    """--input-len-cv / --output-len-cv: the lengths' spread (lognormal, as ``simulate`` draws them)."""
    return (option_number(options, "input_len_cv", 0.0, 0.0, 10.0, "(coefficient of variation)"),
            option_number(options, "output_len_cv", 0.0, 0.0, 10.0, "(coefficient of variation)"))


def _lengths(pools, serving: ServingConfig, in_cv: float, out_cv: float, *, quantile: bool) -> dict[str, Any]:
    """The lengths ``simulate`` runs, cut to the pools' window, as the analytic models take them
    (:func:`calc.traffic.workload.open_loop_lengths`, as ``estimate --rate`` for one engine); the
    disaggregated models take no output spread, and the closed loop (``quantile`` False) no P95 prompt."""
    lengths = open_loop_lengths(serving.input_len, serving.output_len, in_cv, out_cv,
                                int(min(pools.prefill.max_model_len, pools.decode.max_model_len)))
    lengths.pop("output_cv")
    if not quantile:
        lengths.pop("input_quantile_tokens", None)
    return lengths


def _open_loop(pools, serving: ServingConfig, rate: float, in_cv: float, out_cv: float):
    """The analytic open loop at ``rate`` on the lengths ``simulate`` runs (:func:`_lengths`)."""
    return disaggregated_open_loop(pools, rate_rps=rate, enable_chunked_prefill=serving.enable_chunked_prefill,
                                   **_lengths(pools, serving, in_cv, out_cv, quantile=True))


def _closed_loop_record(options: dict[str, Any], efficiency: Efficiency, concurrency: int) -> dict[str, Any]:
    """C clients without think time (:func:`calc.traffic.disaggregation.disaggregated_closed_loop`)."""
    in_cv, out_cv = _length_cvs(options)
    arch, gpu, serving, pools, what = _pools(options, efficiency)
    c = disaggregated_closed_loop(pools, concurrency=concurrency, enable_chunked_prefill=serving.enable_chunked_prefill,
                                  **_lengths(pools, serving, in_cv, out_cv, quantile=False))
    a = c.open_loop
    out = _head(arch, gpu, serving, pools, what)
    out.update({"concurrency": concurrency, "input_len_cv": in_cv, "output_len_cv": out_cv,
                "requests_per_s": c.rate_rps, "ttft_s": c.ttft_s, "tpot_s": a.tpot_s,
                "e2e_latency_s": c.e2e_latency_s, "client_wait_s": c.client_wait_s,
                "prefill_ttft_s": a.prefill_ttft_s, "decode_first_token_s": a.decode_first_s,
                "decode_running": a.decode_batch, "decode_slots": a.decode_slots,
                "output_tokens_per_s": c.rate_rps * serving.output_len, "saturated": c.saturated})
    out = _clean(out)
    if ignored := _ignored(options, SIMULATION_KEYS):
        out["ignored_options"] = ignored
    return out


def simulate_record(options: dict[str, Any], efficiency: Efficiency = Efficiency()) -> dict[str, Any]:
    """``simulate`` of an xPyD deployment: P + D request-level simulators, the analytic answer beside."""
    from calc.cli.simulate import MAX_SIM_REQUESTS, SUMMARY_KEYS, _lengths, _whole  # noqa: PLC0415
    from calc.traffic.slo import summarize  # noqa: PLC0415
    from calc.traffic.workload import ARRIVALS, WorkloadError, make_workload  # noqa: PLC0415

    rate = option_number(options, "rate", None, 1e-6, 1e6, "requests/s")
    arrival = options.get("arrival") or "poisson"
    if arrival not in ARRIVALS or arrival == "closed" or options.get("concurrency") is not None:
        raise UsageError("arrival: a disaggregated deployment is simulated as an open loop (poisson, gamma, burst), "
                         "not a closed loop of --concurrency clients")
    if arrival in ("poisson", "gamma") and rate is None:
        raise UsageError(f"rate is required with arrival {arrival} (requests/s)")
    cv = option_number(options, "cv", 1.0, 0.05, 20.0, "")
    in_cv, out_cv = _length_cvs(options)
    n_req = _whole(options, "num_requests", 1000, 1, MAX_SIM_REQUESTS)
    seed = _whole(options, "seed", 0, 0, 2 ** 63 - 1)
    ttft_slo = option_number(options, "ttft_slo_ms", math.inf, 0.0, 1e9, "ms")
    tpot_slo = option_number(options, "tpot_slo_ms", math.inf, 0.0, 1e9, "ms")
    arch, gpu, serving, pools, what = _pools(options, efficiency)
    try:
        w = make_workload(arrival=arrival, num_requests=int(n_req), rate_per_s=rate or 1.0, cv=cv,
                          input_len=_lengths(serving.input_len, in_cv), output_len=_lengths(serving.output_len, out_cv),
                          max_model_len=min(pools.prefill.max_model_len, pools.decode.max_model_len), seed=int(seed))
        sim = simulate_disaggregated(pools, w, block_size=serving.block_size,
                                     enable_chunked_prefill=serving.enable_chunked_prefill)
    except (WorkloadError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    s = summarize(sim.result, ttft_slo_s=ttft_slo / 1e3, tpot_slo_s=tpot_slo / 1e3)
    out = _head(arch, gpu, serving, pools, what)
    out.update({"arrival": arrival, "rate_per_s": rate, "seed": int(seed), "input_len_cv": in_cv,
                "output_len_cv": out_cv})
    out.update({k: s[k] for k in SUMMARY_KEYS})
    out.update({k: s[k] for k in ("output_tokens_per_s", "total_tokens_per_s", "requests_per_s",
                                  "goodput_requests_per_s", "preemptions", "num_requests", "duration_s",
                                  "finished_requests", "truncated")})
    import numpy as np  # noqa: PLC0415
    out["kv_transfer_s"] = float(np.nanmean(sim.kv_transfer_s))
    out["prefill_ttft_s_mean"] = float(np.nanmean(sim.prefill_ttft_s))
    out["decode_first_token_s_mean"] = float(np.nanmean(sim.decode_first_s))
    out["ttft_slo_ms"] = None if math.isinf(ttft_slo) else ttft_slo
    out["tpot_slo_ms"] = None if math.isinf(tpot_slo) else tpot_slo
    if rate is not None and arrival == "poisson":
        a = _open_loop(pools, serving, rate, in_cv, out_cv)
        out.update({"analytic_ttft_s": a.ttft_s, "analytic_ttft_p95_s": a.ttft_percentile_s,
                    "analytic_tpot_s": a.tpot_s, "analytic_tpot_p95_s": a.tpot_percentile_s,
                    "analytic_stable": a.stable})
    out = _clean(out)
    if ignored := _ignored(options):
        out["ignored_options"] = ignored
    return out
