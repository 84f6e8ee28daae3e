"""ui.deferred_sidebar: a browser session's first run draws the page from the link, the sidebar after
its first chart (the hidden button the browser's script clicks), with the same values and messages."""

import pytest

from apptest_helpers import APP, metrics, plotly_specs, texts
from streamlit.testing.v1 import AppTest

from ui import deferred_sidebar

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def first_run(query: dict, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    return (at.switch_page(page) if page else at).run()


def go(at: AppTest) -> int:
    """How many "draw the sidebar now" markers the run sent (style only: no room on the page)."""
    return sum(h.proto.body == deferred_sidebar.GO for h in at.get("html"))


def click(at: AppTest) -> AppTest:
    """What static/sidebar-after-chart.js does once the chart is drawn."""
    return at.button(key=f"{deferred_sidebar.KEY}_button").click().run()


def test_a_browser_first_run_draws_the_page_from_the_link_then_the_sidebar(monkeypatch):
    monkeypatch.setattr(deferred_sidebar, "_browser", lambda: True)
    # Llama-3.1-70B, TP 4 on H100 80GB from the link; tp=3 is not a TP size: named, the default (1) used
    link = {"lang": "en", "model": "meta-llama/Llama-3.1-70B", "gpu": "h100-sxm", "concurrency": "8", "tp": "3"}
    at = first_run(link)
    assert not at.exception
    assert not at.sidebar.selectbox and not at.sidebar.number_input  # no shared control yet
    assert [b.key for b in at.sidebar.button] == [f"{deferred_sidebar.KEY}_button"]
    assert plotly_specs(at)  # the page and its chart; the marker says the script waits for it
    assert not go(at)  # no marker: the script waits for the chart
    first = metrics(at)
    warned = [w for w in texts(at.warning) if "tp=3" in w]
    assert len(warned) == 1
    caption = " ".join(texts(at.caption))
    assert "Llama-3.1-70B on 1 × NVIDIA H100" in caption  # the link's model and GPU, TP at its default
    at = click(at)
    assert not at.exception
    assert at.selectbox(key="model").value == "meta-llama/Llama-3.1-70B"
    assert at.number_input(key="concurrency").value == 8
    assert f"{deferred_sidebar.KEY}_button" not in [b.key for b in at.sidebar.button]
    assert not go(at)
    assert metrics(at) == first  # computed again from the drawn controls: the same numbers
    assert [w for w in texts(at.warning) if "tp=3" in w] == warned  # the message stays (the link is fixed by now)
    at = at.run()
    assert [w for w in texts(at.warning) if "tp=3" in w] == []  # once


def test_a_page_link_and_its_own_controls(monkeypatch):
    monkeypatch.setattr(deferred_sidebar, "_browser", lambda: True)
    at = first_run({"lang": "en", "gpu": "a100-80gb", "sla_tpot_ms": "1"}, page="pages/planner.py")
    assert not at.exception
    assert not at.sidebar.selectbox
    first = metrics(at)
    assert first["Best option"] == "—"  # a 1 ms TPOT target: no deployment, no chart on this view: the marker says click now
    assert go(at) == 1
    at = click(at)
    assert not at.exception and metrics(at) == first
    assert at.selectbox(key="gpu").value == "a100-80gb"  # the link's GPU


def test_not_a_browser_draws_the_sidebar_at_once():
    at = first_run({"lang": "en"})  # AppTest sends no User-Agent: as before this module
    assert not at.exception
    assert at.selectbox(key="model").value and not [b for b in at.sidebar.button if b.key and "sidebar_later" in b.key]


def test_a_presenter_link_is_in_presenter_mode_from_the_first_run(monkeypatch):
    """The presenter switch is in the sidebar; the first run reads ?present=1 too, so its elements (the
    chart's larger fonts, the style sheet) are the next run's and nothing is drawn twice."""
    from ui import layout

    monkeypatch.setattr(deferred_sidebar, "_browser", lambda: True)
    at = first_run({"lang": "en", "present": "1"})
    assert not at.exception and any(layout._PRESENT_CSS in h.proto.body for h in at.get("html"))
    first = plotly_specs(at)
    at = click(at)
    assert at.toggle(key=layout._SWITCH).value is True
    assert plotly_specs(at) == first
