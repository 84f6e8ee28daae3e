"""Step time of one engine step for the request-level simulator: the SAME physics as
:func:`calc.timing.serving.engine_step`, precomputed so that one call costs microseconds.

``engine_step`` is a NumPy function of six batch numbers (decode tokens d, Σ keys the decodes
read, prefill tokens p, Σ attention pairs of the chunks, Σ cached keys re-read, logits). A
simulator calls it once per step, tens of thousands of times per run, and a scalar NumPy call
costs ≈ 200 µs. Its structure lets us precompute everything that is expensive:

* every operator's FLOPs and bytes depend on the batch through N = d + p alone (linear layers,
  MoE experts touched, elementwise, the TP all-reduce) or linearly on the attention / logits
  counts. :class:`StepTimer` tabulates the N-only parts for N = 0 … N_max with ONE call of
  :func:`calc.timing.serving.engine_op_costs` (so MoE's non-linear expert traffic is exact), and
  reads the linear coefficients off the same function at unit inputs;
* the roofline combination of :func:`calc.timing.perf.step_time` is then evaluated in plain
  Python floats: η = p/N·η_prefill + (1 − p/N)·η_decode, linear operators at peak·η·N/(N + N_½),
  attention at the attention peak·η, each max(compute, memory), + all-reduce + step overhead.

``tests/test_traffic_steptime.py`` checks this against ``engine_step`` to 1e-9 relative on
random batches of every catalog model (MoE, MLA, sliding window, TP), so there is one
source of truth: a change to the physics in ``calc.timing`` moves both or fails the test.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from calc.timing.perf import allreduce_time_s
from calc.timing.roofline import OPERATORS
from calc.timing.serving import EngineNumbers, engine_op_costs

LINEAR_OPS = tuple(o for o in OPERATORS if o != "attention")


def _scalar(e: EngineNumbers) -> None:
    bad = [f.name for f in fields(e) if np.ndim(getattr(e, f.name))]
    if bad:
        raise ValueError(f"StepTimer needs scalar engine numbers; array fields: {', '.join(bad)}")


class StepTimer:
    """``timer(d, ctx, p, pairs, cached, logits)`` → step seconds, equal to
    ``engine_step(e, decode_tokens=d, decode_context_tokens_sum=ctx, prefill_tokens=p,
    prefill_attention_pairs=pairs, prefill_cached_tokens=cached, logits_tokens=logits).step_s``
    for batches of at most ``max_tokens`` tokens (module docstring).

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.timing.estimate import engine_numbers
    >>> from calc.timing.serving import decode_step
    >>> e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
    >>> t = StepTimer(e, max_tokens=4096)
    >>> abs(t(64, 64 * 1500, 0, 0, 0, 64) - float(decode_step(e, batch=64, context_tokens=1500).step_s)) < 1e-12
    True
    """

    def __init__(self, e: EngineNumbers, *, max_tokens: int) -> None:
        _scalar(e)
        self.max_tokens = int(max_tokens)
        n = np.arange(self.max_tokens + 1, dtype=float)
        zero = np.zeros_like(n)
        base = engine_op_costs(e, decode_tokens=n, decode_context_tokens_sum=zero, prefill_tokens=zero,
                               prefill_attention_pairs=zero, prefill_cached_tokens=zero, logits_tokens=zero)
        # N-only FLOPs and bytes per operator, as Python lists (fast scalar indexing)
        self._flops = {o: np.broadcast_to(base.flops[o], n.shape).tolist() for o in OPERATORS}
        self._bytes = {o: np.broadcast_to(base.bytes(o), n.shape).tolist() for o in OPERATORS}

        def unit(**kw):
            args = dict(decode_tokens=0.0, decode_context_tokens_sum=0.0, prefill_tokens=0.0,
                        prefill_attention_pairs=0.0, prefill_cached_tokens=0.0, logits_tokens=0.0)
            args.update(kw)
            c = engine_op_costs(e, **args)
            return c, {o: float(c.flops[o]) - float(base.flops[o][0]) for o in OPERATORS}, \
                {o: float(c.bytes(o)) - float(np.broadcast_to(base.bytes(o), n.shape)[0]) for o in OPERATORS}

        _, f_ctx, b_ctx = unit(decode_context_tokens_sum=1.0)
        _, f_pairs, b_pairs = unit(prefill_attention_pairs=1.0)
        _, f_cached, b_cached = unit(prefill_cached_tokens=1.0)
        _, f_lg, b_lg = unit(logits_tokens=1.0)
        # Only attention and the LM head carry these terms (roofline.step_op_costs); check it.
        for name, d in (("ctx", f_ctx), ("pairs", f_pairs), ("cached", f_cached), ("ctx", b_ctx),
                        ("pairs", b_pairs), ("cached", b_cached)):
            if any(abs(d[o]) > 0 for o in OPERATORS if o != "attention"):
                raise ValueError(f"attention term {name} reaches another operator: StepTimer out of date")
        if any(abs(f_lg[o]) + abs(b_lg[o]) > 0 for o in OPERATORS if o != "lm_head"):
            raise ValueError("logits term reaches another operator: StepTimer out of date")
        self._fa = (f_ctx["attention"], f_pairs["attention"], f_cached["attention"])
        self._ba = (b_ctx["attention"], b_pairs["attention"], b_cached["attention"])
        self._lg = (f_lg["lm_head"], b_lg["lm_head"])
        self._peak = float(e.peak_flops_per_s)
        self._attn_peak = float(e.attention_peak_flops_per_s)
        self._bw = float(e.hbm_bw_bytes_per_s) * float(e.hbm_bw_fraction)
        self._eta_p = float(e.prefill_flops_fraction)
        self._eta_d = float(e.decode_flops_fraction)
        self._n_half = float(e.gemm_half_saturation_tokens)
        comm = 2.0 * float(e.num_layers) * allreduce_time_s(
            tensor_parallel_size=e.tensor_parallel_size, bytes_per_allreduce=n * e.hidden_size * e.activation_bytes,
            link_bw_bytes_per_s=e.link_bw_bytes_per_s, latency_s=e.allreduce_latency_s)
        self._fixed = (np.broadcast_to(comm, n.shape) + float(e.step_overhead_s)).tolist()
        self._dense = tuple(o for o in LINEAR_OPS if o != "lm_head")

    def __call__(self, d, ctx, p, pairs, cached, logits) -> float:
        n_f = float(d + p)
        n = int(round(n_f))
        if n > self.max_tokens:
            raise ValueError(f"step of {n} tokens exceeds the table ({self.max_tokens})")
        ps = p / n_f if n_f > 0 else 0.0
        eta = ps * self._eta_p + (1.0 - ps) * self._eta_d
        m = n_f if n_f > 1.0 else 1.0
        rate = self._peak * eta * m / (m + self._n_half + 1e-30)
        bw = self._bw
        t = self._fixed[n]
        for o in self._dense:
            c = self._flops[o][n] / rate
            mm = self._bytes[o][n] / bw
            t += c if c > mm else mm
        fa, ba = self._fa, self._ba
        c = (self._flops["attention"][n] + ctx * fa[0] + pairs * fa[1] + cached * fa[2]) / (self._attn_peak * eta)
        mm = (self._bytes["attention"][n] + ctx * ba[0] + pairs * ba[1] + cached * ba[2]) / bw
        t += c if c > mm else mm
        c = (self._flops["lm_head"][n] + logits * self._lg[0]) / rate
        mm = (self._bytes["lm_head"][n] + logits * self._lg[1]) / bw
        t += c if c > mm else mm
        return t
