"""AppTest of the load-test page, and its figure builders."""

from __future__ import annotations

import numpy as np
import pytest

from ui.budget import RESULTS
from apptest_helpers import app, md_tables, commands, chart_titles, open_page, open_section, plain, plotly_specs, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PAGE = "pages/load_test.py"
SMALL = {"lt_requests": "200", "lt_sweep": "false"}


TABS = ("dist", "sweep", "timeline", "table")


def open_tab(at, name: str):
    """The reader opens tab ``name`` (ui.layout.lazy_tabs: only the open tab is drawn), then the page reruns."""
    at.session_state["lt_tabs"] = at.tabs[TABS.index(name)].label
    return at.run()


def test_defaults_render_with_percentiles_and_figures():
    at = app(SMALL, page=PAGE)
    assert not at.exception and not at.error
    labels = [m.label for m in at.metric]
    assert labels[:3] == ["P95 TTFT", "P95 TPOT", "Goodput"]
    specs = plotly_specs(at)
    titles = chart_titles(at)  # HTML headings above the plots (ui.layout.chart), in page order
    # Only the open tab (the distributions) is drawn: two charts, no data grid (bench/first_paint.py)
    assert titles == ["Time to first token", "Time per output token"] and len(specs) == 2
    cdf = specs[titles.index("Time to first token")]
    assert cdf["layout"]["xaxis"]["type"] == "log"
    slo = [tr for tr in cdf["data"] if tr.get("name", "").startswith("SLA")]
    assert slo and slo[0]["x"] == [500, 500]  # the SLA line at 500 ms
    assert len(at.dataframe) == 0 and not at.table and len(md_tables(at)) == 1  # analytic beside simulated (wraps on a phone)
    assert {b.key for b in at.get("download_button")} >= {"lt_csv_requests", "lt_csv_steps"}
    open_tab(at, "timeline")
    assert not at.exception and [x for x in chart_titles(at) if "timeline" in x] and len(plotly_specs(at)) == 1
    open_tab(at, "table")
    assert not at.exception and len(at.dataframe) == 1 and not plotly_specs(at)  # statistics
    assert [m.value for m in at.metric] and labels == [m.label for m in at.metric]  # the same cards above


def test_the_open_tab_is_kept_by_index_across_a_language_switch():
    """ui.layout.lazy_tabs: the tab's state is its label, which the language changes; the index is kept."""
    at = app(SMALL, page=PAGE)
    labels = tuple(tab.label for tab in at.tabs)
    at.session_state["lt_tabs"] = labels[2]
    at.session_state["_tab_lt_tabs"] = 2  # what the tab bar's on_change (layout._remember_tab) stores
    at.query_params["lang"] = "zh"
    at.session_state["ui_lang"] = "zh"
    at.run()
    assert not at.exception
    assert [tab.label for tab in at.tabs][2] == "时间线"
    assert [x for x in chart_titles(at) if "时间线" in x] and len(plotly_specs(at)) == 1, chart_titles(at)


def test_chinese_and_closed_loop_with_analytic_flag():
    at = app({**SMALL, "lt_arrival": "closed", "lt_concurrency": "16", "lt_lengths": "fixed", "lang": "zh"}, page=PAGE)
    assert not at.exception and not at.error
    assert at.title[0].value == "负载测试：真实流量下的尾延迟"
    assert "解析（闭式）" in md_tables(at)[0][0]


def test_arrival_and_length_options_in_chinese_with_tokens_in_the_link():
    at = app({**SMALL, "lt_arrival": "closed", "lt_concurrency": "16", "lang": "zh"}, page=PAGE)
    assert not at.exception and not at.error
    arrival, lengths = at.selectbox(key="lt_arrival"), at.selectbox(key="lengths")
    assert arrival.value == "closed" and lengths.value == "lognormal"
    assert list(arrival.options) == ["泊松（独立用户）", "Gamma（突发）", "闭环（C 个客户端）",
                                                                 "一次性到达（t = 0）"]
    assert list(lengths.options) == ["固定", "均匀", "对数正态"]
    assert list(at.selectbox(key="sla_stat").options) == ["均值", "P50（中位数）", "P90", "P95", "P99"]
    assert at.selectbox(key="sla_stat").value == "p95"  # the token, as in the link
    # the delta's sign comes first (Streamlit draws the arrow from it): "-274 ms（相对目标）", not "与目标相差 -274 ms"
    deltas = [m.delta for m in at.metric if m.delta]
    # the two SLA deltas first (a signed number), then the error band's range (ui.bands), in Chinese
    assert len(deltas) == 4 and all(d[0] in "-0123456789" for d in deltas[:2])
    assert all("范围" in d for d in deltas)
    lengths.select("fixed").run()
    assert not at.exception
    assert at.query_params["lengths"] == "fixed" and at.query_params["lt_arrival"] == "closed"  # tokens, not 固定
    en = app({**SMALL, "lt_arrival": "closed", "lt_lengths": "fixed", "lt_concurrency": "16"}, page=PAGE)
    assert en.selectbox(key="lengths").value == "fixed" and en.selectbox(key="lt_arrival").value == "closed"
    assert en.selectbox(key="lt_arrival").format_func("closed") == "Closed loop (C clients)"
    en.selectbox(key="lt_arrival").select("poisson").run()  # back to the default: out of the link
    assert "lt_arrival" not in en.query_params


@pytest.mark.parametrize("lang,cut,verdict,partial,cap", [
    ("en", "Cut short:", "No verdict", "Partial: ", 400),
    ("zh", "模拟被截断", "无法判定", "不完整：", 400),  # "**模拟被截断**：" (the colon outside the bold: CommonMark)
    ("en", "Cut short:", "No verdict", "Partial: ", 2),  # no request finished: NaN everywhere, no crash
])
def test_a_run_cut_at_the_step_cap_says_so_where_its_numbers_are(monkeypatch, lang, cut, verdict, partial, cap):
    # issue #18: a run stopped at the simulator's step cap was shown as a complete result, without a word
    import streamlit as st  # noqa: PLC0415

    monkeypatch.setattr("calc.traffic.simulator.MAX_STEPS", cap)
    st.cache_data.clear()  # a cached complete run of the same inputs must not answer
    RESULTS.clear()
    try:
        at = app({**SMALL, "lt_seed": "4242", "lang": lang}, page=PAGE)
        assert not at.exception and not at.error
        warnings = plain(at.warning)
        assert any(w.startswith(f"**{cut}**") and "200" in w for w in warnings), warnings
        assert any(w.startswith(verdict) for w in warnings), warnings
        assert not at.success  # no "meets both targets" over the finished requests only
        captions = plain(at.caption)
        assert sum(c.startswith(partial) for c in captions) == 2, captions  # distributions, simulated means
        assert at.metric  # the (partial) numbers are still shown, under the warning
        open_tab(at, "table")
        assert sum(c.startswith(partial) for c in plain(at.caption)) == 2  # the table's, simulated means
    finally:
        st.cache_data.clear()
        RESULTS.clear()


def test_a_complete_run_has_no_cut_short_warning():
    at = app({**SMALL, "lt_seed": "4242"}, page=PAGE)
    assert not at.exception
    assert not any(w.startswith(("Cut short", "No verdict")) for w in plain(at.warning))
    assert not any(c.startswith("Partial: ") for c in plain(at.caption))


def test_rate_sweep_marks_the_highest_sustainable_rate():
    at = open_tab(app({"lt_requests": "200", "lt_rate": "2", "lt_input_len": "512", "lt_output_len": "64"}, page=PAGE),
                  "sweep")
    assert not at.exception
    md = " ".join(m.value for m in at.markdown)
    assert "requests/s" in md and "Highest rate meeting P95" in md
    titles = chart_titles(at)
    sweep = [s for s, x in zip(plotly_specs(at), titles) if "against the arrival rate" in x]
    assert sweep and any(tr.get("name", "").startswith("highest rate") for tr in sweep[0]["data"])


def test_bad_url_value_warns_and_falls_back():
    at = open_page(PAGE, {**SMALL, "lt_rate": "-3", "lt_arrival": "<b>x</b>"})  # a link opened on the page
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "rate=-3" in warnings and "lt_arrival" in warnings  # an old lt_rate is named as the shared rate


def test_figure_builders():
    from calc.spec.catalog import get_gpu, get_model
    from calc.timing.estimate import estimate
    from calc.spec.inputs import ServingConfig
    from calc.traffic.simulator import EngineConfig, simulate
    from calc.traffic.slo import max_sustainable_rate
    from calc.traffic.workload import LengthSpec, make_workload
    from ui.i18n import Translator
    from ui.loadtest import figures as LF

    t = Translator("en")
    est = estimate(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), ServingConfig())
    cfg = EngineConfig(max_num_seqs=256, max_num_batched_tokens=8192, enable_chunked_prefill=True,
                       num_blocks=int(est.memory.num_blocks))
    r = simulate(est.engine, make_workload(arrival="poisson", rate_per_s=5, num_requests=100,
                                           input_len=LengthSpec("fixed", 512), output_len=LengthSpec("fixed", 32)), cfg)
    f = LF.cdf_figure(r.ttft_s, t, title="T", x_title="TTFT (ms, log)", slo_s=0.2, stat="p95", q="P95")
    xs = np.asarray(f.data[0].x)
    assert np.all(np.diff(xs) >= 0) and f.data[0].y[-1] == pytest.approx(100)
    assert f.data[1].y[0] == 95 and f.data[1].x[0] == pytest.approx(np.percentile(r.ttft_s * 1e3, 95))
    m = LF.cdf_figure(r.ttft_s, t, title="T", x_title="TTFT (ms, log)", slo_s=0.2, stat="mean", q="mean")
    mean_ms = float(np.mean(r.ttft_s)) * 1e3  # the mean, at the share of requests at or under it
    assert m.data[1].x[0] == pytest.approx(mean_ms)
    assert m.data[1].y[0] == pytest.approx(100 * np.mean(r.ttft_s * 1e3 <= mean_ms))
    tl = LF.timeline_figure(r, t)
    assert {d.name for d in tl.data} == {"waiting", "running", "KV blocks in use", "step time"}
    assert max(tl.data[2].y) <= 100
    search = max_sustainable_rate(lambda rate: simulate(est.engine, make_workload(
        arrival="poisson", rate_per_s=rate, num_requests=80, input_len=LengthSpec("fixed", 512),
        output_len=LengthSpec("fixed", 32)), cfg), ttft_slo_s=0.1, tpot_slo_s=1.0, rate_lo=1, rate_hi=400, iterations=4)
    sf = LF.sweep_figure(search, t, ttft_slo_s=0.1)
    assert sf.data[0].name.startswith("goodput") and len(sf.data[0].x) == len(search.rates_per_s)
    assert "req/s" in sf.data[0].hovertemplate
    zh = LF.sweep_figure(search, Translator("zh"), ttft_slo_s=0.1)
    assert all("req/s" not in d.hovertemplate and "请求/秒" in d.hovertemplate for d in zh.data[:3] if d.hovertemplate)
    csv = LF.requests_csv(r).splitlines()
    assert csv[0].startswith("request,arrival_s") and len(csv) == 101


ISSUE_18 = {"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "max_model_len": "131072", "context": "131072",
            "max_num_batched_tokens": "16", "lt_arrival": "poisson", "lt_rate": "10000", "lt_requests": "5000",
            "lt_lengths": "fixed", "lt_input_len": "100000", "lt_output_len": "16", "lt_sweep": "false"}


@pytest.mark.parametrize("lang,head", [("en", "**Too large for this shared server:**"), ("zh", "**对这台共享服务器来说太大**：")])
def test_a_run_over_the_budget_is_refused_with_the_command_that_runs_it(lang, head):
    # issue #18: this link cost 147 s of CPU; its estimate (31 M prefill steps) refuses it at once
    import resource  # noqa: PLC0415

    RESULTS.clear()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    at = app({**ISSUE_18, "lang": lang}, page=PAGE)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    assert (r1.ru_utime - r0.ru_utime) < 15  # the whole AppTest, two script runs
    assert not at.exception
    assert plain(at.error)[0].startswith(head) and "31,255,000" in at.error[0].value
    cmd = commands(at)[0]
    assert cmd.startswith("python -m calc simulate --model meta-llama/Llama-3.1-8B --gpu h100-sxm")
    assert "--max-num-batched-tokens 16" in cmd and "--input-len 100000" in cmd and "--num-requests 5000" in cmd
    assert "--rate 10000" in cmd and "--arrival poisson" in cmd
    assert not at.metric  # nothing simulated


def test_a_smaller_budget_refuses_earlier(monkeypatch):
    monkeypatch.setenv("LLM_CALC_MAX_RUN_MIB", "1")  # 200 requests of 60k output tokens: > 1 MiB of steps
    RESULTS.clear()
    at = app({**SMALL, "model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "lt_output_len": "60000",
              "lt_input_len": "100", "max_model_len": "65536", "context": "65536"}, page=PAGE)
    assert not at.exception and at.error[0].value.startswith("**Too large")


def test_the_cli_command_runs_the_same_workload():
    from calc.spec.catalog import get_gpu, get_model  # noqa: PLC0415
    from calc.spec.inputs import ServingConfig  # noqa: PLC0415
    from ui.loadtest.runs import Load, cli_command  # noqa: PLC0415

    load = Load(arrival="closed", rate_per_s=1.0, cv=1.0, concurrency=4, num_requests=20, lengths="fixed", input_len=64,
                output_len=8, spread=0.0, seed=3)
    cmd = cli_command(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), ServingConfig(max_model_len=4096), load)
    assert cmd == ("python -m calc simulate --model meta-llama/Llama-3.1-8B --gpu h100-sxm --tensor-parallel-size 1 "
                   "--max-model-len 4096 --input-len 64 --output-len 8 --arrival closed --concurrency 4 "
                   "--num-requests 20 --seed 3 --format json")
    import json  # noqa: PLC0415
    import shlex  # noqa: PLC0415

    from calc.cli.main import main  # noqa: PLC0415
    import contextlib, io  # noqa: E401, PLC0415

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(shlex.split(cmd)[3:]) in (0, None)
    assert json.loads(out.getvalue())["num_requests"] == 20


def test_long_latencies_in_seconds_or_minutes_in_both_languages():
    """Issue #19: "P95 TTFT 1,446,649.4 ms": cards and tables now read ms below 10 s, s below
    10 min, min above (ui.format.duration), in both languages."""
    heavy = {"lt_requests": "1000", "lt_sweep": "false", "lt_arrival": "burst", "context": "4096",
             "lt_lengths": "fixed"}  # 1,000 prompts of 3,840 tokens at t = 0: the last wait ~10 minutes
    for lang in ("en", "zh"):
        at = open_tab(app({**heavy, "lang": lang}, page=PAGE), "table")
        assert not at.exception and not at.error
        ttft, tpot = at.metric[0], at.metric[1]
        assert ttft.value.endswith(" min") and ttft.delta.startswith(tuple("0123456789"))  # above target: no "-"
        assert tpot.value.endswith(" ms")
        stats = at.dataframe[0].value
        cells = [c for row in stats.iloc[:, 1:].values.tolist() for c in row]
        assert all(c.endswith((" ms", " s", " min")) for c in cells)
        assert all(float(c.split()[0].replace(",", "")) < 10_000 for c in cells)  # never "1,446,649.4 ms"
        assert any(c.endswith(" s") for c in cells) and any(c.endswith(" ms") for c in cells)


@pytest.mark.parametrize("arrival, enabled, disabled", [
    ("poisson", {"rate", "replicas", "lt_sweep", "cap"}, {"lt_cv"}),
    ("gamma", {"rate", "replicas", "lt_cv", "lt_sweep", "cap"}, set()),
    ("closed", {"clients"}, {"rate", "replicas", "lt_cv", "lt_sweep"}),
    ("burst", {"cap"}, {"rate", "replicas", "lt_cv", "lt_sweep"}),
])
def test_controls_that_do_not_apply_are_disabled_and_keep_their_values(arrival, enabled, disabled):
    """The clients' column holds the closed loop's clients (the sidebar's concurrency), or for open arrivals
    the benchmark client's cap (vllm bench serve --max-concurrency beside the rate)."""
    at = app({**SMALL, "lt_arrival": arrival, "rate": "7", "replicas": "2", "lt_cv": "3", "concurrency": "8"},
             page=PAGE)
    assert not at.exception
    widgets = {"rate": at.number_input(key="rate"), "replicas": at.number_input(key="replicas"), "lt_cv": at.slider(key="lt_cv"),
               "lt_sweep": at.toggle(key="lt_sweep")}
    keys = {w.key for w in at.number_input}
    if arrival == "closed":
        widgets["clients"] = at.number_input(key="_mirror_concurrency")
        assert "lt_max_concurrency" not in keys
    else:
        widgets["cap"] = at.number_input(key="lt_max_concurrency")
        assert "_mirror_concurrency" not in keys and widgets["cap"].value is None  # no cap unless one is given
    assert {k for k, w in widgets.items() if w.disabled} == disabled
    assert {k for k, w in widgets.items() if not w.disabled} == enabled
    # the link's values are read (and kept) whether or not they apply now
    assert (widgets["rate"].value, widgets["replicas"].value, widgets["lt_cv"].value) == (7.0, 2, 3.0)
    assert at.session_state["concurrency"] == 8
    assert not at.slider(key="lt_requests").disabled and not at.number_input(key="lt_seed").disabled


def metric(at, label: str) -> float:
    """The number on the card ``label`` ('165 tok/s' -> 165.0)."""
    value = next(m.value for m in at.metric if m.label == label)
    return float(value.split()[0].replace(",", ""))


def test_a_client_cap_holds_the_open_loop_to_its_requests_in_flight():
    """vllm bench serve --request-rate 20 --max-concurrency 2: the cap binds, the served rate is what two in flight
    give (the closed loop of 2), and the command to run it says so."""
    at = app({**SMALL, "lt_arrival": "poisson", "rate": "20", "lt_max_concurrency": "2", "lt_sweep": "false"}, page=PAGE)
    assert not at.exception
    capped = metric(at, "Throughput")
    closed = app({**SMALL, "lt_arrival": "closed", "concurrency": "2", "lt_sweep": "false"}, page=PAGE)
    assert not closed.exception
    assert capped == pytest.approx(metric(closed, "Throughput"), rel=0.15)
    uncapped = app({**SMALL, "lt_arrival": "poisson", "rate": "20", "lt_sweep": "false"}, page=PAGE)
    assert metric(uncapped, "Throughput") > 1.5 * capped


@pytest.mark.parametrize("data", [
    b"\xff\xfe not utf-8", b"", b'{"arrival_s": 0}\n[1]\n', b"arrival_s,input_len\n0,10\n",
    b"arrival_s,input_len,output_len\n-1,10,10\n", b"arrival_s,input_len,output_len\n0,ten,10\n",
    b"arrival_s,input_len,output_len\n0,4000,1000\n", b"arrival_s,input_len,output_len\n0,1," + b"1" * 140_000 + b"\n",  # over the csv module's field limit
])
def test_every_trace_problem_is_said_in_chinese(data):
    """Issue #19 ("Chinese everywhere"): calc.traffic's trace errors (English by design) are worded
    at the UI layer; every form calc raises has a Chinese wording (a new form fails here)."""
    from calc.traffic.workload import WorkloadError, parse_trace
    from ui.i18n import Translator
    from ui.loadtest.messages import localize

    with pytest.raises(WorkloadError) as e:
        parse_trace(data, max_model_len=4096)
    zh = localize(str(e.value), Translator("zh"))
    assert zh != str(e.value) and zh.startswith("轨迹"), zh
    assert localize(str(e.value), Translator("en")) == str(e.value)  # English reads as before


def test_trace_problem_on_the_page_in_chinese():
    at = open_section(app({**SMALL, "lang": "zh"}, page=PAGE), "sec_lt_trace")  # the uploader's lazy section
    at.file_uploader(key="lt_trace").set_value(("t.csv", b"arrival_s,input_len\n0,10\n", "text/csv")).run()
    assert not at.exception
    assert "轨迹第 2 行：缺少字段 output_len" in [x.value for x in at.get("text")]


def test_the_simulation_runs_in_a_worker_process_with_the_same_numbers(monkeypatch):
    """On a server (ui.background._serving) the run goes to ui.workers' pool; same page, same numbers."""
    from ui import background, workers

    RESULTS.clear()
    here = app(SMALL, page=PAGE)
    RESULTS.clear()
    monkeypatch.setattr(background, "_serving", lambda: True)
    ran = []
    submit = workers.Pool.submit
    monkeypatch.setattr(workers.Pool, "submit", lambda self, job, **kw: ran.append(job.key[0]) or submit(self, job, **kw))
    there = app(SMALL, page=PAGE)
    assert not there.exception and not there.error
    assert ran == ["lt.run"] and workers.pool().worker_pids()
    assert [m.value for m in there.metric] == [m.value for m in here.metric]
    # With the rate search, it is queued with the run (not behind the others' jobs after it)
    ran.clear()
    swept = app({**SMALL, "lt_sweep": "true"}, page=PAGE)
    assert not swept.exception and not swept.error
    assert ran == ["lt.sweep"]  # queued ahead (its tab closed); the run was cached
    open_tab(swept, "sweep")
    assert any("Highest rate meeting" in m.value for m in swept.markdown) or any("Even the lowest" in w.value for w in swept.warning)


def test_the_work_estimate_and_caps_know_a_speculative_load(monkeypatch):
    """calc.traffic.budget with num_speculative_tokens: the page's estimate counts the 1 + k tokens a
    verify step may gain, and the caps its dearer fast-forwarded steps."""
    from calc.spec.catalog import get_gpu, get_model  # noqa: PLC0415
    from calc.spec.inputs import Efficiency, ServingConfig  # noqa: PLC0415
    from calc.spec.speculative import parse_speculative_config  # noqa: PLC0415
    from calc.traffic.budget import SECONDS_PER_SPEC_STEP, SECONDS_PER_STEP  # noqa: PLC0415
    from ui.loadtest import runs  # noqa: PLC0415

    load = runs.Load(arrival="closed", rate_per_s=1.0, cv=1.0, concurrency=1, num_requests=10, lengths="fixed",
                     input_len=64, output_len=400, spread=0.0, seed=3)
    spec = parse_speculative_config({"method": "eagle3", "num_speculative_tokens": 3}, acceptance_rate=0.7)
    key = (get_model("meta-llama/Llama-3.1-8B").model_dump_json(), get_gpu("h100-sxm").model_dump_json(),
           ServingConfig(max_model_len=4096).model_dump_json(), Efficiency().model_dump_json())
    plain = runs.work(*key, load, None)
    fast = runs.work(*key, runs.Load(**{**load.__dict__, "speculative": spec}), None)
    assert plain.steps == 10 * 400 and fast.steps == 10 * 100  # one client: 400 tokens, at most 4 a step
    assert fast.cpu_s == pytest.approx(plain.passes * 80e-6 + 1000 * SECONDS_PER_SPEC_STEP)
    import types  # noqa: PLC0415

    monkeypatch.setattr(runs, "limits", lambda: types.SimpleNamespace(cpu_s=1.0, run_bytes=2**30))  # CPU binds
    assert runs._caps() == (int(1.0 / SECONDS_PER_STEP), 3333)  # 799,999 steps of 1.25 µs, 3,333 passes of 300 µs
    assert runs._caps(speculative=True) == (int(1.0 / SECONDS_PER_SPEC_STEP), 3333)  # 166,666 of 6 µs


def test_the_closed_loops_clients_are_the_sidebars_concurrency():
    """One traffic description: the clients box on the load test is the sidebar's concurrency (the
    memory and frontier pages' number); an old link's lt_concurrency is read as it."""
    at = app({**SMALL, "lt_arrival": "closed", "concurrency": "12"}, page=PAGE)
    assert at.number_input(key="_mirror_concurrency").value == 12
    at.number_input(key="_mirror_concurrency").set_value(24).run()
    assert not at.exception
    assert at.number_input(key="concurrency").value == 24 and at.query_params["concurrency"] == "24"
    at.switch_page("pages/memory.py").run()
    assert at.number_input(key="concurrency").value == 24
    at.number_input(key="concurrency").set_value(6).run()
    at.switch_page(PAGE).run()
    assert at.number_input(key="_mirror_concurrency").value == 6
    old = open_page(PAGE, {**SMALL, "lt_arrival": "closed", "lt_concurrency": "2000"})  # an old load-test link
    assert not old.exception and not any("URL parameter" in w.value for w in old.warning)  # read, not refused
    assert old.number_input(key="_mirror_concurrency").value == 2000 and "lt_concurrency" not in dict(old.query_params)


def test_rates_in_chinese_units():
    # issue 19 look check: the goodput card read "1.89 req/s" in the Chinese UI (请求/秒 everywhere else)
    from apptest_helpers import metrics

    at = app({**SMALL, "lang": "zh"}, page=PAGE)
    assert not at.exception
    good = next(v for k, v in metrics(at).items() if k.startswith("有效吞吐"))
    assert good.endswith("请求/秒") and "req/s" not in good


def test_model_that_does_not_fit_says_what_vllm_would_and_what_would_fit():
    """gpt-oss-120b on one H100 at its full 131,072-token context: a KV pool is left, but not one max_model_len
    request's worth. The load test says so as the frontier does, with the same computed alternatives (was: 'no KV
    cache pool is left', with no advice)."""
    setup = {"model": "openai/gpt-oss-120b", "gpu": "h100-sxm"}
    lt = app({**setup, **SMALL}, page=PAGE)
    fr = app(setup, page="pages/frontier.py")
    assert not lt.exception and not fr.exception
    [message] = [e.value for e in lt.error]
    assert "max_model_len = 131,072" in message and "--max-model-len" in message and "no KV cache pool" not in message
    assert message in [e.value for e in fr.error]
    assert plotly_specs(lt) == []


def test_open_loop_table_shows_the_cards_steady_state():
    """Poisson arrivals: the card's P95 TTFT (first quarter of the requests left out, as the planner's check) and
    the simulated column of the table beside the queueing model are the same number (it was every request in
    the table: 438.2 ms on the card, 431.6 ms in the table)."""
    at = app({**SMALL}, page=PAGE)
    assert not at.exception
    card = next(m.value for m in at.metric if m.label == "P95 TTFT")
    (table,) = md_tables(at)
    row = next(r for r in table if r["Metric"] == "P95 TTFT")
    assert row["Simulated"] == card


def test_closed_loop_table_shows_the_percentile_the_frontier_judges():
    """A closed loop of spread lengths: beside the simulated P95 TTFT (the same steady requests as the
    means) the analytic P95 is the closed loop's (ui.perf.view.closed_loop_percentile_at: estimate's mean +
    closed_loop_ttft's excess, estimate's ttft_p95_s); fixed lengths (the FCFS wave) have no such row."""
    import re  # noqa: PLC0415

    def seconds(cell: str) -> float:
        v, unit = re.match(r"([\d,.]+) (ms|s|min)", cell).groups()
        return float(v.replace(",", "")) * {"ms": 1e-3, "s": 1.0, "min": 60.0}[unit]

    at = app({**SMALL, "lt_requests": "1000", "lt_arrival": "closed", "lt_concurrency": "16"}, page=PAGE)
    assert not at.exception
    (table,) = md_tables(at)
    row = next(r for r in table if r["Metric"] == "P95 TTFT")
    mean = next(r for r in table if r["Metric"].startswith("TTFT"))
    analytic = next(k for k in row if k.startswith("Analytic"))
    assert seconds(row[analytic]) > seconds(mean[analytic])
    assert seconds(row[analytic]) == pytest.approx(seconds(row["Simulated"]), rel=0.25)
    fixed = app({**SMALL, "lt_arrival": "closed", "lt_concurrency": "16", "lt_lengths": "fixed"}, page=PAGE)
    assert not any(r["Metric"] == "P95 TTFT" for r in md_tables(fixed)[0])


def test_the_verdict_says_how_sure_the_run_is_and_when_it_is_too_close_to_call():
    """Issue #19 (one answer across pages): the default run's P95 TTFT (438 ms from 750 steady-state requests)
    sat below the frontier's model (514 ms) and the long run (485 ms, 40,000 requests). The page now gives each
    judged number's 95 % interval from the run itself (sectioning), and says so when a target is inside it."""
    at = app(page="pages/load_test.py")
    (line,) = [c for c in plain(at.caption) if c.startswith("How sure this run is:")]
    assert "P95 TTFT 403.7 ms – 463.0 ms" in line and "750 steady-state requests" in line and "too close" not in line
    close = app({"sla_ttft_ms": "450"}, page="pages/load_test.py")  # 450 ms is inside 404-463 ms
    (line,) = [c for c in plain(close.caption) if c.startswith("How sure this run is:")]
    assert "The TTFT target is inside its interval: too close to call" in line
    zh = app({"lang": "zh"}, page="pages/load_test.py")
    assert any(c.startswith("本次模拟的可信度：") for c in plain(zh.caption))


def test_the_analytic_row_says_when_the_token_budget_is_busy_near_capacity():
    # issue 17: where the token budget is busy with prompts most of the time the TTFT is steep in the rate and a run
    # moves with its seed (calc.traffic.queueing.near_capacity): said beside the analytic row at 5 requests/s, not at 2
    q = {"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "context": "2756", "output_len": "256",
         "max_num_batched_tokens": "1024"}
    said = {rate: [x for x in texts(app({**q, "rate": rate}, page=PAGE).info) if "token budget is busy" in x]
            for rate in ("2", "5")}
    assert said["2"] == []
    (note,) = said["5"]
    assert "climbs steeply with the rate" in note and "judge with more requests or several seeds" in note
    zh = app({**q, "rate": "5", "lang": "zh"}, page=PAGE)
    assert any("token 预算有" in x and "多个种子" in x for x in texts(zh.info))


def test_the_rate_search_runs_without_the_client_cap_and_says_so():
    """With a client cap no rate fails the SLA (TTFT starts when a request is sent): the search asks the engine."""
    capped = app({**SMALL, "lt_sweep": "true", "lt_max_concurrency": "4"}, page=PAGE)
    open_tab(capped, "sweep")
    assert not capped.exception
    assert any("without the client cap of 4" in c.value for c in capped.caption)
    plain = app({**SMALL, "lt_sweep": "true"}, page=PAGE)
    open_tab(plain, "sweep")
    result = [m.value for m in plain.markdown if "Highest rate meeting" in m.value]
    assert result and result == [m.value for m in capped.markdown if "Highest rate meeting" in m.value]


def test_a_trace_is_replayed_under_the_client_cap():
    """The cap applies to an uploaded trace too (drawn for open arrivals, where the trace replaces them)."""
    from ui.loadtest import runs  # noqa: PLC0415

    trace = b"arrival_s,input_len,output_len\n" + b"".join(b"0,100,10\n" for _ in range(6))
    load = runs.Load(arrival="poisson", rate_per_s=1.0, cv=1.0, concurrency=1, num_requests=6, lengths="fixed",
                     input_len=100, output_len=10, spread=0.0, seed=0, max_concurrency=2)
    w = runs.workload(load, 4096, trace)
    assert w.capped and w.closed_clients == 2 and w.num_requests == 6
    assert not runs.workload(runs.Load(**{**load.__dict__, "max_concurrency": None}), 4096, trace).closed


def test_a_bands_range_reads_in_one_unit():
    """A burst whose P95 TTFT is seconds: the card's range under it is in seconds at both ends (it read
    "range 6,817.5 ms–16.9 s" beside 11.5 s: ui.format.duration_like)."""
    import re

    at = app({"lt_arrival": "burst", "lt_requests": "300", "model": "Qwen/Qwen3-8B", "gpu": "h100-sxm",
              "context": "640", "output_len": "4", "lt_sweep": "false"}, page=PAGE)
    assert not at.exception
    (card,) = [m for m in at.metric if m.label.startswith("P95 TTFT")]
    assert card.value.endswith(" s")
    lo, hi = re.search(r"range ([\d,.]+ \w+)–([\d,.]+ \w+)", card.proto.delta).groups()
    assert lo.endswith(" s") and hi.endswith(" s")


def test_a_burst_says_how_the_api_server_takes_it():
    """A burst's why-panel: 300 chat requests at 14.5 ms each, f = 0.2 (Efficiency.api_server_final_share): none
    through before 300 · 0.8 · 14.5 ms + 0.2 · 14.5 ms = 3,482.9 ms, then one every 2.9 ms, the last at 4,350.0 ms.
    An open loop has no such panel."""
    q = {"lt_arrival": "burst", "lt_requests": "300", "model": "Qwen/Qwen3-8B", "gpu": "h100-sxm", "context": "640",
         "output_len": "4", "lt_sweep": "false"}
    at = open_section(app(q, page=PAGE), "why_api_burst")
    assert not at.exception
    (take,) = [m.value for m in at.markdown if "reaches the engine before" in m.value]
    assert "None of the 300 requests reaches the engine before 3,482.9 ms" in take
    assert "then one every 2.9 ms, the last at 4,350.0 ms" in take
    assert any("asyncio event loop" in c.value for c in at.caption)
    zh = open_section(app({**q, "lang": "zh"}, page=PAGE), "why_api_burst")
    assert any("个请求在 3,482.9 ms 之前都到不了引擎" in m.value for m in zh.markdown)
    poisson = open_section(app({**q, "lt_arrival": "poisson", "rate": "2"}, page=PAGE), "why_api_burst")
    assert not any("reaches the engine before" in m.value for m in poisson.markdown)
