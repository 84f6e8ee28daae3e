"""AppTest: the share link and the scenario file carry every page's settings touched in the
session (ui.session_view), not only the page they are made on; a link's settings of other pages
reach those pages in a fresh session."""

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from apptest_helpers import app, open_section, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
FRONTIER, LOAD_TEST, PLANNER, MEMORY = "pages/frontier.py", "pages/load_test.py", "pages/planner.py", "pages/memory.py"
SMALL = {"lt_requests": "200", "lt_sweep": "false"}  # a quick load test


def _open_share(at):
    return open_section(at, "sec_share")


def _link(at) -> dict[str, list[str]]:
    return parse_qs(urlsplit(at.text_input(key="share_link").value).query, keep_blank_values=True)


def test_a_link_made_on_the_planner_carries_the_load_test_and_the_frontier():
    at = app(SMALL, page=LOAD_TEST)
    at.number_input(key="rate").set_value(3.5).run()
    at.selectbox(key="lt_arrival").select("gamma").run()
    at.slider(key="lt_cv").set_value(3.0).run()
    at = open_section(at.switch_page(FRONTIER), "sec_fr_cost")  # price, replicas, rate: a lazy section
    at.number_input(key="replicas").set_value(3).run()
    at.toggle(key="per_gpu").set_value(True).run()
    at = open_section(at.switch_page(PLANNER), "sec_pl_search")  # the planner's search options: a lazy section
    at.selectbox(key="pl_sort").select("gpus").run()
    assert not at.exception
    link = _link(_open_share(at))
    assert link["rate"] == ["3.5"] and link["replicas"] == ["3"]  # shared traffic
    assert link["lt_arrival"] == ["gamma"] and float(link["lt_cv"][0]) == 3.0  # the load test's own
    assert link["per_gpu"] == ["true"]  # the frontier's own
    assert link["pl_sort"] == ["gpus"]  # the planner's own (the page it was made on)
    assert "lt_requests" in link  # set by the link the session opened with
    # the scenario file lists the same settings of every page (ui.session_view.values)
    assert {"rate", "replicas", "lt_arrival", "lt_cv", "per_gpu", "pl_sort"} <= set(at.session_state["_touched_controls"])


def test_a_scenario_file_carries_and_checks_every_pages_settings():
    from ui.session_view import parse_values
    from ui.state import SCENARIO_FORMAT, SCENARIO_VERSION, load_scenario_text

    pages = {"lt_arrival": "gamma", "lt_cv": 3.0, "per_gpu": True, "pl_sort": "gpus", "overlays": ["tp:2"],
             "pl_prices": "h100-sxm=2.49"}
    assert parse_values(pages) == {**pages, "overlays": ("tp:2",)}
    doc = {"format": SCENARIO_FORMAT, "version": SCENARIO_VERSION, "controls": {}, "pages": pages}
    load_scenario_text(json.dumps(doc))  # accepted
    for bad, field in (({"lt_cv": 99}, "lt_cv"), ({"nope": 1}, "pages"), ([], "pages")):
        with pytest.raises(ValueError, match=field):
            load_scenario_text(json.dumps(doc | {"pages": bad}))


def test_a_link_opened_on_one_page_sets_the_others_in_a_fresh_session():
    at = app({**SMALL, "lt_arrival": "gamma", "lt_cv": "3", "per_gpu": "true", "pl_sort": "gpus", "rate": "3.5"},
             page=MEMORY)
    assert not at.exception
    at.switch_page(LOAD_TEST).run()
    assert at.selectbox(key="lt_arrival").value == "gamma" and at.slider(key="lt_cv").value == 3.0
    assert at.number_input(key="rate").value == 3.5
    at.switch_page(FRONTIER).run()
    assert at.toggle(key="per_gpu").value is True
    at.switch_page(PLANNER).run()
    assert at.session_state["pl_sort"] == "gpus"  # the search options' section closed: the value applies
    assert at.query_params["pl_sort"] == "gpus"
    assert open_section(at, "sec_pl_search").selectbox(key="pl_sort").value == "gpus"
    link = _link(_open_share(at))
    assert link["lt_arrival"] == ["gamma"] and link["per_gpu"] == ["true"]


def test_a_bad_value_for_another_page_is_named_and_dropped():
    at = app({"lt_cv": "inf"})  # the memory page, first run
    assert not at.exception
    assert any("lt_cv" in w.value for w in at.warning)


def test_an_uploaded_scenario_file_sets_every_pages_settings():
    from ui.state import SCENARIO_FORMAT, SCENARIO_VERSION

    doc = {"format": SCENARIO_FORMAT, "version": SCENARIO_VERSION, "controls": {"concurrency": 20},
           "pages": {"lt_arrival": "gamma", "lt_cv": 3.0, "lt_requests": 200, "lt_sweep": False, "pl_sort": "gpus"}}
    at = open_section(app(), "sec_share")
    at.sidebar.file_uploader(key="scenario_upload").set_value(("s.json", json.dumps(doc).encode(), "application/json")).run()
    assert not at.exception and any("loaded" in s for s in texts(at.success))
    assert _link(at)["lt_arrival"] == ["gamma"]  # in the link made on the memory page
    at.switch_page(LOAD_TEST).run()
    assert at.selectbox(key="lt_arrival").value == "gamma" and at.slider(key="lt_cv").value == 3.0
    at = open_section(at.switch_page(PLANNER), "sec_pl_search")
    assert at.selectbox(key="pl_sort").value == "gpus"


def test_the_session_holds_few_keys_streamlit_walks_them_on_every_widget():
    """Streamlit visits every session-state key on each select, number input and slider it draws
    (``SessionState.filtered_state``), so bookkeeping stays out of the key list: the page values
    kept for other pages are one entry (ui.labelled), and an undrawn lazy sidebar control is a key
    only when the link set it (ui.state._seed_lazy); the others read their default."""
    from ui.controls import LAZY

    at = open_section(app({"eff_hbm_bw_fraction": "0.7"}, page=FRONTIER), "sec_fr_cost")
    at.number_input(key="replicas").set_value(3).run()
    at.switch_page(MEMORY).run()
    assert not at.exception
    keys = set(at.session_state.keys())
    assert "_kept_values" in keys
    assert [k for k in keys if k.startswith("_kept_") and k != "_kept_values" and not k.startswith("_kept_upload_")] == []
    lazy = {c.key for c in LAZY} & keys
    assert lazy == {"eff_hbm_bw_fraction"}  # the link's value; 31 others at their default, no key
    assert at.query_params["eff_hbm_bw_fraction"] == "0.7"  # still in the link, and still applied:
    assert at.session_state["_scenario"].efficiency.hbm_bw_fraction == 0.7
    at.switch_page(FRONTIER).run()
    assert at.number_input(key="replicas").value == 3  # the kept value came back


def test_a_lazy_section_takes_a_value_changed_on_another_page():
    """The frontier's rate is in a lazy section (ui.lazy_inputs) whose widget keeps its own state; the
    load test's rate, changed after it, is the one the frontier shows and links when the user returns."""
    at = open_section(app(SMALL, page=FRONTIER), "sec_fr_cost")
    at.number_input(key="rate").set_value(4.0).run()
    at.switch_page(LOAD_TEST).run()
    assert at.number_input(key="rate").value == 4.0  # carried to the load test
    at.number_input(key="rate").set_value(6.0).run()
    at.switch_page(FRONTIER).run()
    assert not at.exception
    assert at.number_input(key="rate").value == 6.0 and at.query_params["rate"] == "6"
