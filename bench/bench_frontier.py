"""Benchmark: the closed-loop serving model (calc.timing.serving.closed_loop) over a million
configurations in ONE vectorized call, against a per-configuration Python loop calling the same
function with scalars.

    .venv/bin/python bench/bench_frontier.py [--model meta-llama/Llama-3.1-8B] [--sample 2000] [--seed 0]

The grid is a full outer product, every axis its own array dimension (broadcasting, no Python
loop): GPU x concurrency x input_len x output_len x max_num_batched_tokens x chunked prefill
on/off. The GPUs are mixed in the same call by stacking their :class:`EngineNumbers` into array
fields (peak FLOP/s, bandwidth, link ...) along the first axis; the KV pool (tokens) and ``fits``
come from calc.sizing.scenario.memory_for per GPU and budget (the budget changes the activation
reserve). As in calc.timing.estimate, an unchunked budget is raised to the prompt length.

The loop runs a random sample and is extrapolated per configuration (all of it would take many
minutes); the sampled loop results must equal the vectorized ones exactly, field by field, and a
smaller sample is also checked against calc.timing.estimate.estimate (the pydantic path).
A report, not a test: nothing asserts a timing (the exit status is 1 only on a mismatch).
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.timing.estimate import engine_numbers, estimate  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.sizing.scenario import default_max_num_seqs, memory_for  # noqa: E402
from calc.timing.serving import EngineNumbers, ServingResult, closed_loop  # noqa: E402

GPUS = ("a100-80gb", "h100-sxm", "h200", "l40s")
CONCURRENCY = np.unique(np.rint(np.geomspace(1, 4096, 80))).astype(float)[:64]  # 64 values, 1 .. ~3000
INPUT_LENS = np.unique(np.rint(np.geomspace(16, 12_000, 32))).astype(float)     # 32 values
OUTPUT_LENS = np.unique(np.rint(np.geomspace(1, 4_000, 16))).astype(float)      # 16 values
BUDGETS = np.array([512, 1024, 2048, 4096, 8192, 12288, 16384, 32768], dtype=float)
CHUNKED = np.array([False, True])
MAX_MODEL_LEN = 16_384


def stacked_engine(engines: list[EngineNumbers], ndim: int) -> EngineNumbers:
    """One EngineNumbers whose fields that differ between GPUs are arrays along axis 0."""
    out = {}
    for f in dataclasses.fields(EngineNumbers):
        values = [getattr(e, f.name) for e in engines]
        if all(np.array_equal(values[0], v) for v in values[1:]):
            out[f.name] = values[0]
        else:
            out[f.name] = np.asarray(values, dtype=float).reshape((-1,) + (1,) * (ndim - 1))
    return EngineNumbers(**out)


def axis(values, i, ndim):
    shape = [1] * ndim
    shape[i] = len(values)
    return np.asarray(values).reshape(shape)


def build(model_id: str):
    arch = get_model(model_id)
    gpus = [get_gpu(g) for g in GPUS]
    base = ServingConfig(max_model_len=MAX_MODEL_LEN)
    engines = [engine_numbers(arch, g, base) for g in gpus]
    ndim = 6
    # KV pool and fits per GPU and budget (the profiled activation peak grows with the budget)
    kv = np.empty((len(gpus), len(BUDGETS)))
    fits = np.empty((len(gpus), len(BUDGETS)), dtype=bool)
    for i, g in enumerate(gpus):
        for j, b in enumerate(BUDGETS):
            m = memory_for(arch, g, ServingConfig(max_model_len=MAX_MODEL_LEN, max_num_batched_tokens=int(b)))
            kv[i, j], fits[i, j] = float(m.kv_pool_tokens), bool(m.fits)
    seqs = np.array([default_max_num_seqs(g) for g in gpus], dtype=float)
    inp, out = axis(INPUT_LENS, 2, ndim), axis(OUTPUT_LENS, 3, ndim)
    chunked = axis(CHUNKED, 5, ndim)
    budget = axis(BUDGETS, 4, ndim)
    args = dict(
        input_len=inp, output_len=out, concurrency=axis(CONCURRENCY, 1, ndim),
        max_num_seqs=seqs.reshape(-1, 1, 1, 1, 1, 1),
        max_num_batched_tokens=np.where(chunked, budget, np.maximum(budget, inp)),  # as calc.timing.estimate does
        enable_chunked_prefill=chunked,
        kv_capacity_tokens=kv.reshape(len(gpus), 1, 1, 1, len(BUDGETS), 1),
        fits=fits.reshape(len(gpus), 1, 1, 1, len(BUDGETS), 1),
        uniform_lengths=np.array(False),  # estimate()'s default: the steady state of spread clients
    )
    valid = (inp + out <= MAX_MODEL_LEN)  # configurations max_model_len admits (the others are still computed)
    return arch, gpus, engines, stacked_engine(engines, ndim), args, valid


def scalar_call(engines, args, index):
    """Configuration ``index`` (a tuple into the grid) as a scalar closed_loop call."""
    kw = {k: np.broadcast_to(v, np.broadcast_shapes(*(np.shape(a) for a in args.values())))[index].item()
          for k, v in args.items()}
    return closed_loop(engines[index[0]], **kw)


def compare(vec: ServingResult, index, one: ServingResult) -> list[str]:
    bad = []
    for f in dataclasses.fields(ServingResult):
        v = np.broadcast_to(getattr(vec, f.name), vec.ttft_s.shape)[index]
        s = np.asarray(getattr(one, f.name))
        same = np.array_equal(v, s, equal_nan=True) if v.dtype.kind == "f" else np.array_equal(v, s)
        if not same:
            bad.append(f"{f.name}: {v!r} != {s!r}")
    return bad


def peak_rss_bytes() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0  # Linux reports KiB


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="meta-llama/Llama-3.1-8B")
    ap.add_argument("--sample", type=int, default=2000, help="configurations run in the scalar loop")
    ap.add_argument("--estimate-sample", type=int, default=100, help="configurations checked through estimate()")
    ap.add_argument("--seed", type=int, default=0)
    opts = ap.parse_args(argv)
    rng = np.random.default_rng(opts.seed)

    t0 = time.perf_counter()
    arch, gpus, engines, stacked, args, valid = build(opts.model)
    build_s = time.perf_counter() - t0
    shape = np.broadcast_shapes(*(np.shape(a) for a in args.values()), np.shape(stacked.peak_flops_per_s))
    n = int(np.prod(shape))

    rss_before = peak_rss_bytes()
    t0 = time.perf_counter()
    vec = closed_loop(stacked, **args)  # ONE call over every configuration
    vec_s = time.perf_counter() - t0
    rss_after = peak_rss_bytes()

    flat = rng.choice(n, size=min(opts.sample, n), replace=False)
    sample = [np.unravel_index(i, shape) for i in flat]
    t0 = time.perf_counter()
    loop_results = [scalar_call(engines, args, ix) for ix in sample]
    loop_s = time.perf_counter() - t0
    per_config_s = loop_s / len(sample)
    mismatched = [(ix, bad) for ix, r in zip(sample, loop_results) if (bad := compare(vec, ix, r))]

    # the same numbers through the pydantic path (estimate) for valid, chunk-consistent configurations
    est_bad, est_n = 0, 0
    for ix in sample:
        if est_n >= opts.estimate_sample:
            break
        g, c, i, o, b, ch = ix
        if not valid[0, 0, i, o, 0, 0]:
            continue
        if not CHUNKED[ch] and BUDGETS[b] < MAX_MODEL_LEN:  # vLLM refuses to start (check_token_budget)
            continue
        est_n += 1
        s = ServingConfig(max_model_len=MAX_MODEL_LEN, input_len=int(INPUT_LENS[i]), output_len=int(OUTPUT_LENS[o]),
                          max_num_batched_tokens=int(BUDGETS[b]), enable_chunked_prefill=bool(CHUNKED[ch]),
                          concurrency=int(CONCURRENCY[c]))
        r = estimate(arch, gpus[g], s, Efficiency()).serving
        est_bad += bool(compare(vec, ix, r))

    fits = np.broadcast_to(vec.fits, shape)
    print(f"model:                      {arch.name}, max_model_len {MAX_MODEL_LEN:,}, default Efficiency")
    print(f"configurations:             {n:,} = {len(GPUS)} GPUs ({', '.join(GPUS)}) x {len(CONCURRENCY)} concurrency "
          f"x {len(INPUT_LENS)} input_len x {len(OUTPUT_LENS)} output_len x {len(BUDGETS)} max_num_batched_tokens "
          f"x 2 chunked (grid built in {build_s:.2f} s; {np.count_nonzero(np.broadcast_to(valid, shape)):,} have "
          f"input + output <= max_model_len)")
    print(f"vectorized, one call:       {vec_s:.3f} s")
    print(f"vectorized per million:     {vec_s / n * 1e6:.3f} s")
    print(f"scalar loop:                {len(sample):,} sampled configurations in {loop_s:.3f} s "
          f"= {per_config_s * 1e3:.3f} ms per configuration")
    print(f"loop extrapolated to all:   {per_config_s * n:,.0f} s  (sample x {n / len(sample):,.0f}; not run in full)")
    print(f"ratio loop / vectorized:    {per_config_s * n / vec_s:,.0f}x")
    print(f"peak RSS:                   {rss_after / 2**30:.2f} GiB after the call ({rss_before / 2**30:.2f} GiB before)")
    print(f"fits: {int(np.count_nonzero(fits)):,} of {n:,}; limited_by: " + ", ".join(
        f"{k} {int(np.count_nonzero(np.broadcast_to(vec.limited_by, shape) == k)):,}"
        for k in ("none", "max_num_seqs", "kv_cache", "max_num_batched_tokens")))
    n_fields = len(dataclasses.fields(ServingResult))
    print(f"check loop == vectorized:   {len(sample) - len(mismatched):,} of {len(sample):,} sampled configurations "
          f"identical in all {n_fields} fields (exact equality)")
    print(f"check estimate == grid:     {est_n - est_bad} of {est_n} sampled configurations identical through "
          "ServingConfig + estimate()")
    for ix, bad in mismatched[:5]:
        print(f"  MISMATCH config {tuple(int(x) for x in ix)}: {'; '.join(bad[:3])}")
    return 1 if mismatched or est_bad else 0


if __name__ == "__main__":
    sys.exit(main())
