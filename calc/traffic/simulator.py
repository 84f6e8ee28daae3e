"""A request-level simulator of a vLLM engine: thousands of requests, step by step.

Scheduling (vLLM V1 ``v1/core/sched/scheduler.py``, ``schedule()``), one engine step at a time:

* **chunked** (V1 default): a token budget of ``max_num_batched_tokens`` per step. First the
  RUNNING requests in admission order each get ``min(tokens still to compute, budget left)``
  (one for a decode, the rest of a prompt in chunks), with KV blocks of ``block_size`` tokens
  allocated as they grow; when the pool has no free block, the lowest-priority running request
  (the last admitted) is PREEMPTED by recompute: its blocks are freed, its computed tokens
  reset to 0 and it goes back to the FRONT of the waiting queue (``num_preemptions`` counted);
  a request that must preempt itself stops the pass. Then, if nobody was preempted in this step,
  WAITING requests are admitted first come first served while fewer than ``max_num_seqs`` run,
  budget is left and their first chunk's blocks fit (the first that does not fit stops the queue).
* **whole** (``--no-enable-chunked-prefill``; vLLM V0's policy, the one the analytic model
  assumes): if a waiting request can be admitted, the step is a prefill-only step of whole prompts
  (as many as fit the budget, ≥ max prompt; a preempted request's recompute, prompt + generated
  tokens, may pass it and then runs alone), and running decodes stall for it; otherwise every
  running request decodes. Same blocks and preemption.

A request's token is sampled by the step that finishes computing its known tokens (the last
prefill chunk gives the first token; a recomputed request resumes with its next token). Its
queue wait ends at the start of its first scheduled step. ``request_overhead_s`` (tokenizer,
API server; :class:`calc.spec.inputs.Efficiency`) delays entry into the waiting queue, so it is
in TTFT and E2E once, as in :func:`calc.timing.serving.closed_loop`.

Step time: :class:`calc.traffic.steptime.StepTimer`, identical to
:func:`calc.timing.serving.engine_step` of the batch (decodes read prompt + generated keys;
chunks attend causally after their cached tokens, sliding-window layers at most the window) —
the same physics as the analytic model and every page.

Speed: the loop runs once per engine step (the schedule of step k + 1 depends on the time step
k ends); within a step everything is NumPy over the running requests' arrays, and no Python
object exists per request. 2,000 requests of an 8B model in well under a second
(``bench/bench_simulate.py``).
"""

from __future__ import annotations

import heapq
import time
from array import array
from collections import deque
from dataclasses import dataclass

import numpy as np

from calc.timing.roofline import causal_attention_pairs, windowed_context_tokens
from calc.timing.serving import EngineNumbers
from calc.traffic.budget import ITL_MAX_SAMPLES
from calc.traffic.steptime import StepTimer
from calc.traffic.workload import Workload

MAX_STEPS = 5_000_000
_SPEC_FAST_FORWARD = True  # private switch: False runs every speculative step as a general pass (tests, bench)


@dataclass(frozen=True)
class EngineConfig:
    """The scheduler's knobs (vLLM names) and the KV pool in blocks."""

    max_num_seqs: int
    max_num_batched_tokens: int
    enable_chunked_prefill: bool
    num_blocks: int
    block_size: int = 16
    # vLLM V1 caches every full KV block by its tokens' hash (on by default): a preempted request's
    # freed blocks keep its KV until another allocation evicts them (least recently freed first), so
    # its recompute after readmission starts from what is left (:class:`_BlockPool`).
    enable_prefix_caching: bool = True


class _BlockPool:
    """vLLM V1's free-block queue, as far as preemption needs it (``v1/core/block_pool.py``):
    free blocks in the order they were freed, allocations evict from the front (least recently
    freed first). A preempted request's blocks are freed tail first (``kv_cache_manager.free``
    frees them reversed), so its partial last block goes first and its full blocks after, as a
    segment whose remaining count is the cached prefix it finds again when readmitted (a prefix
    cache hit on its own blocks). Without prefix caching only the count ``free`` is kept.

    >>> pool = _BlockPool(10, caching=True)
    >>> pool.take(8); pool.give(1); pool.give(3, owner=7); pool.free      # 7 preempted: 3 full blocks
    6
    >>> pool.take(4); pool.cached                                         # 3 plain + 1 of 7's evicted
    {7: 2}
    >>> pool.reclaim(7), pool.free                                        # readmitted: 2 blocks hit
    (2, 0)
    """

    def __init__(self, num_blocks: int, *, caching: bool) -> None:
        self.free = int(num_blocks)
        self.caching = bool(caching)
        self.queue: deque[list[int]] = deque([[-1, self.free]]) if self.caching else deque()
        self.cached: dict[int, int] = {}  # preempted request -> its full blocks still in the queue

    def take(self, n: int) -> None:
        """Allocate ``n`` free blocks, evicting from the front of the queue."""
        self.free -= n
        while self.caching and n > 0:
            seg = self.queue[0]
            m = min(n, seg[1])
            seg[1] -= m
            n -= m
            if seg[0] >= 0:
                self.cached[seg[0]] -= m
                if not self.cached[seg[0]]:
                    del self.cached[seg[0]]
            if not seg[1]:
                self.queue.popleft()

    def give(self, n: int, owner: int = -1) -> None:
        """Free ``n`` blocks at the back of the queue; ``owner`` ≥ 0: they hold its cached prefix."""
        self.free += n
        if not self.caching or n <= 0:
            return
        if owner < 0 and self.queue and self.queue[-1][0] < 0:
            self.queue[-1][1] += n
        else:
            self.queue.append([owner, n])
            if owner >= 0:
                self.cached[owner] = n

    def reclaim(self, owner: int) -> int:
        """The blocks of ``owner``'s prefix still cached leave the queue (held again); their count."""
        m = self.cached.pop(owner, 0)
        if m:
            for j, seg in enumerate(self.queue):
                if seg[0] == owner:
                    del self.queue[j]
                    break
            self.free -= m
        return m


class _Chains:
    """Prefix-cache chains for :func:`simulate` (``chains``, :class:`calc.traffic.prefix_cache.PrefixChains`):
    content shared by requests (a shared prefix, a conversation), found block by block as vLLM V1
    does (``kv_cache_manager.get_computed_blocks``: only full blocks, at most the prompt less its
    last token; a block is found once the request that computes it has computed it).

    A chain is either HELD (``ref`` > 0 running requests reference it: ``held`` blocks taken from
    the pool once, ``ready`` of them computed; a request joining it shares the ready ones and
    computes the rest itself) or CACHED (nobody runs with it: its computed blocks sit in the
    pool's free-block queue as a segment owned by key n + chain, evicted least recently freed
    first, tail block first). The first request of an idle chain reclaims what is left of its
    segment and holds the chain's blocks (its prefix ⌊tokens/bs⌋ blocks); a finishing request
    that held the whole chain extends it by its own full blocks (a conversation's turn).
    """

    def __init__(self, chains, pool: _BlockPool, *, n: int, block_size: int, prompt, out_len, gen) -> None:
        self.chain = np.asarray(chains.chain, dtype=np.int64)
        self.tokens = np.asarray(chains.chain_tokens, dtype=np.int64)
        self.after = np.asarray(chains.chain_after, dtype=np.int64)
        m = int(chains.num_chains)
        self.ref = np.zeros(m, dtype=np.int64)
        self.held = np.zeros(m, dtype=np.int64)
        self.ready = np.zeros(m, dtype=np.int64)
        self.pool, self.n, self.bs = pool, int(n), int(block_size)
        self.prompt, self.out, self.gen = prompt, out_len, gen

    def _blocks(self, i: int) -> int:
        """Chain blocks request ``i`` can find: full blocks of its chain tokens, its last token computed."""
        return max(min(int(self.tokens[i]), int(self.prompt[i] + self.gen[i]) - 1), 0) // self.bs

    def hit(self, i: int) -> tuple[int, int]:
        c = int(self.chain[i])
        found = int(self.ready[c]) if self.ref[c] > 0 else self.pool.cached.get(self.n + c, 0)
        hb = min(found, self._blocks(i))
        return hb * self.bs, hb

    def need(self, i: int, h: int, hb: int, a: int) -> tuple[int, int]:
        c = int(self.chain[i])
        end = _ceil_div(h + a, self.bs)
        if self.ref[c] == 0:  # it will hold the chain: reclaim the cached m, take the rest of the prefix
            m = self.pool.cached.get(self.n + c, 0)
            base = max(self._blocks(i), m)
            return base - m + max(end - base, 0), self.pool.free - m
        return max(end - hb, 0), self.pool.free

    def join(self, i: int, h: int, hb: int, a: int, blocks: int) -> tuple[int, int]:
        """Admit ``i`` (``blocks`` from :meth:`need`): (blocks it holds, of which shared)."""
        c = int(self.chain[i])
        if self.ref[c] == 0:
            m = self.pool.reclaim(self.n + c)
            self.pool.take(blocks)
            base = max(self._blocks(i), m)
            self.held[c], self.ready[c], self.ref[c] = base, m, 1
            return base + max(_ceil_div(h + a, self.bs) - base, 0), base
        self.pool.take(blocks)
        self.ref[c] += 1
        return hb + blocks, hb

    def computed(self, rid, rc, rs) -> None:
        """After a step: the chain blocks its holders have computed can be found."""
        mask = rs > 0
        if mask.any():
            np.maximum.at(self.ready, self.chain[rid[mask]], np.minimum(rc[mask] // self.bs, rs[mask]))

    def _release(self, c: int, segs: list) -> None:
        self.ref[c] -= 1
        if self.ref[c] == 0:  # nobody runs with it: to the free queue, uncomputed blocks first
            segs.append((c, int(self.held[c] - self.ready[c]), int(self.ready[c])))
            self.held[c] = self.ready[c] = 0

    def leave(self, i: int):
        """``i`` preempted: it stops referencing its chain (its own blocks the caller frees)."""
        segs: list = []
        self._release(int(self.chain[i]), segs)
        return 0, segs

    def finish(self, ids, held, shared):
        """Requests ``ids`` finished: (their own blocks that became chain content, chain segments
        to free)."""
        to_chain, segs = 0, []
        for i, h_, s_ in zip(ids.tolist(), held.tolist(), shared.tolist()):
            c = int(self.chain[i])
            if c < 0:
                continue
            ab = max(min(int(self.after[i]), int(self.prompt[i] + self.out[i]) - 1), 0) // self.bs
            if s_ == self.held[c] and ab > s_:  # it held the whole chain: its own full blocks extend it
                extra = min(ab, h_) - s_
                if extra > 0:
                    self.held[c] += extra
                    self.ready[c] = self.held[c]
                    to_chain += extra
            self._release(c, segs)
        return to_chain, segs


def _give_back(pool: _BlockPool, freed: int, kept, n: int) -> None:
    """Free ``freed`` own blocks of finished requests; ``kept`` (from :class:`_Chains`): of those,
    the ones now chain content, and chain segments (chain, uncomputed, cached) to free after them."""
    if kept is None:
        pool.give(freed)
        return
    to_chain, segs = kept
    pool.give(freed - to_chain)
    for c, anon, cached in segs:
        pool.give(anon)
        pool.give(cached, owner=n + c)


@dataclass(frozen=True)
class SimResult:
    """Per-request metrics (axis 0 = request, in workload order; seconds) and per-step series."""

    arrival_s: np.ndarray
    input_len: np.ndarray
    output_len: np.ndarray
    first_token_s: np.ndarray  # absolute time of the first token
    finish_s: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray  # (E2E − TTFT)/(O − 1); NaN for O = 1
    e2e_latency_s: np.ndarray
    queue_wait_s: np.ndarray  # entering the engine's queue (after the API server and request overhead) → first step
    preemptions: np.ndarray  # per request
    itl_s: np.ndarray  # every inter-token gap of every request (flat); a quantile sketch when itl_sketched
    # per step
    step_start_s: np.ndarray
    step_s: np.ndarray
    step_waiting: np.ndarray  # requests waiting when the step was scheduled (after admission)
    step_running: np.ndarray  # requests running in the step
    step_kv_blocks: np.ndarray  # KV blocks in use after the step's allocation
    step_prefill_tokens: np.ndarray
    step_decode_tokens: np.ndarray
    num_blocks: int
    block_size: int
    truncated: bool  # stopped at max_steps (or max_passes) before every request finished
    passes: int = 0  # scheduler loop passes run (a fast-forwarded decode run is one): the CPU cost
    # more than ITL_MAX_SAMPLES gaps: itl_s is ITL_MAX_SAMPLES evenly spaced quantiles of them (its
    # percentiles within 1/ITL_MAX_SAMPLES of rank of the exact ones) and itl_mean_s their exact mean
    itl_sketched: bool = False
    itl_mean_s: float = float("nan")
    # prompt tokens each request found in the prefix cache at its first admission (None: not tracked)
    cached_tokens: np.ndarray | None = None

    @property
    def prefix_cache_hit_rate(self) -> float:
        """Prompt tokens served from the prefix cache over all prompt tokens (first admissions)."""
        if self.cached_tokens is None:
            return 0.0
        return float(self.cached_tokens.sum() / max(int(self.input_len.sum()), 1))

    @property
    def num_requests(self) -> int:
        return int(self.arrival_s.size)

    @property
    def total_preemptions(self) -> int:
        return int(self.preemptions.sum())

    @property
    def makespan_s(self) -> float:
        """First arrival to last finish (NaN when no request finished: a run cut at the step cap)."""
        done = np.isfinite(self.finish_s)
        return float(self.finish_s[done].max() - np.nanmin(self.arrival_s)) if done.any() else float("nan")


def _ceil_div(a, b):
    return -(-a // b)


def frontend_entry_s(arrival_s, *, service_s, latency_s=0.0, free_at_s=0.0, final_share=1.0):
    """When requests arriving at ``arrival_s`` (sorted) enter the engine's waiting queue, and when
    the API server is free again. The server is one process that works ``service_s`` on each request
    (:class:`calc.spec.inputs.Efficiency` ``api_server_request_s``), then ``latency_s`` passes that
    occupies nobody (``request_overhead_s``).

    One after another, first come first served: Lindley's recursion d_i = max(a_i, d_(i-1)) + s, in
    closed form d_i = s·(i + 1) + max(free_at, max_(j ≤ i)(a_j − s·j)).

    Requests that arrive together (a burst, a closed loop's clients starting at once) take turns instead
    when ``final_share`` f < 1 (``api_server_final_share``). The server is an asyncio event loop: a
    request's task runs (1 − f)·s, awaits (vLLM 0.11's chat endpoint: the tokenizer's thread), and when
    ready again joins the END of the loop's ready queue, behind every request still on its first part;
    its last f·s hands it to the engine. So N requests that came at t leave at
    d_i = t + N·(1 − f)·s + (i + 1)·f·s, where first come first served has t + (i + 1)·s; the last one
    leaves at the same time either way (the same work). Requests that arrive spread out (an open loop)
    are taken first come first served, as the analytic open loop's M/D/1 takes them
    (calc.traffic.queueing): the turns of two that overlap by chance are not modelled. Only for the
    requests known up front (``free_at_s`` 0): one more request reaching a busy server (a closed loop's
    next request, ``free_at_s``) is taken first come first served.

    >>> e, free = frontend_entry_s([0.0, 0.0, 0.0, 1.0], service_s=0.02, latency_s=0.002)
    >>> [round(x, 3) for x in e.tolist()], round(free, 3)
    ([0.022, 0.042, 0.062, 1.022], 1.02)

    With f = 0.25, the three that came together: 3 · 0.75 · 0.02 = 0.045, then 0.005 apart.

    >>> e, free = frontend_entry_s([0.0, 0.0, 0.0, 1.0], service_s=0.02, final_share=0.25)
    >>> [round(x, 3) for x in e.tolist()], round(free, 3)
    ([0.05, 0.055, 0.06, 1.02], 1.02)
    """
    a = np.asarray(arrival_s, dtype=float)
    if a.size == 0:
        return a.copy(), float(free_at_s)
    if service_s <= 0.0:
        return a + latency_s, float(free_at_s)
    j = np.arange(a.size, dtype=float)
    done = service_s * (j + 1.0) + np.maximum(np.maximum.accumulate(a - service_s * j), free_at_s)
    f = float(final_share)
    if f < 1.0 and free_at_s <= 0.0 and a.size > 1:
        # the requests that arrived at one instant: a group of two or more leaves in turns
        starts = np.flatnonzero(np.concatenate([[True], a[1:] != a[:-1]]))
        ends = np.append(starts[1:], a.size)
        many = (ends - starts) > 1
        for lo, hi in zip(starts[many].tolist(), ends[many].tolist()):
            k = np.arange(1, hi - lo + 1, dtype=float)
            first = done[lo] - service_s  # when the server takes up the group (free, or their arrival)
            done[lo:hi] = first + service_s * ((hi - lo) * (1.0 - f) + f * k)
    return done + latency_s, float(done[-1])


def _retire(fin, end, running, finish_t, arrival, pending, next_new, workload, t_req, frontend=None):
    """Retire the running requests flagged ``fin`` (their last token came at ``end``).

    Sets their finish time, drops them from the running arrays (``running``, in admission order:
    ids first, KV blocks held sixth) and, in a closed loop, lets each finished client's next
    request arrive ``think_s`` later (entering the queue after the API server, ``frontend`` = [service
    seconds, time it is free], and ``t_req`` of latency). Returns the kept
    running arrays, the KV blocks freed, the next request index not yet arrived and how many
    finished (nothing changes when none did).
    """
    n_done = int(np.count_nonzero(fin))
    if n_done == 0:
        return running, 0, next_new, 0
    rid, rh = running[0], running[5]
    fid = rid[fin]
    finish_t[fid] = end
    freed = int(rh[fin].sum())
    if len(running) > 7:  # blocks shared through the prefix cache are the chain's (_Chains), not freed here
        freed -= int(running[7][fin].sum())
    keep = ~fin
    running = tuple(a[keep] for a in running)
    if workload.closed:
        for _ in range(int(fid.size)):
            if next_new < finish_t.size:  # requests in the workload
                sent = end + workload.think_s  # a capped open loop: not before the request's own arrival
                if workload.capped:
                    sent = max(sent, float(workload.arrival_s[next_new]))
                arrival[next_new] = sent
                entry, frontend[1] = frontend_entry_s([sent], service_s=frontend[0],
                                                      latency_s=t_req, free_at_s=frontend[1])
                heapq.heappush(pending, (float(entry[0]), next_new))
                next_new += 1
    return running, freed, next_new, n_done


class _Gaps:
    """Inter-token gaps as (value, count) runs (a fast-forwarded decode run gives one value to a
    whole batch), bounded: past ``2 · limit`` runs they are merged into ``limit`` runs of equal
    weight in value order (each the weighted mean of its group, so the sum and the count stay
    exact), and :meth:`result` returns every gap only while nothing was merged.

    >>> g = _Gaps(limit=4); g.add(np.array([1.0, 2.0]), np.array([1, 3])); g.result()
    (array([1., 2., 2., 2.]), False, 1.75)
    >>> for k in range(10): g.add(np.array([float(k)]), np.array([2]))
    >>> x, sketched, mean = g.result(); x.size, sketched, mean == 97 / 24    # (1 + 6 + 2·45) / (4 + 20)
    (4, True, True)
    """

    def __init__(self, limit: int = ITL_MAX_SAMPLES) -> None:
        self.limit = int(limit)
        self.vals: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        self.runs = 0
        self.total = 0
        self.merged = False

    def add(self, vals, counts) -> None:
        self.vals.append(np.asarray(vals, dtype=float))
        self.counts.append(np.asarray(counts, dtype=np.int64))
        self.runs += self.vals[-1].size
        self.total += int(self.counts[-1].sum())
        if self.runs > 2 * self.limit:
            self._merge(self.limit)

    def _merge(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        v, c = np.concatenate(self.vals), np.concatenate(self.counts)
        order = np.argsort(v, kind="stable")
        v, c = v[order], c[order]
        cum = np.cumsum(c)
        group = np.minimum(((cum - c / 2.0) * size // cum[-1]).astype(np.int64), size - 1)
        w = np.bincount(group, weights=c, minlength=size)
        sv = np.bincount(group, weights=v * c, minlength=size)
        keep = w > 0
        v, c = sv[keep] / w[keep], np.rint(w[keep]).astype(np.int64)
        self.vals, self.counts, self.runs, self.merged = [v], [c], int(v.size), True
        return v, c

    def result(self) -> tuple[np.ndarray, bool, float]:
        """(gaps, sketched, exact mean): every gap while at most ``limit`` and nothing was merged,
        else ``limit`` evenly spaced quantiles of them (values in order)."""
        if self.total == 0:
            return np.zeros(0), False, float("nan")
        v, c = np.concatenate(self.vals), np.concatenate(self.counts)
        mean = float((v * c).sum() / self.total)
        if not self.merged and self.total <= self.limit:
            return np.repeat(v, c), False, mean
        v, c = self._merge(self.limit)  # sorted groups
        m = self.limit
        idx = np.searchsorted(np.cumsum(c), (np.arange(m) + 0.5) / m * self.total, side="left")
        return v[np.minimum(idx, v.size - 1)], True, mean


# Pure decode runs longer than this many steps are timed as one vector (StepTimer.decode_run, ~15 µs)
# rather than step by step (~9 µs a step): the default planner check spent 5.8 of its 18 s in
# engine_step's vectorized calls (0.75 ms each) and 2.2 s in 215,000 scalar steps.
DECODE_RUN_VECTOR_MIN_STEPS = 3
DEADLINE_EVERY_PASSES = 32  # a pass costs 80-300 µs (calc.traffic.budget): the deadline holds to ~10 ms


def simulate(e: EngineNumbers, workload: Workload, cfg: EngineConfig, *, max_steps: int | None = None,
             max_passes: int | None = None, timer: StepTimer | None = None, speculative=None,
             remote_kv_tokens: np.ndarray | None = None, chains=None,
             deadline_thread_s: float | None = None) -> SimResult:
    """Run ``workload`` through the scheduler (module docstring) until every request finishes, or
    for at most ``max_steps`` engine steps (default :data:`MAX_STEPS`, read at call time) or
    ``max_passes`` passes of the scheduler loop (default: no limit; the CPU time is about
    proportional to the passes, not to the steps, as runs of pure decode steps are fast-forwarded
    in one pass), or until this thread's CPU clock (``time.thread_time()``) passes
    ``deadline_thread_s`` (read every :data:`DEADLINE_EVERY_PASSES` passes: a budget that holds on
    a slower machine than the one the pass costs were measured on); a run cut there has ``truncated`` set and NaN times for the requests that did
    not finish. ``remote_kv_tokens`` (per request): prompt tokens whose KV arrives from another
    engine (a decode instance of prefill/decode disaggregation, :mod:`calc.traffic.disaggregation`):
    at its first admission they count as computed (their blocks are allocated, not computed), the
    last prompt token is computed again and samples the first token, as vLLM's KV connectors do.
    ``chains`` (:class:`calc.traffic.prefix_cache.PrefixChains`): requests that share
    cached content (a shared prefix, a conversation), found block by block (:class:`_Chains`).

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.timing.estimate import engine_numbers
    >>> from calc.traffic.workload import make_workload, LengthSpec
    >>> from calc.spec.inputs import Efficiency
    >>> e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"),   # no API server:
    ...                    efficiency=Efficiency(api_server_request_s=0.0))            # all 4 at once
    >>> w = make_workload(arrival="burst", num_requests=4, input_len=LengthSpec("fixed", 100),
    ...                   output_len=LengthSpec("fixed", 3))
    >>> r = simulate(e, w, EngineConfig(max_num_seqs=8, max_num_batched_tokens=256,
    ...                                 enable_chunked_prefill=True, num_blocks=1000))
    >>> r.step_prefill_tokens.tolist(), r.step_decode_tokens.tolist()   # 2.56 prompts per step
    ([256, 144, 0, 0], [0, 2, 4, 2])
    """
    max_steps = MAX_STEPS if max_steps is None else int(max_steps)
    max_passes = -1 if max_passes is None else int(max_passes)
    n = workload.num_requests
    prompt = workload.input_len.astype(np.int64)
    out_len = workload.output_len.astype(np.int64)
    bs = int(cfg.block_size)
    chunked = bool(cfg.enable_chunked_prefill)
    budget = int(cfg.max_num_batched_tokens) if chunked else max(int(cfg.max_num_batched_tokens), int(prompt.max()))
    max_seqs = int(cfg.max_num_seqs)
    if max_seqs < 1 or budget < 1 or bs < 1:
        raise ValueError("max_num_seqs, max_num_batched_tokens and block_size must be >= 1")
    free = int(cfg.num_blocks)
    # A request larger than the whole pool can never run (vLLM refuses it at startup/admission).
    too_big = _ceil_div(prompt + out_len, bs) > free
    if too_big.any():
        i = int(np.flatnonzero(too_big)[0])
        raise ValueError(f"request {i}: input_len + output_len = {int(prompt[i] + out_len[i])} tokens needs more "
                         f"KV blocks than the pool holds ({free} blocks of {bs})")
    # Without chunked prefill a preempted request's recompute (prompt + tokens generated, at most
    # input + output - 1) may pass the budget and run alone: the step table must reach it.
    longest_step = budget if chunked else max(budget, int((prompt + out_len).max()) - 1)
    pool = _BlockPool(free, caching=cfg.enable_prefix_caching)
    remote = None if remote_kv_tokens is None else np.asarray(remote_kv_tokens, dtype=np.int64)
    gen = np.zeros(n, dtype=np.int64)  # output tokens produced (saved at preemption)
    chn = (_Chains(chains, pool, n=n, block_size=bs, prompt=prompt, out_len=out_len, gen=gen)
           if chains is not None and cfg.enable_prefix_caching and chains.num_chains > 0 else None)
    hit_tokens = np.zeros(n, dtype=np.int64)

    def hit(i: int) -> tuple[int, int]:
        """Tokens of waiting request ``i`` whose KV is still cached and the blocks holding them
        (at least its last token is computed again: its step samples the next token)."""
        if chn is not None and chn.chain[i] >= 0:
            return chn.hit(i)
        hb = pool.cached.get(i, 0)
        if not hb and remote is not None and not gen[i] and not preempt[i]:
            return min(int(remote[i]), int(prompt[i]) - 1), 0  # KV received: its blocks are taken, not computed
        return (min(hb * bs, int(prompt[i] + gen[i]) - 1) if hb else 0), hb

    def blocks_for(i: int, h: int, hb: int, a: int) -> tuple[int, int]:
        """(new blocks request ``i`` takes to run ``a`` tokens after its hit, free blocks it may take)."""
        if chn is not None and chn.chain[i] >= 0:
            return chn.need(i, h, hb, a)
        return max(_ceil_div(h + a, bs) - hb, 0), pool.free - hb
    timer = timer or StepTimer(e, max_tokens=longest_step + max_seqs)
    # Speculative decoding (calc.traffic.speculative): ``speculative`` is (Drafter, accepted_at_position)
    spec = None
    if speculative is not None:
        from calc.traffic.speculative import SpeculativeSim  # noqa: PLC0415

        spec = SpeculativeSim(*speculative, max_tokens=longest_step + max_seqs)
    t_req = float(e.request_overhead_s)
    frontend = [float(e.api_server_request_s), 0.0]  # API server: service per request, time it is free
    f_api = float(e.api_server_final_share)  # its share after the last await (frontend_entry_s)
    phi = float(e.sliding_fraction)
    window = float(e.sliding_window)
    sliding = phi > 0 and np.isfinite(window)

    arrival = workload.arrival_s.astype(float).copy()
    comp = np.zeros(n, dtype=np.int64)  # KV tokens computed (kept for waiting requests)
    first_t = np.full(n, np.nan)
    finish_t = np.full(n, np.nan)
    sched_t = np.full(n, np.nan)
    last_emit = np.zeros(n)
    preempt = np.zeros(n, dtype=np.int64)
    # running requests, admission order: ids, prompt, output, computed, generated, blocks, last token time
    rid = np.zeros(0, dtype=np.int64)
    rp, ro, rc, rg, rh = rid.copy(), rid.copy(), rid.copy(), rid.copy(), rid.copy()
    rl = np.zeros(0)
    rs = rid.copy()  # of rh, the leading blocks shared through a prefix-cache chain (not the request's own)

    next_new = 0
    if workload.closed:
        next_new = min(workload.closed_clients, n)
        first = np.asarray(workload.arrival_s[:next_new], dtype=float) if workload.capped else np.zeros(next_new)
        arrival[:] = np.nan
        arrival[:next_new] = first  # the clients start together; a capped open loop's first C at their arrivals
        entry, frontend[1] = frontend_entry_s(first, service_s=frontend[0], latency_s=t_req, final_share=f_api)
    else:
        entry, frontend[1] = frontend_entry_s(arrival, service_s=frontend[0], latency_s=t_req, final_share=f_api)
    entered = np.full(n, np.nan)
    pending = [(float(t), i) for i, t in enumerate(entry.tolist())]
    heapq.heapify(pending)  # (time the request enters the waiting queue, index)
    waiting: deque[int] = deque()
    gaps = _Gaps()
    # per-step series as typed arrays (8 B an entry; a list of Python floats takes ~32 B)
    s_start, s_dt = array("d"), array("d")
    s_wait, s_run, s_kv, s_pf, s_dec = array("q"), array("q"), array("q"), array("q"), array("q")
    now = 0.0
    done = 0
    total_blocks = free

    passes = 0
    while done < n and len(s_dt) < max_steps and passes != max_passes:
        passes += 1
        if deadline_thread_s is not None and not passes % DEADLINE_EVERY_PASSES and time.thread_time() > deadline_thread_s:
            break
        while pending and pending[0][0] <= now + 1e-12:
            t_in, i_in = heapq.heappop(pending)
            entered[i_in] = t_in
            waiting.append(i_in)
        R = int(rid.size)
        if R == 0 and not waiting:
            if not pending:
                break
            now = pending[0][0]
            continue
        # Admission possible this step? (head of the queue: sequence slot, its first chunk's blocks)
        can_admit = False
        if waiting and R < max_seqs:
            i0 = waiting[0]
            h0, hb0 = hit(i0)
            need0 = int(prompt[i0] + gen[i0] - comp[i0]) - h0
            # (with speculation each running request takes 1 + k of the chunked budget)
            room = budget - R * (1 + (spec.k if spec is not None else 0)) if chunked else budget
            first = min(need0, room) if chunked else need0
            nb0, avail0 = blocks_for(i0, h0, hb0, first)
            can_admit = first > 0 and nb0 <= avail0
        # (rg > 0: a prompt with one token left to compute is not a decode: its token is the first)
        all_decoding = R > 0 and bool(np.all((rc == rp + rg - 1) & (rg > 0)))
        if all_decoding and not can_admit and R <= budget and spec is None:
            # ---- a run of pure decode steps, fast-forwarded until the next event ----
            # (a finish, an arrival into an empty queue, or the KV pool running out; a blocked
            # queue stays blocked while blocks only get used)
            k_max = int((ro - rg).min())
            hist = np.bincount((-rc) % bs, minlength=bs)  # requests needing a new block at step j ≡ f (mod bs)
            cum_nb = np.cumsum(hist[np.arange(min(k_max, 4 * bs + 1024)) % bs])
            k = min(k_max, int(np.count_nonzero(cum_nb <= pool.free)))
            if k > 0:
                ta = pending[0][0] if (pending and not waiting) else np.inf
                if sliding:
                    base_keys = rc + 1
                else:
                    ctx0 = float((rc + 1).sum())
                if k > DECODE_RUN_VECTOR_MIN_STEPS and not sliding:
                    # a run: one vector expression of the same step time (StepTimer.decode_run)
                    dts_a = timer.decode_run(R, ctx0, k)
                    starts = now + np.concatenate([[0.0], np.cumsum(dts_a)[:-1]])
                    k = max(1, int(np.count_nonzero(starts < ta - 1e-12)))
                    dts = dts_a[:k].tolist()
                    s_start.extend(starts[:k].tolist())
                    t = float(starts[k - 1] + dts_a[k - 1])
                else:
                    dts = []
                    t = now
                    for j in range(k):
                        if j and t >= ta - 1e-12:
                            break
                        if sliding:
                            ctx = float(windowed_context_tokens(context_tokens=base_keys + j, sliding_window=window,
                                                                sliding_fraction=phi).sum())
                        else:
                            ctx = ctx0 + j * R
                        dt = timer(R, ctx, 0, 0.0, 0.0, R)
                        s_start.append(t)
                        dts.append(dt)
                        t += dt
                k = len(dts)
                s_dt.extend(dts)
                s_wait.extend([len(waiting)] * k)
                s_run.extend([R] * k)
                used0 = total_blocks - pool.free
                s_kv.extend((used0 + cum_nb[:k]).tolist())
                s_pf.extend([0] * k)
                s_dec.extend([R] * k)
                pool.take(int(cum_nb[k - 1]))
                end = t
                gaps.add(now + dts[0] - rl, np.ones(R, dtype=np.int64))
                if k > 1:
                    gaps.add(np.asarray(dts[1:]), np.full(k - 1, R, dtype=np.int64))
                rc = rc + k
                rg = rg + k
                rh = np.maximum(_ceil_div(rc, bs), rh)
                rl = np.full(R, end)
                now = end
                fin = rg >= ro
                kept = chn.finish(rid[fin], rh[fin], rs[fin]) if chn is not None and fin.any() else None
                (rid, rp, ro, rc, rg, rh, rl, rs), freed, next_new, n_done = _retire(
                    fin, end, (rid, rp, ro, rc, rg, rh, rl, rs), finish_t, arrival, pending, next_new, workload, t_req,
                    frontend)
                _give_back(pool, freed, kept, n)
                done += n_done
                continue
        if (all_decoding and not can_admit and spec is not None and _SPEC_FAST_FORWARD and spec.k > 0
                and R * (spec.k + 1) <= budget):
            # ---- speculative decode steps of a fixed batch, fast-forwarded (calc.traffic.speculative) ----
            run = spec.decode_run(timer, now=now, rc=rc, rg=rg, ro=ro, rh=rh, free=pool.free, bs=bs,
                                  arrival_s=pending[0][0] if (pending and not waiting) else np.inf,
                                  steps_left=max_steps - len(s_dt), sequence_overhead_s=float(e.sequence_overhead_s),
                                  sliding=(phi, window) if sliding else None)
            if run is not None:
                starts, dts, taken, gained, rh = run
                k = len(dts)
                s_start.extend(starts)
                s_dt.extend(dts)
                if waiting and pending:  # a blocked queue: requests entering it during the run count from then on
                    t_in = np.sort(np.fromiter((p[0] for p in pending), dtype=float, count=len(pending)))
                    entered_by = np.searchsorted(t_in, np.asarray(starts) + 1e-12, side="right")
                    s_wait.extend((len(waiting) + entered_by).tolist())
                else:
                    s_wait.extend([len(waiting)] * k)
                s_run.extend([R] * k)
                s_kv.extend((total_blocks - pool.free + taken).tolist())
                s_pf.extend([R * (spec.k + 1)] * k)
                s_dec.extend([0] * k)
                pool.take(int(taken[-1]))
                end = starts[-1] + dts[-1]
                gaps.add(end - rl if k == 1 else starts[1] - rl, np.ones(R, dtype=np.int64))
                if k > 1:
                    gaps.add(np.asarray(dts[1:]), np.full(k - 1, R, dtype=np.int64))
                rc, rg, rl, now = rc + gained, rg + gained, np.full(R, end), end
                fin = rg >= ro
                kept = chn.finish(rid[fin], rh[fin], rs[fin]) if chn is not None and fin.any() else None
                (rid, rp, ro, rc, rg, rh, rl, rs), freed, next_new, n_done = _retire(
                    fin, end, (rid, rp, ro, rc, rg, rh, rl, rs), finish_t, arrival, pending, next_new, workload, t_req,
                    frontend)
                _give_back(pool, freed, kept, n)
                done += n_done
                continue
        # ---- a general step ----
        preempted = False
        whole_prefill = not chunked and can_admit
        if R and not whole_prefill:
            need = rp + rg - rc
            if spec is not None:  # a decoding request is scheduled its token + k drafts
                need = need + np.where((need == 1) & (rg > 0), spec.k, 0)
            cs = np.cumsum(need)
            alloc = np.minimum(need, np.maximum(budget - (cs - need), 0))
            nb = np.maximum(_ceil_div(rc + alloc, bs) - rh, 0)
            if int(nb.sum()) > pool.free:
                # keep the longest prefix whose growth fits the free blocks plus the victims' blocks
                own = rh - rs
                suffix_held = int(own.sum()) - np.cumsum(own)
                k = int(np.count_nonzero(np.cumsum(nb) <= pool.free + suffix_held))
                victims = rid[k:]
                for v, held, computed, shared in zip(victims[::-1].tolist(), rh[k:][::-1].tolist(),
                                                     rc[k:][::-1].tolist(), rs[k:][::-1].tolist()):
                    if chn is not None and chn.chain[v] >= 0:  # its own blocks go; the chain's stay shared
                        pool.give(held - shared)
                        _give_back(pool, 0, chn.leave(v), n)
                        continue
                    full = min(held, computed // bs)  # the last admitted is preempted (freed) first
                    pool.give(held - full)  # its partial tail block and blocks not yet written
                    pool.give(full, owner=v)
                gen[victims] = rg[k:]
                comp[victims] = 0
                last_emit[victims] = rl[k:]
                preempt[victims] += 1
                waiting.extendleft(victims[::-1].tolist())
                rid, rp, ro, rc, rg, rh, rl, rs = rid[:k], rp[:k], ro[:k], rc[:k], rg[:k], rh[:k], rl[:k], rs[:k]
                alloc, nb = alloc[:k], nb[:k]
                preempted = True
            pool.take(int(nb.sum()))
            rh = rh + nb
            left = budget - int(alloc.sum())
        else:
            alloc = np.zeros(R, dtype=np.int64)
            left = budget
        # ---- waiting requests, first come first served ----
        if not preempted and (chunked or whole_prefill):
            new_ids: list[int] = []
            new_alloc: list[int] = []
            new_blocks: list[int] = []
            new_hit: list[int] = []
            new_shared: list[int] = []
            n_run = int(rid.size)
            while waiting and left > 0 and n_run < max_seqs:
                i = waiting[0]
                h, hb = hit(i)  # a preempted request's prefix still in the cache
                need_i = int(prompt[i] + gen[i]) - h
                if not chunked and need_i > left:
                    if new_ids:
                        break
                    # A preempted request recomputes prompt + generated tokens, which can pass the
                    # budget (≥ max prompt): it runs alone (vLLM requires a budget ≥ max_model_len
                    # without chunked prefill, so there it always fits one step).
                    a = need_i
                else:
                    a = need_i if need_i < left else left
                blocks, avail = blocks_for(i, h, hb, a)
                if blocks > avail:
                    break
                waiting.popleft()
                if np.isnan(sched_t[i]):
                    hit_tokens[i] = h
                if chn is not None and chn.chain[i] >= 0:
                    held_i, shared_i = chn.join(i, h, hb, a, blocks)
                else:
                    pool.reclaim(i)
                    pool.take(blocks)
                    held_i, shared_i = hb + blocks, 0
                new_ids.append(i)
                new_alloc.append(a)
                new_blocks.append(held_i)
                new_shared.append(shared_i)
                new_hit.append(h)
                left -= a
                n_run += 1
            if new_ids:
                ni = np.array(new_ids, dtype=np.int64)
                sched_t[ni[np.isnan(sched_t[ni])]] = now
                rid = np.concatenate([rid, ni])
                rp = np.concatenate([rp, prompt[ni]])
                ro = np.concatenate([ro, out_len[ni]])
                rc = np.concatenate([rc, np.array(new_hit, dtype=np.int64)])
                rg = np.concatenate([rg, gen[ni]])
                rh = np.concatenate([rh, np.array(new_blocks, dtype=np.int64)])
                rl = np.concatenate([rl, last_emit[ni]])
                rs = np.concatenate([rs, np.array(new_shared, dtype=np.int64)])
                alloc = np.concatenate([alloc, np.array(new_alloc, dtype=np.int64)])
        if not alloc.any():
            if waiting and (preempted or rid.size == 0):
                continue  # everyone was preempted: the next pass admits from the queue
            if pending:
                now = max(now, pending[0][0])
                continue
            raise RuntimeError("scheduler stalled: no request can be scheduled")  # pragma: no cover
        # ---- composition and time of the step ----
        tot = rp + rg
        is_dec = (alloc == 1) & (tot - rc == 1)
        is_pf = (alloc > 0) & ~is_dec
        d = int(np.count_nonzero(is_dec))
        keys = (rc + 1)[is_dec]
        c = alloc[is_pf].astype(float)
        s = rc[is_pf].astype(float)
        if sliding:
            ctx = float(windowed_context_tokens(context_tokens=keys, sliding_window=window,
                                                sliding_fraction=phi).sum())
            pairs = float(((1.0 - phi) * causal_attention_pairs(new_tokens=c, cached_tokens=s)
                           + phi * causal_attention_pairs(new_tokens=c, cached_tokens=s, window=window)).sum())
            cached = float(windowed_context_tokens(context_tokens=s, sliding_window=window,
                                                   sliding_fraction=phi).sum())
        else:
            ctx = float(keys.sum())
            pairs = float((c * s + c * (c + 1.0) / 2.0).sum())
            cached = float(s.sum())
        if spec is not None:  # verifies: decoding requests scheduled more than one token (their drafts)
            sp = (tot - rc == 1) & (alloc > 1)
            gained = np.where(sp, np.minimum(spec.accepted(np.where(sp, alloc - 1, 0)) + 1, ro - rg), 0)
            extra_logits = int((alloc[sp] - 1).sum())
            rc_spec = rc + gained
        rc = rc + alloc
        if chn is not None:
            chn.computed(rid, rc, rs)
        emit = (alloc > 0) & (rc == tot)
        if spec is not None:
            rc = np.where(sp, rc_spec, rc)
            emit = emit | sp
        p_tok = int(c.sum())
        # logits rows: vLLM V1 computes logits at the last position of EVERY scheduled request
        # (gpu_model_runner: logits_indices = query_start_loc[1:] - 1), partial chunks included;
        # the same count is the step's sequences for the engine's per-sequence CPU time.
        if spec is None:
            dt = timer(d, ctx, p_tok, pairs, cached, int(np.count_nonzero(alloc > 0)))
        else:
            # the verify's logits rows (one per draft beyond the request's own) without more
            # per-sequence CPU time, and the drafter over this step's tokens for every request that
            # produced a token
            dt = timer(d, ctx, p_tok, pairs, cached, int(np.count_nonzero(alloc > 0)) + extra_logits) \
                - extra_logits * float(e.sequence_overhead_s)
            dt += spec.draft_s(seqs=int(np.count_nonzero(emit)), seq_keys_sum=float(rc[emit].sum()),
                               tokens=d + p_tok, pairs=ctx + pairs, cached=cached)
        end = now + dt
        s_start.append(now)
        s_dt.append(dt)
        s_wait.append(len(waiting))
        s_run.append(int(rid.size))
        s_kv.append(total_blocks - pool.free)
        s_pf.append(p_tok)
        s_dec.append(d)
        # ---- tokens out ----
        if emit.any():
            rg = rg + (emit if spec is None else np.where(sp, gained, emit))
            firsts = emit & (rg == 1)
            if firsts.any():
                first_t[rid[firsts]] = end
            later = emit & (rg > 1)
            if later.any():
                gaps.add(end - rl[later], np.ones(int(np.count_nonzero(later)), dtype=np.int64))
            rl = np.where(emit, end, rl)
            fin = rg >= ro
            kept = chn.finish(rid[fin], rh[fin], rs[fin]) if chn is not None and fin.any() else None
            (rid, rp, ro, rc, rg, rh, rl, rs), freed, next_new, n_done = _retire(
                fin, end, (rid, rp, ro, rc, rg, rh, rl, rs), finish_t, arrival, pending, next_new, workload, t_req,
                    frontend)
            _give_back(pool, freed, kept, n)
            done += n_done
        now = end

    itl, itl_sketched, itl_mean = gaps.result()
    ttft = first_t - arrival
    e2e = finish_t - arrival
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(out_len > 1, (finish_t - first_t) / np.maximum(out_len - 1, 1), np.nan)
    return SimResult(
        arrival_s=arrival, input_len=prompt, output_len=out_len, first_token_s=first_t, finish_s=finish_t,
        ttft_s=ttft, tpot_s=tpot, e2e_latency_s=e2e, queue_wait_s=sched_t - entered, preemptions=preempt,
        itl_s=itl,
        step_start_s=np.array(s_start, dtype=float), step_s=np.array(s_dt, dtype=float),
        step_waiting=np.array(s_wait, dtype=np.int64), step_running=np.array(s_run, dtype=np.int64),
        step_kv_blocks=np.array(s_kv, dtype=np.int64), step_prefill_tokens=np.array(s_pf, dtype=np.int64),
        step_decode_tokens=np.array(s_dec, dtype=np.int64),
        num_blocks=int(cfg.num_blocks), block_size=bs, truncated=done < n, passes=passes, itl_sketched=itl_sketched,
        itl_mean_s=itl_mean, cached_tokens=hit_tokens)

