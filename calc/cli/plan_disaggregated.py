"""``plan --disaggregated``: the xPyD options (:mod:`calc.plan.disaggregation`) beside the
colocated ones, marked, and the verdict "does disaggregation pay here?"."""

from __future__ import annotations

import argparse
import math
from dataclasses import asdict
from typing import Any

from calc.cli.args import option_number
from calc.cli.disaggregation import link_from_options
from calc.plan.disaggregation import plan_disaggregated, verdict
from calc.traffic.disaggregation import kv_links


def add_link_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kv-link", choices=tuple(kv_links()), default=None,
                   help="--disaggregated: the link the KV crosses (default ib-ndr; sources in calc/data/kv_links.json)")
    p.add_argument("--kv-transfer-gb-per-s", type=float, default=None,
                   help="--disaggregated: KV transfer bandwidth per GPU, one direction, GB/s as achieved")
    p.add_argument("--kv-transfer-latency-ms", type=float, default=None, help="--disaggregated: fixed time per transfer")
    p.add_argument("--kv-descriptor-us", type=float, default=None,
                   help="--disaggregated: the KV connector's time per transfer descriptor, microseconds "
                        "(default: calc/data/kv_links.json 'connector'; 0: none)")


def _record(d) -> dict[str, Any]:
    raw = asdict(d)
    out = {"gpu": raw["gpu"], "tensor_parallel_size": raw["prefill_tensor_parallel_size"],
           "replicas": raw["prefill_instances"] + raw["decode_instances"], "gpus_total": raw["gpus_total"],
           "quantization": raw["quantization"], "kv_cache_dtype": raw["kv_cache_dtype"],
           "max_num_seqs": raw["max_num_seqs"], "ttft_s": raw["ttft_s"], "tpot_s": raw["tpot_s"],
           "output_tokens_per_s": raw["output_tokens_per_s"], "usd_per_hour": raw["usd_per_hour"],
           "usd_per_million_output_tokens": raw["usd_per_million_output_tokens"], "meets_slo": raw["meets_slo"],
           "vllm_command": raw["vllm_command"], "disaggregated": True, "deployment": raw["label"]}
    out.update({k: v for k, v in raw.items() if k not in out})
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in out.items()}


def disaggregated_rows(args, arch, gpus, req, efficiency, prices, colocated, rows):
    """(rows with the xPyD ones appended and every row marked, the verdict line)."""
    bw, lat, what = link_from_options({"kv_link": args.kv_link, "kv_transfer_gb_per_s": args.kv_transfer_gb_per_s,
                                       "kv_transfer_latency_ms": args.kv_transfer_latency_ms})
    desc_us = option_number({"kv_descriptor_us": args.kv_descriptor_us}, "kv_descriptor_us", None, 0.0, 1000.0,
                            "microseconds")
    dis = plan_disaggregated(arch, gpus, req, efficiency, link_bw_bytes_per_s=bw, link_latency_s=lat, prices=prices,
                             descriptor_s=None if desc_us is None else desc_us / 1e6)
    v = verdict(colocated, dis)
    out = [dict(r, disaggregated=False, deployment="colocated") for r in rows] + [_record(d) for d in dis]
    if v.pays is None:
        line = ("no disaggregated option meets the SLA" if not dis else "no colocated option meets the SLA") + f" ({what})"
    else:
        cost = (f"${v.disaggregated_usd_per_hour:.2f}/h vs ${v.colocated_usd_per_hour:.2f}/h"
                if v.disaggregated_usd_per_hour is not None and v.colocated_usd_per_hour is not None else "")
        line = (f"disaggregation {'pays' if v.pays else 'does not pay'} here: best xPyD {v.disaggregated_label} on "
                f"{v.disaggregated_gpus} GPUs vs best colocated on {v.colocated_gpus} GPUs {cost} ({what})")
    return out, line


def print_disaggregated_table(result, req, rows) -> None:
    cols = ("deployment", "gpu", "tensor_parallel_size", "decode_tensor_parallel_size", "quantization", "replicas",
            "gpus_total", "ttft_s", "tpot_s", "kv_transfer_s", "usd_per_hour", "usd_per_million_output_tokens")
    heads = ("deploy", "gpu", "tp", "tp_dec", "weights", "instances", "gpus", "ttft_ms", "tpot_ms", "kv_ms", "usd/h",
             "$/M out")
    print(f"{result.model_id}: {req.rate_rps:g} req/s, {req.input_len} in / {req.output_len} out tokens, "
          f"SLA TTFT <= {req.ttft_slo_s * 1e3:g} ms, TPOT <= {req.tpot_slo_s * 1e3:g} ms ({result.slo_statistic}); "
          "colocated and disaggregated (xPyD: P prefill + D decode instances)")

    def cell(k: str, v: Any) -> str:
        if v is None:
            return "-"
        if k in ("ttft_s", "tpot_s", "kv_transfer_s"):
            return f"{v * 1e3:.1f}"
        if isinstance(v, float):
            return f"{v:.3f}" if k.startswith("usd_per_m") else f"{v:.2f}"
        return str(v)
    table = [heads] + [tuple(cell(k, r.get(k)) for k in cols) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
