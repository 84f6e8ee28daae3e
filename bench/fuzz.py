"""Long fuzz run of every untrusted-input path (the CI run in tests/test_input_fuzz.py is bounded).

    .venv/bin/python bench/fuzz.py                 # >= 10,000 inputs, about 10-20 minutes on 2 shared cores
    .venv/bin/python bench/fuzz.py --scale 0.05    # a quick look

Same generators and properties as the tests (tests/fuzz_input.py). Prints, per path, the number
of inputs tried, how many were accepted and rejected, and every failure (the property that broke
and the shrunk input); exits 1 if any path failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import fuzz_input as F  # noqa: E402

# path -> examples at scale 1 (an example is one query string, file, argv or batch file; "inputs"
# counts its parameters / lines)
PLAN = {
    "url_sanitizer": 1500,  # about 6 parameters each
    "control_parse": 3000,
    "scenario_file": 2500,
    "config_json": 2500,
    "trace_file": 2500,
    "vllm_command": 2500,
    "replica_search": 3000,  # accepted = the exact least count, rejected = a miss, unknown or upper bound
    "cli_argv": 600,
    "batch_lines": 150,  # 8 lines each
    "simulate_batch": 100,  # 6 lines each
    "pages_apptest": 60,
    "pages_first_view": 200,  # a browser's session of a link (ui.first_view): 3 runs each
}


def run(name: str, n: int, strategy, check, count_inputs=lambda x: 1) -> dict:
    stats = {"examples": 0, "inputs": 0, "accepted": 0, "rejected": 0}

    @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(strategy)
    def prop(x):
        stats["examples"] += 1
        stats["inputs"] += count_inputs(x)
        result = check(x)
        if isinstance(result, tuple):  # batch: (ok, errors)
            stats["accepted"] += result[0]
            stats["rejected"] += result[1]
        elif result is False:
            stats["rejected"] += 1
        else:
            stats["accepted"] += 1

    t0 = time.perf_counter()
    try:
        prop()
        stats["failure"] = None
    except Exception as exc:  # noqa: BLE001 - report, go on with the other paths
        stats["failure"] = f"{type(exc).__name__}: {str(exc)[:1500]}"
    stats["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"{name:<15} {stats['examples']:>6,} examples {stats['inputs']:>7,} inputs  {stats['accepted']:>6,} accepted  {stats['rejected']:>6,} rejected  "
          f"{stats['seconds']:>6.1f} s  {'FAILED' if stats['failure'] else 'ok'}", flush=True)
    if stats["failure"]:
        print("    " + stats["failure"].replace("\n", "\n    "), flush=True)
    return stats


def check_control_parse(args) -> bool:
    ctl, raw = args
    try:
        ctl.parse(raw)
    except F.C.ControlValueError as exc:
        assert str(exc).startswith(ctl.key) and len(str(exc)) < F.MAX_MESSAGE, str(exc)
        return False
    return True


def check_page(args) -> bool:
    page, query = args
    F.check_page(query, None if page == "pages/memory.py" else page)
    return True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=float, default=1.0, help="multiply every count (default 1: >= 10,000 inputs)")
    p.add_argument("--only", nargs="*", choices=sorted(PLAN), help="run only these paths")
    args = p.parse_args(argv)
    from ui.shell import PAGES  # noqa: PLC0415

    n = {k: max(1, int(v * args.scale)) for k, v in PLAN.items()}
    jobs = {
        "url_sanitizer": (F.query_params(max_keys=10), lambda q: F.check_sanitize(q) or True, lambda q: max(1, len(q))),
        "control_parse": (st.tuples(st.sampled_from(F.all_controls()), st.one_of(F.hostile_text, F.json_values)),
                          check_control_parse, lambda x: 1),
        "scenario_file": (F.scenario_texts(), F.check_scenario, lambda x: 1),
        "config_json": (F.config_texts(), F.check_config, lambda x: 1),
        "trace_file": (F.trace_texts(), F.check_trace, lambda x: 1),
        "vllm_command": (F.vllm_commands(), F.check_vllm_command, lambda x: 1),
        "replica_search": (F.replica_searches(), F.check_replica_search, lambda x: 1),
        "cli_argv": (F.cli_argvs(), lambda a: F.check_cli(a) == 0, lambda x: 1),
        "batch_lines": (st.lists(F.batch_lines(), min_size=1, max_size=8), F.check_batch, len),
        "simulate_batch": (st.lists(F.simulate_batch_lines(), min_size=1, max_size=6),
                           lambda lines: F.check_batch(lines, "simulate"), len),
        "pages_apptest": (st.tuples(st.sampled_from([pg.path for pg in PAGES]), F.query_params(max_keys=10)),
                          check_page, lambda x: max(1, len(x[1]))),
        # accepted: the link got a first view (its chart and the page after the press checked); rejected: the whole
        # page at once (a value the sidebar reports)
        "pages_first_view": (st.tuples(st.sampled_from([pg.path for pg in PAGES]),
                                       st.one_of(F.valid_query_params(), F.query_params(max_keys=6))),
                             lambda x: F.check_first_view(x[1], x[0]), lambda x: max(1, len(x[1]))),
    }
    print(f"fuzz: scale {args.scale} (machine shared; times indicative only)")
    results = {name: run(name, n[name], *jobs[name]) for name in (args.only or PLAN)}
    total = sum(r["inputs"] for r in results.values())
    failed = [k for k, r in results.items() if r["failure"]]
    print(f"total {total:,} inputs, {sum(r['accepted'] for r in results.values()):,} accepted, "
          f"{sum(r['rejected'] for r in results.values()):,} rejected; failed paths: {', '.join(failed) or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
