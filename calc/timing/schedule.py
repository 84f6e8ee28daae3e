"""A small deterministic discrete-step simulator of vLLM's scheduler, for a handful of requests.

Each engine step runs one forward pass over the tokens the scheduler picked; its duration is
:func:`calc.timing.serving.engine_step` of that batch (the same physics as every other page). Two
policies (physics.md A8):

* ``chunked`` (vLLM V1, Sarathi-Serve "stall-free batching"): with a token budget of
  ``max_num_batched_tokens`` per step, first every running request that is decoding gets its one
  token, then running requests still in prefill get ``min(remaining prompt, budget left)``
  tokens (a *chunk*), then waiting requests are admitted in arrival order (while fewer than
  ``max_num_seqs`` run) with ``min(prompt, budget left)`` tokens each. Prefill chunks ride along
  with the decodes, which never stop.
* ``whole`` (vLLM V0 without chunked prefill): if requests are waiting and a sequence slot is
  free, the step is a prefill-only step of whole prompts (as many as fit the budget, at least
  one; vLLM then requires budget ≥ max_model_len), and every running decode *stalls* for it;
  otherwise the step decodes all running requests.

A request's first token comes out of the step that finishes its prompt (vLLM samples at the
last prefill chunk); each later decode step adds one. TTFT = first token − arrival; TPOT =
(finish − first token)/(output − 1), vLLM's benchmark definition; the worst inter-token gap
shows a decode stall. KV memory: an admitted request reserves prompt + output tokens of
``kv_capacity_tokens`` (no preemption; a simplification of vLLM's on-demand blocks).

The loop is sequential by nature; it is bounded by ``max_steps`` and evaluates step times in
vectorized blocks: with the set of arrived requests fixed, the schedule of the next steps does
not depend on time, so it is planned ahead, timed in one :func:`engine_step` call, and cut at
the next arrival.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calc.timing.roofline import causal_attention_pairs, windowed_context_tokens
from calc.timing.serving import EngineNumbers, engine_step

POLICIES: tuple[str, ...] = ("chunked", "whole")
MAX_REQUESTS = 64
MAX_STEPS = 20_000

# phase codes of the (step, request) matrix
IDLE, QUEUED, PREFILL, DECODE, STALLED = 0, 1, 2, 3, 4
PHASE_NAMES: tuple[str, ...] = ("idle", "queued", "prefill", "decode", "stalled")


@dataclass(frozen=True)
class Request:
    """One request: arrival time, prompt tokens, output tokens (the first one comes from prefill)."""

    arrival_s: float
    prompt_tokens: int
    output_tokens: int


def mixed_workload(*, n_requests: int, long_prompt_tokens: int, short_prompt_tokens: int, output_tokens: int,
                   arrival_gap_s: float) -> tuple[Request, ...]:
    """Requests arriving every ``arrival_gap_s``, alternating short and long prompts (short first,
    so a long prompt lands while others decode: the case chunked prefill is for).

    >>> [(r.arrival_s, r.prompt_tokens) for r in mixed_workload(n_requests=3, long_prompt_tokens=2048,
    ...     short_prompt_tokens=128, output_tokens=64, arrival_gap_s=0.05)]
    [(0.0, 128), (0.05, 2048), (0.1, 128)]
    """
    if not 1 <= n_requests <= MAX_REQUESTS:
        raise ValueError(f"n_requests: got {n_requests}, allowed 1 – {MAX_REQUESTS}")
    return tuple(Request(arrival_s=i * float(arrival_gap_s),
                         prompt_tokens=int(long_prompt_tokens if i % 2 else short_prompt_tokens),
                         output_tokens=int(output_tokens)) for i in range(n_requests))


@dataclass(frozen=True)
class ScheduleResult:
    """Per-step records (axis 0 = step) and per-request metrics (axis 0 = request), seconds."""

    policy: str
    max_num_seqs: int
    token_budget: int  # max_num_batched_tokens in effect (whole policy: at least the longest prompt)
    start_s: np.ndarray  # (steps,)
    duration_s: np.ndarray
    decode_tokens: np.ndarray  # decodes in the step
    prefill_tokens: np.ndarray  # prompt tokens in the step
    tokens: np.ndarray  # (steps, requests): tokens each request had in the step
    phase: np.ndarray  # (steps, requests): IDLE / QUEUED / PREFILL / DECODE / STALLED
    emits: np.ndarray  # (steps, requests): the step produced an output token of the request
    arrival_s: np.ndarray  # (requests,)
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    first_token_s: np.ndarray  # NaN if not reached (step cap)
    finish_s: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray  # NaN for a single output token
    max_itl_s: np.ndarray  # worst gap between two consecutive tokens of the request
    truncated: bool  # stopped at max_steps before every request finished

    @property
    def end_s(self) -> np.ndarray:
        return self.start_s + self.duration_s

    @property
    def makespan_s(self) -> float:
        return float(np.nanmax(self.finish_s)) if np.isfinite(self.finish_s).any() else float("nan")


class _State:
    """Mutable progress of every request (plain Python lists: a handful of requests)."""

    def __init__(self, reqs: tuple[Request, ...]) -> None:
        self.computed = [0] * len(reqs)  # prompt tokens already processed
        self.generated = [0] * len(reqs)  # output tokens produced
        self.admitted = [False] * len(reqs)
        self.done = [False] * len(reqs)
        self.order: list[int] = []  # admission order of running requests

    def copy(self) -> "_State":
        s = _State.__new__(_State)
        s.computed, s.generated, s.admitted = self.computed[:], self.generated[:], self.admitted[:]
        s.done, s.order = self.done[:], self.order[:]
        return s


def _plan(s: _State, reqs, arrived, *, chunked: bool, budget: int, max_num_seqs: int, kv_capacity: float):
    """The next step's batch: {request: tokens}, or None when nothing can run."""
    running = [i for i in s.order if not s.done[i]]
    waiting = [i for i in range(len(reqs)) if arrived[i] and not s.admitted[i]]
    kv_used = sum(reqs[i].prompt_tokens + reqs[i].output_tokens for i in running)
    plan: dict[int, int] = {}
    left = budget
    if chunked:
        for i in running:  # decodes first: they never wait
            if s.computed[i] == reqs[i].prompt_tokens and left >= 1:
                plan[i] = 1
                left -= 1
        for i in running:  # then prompts already started, in chunks
            rem = reqs[i].prompt_tokens - s.computed[i]
            if rem > 0 and left > 0:
                plan[i] = min(rem, left)
                left -= plan[i]
        n_run = len(running)
        for i in waiting:  # then new requests
            need = reqs[i].prompt_tokens + reqs[i].output_tokens
            if left <= 0 or n_run >= max_num_seqs or kv_used + need > kv_capacity:
                break
            plan[i] = min(reqs[i].prompt_tokens, left)
            left -= plan[i]
            n_run += 1
            kv_used += need
    else:
        n_run = len(running)
        for i in waiting:  # a prefill-only step of whole prompts
            need = reqs[i].prompt_tokens + reqs[i].output_tokens
            if n_run >= max_num_seqs or kv_used + need > kv_capacity or (plan and reqs[i].prompt_tokens > left):
                break
            plan[i] = reqs[i].prompt_tokens
            left -= plan[i]
            n_run += 1
            kv_used += need
        if not plan:
            plan = {i: 1 for i in running}
    return plan or None


def _apply(s: _State, reqs, plan: dict[int, int]) -> list[int]:
    """Advance the state by one step; return the requests that emitted a token."""
    emitted = []
    for i, n in plan.items():
        if not s.admitted[i]:
            s.admitted[i] = True
            s.order.append(i)
        p = reqs[i].prompt_tokens
        if s.computed[i] < p:
            s.computed[i] += n
            if s.computed[i] == p:  # the step that finishes the prompt samples the first token
                s.generated[i] += 1
                emitted.append(i)
        else:
            s.generated[i] += 1
            emitted.append(i)
        if s.generated[i] >= reqs[i].output_tokens:
            s.done[i] = True
    return emitted


def _compositions(s0: _State, reqs, plans, e: EngineNumbers) -> np.ndarray:
    """Engine-step inputs of a run of planned steps (replayed on a copy of the state), counted as
    :func:`calc.timing.serving.prefill_step` / :func:`calc.timing.serving.decode_step` count them (sliding-window
    layers attend and re-read at most the window). Columns: decodes, Σ keys read by decodes,
    prompt tokens, Σ attention pairs of the chunks, Σ cached keys re-read, logits."""
    s = s0.copy()
    k, n = len(plans), len(reqs)
    dec = np.zeros((k, n))
    ctx = np.zeros((k, n))
    new = np.zeros((k, n))
    cached = np.zeros((k, n))
    logits = np.zeros(k)
    for j, plan in enumerate(plans):
        for i, t in plan.items():
            p = reqs[i].prompt_tokens
            if s.computed[i] < p:
                new[j, i], cached[j, i] = t, s.computed[i]
                logits[j] += 1.0  # vLLM V1 computes logits for every scheduled request, partial chunks too
            else:
                dec[j, i], ctx[j, i] = 1.0, p + s.generated[i]  # keys: prompt + tokens generated so far
                logits[j] += 1.0
        _apply(s, reqs, plan)
    phi, w = np.asarray(e.sliding_fraction, dtype=float), e.sliding_window
    keys = windowed_context_tokens(context_tokens=ctx, sliding_window=w, sliding_fraction=phi) * dec
    pairs = ((1.0 - phi) * causal_attention_pairs(new_tokens=new, cached_tokens=cached)
             + phi * causal_attention_pairs(new_tokens=new, cached_tokens=cached, window=w))
    reread = windowed_context_tokens(context_tokens=cached, sliding_window=w, sliding_fraction=phi) * (new > 0)
    return np.stack([dec.sum(axis=1), keys.sum(axis=1), new.sum(axis=1), pairs.sum(axis=1), reread.sum(axis=1),
                     logits], axis=1)


def _durations(e: EngineNumbers, comp: np.ndarray) -> np.ndarray:
    st = engine_step(e, decode_tokens=comp[:, 0], decode_context_tokens_sum=comp[:, 1], prefill_tokens=comp[:, 2],
                     prefill_attention_pairs=comp[:, 3], prefill_cached_tokens=comp[:, 4], logits_tokens=comp[:, 5])
    return np.broadcast_to(np.asarray(st.step_s, dtype=float), (comp.shape[0],)).copy()


def simulate(e: EngineNumbers, requests, *, max_num_seqs: int, max_num_batched_tokens: int,
             enable_chunked_prefill: bool, kv_capacity_tokens: float = float("inf"),
             max_steps: int = MAX_STEPS) -> ScheduleResult:
    """Run the requests through the scheduler (module docstring) until all finish or ``max_steps``.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.timing.estimate import engine_numbers
    >>> from calc.spec.inputs import ServingConfig
    >>> e = engine_numbers(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"), ServingConfig(dtype="float16"))
    >>> reqs = [Request(0.0, 100, 3), Request(0.0, 300, 2)]
    >>> r = simulate(e, reqs, max_num_seqs=8, max_num_batched_tokens=256, enable_chunked_prefill=True)
    >>> r.tokens.tolist()      # step 1: 100 + 156 of 300; step 2: decode + last 144; then decodes
    [[100, 156], [1, 144], [1, 1]]
    """
    reqs = tuple(requests)
    if not 1 <= len(reqs) <= MAX_REQUESTS:
        raise ValueError(f"requests: got {len(reqs)}, allowed 1 – {MAX_REQUESTS}")
    if any(r.prompt_tokens < 1 or r.output_tokens < 1 or not np.isfinite(r.arrival_s) or r.arrival_s < 0 for r in reqs):
        raise ValueError("requests: prompt_tokens and output_tokens must be >= 1, arrival_s finite and >= 0")
    if max_num_seqs < 1 or max_num_batched_tokens < 1:
        raise ValueError("max_num_seqs and max_num_batched_tokens must be >= 1")
    chunked = bool(enable_chunked_prefill)
    budget = int(max_num_batched_tokens) if chunked else max(int(max_num_batched_tokens), max(r.prompt_tokens for r in reqs))
    n = len(reqs)
    arrivals = np.array([r.arrival_s for r in reqs], dtype=float)
    state = _State(reqs)
    starts: list[float] = []
    durs: list[float] = []
    plans_done: list[dict[int, int]] = []
    emitted_rows: list[list[int]] = []
    admitted_before: list[list[bool]] = []
    prefill_rows: list[list[int]] = []
    now = 0.0
    block = 16
    while len(plans_done) < max_steps and not all(state.done):
        arrived = arrivals <= now + 1e-12
        pending = arrivals[~arrived]
        next_arrival = float(pending.min()) if pending.size else float("inf")
        sim = state.copy()
        plans = []
        for _ in range(min(block, max_steps - len(plans_done))):
            plan = _plan(sim, reqs, arrived, chunked=chunked, budget=budget, max_num_seqs=int(max_num_seqs),
                         kv_capacity=kv_capacity_tokens)
            if plan is None:
                break
            plans.append(plan)
            _apply(sim, reqs, plan)
            if all(sim.done):
                break
        if not plans:
            if not np.isfinite(next_arrival):
                break  # nothing can ever run (a request larger than the KV capacity)
            now = next_arrival
            continue
        d = _durations(e, _compositions(state, reqs, plans, e))
        st = now + np.concatenate([[0.0], np.cumsum(d)[:-1]])
        k = max(1, int(np.sum(st < next_arrival - 1e-12)))  # steps that start before the next arrival
        for j in range(k):
            admitted_before.append(state.admitted[:])
            prefill_rows.append([i for i in plans[j] if state.computed[i] < reqs[i].prompt_tokens])
            emitted_rows.append(_apply(state, reqs, plans[j]))
            plans_done.append(plans[j])
            starts.append(float(st[j]))
            durs.append(float(d[j]))
        now = float(st[k - 1] + d[k - 1])
        block = min(block * 2, 1024) if k == len(plans) else 16

    steps = len(plans_done)
    start = np.array(starts, dtype=float)
    dur = np.array(durs, dtype=float)
    end = start + dur
    tokens = np.zeros((steps, n), dtype=np.int64)
    emits = np.zeros((steps, n), dtype=bool)
    for j, plan in enumerate(plans_done):
        for i, t in plan.items():
            tokens[j, i] = t
        emits[j, emitted_rows[j]] = True
    # Phases: scheduled prefill/decode; admitted but not scheduled = stalled; arrived, not admitted = queued.
    prompt = np.array([r.prompt_tokens for r in reqs], dtype=np.int64)
    output = np.array([r.output_tokens for r in reqs], dtype=np.int64)
    is_prefill = np.zeros((steps, n), dtype=bool)
    for j, rows in enumerate(prefill_rows):
        is_prefill[j, rows] = True
    done_before = np.zeros((steps, n), dtype=bool)
    if steps:
        done_before[1:] = np.cumsum(emits, axis=0)[:-1] >= output
    adm = np.array(admitted_before, dtype=bool).reshape(steps, n)
    arrived_m = arrivals[None, :] <= start[:, None] + 1e-12
    phase = np.full((steps, n), IDLE, dtype=np.int8)
    phase[arrived_m & ~adm & ~done_before] = QUEUED
    phase[adm & ~done_before] = STALLED
    phase[(tokens > 0) & is_prefill] = PREFILL
    phase[(tokens > 0) & ~is_prefill] = DECODE

    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    max_itl = np.full(n, np.nan)
    for i in range(n):
        times = end[emits[:, i]]
        if times.size:
            first[i] = times[0]
            if times.size >= output[i]:
                finish[i] = times[-1]
            if times.size > 1:
                max_itl[i] = float(np.max(np.diff(times)))
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(output > 1, (finish - first) / np.maximum(output - 1, 1), np.nan)
    return ScheduleResult(
        policy="chunked" if chunked else "whole", max_num_seqs=int(max_num_seqs), token_budget=budget,
        start_s=start, duration_s=dur, decode_tokens=(phase == DECODE).sum(axis=1),
        prefill_tokens=np.where(phase == PREFILL, tokens, 0).sum(axis=1), tokens=tokens, phase=phase, emits=emits,
        arrival_s=arrivals, prompt_tokens=prompt, output_tokens=output, first_token_s=first, finish_s=finish,
        ttft_s=first - arrivals, tpot_s=tpot, max_itl_s=max_itl, truncated=not all(state.done))


@dataclass(frozen=True)
class Segments:
    """Gantt bars: consecutive steps of one request in the same phase merged (prefill chunks kept
    one bar each, so chunks stay visible). Arrays of equal length."""

    request: np.ndarray
    phase: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    tokens: np.ndarray  # tokens processed in the bar
    steps: np.ndarray  # steps merged


def segments(r: ScheduleResult) -> Segments:
    """Merge each request's run of equal phases into one bar (IDLE cells dropped); prefill
    steps stay one bar each. A request decoding for 40 steps is one DECODE bar of 40 tokens."""
    steps, n = r.phase.shape
    end = r.start_s + r.duration_s
    out = {k: [] for k in ("request", "phase", "start_s", "end_s", "tokens", "steps")}
    for i in range(n):
        ph = r.phase[:, i]
        if steps == 0:
            continue
        # a new bar where the phase changes, and at every prefill step (one bar per chunk)
        brk = np.ones(steps, dtype=bool)
        brk[1:] = (ph[1:] != ph[:-1]) | (ph[1:] == PREFILL)
        starts = np.flatnonzero(brk)
        stops = np.append(starts[1:], steps) - 1
        keep = ph[starts] != IDLE
        starts, stops = starts[keep], stops[keep]
        cum = np.concatenate([[0], np.cumsum(r.tokens[:, i])])
        out["request"].append(np.full(starts.size, i))
        out["phase"].append(ph[starts])
        out["start_s"].append(r.start_s[starts])
        out["end_s"].append(end[stops])
        out["tokens"].append(cum[stops + 1] - cum[starts])
        out["steps"].append(stops - starts + 1)
    cat = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in out.items()}
    return Segments(request=cat["request"].astype(np.int64), phase=cat["phase"].astype(np.int8),
                    start_s=cat["start_s"].astype(float), end_s=cat["end_s"].astype(float),
                    tokens=cat["tokens"].astype(np.int64), steps=cat["steps"].astype(np.int64))
