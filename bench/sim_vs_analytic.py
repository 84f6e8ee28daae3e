"""Analytic closed loop vs the request-level simulator over a grid of models, GPUs, prompt/output
lengths and concurrencies (1 up to and past the KV wall), before and after the FCFS-wave
correction (calc.timing.serving.fcfs_wave).

    .venv/bin/python bench/sim_vs_analytic.py            # markdown table on stdout
    .venv/bin/python bench/sim_vs_analytic.py --quick    # the bounded grid tests/test_serving_wave.py holds
    .venv/bin/python bench/sim_vs_analytic.py --long     # steady state: long runs, output lengths spread
    .venv/bin/python bench/sim_vs_analytic.py --shapes   # every traffic shape against calc.traffic.queueing
    .venv/bin/python bench/sim_vs_analytic.py --chunks   # --long's runs where prompts span k > 1 chunked steps

--long (the issue-17 check): 30·C requests with lognormal output lengths (CV 0.5, as a dataset or
EOS gives), the first 10·C dropped, mean and P95 TTFT and mean E2E against `estimate` with that
spread (the spread-arrival steady state), the API server and request latency as defaults.

--shapes (issue 17): the three traffic shapes of calc.traffic.queueing — an open loop at 10-90 % of
capacity (Poisson), closed loops of C clients, bursts of N requests at t = 0 — over SHAPES_GRID
(Llama-3.1-8B H100, Qwen2.5-7B A100, Llama-3.1-70B FP8 TP 2 H100; fixed lengths and lognormal
CV 0.7), 4,000 requests with the first 25 % dropped (a burst: all of them), mean and P95 TTFT, and an
open loop's mean TPOT (issue 21: 96 → 100 % of the closed-form open-loop cells within 15 % with the prompt
clusters of calc/traffic/prompt_clusters.py).
"before" is what the calculator offered for the shape until then: the planner's full-batch
closed loop + the M/G/c slot wait (calc.plan.costs.slot_wait_s) for an open loop, `estimate`'s
spread steady state for a closed loop, `estimate --concurrency N` for a burst; they give a mean
only, so their P95 error is that of the mean. Capacity = `estimate`'s full-batch throughput.
About four minutes on one core.

Simulated: C clients started together (vLLM's benchmark with --max-concurrency C, fixed lengths),
6·C requests (at least 200), means over the requests after the first C (the initial burst is a
transient the steady-state formula does not describe). "before" = the spread-arrival model
(uniform_lengths=False), "after" = the default. ok = the result's closed_form flag.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402
from calc.traffic.simulator import EngineConfig, simulate  # noqa: E402
from calc.traffic.queueing import burst, closed_loop_ttft, open_loop  # noqa: E402
from calc.plan.costs import slot_wait_s  # noqa: E402
from calc.traffic.workload import LengthSpec, make_workload  # noqa: E402

MODELS = (("meta-llama/Llama-3.1-8B", "h100-sxm"), ("meta-llama/Llama-2-7b-hf", "a100-80gb"), ("Qwen/Qwen2.5-7B", "l40s"))
SHAPES = ((128, 128), (1024, 256), (2048, 128), (512, 8), (4096, 1024), (2048, 1))  # O = 1: prefill-only requests
CONCURRENCY = (1, 4, 16, 64, 256)
QUICK = ((MODELS[0], (1024, 256), (1, 16, 64, 128)), (MODELS[0], (512, 8), (4, 16)),
         (MODELS[1], (2048, 128), (1, 16)), (MODELS[2], (128, 128), (16, 256)),
         (MODELS[0], (2048, 1), (4, 64)), (MODELS[1], (173, 1), (256,)))  # one output token: W prompts per cycle


def compare(model: str, gpu: str, I: int, O: int, C: int, chunked: bool) -> dict:
    arch, g = get_model(model), get_gpu(gpu)
    sc = ServingConfig(input_len=I, output_len=O, concurrency=C, enable_chunked_prefill=chunked)
    # the engine alone (an offline engine's 2 ms hand-off, no API server): clients reach it all at once
    eff = Efficiency(api_server_request_s=0.0, request_overhead_s=2e-3)
    after = estimate(arch, g, sc, eff, uniform_lengths=True)  # the FCFS wave of clients started together
    before = estimate(arch, g, sc, eff, uniform_lengths=False).serving
    cfg = EngineConfig(max_num_seqs=int(after.max_num_seqs), max_num_batched_tokens=int(after.max_num_batched_tokens),
                       enable_chunked_prefill=chunked, num_blocks=int(after.memory.num_blocks), block_size=sc.block_size)
    w = make_workload(arrival="closed", num_requests=max(6 * C, 200), concurrency=C,
                      input_len=LengthSpec("fixed", I), output_len=LengthSpec("fixed", O))
    r = simulate(after.engine, w, cfg)
    a = after.serving
    return dict(model=arch.name, gpu=gpu, I=I, O=O, C=C, chunked=chunked,
                sim_ttft_s=float(np.mean(r.ttft_s[C:])), sim_e2e_s=float(np.mean(r.e2e_latency_s[C:])),
                before_ttft_s=float(before.ttft_s), before_e2e_s=float(before.e2e_latency_s),
                after_ttft_s=float(a.ttft_s), after_e2e_s=float(a.e2e_latency_s), wave_steps=float(a.wave_steps),
                closed_form=bool(a.closed_form), kv_wall=float(a.kv_sequences_at_mean_context), preemptions=r.total_preemptions)


def compare_long(model: str, gpu: str, I: int, O: int, C: int, *, output_cv: float = 0.5, tp: int = 1,
                 quantization: str = "auto", budget: int | None = None) -> dict:
    """Long-run steady state against the analytic spread model at the same length spread
    (``budget``: max_num_batched_tokens, None the GPU's default); also the simulated share of steps
    after the warm-up that carry prompt tokens and those steps per request."""
    arch, g = get_model(model), get_gpu(gpu)
    sc = ServingConfig(input_len=I, output_len=O, concurrency=C, tensor_parallel_size=tp, quantization=quantization,
                       max_model_len=I + 4 * O, max_num_batched_tokens=budget)
    est = estimate(arch, g, sc, uniform_lengths=False, output_cv=output_cv)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks), block_size=sc.block_size)
    w = make_workload(arrival="closed", num_requests=30 * C, concurrency=C, input_len=LengthSpec("fixed", I),
                      output_len=LengthSpec("lognormal", O, cv=output_cv), max_model_len=sc.max_model_len, seed=1)
    r = simulate(est.engine, w, cfg)
    k = 10 * C
    a = est.serving
    after = r.step_start_s >= r.arrival_s[k]
    prompt_steps = r.step_prefill_tokens[after] > 0
    return dict(model=arch.name, gpu=gpu, I=I, O=O, C=C, budget=int(est.max_num_batched_tokens),
                chunks=float(a.prefill_chunks), preemptions=int(r.total_preemptions),
                sim_prompt_step_share=float(np.mean(prompt_steps)),
                sim_prompt_steps_per_request=float(prompt_steps.sum() / max(int((r.arrival_s >= r.arrival_s[k]).sum()), 1)),
                sim_ttft_s=float(np.mean(r.ttft_s[k:])),
                sim_ttft_p95_s=float(np.percentile(r.ttft_s[k:], 95)), sim_e2e_s=float(np.mean(r.e2e_latency_s[k:])),
                ttft_s=float(a.ttft_s), e2e_s=float(a.e2e_latency_s), kv_wall=float(a.kv_sequences_at_mean_context))


LONG = ((("meta-llama/Llama-3.1-8B", "h100-sxm"), (1024, 256), (4, 16, 64, 128), 1, "auto"),
        (("meta-llama/Llama-3.1-70B", "h100-sxm"), (5000, 500), (10, 25), 2, "fp8"),
        (("meta-llama/Llama-2-7b-hf", "a100-80gb"), (2048, 128), (4, 16, 32), 1, "auto"),
        (("Qwen/Qwen2.5-7B", "l40s"), (128, 128), (16, 64, 256), 1, "auto"))


def long_main() -> None:
    pct = lambda a, b: f"{100 * (a / b - 1):+.0f} %"  # noqa: E731
    print("| model | GPU | I / O | C | sim TTFT mean | P95 | analytic TTFT | error | sim E2E | analytic | error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    et, ee = [], []
    for (model, gpu), (I, O), cs, tp, q in LONG:
        for C in cs:
            d = compare_long(model, gpu, I, O, C, tp=tp, quantization=q)
            print(f"| {d['model']} | {gpu} | {I} / {O} | {C} | {d['sim_ttft_s'] * 1e3:.0f} ms | "
                  f"{d['sim_ttft_p95_s'] * 1e3:.0f} ms | {d['ttft_s'] * 1e3:.0f} ms | {pct(d['ttft_s'], d['sim_ttft_s'])} | "
                  f"{d['sim_e2e_s']:.2f} s | {d['e2e_s']:.2f} s | {pct(d['e2e_s'], d['sim_e2e_s'])} |", flush=True)
            et.append(abs(d["ttft_s"] / d["sim_ttft_s"] - 1))
            ee.append(abs(d["e2e_s"] / d["sim_e2e_s"] - 1))
    print(f"\nTTFT |error| median {100 * np.median(et):.1f} %, max {100 * np.max(et):.1f} %, within 15 %: "
          f"{np.mean(np.array(et) <= 0.15) * 100:.0f} %; E2E |error| median {100 * np.median(ee):.1f} %, "
          f"max {100 * np.max(ee):.1f} %")


# --chunks: prompts of k > 1 chunked steps (calc/traffic/chunk_queue.py); (model, GPU, budget, I, O, concurrencies)
CHUNKS = (("meta-llama/Llama-2-7b-hf", "a100-80gb", None, 2048, 128, (4, 16, 32, 64)),
          ("meta-llama/Llama-2-7b-hf", "a100-80gb", None, 3000, 128, (4, 16, 32)),
          ("meta-llama/Llama-3.1-8B", "a100-80gb", None, 6000, 256, (4, 16, 32)),
          ("meta-llama/Llama-3.1-8B", "h100-sxm", 1024, 2500, 256, (8, 32, 64)),
          ("Qwen/Qwen2.5-7B", "l40s", None, 4000, 200, (4, 16)))


def chunks_main() -> None:
    """--chunks: the long runs of compare_long over CHUNKS, with the simulated step statistics
    and the analytic share of steps with prompt tokens (calc.traffic.chunk_queue)."""
    import calc.traffic.chunk_queue as cq  # noqa: PLC0415

    seen = {}
    model_fn = cq.chunk_queue

    def spy(**kw):  # the last evaluation of all elements is at the solved X (serving._chunk_queue_ttft)
        at = model_fn(**kw)
        per_step = at.per_step

        def spy_per_step(a, index=None, shape=None):
            out = per_step(a, index, shape)
            if index is None:
                seen["share"] = float(np.ravel(out[2])[0])
            return out

        at.per_step = spy_per_step
        return at

    cq.chunk_queue = spy
    print("| model | GPU | budget | I / O | C | k | sim TTFT mean | P95 | analytic | error | steps with prompts, "
          "sim / analytic | per request (sim) | preempt |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errs = []
    for model, gpu, budget, I, O, cs in CHUNKS:
        for C in cs:
            seen.clear()
            d = compare_long(model, gpu, I, O, C, budget=budget)
            err = d["ttft_s"] / d["sim_ttft_s"] - 1
            if not d["preemptions"]:
                errs.append(abs(err))
            print(f"| {d['model']} | {gpu} | {d['budget']} | {I} / {O} | {C} | {d['chunks']:.0f} | "
                  f"{d['sim_ttft_s'] * 1e3:.0f} ms | {d['sim_ttft_p95_s'] * 1e3:.0f} ms | {d['ttft_s'] * 1e3:.0f} ms | "
                  f"{100 * err:+.1f} % | {d['sim_prompt_step_share']:.3f} / {seen.get('share', float('nan')):.3f} | "
                  f"{d['sim_prompt_steps_per_request']:.2f} | {d['preemptions']} |", flush=True)
    e = np.array(errs)
    print(f"\nrows without preemption: {e.size}; TTFT |error| median {100 * np.median(e):.1f} %, max {100 * e.max():.1f} %, "
          f"within 15 %: {np.mean(e <= 0.15) * 100:.0f} %")


# (model, GPU, TP, weights, I, O) and per shape what varies: load (share of capacity), clients, requests
SHAPES_CASES = (("meta-llama/Llama-3.1-8B", "h100-sxm", 1, "auto", 1024, 256),
                ("Qwen/Qwen2.5-7B", "a100-80gb", 1, "auto", 2048, 128),
                ("meta-llama/Llama-3.1-70B", "h100-sxm", 2, "fp8", 3000, 300))
SHAPES_X = {"open": (0.1, 0.3, 0.5, 0.7, 0.9), "closed": (2, 8, 32, 128), "burst": (64, 512, 2048)}
SHAPES_CV = (0.0, 0.7)
SHAPES_REQUESTS = 4000
SHAPES_WARMUP = 0.25


def shapes_setup(model: str, gpu: str, tp: int, quantization: str, I: int, O: int):
    """(estimate at full batch, engine config, max_model_len) for one case of the --shapes grid."""
    arch = get_model(model)
    mml = min(int(arch.max_position_embeddings), 8 * (I + O))  # room for the lognormal tail
    sc = ServingConfig(input_len=I, output_len=O, tensor_parallel_size=tp, quantization=quantization, max_model_len=mml)
    est = estimate(arch, get_gpu(gpu), sc, uniform_lengths=False, concurrency=np.nan)
    cfg = EngineConfig(max_num_seqs=int(est.max_num_seqs), max_num_batched_tokens=int(est.max_num_batched_tokens),
                       enable_chunked_prefill=True, num_blocks=int(est.memory.num_blocks), block_size=sc.block_size)
    return est, cfg, mml


def compare_shape(model: str, gpu: str, tp: int, quantization: str, I: int, O: int, cv: float, shape: str, x,
                  *, num_requests: int = SHAPES_REQUESTS, seeds: tuple[int, ...] = (1,)) -> dict:
    """One point of the --shapes grid: simulated and analytic mean/P95 TTFT (s), before and after.

    ``seeds`` (open loops): several runs pooled, the first quarter of each dropped, and the analytic
    open loop asked at each run's own arrival rate over the requests judged (then averaged), as
    ``bench/traffic_spread.py`` asks near capacity: there one run's draws move its load more than the
    models differ (Qwen2.5-7B A100, lognormal 0.7, 90 % of capacity, 40,000 requests: the P95 of seeds 1 / 2 / 3
    2.83 / 3.36 / 2.92 s at 5.03 / 4.99 / 4.98 requests/s against a nominal 5.01)."""
    if shape == "open" and len(seeds) > 1:
        return _compare_open_seeds(model, gpu, tp, quantization, I, O, cv, x, num_requests=num_requests, seeds=seeds)
    est, cfg, mml = shapes_setup(model, gpu, tp, quantization, I, O)
    e = est.engine
    capacity = float(est.serving.requests_per_s)
    lengths = (lambda mean: LengthSpec("fixed", mean)) if cv == 0 else (lambda mean: LengthSpec("lognormal", mean, cv=cv))
    wl = dict(input_len=lengths(I), output_len=lengths(O), max_model_len=mml, seed=1)
    n = int(x) if shape == "burst" else num_requests
    if shape == "open":
        w = make_workload(arrival="poisson", num_requests=n, rate_per_s=x * capacity, **wl)
    elif shape == "closed":
        w = make_workload(arrival="closed", num_requests=n, concurrency=int(x), **wl)
    else:
        w = make_workload(arrival="burst", num_requests=n, **wl)
    r = simulate(e, w, cfg)
    skip = 0 if shape == "burst" else int(SHAPES_WARMUP * n)
    ttft = r.ttft_s[skip:]
    I_m, O_m = float(np.mean(r.input_len)), float(np.mean(r.output_len))  # the lengths after the cut at max_model_len
    args = dict(input_len=I_m, output_len=O_m, max_num_seqs=est.max_num_seqs,
                max_num_batched_tokens=est.max_num_batched_tokens, kv_capacity_tokens=est.memory.kv_pool_tokens,
                input_cv=cv, output_cv=cv)
    if shape == "open":
        a = open_loop(e, rate_rps=x * capacity, **args)
        s = est.serving  # before: the planner's full batch + the wait for a free slot
        before = float(s.ttft_s + slot_wait_s(rate_rps=x * capacity, capacity_rps=capacity, slots=s.running))
        ok = bool(a.closed_form)
        tpot = (float(np.nanmean(r.tpot_s[skip:])), float(a.tpot_s))  # an open loop's TPOT (issue 21)
    elif shape == "closed":
        a = closed_loop_ttft(e, concurrency=x, **args)
        before = float(estimate(get_model(model), get_gpu(gpu), ServingConfig(
            input_len=I, output_len=O, tensor_parallel_size=tp, quantization=quantization, max_model_len=mml),
            concurrency=int(x)).serving.ttft_s)
        ok = bool(a.closed_form)
    else:
        a = burst(e, num_requests=n, **args)
        before = float(estimate(get_model(model), get_gpu(gpu), ServingConfig(
            input_len=I, output_len=O, tensor_parallel_size=tp, quantization=quantization, max_model_len=mml),
            concurrency=n, uniform_lengths=cv == 0).serving.ttft_s)
        ok = True
    if shape != "open":
        tpot = (float("nan"), float("nan"))
    return dict(model=get_model(model).name, gpu=gpu, tp=tp, I=I, O=O, cv=cv, shape=shape, x=x,
                sim_tpot_s=tpot[0], tpot_s=tpot[1],
                sim_mean_s=float(np.mean(ttft)), sim_p95_s=float(np.percentile(ttft, 95)),
                before_s=before, mean_s=float(a.ttft_s), p95_s=float(a.ttft_percentile_s), closed_form=ok,
                preemptions=int(r.total_preemptions))


def _compare_open_seeds(model, gpu, tp, quantization, I, O, cv, x, *, num_requests, seeds) -> dict:
    """:func:`compare_shape` of an open loop over several seeds (its docstring)."""
    est, cfg, mml = shapes_setup(model, gpu, tp, quantization, I, O)
    capacity = float(est.serving.requests_per_s)
    lengths = (lambda mean: LengthSpec("fixed", mean)) if cv == 0 else (lambda mean: LengthSpec("lognormal", mean, cv=cv))
    ttft, tpot, means, p95s, tpots, ok, pre = [], [], [], [], [], True, 0
    skip = int(SHAPES_WARMUP * num_requests)
    for seed in seeds:
        w = make_workload(arrival="poisson", num_requests=num_requests, rate_per_s=x * capacity, input_len=lengths(I),
                          output_len=lengths(O), max_model_len=mml, seed=seed)
        r = simulate(est.engine, w, cfg)
        arrival = np.asarray(r.arrival_s)
        rate = (len(arrival) - skip - 1) / (arrival[-1] - arrival[skip])
        a = open_loop(est.engine, rate_rps=rate, input_len=float(np.mean(r.input_len)),
                      output_len=float(np.mean(r.output_len)), max_num_seqs=est.max_num_seqs,
                      max_num_batched_tokens=est.max_num_batched_tokens, kv_capacity_tokens=est.memory.kv_pool_tokens,
                      input_cv=cv, output_cv=cv)
        ttft.append(np.asarray(r.ttft_s[skip:]))
        tpot.append(np.asarray(r.tpot_s[skip:]))
        means.append(float(a.ttft_s))
        p95s.append(float(a.ttft_percentile_s))
        tpots.append(float(a.tpot_s))
        ok = ok and bool(a.closed_form)
        pre += int(r.total_preemptions)
    ttft, tpot = np.concatenate(ttft), np.concatenate(tpot)
    return dict(model=get_model(model).name, gpu=gpu, tp=tp, I=I, O=O, cv=cv, shape="open", x=x,
                sim_tpot_s=float(np.nanmean(tpot)), tpot_s=float(np.mean(tpots)),
                sim_mean_s=float(np.mean(ttft)), sim_p95_s=float(np.percentile(ttft, 95)),
                before_s=float("nan"), mean_s=float(np.mean(means)), p95_s=float(np.mean(p95s)), closed_form=ok,
                preemptions=pre)


def shapes_grid():
    for model, gpu, tp, q, I, O in SHAPES_CASES:
        for cv in SHAPES_CV:
            for shape, xs in SHAPES_X.items():
                for x in xs:
                    yield (model, gpu, tp, q, I, O, cv, shape, x)


def shapes_main() -> None:
    pct = lambda a, b: f"{100 * (a / b - 1):+.0f} %"  # noqa: E731
    print("| model | GPU | I / O | lengths | shape | load / C / N | sim TTFT mean | P95 | before (mean) | error | "
          "analytic mean | error | analytic P95 | error | closed form | preempt | TPOT sim / analytic (open) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for case in shapes_grid():
        d = compare_shape(*case)
        rows.append(d)
        x = f"{d['x']:.0%}" if d["shape"] == "open" else str(d["x"])
        print(f"| {d['model']} | {d['gpu']}{' TP ' + str(d['tp']) if d['tp'] > 1 else ''} | {d['I']} / {d['O']} | "
              f"{'fixed' if d['cv'] == 0 else 'lognormal CV ' + str(d['cv'])} | {d['shape']} | {x} | "
              f"{d['sim_mean_s'] * 1e3:.0f} ms | {d['sim_p95_s'] * 1e3:.0f} ms | {d['before_s'] * 1e3:.0f} ms | "
              f"{pct(d['before_s'], d['sim_mean_s'])} | {d['mean_s'] * 1e3:.0f} ms | {pct(d['mean_s'], d['sim_mean_s'])} | "
              f"{d['p95_s'] * 1e3:.0f} ms | {pct(d['p95_s'], d['sim_p95_s'])} | {'yes' if d['closed_form'] else 'NO'} | "
              f"{d['preemptions']} | " + (f"{d['sim_tpot_s'] * 1e3:.1f} / {d['tpot_s'] * 1e3:.1f} ms "
                                          f"({pct(d['tpot_s'], d['sim_tpot_s'])})" if d["shape"] == "open" else "") + " |",
              flush=True)
    print()
    print(shapes_summary(rows))
    tp = np.array([abs(d["tpot_s"] / d["sim_tpot_s"] - 1) for d in rows if d["shape"] == "open" and d["closed_form"]]) * 100
    if tp.size:
        print(f"\nopen loop TPOT (closed form): median / max |error| {np.median(tp):.0f} / {np.max(tp):.0f} %, "
              f"within 15 %: {np.mean(tp <= 15) * 100:.0f} %")


def shapes_summary(rows: list[dict]) -> str:
    """Per shape, the median / max absolute error of mean and P95 TTFT before and after over the
    rows the analytic model claims (closed form), and the flagged rows apart (markdown)."""
    def err(ds, key, ref):
        return np.array([abs(d[key] / d[ref] - 1) for d in ds]) * 100

    def mm(x):
        return f"{np.median(x):.0f} / {np.max(x):.0f} %" if x.size else "—"

    out = ["| shape | rows (flagged) | before, mean: median / max abs. error | before, P95 (its mean) | "
           "after, mean | after, P95 | after within 15 % (mean and P95) | flagged rows, after: mean / P95 max |",
           "|---|---|---|---|---|---|---|---|"]
    for shape in SHAPES_X:
        sel = [d for d in rows if d["shape"] == shape]
        ok = [d for d in sel if d["closed_form"]]
        bad = [d for d in sel if not d["closed_form"]]
        am, ap = err(ok, "mean_s", "sim_mean_s"), err(ok, "p95_s", "sim_p95_s")
        within = f"{np.mean((am <= 15) & (ap <= 15)) * 100:.0f} %" if ok else "—"
        flagged = (f"{np.max(err(bad, 'mean_s', 'sim_mean_s')):.0f} / {np.max(err(bad, 'p95_s', 'sim_p95_s')):.0f} %"
                   if bad else "—")
        out.append(f"| {shape} | {len(sel)} ({len(bad)}) | {mm(err(ok, 'before_s', 'sim_mean_s'))} | "
                   f"{mm(err(ok, 'before_s', 'sim_p95_s'))} | {mm(am)} | {mm(ap)} | {within} | {flagged} |")
    return "\n".join(out)


def grid(quick: bool):
    if quick:
        for (model, gpu), (I, O), cs in QUICK:
            for C in cs:
                yield compare(model, gpu, I, O, C, True)
        return
    for chunked in (True, False):
        for model, gpu in MODELS:
            for I, O in SHAPES:
                for C in CONCURRENCY:
                    yield compare(model, gpu, I, O, C, chunked)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--long", action="store_true", help="steady state of long runs with spread output lengths")
    ap.add_argument("--shapes", action="store_true", help="open loop, closed loop and burst against calc.traffic.queueing")
    ap.add_argument("--chunks", action="store_true", help="long runs whose prompts span several chunked steps")
    args = ap.parse_args()
    if args.chunks:
        chunks_main()
        return
    if args.shapes:
        shapes_main()
        return
    if args.long:
        long_main()
        return
    pct = lambda a, b: f"{100 * (a / b - 1):+.0f} %"  # noqa: E731
    print("| model | GPU | chunked | I / O | C | sim TTFT | before | after | sim E2E | before | after | W | closed form | preempt |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errs_t, errs_e = [], []
    for d in grid(args.quick):
        print(f"| {d['model']} | {d['gpu']} | {'on' if d['chunked'] else 'off'} | {d['I']} / {d['O']} | {d['C']} | "
              f"{d['sim_ttft_s'] * 1e3:.0f} ms | {pct(d['before_ttft_s'], d['sim_ttft_s'])} | "
              f"{pct(d['after_ttft_s'], d['sim_ttft_s'])} | {d['sim_e2e_s']:.2f} s | {pct(d['before_e2e_s'], d['sim_e2e_s'])} | "
              f"{pct(d['after_e2e_s'], d['sim_e2e_s'])} | {d['wave_steps']:.1f} | {'yes' if d['closed_form'] else 'NO'} | "
              f"{d['preemptions']} |", flush=True)
        if d["closed_form"] and np.isfinite(d["after_ttft_s"]):  # NaN: the analytic engine does not start
            errs_t.append(abs(d["after_ttft_s"] / d["sim_ttft_s"] - 1))
            errs_e.append(abs(d["after_e2e_s"] / d["sim_e2e_s"] - 1))
    if errs_t:
        print(f"\nclosed-form rows with an estimate: {len(errs_t)}; TTFT |error| median {100 * np.median(errs_t):.1f} %, "
              f"max {100 * np.max(errs_t):.1f} %, within 15 %: {np.mean(np.array(errs_t) <= 0.15) * 100:.0f} %; "
              f"E2E |error| median {100 * np.median(errs_e):.1f} %, max {100 * np.max(errs_e):.1f} %, "
              f"within 5 %: {np.mean(np.array(errs_e) <= 0.05) * 100:.0f} %")


if __name__ == "__main__":
    main()
