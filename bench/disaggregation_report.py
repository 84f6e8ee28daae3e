"""Disaggregation against published measurements (bench/data/disaggregation_measurements.jsonl):
each row asked the way it was measured (Poisson arrivals, fixed lengths, the rate at which the
P90 target holds), by the request simulator (colocated: one engine; disaggregated: P prefill +
D decode simulators, calc.traffic.disaggregation) and by the analytic model beside it.

A row measured on an engine we do not model (DistServe's 2023 engines: ``"engine"``) gets that
engine's step rate from ONE row of the same paper (``"engine_speed_fit_row"``, its colocated
baseline): one scale on the achievable HBM and FLOP fractions (:func:`engine_efficiency`), found by
bisection so the simulator meets that row; the fit row is then left out of the median and every
other row of the paper is a check. Never a fit per row. ``"held_out"`` rows were added after the
model was set and are summarized apart. The column 'as vLLM' is the prediction at our vLLM's speed.

Closed loops (``vllm bench serve --max-concurrency C --num-prompts N``) are asked as run where the
row says so: colocated rows with ``"replicas"`` simulate one replica's share of the clients
(:func:`_colocated_closed_loop`), disaggregated rows with ``"ask": "closed_loop_as_run"`` run the
disaggregated simulator on the closed loop's own send times (:func:`simulate_closed_loop_disaggregated`);
the first wave's burst and the tail are in the means, as in the benchmark's output. The rows of one
series (``anyscale-…``) are also compared against their colocated baseline at the same C: the
engine's own speed error cancels in that ratio.

    .venv/bin/python bench/disaggregation_report.py [--num-requests 1500] [--fit-on ROW_ID] [--write]

``--write`` also writes calc/data/disaggregation_checks.json, what the disaggregation page shows
(:func:`checks`; tests/test_disaggregation_report.py keeps it current).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.traffic.disaggregation import (CHECKS_PATH, decode_engine_numbers, disaggregated_closed_loop,  # noqa: E402
                                         disaggregated_open_loop, kv_links, make_pools,
                                         simulate_disaggregated)
from calc.traffic.simulator import EngineConfig, simulate  # noqa: E402
from calc.traffic.slo import max_sustainable_rate  # noqa: E402
from calc.traffic.workload import LengthSpec, Workload, make_workload  # noqa: E402

DATA = ROOT / "bench" / "data" / "disaggregation_measurements.jsonl"


def rows():
    return [json.loads(x) for x in DATA.read_text().splitlines() if x.strip()]


def _workload(row, rate, n, seed=0):
    return make_workload(arrival="poisson", num_requests=n, rate_per_s=rate, input_len=LengthSpec("fixed", row["input_len"]),
                         output_len=LengthSpec("fixed", row["output_len"]), seed=seed)


def engine_efficiency(scale: float, base: Efficiency = Efficiency()) -> Efficiency:
    """The efficiency of an engine that runs at ``scale`` of our vLLM's step rate: the achievable
    fractions of HBM bandwidth and of peak FLOPs (prefill and decode) times ``scale``; nothing
    else changes. One number per engine, fitted on ONE row of the paper that measured it."""
    return base.model_copy(update={k: min(1.0, getattr(base, k) * scale)
                                   for k in ("hbm_bw_fraction", "prefill_flops_fraction", "decode_flops_fraction")})


def fit_engine_scale(row, *, n: int, lo: float = 0.2, hi: float = 1.0, iterations: int = 7) -> float:
    """The ``scale`` of :func:`engine_efficiency` at which the simulator meets the fit row's
    measured rate (bisection; the rate rises with the scale)."""
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        v, _ = predict(row, n=n, efficiency=engine_efficiency(mid))
        lo, hi = (mid, hi) if not (v >= row["measured"]) else (lo, mid)
    return (lo + hi) / 2.0


def predict(row, *, n: int = 1500, efficiency: Efficiency = Efficiency(),
            nixl_descriptor_s: float | None = None) -> tuple[float, float | None]:
    """(simulated, analytic or None): the highest rate meeting the row's P90 targets, or the mean
    latency at the row's rate."""
    arch, gpu = get_model(row["model"]), get_gpu(row["gpu"])
    s = ServingConfig(dtype=row["dtype"], input_len=row["input_len"], output_len=row["output_len"],
                      enable_chunked_prefill=row["enable_chunked_prefill"], max_model_len=row.get("max_model_len"),
                      block_size=row.get("block_size", 16), gpu_memory_utilization=row.get("gpu_memory_utilization", 0.9))
    tp_p, tp_d = row.get("prefill_tensor_parallel_size"), row.get("decode_tensor_parallel_size")
    # the per-descriptor cost is NIXL's (calc/data/kv_links.json "connector"); other connectors post none
    desc = nixl_descriptor_s if row.get("kv_connector") == "NixlConnector" else 0.0
    if row.get("ask") == "decode_pool_at_rate":  # the decode pool alone at the measured throughput / D
        link = kv_links()[row["kv_link"]]
        pools = make_pools(arch, gpu, s, efficiency, prefill_instances=row["prefill_instances"],
                           decode_instances=row["decode_instances"], link_bw_bytes_per_s=link.effective_bytes_per_s(),
                           link_latency_s=link.latency_s, descriptor_s=desc, prefill_tensor_parallel_size=tp_p,
                           decode_tensor_parallel_size=tp_d)
        est = pools.decode
        cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                           enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks),
                           block_size=int(s.block_size))
        w = _workload(row, row["rate_rps"] / row["decode_instances"], n)
        r = _steady(simulate(decode_engine_numbers(est.engine), w, cfg, remote_kv_tokens=w.input_len))
        a = disaggregated_open_loop(pools, input_len=row["input_len"], output_len=row["output_len"],
                                    rate_rps=row["rate_rps"])
        return float(np.nanmean(r.tpot_s)), float(a.tpot_s)
    if row["setup"] == "colocated" and row.get("concurrency"):  # replicas behind a router, a closed loop
        return _colocated_closed_loop(row, arch, gpu, s, efficiency, n=n)
    if row.get("ask") == "closed_loop_as_run":  # C clients, num_prompts requests, through both pools
        return _disaggregated_closed_loop(row, arch, gpu, s, efficiency, desc=desc)
    if row["metric"] == "output_tokens_per_s":  # a closed loop of C clients: the analytic answer only
        link = kv_links()[row.get("kv_link", "ib-ndr")]
        pools = make_pools(arch, gpu, s, efficiency, prefill_instances=row["prefill_instances"],
                           decode_instances=row["decode_instances"], link_bw_bytes_per_s=link.effective_bytes_per_s(),
                           link_latency_s=link.latency_s, descriptor_s=desc, prefill_tensor_parallel_size=tp_p,
                           decode_tensor_parallel_size=tp_d)
        c = disaggregated_closed_loop(pools, input_len=row["input_len"], output_len=row["output_len"],
                                      concurrency=row["concurrency"])
        v = c.rate_rps * row["output_len"]
        return v, v
    if row["metric"] in ("ttft_mean_s", "tpot_mean_s"):
        link = kv_links()[row.get("kv_link", "ib-ndr")]
        pools = make_pools(arch, gpu, s, efficiency, prefill_instances=row["prefill_instances"],
                           decode_instances=row["decode_instances"], link_bw_bytes_per_s=link.effective_bytes_per_s(),
                           link_latency_s=link.latency_s, descriptor_s=desc, prefill_tensor_parallel_size=tp_p,
                           decode_tensor_parallel_size=tp_d)
        r = _steady(simulate_disaggregated(pools, _workload(row, row["rate_rps"], n)).result)
        a = disaggregated_open_loop(pools, input_len=row["input_len"], output_len=row["output_len"],
                                    rate_rps=row["rate_rps"])
        field = row["metric"].removesuffix("_mean_s") + "_s"
        return float(np.nanmean(getattr(r, field))), float(getattr(a, field))
    ttft = row["ttft_slo_s"] or np.inf
    tpot = row["tpot_slo_s"] or np.inf
    pct = int(row["percentile"])
    setup = row["setup"]
    link = kv_links()[row.get("kv_link", "nvlink3")]
    P, D = row.get("prefill_instances", 1), row.get("decode_instances", 1)
    pools = make_pools(arch, gpu, s, efficiency, prefill_instances=P, decode_instances=D,
                       link_bw_bytes_per_s=link.effective_bytes_per_s(), link_latency_s=link.latency_s, descriptor_s=desc)
    if setup == "colocated":
        est = estimate(arch, gpu, s, efficiency)
        cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                           enable_chunked_prefill=s.enable_chunked_prefill, num_blocks=int(est.memory.num_blocks))
        run = lambda r: _steady(simulate(est.engine, _workload(row, r, n), cfg))  # noqa: E731
        ana = None
    elif setup == "prefill_instance":
        e, est = pools.prefill.engine, pools.prefill
        cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                           enable_chunked_prefill=s.enable_chunked_prefill, num_blocks=int(est.memory.num_blocks))

        def run(r):
            w = _workload(row, r, n)
            w = Workload(arrival_s=w.arrival_s, input_len=w.input_len, output_len=np.ones_like(w.output_len))
            return _steady(simulate(e, w, cfg))
        ana = _analytic(lambda r: disaggregated_open_loop(pools, input_len=row["input_len"], output_len=row["output_len"],
                                                          rate_rps=r, percentile=pct), "prefill", ttft, tpot)
    elif setup == "decode_instance":
        est = pools.decode
        cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                           enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks))

        def run(r):
            w = _workload(row, r, n)
            return _steady(simulate(decode_engine_numbers(est.engine), w, cfg, remote_kv_tokens=w.input_len))
        ana = _analytic(lambda r: disaggregated_open_loop(pools, input_len=row["input_len"], output_len=row["output_len"],
                                                          rate_rps=r, percentile=pct), "decode", ttft, tpot)
    else:
        run = lambda r: _steady(simulate_disaggregated(pools, _workload(row, r, n)).result)  # noqa: E731
        ana = _analytic(lambda r: disaggregated_open_loop(pools, input_len=row["input_len"], output_len=row["output_len"],
                                                          rate_rps=r, percentile=pct), "both", ttft, tpot)
    sim = max_sustainable_rate(run, ttft_slo_s=ttft, tpot_slo_s=tpot, percentile=pct, rate_lo=0.1, rate_hi=200.0,
                               iterations=12).rate_per_s
    return sim, ana


def _colocated_closed_loop(row, arch, gpu, s, efficiency, *, n: int) -> tuple[float, float]:
    """(simulated, analytic): ``replicas`` colocated engines of TP ``tensor_parallel_size`` behind a
    router, ``concurrency`` C clients without think time (``vllm bench serve --max-concurrency C``)
    sending ``num_prompts`` requests. The router spreads the clients evenly: one replica is
    simulated with C / replicas clients and num_prompts / replicas requests, as run (the first
    wave's burst and the tail included, as in the measured means and throughput). Output tokens/s
    = replicas x that replica's output tokens / its makespan (first send to last token)."""
    reps = int(row.get("replicas", 1))
    c, m = row["concurrency"] // reps, row.get("num_prompts", n) // reps
    s = s.model_copy(update={"tensor_parallel_size": row.get("tensor_parallel_size", 1), "concurrency": c})
    est = estimate(arch, gpu, s, efficiency)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=s.enable_chunked_prefill, num_blocks=int(est.memory.num_blocks),
                       block_size=int(s.block_size))
    w = make_workload(arrival="closed", num_requests=m, concurrency=c, input_len=LengthSpec("fixed", row["input_len"]),
                      output_len=LengthSpec("fixed", row["output_len"]), seed=0)
    r = simulate(est.engine, w, cfg)
    if row["metric"] == "output_tokens_per_s":
        sim = reps * float(np.sum(r.output_len)) / float(np.nanmax(r.finish_s) - np.nanmin(r.arrival_s))
        return sim, reps * float(est.serving.output_tokens_per_s)
    field = row["metric"].removesuffix("_mean_s") + "_s"
    return float(np.nanmean(getattr(r, field))), float(getattr(est.serving, field))


def closed_loop_arrivals(finish_s: np.ndarray, concurrency: int) -> np.ndarray:
    """Send times of a closed loop of C clients without think time (``vllm bench serve
    --max-concurrency C``: a semaphore of C slots, requests sent in order): the first C at 0, and
    request C + j when the j-th request to finish (in time order) frees its slot.

    >>> closed_loop_arrivals(np.array([3.0, 1.0, 5.0, 9.0]), 2).tolist()
    [0.0, 0.0, 1.0, 3.0]
    """
    n = finish_s.size
    return np.concatenate([np.zeros(min(concurrency, n)), np.sort(finish_s)[:max(n - concurrency, 0)]])


def simulate_closed_loop_disaggregated(pools, *, input_len: int, output_len: int, concurrency: int,
                                       num_requests: int, iterations: int = 40, tol_s: float = 1e-4):
    """A closed loop of C clients without think time sending ``num_requests`` requests through a
    disaggregated deployment: the open-loop simulator (:func:`simulate_disaggregated`) run on send
    times that are the closed loop's own (:func:`closed_loop_arrivals` of the finish times it
    gives), repeated until the send times stop moving (a fixed point: a request's finish depends
    only on what was sent before it finished). Returns the client's :class:`SimResult`."""
    m, c = int(num_requests), int(concurrency)
    inp, out = np.full(m, input_len, dtype=np.int64), np.full(m, output_len, dtype=np.int64)
    arr = (np.arange(m) // c).astype(float)  # a first guess: one wave a second
    for _ in range(iterations):
        r = simulate_disaggregated(pools, Workload(arrival_s=arr, input_len=inp, output_len=out)).result
        nxt = closed_loop_arrivals(r.finish_s, c)
        moved = float(np.max(np.abs(nxt - arr)))
        arr = nxt
        if moved < tol_s:
            break
    return r


def _disaggregated_closed_loop(row, arch, gpu, s, efficiency, *, desc) -> tuple[float, float]:
    """(simulated, analytic): the row's closed loop (``concurrency`` C, ``num_prompts`` requests)
    through both pools, as run (:func:`simulate_closed_loop_disaggregated`): the first wave's burst
    and the tail are in the means and the throughput, as in vLLM's benchmark output (output
    tokens/s = all output tokens / (last finish - first send)). Analytic:
    :func:`disaggregated_closed_loop` (its steady state)."""
    link = kv_links()[row["kv_link"]]
    pools = make_pools(arch, gpu, s, efficiency, prefill_instances=row["prefill_instances"],
                       decode_instances=row["decode_instances"], link_bw_bytes_per_s=link.effective_bytes_per_s(),
                       link_latency_s=link.latency_s, descriptor_s=desc,
                       prefill_tensor_parallel_size=row.get("prefill_tensor_parallel_size"),
                       decode_tensor_parallel_size=row.get("decode_tensor_parallel_size"))
    r = simulate_closed_loop_disaggregated(pools, input_len=row["input_len"], output_len=row["output_len"],
                                           concurrency=row["concurrency"], num_requests=row["num_prompts"])
    a = disaggregated_closed_loop(pools, input_len=row["input_len"], output_len=row["output_len"],
                                  concurrency=row["concurrency"])
    if row["metric"] == "output_tokens_per_s":
        makespan = float(np.nanmax(r.finish_s) - np.nanmin(r.arrival_s))
        return float(np.sum(r.output_len)) / makespan, a.rate_rps * row["output_len"]
    field = row["metric"].removesuffix("_mean_s") + "_s"
    return float(np.nanmean(getattr(r, field))), float(a.ttft_s if field == "ttft_s" else a.open_loop.tpot_s)


def _steady(r):
    """The run without its first quarter (an idle engine's warm-up), as the planner's check does."""
    from dataclasses import replace  # noqa: PLC0415
    k = r.num_requests // 4
    keep = np.arange(r.num_requests) >= k
    return replace(r, arrival_s=r.arrival_s[keep], input_len=r.input_len[keep], output_len=r.output_len[keep],
                   first_token_s=r.first_token_s[keep], finish_s=r.finish_s[keep], ttft_s=r.ttft_s[keep],
                   tpot_s=r.tpot_s[keep], e2e_latency_s=r.e2e_latency_s[keep], queue_wait_s=r.queue_wait_s[keep],
                   preemptions=r.preemptions[keep])


def _analytic(f, part, ttft, tpot):
    rates = np.geomspace(0.1, 200.0, 400)
    a = f(rates)
    if part == "prefill":
        ok = np.asarray(a.prefill_ttft_percentile_s) <= ttft
        ok &= np.asarray(a.prefill_stable)
    elif part == "decode":
        ok = (np.asarray(a.tpot_percentile_s) <= tpot) & np.asarray(a.decode_stable)
    else:
        ok = (np.asarray(a.ttft_percentile_s) <= ttft) & (np.asarray(a.tpot_percentile_s) <= tpot)
    return float(rates[np.flatnonzero(ok)[-1]]) if ok.any() else float("nan")


def gpus(row) -> int:
    """GPUs a row's deployment holds: replicas x TP (colocated), P x TP_p + D x TP_d (disaggregated)."""
    if row["setup"] == "colocated":
        return int(row.get("replicas", 1)) * int(row.get("tensor_parallel_size", 1))
    return (int(row.get("prefill_instances", 1)) * int(row.get("prefill_tensor_parallel_size") or 1)
            + int(row.get("decode_instances", 1)) * int(row.get("decode_tensor_parallel_size") or 1))


@dataclass(frozen=True)
class Scored:
    """One row asked: ``predicted`` (simulated, or the analytic closed loop where no simulator runs it),
    ``analytic`` (None where there is none), ``as_vllm`` (the prediction at our vLLM's speed, for a row of
    another engine, when asked for) and its ``role``: "fit" (the row its engine's speed was fitted on,
    left out of the medians), "held_out" (added after the model was set) or "check"."""

    row: dict
    role: str
    predicted: float
    analytic: float | None
    as_vllm: float | None = None

    @property
    def error(self) -> float:
        return self.predicted / self.row["measured"] - 1.0


def score(all_rows: list[dict] | None = None, *, n: int = 1500, fit_on: str | None = None,
          nixl_descriptor_s: float | None = None, as_vllm: bool = False,
          on_fit: Callable[[dict, str, float], None] | None = None) -> Iterator[Scored]:
    """Every row of ``all_rows`` (default: all) asked as it was measured, in order. A row of an engine
    we do not model (``"engine"``) runs at the step rate fitted on its ``engine_speed_fit_row`` (or on
    ``fit_on``, a row of the same engine), fitted once per fit row (``on_fit(row, fit_id, scale)``
    is told when it is)."""
    all_rows = rows() if all_rows is None else all_rows
    by_id = {r["id"]: r for r in rows()}
    scales: dict[str, float] = {}
    for row in all_rows:
        eff, plain = Efficiency(), None
        fit_id = row.get("engine_speed_fit_row")
        if fit_id is not None:
            fit_id = fit_on if fit_on in by_id and by_id[fit_on].get("engine") == row.get("engine") else fit_id
            if fit_id not in scales:
                scales[fit_id] = fit_engine_scale(by_id[fit_id], n=n)
                if on_fit is not None:
                    on_fit(row, fit_id, scales[fit_id])
            eff = engine_efficiency(scales[fit_id])
            plain = predict(row, n=n)[0] if as_vllm else None
        sim, ana = predict(row, n=n, efficiency=eff, nixl_descriptor_s=nixl_descriptor_s)
        role = "fit" if row["id"] == fit_id else ("held_out" if row.get("held_out") else "check")
        yield Scored(row, role, sim, ana, plain)


def medians(scored: list[Scored]) -> dict[str, tuple[float, int]]:
    """(median |error|, count) over the rows of each kind, the fit rows left out: ``checks`` (the rows
    of the papers the model was built against), ``held_out``, ``all`` (both), ``vllm`` (the rows
    measured on vLLM itself: no engine-speed fit)."""
    groups = {"checks": [abs(s.error) for s in scored if s.role == "check"],
              "held_out": [abs(s.error) for s in scored if s.role == "held_out"],
              "vllm": [abs(s.error) for s in scored if s.row.get("engine") is None]}
    groups["all"] = groups["checks"] + groups["held_out"]
    return {k: (float(np.median(v)), len(v)) for k, v in groups.items() if v}


def pd_vs_colocated(scored: list[Scored], baseline: str = "coloc-2xtp4") -> list[tuple[str, int, str, float, float]]:
    """(deployment, concurrency, metric, measured ratio, predicted ratio): each disaggregated
    closed-loop row of a series (``anyscale-…``) against the colocated baseline of the same series,
    concurrency and metric (throughput per GPU; TPOT, TTFT). The engine's own speed error cancels in
    the ratio; what is left is what the model says disaggregation changes."""
    by_key = {}
    for s in scored:
        r = s.row
        if r["id"].startswith("anyscale-"):
            cfg = r["id"].split(f"-c{r['concurrency']}-")[0].split("-", 2)[2]  # anyscale-<model>-<config>-c<C>-…
            by_key[(cfg, r["concurrency"], r["metric"])] = s
    out = []
    for (cfg, c, metric), s in sorted(by_key.items()):
        b = by_key.get((baseline, c, metric))
        if cfg == baseline or b is None or b.row["gpu"] != s.row["gpu"]:
            continue
        per = (lambda x, row: x / gpus(row)) if metric == "output_tokens_per_s" else (lambda x, row: x)
        m = per(s.row["measured"], s.row) / per(b.row["measured"], b.row)
        p = per(s.predicted, s.row) / per(b.predicted, b.row)
        out.append((cfg, c, metric, m, p))
    return out


def _print_pd_vs_colocated(scored: list[Scored], baseline: str = "coloc-2xtp4") -> None:
    ratios = pd_vs_colocated(scored, baseline)
    if ratios:
        print(f"disaggregated / colocated {baseline} at the same concurrency (output tokens/s per GPU, TPOT, TTFT):")
        for cfg, c, metric, m, p in ratios:
            print(f"  {cfg:10s} C={c:<3d} {metric:20s} measured {m:5.2f}  predicted {p:5.2f}  ({p / m - 1:+.0%})")
        errs = [abs(p / m - 1) for *_, m, p in ratios]
        print(f"  median |error| of the ratio {np.median(errs):.0%} over {len(errs)}")


def _sig(x: float) -> float:
    return float(f"{x:.4g}")


def checks(scored: list[Scored] | None = None) -> dict:
    """What the disaggregation page shows (calc/data/disaggregation_checks.json, ``--write``): every row
    with its source, confidence and role (fit, held out, check), predicted, measured and error =
    predicted / measured - 1; the medians the report prints (:func:`medians`, fit rows left out); the
    disaggregated / colocated ratios' (:func:`pd_vs_colocated`); and each fitted engine's speed."""
    scored = list(score()) if scored is None else scored
    med = medians(scored)
    ratios = pd_vs_colocated(scored)
    fits = {s.row["engine"]: s.row["id"] for s in scored if s.role == "fit"}
    out = {"source": "bench/disaggregation_report.py --write (bench/data/disaggregation_measurements.jsonl), "
                     "default Efficiency, --num-requests 1500"}
    for k in ("all", "held_out", "vllm", "checks"):  # None: no row of that kind
        m, c = med.get(k, (None, 0))
        out |= {f"median_abs_error_{k}": None if m is None else round(m, 4), f"n_{k}": c}
    out |= {"ratio_median_abs_error": round(float(np.median([abs(p / m - 1) for *_, m, p in ratios])), 4)
            if ratios else None, "n_ratio": len(ratios),
            "engine_fits": [{"engine": e, "row": i} for e, i in sorted(fits.items())],
            "rows": [{"id": s.row["id"], "source": s.row["source"],
                      "confidence": s.row["confidence"].split(":")[0].strip(), "role": s.role,
                      "metric": s.row["metric"], "predicted": _sig(s.predicted), "measured": _sig(s.row["measured"]),
                      "error": round(s.error, 4)} for s in scored]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-requests", type=int, default=1500)
    ap.add_argument("--fit-on", default=None, help="fit the engine speed of that row's engine on this row instead "
                    "(a sensitivity check: the rows say which row they fit on)")
    ap.add_argument("--rows", default="", help="only the rows whose id starts with this (a quick look; "
                    "the fit rows of an engine are still fitted on)")
    ap.add_argument("--kv-descriptor-us", type=float, default=None,
                    help="NIXL's time per transfer descriptor for the NixlConnector rows (a sensitivity check; "
                         "default: calc/data/kv_links.json)")
    ap.add_argument("--write", action="store_true", help="also write calc/data/disaggregation_checks.json, what the "
                    "disaggregation page shows (all rows, the defaults only)")
    args = ap.parse_args()
    if args.write and (args.rows or args.fit_on or args.kv_descriptor_us is not None or args.num_requests != 1500):
        ap.error("--write takes the defaults only: the page shows every row as the model asks it")
    desc = None if args.kv_descriptor_us is None else args.kv_descriptor_us * 1e-6
    all_rows = [r for r in rows() if r["id"].startswith(args.rows)]
    print(f"{'row':34s} {'measured':>8s} {'predicted':>9s} {'error':>7s} {'analytic':>8s} {'as vLLM':>8s}   "
          "(predicted: simulated, or the analytic closed loop where no simulator runs it; 'as vLLM': before the "
          "engine's speed was taken from its paper)")
    scored = []
    for s in score(all_rows, n=args.num_requests, fit_on=args.fit_on, nixl_descriptor_s=desc, as_vllm=True,
                   on_fit=lambda row, fit_id, scale: print(f"  engine {row['engine']}: step rate {scale:.2f} x ours, "
                                                          f"fitted on {fit_id} alone")):
        scored.append(s)
        row, ana = s.row, s.analytic
        plain = "" if s.as_vllm is None else f"{s.as_vllm:8.4g}"
        role = {"check": "", "held_out": "held out"}.get(s.role, s.role)
        print(f"{row['id']:34s} {row['measured']:8.4g} {s.predicted:9.4g} {s.error:+7.0%} "
              f"{'' if ana is None else f'{ana:8.4g}':>8s} {plain:>8s}  {role}")
    med = medians(scored)
    if "checks" in med:
        print(f"median |error| {med['checks'][0]:.0%} over {med['checks'][1]} rows (fit rows left out)")
    if "held_out" in med:
        print(f"held-out rows (added after the model was set, never used to choose it): median |error| "
              f"{med['held_out'][0]:.0%} over {med['held_out'][1]}; all rows together {med['all'][0]:.0%} over "
              f"{med['all'][1]}")
    if "vllm" in med:
        print(f"vLLM rows (no engine-speed fit: llm-d, anyscale): median |error| {med['vllm'][0]:.0%} over "
              f"{med['vllm'][1]}")
    _print_pd_vs_colocated(scored)
    # what disaggregation buys, independent of the engine's speed: per-GPU goodput of 2P1D against colocated
    got = {s.row["id"]: (s.row["measured"], s.predicted) for s in scored}
    k = ("distserve-13b-2p1d", "distserve-13b-colocated-ttft", "distserve-13b-colocated-tpot")
    if all(x in got for x in k):
        ratio = [got[k[0]][j] / 3 / min(got[k[1]][j], got[k[2]][j]) for j in (0, 1)]
        print(f"per-GPU goodput, 2P1D / colocated: measured {ratio[0]:.2f}, simulated {ratio[1]:.2f} "
              f"({ratio[1] / ratio[0] - 1:+.0%})")
    if args.write:
        CHECKS_PATH.write_text(json.dumps(checks(scored), indent=1) + "\n")
        print(f"wrote {CHECKS_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
