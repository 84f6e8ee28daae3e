"""Step time of one engine step from its operator costs (per GPU), with explicit efficiencies.

    t_op   = max(FLOPs / (peak · η_c(N)), bytes / (bandwidth · η_m))     (overlap: the roofline)
    t_step = Σ_op t_op + t_allreduce + t_overhead
The pessimistic bound replaces max by a sum. η_c(N) = η · N / (N + N_½): small-M GEMMs leave
tensor cores idle (tile/wave quantization); η is the prefill or decode fraction. MoE routed
experts run at η_c(N·k/touched), the rows each expert's GEMM gets, not at η_c(N). Every
function broadcasts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calc.timing.interconnect import CUSTOM_ALLREDUCE_MAX_BYTES, allreduce_time_s  # noqa: F401 (re-exported)
from calc.timing.roofline import OPERATORS, OpCosts, safe_ratio


def gemm_efficiency(*, tokens, max_fraction, half_saturation_tokens):
    """Achievable fraction of peak FLOP/s for a matmul with M = ``tokens`` rows:
    η · M / (M + M_½). Small-M GEMMs leave tensor cores idle (tile padding, too few tiles to
    fill every SM); the compute time 2·P·M / (peak·η(M)) = 2·P·(M + M_½) / (peak·η) is that of
    M + M_½ rows, which is below the weight-streaming time for decode-sized M, so decode stays
    memory-bound as it should. With M_½ = 64: 50 % of η at M = 64, 97 % of η at M = 2048.

    >>> round(float(gemm_efficiency(tokens=2048, max_fraction=0.7, half_saturation_tokens=64)), 3)
    0.679
    """
    m = np.asarray(tokens, dtype=float)
    return max_fraction * m / (m + half_saturation_tokens + 1e-30)


def _once(f):
    """A property computed on its first read and kept in the instance (frozen dataclasses too);
    unlike functools.cached_property on Python 3.11, no lock shared by every instance."""
    key = "_" + f.__name__

    def get(self):
        d = self.__dict__
        if key not in d:
            d[key] = f(self)
        return d[key]
    return property(get, doc=f.__doc__)


@dataclass(frozen=True)
class StepTime:
    """Time of one step (seconds) and its parts; arrays broadcast over the inputs."""

    op_time_s: dict[str, np.ndarray]  # per operator: max(compute, memory)
    op_compute_s: dict[str, np.ndarray]
    op_memory_s: dict[str, np.ndarray]
    comm_s: np.ndarray
    overhead_s: np.ndarray
    flops: np.ndarray  # all operators, per GPU
    bytes: np.ndarray
    fixed_s: object = 0.0  # kernel floors already inside op_time_s (the MoE and MLA layers' fixed times)

    @_once  # read several times per step (closed_loop); the dicts are never changed
    def step_s(self) -> np.ndarray:
        return sum(self.op_time_s[o] for o in OPERATORS) + self.comm_s + self.overhead_s

    @property
    def pessimistic_step_s(self) -> np.ndarray:
        """No compute/memory overlap: Σ (compute + memory) + kernel floors + comm + overhead."""
        return (sum(self.op_compute_s[o] + self.op_memory_s[o] for o in OPERATORS) + self.fixed_s
                + self.comm_s + self.overhead_s)

    @_once
    def compute_s(self) -> np.ndarray:
        return sum(self.op_compute_s[o] for o in OPERATORS)

    @_once
    def memory_s(self) -> np.ndarray:
        return sum(self.op_memory_s[o] for o in OPERATORS)

    @property
    def bound(self) -> np.ndarray:
        """``"compute"`` where compute time of the operators exceeds their memory time, else ``"memory"``."""
        return np.where(self.compute_s > self.memory_s, "compute", "memory")


def step_time(*, costs: OpCosts, tokens, prefill_tokens, peak_flops_per_s, attention_peak_flops_per_s,
              hbm_bw_bytes_per_s, hbm_bw_fraction, prefill_flops_fraction, decode_flops_fraction,
              gemm_half_saturation_tokens, step_overhead_s, tensor_parallel_size, num_layers,
              hidden_size, activation_bytes, link_bw_bytes_per_s, allreduce_latency_s,
              sequences=0.0, sequence_overhead_s=0.0,
              custom_allreduce=False, custom_allreduce_latency_s=0.0, custom_allreduce_bw_bytes_per_s=np.inf,
              custom_allreduce_max_bytes=CUSTOM_ALLREDUCE_MAX_BYTES, extra_comm_s=0.0,
              expert_flops_scale=1.0, expert_half_saturation_tokens=None, moe_fixed_s=0.0,
              attention_prefill_scale=1.0, attention_decode_scale=1.0, attention_fixed_s=0.0) -> StepTime:
    """Step time from operator costs: each operator at its roofline, then TP communication
    (two all-reduces per layer of tokens·h·b_act bytes each, :func:`calc.timing.interconnect.allreduce_time_s`:
    NCCL or vLLM's custom all-reduce by message size and link) and the engine's CPU time per step,
    t_cpu = step_overhead_s + sequence_overhead_s · sequences (scheduling, input preparation,
    sampling and output processing each touch every sequence of the step; vLLM 0.11 runs them
    between GPU steps, not beside them: async scheduling is off by default).
    Routed experts run at s_x · η_c(rows per expert), s_x = ``expert_flops_scale`` (the MoE
    kernel's share of the dense fractions, :func:`calc.timing.moe_kernels.expert_flops_scale`) with
    their own half-saturation rows where given (``expert_half_saturation_tokens``, None: the dense
    M_½; :func:`calc.timing.moe_kernels.expert_half_saturation_rows`). The MoE layers' fixed time
    ``moe_fixed_s`` (L_moe · t_0, :func:`calc.timing.moe_kernels.moe_fixed_time_s`) adds to the MLP
    operator's time of every step that has tokens. The attention backend's kernel
    (:mod:`calc.timing.attention_backend`) runs the prompt chunks' attention FLOPs at s_p · η of the
    attention peak and the decodes' KV reads at s_d of the achievable bandwidth
    (``attention_prefill_scale`` s_p, ``attention_decode_scale`` s_d; 1 for FlashAttention):
    t_attn = max(F_dec / (P_a·η) + F_pf / (P_a·η·s_p), B_dec / (BW·η_m·s_d) + B_rest / (BW·η_m)).
    The MLA layers' fixed time ``attention_fixed_s`` (L_mla · t_mla,
    :func:`calc.timing.mla_layers.mla_fixed_time_s`) is added to the attention operator's."""
    n = np.asarray(tokens, dtype=float)
    # Token-weighted blend of the prefill and decode fractions: a few prefill tokens riding
    # along many decodes barely change the kernels' efficiency (and never make a step faster).
    p_share = safe_ratio(prefill_tokens, n)
    eta = p_share * prefill_flops_fraction + (1.0 - p_share) * decode_flops_fraction
    gemm_eta = gemm_efficiency(tokens=np.maximum(n, 1.0), max_fraction=eta, half_saturation_tokens=gemm_half_saturation_tokens)
    bw = np.asarray(hbm_bw_bytes_per_s, dtype=float) * hbm_bw_fraction
    comp, memt, opt, op_bytes = {}, {}, {}, {}
    expert_eta = gemm_efficiency(tokens=np.maximum(np.asarray(costs.expert_rows, dtype=float), 1e-9),
                                 max_fraction=eta * np.asarray(expert_flops_scale, dtype=float),
                                 half_saturation_tokens=(gemm_half_saturation_tokens if expert_half_saturation_tokens is None
                                                         else expert_half_saturation_tokens))
    for op in OPERATORS:
        if op == "attention":
            rate = np.asarray(attention_peak_flops_per_s, dtype=float) * eta
        else:
            rate = np.asarray(peak_flops_per_s, dtype=float) * gemm_eta
        comp[op] = costs.flops[op] / rate
        if op == "attention":  # the backend's kernel: prompt FLOPs at s_p, decode KV reads at s_d
            f_pf = np.asarray(costs.attention_prefill_flops, dtype=float)
            comp[op] = comp[op] + f_pf / rate * (1.0 / np.asarray(attention_prefill_scale, dtype=float) - 1.0)
            b_dec = np.asarray(costs.attention_decode_kv_bytes, dtype=float)
            op_bytes[op] = costs.bytes(op)  # the bytes moved; the backend's slower reads are time, not bytes
            memt[op] = (op_bytes[op] + b_dec * (1.0 / np.asarray(attention_decode_scale, dtype=float) - 1.0)) / bw
            opt[op] = np.maximum(comp[op], memt[op])
            continue
        if op == "mlp":  # routed experts: their GEMMs have N·k/touched rows each
            ef = np.asarray(costs.expert_flops, dtype=float)
            comp[op] = (costs.flops[op] - ef) / rate + safe_ratio(ef, np.asarray(peak_flops_per_s, dtype=float) * expert_eta)
        op_bytes[op] = costs.bytes(op)
        memt[op] = op_bytes[op] / bw
        opt[op] = np.maximum(comp[op], memt[op])
    # MoE kernel floor (calc.timing.moe_kernels): inside the MLP's time, not in its compute or memory term
    moe_fixed = np.where(n > 0, np.asarray(moe_fixed_s, dtype=float), 0.0)
    opt["mlp"] = opt["mlp"] + moe_fixed
    attention_fixed = np.where(n > 0, np.asarray(attention_fixed_s, dtype=float), 0.0)
    opt["attention"] = opt["attention"] + attention_fixed
    per_ar = allreduce_time_s(tensor_parallel_size=tensor_parallel_size,
                              bytes_per_allreduce=n * hidden_size * activation_bytes,
                              link_bw_bytes_per_s=link_bw_bytes_per_s, latency_s=allreduce_latency_s,
                              custom_allreduce=custom_allreduce, custom_latency_s=custom_allreduce_latency_s,
                              custom_bw_bytes_per_s=custom_allreduce_bw_bytes_per_s,
                              custom_max_bytes=custom_allreduce_max_bytes)
    comm = 2.0 * np.asarray(num_layers) * per_ar + extra_comm_s  # + the EP all-to-all (expert_parallel)
    return StepTime(op_time_s=opt, op_compute_s=comp, op_memory_s=memt, comm_s=comm,
                    overhead_s=np.asarray(step_overhead_s, dtype=float)
                    + np.asarray(sequence_overhead_s, dtype=float) * np.asarray(sequences, dtype=float) + np.zeros_like(comm),
                    flops=costs.total_flops, fixed_s=moe_fixed + attention_fixed,
                    bytes=sum(op_bytes[o] for o in OPERATORS))  # costs.total_bytes, each operator's bytes summed once
