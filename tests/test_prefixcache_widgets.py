"""The reuse inputs' lazy expander (ui.prefixcache.widgets): closed, no widget is drawn, yet the
values live in the session and the URL, and reach the page's numbers."""

from __future__ import annotations

from apptest_helpers import app, open_section

FRONTIER = "pages/frontier.py"
KEYS = ("pc_reuse", "pc_prefix_len", "pc_prefixes", "pc_turns", "pc_caching")


def _drawn(at) -> set[str]:
    widgets = [*at.selectbox, *at.number_input, *at.slider, *at.toggle]
    return {w.key for w in widgets} & set(KEYS)


def test_closed_draws_nothing_and_keeps_the_link():
    at = app(page=FRONTIER, query={"pc_reuse": "shared", "pc_prefix_len": "1700"})
    assert not at.exception
    assert _drawn(at) == set()  # closed: the label alone
    assert at.query_params.get("pc_reuse") == "shared" and at.query_params.get("pc_prefix_len") == "1700"
    # the caption under the closed expander counts the two values differing from the defaults
    assert any("2 changed" in c.value for c in at.caption)
    at.run()  # a second run, still closed: the link keeps them
    assert at.query_params.get("pc_prefix_len") == "1700"


def test_values_survive_closing_and_a_page_switch():
    at = app(page=FRONTIER)
    open_section(at, "sec_reuse")
    assert _drawn(at) == set(KEYS)
    at.selectbox(key="pc_reuse").set_value("shared").run()
    at.number_input(key="pc_prefix_len").set_value(1600).run()
    assert at.query_params.get("pc_prefix_len") == "1600"
    at.session_state["_open_sec_reuse"] = False  # the reader closes it
    at.run()
    assert _drawn(at) == set()
    assert at.session_state["pc_reuse"] == "shared" and at.session_state["pc_prefix_len"] == 1600
    assert at.query_params.get("pc_reuse") == "shared" and at.query_params.get("pc_prefix_len") == "1600"
    at.switch_page("pages/load_test.py").run()  # another page with the same inputs, still closed
    assert not at.exception
    assert at.query_params.get("pc_reuse") == "shared" and at.query_params.get("pc_prefix_len") == "1600"
    open_section(at, "sec_reuse")  # reopened: the widgets show the kept values
    assert at.selectbox(key="pc_reuse").value == "shared" and at.number_input(key="pc_prefix_len").value == 1600


def test_default_leaves_the_link_clean_and_chinese_label():
    at = app(page=FRONTIER, query={"lang": "zh"})
    assert not at.exception
    assert not set(KEYS) & set(at.query_params)
    assert "前缀复用" in [e.label for e in at.expander]
    open_section(at, "sec_reuse")
    assert at.selectbox(key="pc_reuse").value == "none" and not at.exception


def test_a_greyed_out_value_is_kept():
    """Chat turns set, then a shared prefix chosen: the turns slider is greyed out, its value stays
    (in the session and the link) for when chat is chosen again."""
    at = app(page=FRONTIER, query={"pc_reuse": "chat", "pc_turns": "8"})
    open_section(at, "sec_reuse")
    assert at.slider(key="pc_turns").value == 8 and not at.slider(key="pc_turns").disabled
    at.selectbox(key="pc_reuse").set_value("shared").run()
    assert not at.exception and at.slider(key="pc_turns").disabled
    assert at.session_state["pc_turns"] == 8 and at.query_params.get("pc_turns") == "8"


def test_a_length_changed_on_the_prefix_cache_page_reaches_the_frontiers_closed_or_open_section():
    """The frontier's reuse inputs (a lazy section, widgets persisted in the session) took their own old
    value back after the prefix-cache page changed it, and wrote it into the link (ui.lazy_inputs.seed)."""
    from apptest_helpers import app, open_section

    at = open_section(app(page="pages/frontier.py"), "sec_reuse")
    at.selectbox(key="pc_reuse").select("shared").run()
    at.number_input(key="pc_prefix_len").set_value(1000).run()
    at.switch_page("pages/prefix_cache.py").run()
    assert at.number_input(key="pc_prefix_len").value == 1000  # carried over
    at.number_input(key="pc_prefix_len").set_value(1500).run()
    at.switch_page("pages/frontier.py").run()
    assert not at.exception
    assert at.number_input(key="pc_prefix_len").value == 1500 and at.query_params["pc_prefix_len"] == "1500"


def test_the_lru_panel_reads_a_whole_expected_count_without_a_decimal():
    """"Why about 10 of 10 prefixes stay cached", not "10.0 of 10"; a fractional expectation keeps its decimal."""
    from types import SimpleNamespace

    import numpy as np

    from ui.i18n import Translator
    from ui.prefixcache.explain import prefix_cache_panels

    def point(held: float):
        one = lambda x: np.array([x])  # noqa: E731
        return SimpleNamespace(hit_rate=one(0.5), item_blocks=one(16.0), items=one(10.0), cache_blocks=one(2000.0),
                               request_hit_probability=one(0.99), cached_tokens=one(256.0), input_len=one(512.0),
                               cached_items=one(held), ttft_s=one(0.1), ttft_off_s=one(0.2))
    titles = [next(p.title for p in prefix_cache_panels(point(h), 0, reuse=None, block_size=16, t=Translator("en"))
                   if p.key == "pc_lru") for h in (9.98, 7.34)]
    assert titles == ["Why about 10 of 10 prefixes stay cached", "Why about 7.3 of 10 prefixes stay cached"]
