"""The why-panels and headline numbers of the disaggregation page, from a
:class:`calc.plan.disaggregation.SameGPUs` (selection and formatting only, no streamlit)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from calc.plan.disaggregation import SameGPUs
from ui import format as F

T = Callable[..., str]


def _ms(s: float) -> str:
    return f"{F.number(s * 1e6, 0)} µs" if s < 1e-3 else f"{F.number(s * 1e3, 1)} ms"


def at(r: SameGPUs, n: int) -> tuple[float, float, str]:
    """(colocated req/s, best split's req/s, its label) at ``n`` GPUs."""
    i = int(np.flatnonzero(r.gpu_counts == n)[0])
    p, d = int(r.best_prefill[i]), int(r.best_decode[i])
    return float(r.colocated_rps[i]), float(r.disaggregated_rps[i]), (f"{p}P{d}D" if p else "—")


def gpus_needed(r: SameGPUs, rate_rps: float) -> tuple[int | None, int | None]:
    """Fewest GPUs (of those drawn) that carry ``rate_rps`` within the SLA, colocated and disaggregated."""
    def first(x):
        ok = np.flatnonzero(x >= rate_rps)
        return int(r.gpu_counts[ok[0]]) if ok.size else None
    return first(r.colocated_rps), first(r.disaggregated_rps)


def verdict(r: SameGPUs, n: int, t: T) -> str:
    co, dis, label = at(r, n)
    if co <= 0 and dis <= 0:
        return t("dg.verdict.none", n=n)
    if dis <= 0:  # no split at any rate: no "best split (—) 0 req/s"; which pool cannot meet its target
        side = "prefill" if r.prefill_rps_per_instance <= 0 else "decode"
        return t("dg.verdict.no_split", n=n, co=F.number(co, 1), why=t(f"dg.verdict.no_split.{side}"))
    key = "dg.verdict.pays" if dis > co else "dg.verdict.not"
    return t(key, n=n, label=label, co=F.number(co, 1), dis=F.number(dis, 1))


def why(r: SameGPUs, t: T, *, n: int, input_len: int, output_len: int, ttft_slo_s: float, tpot_slo_s: float,
        kv_bytes_per_token: float, link_bw_bytes_per_s: float, link_latency_s: float, decode_batch: float,
        descriptors: float = 0.0, descriptor_s: float = 0.0, stat: str = "mean",
        input_quantile_tokens: float | None = None) -> list[str]:
    """The four panels (markdown), with this scenario's numbers plugged in (``descriptors``: the KV
    connector's transfer descriptors per request, posted at ``descriptor_s`` each; ``stat``: the SLA
    statistic, "mean" or "p95", whose prefill TTFT the first panel adds up against the target, for the prompt
    at that statistic, ``input_quantile_tokens``; None: the lognormal's, not shown)."""
    co, _, _ = at(r, n)
    unloaded = r.prefill_ttft_unloaded_s + r.kv_transfer_s + r.decode_first_s
    return [
        t("dg.why.ttft", lat=_ms(link_latency_s), nd=F.integer(descriptors), td=f"{F.number(descriptor_s * 1e6, 1)} µs",
          i=F.integer(input_len), b=f"{F.number(kv_bytes_per_token / 1e3, 1)} kB",
          bw=f"{F.number(link_bw_bytes_per_s / 1e9, 1)} GB/s", x=_ms(r.kv_transfer_s), first=_ms(r.decode_first_s),
          ttft=_ms(ttft_slo_s), lp=F.number(r.prefill_rps_per_instance, 2),
          steps=F.number(r.decode_first_steps, 2))
        + " " + t("dg.why.unloaded", what=t("dg.why.unloaded.what_mean") if stat == "mean" else t(
                  "dg.why.unloaded.what_q", q=stat.upper(),
                  iq=F.integer(input_quantile_tokens) if input_quantile_tokens is not None else "—"),
                  pf=_ms(r.prefill_ttft_unloaded_s), x=_ms(r.kv_transfer_s), first=_ms(r.decode_first_s),
                  total=_ms(unloaded), ttft=_ms(ttft_slo_s),
                  verdict=t("dg.why.unloaded.over" if unloaded > ttft_slo_s else "dg.why.unloaded.under")),
        t("dg.why.decode", o=F.integer(output_len), tpot=_ms(tpot_slo_s), r=F.number(decode_batch, 0),
          ld=F.number(r.decode_rps_per_instance, 2)),
        t("dg.why.colocated", lc=F.number(r.colocated_rps_per_replica, 2), n=n, reps=n // r.tensor_parallel_size,
          co=F.number(co, 1)),
        t("dg.why.split"),
        t("dg.why.sources"),
    ]
