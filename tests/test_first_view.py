"""AppTest: a fresh browser session's first view (ui.first_view) draws the first chart the whole page
draws, then, when the browser presses its button, the whole page as a plain session gets it.

AppTest sends no User-Agent, so it gets the whole page at once; ``browser`` makes its session a
browser's. Every page with its default link, and the four pages the first-paint bench measures with
links that set sidebar, page, presenter and language values (each value reaches the first view
through :func:`ui.state.quiet_value`, not through a widget: this is what holds the two equal).
"""

import pytest

from apptest_helpers import metrics, open_page, plotly_specs
from ui import first_view
from ui.shell import PAGES

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
BUTTON = f"{first_view.KEY}_button"
SMALL = {"lt_requests": "200", "lt_sweep": "false"}  # a quick load test
LINKS = {
    "sidebar": {"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "context": "4096", "concurrency": "48",
                "kv_cache_dtype": "fp8", "tp": "2", "max_num_seqs": "128", "eff_step_overhead_ms": "2.5"},
    "page": {"lang": "zh", "present": "1", "sla_ttft_ms": "800", "sla_tpot_ms": "40", "sla_stat": "p99",
             "lengths": "lognormal", "length_spread": "0.8", "rate": "3", "per_gpu": "true",
             "overlays": ["kv:fp8", "tp:2"], "sweep_context": "true"},
}
MEASURED = ["pages/memory.py", "pages/frontier.py", "pages/load_test.py", "pages/planner.py"]
CASES = [(p.path, "default") for p in PAGES] + [(p, link) for p in MEASURED for link in LINKS]


@pytest.fixture
def as_browser(monkeypatch):
    """This test's sessions are a browser's (a first view on their first run)."""
    monkeypatch.setattr(first_view, "from_browser", lambda: True)


def _query(link: str) -> dict:
    return {**SMALL, **LINKS.get(link, {})}


def _page(at) -> dict:
    """What the reader sees of a page, widgets' values included."""
    return {"charts": plotly_specs(at), "metrics": metrics(at), "markdown": [m.value for m in at.main.markdown],
            "widgets": sorted((w.key, repr(w.value)) for kind in ("number_input", "selectbox", "multiselect", "toggle",
                                                                   "slider", "radio")
                              for w in at.get(kind) if w.key),
            "query": sorted((k, tuple(at.query_params[k])) for k in at.query_params)}


@pytest.mark.parametrize(("page", "link"), CASES)
def test_the_first_view_draws_the_whole_pages_first_chart_then_the_whole_page(page, link, monkeypatch):
    whole = open_page(page, _query(link))  # a plain session: the whole page at once
    assert not whole.exception
    assert BUTTON not in [b.key for b in whole.button]
    monkeypatch.setattr(first_view, "from_browser", lambda: True)
    at = open_page(page, _query(link))
    assert not at.exception
    first = plotly_specs(at)
    assert len(first) == 1, "a first view ends at its first chart"
    assert first[0] == plotly_specs(whole)[0]
    assert BUTTON in [b.key for b in at.sidebar.button]
    assert not at.sidebar.selectbox and not at.sidebar.number_input  # no sidebar controls yet
    at.button(key=BUTTON).click().run()  # what static/first-view.js does once the chart is shown
    assert not at.exception
    assert BUTTON not in [b.key for b in at.button]
    assert _page(at) == _page(whole)


@pytest.mark.parametrize(("page", "query", "key"), [
    ("pages/frontier.py", {"concurrency": "0"}, "concurrency"),  # a sidebar control
    ("pages/frontier.py", {"sla_ttft_ms": "-5"}, "sla_ttft_ms"),  # a page's own
    ("pages/load_test.py", {**SMALL, "lt_arrival": "nonsense"}, "lt_arrival"),
    ("pages/memory.py", {"lang": "fr"}, "lang"),
])
def test_a_link_with_a_bad_value_gets_the_whole_page_and_its_message_at_once(as_browser, page, query, key):
    # the message is said once, on the first run (the value then leaves the link): the sidebar's are
    # said with the whole page, at once
    at = open_page(page, query)
    assert not at.exception
    assert BUTTON not in [b.key for b in at.button]
    assert any(key in w.value for w in at.warning)
    assert at.sidebar.selectbox  # the sidebar drawn


@pytest.mark.parametrize(("page", "query", "key"), [
    ("pages/prefix_cache.py", {"pc_prefix_len": "abc"}, "pc_prefix_len"),
    ("pages/speculative.py", {"spec_k": "99999"}, "spec_k"),
    ("pages/frontier.py", {"pc_prefix_len": "-1"}, "pc_prefix_len"),  # the reuse inputs, on another page
])
def test_a_pages_own_link_warning_is_said_in_the_first_view_and_again_in_the_whole_page(as_browser, page, query, key):
    at = open_page(page, query)
    assert not at.exception and BUTTON in [b.key for b in at.button]
    assert [w.value for w in at.warning if key in w.value]
    at.button(key=BUTTON).click().run()
    assert not at.exception and BUTTON not in [b.key for b in at.button]
    assert len([w.value for w in at.warning if key in w.value]) == 1
    at.number_input(key="concurrency").set_value(12).run()  # said once: not on the next change
    assert not [w.value for w in at.warning if key in w.value]


def test_only_the_first_run_is_a_first_view(as_browser):
    at = open_page("pages/memory.py")
    at.button(key=BUTTON).click().run()
    at.number_input(key="concurrency").set_value(32).run()
    assert not at.exception and BUTTON not in [b.key for b in at.button]
    at.switch_page("pages/frontier.py").run()
    assert BUTTON not in [b.key for b in at.button] and len(plotly_specs(at)) == 2


def test_a_page_without_a_chart_is_drawn_whole_at_once(as_browser):
    # Llama-3.1-405B in 16 bits on one RTX 3090: the frontier says it does not fit, and draws no chart
    at = open_page("pages/frontier.py", {"model": "meta-llama/Llama-3.1-405B", "gpu": "rtx-3090"})
    assert not at.exception
    assert not plotly_specs(at) and at.error
    assert BUTTON not in [b.key for b in at.button] and at.sidebar.selectbox
