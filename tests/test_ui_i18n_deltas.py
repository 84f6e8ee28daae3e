"""Metric deltas written from a template start with the number in every language.

Streamlit reads a delta's direction from the start of its text: "-105 ms vs no cache" gets a green
down arrow, but the Chinese "比无缓存 -105 ms" got a red up arrow for the same saving (issue #19's
look check, prefix-cache page)."""

import pytest

from ui.i18n import STRINGS

DELTA_KEYS = ("pc.metric.vs_off", "lt.metric.vs_slo")  # the templates pages pass as st.metric(delta=...)


@pytest.mark.parametrize("lang", sorted(STRINGS))
@pytest.mark.parametrize("key", DELTA_KEYS)
def test_delta_template_starts_with_the_number(lang, key):
    assert STRINGS[lang][key].startswith("{delta}"), STRINGS[lang][key]
