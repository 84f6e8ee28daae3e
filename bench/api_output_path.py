"""Does vLLM's API-server output path set TPOT in many-stream bursts? Three tests against the runs.

    .venv/bin/python bench/api_output_path.py

A diagnostic, not a model: nothing here is in ``calc/`` (the result below says why). The hypothesis
tested (issues #17 and #20): vLLM 0.11's OpenAI server is one asyncio process that does request entry
AND, for every engine step, the output path of every running stream (``OutputProcessor``
detokenization, one ``ChatCompletionStreamResponse`` per chunk, the SSE write); with R streams a pass
costs R·c, and where R·c exceeds the GPU step the client would see TPOT ≈ R·c. Numbers:
``bench/data/api_server_stream_rates.json`` (each with its page or thread).

What the source says (vLLM ≥ 0.7.1, so 0.11): a stream's outputs reach its ``generate()`` task through
a one-slot ``RequestOutputCollector`` whose ``put`` MERGES a delta the task has not read yet
(vllm/v1/engine/output_processor.py; PR #12298 "Coalesce bunched RequestOutputs": "Under high load it's
possible for the frontend per-request asyncio queues to back up, with the next token(s) arriving before
existing ones are streamed back ... concatenating them into a single output"). So a slow loop sends
FEWER chunks, each carrying several tokens; it does not space a stream's tokens one pass apart. The
per-token work left (incremental detokenization in ``process_outputs``) is what bounds a stream, and the
runs bound it (test 2). ``serving_chat`` sends the role chunk and the first token's chunk in the same
iteration, then one chunk per output it reads; ``vllm bench serve`` takes TTFT at the first chunk and one
ITL per later chunk; TPOT = (E2E − TTFT) / (tokens − 1) (vllm/benchmarks/serve.py).

Test 1, chunks per request (``chunks_after_first``): (n − 1)·TPOT_mean / ITL_mean counts the chunks
after the first. One token per chunk gives n (the first token's own chunk, ~0 s after the role chunk,
plus n − 1); tokens merged by a lagging loop give fewer. Test 2, the output path's cost
(``output_cost_bounds_s``): TPOT = R̄·c with R̄ = X_out·TPOT (Little) needs c = 1/X_out, while the
server sent ``peak`` chunks in one second, so c ≤ 1/peak. Test 3, the engine's own step
(``prefill_tokens_for_step``): the chunked-prefill batch whose step time (calc's ``engine_step``)
equals the median TPOT.

Result (run 2026-12-02):

* Test 1: all four 128 in / 4 out bursts (q14h, q14a, q235h, q235a; vLLM 0.11 chat endpoint) read
  4.00 chunks after the first: every token in its own chunk, and median ITL = median TPOT (581/597,
  238/239, 235/239, 158/158 ms). A loop slower than the engine, for any reason (output work or the
  entries interleaved with it), would have merged tokens (the output task drains every waiting
  engine step in one turn: ``q.get_nowait()`` and pyzmq's immediate receive; it yields only between
  slices of more than VLLM_V1_OUTPUT_PROC_CHUNK_SIZE = 128 outputs of one step). No merging, so the
  ENGINE produced each stream's tokens 0.16-0.6 s apart.
* Test 2: for the output work alone to make a pass as long as TPOT, c = 1/X_out = 5.7 ms
  (q14h-short), 6.7 ms (q14a), 2.2 ms (q235h), 4.4 ms (q235a), 0.32 ms (q14h-sharegpt), 0.25 ms
  (q235h-sharegpt) per token; the same runs' peaks bound c to <= 1.2, 1.6, 0.67, 1.05, 0.11, 0.10 ms
  (2.4-4.8x below). vLLM PR #12287: one V1 API server streamed 14,309 tokens/s beside 70.8
  requests/s (<= 70 us per token even with free entry).
* Test 3: the median TPOT is calc's step of a ~7,600-token chunked prefill for Qwen3-14B on one
  H100 (597 ms; the 8,192-token budget takes 0.65 s) and ~7,900 tokens for Qwen3-235B TP 8 on
  H100 (239 ms); ~1,500 and ~1,300 tokens on the A100 hosts. So the short bursts' TPOT is the GPU
  running big prefill steps while the decodes ride along, which needs the engine to receive
  prompts in bulk, not one per 22 ms (then its steps stay ~17 ms: today's -97 %). That is the entry
  side: ``bench/frontend_rounds.py`` (interleaved entry) reproduces q14h-short at share 0.6 (TTFT
  +3 %, TPOT -3 %), but its share is unsourced and, at the default 22 ms, it moves the 2.5x faster
  8xH100 host and the kept-back rows the wrong way (calibration TTFT p90 39.5 -> 34.9 %, TPOT p90
  37.6 -> 10.1 %; kept back TTFT p90 55 -> 147 %, TPOT 59 -> 77 %, throughput 54 -> 58 %).

So the output-token mechanism is not adopted: the source merges what a lagging loop would space, the
runs show no merging, and the cost it needs is above what the same runs prove the server did.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import Efficiency, ServingConfig  # noqa: E402
from calc.timing.estimate import engine_numbers  # noqa: E402
from calc.timing.serving import engine_step  # noqa: E402

DATA = ROOT / "bench" / "data" / "api_server_stream_rates.json"
# (model, gpu, TP) of each short burst's host, as its row in vllm_benchmarks.jsonl / vllm_found.jsonl asks it
HOSTS = {"t3-gs-q14h-short": ("Qwen/Qwen3-14B", "h100-sxm", 1), "gs-q14a-short": ("Qwen/Qwen3-14B", "a100-80gb", 1),
         "gs-q235h-short": ("Qwen/Qwen3-235B-A22B", "h100-sxm", 8),
         "gs-q235a-short": ("Qwen/Qwen3-235B-A22B", "a100-80gb", 8)}
PROMPT_TOKENS = 128  # the short bursts' prompts


def chunks_after_first(*, output_len, tpot_mean_s, itl_mean_s):
    """Chunks a request's client read after its first (TTFT) chunk: the ITL entries, whose sum is
    E2E − TTFT = (n − 1)·TPOT, so their count is (n − 1)·TPOT_mean / ITL_mean (requests of equal n).
    One token per chunk gives n (the first token's chunk, sent right after the role chunk, plus n − 1).

    >>> round(float(chunks_after_first(output_len=4, tpot_mean_s=0.52531, itl_mean_s=0.39398)), 2)  # q14h-short
    4.0
    """
    return (np.asarray(output_len, dtype=float) - 1.0) * np.asarray(tpot_mean_s, dtype=float) / np.asarray(
        itl_mean_s, dtype=float)


def output_cost_bounds_s(*, output_tok_s, peak_output_tok_s):
    """(needed, bound) seconds of API-server output work per streamed token: TPOT = R̄·c with
    R̄ = X_out·TPOT (Little's law over the run) needs c = 1 / X_out; the server sent ``peak`` chunks
    in one second of the same run, so c ≤ 1 / peak.

    >>> need, most = output_cost_bounds_s(output_tok_s=176.06, peak_output_tok_s=843)   # q14h-short
    >>> round(float(need) * 1e3, 2), round(float(most) * 1e3, 2)                         # ms
    (5.68, 1.19)
    """
    return 1.0 / np.asarray(output_tok_s, dtype=float), 1.0 / np.asarray(peak_output_tok_s, dtype=float)


def prefill_tokens_for_step(step_s, *, model: str, gpu: str, tp: int, budget_tokens: int = 8192) -> float:
    """Prompt tokens of a pure chunked-prefill step of ``PROMPT_TOKENS``-token prompts whose time
    (:func:`calc.timing.serving.engine_step`, default efficiency) is ``step_s``; ``budget_tokens``
    when even a full budget is faster (the step then held more than prefill)."""
    e = engine_numbers(get_model(model), get_gpu(gpu), ServingConfig(tensor_parallel_size=tp), Efficiency())
    p = np.arange(PROMPT_TOKENS, budget_tokens + 1, PROMPT_TOKENS, dtype=float)
    s = np.asarray(engine_step(e, decode_tokens=0.0, decode_context_tokens_sum=0.0, prefill_tokens=p,
                               prefill_attention_pairs=p * (PROMPT_TOKENS + 1) / 2.0, prefill_cached_tokens=0.0,
                               logits_tokens=p / PROMPT_TOKENS).step_s, dtype=float)
    return float(np.interp(step_s, s, p, right=budget_tokens))


def main() -> int:
    d = json.loads(DATA.read_text())
    print("## 1-3, 128 in / 4 out bursts (vLLM 0.11 chat endpoint, gpustack)")
    print(f"{'row':18s} {'chunks>1st':>10s} {'ITL/TPOT med':>13s} {'c needed ms':>12s} {'c <= ms':>8s} "
          f"{'prefill tok/step at TPOT med':>29s}")
    for r in d["gpustack_short_bursts"]:
        k = chunks_after_first(output_len=r["output_len"], tpot_mean_s=r["tpot_ms"][0], itl_mean_s=r["itl_ms"][0])
        need, most = output_cost_bounds_s(output_tok_s=r["output_tok_s"], peak_output_tok_s=r["peak_output_tok_s"])
        model, gpu, tp = HOSTS[r["row"]]
        p = prefill_tokens_for_step(r["tpot_ms"][1] * 1e-3, model=model, gpu=gpu, tp=tp)
        print(f"{r['row']:18s} {float(k):10.2f} {r['itl_ms'][1] / r['tpot_ms'][1]:13.2f} {float(need) * 1e3:12.2f} "
              f"{float(most) * 1e3:8.2f} {p:29.0f}")
    print("\n## 2, ShareGPT bursts and one API server's streamed rate")
    for r in d["gpustack_sharegpt_bursts"]:
        need, most = output_cost_bounds_s(output_tok_s=r["output_tok_s"], peak_output_tok_s=r["peak_output_tok_s"])
        print(f"{r['row']:22s} c needed {float(need) * 1e6:6.0f} us   c <= {float(most) * 1e6:6.0f} us")
    for r in d["one_api_server_streaming"]:
        print(f"vLLM PR #12287 run: {r['output_tok_s']:.0f} tokens/s + {r['requests_per_s']:.1f} requests/s through one "
              f"API server: c <= {1e6 / r['output_tok_s']:.0f} us per token")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
