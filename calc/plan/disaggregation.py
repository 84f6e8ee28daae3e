"""The planner's disaggregated options ("xPyD"): for each GPU and each pair of tensor-parallel sizes
(prefill TP_p, decode TP_d), how many prefill instances P and decode instances D carry the rate
within the SLA, and what that costs beside the best colocated option ("when does
disaggregation pay?").

Rate matching, the transfer included (aiconfigurator leaves it out):

* a decode instance carries λ_d* = R*/(O·T(R*)) requests/s, R* the largest batch whose step
  T(R) (at the SLA's percentile of the batch, R + z·√R) stays within the TPOT target and that
  its KV pool and max_num_seqs hold (:func:`calc.traffic.disaggregation.decode_batch` inverted);
* a prefill instance carries λ_p*, the largest rate whose prefill TTFT (queue + prefill at the
  SLA's statistic, :func:`calc.traffic.queueing.open_loop` of one-token requests) fits in what is
  left of the TTFT target after the KV transfer and the decode instance's first step;
* P = ⌈λ/λ_p*⌉, D = ⌈λ/λ_d*⌉, GPUs = P·TP_p + D·TP_d; the row's TTFT is the prefill curve at
  λ/P + transfer + the decode instance's first step, its TPOT the decode step at λ/D. Each prefill
  instance is judged on Poisson arrivals at λ/P, the conservative side of the round robin that
  :func:`calc.traffic.disaggregation.disaggregated_open_loop` models (so a row meets the SLA there too).

All (GPU, TP) engines' prefill curves come from ONE vectorized open-loop call: the default
question stays well under a second.

Weights in the checkpoint's own precision ("auto") or FP8 quantized by vLLM at load (on GPUs with
FP8 tensor cores), the KV cache in the model's dtype; both pools in the same precision (the
colocated planner searches more precisions; here the pools differ in TP and counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from calc.plan.search import DTYPE, PlanRequest, _stack_engines, valid_tensor_parallel_sizes
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.spec.vllm_command import serve_command
from calc.timing.estimate import Estimate
from calc.traffic.workload import cut_input_quantile, cut_lengths
from calc.timing.serving import decode_step, mean_decode_context_tokens
from calc.traffic.disaggregation import (decode_engine_numbers, decode_slots, kv_descriptor_s, kv_descriptors,
                                         kv_regions_per_layer,
                                         kv_transfer_s, pool_engine)
from calc.traffic.queueing import normal_quantile, open_loop

RATE_GRID = 64  # prefill rates tried per (GPU, TP_p), geometric
TP_LIMIT = 8


@dataclass(frozen=True)
class DisaggOption:
    """One xPyD deployment (a row of ``plan --disaggregated`` and of the page)."""

    label: str  # "2P1D"
    gpu: str
    gpu_name: str
    prefill_tensor_parallel_size: int
    decode_tensor_parallel_size: int
    prefill_instances: int
    decode_instances: int
    gpus_total: int
    quantization: str
    kv_cache_dtype: str
    max_num_seqs: int  # decode instance
    ttft_s: float  # at the SLA's statistic
    tpot_s: float
    kv_transfer_s: float
    prefill_requests_per_s_per_instance: float
    decode_requests_per_s_per_instance: float
    output_tokens_per_s: float  # capacity: min(P·λ_p*, D·λ_d*)·O
    usd_per_hour: float | None
    usd_per_million_output_tokens: float | None
    meets_slo: bool
    slo_statistic: str
    vllm_command: str  # prefill, then decode


@dataclass(frozen=True)
class Verdict:
    """The best colocated and the best disaggregated option at the same SLA and rate."""

    colocated_gpus: int | None
    colocated_usd_per_hour: float | None
    disaggregated_gpus: int | None
    disaggregated_usd_per_hour: float | None
    disaggregated_label: str | None
    pays: bool | None  # None: one side has no option
    gpu_ratio: float | None  # disaggregated / colocated GPUs


def _tpot_ok_batch(e, *, I, O, slots, tpot_slo_s, q, output_cv=0.0):
    """Largest batch R ≤ slots whose step at the batch's q-quantile stays within the TPOT target,
    the requests/s it carries, and the batches 1 … slots tried at once with their rates and step
    times (vectors); decodes read the length-biased mean context of outputs of CV ``output_cv``
    (:func:`calc.timing.serving.mean_decode_context_tokens`)."""
    ctx = mean_decode_context_tokens(input_len=I, output_len=O, output_cv=output_cv)
    c = int(max(1, min(int(slots), 4096)))
    r = np.arange(1, c + 1, dtype=float)
    rq = np.minimum(r + (normal_quantile(q) * np.sqrt(r) if q is not None else 0.0), c)
    tq = np.asarray(decode_step(e, batch=np.maximum(rq, 1.0), context_tokens=ctx).step_s, dtype=float)
    ok = tq <= tpot_slo_s
    t = np.asarray(decode_step(e, batch=r, context_tokens=ctx).step_s, dtype=float)
    lam = r / (O * t)  # Little: the rate at which the batch is r (increasing in r)
    if not ok.any():
        return 0.0, 0.0, r, lam, t
    k = int(np.flatnonzero(ok)[-1])
    return float(r[k]), float(lam[k]), r, lam, t


def first_token_steps(q: float | None) -> float:
    """Decode steps until a transferred request's first token on the decode instance: its own step and
    the rest of the step in flight, half of one on average (``q`` None), the q-quantile's share at a
    percentile (uniform rest).

    >>> first_token_steps(None), first_token_steps(0.95)
    (1.5, 1.95)
    """
    return 1.5 if q is None else 1.0 + q


def _prefill_curves(ests: Sequence[Estimate], *, I, cv, q, chunked, input_q=None):
    """(rates, TTFT at the statistic), each (N, RATE_GRID), of one prefill instance of each engine
    over a geometric rate grid up to about its capacity, in ONE vectorized
    :func:`calc.traffic.queueing.open_loop` call (Poisson arrivals: the conservative side of
    round robin). ``input_q``: the prompt length at the statistic where the lengths are cut to the
    window (:func:`calc.traffic.workload.cut_input_quantile`; None: open_loop's lognormal)."""
    e = _stack_engines([x.engine for x in ests], (len(ests),))
    col = lambda f: np.asarray([float(f(x)) for x in ests], dtype=float).reshape(-1, 1)  # noqa: E731
    kw = dict(max_num_seqs=col(lambda x: x.max_num_seqs), max_num_batched_tokens=col(lambda x: x.max_num_batched_tokens),
              kv_capacity_tokens=col(lambda x: x.memory.kv_sequence_tokens), input_cv=cv, enable_chunked_prefill=chunked)
    # the capacity scale: one prompt's own prefill on an idle instance
    own = np.asarray(decode_step(e, batch=1.0, context_tokens=1.0).step_s, dtype=float) * np.maximum(
        I / np.minimum(kw["max_num_batched_tokens"], I), 1.0)
    idle = open_loop(e, input_len=I, output_len=1, rate_rps=1e-9 * np.ones_like(own), **kw)
    pf_s = np.maximum(own, np.asarray(idle.own_prefill_s, dtype=float))
    rates = (1.5 / pf_s) * np.geomspace(1e-3, 1.0, RATE_GRID).reshape(1, -1)
    ol = open_loop(e, input_len=I, output_len=1, rate_rps=rates, percentile=95.0 if q is None else q * 100.0,
                   input_quantile_tokens=input_q, **kw)
    ttft = np.asarray(ol.ttft_s if q is None else ol.ttft_percentile_s, dtype=float)
    return rates, np.where(np.asarray(ol.stable), ttft, np.inf)


def plan_disaggregated(arch: ModelArch, gpus: Sequence[GPUSpec], req: PlanRequest, efficiency: Efficiency = Efficiency(),
                       *, link_bw_bytes_per_s: float, link_latency_s: float = 0.0,
                       prices: dict[str, float | None] | None = None, input_cv: float | None = None,
                       output_cv: float | None = None, tensor_parallel_sizes: Sequence[int] | None = None,
                       quantizations: Sequence[str] = ("auto", "fp8"),
                       descriptor_s: float | None = None) -> list[DisaggOption]:
    """Every (GPU, TP_p, TP_d) that serves ``req`` disaggregated, cheapest first (module docstring).
    ``descriptor_s``: the KV connector's time per descriptor (None: the sourced default). ``input_cv``,
    ``output_cv``: the prompt and output lengths' coefficients of variation; None: the request's own
    spread after the cut to the window (``req.lengths`` / ``req.length_spread``,
    :func:`calc.traffic.workload.cut_lengths`), whose mean lengths the rates take."""
    t_desc = kv_descriptor_s() if descriptor_s is None else float(descriptor_s)
    window = req.window_tokens(arch.max_position_embeddings)  # max_model_len: the asked one or one the lengths fit
    # the lengths once cut to the window, as the simulator runs them (calc.traffic.workload.cut_lengths)
    cut = cut_lengths(req.lengths, req.input_len, req.output_len, req.length_spread, window)
    # the percentile's own prompt: the cut lengths' own quantile where they are the ones judged
    input_q = (cut_input_quantile(req.lengths, req.input_len, req.output_len, req.length_spread, window, req.quantile)
               if input_cv is None and req.quantile is not None and cut.cut_fraction > 0 else None)
    if input_cv is None:
        input_cv = cut.input_cv
    if output_cv is None:
        output_cv = cut.output_cv
    ctx = mean_decode_context_tokens(input_len=cut.input_mean, output_len=cut.output_mean, output_cv=output_cv)
    prices = prices or {}
    q = req.quantile
    I, O = float(req.input_len), float(req.output_len)
    tps = tuple(t for t in (tensor_parallel_sizes or valid_tensor_parallel_sizes(arch)) if t <= TP_LIMIT)
    out: list[DisaggOption] = []
    found: list[tuple[GPUSpec, int, Estimate, str]] = []
    for gpu in gpus:
        for quant in quantizations:
            if quant == "fp8" and (gpu.fp8_flops_per_s is None or _is_quantized(arch)):
                continue  # no FP8 tensor cores, or the checkpoint is already quantized
            for tp in tps:
                s = ServingConfig(tensor_parallel_size=tp, dtype=DTYPE, quantization=quant, input_len=req.input_len,
                                  output_len=req.output_len, max_model_len=window,
                                  gpu_memory_utilization=req.gpu_memory_utilization,
                                  enable_chunked_prefill=req.enable_chunked_prefill)
                try:
                    est = pool_engine(arch, gpu, s, efficiency)
                except ValueError:
                    continue
                if bool(est.memory.fits) and float(est.memory.kv_sequence_tokens) >= I + O:
                    found.append((gpu, tp, est, quant))
    if not found:
        return out
    I, O = cut.input_mean, cut.output_mean  # the rates: the mean request after the cut (fitting: the asked one)
    rates, ttft = _prefill_curves([f[2] for f in found], I=I, cv=input_cv, q=q, chunked=req.enable_chunked_prefill,
                                  input_q=input_q)
    dec = []
    for _, _, est, _ in found:
        ed = decode_engine_numbers(est.engine)
        c = float(decode_slots(est, input_len=I, output_len=O))
        rb, lam_d, r_all, lam_all, t_all = _tpot_ok_batch(ed, I=I, O=O, slots=c, tpot_slo_s=req.tpot_slo_s, q=q,
                                                          output_cv=output_cv)
        t = float(t_all[max(int(rb), 1) - 1])  # the step at batch max(R, 1), of the vector above
        first = float(ed.request_overhead_s) + float(ed.api_server_request_s) + first_token_steps(q) * t
        dec.append((lam_d, first, rb, (ed, r_all, lam_all)))
    picks = []  # (sort key, the row's arguments): its TPOT and command are built for the listed rows only
    for i, (gpu, tp_p, est_p, quant) in enumerate(found):
        price = prices.get(gpu.id, gpu.price_usd_per_hour)
        for j, (gpu_d, tp_d, est_d, quant_d) in enumerate(found):
            if gpu_d.id != gpu.id or quant_d != quant:
                continue
            lam_d, first, rb, (ed, r_all, lam_all) = dec[j]
            if lam_d <= 0:
                continue
            b = max(float(est_p.engine.kv_bytes_per_token), float(est_d.engine.kv_bytes_per_token))
            x = float(kv_transfer_s(prompt_tokens=I, kv_bytes_per_token_per_rank=b,
                                    link_bw_bytes_per_s=link_bw_bytes_per_s, link_latency_s=link_latency_s,
                                    descriptors=kv_descriptors(prompt_tokens=I, num_layers=arch.num_hidden_layers,
                                                       regions_per_layer=kv_regions_per_layer(arch)),
                                    descriptor_s=t_desc))
            ok = ttft[i] + x + first <= req.ttft_slo_s
            if not ok.any():
                continue
            k = int(np.flatnonzero(ok)[-1])
            lam_p = float(rates[i, k])
            P = max(1, math.ceil(req.rate_rps / lam_p - 1e-9))
            D = max(1, math.ceil(req.rate_rps / lam_d - 1e-9))
            gpus_total = P * int(est_p.engine.tensor_parallel_size) + D * int(est_d.engine.tensor_parallel_size)
            usd = None if price is None or not math.isfinite(price) else float(price) * gpus_total
            if req.max_gpus is not None and gpus_total > req.max_gpus:
                continue
            if req.budget_usd_per_hour is not None and (usd is None or usd > req.budget_usd_per_hour):
                continue
            # the row's numbers at λ: the prefill curve at λ/P, the decode batch at λ/D
            ttft_row = float(np.interp(req.rate_rps / P, rates[i], ttft[i])) + x + first
            picks.append(((usd if usd is not None else math.inf, gpus_total, ttft_row),
                          (i, j, P, D, x, ttft_row, lam_p, price, quant)))
    picks.sort(key=lambda p: p[0])
    for _, (i, j, P, D, x, ttft_row, lam_p, price, quant) in picks[:req.top]:
        gpu, _, est_p, _ = found[i]
        lam_d, _, rb, (ed, r_all, lam_all) = dec[j]
        r_d = float(np.interp(req.rate_rps / D, lam_all, r_all))  # R = λ_d·O·T(R), read off the curve
        r_q = r_d + (normal_quantile(q) * math.sqrt(max(r_d, 0.0)) if q is not None else 0.0)
        tpot_row = float(decode_step(ed, batch=max(min(r_q, rb), 1.0), context_tokens=ctx).step_s)
        out.append(_row(arch, gpu, est_p, found[j][2], P, D, req, x, ttft_row, tpot_row, lam_p, lam_d, price, quant,
                        float(rates[i, -1]) / 1.5))
    return out


def _row(arch, gpu, est_p, est_d, P, D, req, x, ttft, tpot, lam_p, lam_d, price, quant, cap_p) -> DisaggOption:
    """One xPyD row: its GPUs, price and the two ``vllm serve`` commands."""
    gpus_total = P * int(est_p.engine.tensor_parallel_size) + D * int(est_d.engine.tensor_parallel_size)
    usd = None if price is None or not math.isfinite(price) else float(price) * gpus_total
    # capacity of the deployment, as the colocated rows count it (calc.plan.search: replicas × X(S) × O, the
    # throughput at the full batch that meets the SLA): the decode pool at its TPOT-limited batch, the prefill
    # pool at its own prefill time (one prompt after another), the lower of the two
    tok = min(P * cap_p, D * lam_d) * req.output_len
    cmd, window = [], req.window_tokens(arch.max_position_embeddings)  # max_model_len, as plan_disaggregated's
    for role, est in (("kv_producer", est_p), ("kv_consumer", est_d)):
        s = ServingConfig(tensor_parallel_size=int(est.engine.tensor_parallel_size), dtype=DTYPE, quantization=quant,
                          input_len=req.input_len, output_len=req.output_len, max_model_len=window,
                          gpu_memory_utilization=req.gpu_memory_utilization)
        cmd.append(serve_command(model_id=arch.id, serving=s, max_model_len=window,
                                 max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                                 chunked=req.enable_chunked_prefill or role == "kv_consumer")
                   + " \\\n  --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'")
    return DisaggOption(
        label=f"{P}P{D}D", gpu=gpu.id, gpu_name=gpu.name,
        prefill_tensor_parallel_size=int(est_p.engine.tensor_parallel_size),
        decode_tensor_parallel_size=int(est_d.engine.tensor_parallel_size), prefill_instances=P, decode_instances=D,
        gpus_total=gpus_total, quantization=quant, kv_cache_dtype="auto", max_num_seqs=int(est_d.max_num_seqs),
        ttft_s=ttft, tpot_s=tpot, kv_transfer_s=x,
        prefill_requests_per_s_per_instance=lam_p, decode_requests_per_s_per_instance=lam_d,
        output_tokens_per_s=tok, usd_per_hour=usd,
        usd_per_million_output_tokens=None if usd is None else usd / 3600.0 / tok * 1e6,
        meets_slo=True, slo_statistic=req.percentile, vllm_command="\n# decode:\n".join(cmd))


def _is_quantized(arch: ModelArch) -> bool:
    return arch.checkpoint_quantization is not None


def verdict(colocated: Sequence, disaggregated: Sequence[DisaggOption]) -> Verdict:
    """Compare the best (first) row of each list: disaggregation pays when it needs fewer GPUs, or
    as many for less money."""
    c = colocated[0] if colocated else None
    d = disaggregated[0] if disaggregated else None
    pays = None
    if c is not None and d is not None:
        cu, du = c.usd_per_hour, d.usd_per_hour
        pays = (du < cu) if (cu is not None and du is not None) else d.gpus_total < c.gpus_total
    return Verdict(colocated_gpus=None if c is None else c.gpus_total,
                   colocated_usd_per_hour=None if c is None else c.usd_per_hour,
                   disaggregated_gpus=None if d is None else d.gpus_total,
                   disaggregated_usd_per_hour=None if d is None else d.usd_per_hour,
                   disaggregated_label=None if d is None else d.label, pays=pays,
                   gpu_ratio=None if c is None or d is None else d.gpus_total / c.gpus_total)


@dataclass(frozen=True)
class SameGPUs:
    """Colocated against disaggregated at the same GPU counts (the page's frontier): the highest
    request rate each serves within the SLA (TTFT at the statistic, TPOT at its mean), per count."""

    gpu_counts: np.ndarray  # N
    colocated_rps: np.ndarray  # replicas = ⌊N / TP⌋ colocated engines, each at λ_c*
    disaggregated_rps: np.ndarray  # best P:D split of N: max over P of min(P·λ_p*, D·λ_d*)
    best_prefill: np.ndarray  # P of that split (0: none fits)
    best_decode: np.ndarray
    colocated_rps_per_replica: float  # λ_c*
    prefill_rps_per_instance: float  # λ_p* (the transfer and the decode's first step out of the TTFT target)
    decode_rps_per_instance: float  # λ_d*
    kv_transfer_s: float
    decode_first_s: float
    tensor_parallel_size: int
    decode_batch: float = 0.0  # R at λ_d*: the largest batch within the TPOT target
    kv_bytes_per_token_per_rank: float = 0.0
    prefill_ttft_unloaded_s: float = 0.0  # a prefill instance's TTFT at the statistic at the grid's lowest rate
    decode_first_steps: float = 1.5  # decode steps in decode_first_s: its own + the step in flight's rest (1 + q at q)

    def splits(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P, D, rate) of every split of ``n`` GPUs into P prefill and D decode instances (each ≥ 1)."""
        tp = self.tensor_parallel_size
        p = np.arange(1, max(n // tp, 1))
        d = n // tp - p
        keep = d >= 1
        p, d = p[keep], d[keep]
        return p, d, np.minimum(p * self.prefill_rps_per_instance, d * self.decode_rps_per_instance)


def same_gpus(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig, efficiency: Efficiency = Efficiency(), *,
              gpu_counts, ttft_slo_s: float, tpot_slo_s: float, percentile: str = "mean",
              link_bw_bytes_per_s: float, link_latency_s: float = 0.0, input_cv: float = 0.0,
              output_cv: float = 0.0, descriptor_s: float | None = None,
              input_quantile_tokens: float | None = None) -> SameGPUs:
    """:class:`SameGPUs` for the sidebar's model, GPU, TP and precisions.

    Colocated: the largest rate λ_c* one engine serves within the targets (:func:`open_loop`, TTFT at
    the statistic, TPOT mean), times ⌊N/TP⌋ replicas. Disaggregated: λ_p* and λ_d* as the planner
    finds them (module docstring), the best split of the same N GPUs. ``input_cv``, ``output_cv``: the
    lengths' coefficients of variation (the shared traffic's once cut to the window, as ``serving``'s
    lengths: :func:`calc.traffic.workload.cut_serving`); ``input_quantile_tokens``: their prompt at the
    statistic (:func:`calc.traffic.workload.cut_serving_input_quantile`; None: open_loop's lognormal).
    """
    q = None if percentile == "mean" else float(percentile.removeprefix("p")) / 100.0
    I, O = float(serving.input_len), float(serving.output_len)
    tp = int(serving.tensor_parallel_size)
    est = pool_engine(arch, gpu, serving, efficiency)
    n = np.asarray(gpu_counts, dtype=int)
    zero = SameGPUs(gpu_counts=n, colocated_rps=np.zeros(n.shape), disaggregated_rps=np.zeros(n.shape),
                    best_prefill=np.zeros(n.shape, int), best_decode=np.zeros(n.shape, int), colocated_rps_per_replica=0.0,
                    prefill_rps_per_instance=0.0, decode_rps_per_instance=0.0, kv_transfer_s=0.0, decode_first_s=0.0,
                    tensor_parallel_size=tp)
    if not bool(est.memory.fits) or float(est.memory.kv_sequence_tokens) < I + O:
        return zero
    e = est.engine
    # colocated: one engine over a rate grid
    rates_p, ttft_p = _prefill_curves([est], I=I, cv=input_cv, q=q, chunked=serving.enable_chunked_prefill,
                                      input_q=input_quantile_tokens)
    top = float(rates_p[0, -1])
    grid = np.geomspace(top * 1e-3, top, RATE_GRID)
    ol = open_loop(e, input_len=I, output_len=O, rate_rps=grid, max_num_seqs=est.max_num_seqs,
                   max_num_batched_tokens=est.max_num_batched_tokens, kv_capacity_tokens=est.memory.kv_sequence_tokens,
                   input_cv=input_cv, output_cv=output_cv, enable_chunked_prefill=serving.enable_chunked_prefill,
                   percentile=95.0 if q is None else q * 100.0, input_quantile_tokens=input_quantile_tokens)
    t_co = np.asarray(ol.ttft_s if q is None else ol.ttft_percentile_s, dtype=float)
    ok_c = np.asarray(ol.stable) & (t_co <= ttft_slo_s) & ((np.asarray(ol.tpot_s) <= tpot_slo_s) | (O <= 1))
    lam_c = float(grid[np.flatnonzero(ok_c)[-1]]) if ok_c.any() else 0.0
    # disaggregated: the decode instance's capacity, then the prefill instance's within what is left
    ed = decode_engine_numbers(e)
    c = float(decode_slots(est, input_len=I, output_len=O))
    rb, lam_d, _, _, _ = _tpot_ok_batch(ed, I=I, O=O, slots=c, tpot_slo_s=tpot_slo_s, q=None, output_cv=output_cv)
    t = float(decode_step(ed, batch=max(rb, 1.0), context_tokens=mean_decode_context_tokens(
        input_len=I, output_len=O, output_cv=output_cv)).step_s)
    first_steps = first_token_steps(q)
    first = float(ed.request_overhead_s) + float(ed.api_server_request_s) + first_steps * t
    x = float(kv_transfer_s(prompt_tokens=I, kv_bytes_per_token_per_rank=float(e.kv_bytes_per_token),
                            link_bw_bytes_per_s=link_bw_bytes_per_s, link_latency_s=link_latency_s,
                            descriptors=kv_descriptors(prompt_tokens=I, num_layers=arch.num_hidden_layers,
                                                       regions_per_layer=kv_regions_per_layer(arch),
                                                       block_size=serving.block_size),
                            descriptor_s=kv_descriptor_s() if descriptor_s is None else float(descriptor_s)))
    ok_p = ttft_p[0] + x + first <= ttft_slo_s
    lam_p = float(rates_p[0, np.flatnonzero(ok_p)[-1]]) if ok_p.any() else 0.0
    reps = n // tp
    out = SameGPUs(gpu_counts=n, colocated_rps=reps * lam_c, disaggregated_rps=np.zeros(n.shape),
                   best_prefill=np.zeros(n.shape, int), best_decode=np.zeros(n.shape, int),
                   colocated_rps_per_replica=lam_c, prefill_rps_per_instance=lam_p, decode_rps_per_instance=lam_d,
                   kv_transfer_s=x, decode_first_s=first, tensor_parallel_size=tp, decode_batch=rb,
                   kv_bytes_per_token_per_rank=float(e.kv_bytes_per_token), prefill_ttft_unloaded_s=float(ttft_p[0, 0]),
                   decode_first_steps=first_steps)
    for i, k in enumerate(n.tolist()):
        p, d, r = out.splits(k)
        if r.size and r.max() > 0:
            j = int(np.argmax(r))
            out.disaggregated_rps[i], out.best_prefill[i], out.best_decode[i] = r[j], p[j], d[j]
    return out
