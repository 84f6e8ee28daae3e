"""A burst through vLLM 0.11's API-server event loop: interleaved entry, and each host's own API cost.

    .venv/bin/python bench/frontend_rounds.py [--share 0.6] [--rows ID,ID,...]

A diagnostic, not a model (nothing here is in ``calc/``; the last section says why). It asks every
gpustack ``vllm bench serve`` burst (``t3-gs-*`` in ``vllm_benchmarks.jsonl``, ``gs-*`` in the
kept-back ``bench/data/vllm_found.jsonl``) as ``bench/calibration_report.py`` does
(:func:`calc.cli.measured.ask_row`), four ways: the API server FIFO (today) or with interleaved
entry (:func:`interleaved_entry_s`), each at the default ``api_server_request_s`` (22 ms) and at the
row's host's own cost, read from that host's short-prompt run (128 in / 4 out, 1,000 requests at
once, so bound by the API server: t_host = (128 + 4) tokens / measured total tokens/s).

What the source says (vLLM v0.11.0 = b8b302cde, read from a full-history copy; benchmark client in
the same tree; CPython's asyncio). One API-server process runs one asyncio loop;
``BaseEventLoop._run_once`` runs the callbacks that were ready when the iteration began, and whatever
they make ready waits for the next iteration (FIFO). A streamed chat request yields at:

1. ``with_cancellation`` (vllm/entrypoints/utils.py:77-81): the handler becomes a new task.
2. ``_preprocess_chat`` (entrypoints/openai/serving_engine.py:791, :822): the chat template is
   rendered on the loop, then ``await async_tokenizer(...)`` (:571): ``AsyncMicrobatchTokenizer``
   (vllm/utils/__init__.py:465-575) queues the prompt for one batcher task that hands up to 32
   prompts (2 ms wait) to a one-thread executor (:492, :558).
3. ``create_chat_completion`` returns the stream generator without starting it
   (serving_chat.py:312, :331); the request is added to the engine (``AsyncLLM.generate`` ->
   ``add_request``, v1/engine/async_llm.py:370, :313) only when Starlette's response task first
   iterates it (serving_chat.py:574), after the handler task, the wrapper and the response task
   have each taken a turn.
4. Then ``q.get_nowait() or await q.get()`` (async_llm.py:387) for every output.

So N requests that arrive together do their first stages in turn before any of them reaches the
engine: with a share f of each request's API time t before the last yield, request i (0-based)
enters at f·N·t + (1 - f)·(i + 1)·t instead of FIFO's (i + 1)·t. Mean TTFT / duration goes from
about 1/2 to (1 + f)/2. The output side cannot slow a stream's tokens down by itself:
``RequestOutputCollector.put`` merges outputs a stream has not read yet
(v1/engine/output_processor.py:41-50), and pyzmq receives at once when the socket has data
(``_AsyncSocket._add_recv_event`` calls ``_handle_recv``), so the output task drains every waiting
engine step in one turn (core_client.py:809-829, async_llm.py:435-464). A request whose 4 tokens
reach the client 0.6 s apart (q14h-short: median ITL 581 ms, median TPOT 597 ms) was therefore
given them 0.6 s apart by the engine: the engine was doing long steps. Interleaved entry gives
exactly that: once the first turns are done the engine is fed at 1/((1 - f)·t), faster than 1/t,
and works full 8,192-token prefill chunks while the decodes wait (the simulator does this by itself
once the entry times change). The client takes TTFT at the role chunk sent with the first output
(serving_chat.py:583-617; benchmarks/lib/endpoint_request_func.py:318) and TPOT = (last chunk -
TTFT) / (tokens - 1) (benchmarks/serve.py:318-319).

Per-request API cost, vLLM 0.11.0 chat endpoint, same client, 128 in / 4 out (gpustack, four hosts):
q14h 22.8 ms (44.0 req/s), q14a 26.8 ms (37.3), q235h 9.0 ms (111.4), q235a 17.7 ms (56.6). Mean
TTFT / duration: 0.80, 0.73, 0.80, 0.72 (FIFO: about 0.5).

Result (run 2026-12-02; 17 bursts, 49 scored values; |error| median and p90):

    FIFO  t=22 ms (today)   TTFT 12 / 43 %   TPOT 9 / 59 %   throughput  6 / 20 %
    FIFO  t=host            TTFT 15 / 37 %   TPOT 9 / 79 %   throughput  3 /  7 %
    f=0.4 t=host            TTFT  6 / 17 %   TPOT 9 / 36 %   throughput  7 / 14 %
    f=0.6 t=host            TTFT  7 / 21 %   TPOT 8 / 31 %   throughput 10 / 17 %
    f=0.6 t=22 ms           TTFT  8 / 59 %   TPOT 8 / 36 %   throughput 11 / 23 %

* With each host's own t: FIFO misses every short row's TTFT by -29 to -38 % and TPOT by -12 to
  -97 %; interleaved entry (f = 0.6) brings the two H100 hosts within 7 % on both (q14h-short
  TTFT +5 %, TPOT -7 %; gs-q235h-short +7 %, -2 %) and the H100 ShareGPT rows' TTFT from -47 %
  to +3 % (q14h) and +2 % (q235h). On the A100 hosts it overshoots (gs-q14a-short TTFT +36 %,
  TPOT +31 %; f = 0.5: +22 %, +30 %), and it costs the ShareGPT bursts 10-15 % of throughput:
  the simulated engine idles while the first turns run, which the measured throughput does not
  show, so some requests do get through early (the client's sends are spread; the tokenizer
  batcher passes 32 at a time). The two-turn picture is a bound, not the loop.
* With the default t = 22 ms (what the calculator knows): the q14 rows improve, the q235h rows
  get worse (q235h-sharegpt TTFT +25 -> +101 %), because that host's API server is 2.5x faster:
  FIFO at 22 ms was right there only by two errors cancelling.

Why it is not adopted: f is not sourced (no public profile splits vLLM 0.11's per-request API time
into its stages; PR #27407's timings are for the embeddings endpoint), it fits the H100 hosts at
0.6 and the A100 hosts nearer 0.4, and the API cost itself differs 3x between hosts (9-27 ms), so
any default moves some rows the wrong way.
"""

from __future__ import annotations

import argparse
import sys
from collections import deque
from contextlib import ExitStack
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calc.traffic.simulator as simulator  # noqa: E402
from calc.cli.measured import ask_row, error_summary  # noqa: E402
from calc.spec.inputs import Efficiency  # noqa: E402
from bench.burst_mechanisms import patched_entry  # noqa: E402
from bench.calibration_report import FOUND_PATH, JSONL_PATH, load_vllm_rows  # noqa: E402

METRICS = ("ttft_s", "tpot_s", "total_tokens_per_s")
HOSTS = ("q14h", "q14a", "q235h", "q235a")


def interleaved_entry_s(arrival_s, *, service_s, share, latency_s=0.0, free_at_s=0.0):
    """When requests arriving at ``arrival_s`` (sorted) leave an API server that runs each in two
    turns: ``share``·s first, then (1 - ``share``)·s, one turn at a time, turns in the order they
    became ready (an asyncio loop's FIFO ready queue; the second turn is ready when the first ends).

    share 0 is FIFO (Lindley's recursion); requests that never overlap leave at a + s whatever the
    share. N at once: d_i = share·N·s + (1 - share)·(i + 1)·s.

    Four requests at t = 0, 20 ms each, share 0.5: all first turns end at 4·10 = 40 ms, then the
    second turns: 50, 60, 70, 80 ms. A lone request at t = 1 s: 1.02 s.

    >>> e, free = interleaved_entry_s([0.0, 0.0, 0.0, 0.0, 1.0], service_s=0.02, share=0.5)
    >>> [round(x, 3) for x in e.tolist()], round(free, 3)
    ([0.05, 0.06, 0.07, 0.08, 1.02], 1.02)
    """
    a = np.asarray(arrival_s, dtype=float)
    if a.size == 0 or service_s <= 0.0:
        return a + latency_s, float(free_at_s)
    first, second = share * service_s, (1.0 - share) * service_s
    done = np.empty(a.size)
    t, i, ready = float(free_at_s), 0, deque()  # ready: (request, time its second turn became ready)
    while i < a.size or ready:
        if ready and (i >= a.size or ready[0][1] <= a[i]):
            j, since = ready.popleft()
            t = max(t, since) + second
            done[j] = t
        else:
            t = max(t, a[i]) + first
            ready.append((i, t))
            i += 1
    return done + latency_s, float(t)


def interleaved(share: float):
    """The simulator's API server with :func:`interleaved_entry_s` instead of FIFO."""
    return patched_entry(interleaved_entry_s, share=share)


def host_of(row: dict) -> str | None:
    """The gpustack host a row ran on (``q14h`` …), from its id."""
    return next((h for h in HOSTS if f"-{h}-" in row["id"]), None)


def host_api_s(rows: list[dict]) -> dict[str, float]:
    """Each host's API-server seconds per request, from its short-prompt burst (API-bound):
    (input + output tokens) / measured total tokens/s."""
    out = {}
    for row in rows:
        h = host_of(row)
        if h and row["id"].endswith("-short"):
            o = row["options"]
            out[h] = (o["input_len"] + o["output_len"]) / row["measured"]["total_tokens_per_s"]["value"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--share", type=float, default=0.6, help="interleaved entry: share of t before the last yield")
    ap.add_argument("--rows", default="", help="comma-separated row ids (default: every gpustack burst)")
    args = ap.parse_args(argv)
    rows = [r for r in load_vllm_rows(JSONL_PATH) + load_vllm_rows(FOUND_PATH)
            if r["load"]["arrival"] == "burst" and "bench serve" in r["bench_mode"] and host_of(r)]
    t_host = host_api_s(rows)
    wanted = {s for s in args.rows.split(",") if s}
    rows = [r for r in rows if not wanted or r["id"] in wanted]
    default = Efficiency()
    variants = [("FIFO t=22ms", ExitStack, lambda r: default),
                (f"f={args.share:g} t=22ms", lambda: interleaved(args.share), lambda r: default),
                ("FIFO t=host", ExitStack, lambda r: Efficiency(api_server_request_s=t_host[host_of(r)])),
                (f"f={args.share:g} t=host", lambda: interleaved(args.share),
                 lambda r: Efficiency(api_server_request_s=t_host[host_of(r)]))]
    print("host API s/request: " + ", ".join(f"{h} {t * 1e3:.1f} ms" for h, t in t_host.items()))
    table: dict[str, list[tuple[str, str, float, float]]] = {}
    for name, ctx, eff in variants:
        table[name] = []
        with ctx():
            for row in rows:
                p = ask_row(row, eff(row))
                for metric in METRICS:
                    m = row["measured"].get(metric)
                    if m and m.get("scored"):
                        table[name].append((row["id"], metric, float(m["value"]), float(p[metric])))
    names = list(table)
    print(f"{'row':22s} {'metric':19s} {'measured':>10s} " + " ".join(f"{n:>16s}" for n in names))
    for k, (rid, metric, meas, _) in enumerate(table[names[0]]):
        print(f"{rid:22s} {metric:19s} {meas:10.4g} "
              + " ".join(f"{table[n][k][3] / meas - 1:>+16.1%}" for n in names))
    for n in names:
        groups: dict[str, list[float]] = {}
        for _, metric, meas, pred in table[n]:
            groups.setdefault(metric, []).append(pred / meas - 1.0)
        s = error_summary(groups)
        print(f"{n:16s} " + "  ".join(f"{g} median {v['median_abs_error']:.0%} p90 {v['p90_abs_error']:.0%}"
                                      for g, v in s.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
