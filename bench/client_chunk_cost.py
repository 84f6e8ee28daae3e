"""What one streamed chunk costs ``vllm bench serve``'s client: CPU per chunk and the chunk rate at which it saturates.

    python bench/client_chunk_cost.py                         # needs aiohttp (a venv outside the repo)
    python bench/client_chunk_cost.py --streams 1000 --tokens 200 --step-ms 0      # flood: saturate
    python bench/client_chunk_cost.py --streams 1000 --tokens 50 --step-ms 200     # paced: one chunk a read
    python bench/client_chunk_cost.py --request-func vllm     # vLLM's own function, where vllm is installed

A measurement tool, not part of the calculator: aiohttp is not a dependency of the project (make a
scratch venv, e.g. ``python3.11 -m venv /tmp/cv && /tmp/cv/bin/pip install aiohttp==3.12.15``).
Without aiohttp it says so and exits 2; no test imports it.

Why: the measured ShareGPT bursts on fast hosts (gpustack, vLLM 0.11, ``vllm bench serve
--num-prompts 1000``, rate inf) keep 1.2-1.5x more streams decoding than the simulator at the same
throughput (``bench/burst_mechanisms.py``), as if tokens were delivered more slowly than they are
made. One candidate is the benchmark client itself: one Python asyncio process (aiohttp) that reads
and parses every SSE chunk of every stream. If it could process only 1/c chunks per second, every
timestamp would lag the server. To bind on the fast hosts c would have to be ≈ TPOT / R̄ =
250-315 µs per chunk (about 3,200 chunks/s at q14h-sharegpt's 3,174 output tokens/s). This script
measures c instead of fitting it.

Set-up (loopback only, two processes on two cores):

* a fake OpenAI-compatible server (raw asyncio, a process of its own pinned to the other core)
  answers every ``POST /v1/chat/completions`` with HTTP/1.1 chunked ``text/event-stream``, one HTTP
  chunk per SSE message like uvicorn's ``StreamingResponse``, each message shaped like vLLM 0.11's
  ``ChatCompletionStreamResponse`` (``{"id":"chatcmpl-…","object":"chat.completion.chunk",
  "created":…,"model":…,"choices":[{"index":0,"delta":{"content":…},"logprobs":null,
  "finish_reason":null}]}``), then a finish chunk, the usage chunk (``stream_options.include_usage``)
  and ``data: [DONE]``. Its "engine" gives every live stream one token per step (``--step-ms``; 0 =
  as fast as it can). A stream whose socket is paused (the client is behind) keeps its tokens and
  sends them merged into one chunk when it resumes, as vLLM's ``RequestOutputCollector`` merges the
  pending outputs of a request (vllm/v1/engine/output_processor.py).
* the client (this process, pinned to one core) runs ``--streams`` requests at once on one shared
  ``aiohttp.ClientSession`` (as ``vllm/benchmarks/serve.py`` does), each through the request
  function: vLLM's own ``async_request_openai_chat_completions`` when ``--request-func vllm`` and
  vllm is importable, otherwise :func:`chat_stream_request`, which does the same work per chunk in
  the same order as that function (vllm/benchmarks/lib/endpoint_request_func.py, the iter_any +
  ``StreamedResponseHandler`` path that PR #24373, 2025-09, put in before v0.11.0): read whatever
  bytes arrived, ``strip``, incremental UTF-8 decode, append to a buffer, split on ``\\n\\n``,
  ``json.loads`` of a left-over ``data:`` message to check it is whole (it is, once the strip has
  removed its separator), ``removeprefix("data: ")``, ``time.perf_counter()``, ``json.loads``, the
  delta's content appended to the text and the gap appended to the ITL list.

Printed and (``--out``) written as JSON: chunks received, the client's CPU seconds
(``time.process_time``), wall seconds, CPU µs per chunk, chunks per wall second, and what the
client recorded (mean TTFT, mean TPOT = (latency − TTFT)/(tokens − 1) as serve.py computes it).
In the flood, chunks per wall second with the client's core busy is the saturated rate 1/c.

Result (2026-12-02, ``bench/data/client_chunk_cost.json``; AMD EPYC Zen 4 under KVM, 2 cores
shared with other jobs, aiohttp 3.12.15, CPython 3.11; vLLM's own function (a scratch copy, not
committed) 26-27 µs flooded / 44-46 µs paced, the equivalent 14-19 / 52-55 µs: the same order):

* 14-27 µs of client CPU per chunk when flooded (1,000 streams × 200 tokens: a dedicated core
  would take 37,000-72,000 chunks/s), 44-55 µs at the fast-host ShareGPT rows' own rates (717
  streams at one token per 226 ms, t3-gs-q14h-sharegpt; 593 per 148 ms, t3-gs-q235h-sharegpt).
  That is 5-20× below the 249-315 µs that would bind.
* The runs bound it on their own hosts too: ``Peak output token throughput`` counts the chunk
  timestamps the client recorded in one second (serve.py ``calculate_metrics``), 8,890 (q14h),
  9,638 (q235h) and 10,558 (GLM-4.5-Air H100) per second, so c ≤ 95-112 µs there, and ≤ 49 µs where
  the same client read SGLang's 20,354 chunks/s on the GLM-4.5-Air page.
* So the client is not a stage of the simulator: at the rows' 3,200-4,000 chunks/s it is 14-22 %
  busy, and each engine step's chunks wait at most one pass, R̄·c ≈ 33 ms, the same for every
  token of a stream (TPOT unchanged, TTFT + ≤ 33 ms), against ~85 ms of TPOT and ~10 s of TTFT
  missing. The benchmark hosts' CPUs differ (gpustack's servers are not stated): the figures are an
  order of magnitude, not a host's constant. Wall-clock rates and the delivery lag (``--stamp``) on
  this shared machine measure its other load (the client waited runnable for a CPU most of each run,
  ``client_runqueue_wait_s``), not the client.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import json
import multiprocessing as mp
import os
import platform
import socket
import statistics
import subprocess
import sys
import time

try:
    import aiohttp
except ImportError:  # a measurement tool: aiohttp is not a project dependency
    aiohttp = None

MODEL = "Qwen/Qwen3-14B"
TOKEN_TEXT = " the"  # one ShareGPT-like token of English text


# ----------------------------------------------------------------------------------------------
# the fake server
# ----------------------------------------------------------------------------------------------

def sse_message(payload: dict) -> bytes:
    """One SSE message framed as one HTTP/1.1 chunk: ``<hex len>\\r\\ndata: {json}\\n\\n\\r\\n``."""
    body = b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(body), body)


def token_chunk(rid: str, created: int, n_tokens: int, stamp: bool = False) -> bytes:
    """A vLLM 0.11 chat-completion chunk carrying ``n_tokens`` tokens' text in one delta; with
    ``stamp``, the server's send time (``time.perf_counter``, CLOCK_MONOTONIC, one clock for both
    processes on Linux) rides in ``system_fingerprint`` (a field OpenAI's chunks have, vLLM's not)."""
    msg = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": MODEL,
           "choices": [{"index": 0, "delta": {"content": TOKEN_TEXT * n_tokens},
                        "logprobs": None, "finish_reason": None}]}
    if stamp:
        msg["system_fingerprint"] = repr(time.perf_counter())
    return sse_message(msg)


class _Stream(asyncio.Protocol):
    """One connection; HTTP/1.1 keep-alive, one streaming response at a time."""

    def __init__(self, engine):
        self.engine, self.buf, self.paused, self.transport = engine, b"", False, None

    def connection_made(self, transport):
        self.transport = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data):
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, rest = self.buf.split(b"\r\n\r\n", 1)
            length = 0
            for line in head.split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    length = int(v)
            if len(rest) < length:
                return
            body, self.buf = rest[:length], rest[length:]
            req = json.loads(body or b"{}")
            self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
                                 b"transfer-encoding: chunked\r\n\r\n")
            self.engine.add(self, int(req.get("max_completion_tokens", 16)))

    def pause_writing(self):
        self.paused = True

    def resume_writing(self):
        self.paused = False

    def connection_lost(self, exc):
        self.engine.drop(self)


class _Engine:
    """Every live stream gets one token per step; a paused stream's tokens wait and go out merged."""

    def __init__(self, step_s: float, stamp: bool = False):
        self.step_s, self.stamp, self.live, self.seq = step_s, stamp, {}, 0

    def add(self, conn, tokens):
        self.seq += 1
        self.live[conn] = {"rid": f"chatcmpl-{self.seq:032x}", "left": tokens, "pending": 0, "sent": 0,
                           "total": tokens, "created": int(time.time())}

    def drop(self, conn):
        self.live.pop(conn, None)

    async def run(self):
        while True:
            t0 = time.perf_counter()
            for conn, s in list(self.live.items()):
                if s["left"] > 0:
                    s["left"] -= 1
                    s["pending"] += 1
                if conn.paused or s["pending"] == 0:
                    continue
                out = token_chunk(s["rid"], s["created"], s["pending"], self.stamp)
                s["sent"] += s["pending"]
                s["pending"] = 0
                if s["left"] == 0:
                    out += sse_message({"id": s["rid"], "object": "chat.completion.chunk", "created": s["created"],
                                        "model": MODEL, "choices": [{"index": 0, "delta": {"content": ""},
                                                                     "logprobs": None, "finish_reason": "length"}]})
                    out += sse_message({"id": s["rid"], "object": "chat.completion.chunk", "created": s["created"],
                                        "model": MODEL, "choices": [], "usage": {
                                            "prompt_tokens": 217, "completion_tokens": s["total"],
                                            "total_tokens": 217 + s["total"]}})
                    out += sse_message_done()
                    del self.live[conn]
                conn.transport.write(out)
            wait = self.step_s - (time.perf_counter() - t0)
            await asyncio.sleep(max(wait, 0.0))


def sse_message_done() -> bytes:
    """``data: [DONE]`` and the end of the chunked body."""
    body = b"data: [DONE]\n\n"
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


def _serve(port: int, step_s: float, stamp: bool, cpu: int | None, ready) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})

    async def main():
        engine = _Engine(step_s, stamp)
        server = await asyncio.get_running_loop().create_server(lambda: _Stream(engine), "127.0.0.1", port,
                                                                backlog=4096)
        ready.set()
        async with server:
            await engine.run()

    asyncio.run(main())


# ----------------------------------------------------------------------------------------------
# the client: the per-chunk work of vllm bench serve's chat request function
# ----------------------------------------------------------------------------------------------

class SSEBuffer:
    """Accumulates read bytes into whole SSE messages: the steps of vLLM's ``StreamedResponseHandler``
    (split on the blank line; a left-over ``data:`` message counts as whole when it is ``[DONE]`` or
    parses as JSON)."""

    def __init__(self):
        self.buffer = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def add(self, data: bytes) -> list[str]:
        self.buffer += self._decoder.decode(data)
        out = []
        while "\n\n" in self.buffer:
            msg, self.buffer = self.buffer.split("\n\n", 1)
            msg = msg.strip()
            if msg:
                out.append(msg)
        if self.buffer.startswith("data: "):
            content = self.buffer.removeprefix("data: ").strip()
            if content == "[DONE]":
                out.append(self.buffer.strip())
                self.buffer = ""
            elif content:
                try:
                    json.loads(content)
                    out.append(self.buffer.strip())
                    self.buffer = ""
                except json.JSONDecodeError:
                    pass
        return out


async def chat_stream_request(session, url: str, output_len: int) -> dict:
    """One streamed chat completion, timed per chunk as ``vllm bench serve`` times it."""
    payload = {"model": MODEL, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
               "max_completion_tokens": output_len, "stream": True, "stream_options": {"include_usage": True}}
    out = {"ttft": 0.0, "itl": [], "latency": 0.0, "output_tokens": 0, "chunks": 0, "success": False, "lag": []}
    text = ""
    st = time.perf_counter()
    last = st
    first = False
    async with session.post(url=url, json=payload, headers={"Content-Type": "application/json"}) as resp:
        handler = SSEBuffer()
        async for data in resp.content.iter_any():
            data = data.strip()
            if not data:
                continue
            for msg in handler.add(data):
                if msg.startswith(":"):
                    continue
                chunk = msg.removeprefix("data: ")
                if chunk != "[DONE]":
                    ts = time.perf_counter()
                    d = json.loads(chunk)
                    if choices := d.get("choices"):
                        content = choices[0]["delta"].get("content")
                        if not first:
                            first = True
                            out["ttft"] = ts - st
                        else:
                            out["itl"].append(ts - last)
                        text += content or ""
                        last = ts
                        out["chunks"] += 1
                        if (sent := d.get("system_fingerprint")) is not None:
                            out["lag"].append(ts - float(sent))
                    elif usage := d.get("usage"):
                        out["output_tokens"] = usage.get("completion_tokens")
    out["success"] = first
    out["latency"] = last - st
    return out


def _vllm_request_func():
    """vLLM's own chat request function and its input class, wrapped to this script's interface."""
    from vllm.benchmarks.lib import endpoint_request_func as erf  # noqa: PLC0415

    async def call(session, url, output_len):
        inp = erf.RequestFuncInput(prompt="hi", api_url=url, prompt_len=1, output_len=output_len, model=MODEL)
        try:
            o = await erf.async_request_openai_chat_completions(inp, session=session)
        except TypeError:  # releases whose request function opens its own session
            o = await erf.async_request_openai_chat_completions(inp)
        return {"ttft": o.ttft, "itl": o.itl, "latency": o.latency, "output_tokens": o.output_tokens,
                "chunks": len(o.itl) + (1 if o.success else 0), "success": o.success}
    return call


def runqueue_wait_s() -> float:
    """Seconds this thread has waited, runnable, for a CPU (``/proc/thread-self/schedstat``, field 2;
    NaN where there is none): how much of the measured lag is the host's other load, not the client."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return float("nan")


async def run_client(url: str, streams: int, tokens: int, request_func) -> dict:
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=6 * 60 * 60)
    async with aiohttp.ClientSession(connector=connector, trust_env=True, timeout=timeout) as session:
        await request_func(session, url, 2)  # warm-up, as serve.py's initial test run
        cpu0, t0, rq0 = time.process_time(), time.perf_counter(), runqueue_wait_s()
        outs = await asyncio.gather(*(request_func(session, url, tokens) for _ in range(streams)))
        cpu, wall, rq = time.process_time() - cpu0, time.perf_counter() - t0, runqueue_wait_s() - rq0
    ok = [o for o in outs if o["success"]]
    chunks = sum(o["chunks"] for o in ok)
    lag = sorted(x for o in ok for x in o.get("lag", ()))
    tpots = [(o["latency"] - o["ttft"]) / (o["output_tokens"] - 1) for o in ok if o["output_tokens"] > 1]
    return {"streams": streams, "tokens_per_stream": tokens, "succeeded": len(ok), "chunks": chunks,
            "tokens": sum(o["output_tokens"] for o in ok), "client_cpu_s": cpu, "wall_s": wall,
            "cpu_us_per_chunk": 1e6 * cpu / max(chunks, 1), "chunks_per_wall_s": chunks / wall,
            "client_cpu_busy": cpu / wall, "client_runqueue_wait_s": rq,
            "mean_ttft_s": statistics.fmean(o["ttft"] for o in ok),
            "mean_tpot_s": statistics.fmean(tpots) if tpots else float("nan"),
            "lag_mean_s": statistics.fmean(lag) if lag else None,
            "lag_p90_s": lag[int(0.9 * (len(lag) - 1))] if lag else None}


def cpu_model() -> str:
    """``Model name`` from lscpu (else platform.processor())."""
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return platform.processor() or "unknown"


def measure(streams: int, tokens: int, step_ms: float, request_func, port: int = 0, stamp: bool = False) -> dict:
    """Start the fake server on the other core, run the client on this one, return the figures."""
    ncpu = os.cpu_count() or 1
    if port == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_serve, args=(port, step_ms / 1e3, stamp, 1 if ncpu > 1 else None, ready), daemon=True)
    proc.start()
    cpus = os.sched_getaffinity(0)
    try:
        if not ready.wait(30):
            raise RuntimeError("fake server did not start")
        if ncpu > 1:
            os.sched_setaffinity(0, {0})
        res = asyncio.run(run_client(f"http://127.0.0.1:{port}/v1/chat/completions", streams, tokens, request_func))
    finally:
        os.sched_setaffinity(0, cpus)
        proc.kill()
        proc.join(5)
    res["step_ms"], res["stamped"] = step_ms, stamp
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=1000, help="concurrent streams (1-5000)")
    ap.add_argument("--tokens", type=int, default=200, help="tokens per stream (2-10000)")
    ap.add_argument("--step-ms", type=float, default=0.0, help="server step: one token per live stream (0 = flood)")
    ap.add_argument("--stamp", action="store_true",
                    help="server stamps its send time in each chunk; the client reports the delivery lag")
    ap.add_argument("--request-func", choices=("equivalent", "vllm"), default="equivalent")
    ap.add_argument("--out", default="", help="append the result as one JSON line to this file")
    args = ap.parse_args(argv)
    if aiohttp is None:
        print("aiohttp is not installed: this measurement needs it (a scratch venv outside the repo).")
        return 2
    if not (1 <= args.streams <= 5000 and 2 <= args.tokens <= 10000 and 0 <= args.step_ms <= 10000):
        print("--streams 1-5000, --tokens 2-10000, --step-ms 0-10000")
        return 2
    func = _vllm_request_func() if args.request_func == "vllm" else chat_stream_request
    res = measure(args.streams, args.tokens, args.step_ms, func, stamp=args.stamp)
    res.update({"request_func": args.request_func, "aiohttp": aiohttp.__version__,
                "python": platform.python_version(), "cpu": cpu_model()})
    print(json.dumps(res, indent=1))
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
