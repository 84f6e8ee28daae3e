"""Fuzz tests of every untrusted-input path (bounded for CI; bench/fuzz.py runs the long version).

Generators and properties live in tests/fuzz_input.py. Budget on 2 shared cores: the pure
paths run a few hundred examples in seconds; the CLI a few dozen; the pages (AppTest, about a
second per run here) six hostile queries per page, each carrying several hostile keys.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzz_input as F
from ui.shell import PAGES

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
FAST = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
MEDIUM = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
PAGE = settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))


@FAST
@given(F.query_params())
def test_url_parameters_are_sanitized(params):
    F.check_sanitize(params)


@FAST
@given(st.sampled_from(F.all_controls()), st.one_of(F.hostile_text, F.json_values))
def test_control_parse_accepts_or_names_the_field(ctl, raw):
    try:
        ctl.parse(raw)
    except F.C.ControlValueError as exc:
        assert str(exc).startswith(ctl.key) and len(str(exc)) < F.MAX_MESSAGE


@MEDIUM
@given(F.scenario_texts())
def test_scenario_files(text):
    F.check_scenario(text)


@MEDIUM
@given(F.config_texts())
def test_config_json(text):
    F.check_config(text)


@FAST
@given(F.vllm_commands())
def test_vllm_command_paste_box(text):
    F.check_vllm_command(text)


@FAST
@given(F.replica_searches())
def test_planner_replica_search_is_bounded(case):
    F.check_replica_search(case)


@FAST
@given(F.trace_texts())
def test_load_test_traces(text):
    F.check_trace(text)


@SLOW
@given(F.cli_argvs())
def test_cli_argument_vectors(argv):
    F.check_cli(argv)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(F.batch_lines(), min_size=1, max_size=8))
def test_cli_batch_lines(lines):
    F.check_batch(lines)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(F.simulate_batch_lines(), min_size=1, max_size=6))
def test_cli_simulate_batch_lines(lines):
    F.check_batch(lines, "simulate")


@pytest.mark.parametrize("page", [p.path for p in PAGES])
@PAGE
@given(query=F.query_params(max_keys=8))
def test_every_page_survives_hostile_query_parameters(page, query):
    F.check_page(query, None if page == "pages/memory.py" else page)


@pytest.mark.parametrize("page", ["pages/memory.py", "pages/frontier.py", "pages/roofline.py"])
@PAGE
@given(query=st.one_of(F.valid_query_params(), F.query_params(max_keys=6)))
def test_a_browsers_first_view_of_any_link_is_the_whole_pages_first_chart(page, query):
    # ui.first_view: the first view's chart is the whole page's, and the page after the press a plain session's
    F.check_first_view(query, page)
