"""AppTest of the disaggregation page: the verdict, both charts, why-panels, URL state, EN/ZH."""

import pytest

from apptest_helpers import app, commands, metrics, plotly_specs, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PAGE = "pages/disaggregation.py"


def test_defaults_render():
    at = app(page=PAGE)
    assert not at.exception and not at.error
    m = metrics(at)
    assert any(k.startswith("Colocated at 8 GPUs") for k in m) and any(k.startswith("Best xPyD") for k in m)
    specs = plotly_specs(at)
    assert len(specs) == 2
    assert specs[0]["layout"]["xaxis"]["title"]["text"] == "GPUs"
    assert {tr.get("name") for tr in specs[0]["data"]} >= {"Colocated", "Disaggregated (best P:D)"}
    assert "--prefill-instances" in commands(at)[0]
    # Llama-2-7B on an A100 at P95: the P95 prompt's prefill + KV transfer + the decode's first token is
    # over 500 ms unloaded, so no split carries any rate; the verdict says so (it read "the best split
    # (—) 0 req/s")
    (verdict,) = texts(at.info)
    assert "no P:D split meets it at any rate" in verdict and "prefill instance's TTFT" in verdict
    assert "(—)" not in verdict
    assert m["Best xPyD at 8 GPUs"] == "none meets the SLA"  # the card read "0 req/s (—)"
    # and the why-panel the verdict points at adds it up: the P95 prompt's unloaded prefill + transfer + first token
    # over the 500 ms target (it plugged in only the mean prompt's transfer)
    (panel,) = [m.value for m in at.markdown if m.value.startswith("**TTFT of a disaggregated request**")]
    assert "With no queue at all, a prefill instance's P95 TTFT" in panel
    assert "over it before any request waits" in panel and "λp = 0 req/s" in panel


def test_url_state_link_and_gpu_count():
    at = app({"dg_gpus": "12", "dg_link": "ethernet-25g", "rate": "5"}, page=PAGE)
    assert not at.exception
    assert any(k.startswith("Colocated at 12 GPUs") for k in metrics(at))
    assert "--kv-transfer-gb-per-s 2.5" in commands(at)[0]  # 25 Gb/s = 3.125 GB/s x 0.8 achievable


def test_bad_url_value_warns_and_names_the_field():
    at = app({"dg_gpus": "9999"}, page=PAGE)
    assert not at.exception
    assert any("dg_gpus" in w for w in texts(at.warning))


def test_chinese():
    at = app({"lang": "zh"}, page=PAGE)
    assert not at.exception
    assert any("共置" in k for k in metrics(at))
    (verdict,) = texts(at.info)
    assert "任何 P:D 划分在任何速率下都满足不了 SLA" in verdict and "预填充实例" in verdict and "（—）" not in verdict
    assert any("完全不排队时，预填充实例的 P95 TTFT" in m.value and "承载不了任何速率" in m.value for m in at.markdown)


def test_hostile_url_values_are_named_and_escaped():
    at = app({"dg_link": "<script>alert(1)</script>", "dg_bw_gb_s": "abc"}, page=PAGE)
    assert not at.exception
    warnings = texts(at.warning)
    assert any("dg_link" in w for w in warnings) and any("dg_bw_gb_s" in w for w in warnings)
    assert not any("<script>" in w for w in warnings)


def test_empty_bandwidth_box_shows_the_presets():
    # issue 19 look check: the optional bandwidth box was empty, not saying which bandwidth is used
    from calc.traffic.disaggregation import kv_links

    gb_s = kv_links()["ethernet-25g"].effective_bytes_per_s() / 1e9
    for lang, word in (("en", "preset: "), ("zh", "预设：")):
        at = app({"dg_link": "ethernet-25g", "lang": lang}, page=PAGE)
        box = at.number_input(key="dg_bw_gb_s")
        assert box.value is None and box.proto.placeholder.startswith(word)
        assert float(box.proto.placeholder[len(word):]) == pytest.approx(gb_s, abs=0.05)


def test_the_shared_lengths_spread_reaches_the_answer_and_the_command():
    """The page judges the traffic the other pages judge (ui.traffic: lengths, default lognormal 0.5): its
    numbers are calc's same_gpus at those coefficients of variation, and the command asks them."""
    from calc.plan.disaggregation import same_gpus
    from calc.spec.catalog import get_gpu, get_model
    from calc.spec.inputs import Efficiency, ServingConfig
    from calc.traffic.disaggregation import kv_links
    from calc.traffic.workload import cut_input_quantile, cut_lengths

    def shown(at):
        m = metrics(at)
        return next(v for k, v in m.items() if k.startswith("Colocated at")), next(v for k, v in m.items()
                                                                                  if k.startswith("Best xPyD"))

    def calc(spread):  # the default scenario: Llama-2-7B, A100 80 GB, 1,792 + 256 tokens, P95, 8 GPUs, IB NDR,
        # the lengths cut to the model's 4,096-token window as the load test draws them (cut_lengths), the
        # P95 prompt their own quantile (cut_input_quantile: 3,472 tokens, where a lognormal of the cut
        # mean and CV has 3,273)
        kind = "lognormal" if spread else "fixed"
        cut = cut_lengths(kind, 1792, 256, spread, 4096)
        input_q = cut_input_quantile(kind, 1792, 256, spread, 4096, 0.95) if cut.cut_fraction > 0 else None
        return same_gpus(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"),
                         ServingConfig(input_len=round(cut.input_mean), output_len=round(cut.output_mean)), Efficiency(),
                         gpu_counts=range(1, 17), ttft_slo_s=0.5, tpot_slo_s=0.05, percentile="p95",
                         link_bw_bytes_per_s=kv_links()["ib-ndr"].effective_bytes_per_s(), input_cv=cut.input_cv,
                         output_cv=cut.output_cv, input_quantile_tokens=input_q)

    fixed, spread = app({"lengths": "fixed"}, page=PAGE), app(page=PAGE)
    assert not fixed.exception and not spread.exception
    assert "--input-len-cv" not in commands(fixed)[0]
    assert "--input-len-cv 0.5 --output-len-cv 0.5" in commands(spread)[0]
    for at, cv in ((fixed, 0.0), (spread, 0.5)):
        r = calc(cv)
        assert shown(at)[0] == f"{r.colocated_rps[7]:,.1f} req/s"
    # 18.5 -> 15.1 req/s colocated: the P95 prompt of lognormal lengths is longer than the mean
    assert shown(fixed)[0] != shown(spread)[0]


def test_model_that_does_not_fit_gets_the_frontiers_message():
    """gpt-oss-120b on one H100 at its 131,072-token context: what vLLM would say and what would fit, as on the
    frontier and the load test (it said 'no KV cache pool is left')."""
    setup = {"model": "openai/gpt-oss-120b", "gpu": "h100-sxm"}
    at = app(setup, page=PAGE)
    fr = app(setup, page="pages/frontier.py")
    assert not at.exception
    [message] = [e.value for e in at.error]
    assert "max_model_len = 131,072" in message and message in [e.value for e in fr.error]
    assert plotly_specs(at) == []


@pytest.mark.parametrize("lang, title, column, words", [
    ("en", "How close to real servers", "Predicted", ("held out: never used to choose it", "median |error| 17\u00a0%",
                                                       "distserve-13b-colocated-tpot", "within 18\u00a0% (median of 36)")),
    ("zh", "离真实服务器有多近", "预测", ("留出：从未用来选择模型", "|误差| 中位数为 17\u00a0%", "distserve-13b-colocated-tpot",
                                       "相差在 18\u00a0% 以内（36 个的中位数）"))])
def test_published_runs_panel_lists_the_checks(lang, title, column, words):
    """The page says how far the model has been from published disaggregated and colocated runs
    (calc/data/disaggregation_checks.json): the medians in the caption (17 % over the 49 held-out runs,
    the ratios' 18 % over 36) and every run in a table with its role, in the reader's language; drawn only
    once opened."""
    from apptest_helpers import open_checks  # noqa: PLC0415

    table, caption = open_checks(PAGE, lang, "dg_checks", title, column)
    assert len(table) == 57
    assert all(w in caption for w in words), caption
    roles = table.iloc[:, 2].tolist()  # run, confidence, role, ...
    assert roles.count("fit" if lang == "en" else "拟合") == 1
    assert roles.count("held out" if lang == "en" else "留出") == 49


def test_published_runs_table_shows_role_and_rates():
    """The shared table (ui.checks) gains a role column where the runs carry one, and DistServe's highest
    rate within its targets reads as a request rate, not a duration (its unit kept with it)."""
    from ui import checks  # noqa: PLC0415
    from ui.i18n import Translator  # noqa: PLC0415

    from calc.traffic.disaggregation import published_checks  # noqa: PLC0415

    rows = checks.rows(published_checks(), Translator("en"))
    assert list(rows[0])[:3] == ["Run", "Confidence", "Role"]
    first = rows[0]  # distserve-13b-colocated-ttft: 2.3 req/s measured (DistServe blog, Figure 6a)
    assert first["Measured"] == "2.30\u00a0req/s" and first["Role"] == "check" and first["Confidence"] == "medium"
    assert "](https://hao-ai-lab.github.io/blogs/distserve) (DistServe blog, Figure 6a" in first["Source"]  # a link
    from calc.traffic.prefix_cache import published_checks as prefix_checks  # noqa: PLC0415

    assert "Role" not in checks.rows(prefix_checks(), Translator("en"))[0]  # runs without a role: no column
