"""How well calc.traffic.train_table stands in for calc.traffic.arrival_trains.train_ttft_s:

1. interpolation: the table's mean against the mixture on random linear steps (log-uniform α,
   P/T_0, t_api/T_0 over the table's axes; T_0 5-100 ms; delay δ 2-200 ms, log-uniform; fixed
   part 0-60 ms), relative error;
2. linearity: the table assumes T_n = T_0 + n·P; calc.timing.serving.closed_loop takes P = T_1 − T_0
   (one prompt's step less the decode step). Over the catalog's models and GPUs (TP 1, where the
   weights and KV fit one GPU), prompt lengths and decode batches, how far prefill_step's T_n (n = 2 … 6) is from
   that line, and what that does to the mixture's mean at α = 0.3, 1, 3 (t_api 22 ms, fixed and δ 50 ms).

    .venv/bin/python bench/train_table_check.py     # a minute or two on one core
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.spec.catalog import get_gpu, list_models  # noqa: E402
from calc.spec.inputs import ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.timing.serving import decode_step, prefill_step  # noqa: E402
from calc.traffic.arrival_trains import train_ttft_s  # noqa: E402
from calc.traffic.train_table import AXES, train_mean_s  # noqa: E402

GPUS = ("a100-80gb", "h100-sxm", "h200", "l40s")
PROMPTS = np.array([128.0, 512.0, 1024.0, 2048.0, 4096.0])
BATCHES = np.array([4.0, 32.0, 128.0])


def interpolation(n=3000, seed=1):
    rng = np.random.default_rng(seed)

    def lu(lo, hi):
        return np.exp(rng.uniform(np.log(lo), np.log(hi), n))

    a, p, t = (lu(*ax[:2]) for ax in AXES)
    t0, fixed, delay = lu(0.005, 0.1), rng.uniform(0.0, 0.06, n), lu(2e-3, 0.2)
    ref, _ = train_ttft_s(step_s=lambda k: t0 + p * t0 * k, clump=a, fixed_s=fixed, api_s=t * t0, q=None,
                          delay_s=delay)
    got = train_mean_s(decode_step_s=t0, prompt_s=p * t0, clump=a, fixed_s=fixed, api_s=t * t0, delay_s=delay)
    err = np.abs(got / ref - 1.0)
    near = np.abs(delay / t0 - 1.0) < 0.05  # the cell that straddles the step at δ = T_0
    for name, sel in (("all", np.ones(n, bool)), ("α ≤ 4", a <= 4.0), ("|δ/T_0 − 1| < 5 %", near)):
        if not sel.any():
            continue
        e = err[sel]
        print(f"interpolation, {name} ({sel.sum()} configurations): |error| max {100 * e.max():.2f} %, "
              f"p99 {100 * np.percentile(e, 99):.2f} %, median {100 * np.median(e):.3f} %")


def linearity():
    dev, mean_err, rows, moe = [], [], [], []
    alpha = np.array([0.3, 1.0, 3.0])[:, None, None]
    for arch in list_models():
        for g in GPUS:
            try:
                est = estimate(arch, get_gpu(g), ServingConfig(max_model_len=8192))
            except Exception:  # noqa: BLE001 (a model the catalog cannot place on one GPU)
                continue
            if not bool(np.all(est.memory.fits)):  # weights and KV must fit one GPU
                continue
            e = est.engine
            I, R = PROMPTS[:, None], BATCHES[None, :]
            ctx = I + 128.0
            t0 = decode_step(e, batch=R, context_tokens=ctx).step_s

            def step(k):
                return t0 if k == 0 else prefill_step(e, prompts=float(k), prompt_tokens=I, decode_batch=R,
                                                      decode_context_tokens=ctx).step_s

            P = step(1) - t0
            d = np.max([np.abs(step(k) / (t0 + k * P) - 1.0) for k in range(2, 7)], axis=0)
            exact, _ = train_ttft_s(step_s=lambda k: np.broadcast_to(step(k), np.broadcast_shapes(alpha.shape, np.shape(t0))),
                                    clump=np.broadcast_to(alpha, alpha.shape[:1] + np.shape(t0)), fixed_s=0.05, api_s=0.022, q=None,
                                    delay_s=0.05)
            lin, _ = train_ttft_s(step_s=lambda k: np.broadcast_to(t0 + k * P, np.broadcast_shapes(alpha.shape, np.shape(t0))),
                                  clump=np.broadcast_to(alpha, alpha.shape[:1] + np.shape(t0)), fixed_s=0.05, api_s=0.022, q=None,
                                  delay_s=0.05)
            me = lin / exact - 1.0
            dev.append(d.ravel())
            mean_err.append(me.ravel())
            rows.append((arch.name, g, float(d.max()), float(np.abs(me).max()), float(me.min())))
            moe.append(np.full(me.size, bool(np.any(np.asarray(e.num_experts, dtype=float) > 1))))
    dev, mean_err, moe = np.concatenate(dev), np.concatenate(mean_err), np.concatenate(moe)
    print(f"linearity over {len(rows)} model x GPU pairs that fit one GPU x {PROMPTS.size} prompts x {BATCHES.size} batches:")
    print(f"  |T_n / (T_0 + n·P) − 1|, n = 2…6: median {100 * np.median(dev):.1f} %, p90 {100 * np.percentile(dev, 90):.1f} %, "
          f"max {100 * dev.max():.1f} %")
    print(f"  mixture mean, linear steps vs prefill_step's (α 0.3/1/3): median {100 * np.median(mean_err):+.2f} %, "
          f"p10 {100 * np.percentile(mean_err, 10):+.2f} %, p90 {100 * np.percentile(mean_err, 90):+.2f} %, "
          f"max |·| {100 * np.abs(mean_err).max():.1f} %")
    for name, sel in (("dense", ~moe), ("MoE", moe)):
        if sel.any():
            me = mean_err[sel]
            print(f"  {name}: mixture mean error median {100 * np.median(me):+.2f} %, p10 {100 * np.percentile(me, 10):+.2f} %, "
                  f"p90 {100 * np.percentile(me, 90):+.2f} %, max |·| {100 * np.abs(me).max():.1f} %")
    for name, g, d, m, lo in sorted(rows, key=lambda r: -r[3])[:5]:
        print(f"  worst: {name} {g}: step deviation max {100 * d:.1f} %, mean error max {100 * m:.1f} % (min {100 * lo:+.1f} %)")


if __name__ == "__main__":
    interpolation()
    linearity()
