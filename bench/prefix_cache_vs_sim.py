"""Prefix caching: the analytic answer (calc.traffic.prefix_cache + the open / closed loop with only
the uncached prompt tokens prefilled) against the simulator's block-by-block LRU (calc.traffic.simulator
with chains), over shared prefixes (one, a few, more than the cache holds) and multi-turn chats.

    .venv/bin/python bench/prefix_cache_vs_sim.py           # markdown table on stdout
    .venv/bin/python bench/prefix_cache_vs_sim.py --quick   # the rows tests/test_prefix_cache.py holds

Open loop (Poisson at the rate given, 3,000 requests; each prefix's first use misses in
the run, so the analytic side is given the run's length for its cold misses) Columns:
hit rate (fraction of prompt tokens served from the cache), mean and P95 TTFT, mean E2E.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.cli.estimate import estimate_record  # noqa: E402
from calc.cli.simulate import simulate_record  # noqa: E402

MODEL, GPU = "meta-llama/Llama-3.1-8B", "h100-sxm"
# (label, options): 2,100-token prompts with a 2,000-token prefix; a multi-turn chat
CASES = [
    ("1 prefix, 4 req/s", dict(input_len=2100, output_len=100, shared_prefix_len=2000, rate=4.0)),
    ("1 prefix, 16 req/s", dict(input_len=2100, output_len=100, shared_prefix_len=2000, rate=16.0)),
    ("100 prefixes, 8 req/s", dict(input_len=2100, output_len=100, shared_prefix_len=2000,
                                   num_shared_prefixes=100, rate=8.0)),
    ("3000 prefixes, 8 req/s", dict(input_len=2100, output_len=100, shared_prefix_len=2000,
                                    num_shared_prefixes=3000, rate=8.0)),
    ("no caching, 8 req/s", dict(input_len=2100, output_len=100, shared_prefix_len=2000, rate=8.0,
                                 enable_prefix_caching=False)),
    ("chat 5 turns, 4 req/s", dict(input_len=300, output_len=150, turns=5, rate=4.0)),
]
QUICK = CASES[:1] + CASES[3:4] + CASES[5:]


def row(label: str, opts: dict, n: int) -> dict:
    base = dict(model=MODEL, gpu=GPU, **opts)
    sim = simulate_record(base | dict(num_requests=n, arrival="poisson"))
    ana = estimate_record(base | dict(num_requests=n))
    return {"case": label, "hit_sim": sim["prefix_cache_hit_rate"], "hit_ana": ana["prefix_cache_hit_rate"],
            "ttft_sim": sim["ttft_s_mean"], "ttft_ana": ana["open_loop_ttft_s"],
            "p95_sim": sim["ttft_s_p95"], "p95_ana": ana["open_loop_ttft_p95_s"],
            "e2e_sim": sim["e2e_latency_s_mean"], "e2e_ana": ana["open_loop_e2e_latency_s"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--num-requests", type=int, default=3000)
    a = ap.parse_args(argv)
    print("| case | hit sim | hit analytic | TTFT sim (ms) | analytic | err | P95 sim | analytic | err "
          "| E2E sim (s) | analytic | err |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, opts in (QUICK if a.quick else CASES):
        r = row(label, opts, a.num_requests)

        def err(x, y):
            return f"{(y / x - 1) * 100:+.0f} %"
        print(f"| {r['case']} | {r['hit_sim']:.3f} | {r['hit_ana']:.3f} | {r['ttft_sim'] * 1e3:.0f} | "
              f"{r['ttft_ana'] * 1e3:.0f} | {err(r['ttft_sim'], r['ttft_ana'])} | {r['p95_sim'] * 1e3:.0f} | "
              f"{r['p95_ana'] * 1e3:.0f} | {err(r['p95_sim'], r['p95_ana'])} | {r['e2e_sim']:.2f} | "
              f"{r['e2e_ana']:.2f} | {err(r['e2e_sim'], r['e2e_ana'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
