"""AppTest: the SLA (and the traffic) the frontier, load-test and planner pages share: one key,
one default, the value following the user from page to page, old per-page links read once."""

import pytest

from apptest_helpers import app, decode, open_section, plotly_specs, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
FRONTIER, LOAD_TEST, PLANNER = "pages/frontier.py", "pages/load_test.py", "pages/planner.py"
SMALL = {"lt_requests": "200", "lt_sweep": "false"}  # a quick load test


def _sla(at) -> tuple:
    return at.number_input(key="sla_ttft_ms").value, at.number_input(key="sla_tpot_ms").value, \
        at.selectbox(key="sla_stat").value


@pytest.mark.parametrize("page", [FRONTIER, LOAD_TEST, PLANNER])
def test_one_sla_with_the_same_defaults_on_every_page(page):
    # the course's chat SLA (§3.4: 500 ms, 50 ms), judged at P95 (§3.6)
    at = app(SMALL, page=page)
    assert not at.exception
    assert _sla(at) == (500, 50, "p95")
    assert list(at.selectbox(key="sla_stat").options) == ["Mean", "P50 (median)", "P90", "P95", "P99"]


def test_the_sla_follows_the_user_from_page_to_page():
    at = app(SMALL, page=PLANNER)
    at.number_input(key="sla_ttft_ms").set_value(800).run()
    at.selectbox(key="sla_stat").select("p99").run()
    at.switch_page(FRONTIER).run()
    assert not at.exception and _sla(at) == (800, 50, "p99")
    at.number_input(key="sla_tpot_ms").set_value(40).run()
    at.switch_page(LOAD_TEST).run()
    assert not at.exception and _sla(at) == (800, 40, "p99")
    assert "P99 TTFT" in [m.label for m in at.metric]  # the load test judges at the shared statistic
    at.switch_page(PLANNER).run()
    assert _sla(at) == (800, 40, "p99")


@pytest.mark.parametrize("page, old, new", [
    (PLANNER, {"pl_ttft_ms": "1000", "pl_tpot_ms": "60", "pl_percentile": "mean"}, (1000, 60, "mean")),
    (LOAD_TEST, {"lt_ttft_ms": "300", "lt_tpot_ms": "40", "lt_percentile": "p99"}, (300, 40, "p99")),
    (FRONTIER, {"slo_ttft_ms": "700", "slo_tpot_ms": "30"}, (700, 30, "p95")),
])
def test_old_links_open_the_same_sla_under_the_new_keys(page, old, new):
    at = app({**SMALL, **old}, page=page)
    assert not at.exception and not any("sla_" in w or "_ms" in w for w in texts(at.warning))  # no link warning
    assert _sla(at) == new
    params = dict(at.query_params)
    assert not set(old) & set(params)  # read once, then gone from the link
    assert params.get("sla_ttft_ms") == str(new[0])


def test_a_new_key_wins_over_an_old_one_and_a_bad_old_value_is_named_under_the_new_key():
    at = app({"sla_tpot_ms": "45", "pl_tpot_ms": "30", "pl_ttft_ms": "-5"})
    # said on the first page the link opens, whichever it is (ui.session_view reads every page's settings)
    assert any("sla_ttft_ms" in w for w in texts(at.warning))
    at.switch_page(PLANNER).run()
    assert not at.exception
    assert at.number_input(key="sla_tpot_ms").value == 45
    assert at.number_input(key="sla_ttft_ms").value == 500  # the default


def test_the_frontier_says_which_statistic_its_sla_is_judged_on():
    """Issue 17: the frontier judges its closed-loop TTFT at the shared SLA's statistic (P95 by default)
    and its caption says so; on the mean, the captions say means; with the prefix cache's reuse (no
    percentile model there yet) it says it judges the mean."""
    at = app(page=FRONTIER)
    assert any("closed loop's P95 TTFT" in c for c in texts(at.caption))
    assert not any(c.startswith("SLA judged on the mean here") for c in texts(at.caption))
    at.selectbox(key="sla_stat").select("mean").run()
    assert any("Latencies are steady-state means" in c for c in texts(at.caption))
    reuse = app({"pc_reuse": "shared"}, page=FRONTIER)
    assert not reuse.exception
    assert any(c.startswith("SLA judged on the mean here") and "P95" in c for c in texts(reuse.caption))
    zh = app({"lang": "zh"}, page=FRONTIER)
    assert any("闭环的 P95 TTFT" in c for c in texts(zh.caption))


def test_the_load_test_judges_the_mean_when_asked():
    at = app({**SMALL, "sla_stat": "mean", "lt_sweep": "true"}, page=LOAD_TEST)
    assert not at.exception and not at.error
    assert {"mean TTFT", "mean TPOT"} <= {m.label for m in at.metric}
    at.session_state["lt_tabs"] = at.tabs[1].label  # the rate-search tab (ui.layout.lazy_tabs: drawn when open)
    at.run()
    assert any("choose P50 to P99" in i for i in texts(at.info))  # the rate search needs a percentile


# ----------------------------------------------------------------------------- the traffic

def test_one_rate_for_the_load_test_and_the_planner_one_replicas_for_the_frontier_and_the_load_test():
    at = app(SMALL, page=LOAD_TEST)
    assert at.number_input(key="rate").value == 2.0 and at.number_input(key="replicas").value == 1
    at.number_input(key="rate").set_value(3.5).run()
    at.number_input(key="replicas").set_value(3).run()
    at.switch_page(PLANNER).run()
    assert not at.exception and at.number_input(key="rate").value == 3.5
    at.switch_page(FRONTIER).run()
    assert not at.exception and at.query_params["replicas"] == "3"  # its section closed (lazy): the value applies
    at = open_section(at, "sec_fr_cost")
    assert at.number_input(key="replicas").value == 3
    at.switch_page(LOAD_TEST).run()
    assert (at.number_input(key="rate").value, at.number_input(key="replicas").value) == (3.5, 3)


@pytest.mark.parametrize("page, old", [(LOAD_TEST, "lt_rate"), (PLANNER, "pl_rate")])
def test_old_rate_links_open_the_same_rate(page, old):
    at = app({**SMALL, old: "1.5"}, page=page)
    assert not at.exception
    assert at.number_input(key="rate").value == 1.5
    assert old not in dict(at.query_params) and at.query_params["rate"] == "1.5"


def test_the_load_test_takes_the_sidebar_lengths_and_reads_its_old_ones_once():
    at = app({**SMALL, "context": "1280", "output_len": "256"}, page=LOAD_TEST)
    assert any(c.startswith("Prompt 1,024 and output 256 tokens on average") for c in texts(at.caption))
    old = app({**SMALL, "lt_input_len": "512", "lt_output_len": "64"}, page=LOAD_TEST)  # an old load-test link
    assert not old.exception and not old.error
    assert (old.session_state["context"], old.session_state["output_len"]) == (576, 64)  # prompt 512 + output 64
    assert not {"lt_input_len", "lt_output_len"} & set(old.query_params)
    assert any(c.startswith("Prompt 512 and output 64 tokens on average") for c in texts(old.caption))


def test_each_replica_is_simulated_at_its_share_of_the_rate():
    """Two replicas at 4 req/s: each engine sees 2 req/s, the same run as one replica at 2 req/s."""
    one = app({**SMALL, "rate": "2"}, page=LOAD_TEST)
    two = app({**SMALL, "rate": "4", "replicas": "2"}, page=LOAD_TEST)
    assert not two.exception and not two.error
    cards = lambda at: {m.label: m.value for m in at.metric}  # noqa: E731
    assert cards(two) == cards(one)
    assert any(c.startswith("2 replicas behind a load balancer: one is simulated, at 4 ÷ 2 = 2 requests/s")
               for c in texts(two.caption))
    zh = app({**SMALL, "rate": "4", "replicas": "2", "lang": "zh"}, page=LOAD_TEST)
    assert any(c.startswith("负载均衡器后有 2 个副本") for c in texts(zh.caption))


def test_the_frontier_draws_the_shared_traffic_as_a_line():
    """rate ÷ replicas × output tokens: the output tokens/s each replica must carry; the points
    above the line carry it."""
    at = app({"rate": "6", "replicas": "2", "output_len": "256"}, page=FRONTIER)
    assert not at.exception and at.session_state["rate"] == 6.0  # its section closed (lazy): the link's value applies
    spec = plotly_specs(at)[0]
    lines = [tr for tr in spec["data"] if str(tr.get("name", "")).startswith("Your traffic")]
    assert len(lines) == 2  # on the TPOT and the TTFT panels
    assert lines[0]["name"] == "Your traffic: 6 req/s ÷ 2 replicas<br>= 768 output tok/s each"  # 6 / 2 × 256; two lines: fits a phone
    assert decode(lines[0]["y"]) == [768, 768]
    zh = app({"rate": "6", "replicas": "2", "lang": "zh"}, page=FRONTIER)
    assert any(str(tr.get("name", "")).startswith("你的流量") for tr in plotly_specs(zh)[0]["data"])


def test_one_length_distribution_for_the_load_test_and_the_planner():
    """The load test's length distribution is the planner's too (one key, one default: lognormal,
    CV 0.5); the planner's command line carries it; an old load-test link's keys are read once."""
    at = app(SMALL, page=PLANNER)
    assert (at.selectbox(key="lengths").value, at.slider(key="length_spread").value) == ("lognormal", 0.5)
    at.selectbox(key="lengths").select("uniform").run()
    at.slider(key="length_spread").set_value(0.3).run()
    assert not at.exception
    at.switch_page(LOAD_TEST).run()
    assert (at.selectbox(key="lengths").value, at.slider(key="length_spread").value) == ("uniform", 0.3)
    at.selectbox(key="lengths").select("fixed").run()
    at.switch_page(PLANNER).run()
    assert at.selectbox(key="lengths").value == "fixed" and at.slider(key="length_spread").disabled
    old = app({**SMALL, "lt_lengths": "uniform", "lt_spread": "0.2"}, page=PLANNER)
    assert not old.exception and (old.selectbox(key="lengths").value, old.slider(key="length_spread").value) == ("uniform", 0.2)
    assert not {"lt_lengths", "lt_spread"} & set(old.query_params)


def test_the_planners_command_line_carries_the_length_distribution():
    from calc.plan.search import PlanRequest
    from calc.spec.catalog import get_model
    from ui.planner.runs import cli_command

    req = PlanRequest(rate_rps=2, input_len=1000, output_len=200, ttft_slo_s=0.5, tpot_slo_s=0.05, lengths="uniform",
                      length_spread=0.3)
    assert "--lengths uniform --length-spread 0.3 " in cli_command(get_model("meta-llama/Llama-3.1-8B"), [], req, {}, 10)
    fixed = req.model_copy(update={"lengths": "fixed", "length_spread": 0.0})
    assert "--lengths" not in cli_command(get_model("meta-llama/Llama-3.1-8B"), [], fixed, {}, 10)
