"""Step time of one engine step for the request-level simulator: the SAME physics as
:func:`calc.timing.serving.engine_step`, precomputed so that one call costs microseconds.

``engine_step`` is a NumPy function of six batch numbers (decode tokens d, Σ keys the decodes
read, prefill tokens p, Σ attention pairs of the chunks, Σ cached keys re-read, logits). A
simulator calls it once per step, tens of thousands of times per run, and a scalar NumPy call
costs ≈ 200 µs. Its structure lets us precompute everything that is expensive:

* every operator's FLOPs and bytes depend on the batch through N = d + p alone (linear layers,
  MoE experts touched and their rows per expert, elementwise) or linearly on the attention /
  logits counts. :class:`StepTimer` tabulates the N-only parts for N = 0 … N_max with ONE call of
  :func:`calc.timing.serving.engine_op_costs`, the TP all-reduce and per-step overhead with ONE
  call of ``engine_step`` itself, and reads the linear coefficients off ``engine_op_costs`` at
  unit inputs;
* the roofline combination of :func:`calc.timing.perf.step_time` is then evaluated in plain
  Python floats: η = p/N·η_prefill + (1 − p/N)·η_decode, linear operators at peak·η·N/(N + N_½)
  (routed experts at their rows per expert), attention at the attention peak·η, each
  max(compute, memory), + all-reduce + step overhead.

One source of truth: the constructor checks itself against ``engine_step`` on a set of batches;
if the physics in ``calc.timing`` has changed in a way this mirror does not follow, it says so
(``fast`` False) and every call goes to ``engine_step`` directly (correct, ≈ 7x slower).
``tests/test_traffic.py`` requires the fast path on every catalog model.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from calc.timing.roofline import OPERATORS
from calc.timing.serving import EngineNumbers, engine_op_costs, engine_step

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
        self._e = e
        n = np.arange(self.max_tokens + 1, dtype=float)
        zero = np.zeros_like(n)
        base = engine_op_costs(e, decode_tokens=n, decode_context_tokens_sum=zero, prefill_tokens=zero,
                               prefill_attention_pairs=zero, prefill_cached_tokens=zero, logits_tokens=zero)
        self._expert_flops = np.broadcast_to(np.asarray(getattr(base, "expert_flops", 0.0), dtype=float), n.shape).tolist()
        self._expert_rows = np.broadcast_to(np.asarray(getattr(base, "expert_rows", 1.0), dtype=float), n.shape).tolist()
        # all-reduce + per-step overhead: straight from engine_step over the N table
        st = engine_step(e, decode_tokens=n, decode_context_tokens_sum=zero, prefill_tokens=zero,
                         prefill_attention_pairs=zero, prefill_cached_tokens=zero, logits_tokens=zero)
        self._fixed = (np.broadcast_to(st.comm_s, n.shape) + np.broadcast_to(st.overhead_s, n.shape)).tolist()
        # steps with prefill tokens: the EP all-to-all runs its high-throughput kernels (expert_parallel)
        st_pf = engine_step(e, decode_tokens=zero, decode_context_tokens_sum=zero, prefill_tokens=n,
                            prefill_attention_pairs=zero, prefill_cached_tokens=zero, logits_tokens=zero)
        self._fixed_pf = (np.broadcast_to(st_pf.comm_s, n.shape) + np.broadcast_to(st_pf.overhead_s, n.shape)).tolist()
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
        self._xs = float(e.expert_flops_scale)  # routed experts' share of η (perf.step_time)
        self._n_half_x = self._n_half if e.expert_half_saturation_tokens is None else float(e.expert_half_saturation_tokens)
        self._seq_cpu = float(e.sequence_overhead_s)  # engine CPU per sequence (= per logits row)
        self._moe_fixed = float(e.moe_fixed_s)  # MoE layers' kernel floor, inside the MLP's time (perf.step_time)
        self._pf_slow = 1.0 / float(e.attention_prefill_scale)  # attention backend (calc.timing.attention_backend)
        self._dec_slow = 1.0 / float(e.attention_decode_scale)
        self._attn_fixed = float(e.attention_fixed_s)  # MLA layers' fixed time, inside the attention's time
        self._dense = tuple(o for o in LINEAR_OPS if o not in ("lm_head", "mlp"))
        self.fast = True
        self.fast = self._self_check()
        self.fast_runs = self.fast and self._check_runs()

    def _self_check(self) -> bool:
        """The fast path equals engine_step (relative 1e-9) on batches spread over the table."""
        rng = np.random.default_rng(12345)
        top = self.max_tokens
        for d, p in ((1, 0), (top // 2, 0), (0, top), (min(64, top), top - min(64, top)), (3, max(top // 3, 1) - 3)):
            d, p = max(d, 0), max(p, 0)
            if d + p == 0 or d + p > top:
                continue
            ctx = d * float(rng.uniform(1, 4000))
            pairs = p * float(rng.uniform(1, 2000))
            cached = float(rng.uniform(0, 4000)) if p else 0.0
            lg = d + (1 if p else 0)
            ref = float(engine_step(self._e, decode_tokens=float(d), decode_context_tokens_sum=ctx,
                                    prefill_tokens=float(p), prefill_attention_pairs=pairs,
                                    prefill_cached_tokens=cached, logits_tokens=float(lg)).step_s)
            if not abs(self._fast(d, ctx, p, pairs, cached, lg) - ref) <= 1e-9 * abs(ref):
                return False
        return True

    def _check_runs(self) -> bool:
        """:meth:`_fast_run` equals ``engine_step`` over a whole run (relative 1e-9)."""
        for batch in sorted({1, max(self.max_tokens // 3, 1), self.max_tokens}):
            ctx = batch * 700.0 + batch * np.arange(300, dtype=float)
            ref = self._engine_run(batch, ctx)
            if not np.all(np.abs(self._fast_run(batch, ctx) - ref) <= 1e-9 * np.abs(ref)):
                return False
        return True

    def decode_run(self, batch: int, ctx0: float, steps: int) -> np.ndarray:
        """Step seconds of ``steps`` pure decode steps of ``batch`` sequences whose keys read start at
        ``ctx0`` and grow by ``batch`` a step: ``engine_step(decode_tokens=B, decode_context_tokens_sum
        = ctx0 + j·B, logits_tokens=B).step_s`` for j = 0 … steps − 1, in one vector expression
        (:meth:`_fast_run`; ``engine_step`` itself where the mirror is out of date: ``fast_runs`` False)."""
        ctx = float(ctx0) + float(batch) * np.arange(int(steps), dtype=float)
        return self._fast_run(batch, ctx) if self.fast_runs else self._engine_run(batch, ctx)

    def _engine_run(self, batch: int, ctx: np.ndarray) -> np.ndarray:
        return np.broadcast_to(np.asarray(engine_step(
            self._e, decode_tokens=float(batch), decode_context_tokens_sum=ctx, prefill_tokens=0.0,
            prefill_attention_pairs=0.0, prefill_cached_tokens=0.0, logits_tokens=float(batch)).step_s, dtype=float),
            ctx.shape).copy()

    def _fast_run(self, batch: int, ctx: np.ndarray) -> np.ndarray:
        """With p = 0 only the attention term depends on the keys read, linearly in its FLOPs and bytes:

            t_j = T_B + max(F_B + f·ctx_j, M_B + m·ctx_j)

        T_B = everything of :meth:`_fast` but the attention's max, at batch B; F_B, M_B its N-only
        compute and memory seconds, f, m their slopes per key."""
        n = int(batch)
        if n > self.max_tokens:
            raise ValueError(f"step of {n} tokens exceeds the table ({self.max_tokens})")
        eta = self._eta_d
        c0 = self._flops["attention"][n] / (self._attn_peak * eta)
        m0 = self._bytes["attention"][n] / self._bw
        rest = self._fast(n, 0.0, 0, 0.0, 0.0, n) - max(c0, m0)  # T_B (the attention's fixed time included)
        c1 = self._fa[0] / (self._attn_peak * eta)
        m1 = self._ba[0] * self._dec_slow / self._bw
        return rest + np.maximum(c0 + c1 * ctx, m0 + m1 * ctx)

    def __call__(self, d, ctx, p, pairs, cached, logits) -> float:
        if self.fast:
            return self._fast(d, ctx, p, pairs, cached, logits)
        return float(engine_step(self._e, decode_tokens=float(d), decode_context_tokens_sum=float(ctx),
                                 prefill_tokens=float(p), prefill_attention_pairs=float(pairs),
                                 prefill_cached_tokens=float(cached), logits_tokens=float(logits)).step_s)

    def _fast(self, d, ctx, p, pairs, cached, logits) -> float:
        n_f = float(d + p)
        n = int(round(n_f))
        if n > self.max_tokens:
            raise ValueError(f"step of {n} tokens exceeds the table ({self.max_tokens})")
        ps = p / n_f if n_f > 0 else 0.0
        eta = ps * self._eta_p + (1.0 - ps) * self._eta_d
        m = n_f if n_f > 1.0 else 1.0
        rate = self._peak * eta * m / (m + self._n_half + 1e-30)
        bw = self._bw
        t = self._fixed_pf[n] if p > 0 else self._fixed[n]
        for o in self._dense:
            c = self._flops[o][n] / rate
            mm = self._bytes[o][n] / bw
            t += c if c > mm else mm
        # MLP: routed experts' GEMMs run at their rows per expert (perf.step_time)
        ef = self._expert_flops[n]
        c = (self._flops["mlp"][n] - ef) / rate
        if ef > 0:
            rows = self._expert_rows[n]
            rows = rows if rows > 1e-9 else 1e-9
            c += ef / (self._peak * eta * self._xs * rows / (rows + self._n_half_x + 1e-30))
        mm = self._bytes["mlp"][n] / bw
        t += (c if c > mm else mm) + (self._moe_fixed if n_f > 0 else 0.0)
        fa, ba = self._fa, self._ba
        # attention backend (perf.step_time): prompt pairs' FLOPs at s_p, the decodes' KV reads at s_d
        c = (self._flops["attention"][n] + ctx * fa[0] + pairs * fa[1] * self._pf_slow + cached * fa[2]) / (self._attn_peak * eta)
        mm = (self._bytes["attention"][n] + ctx * ba[0] * self._dec_slow + pairs * ba[1] + cached * ba[2]) / bw
        t += (c if c > mm else mm) + (self._attn_fixed if n_f > 0 else 0.0)
        c = (self._flops["lm_head"][n] + logits * self._lg[0]) / rate
        mm = (self._bytes["lm_head"][n] + logits * self._lg[1]) / bw
        t += c if c > mm else mm
        return t + self._seq_cpu * logits
