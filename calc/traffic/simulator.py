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
from collections import deque
from dataclasses import dataclass

import numpy as np

from calc.timing.roofline import causal_attention_pairs, windowed_context_tokens
from calc.timing.serving import EngineNumbers, engine_step
from calc.traffic.steptime import StepTimer
from calc.traffic.workload import Workload

MAX_STEPS = 5_000_000


@dataclass(frozen=True)
class EngineConfig:
    """The scheduler's knobs (vLLM names) and the KV pool in blocks."""

    max_num_seqs: int
    max_num_batched_tokens: int
    enable_chunked_prefill: bool
    num_blocks: int
    block_size: int = 16


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
    queue_wait_s: np.ndarray  # entering the queue (arrival + request overhead) → start of its first step
    preemptions: np.ndarray  # per request
    itl_s: np.ndarray  # every inter-token gap of every request (flat)
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


def _retire(fin, end, running, finish_t, arrival, pending, next_new, workload, t_req):
    """Retire the running requests flagged ``fin`` (their last token came at ``end``).

    Sets their finish time, drops them from the running arrays (``running``, in admission order:
    ids first, KV blocks held sixth) and, in a closed loop, lets each finished client's next
    request arrive ``think_s`` later (entering the queue ``t_req`` after that). Returns the kept
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
    keep = ~fin
    running = tuple(a[keep] for a in running)
    if workload.closed:
        for _ in range(int(fid.size)):
            if next_new < finish_t.size:  # requests in the workload
                arrival[next_new] = end + workload.think_s
                heapq.heappush(pending, (end + workload.think_s + t_req, next_new))
                next_new += 1
    return running, freed, next_new, n_done


def simulate(e: EngineNumbers, workload: Workload, cfg: EngineConfig, *, max_steps: int | None = None,
             max_passes: int | None = None, timer: StepTimer | None = None) -> SimResult:
    """Run ``workload`` through the scheduler (module docstring) until every request finishes, or
    for at most ``max_steps`` engine steps (default :data:`MAX_STEPS`, read at call time) or
    ``max_passes`` passes of the scheduler loop (default: no limit; the CPU time is about
    proportional to the passes, not to the steps, as runs of pure decode steps are fast-forwarded
    in one pass); a run cut there has ``truncated`` set and NaN times for the requests that did
    not finish.

    >>> from calc.spec.catalog import get_gpu, get_model
    >>> from calc.timing.estimate import engine_numbers
    >>> from calc.traffic.workload import make_workload, LengthSpec
    >>> e = engine_numbers(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"))
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
    timer = timer or StepTimer(e, max_tokens=longest_step + max_seqs)
    t_req = float(e.request_overhead_s)
    phi = float(e.sliding_fraction)
    window = float(e.sliding_window)
    sliding = phi > 0 and np.isfinite(window)

    arrival = workload.arrival_s.astype(float).copy()
    comp = np.zeros(n, dtype=np.int64)  # KV tokens computed (kept for waiting requests)
    gen = np.zeros(n, dtype=np.int64)  # output tokens produced (saved at preemption)
    first_t = np.full(n, np.nan)
    finish_t = np.full(n, np.nan)
    sched_t = np.full(n, np.nan)
    last_emit = np.zeros(n)
    preempt = np.zeros(n, dtype=np.int64)
    # running requests, admission order: ids, prompt, output, computed, generated, blocks, last token time
    rid = np.zeros(0, dtype=np.int64)
    rp, ro, rc, rg, rh = rid.copy(), rid.copy(), rid.copy(), rid.copy(), rid.copy()
    rl = np.zeros(0)

    next_new = 0
    if workload.closed:
        next_new = min(workload.closed_clients, n)
        arrival[:] = np.nan
        arrival[:next_new] = 0.0
        pending = [(t_req, i) for i in range(next_new)]
    else:
        pending = [(float(a) + t_req, i) for i, a in enumerate(arrival.tolist())]
    heapq.heapify(pending)  # (time the request enters the waiting queue, index)
    waiting: deque[int] = deque()
    itl_vals: list[np.ndarray] = []
    itl_counts: list[np.ndarray] = []
    s_start: list[float] = []
    s_dt: list[float] = []
    s_wait: list[int] = []
    s_run: list[int] = []
    s_kv: list[int] = []
    s_pf: list[int] = []
    s_dec: list[int] = []
    now = 0.0
    done = 0
    total_blocks = free

    passes = 0
    while done < n and len(s_dt) < max_steps and passes != max_passes:
        passes += 1
        while pending and pending[0][0] <= now + 1e-12:
            waiting.append(heapq.heappop(pending)[1])
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
            need0 = int(prompt[i0] + gen[i0] - comp[i0])
            room = budget - R if chunked else budget
            first = min(need0, room) if chunked else need0
            can_admit = first > 0 and _ceil_div(first, bs) <= free
        # (rg > 0: a prompt with one token left to compute is not a decode: its token is the first)
        all_decoding = R > 0 and bool(np.all((rc == rp + rg - 1) & (rg > 0)))
        if all_decoding and not can_admit and R <= budget:
            # ---- a run of pure decode steps, fast-forwarded until the next event ----
            # (a finish, an arrival into an empty queue, or the KV pool running out; a blocked
            # queue stays blocked while blocks only get used)
            k_max = int((ro - rg).min())
            hist = np.bincount((-rc) % bs, minlength=bs)  # requests needing a new block at step j ≡ f (mod bs)
            cum_nb = np.cumsum(hist[np.arange(min(k_max, 4 * bs + 1024)) % bs])
            k = min(k_max, int(np.count_nonzero(cum_nb <= free)))
            if k > 0:
                ta = pending[0][0] if (pending and not waiting) else np.inf
                if sliding:
                    base_keys = rc + 1
                else:
                    ctx0 = float((rc + 1).sum())
                if k > 48 and not sliding:
                    # a long run: one vectorized call of the engine's own step function
                    j = np.arange(k, dtype=float)
                    dts_a = np.broadcast_to(engine_step(
                        e, decode_tokens=float(R), decode_context_tokens_sum=ctx0 + j * R, prefill_tokens=0.0,
                        prefill_attention_pairs=0.0, prefill_cached_tokens=0.0, logits_tokens=float(R)).step_s, (k,))
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
                used0 = total_blocks - free
                s_kv.extend((used0 + cum_nb[:k]).tolist())
                s_pf.extend([0] * k)
                s_dec.extend([R] * k)
                free -= int(cum_nb[k - 1])
                end = t
                itl_vals.append(now + dts[0] - rl)
                itl_counts.append(np.ones(R, dtype=np.int64))
                if k > 1:
                    itl_vals.append(np.asarray(dts[1:]))
                    itl_counts.append(np.full(k - 1, R, dtype=np.int64))
                rc = rc + k
                rg = rg + k
                rh = _ceil_div(rc, bs)
                rl = np.full(R, end)
                now = end
                (rid, rp, ro, rc, rg, rh, rl), freed, next_new, n_done = _retire(
                    rg >= ro, end, (rid, rp, ro, rc, rg, rh, rl), finish_t, arrival, pending, next_new, workload, t_req)
                free += freed
                done += n_done
                continue
        # ---- a general step ----
        preempted = False
        whole_prefill = not chunked and can_admit
        if R and not whole_prefill:
            need = rp + rg - rc
            cs = np.cumsum(need)
            alloc = np.minimum(need, np.maximum(budget - (cs - need), 0))
            nb = _ceil_div(rc + alloc, bs) - rh
            if int(nb.sum()) > free:
                # keep the longest prefix whose growth fits the free blocks plus the victims' blocks
                suffix_held = int(rh.sum()) - np.cumsum(rh)
                k = int(np.count_nonzero(np.cumsum(nb) <= free + suffix_held))
                victims = rid[k:]
                free += int(rh[k:].sum())
                gen[victims] = rg[k:]
                comp[victims] = 0
                last_emit[victims] = rl[k:]
                preempt[victims] += 1
                waiting.extendleft(victims[::-1].tolist())
                rid, rp, ro, rc, rg, rh, rl = rid[:k], rp[:k], ro[:k], rc[:k], rg[:k], rh[:k], rl[:k]
                alloc, nb = alloc[:k], nb[:k]
                preempted = True
            free -= int(nb.sum())
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
            n_run = int(rid.size)
            while waiting and left > 0 and n_run < max_seqs:
                i = waiting[0]
                need_i = int(prompt[i] + gen[i])  # computed tokens are 0 in the queue
                if not chunked and need_i > left:
                    if new_ids:
                        break
                    # A preempted request recomputes prompt + generated tokens, which can pass the
                    # budget (≥ max prompt): it runs alone (vLLM requires a budget ≥ max_model_len
                    # without chunked prefill, so there it always fits one step).
                    a = need_i
                else:
                    a = need_i if need_i < left else left
                blocks = _ceil_div(a, bs)
                if blocks > free:
                    break
                waiting.popleft()
                free -= blocks
                new_ids.append(i)
                new_alloc.append(a)
                new_blocks.append(blocks)
                left -= a
                n_run += 1
            if new_ids:
                ni = np.array(new_ids, dtype=np.int64)
                sched_t[ni[np.isnan(sched_t[ni])]] = now
                rid = np.concatenate([rid, ni])
                rp = np.concatenate([rp, prompt[ni]])
                ro = np.concatenate([ro, out_len[ni]])
                rc = np.concatenate([rc, np.zeros(ni.size, dtype=np.int64)])
                rg = np.concatenate([rg, gen[ni]])
                rh = np.concatenate([rh, np.array(new_blocks, dtype=np.int64)])
                rl = np.concatenate([rl, last_emit[ni]])
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
        rc = rc + alloc
        emit = (alloc > 0) & (rc == tot)
        p_tok = int(c.sum())
        dt = timer(d, ctx, p_tok, pairs, cached, int(np.count_nonzero(emit)))
        end = now + dt
        s_start.append(now)
        s_dt.append(dt)
        s_wait.append(len(waiting))
        s_run.append(int(rid.size))
        s_kv.append(total_blocks - free)
        s_pf.append(p_tok)
        s_dec.append(d)
        # ---- tokens out ----
        if emit.any():
            rg = rg + emit
            firsts = emit & (rg == 1)
            if firsts.any():
                first_t[rid[firsts]] = end
            later = emit & (rg > 1)
            if later.any():
                itl_vals.append(end - rl[later])
                itl_counts.append(np.ones(int(np.count_nonzero(later)), dtype=np.int64))
            rl = np.where(emit, end, rl)
            (rid, rp, ro, rc, rg, rh, rl), freed, next_new, n_done = _retire(
                rg >= ro, end, (rid, rp, ro, rc, rg, rh, rl), finish_t, arrival, pending, next_new, workload, t_req)
            free += freed
            done += n_done
        now = end

    ttft = first_t - arrival
    e2e = finish_t - arrival
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(out_len > 1, (finish_t - first_t) / np.maximum(out_len - 1, 1), np.nan)
    return SimResult(
        arrival_s=arrival, input_len=prompt, output_len=out_len, first_token_s=first_t, finish_s=finish_t,
        ttft_s=ttft, tpot_s=tpot, e2e_latency_s=e2e, queue_wait_s=sched_t - arrival - t_req, preemptions=preempt,
        itl_s=np.repeat(np.concatenate(itl_vals), np.concatenate(itl_counts)) if itl_vals else np.zeros(0),
        step_start_s=np.array(s_start), step_s=np.array(s_dt), step_waiting=np.array(s_wait, dtype=np.int64),
        step_running=np.array(s_run, dtype=np.int64), step_kv_blocks=np.array(s_kv, dtype=np.int64),
        step_prefill_tokens=np.array(s_pf, dtype=np.int64), step_decode_tokens=np.array(s_dec, dtype=np.int64),
        num_blocks=int(cfg.num_blocks), block_size=bs, truncated=done < n, passes=passes)

