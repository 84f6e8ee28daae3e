"""AppTest of the prefix-cache page (hit rate against prefixes and load, TTFT with and without)."""

import pytest

from apptest_helpers import app, chart_titles, plotly_specs

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PAGE = "pages/prefix_cache.py"


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_defaults_render_without_exception():
    at = app(page=PAGE)
    assert not at.exception and not at.error
    m = metrics(at)
    assert {"Prefix cache hit rate", "Prefill per request", "Kept in the cache"} <= set(m)
    specs = plotly_specs(at)
    assert len(specs) == 2
    titles = chart_titles(at)
    assert any("Hit rate" in x for x in titles) and any("TTFT" in x for x in titles)
    assert all(s["layout"]["xaxis"]["title"]["text"] for s in specs)


def test_url_state_and_more_prefixes_lower_the_hit_rate():
    few = metrics(app(page=PAGE, query={"pc_prefixes": "1"}))["Prefix cache hit rate"]
    many = metrics(app(page=PAGE, query={"pc_prefixes": "1000000"}))["Prefix cache hit rate"]
    assert float(few.rstrip(" %")) > float(many.rstrip(" %"))


def test_caching_off_and_chat():
    off = app(page=PAGE, query={"pc_caching": "false"})
    assert not off.exception and metrics(off)["Prefix cache hit rate"].startswith("0")
    chat = app(page=PAGE, query={"pc_kind": "chat", "pc_turns": "2"})
    assert not chat.exception and not chat.error
    assert float(metrics(chat)["Prefix cache hit rate"].rstrip(" %")) > 30  # turn 2 finds turn 1
    too_long = app(page=PAGE, query={"pc_kind": "chat", "pc_turns": "8"})
    assert not too_long.exception and "max_model_len" in too_long.error[0].value


def test_hostile_params_named_not_traced():
    """Each bad value is named where it is first read: pc_prefixes by the memory page's reuse inputs (the
    landing page; AppTest opens it first), pc_kind by this page."""
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    from conftest import APP  # noqa: PLC0415

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"pc_prefixes": "-5", "pc_kind": "<script>"})
    at.run()
    text = " ".join(w.value for w in at.warning)
    at.switch_page(PAGE).run()
    assert not at.exception
    text += " ".join(w.value for w in at.warning)
    assert "pc_prefixes=-5" in text and "pc_kind" in text and "<script>" not in text


def test_chinese():
    at = app(page=PAGE, query={"lang": "zh"})
    assert not at.exception and "前缀缓存命中率" in metrics(at)


def _ms(text: str) -> float:
    return float(text.split()[0].replace(",", ""))


def test_frontier_takes_the_reuse():
    # a 1,700-token prefix of the sidebar's 1,792-token prompt: less prefill, so more clients meet the SLA
    plain = metrics(app(page="pages/frontier.py"))
    shared = metrics(app(page="pages/frontier.py", query={"pc_reuse": "shared", "pc_prefix_len": "1700"}))
    assert int(shared["Best concurrency meeting the SLA"]) > int(plain["Best concurrency meeting the SLA"])


def test_load_test_takes_the_reuse():
    plain = metrics(app(page="pages/load_test.py", query={"lt_requests": "300"}))
    shared = metrics(app(page="pages/load_test.py",
                         query={"lt_requests": "300", "pc_reuse": "shared", "pc_prefix_len": "1700"}))
    assert _ms(shared["P95 TTFT"]) < 0.8 * _ms(plain["P95 TTFT"])


@pytest.mark.parametrize("lang, title, column", [("en", "How close to real servers", "Predicted"),
                                                 ("zh", "离真实服务器有多近", "预测")])
def test_published_runs_panel_lists_the_checks(lang, title, column):
    """The page says how far the model has been from published prefix-reuse runs (calc/data/prefix_cache_checks.json):
    the medians in the caption and every scored value in a table, in the reader's language; drawn only once opened."""
    from apptest_helpers import open_checks  # noqa: PLC0415

    table, caption = open_checks(PAGE, lang, "pc_checks", title, column)
    assert len(table) == 65
    assert "17\u00a0%" in caption and "14\u00a0%" in caption and "7\u00a0%" in caption
