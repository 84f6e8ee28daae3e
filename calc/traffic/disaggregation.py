"""Prefill/decode disaggregation (vLLM ``--kv-transfer-config``, "xPyD"): P prefill instances and
D decode instances, each its own vLLM engine on its own GPUs (TP_p, TP_d).

A request goes (vLLM's disaggregated-prefill proxy, ``examples/online_serving/disaggregated_serving``):

1. to a prefill instance (round robin), as a request of ONE output token: it queues and is
   prefilled there like any other request (the same scheduler, :func:`calc.traffic.simulator.simulate`
   with ``output_len = 1``; the analytic twin :func:`calc.traffic.queueing.open_loop` with O = 1);
2. its prompt's KV moves to a decode instance over a link: :func:`kv_transfer_s`, each TP rank its
   own share over its own link, in parallel;
3. the decode instance (round robin) takes it with the KV in place (``remote_kv_tokens``: blocks
   allocated, not computed), computes the last prompt token again and samples the first token
   the client sees, then decodes. Its steps carry no prefill: no prefill interference. (vLLM V1
   ``Scheduler._update_waiting_for_remote_kv``: once the connector reports the blocks received,
   ``num_computed_tokens`` is set to the tokens received, less one when that is the whole
   prompt, so the last prompt token is computed by the decode side; the request is promoted
   from WAITING_FOR_REMOTE_KVS at the first schedule after a step reported the transfer done.
   Here the request enters the decode queue when the transfer ends and waits for the next step;
   NIXL's pull starts the read only after the decode scheduler took the request, about half a
   decode step later, which is not modelled.)

The handover costs more than the bytes over the wire (:func:`kv_transfer_s`): the connector
posts one transfer descriptor per KV block per layer per K/V region, and posting them is CPU work
of microseconds each (``kv_descriptor_s``, sourced in ``calc/data/kv_links.json``: at vLLM's
default 16-token blocks a 2,000-token Llama-3.1-8B prompt is 125 · 32 · 2 = 8,000 descriptors,
about 19 ms); and the proxy (vLLM's disaggregated proxy, llm-d's sidecar) sends each request
twice, to the prefill instance and then to the decode instance, so the decode leg pays the
front end's per-request latency (:class:`calc.spec.inputs.Efficiency` ``request_overhead_s``)
again: :func:`decode_engine_numbers` keeps it.

TTFT = prefill queue + prefill + KV transfer + the decode instance's wait for its next step + that
step; TPOT is the decode instance's alone. aiconfigurator's rate matching leaves the transfer out;
here it is in the TTFT, and the planner (:mod:`calc.plan.disaggregation`) sizes P on what is left
of the TTFT target after it.

Everything is timed by the same step-time and memory functions as a colocated engine
(:func:`calc.timing.estimate.estimate` per pool).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.sizing.scenario import check_token_budget, memory_for, resolve_serving
from calc.timing.estimate import Estimate, engine_numbers
from calc.timing.serving import EngineNumbers, decode_step
from calc.traffic.queueing import mg1_wait_s, normal_quantile, open_loop
from calc.traffic.simulator import EngineConfig, SimResult, simulate
from calc.traffic.workload import Workload

LINKS_PATH = Path(__file__).resolve().parent.parent / "data" / "kv_links.json"
CHECKS_PATH = Path(__file__).resolve().parent.parent / "data" / "disaggregation_checks.json"
MAX_INSTANCES = 64
MAX_DESCRIPTOR_S = 1e-3


@dataclass(frozen=True)
class KVLink:
    """A link preset (``calc/data/kv_links.json``): one direction, per GPU."""

    id: str
    name: str
    bandwidth_bytes_per_s: float  # line rate
    latency_s: float
    source: str

    def effective_bytes_per_s(self, fraction: float | None = None) -> float:
        return self.bandwidth_bytes_per_s * (link_achievable_fraction() if fraction is None else fraction)


@lru_cache(maxsize=1)
def _links_doc() -> dict:
    return json.loads(LINKS_PATH.read_text())


def link_achievable_fraction() -> float:
    """Share of a preset's line rate a KV connector reaches (sourced in the data file)."""
    return float(_links_doc()["achievable_fraction"])


def kv_links() -> dict[str, KVLink]:
    """The link presets by id, each with its source.

    >>> kv_links()["ib-ndr"].bandwidth_bytes_per_s / 1e9
    50.0
    """
    return {k: KVLink(id=k, name=v["name"], bandwidth_bytes_per_s=float(v["bandwidth_bytes_per_s"]),
                      latency_s=float(v["latency_s"]), source=v["source"])
            for k, v in _links_doc()["links"].items()}


def kv_descriptor_s() -> float:
    """A KV connector's CPU time to post one transfer descriptor (sourced in the data file)."""
    return float(_links_doc()["connector"]["descriptor_s"])


def kv_block_regions_per_layer() -> int:
    """Memory regions one KV block holds per layer (K and V apart: 2; sourced in the data file)."""
    return int(_links_doc()["connector"]["regions_per_layer"])


def kv_regions_per_layer(arch: ModelArch) -> int:
    """KV regions one block holds per layer: K and V apart (the data file's figure), one latent
    cache under DeepSeek's MLA."""
    return 1 if arch.mla is not None else kv_block_regions_per_layer()


def kv_descriptors(*, prompt_tokens, num_layers, block_size=16, regions_per_layer=None):
    """Transfer descriptors one TP rank posts to move a prompt's KV (NIXL, one per block, layer and
    K/V region; vLLM's ``NixlConnectorWorker`` registers each layer's K and V caches as separate
    regions and reads block by block):

        n = ⌈I / block_size⌉ · L · regions

    Llama-3.1-8B (32 layers), 2,000 tokens, 16-token blocks: ⌈2000/16⌉ · 32 · 2 = 125 · 64 = 8,000.

    >>> int(kv_descriptors(prompt_tokens=2000, num_layers=32, block_size=16, regions_per_layer=2))
    8000
    """
    r = kv_block_regions_per_layer() if regions_per_layer is None else regions_per_layer
    return (np.ceil(np.asarray(prompt_tokens, dtype=float) / np.asarray(block_size, dtype=float))
            * np.asarray(num_layers, dtype=float) * np.asarray(r, dtype=float))


def kv_transfer_s(*, prompt_tokens, kv_bytes_per_token_per_rank, link_bw_bytes_per_s, link_latency_s=0.0,
                  descriptors=0.0, descriptor_s=0.0):
    """Time to move one prompt's KV from a prefill instance to a decode instance:

        t = α + n · t_desc + I · b_rank / B

    I prompt tokens, b_rank KV bytes per token held by ONE TP rank (the layers' K and V of its
    heads: :func:`calc.sizing.memory.kv_bytes_per_token` / TP, or all of them where KV heads are
    replicated), B one rank's link bandwidth (one direction): every rank sends its share over its
    own NIC at the same time, so TP divides the time. With different TP on the two sides the
    larger share per rank sets the pace (pass the max of the two). α: the link's latency; n
    descriptors (:func:`kv_descriptors`) posted at t_desc each (:func:`kv_descriptor_s`), one
    after another by the rank's worker. With 8,000 descriptors at 2.4 us: + 19.2 ms.

    Llama-3.1-8B (32 layers, 8 KV heads × 128, bf16): 2·32·8·128·2 = 131,072 B per token; a
    1,000-token prompt at TP 1 over InfiniBand NDR at 40 GB/s: 1000 · 131072 / 40e9 = 3.28 ms.

    >>> round(float(kv_transfer_s(prompt_tokens=1000, kv_bytes_per_token_per_rank=131072,
    ...                            link_bw_bytes_per_s=40e9)) * 1e3, 2)
    3.28
    """
    return (np.asarray(link_latency_s, dtype=float)
            + np.asarray(descriptors, dtype=float) * np.asarray(descriptor_s, dtype=float)
            + np.asarray(prompt_tokens, dtype=float) * np.asarray(kv_bytes_per_token_per_rank, dtype=float)
            / np.asarray(link_bw_bytes_per_s, dtype=float))


@dataclass(frozen=True)
class Pools:
    """Both pools of one disaggregated deployment: each pool's engine (:class:`Estimate`, one instance)
    and how many instances; the link the KV crosses."""

    prefill: Estimate
    decode: Estimate
    prefill_instances: int
    decode_instances: int
    link_bw_bytes_per_s: float
    link_latency_s: float
    num_layers: int = 0  # layers whose KV moves (0: no descriptor cost)
    kv_block_size: int = 16
    kv_descriptor_s: float = 0.0
    kv_regions_per_layer: int = 2  # K and V apart; 1 for MLA's single latent cache

    @property
    def kv_bytes_per_token_per_rank(self) -> float:
        """The larger per-rank share of the two sides (:func:`kv_transfer_s`)."""
        return float(max(float(self.prefill.engine.kv_bytes_per_token), float(self.decode.engine.kv_bytes_per_token)))

    @property
    def gpus_total(self) -> int:
        return (self.prefill_instances * int(self.prefill.engine.tensor_parallel_size)
                + self.decode_instances * int(self.decode.engine.tensor_parallel_size))

    def transfer_s(self, prompt_tokens):
        return kv_transfer_s(prompt_tokens=prompt_tokens, kv_bytes_per_token_per_rank=self.kv_bytes_per_token_per_rank,
                             link_bw_bytes_per_s=self.link_bw_bytes_per_s, link_latency_s=self.link_latency_s,
                             descriptors=kv_descriptors(prompt_tokens=prompt_tokens, num_layers=self.num_layers,
                                                        block_size=self.kv_block_size,
                                                        regions_per_layer=self.kv_regions_per_layer),
                             descriptor_s=self.kv_descriptor_s)


def decode_engine_numbers(e: EngineNumbers) -> EngineNumbers:
    """A decode instance's engine: the same numbers. Its per-request latency
    (``request_overhead_s``: HTTP hop, hand-off to the engine, first streamed chunk) is paid a
    second time: the proxy sends the request to the prefill instance, waits for its answer, and
    then sends it to the decode instance (vLLM ``disagg_proxy_server``, llm-d's routing sidecar)."""
    return e


def pool_engine(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig, efficiency: Efficiency = Efficiency()) -> Estimate:
    """One instance's engine and memory (:func:`calc.timing.estimate.estimate` without its closed
    loop, which a pool does not use: ``serving`` is None)."""
    rs = resolve_serving(arch, gpu, serving)
    check_token_budget(serving, rs.max_model_len, enable_chunked_prefill=serving.enable_chunked_prefill)
    mem = memory_for(arch, gpu, serving, efficiency, concurrency=1, context_tokens=rs.max_model_len)
    mnbt = rs.max_num_batched_tokens if serving.enable_chunked_prefill else max(rs.max_num_batched_tokens,
                                                                                 serving.input_len)
    return Estimate(memory=mem, serving=None, engine=engine_numbers(arch, gpu, serving, efficiency),
                    max_model_len=rs.max_model_len, max_num_seqs=np.asarray(rs.max_num_seqs),
                    max_num_batched_tokens=np.asarray(mnbt))


def make_pools(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig, efficiency: Efficiency = Efficiency(), *,
               prefill_instances: int, decode_instances: int, link_bw_bytes_per_s: float, link_latency_s: float = 0.0,
               prefill_tensor_parallel_size: int | None = None, decode_tensor_parallel_size: int | None = None,
               decode_gpu: GPUSpec | None = None, descriptor_s: float | None = None) -> Pools:
    """Each pool's engine from ``serving`` (its TP overridden per pool); both hold the model and
    their own KV pool. The decode side always runs V1's chunked scheduler (it prefills nothing).
    ``descriptor_s``: the connector's time per transfer descriptor (None: the sourced default,
    :func:`kv_descriptor_s`; 0 leaves the descriptors out)."""
    for name, v in (("prefill_instances", prefill_instances), ("decode_instances", decode_instances)):
        if not (isinstance(v, int) and 1 <= v <= MAX_INSTANCES):
            raise ValueError(f"{name}: got {v!r}, allowed a whole number 1 – {MAX_INSTANCES}")
    if not (math.isfinite(link_bw_bytes_per_s) and link_bw_bytes_per_s > 0):
        raise ValueError("kv_transfer_gb_per_s: must be a positive number")
    t_desc = kv_descriptor_s() if descriptor_s is None else float(descriptor_s)
    if not (math.isfinite(t_desc) and 0.0 <= t_desc <= MAX_DESCRIPTOR_S):
        raise ValueError(f"kv_descriptor_us: got {t_desc * 1e6:g}, allowed 0 – {MAX_DESCRIPTOR_S * 1e6:g} microseconds")
    tp_p = prefill_tensor_parallel_size or serving.tensor_parallel_size
    tp_d = decode_tensor_parallel_size or serving.tensor_parallel_size
    sp = serving.model_copy(update={"tensor_parallel_size": tp_p})
    sd = serving.model_copy(update={"tensor_parallel_size": tp_d, "enable_chunked_prefill": True})
    return Pools(prefill=pool_engine(arch, gpu, sp, efficiency), decode=pool_engine(arch, decode_gpu or gpu, sd, efficiency),
                 prefill_instances=int(prefill_instances), decode_instances=int(decode_instances),
                 link_bw_bytes_per_s=float(link_bw_bytes_per_s), link_latency_s=float(link_latency_s),
                 num_layers=int(arch.num_hidden_layers), kv_block_size=int(serving.block_size or 16),
                 kv_descriptor_s=t_desc, kv_regions_per_layer=kv_regions_per_layer(arch))


@dataclass(frozen=True)
class DisaggSim:
    """A simulated disaggregated run: the client's view (``result``, a :class:`SimResult` over the
    original requests: TTFT at the decode instance's first token, TPOT of the decode instance) and
    each stage's share per request (seconds)."""

    result: SimResult
    prefill_done_s: np.ndarray  # absolute time the prefill instance finished the prompt
    kv_transfer_s: np.ndarray
    prefill_ttft_s: np.ndarray  # arrival → prefill done (queue + prefill, API server included)
    decode_first_s: np.ndarray  # KV arrived → the decode instance's first token


def simulate_disaggregated(pools: Pools, workload: Workload, *, block_size: int = 16,
                           enable_chunked_prefill: bool = True, max_steps: int | None = None) -> DisaggSim:
    """Run an open-loop ``workload`` through P prefill and D decode simulators (module docstring).
    Requests go round robin to the prefill instances in arrival order and to the decode
    instances in the order their KV arrives."""
    if workload.closed:
        raise ValueError("arrival: disaggregation is simulated for open loops (poisson, gamma, burst, trace)")
    n = workload.num_requests
    P, D = pools.prefill_instances, pools.decode_instances
    cfg_p = _cfg(pools.prefill, block_size, enable_chunked_prefill)
    cfg_d = _cfg(pools.decode, block_size, True)
    order = np.argsort(workload.arrival_s, kind="stable")
    done_p = np.full(n, np.nan)
    entered_wait = np.full(n, np.nan)
    pre_p = np.zeros(n, dtype=np.int64)
    for k in range(P):
        ids = order[k::P]
        if ids.size == 0:
            continue
        w = Workload(arrival_s=workload.arrival_s[ids], input_len=workload.input_len[ids],
                     output_len=np.ones(ids.size, dtype=np.int64))
        r = simulate(pools.prefill.engine, w, cfg_p, max_steps=max_steps)
        done_p[ids] = r.first_token_s
        entered_wait[ids] = r.queue_wait_s
        pre_p[ids] = r.preemptions
    xfer = np.asarray(pools.transfer_s(workload.input_len), dtype=float) * np.ones(n)
    ready = done_p + xfer
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    pre_d = np.zeros(n, dtype=np.int64)
    itls, steps = [], []
    sketched, itl_sum, itl_n = False, 0.0, 0
    e_d = decode_engine_numbers(pools.decode.engine)
    ok = np.flatnonzero(np.isfinite(ready))
    by_ready = ok[np.argsort(ready[ok], kind="stable")]
    for k in range(D):
        ids = by_ready[k::D]
        if ids.size == 0:
            continue
        w = Workload(arrival_s=ready[ids], input_len=workload.input_len[ids], output_len=workload.output_len[ids])
        r = simulate(e_d, w, cfg_d, max_steps=max_steps, remote_kv_tokens=workload.input_len[ids])
        first[ids] = r.first_token_s
        finish[ids] = r.finish_s
        pre_d[ids] = r.preemptions
        itls.append(r.itl_s)
        sketched |= r.itl_sketched
        gaps = int(np.maximum(workload.output_len[ids] - 1, 0).sum())
        itl_sum += float(r.itl_mean_s) * gaps if gaps else 0.0
        itl_n += gaps
        steps.append(r)
    arrival = workload.arrival_s.astype(float)
    out = workload.output_len.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(out > 1, (finish - first) / np.maximum(out - 1, 1), np.nan)
    cat = (lambda name, dtype=float: np.concatenate([getattr(r, name) for r in steps]).astype(dtype)
           if steps else np.zeros(0, dtype=dtype))
    res = SimResult(
        arrival_s=arrival, input_len=workload.input_len.astype(np.int64), output_len=out, first_token_s=first,
        finish_s=finish, ttft_s=first - arrival, tpot_s=tpot, e2e_latency_s=finish - arrival,
        queue_wait_s=entered_wait, preemptions=pre_p + pre_d,
        itl_s=np.concatenate(itls) if itls else np.zeros(0),
        step_start_s=cat("step_start_s"), step_s=cat("step_s"), step_waiting=cat("step_waiting", np.int64),
        step_running=cat("step_running", np.int64), step_kv_blocks=cat("step_kv_blocks", np.int64),
        step_prefill_tokens=cat("step_prefill_tokens", np.int64), step_decode_tokens=cat("step_decode_tokens", np.int64),
        num_blocks=int(cfg_d.num_blocks), block_size=int(cfg_d.block_size), truncated=bool(np.isnan(finish).any()),
        itl_sketched=sketched, itl_mean_s=itl_sum / itl_n if itl_n else float("nan"))
    return DisaggSim(result=res, prefill_done_s=done_p, kv_transfer_s=xfer, prefill_ttft_s=done_p - arrival,
                     decode_first_s=first - ready)


def _cfg(est: Estimate, block_size: int, chunked: bool) -> EngineConfig:
    return EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                        enable_chunked_prefill=bool(chunked), num_blocks=int(est.memory.kv_sequence_blocks),
                        block_size=int(block_size))


# ---------------------------------------------------------------------------------------------
# Analytic open loop
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DisaggOpenLoop:
    """The analytic steady state of an xPyD deployment at λ requests/s (seconds; arrays)."""

    ttft_s: np.ndarray  # mean
    ttft_percentile_s: np.ndarray
    tpot_s: np.ndarray
    tpot_percentile_s: np.ndarray
    e2e_latency_s: np.ndarray
    prefill_ttft_s: np.ndarray  # mean arrival → prefill done (per prefill instance at λ/P)
    prefill_ttft_percentile_s: np.ndarray
    kv_transfer_s: np.ndarray
    decode_first_s: np.ndarray  # mean KV arrived → first token
    decode_batch: np.ndarray  # sequences one decode instance holds
    decode_slots: np.ndarray
    prefill_stable: np.ndarray
    decode_stable: np.ndarray
    stable: np.ndarray


def decode_slots(est: Estimate, *, input_len, output_len):
    """Sequences one decode instance can hold: min(max_num_seqs, KV pool tokens / (I + O))."""
    ctx = np.asarray(input_len, dtype=float) + np.asarray(output_len, dtype=float)
    return np.maximum(np.minimum(np.asarray(est.max_num_seqs, dtype=float),
                                 np.floor(np.asarray(est.memory.kv_sequence_tokens, dtype=float) / ctx)), 1.0)


def decode_batch(e: EngineNumbers, *, rate_rps, input_len, output_len, slots, iterations: int = 48):
    """The decode instance's batch R at λ_d requests/s: each request holds a slot for O steps, so
    (Little) R = λ_d · O · T(R), T(R) = :func:`calc.timing.serving.decode_step` at R sequences
    of mean context I + O/2. Solved by bisection on [0, c]; returns (R, stable) where stable means
    a solution below the slots c exists (else R = c: the queue grows).

    Hand check: if T were 20 ms at every R, λ_d = 10/s, O = 100: R = 10 · 100 · 0.02 = 20.
    """
    lam = np.asarray(rate_rps, dtype=float)
    O = np.asarray(output_len, dtype=float)
    ctx = np.asarray(input_len, dtype=float) + O / 2.0
    c = np.asarray(slots, dtype=float)

    def excess(r):
        return lam * O * np.asarray(decode_step(e, batch=np.maximum(r, 1e-9), context_tokens=ctx).step_s) - r

    stable = excess(c) < 0
    lo, hi = np.zeros(np.broadcast(lam, c, ctx).shape), np.broadcast_to(c, np.broadcast(lam, c, ctx).shape).astype(float)
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        pos = excess(mid) > 0
        lo, hi = np.where(pos, mid, lo), np.where(pos, hi, mid)
    return np.where(stable, (lo + hi) / 2.0, c), stable


def disaggregated_open_loop(pools: Pools, *, input_len, output_len, rate_rps, input_cv=0.0, percentile=95.0,
                            enable_chunked_prefill=True, input_quantile_tokens=None) -> DisaggOpenLoop:
    """Open loop (Poisson at λ) through P prefill and D decode instances:

        TTFT = TTFT_prefill(λ/P, O = 1) + t_kv(I) + t_req + t_api + W_api + 1.5·T(R)
        TPOT = T(R),  R = λ/D · O · T(R),  E2E = TTFT + (O − 1)·TPOT

    TTFT_prefill: :func:`calc.traffic.queueing.open_loop` of one prefill instance serving
    one-token requests (its queue, its batching, its API server); t_kv :func:`kv_transfer_s`;
    t_req the proxy's second request (:func:`decode_engine_numbers`); on the decode instance its
    API server (M/D/1) and the step that is running when the KV
    arrives (half a step on average) and its own step. Percentile q: the prefill percentile +
    t_kv + t_api + (1 + q)·T (the residual step at its q-quantile); TPOT at the batch's
    q-quantile R + z_q·√R. Round-robin dispatch makes each prefill instance's arrivals more
    regular than Poisson: the waits are scaled for it (see the code). ``input_quantile_tokens``: the
    percentile's own prompt where the lengths are cut to the window (as :func:`open_loop`'s).

    The transfer beside the percentile is the mean prompt's, not the percentile prompt's: the P95
    TTFT is mostly the prefill queue's wait, which a long prompt does not share, so adding the
    P95 prompt's transfer (the two quantiles as if one) overshoots. Measured against the simulator
    (Llama-3.1-8B H100 1P1D, 3,000 + 200 tokens, prompt CV 1.0, 5 GB/s, 2 and 4 req/s, 4,000
    requests): P95 −1.9 / −0.6 % with the mean prompt's transfer; the P95 prompt's adds ~170 ms.
    """
    lam = np.asarray(rate_rps, dtype=float)
    I, O = np.asarray(input_len, dtype=float), np.asarray(output_len, dtype=float)
    ep, ed = pools.prefill.engine, decode_engine_numbers(pools.decode.engine)
    pf = open_loop(ep, input_len=I, output_len=1, rate_rps=lam / pools.prefill_instances,
                   max_num_seqs=pools.prefill.max_num_seqs, max_num_batched_tokens=pools.prefill.max_num_batched_tokens,
                   kv_capacity_tokens=pools.prefill.memory.kv_sequence_tokens, input_cv=input_cv,
                   enable_chunked_prefill=enable_chunked_prefill, percentile=percentile,
                   input_quantile_tokens=input_quantile_tokens)
    # Round robin over P instances: each sees every P-th arrival (Erlang-P gaps, c_a² = 1/P), not a
    # Poisson stream; a queue's waits scale with (c_a² + c_s²)/2 (Kingman / Allen-Cunneen), so the
    # waits above the idle instance's TTFT are scaled by (1/P + c_s²)/(1 + c_s²), c_s = input_cv
    # (a prompt's prefill time ∝ its length).
    idle = open_loop(ep, input_len=I, output_len=1, rate_rps=lam * 0.0 + 1e-9,
                     max_num_seqs=pools.prefill.max_num_seqs, max_num_batched_tokens=pools.prefill.max_num_batched_tokens,
                     kv_capacity_tokens=pools.prefill.memory.kv_sequence_tokens, input_cv=input_cv,
                     enable_chunked_prefill=enable_chunked_prefill, percentile=percentile,
                     input_quantile_tokens=input_quantile_tokens)
    cs2 = np.asarray(input_cv, dtype=float) ** 2
    k = (1.0 / pools.prefill_instances + cs2) / (1.0 + cs2)
    pf_mean = idle.ttft_s + k * (pf.ttft_s - idle.ttft_s)
    pf_q = idle.ttft_percentile_s + k * (pf.ttft_percentile_s - idle.ttft_percentile_s)
    xfer = np.asarray(pools.transfer_s(I), dtype=float)
    lam_d = lam / pools.decode_instances
    c = decode_slots(pools.decode, input_len=I, output_len=O)
    R, dstable = decode_batch(ed, rate_rps=lam_d, input_len=I, output_len=O, slots=c)
    T = np.asarray(decode_step(ed, batch=np.maximum(R, 1.0), context_tokens=I + O / 2.0).step_s, dtype=float)
    t_api = np.asarray(ed.api_server_request_s, dtype=float)
    w_api, _ = mg1_wait_s(rate_rps=lam_d, service_s=t_api, service_m2_s2=t_api ** 2, service_m3_s3=t_api ** 3)
    q = np.asarray(percentile, dtype=float) / 100.0
    t_req = np.asarray(ed.request_overhead_s, dtype=float)  # the proxy's second request (decode_engine_numbers)
    first = t_req + t_api + w_api + 1.5 * T
    first_q = t_req + t_api + w_api + (1.0 + q) * T
    stable = np.asarray(pf.stable) & dstable & (lam_d * t_api < 1.0)

    def inf(x):
        return np.where(stable, x, np.inf)

    ttft = pf_mean + xfer + first
    # TPOT percentile: the batch a request meets fluctuates as an M/G/∞ population (Var R = R)
    z = normal_quantile(q)
    Tq = np.asarray(decode_step(ed, batch=np.minimum(np.maximum(R + z * np.sqrt(R), 1.0), c),
                                context_tokens=I + O / 2.0).step_s, dtype=float)
    return DisaggOpenLoop(ttft_s=inf(ttft), ttft_percentile_s=inf(pf_q + xfer + first_q),
                          # the decode pool's own: it does not depend on the prefill pool keeping up
                          tpot_s=np.where(dstable, T, np.inf), tpot_percentile_s=np.where(dstable, np.maximum(Tq, T), np.inf),
                          e2e_latency_s=inf(ttft + np.maximum(O - 1.0, 0.0) * T),
                          prefill_ttft_s=pf_mean, prefill_ttft_percentile_s=pf_q,
                          kv_transfer_s=xfer * np.ones_like(ttft), decode_first_s=first, decode_batch=R,
                          decode_slots=c, prefill_stable=np.asarray(pf.stable), decode_stable=dstable, stable=stable)


@dataclass(frozen=True)
class DisaggClosedLoop:
    """C clients without think time through an xPyD deployment (scalars, seconds)."""

    rate_rps: float  # the throughput λ where λ·E2E(λ) = C
    open_loop: DisaggOpenLoop  # the steady state at that rate
    client_wait_s: float  # past capacity: the wait of the clients the deployment cannot hold (in ttft_s)
    ttft_s: float
    e2e_latency_s: float
    saturated: bool


def disaggregated_closed_loop(pools: Pools, *, input_len, output_len, concurrency, input_cv=0.0,
                              enable_chunked_prefill=True) -> DisaggClosedLoop:
    """C clients, each sending its next request when the last one ends: the rate λ at which
    Little's law holds, λ·E2E(λ) = C, with E2E from :func:`disaggregated_open_loop` (its
    Poisson waits: a closed loop's arrivals are more regular, so this leans slow). Where even the
    highest stable rate λ_max holds fewer than C requests, the deployment runs at λ_max and the
    other clients wait in front: their wait (C − λ_max·E2E)/λ_max is added to TTFT and E2E.

    Hand check (no engine): if E2E were 15.6 s at every rate, 32 clients give λ = 32 / 15.6 = 2.05/s.
    """
    C = float(concurrency)
    if not C >= 1:
        raise ValueError(f"concurrency: got {concurrency!r}, allowed a whole number >= 1")

    def at(lam):
        return disaggregated_open_loop(pools, input_len=input_len, output_len=output_len, rate_rps=lam,
                                       input_cv=input_cv, enable_chunked_prefill=enable_chunked_prefill)

    def refine(lo, hi, ok):
        """[lo, hi] narrowed to the last grid rate where ``ok`` holds and the next (vectorized, 3 passes)."""
        for _ in range(3):
            grid = np.geomspace(lo, hi, 256)
            good = ok(grid, at(grid))
            k = int(np.flatnonzero(good)[-1]) if good.any() else 0
            lo, hi = float(grid[k]), float(grid[min(k + 1, grid.size - 1)])
        return lo, hi

    lam_max, _ = refine(1e-6, 1e6, lambda g, r: np.asarray(r.stable))  # the highest stable rate
    held_max = lam_max * float(at(lam_max).e2e_latency_s)
    if held_max <= C:
        a = at(lam_max)
        wait = (C - held_max) / lam_max
        return DisaggClosedLoop(rate_rps=lam_max, open_loop=a, client_wait_s=wait, ttft_s=float(a.ttft_s) + wait,
                                e2e_latency_s=float(a.e2e_latency_s) + wait, saturated=True)
    # λ·E2E(λ) rises with λ: the rate that holds C
    _, hi = refine(1e-6, lam_max, lambda g, r: g * np.asarray(r.e2e_latency_s) < C)
    a = at(hi)
    return DisaggClosedLoop(rate_rps=hi, open_loop=a, client_wait_s=0.0, ttft_s=float(a.ttft_s),
                            e2e_latency_s=float(a.e2e_latency_s), saturated=False)


@lru_cache(maxsize=1)
def published_checks() -> dict:
    """This model against published disaggregated and colocated runs, each asked as it was measured
    (calc/data/disaggregation_checks.json, written by ``bench/disaggregation_report.py --write`` from
    bench/data/disaggregation_measurements.jsonl): ``rows`` (id, source, confidence, role, metric,
    predicted, measured, error = predicted / measured - 1; role "fit" is the row an engine's speed was
    fitted on, "held_out" a row added after the model was set, "check" the rest) and the median
    |error| over the held-out rows, over all rows but the fit rows, over the rows measured on vLLM,
    and over the disaggregated / colocated ratios at the same concurrency.

    >>> c = published_checks()
    >>> c["n_all"] == sum(r["role"] != "fit" for r in c["rows"]) and c["n_held_out"] < c["n_all"]
    True
    >>> [r["id"] for r in c["rows"] if r["role"] == "fit"] == [f["row"] for f in c["engine_fits"]]
    True
    """
    with open(CHECKS_PATH) as fh:
        return json.load(fh)
