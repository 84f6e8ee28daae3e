"""Which step does a closed-loop arrival meet in flight? The arrival-train mixture
(calc.traffic.arrival_trains.train_ttft_s) weights the step in flight by its length,
w_n = P_α(n)·T_n / Σ P_α(j)·T_j, as for an arrival at a random instant. A closed-loop request is
not one: it is sent when its predecessor completes, at the END of a step, and completions come
once per step (one token per decoding sequence) whatever the step's length; it reaches the engine
a fixed t_api later (i·t_api more behind a train's head). Right after a step end the next step is
a step-weighted draw (P_α(n)); only an offset of many steps (t_api ≫ T_0) randomizes the phase
and brings the length bias back (the wait is then the residual life of the renewal process of
steps at time t_api after a renewal point, between the two limits).

This report puts the two limits side by side on the rows of ``bench/sim_vs_analytic.py --long``:
"length" (the mixture as it is, direct, no table), "step" (w_n = P_α(n), the head still waiting a
uniform share of it), and the tabulated mean closed_loop uses; the simulator is run as --long does.

    .venv/bin/python bench/train_weighting_check.py      # about 3-5 minutes on one core

Measured at the commit adding this file (simulated means as bench/sim_vs_analytic.py --long):
the 70B rows (T_1/T_0 ≈ 30: a 5,000-token prompt step of ~620 ms beside 20 ms decode steps, α ≈
0.02 prompts per step) go from +15 / +19 % (length) to −1 / −2 % (step); Llama-3.1-8B C = 128
from −2 % to −7 % (T_0 ≈ 10 ms < t_api = 22 ms: the phase is partly randomized there); TTFT
|error| median 7.9 → 6.0 %, within 15 % 75 → 83 % (the table: 8.0 %, 75 %). The Llama-2-7B rows
(prompts of two chunks) do not use the mixture and stay at −15 to −35 %. Not wired in: the exact
weight is the renewal residual at t_api (the table's third axis t_api/T_0 already carries what it
needs), and calc.traffic.queueing's closed-loop P95 reads the same mixture.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calc.traffic.arrival_trains as at  # noqa: E402
import calc.traffic.train_table as tt  # noqa: E402
from calc.spec.catalog import get_gpu, get_model  # noqa: E402
from calc.spec.inputs import ServingConfig  # noqa: E402
from calc.timing.estimate import estimate  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim_vs_analytic import LONG, compare_long  # noqa: E402

_SRC = textwrap.dedent(inspect.getsource(at.train_ttft_s))
_LENGTH = "w = p_n * T / np.maximum((p_n * T).sum(axis=0), 1e-300)"
assert _LENGTH in _SRC, "arrival_trains changed: update this check"
_NS = dict(vars(at))
exec(_SRC.replace(_LENGTH, "w = p_n / p_n.sum(axis=0)").replace("def train_ttft_s", "def step_weighted"), _NS)  # noqa: S102
_TABLE = tt.train_mean_s


def _mean(mode: str):
    def mean_s(*, decode_step_s, prompt_s, clump, fixed_s, api_s):
        if mode == "table":
            return _TABLE(decode_step_s=decode_step_s, prompt_s=prompt_s, clump=clump, fixed_s=fixed_s, api_s=api_s)
        f = at.train_ttft_s if mode == "length" else _NS["step_weighted"]
        return f(step_s=lambda n: decode_step_s + n * prompt_s, clump=clump, fixed_s=fixed_s, api_s=api_s, q=None)[0]
    return mean_s


def main() -> None:
    modes = ("table", "length", "step")
    err = {m: [] for m in modes}
    print("| model | GPU | I / O | C | sim TTFT | " + " | ".join(modes) + " |")
    print("|---|---|---|---|---|" + "---|" * len(modes))
    for (model, gpu), (I, O), cs, tp, q in LONG:
        for C in cs:
            sim = compare_long(model, gpu, I, O, C, tp=tp, quantization=q)["sim_ttft_s"]
            sc = ServingConfig(input_len=I, output_len=O, concurrency=C, tensor_parallel_size=tp, quantization=q,
                               max_model_len=I + 4 * O)
            cells = []
            for m in modes:
                tt.train_mean_s = _mean(m)  # closed_loop imports it at call time
                try:
                    t = float(estimate(get_model(model), get_gpu(gpu), sc, uniform_lengths=False).serving.ttft_s)
                finally:
                    tt.train_mean_s = _TABLE
                err[m].append(abs(t / sim - 1))
                cells.append(f"{t * 1e3:.0f} ms ({100 * (t / sim - 1):+.0f} %)")
            print(f"| {model} | {gpu} | {I} / {O} | {C} | {sim * 1e3:.0f} ms | " + " | ".join(cells) + " |", flush=True)
    for m in modes:
        e = np.array(err[m])
        print(f"{m}: TTFT |error| median {100 * np.median(e):.1f} %, max {100 * e.max():.1f} %, "
              f"within 15 %: {100 * np.mean(e <= 0.15):.0f} %")


if __name__ == "__main__":
    main()
