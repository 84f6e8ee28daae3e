"""Why bursts come out too fast: candidate API-server mechanisms tried against the measured bursts.

    .venv/bin/python bench/burst_mechanisms.py [--rows ID,ID,...]

A diagnostic, not a model: it asks every ``burst`` row of ``bench/data/vllm_benchmarks.jsonl``
(and the kept-back ``vllm_found.jsonl`` rows) exactly as ``bench/calibration_report.py`` does
(:func:`calc.cli.measured.ask_row`, ``simulate --arrival burst``), once with today's physics and
once per candidate mechanism, and prints each metric's error (predicted / measured - 1). The
candidates change the simulator only inside this script (``unittest.mock.patch``); none is in
``calc/`` because none holds on every host (module result below).

Candidates (vLLM 0.11's OpenAI server is one Python process, asyncio; the engine core is another):

* ``round-robin entry`` (share ``f`` of each request's API time, t_api, done before any request of a
  simultaneous group is through): asyncio runs every ready task to its next ``await`` in turn, and a
  request's entry (FastAPI body parse, chat template, tokenization, ``add_request``) has several; so
  N requests that arrive together leave the API server together, request i at
  d_i = f·N·t_api + (1 − f)·(i + 1)·t_api instead of FIFO's (i + 1)·t_api (f = 0: FIFO; f → 1:
  processor sharing, all at N·t_api). Mean entry f·N·t_api + (1 − f)·N·t_api/2.
* ``output stage`` (c seconds of API-server CPU per streamed token per running request:
  detokenization in ``OutputProcessor``, one ``ChatCompletionStreamResponse`` serialized and written
  per chunk): a pipeline stage beside the engine, so a step as the client sees it lasts
  max(T_gpu, R·c). At the closed loops' batches (R ≤ 8, R·c ≈ 1 ms ≪ 7 ms) it is hidden, which
  is why it is not in ``sequence_overhead_s`` (a serial cost, fitted there at 35 µs/sequence).
* ``gpu x k`` (MoE on A100 only, to attribute the error, not a mechanism): every FLOP and byte
  fraction times k. Where throughput is over-predicted by the same factor that TTFT and TPOT are
  under-predicted, the step time, not the API server, is what is missing.

Sources for the candidates (issues corpus): vLLM #25301 (2025-09, the 0.10/0.11 server tokenizes
through ``ThreadPoolExecutor(max_workers=1)``, so tokenization is one FIFO queue beside the event
loop); PR #12287 (V1 output processing, i.e. detokenization, split into chunks because it blocked
the event loop); PR #10635 (tokenization moved off the event loop because it blocked it); vLLM
#39963 (``vllm bench serve``'s own aiohttp session throttles long-context runs: a client-side
artifact, with TTFT 134 s against 1.3 s from another tool on the same server).

Also printed per row: the mean number of streams decoding, R̄ = output tokens/s × TPOT (Little's
law over the run, measured and predicted): the measured bursts keep 1.2-1.5x more streams in
flight than the simulator at the same throughput.

Result (run 2026-12-01; vLLM 0.11 gpustack rows, and kvcached PR 331's vLLM 0.19 burst kept back):

* Round-robin entry, f = 0.5 at the default t_api = 22 ms, brings the single-GPU hosts' TTFT
  within 10 % (q14h-sharegpt -49 → -9 %, q14h-short -39 → -9 %, q14a-sharegpt -24 → +3 %). But it
  pushes the 8×H100 host's from +25 to +88 % (q235h-sharegpt; medium/long -3/+15 → +23/+27 %), and
  the kept-back 0.19 burst from +91 to +186 %. So it is left out. q235h-sharegpt's TTFT of 8.7 s
  over 984 requests bounds that host's entry cost to t_api ≤ 17.7 ms even FIFO (≤ 12 ms at
  f = 0.5), where q14h-short's 1,000 requests in 22.8 s need 22.8 ms: the API server's cost per
  request differs between the two hosts by 1.3-1.9×. No constant fits both.
* The output stage changes nothing at c ≤ 150 µs, because the simulated batches stay small.
  Little's law shows why. The measured runs keep far more streams decoding at the same throughput
  than the simulator: q235h-sharegpt R̄ 593 vs 224, q14h-sharegpt 717 vs 481, q14h-short 92 vs 3.
  Their tokens are handed out more slowly than the GPU makes them (q14h-short: 3 tokens in
  1.6 s on an engine that needs ~50 ms). That matches one event loop shared by the entries and
  the streams. To bind, c would have to be ≈ TPOT / R̄ = 250 µs (q235h) to 315 µs (q14h).
  The shared loop was also tried, as a scratch patch of the simulator loop that is not kept here:
  each step's n_emit·c of output work delays the entries still waiting at the API server, and the
  step lasts max(T_gpu, n_emit·c). At c = 150 µs, t_api = 22 ms, it gives the opposite of the
  measured signature. Admission slows and the batch shrinks: q14h-sharegpt TTFT -49 → +2 % but
  TPOT -38 → -83 %; q235h-sharegpt TTFT +25 → +145 %, R̄ 224 → 133 (measured 593); kv331 TTFT
  +91 → +254 %. The measurements show fast admission with slow delivery. That points to a cost on
  the streams' path that does not hold up admission, for example the benchmark client parsing
  every SSE chunk in one asyncio process. No source here measures it.
* The benchmark client, measured, not fitted (``bench/client_chunk_cost.py``,
  ``bench/data/client_chunk_cost.json``): ``vllm bench serve`` spends 14-55 µs of CPU per chunk
  (vLLM's own request function against a local SSE server), and each gpustack run's ``Peak output
  token throughput`` (chunk timestamps the client recorded in one second: 8,890-10,558) bounds it
  to ≤ 95-112 µs on the benchmark hosts themselves. Far from the 249-315 µs that would bind; not
  modelled. Note for the Little's-law argument above: TPOT there is serve.py's per-request mean,
  which the short outputs' few long gaps pull up; the token-weighted time per token is the mean ITL
  (one chunk per token). q14h-sharegpt measured mean ITL 92.8 ms and median TPOT 117.5 ms against
  the simulator's token-weighted 103.9 ms and median 133 ms (R̄ 295 measured vs 355 simulated: no
  extra streams), so there only the mean TPOT's tail (226 vs 141 ms) is missed. q235h-sharegpt (ITL
  81.3 vs 55.5 ms, median 114.7 vs 61.5 ms, R̄ 326 vs 206) and GLM-4.5-Air on H100 (74.8 vs 43.4 ms,
  105.5 vs 47.1 ms) are slow in bulk too.
* 2026-12-05: the round-robin entry is now in ``calc`` (``Efficiency.api_server_final_share`` = 0.2, i.e.
  share 0.8 here, :func:`calc.traffic.simulator.frontend_entry_s`), with two changes from the run above:
  t_api is refitted on the run it was fitted on (q14h-short's length: 22.8 → 14.5 ms; the Harmony path
  4.7 → 2.5 ms), and the completions endpoint (kv331) keeps first come first served (its tokenization runs
  in the one-thread executor, in arrival order). What decided it is the TPOT the run above did not
  look at: the 128-in / 4-out bursts' TPOT -97 → +10 % (q14h-short), -82 → +6 % (Qwen3-235B H100), and
  over the found sets (the check, 278 values) median |error| 18.7 → 17.1 %, p90 55 → 43 %, with a better
  mean interval score of the bands on every hold-out. The 8×H100 host's TTFT still reads high
  (q235h-sharegpt +26 → +76 %): its API server is faster than 14.5 ms, as found above. This script's
  candidates replace calc's entry (``patched_entry``), so their figures are against first come first served.
* MoE on A100 (q235a rows): the fractions × 0.67 bring throughput from +32..+58 % to -1..+16 %,
  and, with it, TTFT from -37..-46 % to -15..-31 % and TPOT from -33..-42 % to -10..-22 %. Those
  rows' latency errors come from the step time (MoE kernels on Ampere), not from the API server.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calc.traffic.simulator as simulator  # noqa: E402
import calc.traffic.steptime as steptime  # noqa: E402
from calc.cli.measured import ask_row, error_summary  # noqa: E402
from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency  # noqa: E402
from bench.calibration_report import FOUND_PATH, JSONL_PATH, load_vllm_rows  # noqa: E402

METRICS = ("ttft_s", "tpot_s", "total_tokens_per_s", "requests_per_s")


def round_robin_entry_s(arrival_s, *, service_s, share, latency_s=0.0, free_at_s=0.0):
    """Entry times of requests that arrive together at an API server that interleaves them:
    d_i = max(a, free) + share·N·s + (1 − share)·(i + 1)·s (share 0: FIFO, Lindley's recursion);
    arrivals that are not all simultaneous go first come first served.

    Four requests at t = 0, 20 ms each, half of each request's work done before any leaves:
    0.5·4·0.02 + 0.5·(1, 2, 3, 4)·0.02 = 0.05, 0.06, 0.07, 0.08 s.

    >>> e, free = round_robin_entry_s([0.0] * 4, service_s=0.02, share=0.5)
    >>> [round(x, 3) for x in e.tolist()], round(free, 3)
    ([0.05, 0.06, 0.07, 0.08], 0.08)
    """
    a = np.asarray(arrival_s, dtype=float)
    if a.size > 1 and service_s > 0 and np.all(a == a[0]):
        done = max(float(a[0]), free_at_s) + share * service_s * a.size + (1.0 - share) * service_s * (
            np.arange(a.size) + 1.0)
        return done + latency_s, float(done[-1])
    return _FIFO(arrival_s, service_s=service_s, latency_s=latency_s, free_at_s=free_at_s)


_FIFO = simulator.frontend_entry_s


@contextmanager
def patched_entry(entry_s, **params):
    """The simulator's API server with ``entry_s`` (same arguments as
    :func:`calc.traffic.simulator.frontend_entry_s`, plus ``params``) instead of FIFO."""
    def entry(arrival_s, *, service_s, latency_s=0.0, free_at_s=0.0, final_share=1.0):  # noqa: ARG001 (replaced)
        return entry_s(arrival_s, service_s=service_s, latency_s=latency_s, free_at_s=free_at_s, **params)
    with mock.patch.object(simulator, "frontend_entry_s", entry):
        yield


def round_robin_entry(share: float):
    """The simulator's API server with :func:`round_robin_entry_s` instead of FIFO."""
    return patched_entry(round_robin_entry_s, share=share)


@contextmanager
def output_stage(stream_token_s: float):
    """Every simulated step lasts max(T_gpu, R·c), R the step's logits rows (requests given a token)."""
    step_call = steptime.StepTimer.__call__
    decode_run = steptime.StepTimer.decode_run

    def call(self, d, ctx, p, pairs, cached, logits):
        return max(step_call(self, d, ctx, p, pairs, cached, logits), stream_token_s * logits)

    def run(self, batch, ctx0, steps):  # a fast-forwarded run of decode steps: B logits rows each
        return np.maximum(decode_run(self, batch, ctx0, steps), stream_token_s * float(batch))

    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(steptime.StepTimer, "__call__", call))
        stack.enter_context(mock.patch.object(steptime.StepTimer, "decode_run", run))
        yield


def _is_moe_a100(row: dict) -> bool:
    o = row["options"]
    return get_model(o["model"]).moe is not None and get_gpu(o["gpu"]).architecture.lower() == "ampere"


def variants(share: float, stream_token_s: float, gpu_scale: float):
    """(name, context manager factory, efficiency for a row) of each what-if, today's physics first."""
    base = Efficiency()
    slow = base.model_copy(update={k: getattr(base, k) * gpu_scale for k in
                                   ("prefill_flops_fraction", "decode_flops_fraction", "hbm_bw_fraction")})
    return [
        ("today", ExitStack, lambda row: base),
        (f"round-robin entry f={share:g}", lambda: round_robin_entry(share), lambda row: base),
        (f"output stage c={stream_token_s * 1e6:g}us", lambda: output_stage(stream_token_s), lambda row: base),
        (f"MoE-A100 gpu x{gpu_scale:g}", ExitStack, lambda row: slow if _is_moe_a100(row) else base),
    ]


def streams_decoding(values: dict) -> float:
    """Little's law over the run: mean streams decoding R̄ = output tokens/s × TPOT (NaN without both)."""
    x, t = values.get("output_tokens_per_s"), values.get("tpot_s")
    return float(x) * float(t) if x is not None and t is not None else float("nan")


def run(rows: list[dict], share: float, stream_token_s: float, gpu_scale: float) -> dict[str, dict]:
    """{variant: {"rows": [(row id, metric, measured, predicted)], "streams": {row id: R̄}}}."""
    out = {}
    for name, ctx, eff in variants(share, stream_token_s, gpu_scale):
        res = {"rows": [], "streams": {}}
        with ctx():
            for row in rows:
                p = ask_row(row, eff(row))
                res["streams"][row["id"]] = streams_decoding(p)
                for metric, m in row["measured"].items():
                    if m.get("scored") and metric in METRICS:
                        res["rows"].append((row["id"], metric, float(m["value"]), float(p[metric])))
        out[name] = res
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="", help="comma-separated row ids (default: every burst row)")
    ap.add_argument("--share", type=float, default=0.5, help="round-robin entry: share f of t_api before any leaves")
    ap.add_argument("--stream-token-us", type=float, default=150.0, help="output stage: µs per streamed token")
    ap.add_argument("--gpu-scale", type=float, default=0.67, help="MoE-on-A100 attribution: fractions × this")
    args = ap.parse_args(argv)
    fit = [r for r in load_vllm_rows(JSONL_PATH) if r["load"]["arrival"] == "burst" and "bench serve" in r["bench_mode"]]
    kept = [r for r in load_vllm_rows(FOUND_PATH) if r["load"]["arrival"] == "burst"]
    wanted = {s for s in args.rows.split(",") if s}
    if wanted:
        fit = [r for r in fit if r["id"] in wanted]
        kept = [r for r in kept if r["id"] in wanted]
    for title, rows in (("vllm bench serve bursts (vllm_benchmarks.jsonl)", fit),
                        ("kept back (vllm_found.jsonl)", kept)):
        if not rows:
            continue
        res = run(rows, args.share, args.stream_token_us * 1e-6, args.gpu_scale)
        names = list(res)
        print(f"## {title}: error = predicted / measured - 1")
        print(f"{'row':24s} {'metric':20s} {'measured':>10s} " + " ".join(f"{n[:22]:>22s}" for n in names))
        for i, (rid, metric, meas, _) in enumerate(res[names[0]]["rows"]):
            errs = " ".join(f"{res[n]['rows'][i][3] / meas - 1:>+22.1%}" for n in names)
            print(f"{rid:24s} {metric:20s} {meas:10.4g} {errs}")
        print(f"{'streams decoding R̄':45s} " + " ".join(f"{'':>22s}" for _ in names))
        for row in rows:
            meas = streams_decoding({k: v["value"] for k, v in row["measured"].items()})
            print(f"{row['id']:24s} {'R = X_out x TPOT':20s} {meas:10.4g} "
                  + " ".join(f"{res[n]['streams'][row['id']]:>22.4g}" for n in names))
        for n in names:
            groups: dict[str, list[float]] = {}
            for _, metric, meas, pred in res[n]["rows"]:
                groups.setdefault("TTFT" if metric == "ttft_s" else "TPOT" if metric == "tpot_s" else "throughput",
                                  []).append(pred / meas - 1.0)
            s = error_summary(groups)
            print(f"  {n:28s} " + "  ".join(f"{g} median {v['median_abs_error']:.1%} p90 {v['p90_abs_error']:.1%}"
                                             for g, v in s.items() if g != "all"))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
