"""CPU seconds per work unit of the planner's percentile check (calc.plan.percentiles): one unit is a
simulator loop pass or 64 fast-forwarded steps, and its cost depends on the engine (a pipeline round
or an expert-parallel all-to-all makes a step dearer). The page turns its CPU budget into units with
calc.traffic.budget.SLOWEST_PASS_S (the dearest pass), which must be at least the dearest case here, or a
link overruns its budget.

    PYTHONPATH=. python bench/planner_unit_cost.py [units per case, default 20000]
"""
import sys
import time

from calc.traffic.budget import SLOWEST_PASS_S
from calc.spec.catalog import get_model, list_gpus
from calc.spec.inputs import Efficiency
from calc.plan.search import PlanRequest, plan
from calc.plan import percentiles as P
cases = [("meta-llama/Llama-3.1-405B", dict(rate_rps=7777, input_len=65536, output_len=65536, ttft_slo_s=600, tpot_slo_s=10, max_model_len=131072, top=50)),
 ("meta-llama/Llama-3.1-8B", dict(rate_rps=10, input_len=1000, output_len=200, ttft_slo_s=0.5, tpot_slo_s=0.05)),
 ("meta-llama/Llama-3.1-70B", dict(rate_rps=20, input_len=2000, output_len=500, ttft_slo_s=1, tpot_slo_s=0.05)),
 ("deepseek-ai/DeepSeek-V3", dict(rate_rps=30, input_len=2000, output_len=500, ttft_slo_s=2, tpot_slo_s=0.1)),
 ("Qwen/Qwen3-30B-A3B", dict(rate_rps=100, input_len=1000, output_len=1000, ttft_slo_s=1, tpot_slo_s=0.05))]


def main(units: int = 20000) -> None:
    orig = P._Budget.spend
    try:
        for m, kw in cases:
            req = PlanRequest(percentile="p99", **kw)
            p = plan(get_model(m), list_gpus(), req, Efficiency())
            used = [0]

            def spend(self, r, speculative=False, used=used):
                before = self.left
                orig(self, r, speculative=speculative)
                used[0] += before - self.left
            P._Budget.spend = spend
            t0 = time.process_time()
            P.check_top(p, get_model(m), list_gpus(), Efficiency(), work_budget=units)
            c = time.process_time() - t0
            print(f"{m:35s} units {used[0]:6d} cpu {c:6.2f} s  us/unit {c / max(used[0], 1) * 1e6:6.0f}")
    finally:
        P._Budget.spend = orig
    print(f"SLOWEST_PASS_S now: {SLOWEST_PASS_S * 1e6:.0f} us")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
