"""The frontier, the load test and the planner give the same TTFT/TPOT for the same model, GPU,
traffic and replicas (issue #17's done-when; issue #19, "one scenario across pages").

One scenario: Llama-3.1-8B on the H100 SXM (the planner limited to it), 1,024-token prompts and
256-token outputs (the sidebar's context 1,280 and output 256), 40 requests/s, the shared SLA
(200 ms TTFT, 50 ms TPOT at P95).

1. The planner ranks its options and re-checks the first ones at P95 with the request simulator:
   one replica at rate ÷ replicas, 2,000 Poisson requests of fixed lengths, seed 0, the first
   quarter (an idle engine's warm-up) left out (calc.plan.percentiles).
2. Its first option's link (the table's "Open" column: engine flags, replicas, rate, SLA) opens
   the load test, run with the planner's simulation settings (Poisson, fixed lengths, 2,000
   requests, seed 0). Same engine config, same workload, same statistic: its P95 TTFT and TPOT
   cards are the planner's numbers, to the last digit shown, and exactly through the shared calls
   the two pages make (ui.planner.runs.planned, ui.loadtest.runs.run / judged).
3. The frontier's answer to the shared rate (the open-loop queueing model, calc.traffic.queueing.open_loop,
   at the rate per replica) is the load test's analytic row for Poisson arrivals: the same call
   (ui.perf.view.open_loop_at_rate), so the same numbers, beside the simulated ones and within the
   tolerances below. (Until 2026-12-04 the load test drew the frontier's closed-loop model at the load's
   Little's-law concurrency: TTFT -15 % against the simulated mean here; the open loop: +5.6 %.)
"""

import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from apptest_helpers import app, md_tables, open_section, plotly_specs, texts
from calc.plan.percentiles import NUM_REQUESTS, SEED
from calc.plan.search import PlanRequest
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency
from calc.traffic.slo import summarize
from ui.loadtest import runs as lt_runs
from ui.planner.runs import planned

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
MODEL, GPU = "meta-llama/Llama-3.1-8B", "h100-sxm"
# A TTFT target the first option's modelled TTFT is more than half of, so the planner simulates it (options far
# inside the target are listed with the queueing model's value, not simulated: calc.plan.percentiles).
# One traffic description for both pages (ui.traffic): fixed lengths, so the load test's request mix and
# the planner's check are the same draws whatever max_model_len each clips them at.
SCENARIO = {"model": MODEL, "gpu": GPU, "context": "1280", "output_len": "256", "rate": "40", "pl_gpus": GPU,
            "sla_ttft_ms": "200", "lengths": "fixed"}
# The planner's simulation settings, on the load test's controls.
AS_THE_PLANNER = {"lt_arrival": "poisson", "lt_requests": str(NUM_REQUESTS),
                  "lt_seed": str(SEED), "lt_sweep": "false"}
# The open-loop model against the simulated means of this run: TPOT within 10 %; TTFT within 25 % (measured:
# fixed lengths TTFT +5.6 %, P95 +18 %, TPOT +1.1 %; lognormal 0.5 +1.4 %, +3.4 %, 0.0 %; issue #17 asks 15 % of a
# long-run simulation, this run has 2,000 requests, the first quarter an idle engine's warm-up).
TPOT_TOLERANCE, TTFT_TOLERANCE = 0.10, 0.25


def _ms(text: str) -> float:
    value, unit = text.split()
    assert unit == "ms", text
    return float(value.replace(",", ""))


@pytest.fixture(scope="module")
def planner():
    at = app(SCENARIO, page="pages/planner.py")
    assert not at.exception and not at.error
    open_section(at, "pl_ranked_grid")  # the sortable grid of every column, drawn once its expander is open
    assert not at.exception and not at.error
    return at


@pytest.fixture(scope="module")
def option(planner):
    row = planner.dataframe[0].value.iloc[0]
    assert row["Statistic"].startswith("p95 (simulated")
    return row


@pytest.fixture(scope="module")
def link(option) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(option["Open"]).query))


@pytest.fixture(scope="module")
def load_test(link):
    at = app({**link, **AS_THE_PLANNER}, page="pages/load_test.py")
    assert not at.exception and not at.error
    return at


def test_the_planners_link_carries_the_deployment_the_traffic_and_the_sla(option, link):
    assert link["replicas"] == str(option["Replicas"]) and int(link["replicas"]) >= 2  # replicas split the rate
    assert (link["rate"], link["sla_ttft_ms"], link["sla_tpot_ms"], link["sla_stat"]) == ("40", "200", "50", "p95")
    assert (link["context"], link["output_len"], link["max_num_seqs"]) == ("1280", "256", str(option["max_num_seqs"]))


def test_the_load_test_gives_the_planners_p95_for_the_same_deployment(option, load_test):
    cards = {m.label: m.value for m in load_test.metric}
    # the same number, rounded as each page shows it (planner: 0.1 ms TTFT, 0.01 ms TPOT; cards: 0.1 ms)
    assert _ms(cards["P95 TTFT"]) == pytest.approx(option["TTFT (ms)"], abs=0.051)
    assert _ms(cards["P95 TPOT"]) == pytest.approx(option["TPOT (ms)"], abs=0.056)
    shown = texts(load_test.caption)
    assert any(c.startswith(f"{option['Replicas']} replicas behind a load balancer: one is simulated, at 40 ÷ ")
               for c in shown)
    assert any(c.startswith("P95 in steady state") for c in shown)


def test_the_same_numbers_through_the_shared_calls(link, load_test):
    """Exact: the planner's cached call (grid, then the P95 re-check) and the load test's run and
    statistic, with the scenario the load-test page built from the planner's link."""
    req = PlanRequest(rate_rps=40, input_len=1024, output_len=256, ttft_slo_s=0.2, tpot_slo_s=0.05, percentile="p95")
    d = planned(get_model(MODEL), [get_gpu(GPU)], req, Efficiency(), {}).ranked[0]
    sc = load_test.session_state["_last_good_scenario"]
    assert (sc.serving.max_num_seqs, sc.serving.quantization, sc.serving.kv_cache_dtype, sc.serving.max_model_len) == \
        (d.max_num_seqs, d.quantization, d.kv_cache_dtype, d.max_model_len)
    load = lt_runs.Load(arrival="poisson", rate_per_s=40 / d.replicas, cv=2.0, concurrency=32, num_requests=NUM_REQUESTS,
                        lengths="fixed", input_len=1024, output_len=256, spread=0.5, seed=SEED)
    r = lt_runs.run(sc.arch.model_dump_json(), sc.gpu.model_dump_json(), sc.serving.model_dump_json(),
                    sc.efficiency.model_dump_json(), load, None)
    ttft, tpot, steady = lt_runs.judged(r, summarize(r), stat="p95", arrival="poisson", trace=False)
    assert steady and (ttft, tpot) == (d.ttft_s, d.tpot_s)


def _analytic_vs_simulated(load_test) -> dict[str, dict[str, str]]:
    """The load test's "analytic beside simulated" table (Markdown): {metric: {column: cell}}."""
    (table,) = md_tables(load_test)
    return {row["Metric"]: row for row in table}


def _frontier_rate_answer(at) -> dict[str, float]:
    """The frontier's answer to the shared rate (its "At your rate" box): mean and P95 TTFT, TPOT (ms)."""
    (info,) = [i.value for i in at.info if i.value.startswith("At your rate")]
    mean, p95 = (float(x.replace(",", "")) for x in re.search(r"TTFT ([\d,.]+) ms mean, ([\d,.]+) ms P95", info).groups())
    return {"ttft": mean, "ttft_q": p95, "tpot": float(re.search(r"TPOT ([\d,.]+) ms", info).group(1).replace(",", ""))}


def _open_loop_rows(load_test) -> tuple[dict[str, float], dict[str, float]]:
    """(model, simulated) of the load test's open-loop table (Poisson arrivals): ms."""
    table = _analytic_vs_simulated(load_test)
    rows = (("ttft", "TTFT (time to first token)"), ("ttft_q", "P95 TTFT"), ("tpot", "TPOT (time per output token)"))
    return ({k: _ms(table[row]["Analytic (queueing model)"]) for k, row in rows},
            {k: _ms(table[row]["Simulated"]) for k, row in rows})


def test_the_load_tests_model_is_the_frontiers_answer_to_the_rate(link, load_test):
    """Poisson arrivals: the load test draws beside its simulation the open-loop queueing model at its rate per
    replica, the very numbers the frontier opened with the same link gives (to the frontier's whole ms), and they
    agree with the simulated ones within the stated tolerances."""
    (caption,) = [c for c in texts(load_test.caption) if c.startswith("The open-loop queueing model at ")]
    assert "P95" in caption
    _same_as_the_frontier(load_test, link)


def _same_as_the_frontier(load_test, query: dict[str, str]) -> None:
    """The load test's open-loop rows equal the frontier's answer to the rate (opened with ``query``; to
    the frontier's whole ms) and agree with the simulated ones within the tolerances."""
    model, simulated = _open_loop_rows(load_test)
    fr = app(query, page="pages/frontier.py")
    assert not fr.exception and not fr.error
    answer = _frontier_rate_answer(fr)
    for k in ("ttft", "ttft_q"):
        assert answer[k] == pytest.approx(model[k], abs=0.51), k
    assert answer["tpot"] == pytest.approx(model["tpot"], abs=0.051)
    assert model["tpot"] == pytest.approx(simulated["tpot"], rel=TPOT_TOLERANCE)
    assert model["ttft"] == pytest.approx(simulated["ttft"], rel=TTFT_TOLERANCE)


def test_the_frontier_answers_the_rate_with_the_open_loop_model(link, load_test):
    """The frontier's answer to the shared rate (the open-loop queueing model, calc.traffic.queueing,
    held within 15 % of long simulations by tests/test_traffic_shapes.py) against the load test's
    simulated P95 TTFT and mean TPOT for the same deployment: within 25 % (this run: 2,000 requests)."""
    fr = app(link, page="pages/frontier.py")
    (info,) = [i.value for i in fr.info if i.value.startswith("At your rate")]
    p95 = float(re.search(r"ms mean, ([\d,.]+) ms P95", info).group(1).replace(",", ""))
    tpot = float(re.search(r"TPOT ([\d,.]+) ms", info).group(1).replace(",", ""))
    cards = {m.label: m.value for m in load_test.metric}
    assert p95 == pytest.approx(_ms(cards["P95 TTFT"]), rel=0.25)
    table = _analytic_vs_simulated(load_test)
    assert tpot == pytest.approx(_ms(table["TPOT (time per output token)"]["Simulated"]), rel=0.25)


# The same deployment and rate with the shared default lengths (ui.traffic: lognormal, spread 0.5, both the prompt
# and the output): the load test draws its requests so and the frontier's model takes their spread
# (calc.traffic.workload.length_cvs: output_cv, the open loop's input_cv too). max_model_len with room for the
# lognormal tail: at the planner's 1,280 (= the context) the load test cuts its draws to fit (their mean prompt
# falls, its analytic row takes the cut means, 83.2 against the frontier's 90.1 ms), which the frontier's model
# of the asked means does not know.
LOGNORMAL = {"lengths": "lognormal", "length_spread": "0.5", "max_model_len": "8192"}


@pytest.fixture(scope="module")
def load_test_lognormal(link):
    at = app({**link, **AS_THE_PLANNER, **LOGNORMAL}, page="pages/load_test.py")
    assert not at.exception and not at.error
    return at


def test_with_lognormal_lengths_the_load_tests_model_is_the_frontiers_answer(link, load_test_lognormal):
    """The same with the shared lognormal lengths: both pages ask the open loop with the lengths cut to
    max_model_len as the simulation draws them (calc.traffic.workload.cut_lengths / cut_input_quantile)."""
    _same_as_the_frontier(load_test_lognormal, {**link, **LOGNORMAL})


def test_with_lognormal_lengths_the_frontiers_open_loop_takes_their_spread(link, load_test_lognormal):
    """The frontier's answer to the rate with the shared lognormal lengths: the open loop told their spread,
    against the load test's simulated P95 TTFT and mean TPOT of the same requests (25 %, as above), and a
    longer P95 than with fixed lengths (the prompts' spread is in its tail)."""
    fr = app({**link, **LOGNORMAL}, page="pages/frontier.py")
    fixed = app(link, page="pages/frontier.py")
    p95 = {}
    for name, at in (("lognormal", fr), ("fixed", fixed)):
        (info,) = [i.value for i in at.info if i.value.startswith("At your rate")]
        p95[name] = float(re.search(r"ms mean, ([\d,.]+) ms P95", info).group(1).replace(",", ""))
        if name == "lognormal":
            tpot = float(re.search(r"TPOT ([\d,.]+) ms", info).group(1).replace(",", ""))
    cards = {m.label: m.value for m in load_test_lognormal.metric}
    assert p95["lognormal"] == pytest.approx(_ms(cards["P95 TTFT"]), rel=0.25)
    assert p95["lognormal"] > p95["fixed"]
    table = _analytic_vs_simulated(load_test_lognormal)
    assert tpot == pytest.approx(_ms(table["TPOT (time per output token)"]["Simulated"]), rel=0.25)
