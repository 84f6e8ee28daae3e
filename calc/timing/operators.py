"""The roofline table: every operator of a decode step and of a prefill step, at its arithmetic
intensity, with the bound that applies and its share of the step time (per GPU).

For operator o of one step (physics.md A3, A9):

    I_o        = FLOPs_o / bytes_o                                   (FLOP/byte)
    roof_o     = min(P_o, I_o · BW)                                  (datasheet roofline)
    t_o        = max(FLOPs_o / (P_o · η_c), bytes_o / (BW · η_m))    (calc.timing.perf: the modelled time)
    achieved_o = FLOPs_o / t_o          bound_o = compute if the first term wins, else memory
    share_o    = t_o / t_step,   t_step = Σ_o t_o + t_comm + t_overhead

P_o is the dense peak at the precision the kernel computes in (attention: 16-bit), BW the HBM
bandwidth, η the efficiencies of :class:`calc.spec.inputs.Efficiency`. The numbers are exactly the
ones the serving model uses (:func:`calc.timing.serving.decode_step` / :func:`calc.timing.serving.prefill_step`),
only laid out per operator. The utilisations of the step are

    MFU = Σ FLOPs / (t_step · P)        MBU = Σ bytes / (t_step · BW)

with P the peak of the linear layers' precision (Databricks' MBU definition, physics.md A9).
Arrays: every table field has the operator on axis 0 and the broadcast shape of
``decode_batch`` / ``context_tokens`` / ``prompt_tokens`` after it, so a batch slider or a batch
sweep is one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calc.timing.estimate import engine_numbers
from calc.spec.inputs import Efficiency, GPUSpec, ModelArch, ServingConfig
from calc.timing.perf import StepTime
from calc.timing.roofline import (OPERATORS, OpCosts, arithmetic_intensity, causal_attention_pairs, critical_batch_size,
                           ridge_point, windowed_context_tokens)
from calc.timing.serving import EngineNumbers, decode_step, engine_op_costs, prefill_step

PHASES: tuple[str, ...] = ("decode", "prefill")


@dataclass(frozen=True)
class Roof:
    """One horizontal compute roof: a precision the GPU's tensor cores run, and its dense peak."""

    precision: str  # "fp16", "bf16", "fp8", "int8"
    peak_flops_per_s: float
    ridge_flops_per_byte: float  # peak / HBM bandwidth


def compute_roofs(gpu: GPUSpec) -> tuple[Roof, ...]:
    """The GPU's dense tensor-core roofs: 16-bit always, FP8 and INT8 where it has them.

    FP16 and BF16 share one roof when their peaks are equal (every catalog GPU but FP32-accumulate
    consumer cards); INT8 is in ops/s, drawn on the same axis.

    >>> from calc.spec.catalog import get_gpu
    >>> [(r.precision, round(r.ridge_flops_per_byte)) for r in compute_roofs(get_gpu("a100-80gb"))]
    [('fp16', 153), ('int8', 306)]
    """
    bw = gpu.hbm_bw_bytes_per_s
    out = [("fp16", gpu.fp16_flops_per_s)]
    if gpu.bf16_flops_per_s != gpu.fp16_flops_per_s:
        out.append(("bf16", gpu.bf16_flops_per_s))
    if gpu.fp8_flops_per_s:
        out.append(("fp8", gpu.fp8_flops_per_s))
    if gpu.int8_ops_per_s:
        out.append(("int8", gpu.int8_ops_per_s))
    return tuple(Roof(precision=p, peak_flops_per_s=float(v),
                      ridge_flops_per_byte=float(ridge_point(peak_flops_per_s=v, hbm_bw_bytes_per_s=bw)))
                 for p, v in out)


@dataclass(frozen=True)
class OperatorTable:
    """One step laid out per operator (axis 0 follows ``operators``), per GPU, SI units."""

    phase: str  # "decode" | "prefill"
    operators: tuple[str, ...]
    tokens: np.ndarray  # tokens in the step: decode batch, or prompt tokens
    flops: np.ndarray
    weight_bytes: np.ndarray
    activation_bytes: np.ndarray
    kv_bytes: np.ndarray
    bytes: np.ndarray  # weights + activations + KV
    intensity_flops_per_byte: np.ndarray
    peak_flops_per_s: np.ndarray  # the roof this operator computes under
    attainable_flops_per_s: np.ndarray  # datasheet roofline min(peak, I · BW)
    achieved_flops_per_s: np.ndarray  # FLOPs / modelled time (efficiencies included)
    compute_s: np.ndarray
    memory_s: np.ndarray
    time_s: np.ndarray
    bound: np.ndarray  # "compute" | "memory"
    time_share: np.ndarray  # of the whole step (communication and overhead included)
    step_s: np.ndarray
    comm_s: np.ndarray
    overhead_s: np.ndarray
    mfu: np.ndarray
    mbu: np.ndarray

    def row(self, op: str) -> dict[str, np.ndarray]:
        """All fields of one operator (``row("mlp")["bound"]``)."""
        i = self.operators.index(op)
        return {name: getattr(self, name)[i] for name in _PER_OP}


_PER_OP = ("flops", "weight_bytes", "activation_bytes", "kv_bytes", "bytes", "intensity_flops_per_byte",
           "peak_flops_per_s", "attainable_flops_per_s", "achieved_flops_per_s", "compute_s", "memory_s",
           "time_s", "bound", "time_share")


def _stack(d: dict[str, np.ndarray], shape) -> np.ndarray:
    return np.stack([np.broadcast_to(np.asarray(d[o], dtype=float), shape) for o in OPERATORS])


def table_from_step(*, phase: str, tokens, costs: OpCosts, step: StepTime, peak_flops_per_s,
                    attention_peak_flops_per_s, hbm_bw_bytes_per_s) -> OperatorTable:
    """Lay out one step's :class:`~calc.timing.roofline.OpCosts` and :class:`~calc.timing.perf.StepTime` per operator."""
    shape = np.broadcast(np.asarray(step.step_s), np.asarray(tokens)).shape
    flops = _stack(costs.flops, shape)
    wb, ab, kb = (_stack(d, shape) for d in (costs.weight_bytes, costs.activation_bytes, costs.kv_bytes))
    nbytes = wb + ab + kb
    intensity = arithmetic_intensity(flops=flops, bytes_moved=nbytes)
    peak = np.stack([np.broadcast_to(np.asarray(attention_peak_flops_per_s if o == "attention" else peak_flops_per_s,
                                                dtype=float), shape) for o in OPERATORS])
    attainable = np.minimum(peak, intensity * hbm_bw_bytes_per_s)
    comp, memt, t = (_stack(d, shape) for d in (step.op_compute_s, step.op_memory_s, step.op_time_s))
    step_s = np.broadcast_to(np.asarray(step.step_s, dtype=float), shape)
    achieved = np.divide(flops, t, out=np.zeros_like(flops), where=t > 0)
    return OperatorTable(
        phase=phase, operators=OPERATORS, tokens=np.broadcast_to(np.asarray(tokens, dtype=float), shape),
        flops=flops, weight_bytes=wb, activation_bytes=ab, kv_bytes=kb, bytes=nbytes,
        intensity_flops_per_byte=intensity, peak_flops_per_s=peak, attainable_flops_per_s=attainable,
        achieved_flops_per_s=achieved, compute_s=comp, memory_s=memt, time_s=t,
        bound=np.where(comp > memt, "compute", "memory"), time_share=t / step_s, step_s=step_s,
        comm_s=np.broadcast_to(np.asarray(step.comm_s, dtype=float), shape),
        overhead_s=np.broadcast_to(np.asarray(step.overhead_s, dtype=float), shape),
        mfu=flops.sum(axis=0) / (step_s * np.asarray(peak_flops_per_s, dtype=float)),
        mbu=nbytes.sum(axis=0) / (step_s * np.asarray(hbm_bw_bytes_per_s, dtype=float)))


def decode_table(e: EngineNumbers, *, batch, context_tokens) -> OperatorTable:
    """A pure decode step: ``batch`` sequences, each attending ``context_tokens`` cached keys.

    Llama-2-7B FP16 on an A100-80GB, batch 1: the MLP streams 3·32·4096·11008·2 B = 8.66 GB of
    weights for 2 FLOPs per weight, so I = 1 FLOP/B: far left of the ridge (153), memory-bound.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> e = engine_numbers(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"), ServingConfig(dtype="float16"))
    >>> t = decode_table(e, batch=1, context_tokens=1024)
    >>> round(float(t.row("mlp")["intensity_flops_per_byte"]), 3), str(t.row("mlp")["bound"])
    (1.0, 'memory')
    """
    b = np.asarray(batch, dtype=float)
    ctx = np.asarray(context_tokens, dtype=float)
    # keys read per sequence, as calc.timing.serving.decode_step counts them (sliding-window layers: ≤ W)
    keys = windowed_context_tokens(context_tokens=ctx, sliding_window=e.sliding_window,
                                   sliding_fraction=e.sliding_fraction)
    costs = engine_op_costs(e, decode_tokens=b, decode_context_tokens_sum=b * keys, prefill_tokens=0.0,
                   prefill_attention_pairs=0.0, prefill_cached_tokens=0.0, logits_tokens=b)
    step = decode_step(e, batch=b, context_tokens=ctx)
    return table_from_step(phase="decode", tokens=b, costs=costs, step=step, peak_flops_per_s=e.peak_flops_per_s,
                           attention_peak_flops_per_s=e.attention_peak_flops_per_s,
                           hbm_bw_bytes_per_s=e.hbm_bw_bytes_per_s)


def prefill_table(e: EngineNumbers, *, prompt_tokens) -> OperatorTable:
    """A prefill step of one whole prompt of ``prompt_tokens`` tokens (nothing cached, no decodes).

    Linear layers reuse each weight for every prompt token, so I ≈ prompt tokens: compute-bound
    past the ridge; causal attention does c·(c + 1)/2 (query, key) pairs.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> e = engine_numbers(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"), ServingConfig(dtype="float16"))
    >>> str(prefill_table(e, prompt_tokens=2048).row("mlp")["bound"])
    'compute'
    """
    c = np.asarray(prompt_tokens, dtype=float)
    phi = np.asarray(e.sliding_fraction, dtype=float)  # as calc.timing.serving.prefill_step: windowed layers
    pairs = ((1.0 - phi) * causal_attention_pairs(new_tokens=c, cached_tokens=0.0)
             + phi * causal_attention_pairs(new_tokens=c, cached_tokens=0.0, window=e.sliding_window))
    costs = engine_op_costs(e, decode_tokens=0.0, decode_context_tokens_sum=0.0, prefill_tokens=c,
                   prefill_attention_pairs=pairs, prefill_cached_tokens=0.0, logits_tokens=np.ones_like(c))
    step = prefill_step(e, prompts=1.0, prompt_tokens=c)
    return table_from_step(phase="prefill", tokens=c, costs=costs, step=step, peak_flops_per_s=e.peak_flops_per_s,
                           attention_peak_flops_per_s=e.attention_peak_flops_per_s,
                           hbm_bw_bytes_per_s=e.hbm_bw_bytes_per_s)


@dataclass(frozen=True)
class RooflineResult:
    """Everything the roofline page shows for one scenario."""

    decode: OperatorTable
    prefill: OperatorTable
    roofs: tuple[Roof, ...]
    hbm_bw_bytes_per_s: float
    compute_peak_flops_per_s: float  # the linear layers' precision (the roof MFU is measured against)
    compute_precision_ridge_flops_per_byte: float
    critical_batch: float  # B* = P · b_w / (2 · BW): decode linear layers reach the ridge (KV ignored)
    bytes_per_weight: float
    engine: EngineNumbers


def roofline(arch: ModelArch, gpu: GPUSpec, serving: ServingConfig = ServingConfig(),
             efficiency: Efficiency = Efficiency(), *, decode_batch, context_tokens, prompt_tokens) -> RooflineResult:
    """Per-operator tables of a decode step (``decode_batch`` sequences at ``context_tokens``)
    and of a prefill step (one prompt of ``prompt_tokens``) for a scenario; arrays broadcast.

    The critical batch B* = P · b_w / (2 · BW) (physics.md A3) is where a decode step's linear
    layers, 2·B FLOPs per weight of b_w bytes, reach the ridge P / BW. KV reads push the real
    crossover later (attention's intensity does not grow with the batch).

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> r = roofline(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"), ServingConfig(dtype="float16"),
    ...              decode_batch=1, context_tokens=2048, prompt_tokens=2048)
    >>> round(r.critical_batch), round(r.compute_precision_ridge_flops_per_byte)   # 312e12·2/(2·2.039e12)
    (153, 153)
    """
    if np.any(np.asarray(decode_batch) < 1) or np.any(np.asarray(prompt_tokens) < 1) or np.any(np.asarray(context_tokens) < 0):
        raise ValueError("decode_batch and prompt_tokens must be >= 1, context_tokens >= 0")
    e = engine_numbers(arch, gpu, serving, efficiency)
    peak = float(e.peak_flops_per_s)
    bw = float(e.hbm_bw_bytes_per_s)
    return RooflineResult(
        decode=decode_table(e, batch=decode_batch, context_tokens=context_tokens),
        prefill=prefill_table(e, prompt_tokens=prompt_tokens),
        roofs=compute_roofs(gpu), hbm_bw_bytes_per_s=bw, compute_peak_flops_per_s=peak,
        compute_precision_ridge_flops_per_byte=float(ridge_point(peak_flops_per_s=peak, hbm_bw_bytes_per_s=bw)),
        critical_batch=float(critical_batch_size(peak_flops_per_s=peak, hbm_bw_bytes_per_s=bw,
                                                 bytes_per_weight=e.linear_bytes_per_param)),
        bytes_per_weight=float(e.linear_bytes_per_param), engine=e)


def first_compute_bound_batch(table: OperatorTable, *, op: str = "mlp") -> float:
    """Smallest batch of a decode sweep (``table`` over increasing batches) where ``op`` is
    compute-bound in the modelled time (efficiencies included); NaN if none in the sweep.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> e = engine_numbers(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"), ServingConfig(dtype="float16"))
    >>> first_compute_bound_batch(decode_table(e, batch=[1, 16, 4096], context_tokens=1024))
    4096.0
    """
    i = table.operators.index(op)
    hit = np.asarray(table.bound[i]) == "compute"
    return float(np.asarray(table.tokens)[np.argmax(hit)]) if hit.any() else float("nan")
