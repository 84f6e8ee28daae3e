"""Benchmark: calc.sizing.scenario.memory_model over a million configurations in ONE vectorized call,
against a per-configuration Python loop calling the same function with scalars.

    .venv/bin/python bench/bench_memory.py [--configs 1048576] [--sample 2000] [--seed 0]

Configurations are random mixes of catalog model x precision x GPU x TP (1/2/4/8) x
gpu_memory_utilization x block size x max_model_len x concurrency x context. Each model/precision
is turned into numbers once (:func:`calc.sizing.scenario.model_numbers`), stacked into small NumPy tables,
and gathered by index into per-configuration arrays. The loop runs over a random sample and is
extrapolated per configuration (it would take minutes over all of them); the output says so.
The sampled loop results must equal the vectorized ones exactly, field by field, and a smaller
sample is also checked against :func:`calc.sizing.scenario.memory_for` (the pydantic path).

The mix is uniform over the grid, so it includes layouts vLLM would refuse (TP 8 for a model with
28 heads) and models that do not fit; memory_model evaluates them all (``fits`` is data).

A report, not a test: nothing here asserts a timing (the exit status is 1 only on a mismatch).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.spec.catalog import list_gpus, list_models  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.sizing.memory import sampler_bytes_per_logit  # noqa: E402
from calc.sizing.scenario import (DEFAULT_SM_COUNT, MemoryResult, all_to_all_nvlink,  # noqa: E402
                                  default_max_num_batched_tokens, default_max_num_seqs, memory_for, memory_model,
                                  model_numbers)

# (dtype, quantization, kv_cache_dtype)
PRECISIONS = [("bfloat16", "none", "auto"), ("bfloat16", "fp8", "auto"), ("bfloat16", "none", "fp8"),
              ("bfloat16", "fp8", "fp8"), ("float16", "awq", "auto"), ("float16", "gptq", "fp8")]
TPS = np.array([1, 2, 4, 8])
BLOCK_SIZES = np.array([8, 16, 32, 64, 128])
MAX_MODEL_LENS = np.array([2048, 4096, 8192, 32768, 131072])

# memory_model arguments that come from the model/precision table, and from the GPU table
MODEL_FIELDS = ("sharded_weight_bytes", "replicated_weight_bytes", "kv_proj_bytes_per_head", "num_kv_heads",
                "kv_bytes_per_token_per_head_full", "kv_bytes_per_token_per_head_sliding", "sliding_window",
                "hidden_size", "ffn_intermediate_per_token", "num_heads", "head_dim", "vocab_size",
                "activation_bytes", "activation_num_kv_heads", "experts_per_token", "expert_intermediate_size",
                "sampler_bytes_per_logit", "chunked_local")
GPU_FIELDS = ("usable_memory_bytes", "max_num_seqs", "max_num_batched_tokens", "topk_scratch_rows", "all_to_all_link")


def model_table():
    """One row per (catalog model, precision): the numbers memory_model needs (as memory_for maps them)."""
    rows, labels = [], []
    for arch in list_models():
        for dtype, quant, kv in PRECISIONS:
            n = model_numbers(arch, dtype=dtype, quantization=quant, kv_cache_dtype=kv)
            mla = arch.mla is not None
            rows.append(dict(
                sharded_weight_bytes=n.sharded_weight_bytes, replicated_weight_bytes=n.replicated_weight_bytes,
                kv_proj_bytes_per_head=n.kv_proj_bytes_per_head, num_kv_heads=n.num_kv_heads,
                kv_bytes_per_token_per_head_full=n.kv_bytes_per_token_per_head_full,
                kv_bytes_per_token_per_head_sliding=n.kv_bytes_per_token_per_head_sliding,
                sliding_window=n.sliding_window, hidden_size=arch.hidden_size,
                ffn_intermediate_per_token=n.ffn_intermediate_per_token, num_heads=arch.num_attention_heads,
                head_dim=arch.mla.qk_nope_head_dim + arch.mla.qk_rope_head_dim if mla else arch.head_dim,
                vocab_size=arch.vocab_size, activation_bytes=n.activation_bytes,
                activation_num_kv_heads=arch.num_attention_heads if mla else arch.num_key_value_heads,
                experts_per_token=n.experts_per_token, expert_intermediate_size=n.expert_intermediate_size,
                sampler_bytes_per_logit=sampler_bytes_per_logit(activation_bytes=n.activation_bytes),
                chunked_local=n.chunked_local,  # Llama 4's chunked local attention layers
                max_position_embeddings=arch.max_position_embeddings))
            labels.append((arch, dtype, quant, kv))
    return {k: np.array([r[k] for r in rows]) for k in rows[0]}, labels


def gpu_table():
    gpus = list_gpus()
    return {"usable_memory_bytes": np.array([g.usable_memory_bytes for g in gpus], dtype=float),
            "max_num_seqs": np.array([default_max_num_seqs(g) for g in gpus]),
            "max_num_batched_tokens": np.array([default_max_num_batched_tokens(g) for g in gpus]),
            "topk_scratch_rows": np.array([g.sm_count or DEFAULT_SM_COUNT for g in gpus]),
            "all_to_all_link": np.array([all_to_all_nvlink(g) for g in gpus])}, gpus


def random_configs(n: int, rng: np.random.Generator, models: dict, gpus: dict) -> tuple[dict, dict]:
    """Per-configuration argument arrays for memory_model, and the indices they were drawn from."""
    n_models, n_gpus = len(models["hidden_size"]), len(gpus["usable_memory_bytes"])
    idx = dict(model=rng.integers(0, n_models, n), gpu=rng.integers(0, n_gpus, n), tp=rng.integers(0, len(TPS), n),
               block=rng.integers(0, len(BLOCK_SIZES), n), mml=rng.integers(0, len(MAX_MODEL_LENS), n))
    max_model_len = np.minimum(MAX_MODEL_LENS[idx["mml"]], models["max_position_embeddings"][idx["model"]])
    eff = Efficiency()
    args = {k: models[k][idx["model"]] for k in MODEL_FIELDS}
    args |= {k: gpus[k][idx["gpu"]] for k in GPU_FIELDS}
    args |= dict(
        tensor_parallel_size=TPS[idx["tp"]],
        gpu_memory_utilization=rng.uniform(0.5, 0.98, n),
        block_size=BLOCK_SIZES[idx["block"]],
        max_model_len=max_model_len,
        concurrency=np.rint(np.exp(rng.uniform(0.0, np.log(1024.0), n))).astype(np.int64),  # log-uniform 1..1024
        context_tokens=rng.integers(1, max_model_len + 1),  # 1..max_model_len
        non_torch_overhead_bytes=eff.non_torch_overhead_bytes,
        nccl_overhead_bytes=eff.nccl_overhead_bytes,
        nccl_per_peer_bytes=eff.nccl_per_peer_bytes,
        allocator_workspace_bytes=eff.allocator_workspace_bytes,
        live_hidden_buffers=eff.activation_live_hidden_buffers,
        cuda_context_and_graphs_bytes=eff.cuda_context_bytes + eff.cuda_graph_bytes,
    )
    return args, idx


def scalar_args(args: dict, i: int) -> dict:
    """Configuration i as plain Python scalars."""
    return {k: (v[i].item() if isinstance(v, np.ndarray) else v) for k, v in args.items()}


def field_at(value, i: int):
    a = np.asarray(value)
    return a if a.ndim == 0 else a[i]


def compare(vectorized: MemoryResult, i: int, scalar: MemoryResult) -> list[str]:
    """Fields of configuration i that differ between the vectorized and the scalar result."""
    bad = []
    for f in dataclasses.fields(MemoryResult):
        v, s = field_at(getattr(vectorized, f.name), i), np.asarray(getattr(scalar, f.name))
        if not np.array_equal(v, s):
            bad.append(f"{f.name}: {v!r} != {s!r}")
    return bad


def check_against_memory_for(args, idx, labels, gpus, sample, vectorized) -> int:
    """The gathered arrays mean what memory_for means: same numbers through the pydantic path."""
    mismatches = 0
    for i in sample:
        arch, dtype, quant, kv = labels[idx["model"][i]]
        serving = ServingConfig(tensor_parallel_size=int(args["tensor_parallel_size"][i]), dtype=dtype,
                                quantization=quant, kv_cache_dtype=kv,
                                gpu_memory_utilization=float(args["gpu_memory_utilization"][i]),
                                block_size=int(args["block_size"][i]), max_model_len=int(args["max_model_len"][i]),
                                input_len=1, output_len=1)
        r = memory_for(arch, gpus[idx["gpu"][i]], serving, Efficiency(),
                       concurrency=int(args["concurrency"][i]), context_tokens=int(args["context_tokens"][i]),
                       sequence_tokens=int(args["context_tokens"][i]))  # memory_model's default: the context
        mismatches += bool(compare(vectorized, i, r))
    return mismatches


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", type=int, default=2**20)
    ap.add_argument("--sample", type=int, default=2000, help="configurations run in the scalar loop")
    ap.add_argument("--seed", type=int, default=0)
    opts = ap.parse_args(argv)
    rng = np.random.default_rng(opts.seed)

    t0 = time.perf_counter()
    models, labels = model_table()
    gpus, gpu_list = gpu_table()
    args, idx = random_configs(opts.configs, rng, models, gpus)
    build_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    vec = memory_model(**args)  # ONE call over every configuration
    vec_s = time.perf_counter() - t0

    sample = rng.choice(opts.configs, size=min(opts.sample, opts.configs), replace=False)
    scalar_calls = [scalar_args(args, i) for i in sample]
    t0 = time.perf_counter()
    loop_results = [memory_model(**kw) for kw in scalar_calls]
    loop_s = time.perf_counter() - t0
    per_config_s = loop_s / len(sample)

    mismatched = [(i, bad) for i, r in zip(sample, loop_results) if (bad := compare(vec, i, r))]
    pydantic_sample = sample[:200]
    mf_mismatches = check_against_memory_for(args, idx, labels, gpu_list, pydantic_sample, vec)

    n = opts.configs
    print(f"configurations:             {n:,} ({len(labels)} model/precision rows x {len(gpu_list)} GPUs x TP "
          f"{'/'.join(map(str, TPS))} x utilization x block {'/'.join(map(str, BLOCK_SIZES))} x max_model_len "
          f"x concurrency x context; arrays built and gathered in {build_s:.2f} s)")
    print(f"vectorized, one call:       {vec_s:.3f} s")
    print(f"vectorized per million:     {vec_s / n * 1e6:.3f} s")
    print(f"scalar loop:                {len(sample):,} sampled configurations in {loop_s:.3f} s "
          f"= {per_config_s * 1e6:.1f} us per configuration")
    print(f"loop extrapolated to all:   {per_config_s * n:.1f} s  (sample x {n / len(sample):,.0f}; not run in full)")
    print(f"ratio loop / vectorized:    {per_config_s * n / vec_s:,.0f}x")
    print(f"fits: {int(np.count_nonzero(vec.fits)):,} of {n:,} configurations "
          f"({np.count_nonzero(vec.fits) / n:.1%}); concurrency fits: {int(np.count_nonzero(vec.concurrency_fits)):,}")
    n_fields = len(dataclasses.fields(MemoryResult))
    print(f"check loop == vectorized:   {len(sample) - len(mismatched):,} of {len(sample):,} sampled configurations "
          f"identical in all {n_fields} fields (exact equality)")
    print(f"check memory_for == gather: {len(pydantic_sample) - mf_mismatches} of {len(pydantic_sample)} sampled "
          "configurations identical through ServingConfig + memory_for")
    for i, bad in mismatched[:5]:
        print(f"  MISMATCH config {i}: {'; '.join(bad[:3])}")
    return 1 if mismatched or mf_mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
