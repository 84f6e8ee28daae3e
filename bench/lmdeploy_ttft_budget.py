"""LMDeploy v0.1 closed-loop TTFT: how much of it TurboMind's own scheduling can account for.

    .venv/bin/python bench/lmdeploy_ttft_budget.py

A diagnostic, not calculator physics. The 9 closed loops of LMDeploy's A100 request-throughput table
(``bench/data/lmdeploy_closed_loop_found.jsonl``; pm-069 and pm-070 of the calibration set are two
of them) measured a mean first-token latency 4-10 calculator TPOTs long. What the source at that
version says (InternLM/lmdeploy @v0.1.0a1, harness @e7af6db79/3e391df467):

* What TTFT is: ``benchmark/profile_throughput.py`` runs C Python threads in ONE process; each takes
  a prompt, starts its clock, tokenizes the prompt in its own thread, and stops the clock when
  ``stream_infer`` first yields to it (lines 84-102). Everything between (tokenizer, building the
  tensors, one new Python thread per GPU per request (``turbomind.py:447``), the engine, the
  stream callback, the thread getting the GIL back to receive it) is in the figure.
* Intake: the engine loop dequeues every waiting request at the top of every iteration
  (``LlamaBatch.cc:1395-1406``, ``request_interval = 1``, all free slots), prefills them together
  (``ContextDecode``, sub-batches of up to 4 x session_len tokens, ``LlamaTritonModel.cc:179``) and
  runs ONE decode step of the whole batch (``step_length`` 1); the context decode skips each
  prompt's last token, which the decode step then processes (``LlamaBatch.cc:1055``): the first
  token is sampled by the batch's decode step, not by the prefill. So a newcomer's own iteration
  is T_ctx(I - 1) + T_dec(batch).
* Before it reaches the queue, the request's inputs are copied host-to-device on the CUDA legacy
  default stream (``create_instance(cuda_stream_id=0)``, ``turbomind.py:375``; allocator stream
  ``LlamaTritonModel.cc:319``; ``cudaMemcpyAsync`` ``triton_utils.hpp:41``) and that stream is
  synchronized (``LlamaTritonModelInstance.cc:197``; reallocating the prompt's buffer for a new
  length also syncs it, ``cudaFreeAsync`` + ``cudaStreamSynchronize`` in ``allocator.h:262-263``),
  while the engine runs on a blocking stream (``cudaStreamCreate``, ``LlamaTritonModel.cc:223``):
  the request waits for the iteration in flight before it can be queued.
  It then races the engine's next dequeue, which the same GPU completion releases.
* Streaming: per iteration the engine's output thread takes the GIL (``PyGILState_Ensure`` via
  ``ffi_lock_``, ``LlamaBatch.cc:1512``, bind.cpp:371) and calls every running request's Python
  callback; ``stream_infer`` drops all but the newest output (``turbomind.py:571``), so a thread that
  is late sees several tokens at once (the harness's own comment: ``n_token`` goes 5, 7, 8, 16,
  ``profile_generation.py`` @3e391df467).

Engine-side budget (:func:`engine_ttft_budget_s`): w in-flight iterations waited, then the own one:

    TTFT_engine(w) = w · T_iter + T_pf + T_dec + t_req,

with T_iter the calculator's TPOT (a decode step plus the others' prefills it carries), T_pf the
calculator's prefill of one prompt, T_dec its decode step at the running batch, t_req the 2 ms
offline request overhead. w = 1/2: arriving at a random phase of the in-flight iteration and
winning the dequeue race; w = 2: arriving just after an iteration started (the previous request's
completion is signalled at an iteration's end), waiting it out, losing the race and waiting for the
next one. Which w applies is not in the source: a closed-loop client that hands back quickly lands
early in an iteration (w ≈ 1 if it then wins the race: its path from the sync to the enqueue,
``LlamaV2::forward``, is shorter than the engine's from its own sync through ``Finish`` to the
dequeue, but TP adds a barrier across the tp forward threads), a slow one at a random phase. The rest of
the measured mean (the residual) is mostly the harness's start (below); what is left after it is not
explained by the source read here. Printed per row: measured mean TTFT, the calculator's, the
mean in calculator TPOTs, the two bounds, the error of the upper one, the residual (s and ms per
client thread), the fastest and slowest first token in TPOTs (min ≈ 1-2 iterations: the own
iteration is the floor; max 50-120 iterations: the harness's start below, not admission or KV space:
the pools hold 128k (7B) and 512k (70B) tokens against ~50k and ~120k in use), the throughput error,
then the engine's iteration from the row itself, the mean and fastest first token in those iterations,
the mean asked as run (with the start), its error, the start, the table's FTL(max), and what the start
leaves in iterations.

In the engine's own iterations (:func:`measured_iteration_s`: the running batch over the measured output
tokens/s, so no calculator error enters) the mean first token takes 3.7-4.8 iterations at C = 64,
5.3-6.9 at C = 128 and 9.3 at C = 256, for 7B (25-39 ms iterations) and 70B TP 4 (63-160 ms) alike, and
the fastest one 1.1-1.5 (the own iteration). Most of that growth with C is the harness's start (columns
"as run", "start", "max"): ``process_request`` starts the C threads together and FTL(ave) averages all N
= 3000 requests, so the first C, context-decoded in one iteration and all answered by the decode step
after it, weigh C/N of the mean (:func:`calibration_report.harness_mean_ttft_s`,
:func:`calibration_report.turbomind_start_ttft_s`, how the calibration report now asks pm-069/pm-070).
The calculator's start matches the table's FTL(max) on one GPU (7B 1.09 / 1.15 s, 2.20 / 2.24 s; 13B
1.96 / 2.05 s, 3.90 / 4.45 s; the 50-120-iteration maxima) and is 1.4-1.6x short of it at TP 4 (70B).
The v0.2.0 table (kept back, same harness, asked with v0.1's inputs) agrees: start / FTL(max) 4.02 / 4.65 s
(7B, C = 256), 3.90 / 4.19 s (13B), 11.86 / 14.52 s (70B TP 4); mean as run -26 %, -35 %, +3 %.
What the start leaves ("rest it": the other N − C requests' mean in measured iterations) is 2.8-4.3
iterations, flat in C and model size: the steady-state engine, i.e. the w in-flight iterations and the
own one above (the calculator's steady TTFT is about one). The v0.1.0a1 source read for an admission cap
shows none: ``RequestQueue::dequeue`` takes every waiting request up to the free slots,
``SequenceManager::Materialize`` activates every sequence whose blocks fit, ``ContextDecode`` prefills them
all in the same iteration. The per-request legacy-stream syncs (``reMalloc`` frees and reallocates the
input buffer whenever the new prompt's length differs, ``allocator.h:85-96`` + ``262-263``; pageable
``cudaMemcpyAsync`` in ``move_tensor_H2D``, ``triton_utils.hpp:40-41``; ``cudaStreamSynchronize`` before the
enqueue) make the newcomer wait out the iteration in flight; whether it then wins the race to the next
dequeue (w = 1) or not (w = 2) the source does not settle, and at C = 1 (no iteration in flight) the
structure would add a decode step the batch-1 FTL rows do not leave room for (calculator prefill at
0.7 of peak is ~8 % slower than TurboMind's context decode there). So w stays a diagnostic.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calc.cli.measured import efficiency_for_engine  # noqa: E402
from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.timing.estimate import engine_numbers, estimate  # noqa: E402
from calibration_report import LMDEPLOY_NUM_PROMPTS, harness_mean_ttft_s, turbomind_start_ttft_s  # noqa: E402

DATA = ROOT / "bench" / "data" / "lmdeploy_closed_loop_found.jsonl"
# Iterations a newcomer waits before its own (module docstring): random phase + won race .. just
# missed + lost race.
WAIT_ITERATIONS = (0.5, 2.0)


def implied_lengths(measured: dict) -> tuple[float, float]:
    """Mean prompt and output tokens implied by a throughput row: O = output tok/s ÷ requests/s,
    I = (total − output) tok/s ÷ requests/s."""
    rps = measured["requests_per_s"]
    return (measured["total_tokens_per_s"] - measured["output_tokens_per_s"]) / rps, measured["output_tokens_per_s"] / rps


def measured_iteration_s(measured: dict, concurrency: int) -> float:
    """The engine's mean iteration from the row itself: every running sequence gets one token per
    iteration, so T_iter = R / (output tok/s), with R = C · (1 − TTFT/E2E) the clients past their first
    token and E2E = C / (requests/s) (Little's law).

    >>> round(measured_iteration_s({"ttft_s_mean": 0.205, "requests_per_s": 12.611,
    ...                              "output_tokens_per_s": 3210.281}, 128) * 1e3, 1)  # pm-069
    39.1
    """
    e2e = concurrency / measured["requests_per_s"]
    return concurrency * (1.0 - measured["ttft_s_mean"] / e2e) / measured["output_tokens_per_s"]


def engine_ttft_budget_s(*, wait_iterations, iteration_s, prefill_s, decode_step_s, request_s):
    """TTFT_engine = w · T_iter + T_pf + T_dec + t_req (module docstring); broadcasts over w."""
    return wait_iterations * iteration_s + prefill_s + decode_step_s + request_s


def ask(row: dict) -> dict[str, float] | None:
    """The calculator's closed loop for the row (its C, TP, mean lengths, whole prompts) and the
    engine-side budget; None where the model is not in the catalog."""
    if not row.get("model"):
        return None
    i_len, o_len = implied_lengths(row["measured"])
    c = int(row["concurrency"])
    serving = ServingConfig(tensor_parallel_size=int(row["tensor_parallel_size"]), dtype=row["dtype"],
                            disable_custom_all_reduce=True, enable_chunked_prefill=False,
                            input_len=round(i_len), output_len=round(o_len), concurrency=c, max_num_seqs=c)
    eff = efficiency_for_engine(row.get("ask_as_engine", row["engine"]), Efficiency())
    s = estimate(get_model(row["model"]), get_gpu(row["gpu"]), serving, eff).serving
    tpot, t_dec, t_pf = float(s.tpot_s), float(s.decode_step_s), float(s.prefill_time_per_request_s)
    lo, hi = (float(engine_ttft_budget_s(wait_iterations=w, iteration_s=tpot, prefill_s=t_pf, decode_step_s=t_dec,
                                         request_s=eff.request_overhead_s)) for w in WAIT_ITERATIONS)
    measured = row["measured"]["ttft_s_mean"]
    t_it = measured_iteration_s(row["measured"], c)
    eng = engine_numbers(get_model(row["model"]), get_gpu(row["gpu"]), serving, eff)
    start = float(turbomind_start_ttft_s(eng, concurrency=c, input_len=round(i_len), request_s=eff.request_overhead_s))
    as_run = float(harness_mean_ttft_s(steady_s=float(s.ttft_s), start_s=start, concurrency=c,
                                       num_requests=LMDEPLOY_NUM_PROMPTS))
    n = LMDEPLOY_NUM_PROMPTS
    rest = (measured * n - c * start) / (n - c)  # the other N − C requests' mean, if the start is the calculator's
    return {"start_s": start, "ttft_as_run_s": as_run, "rest_in_iterations": rest / t_it,"iteration_meas_s": t_it, "measured_in_iterations": measured / t_it,
            "min_in_iterations": row["measured"]["ttft_s_min"] / t_it,"input_len": i_len, "output_len": o_len, "ttft_calc_s": float(s.ttft_s), "tpot_calc_s": tpot,
            "out_tok_s_calc": float(s.output_tokens_per_s), "engine_low_s": lo, "engine_high_s": hi,
            "measured_in_tpots": measured / tpot, "residual_s": measured - hi, "residual_per_client_s": (measured - hi) / c}


def main() -> int:
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    print(f"{'row':<20} {'tp':>2} {'C':>4} {'I':>5} {'O':>5} {'TTFT':>6} {'calc':>6} {'TPOTs':>6} "
          f"{'eng lo':>7} {'eng hi':>7} {'hi err':>7} {'resid':>6} {'ms/clt':>6} {'min':>5} {'max':>5}  out err"
          f"  {'T_it':>6} {'TTFT it':>7} {'min it':>6}   {'as run':>6} {'err':>5} {'start':>6} {'max':>6} {'rest it':>7}")
    for row in rows:
        a = ask(row)
        m = row["measured"]
        if a is None:
            print(f"{row['id']:<20} {row['tensor_parallel_size']:>2} {row['concurrency']:>4}  (model not in the catalog)")
            continue
        print(f"{row['id']:<20} {row['tensor_parallel_size']:>2} {row['concurrency']:>4} {a['input_len']:>5.0f} "
              f"{a['output_len']:>5.0f} {m['ttft_s_mean']:>6.3f} {a['ttft_calc_s']:>6.3f} {a['measured_in_tpots']:>6.1f} "
              f"{a['engine_low_s']:>7.3f} {a['engine_high_s']:>7.3f} {a['engine_high_s'] / m['ttft_s_mean'] - 1:>+7.0%} "
              f"{a['residual_s']:>6.3f} {1e3 * a['residual_per_client_s']:>6.2f} "
              f"{m['ttft_s_min'] / a['tpot_calc_s']:>5.1f} {m['ttft_s_max'] / a['tpot_calc_s']:>5.0f}  "
              f"{a['out_tok_s_calc'] / m['output_tokens_per_s'] - 1:+.0%}    {1e3 * a['iteration_meas_s']:>6.1f} "
              f"{a['measured_in_iterations']:>7.2f} {a['min_in_iterations']:>6.2f}   {a['ttft_as_run_s']:>6.3f} "
              f"{a['ttft_as_run_s'] / m['ttft_s_mean'] - 1:>+5.0%} {a['start_s']:>6.2f} {m['ttft_s_max']:>6.2f} "
              f"{a['rest_in_iterations']:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
