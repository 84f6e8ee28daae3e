"""ui.tables.markdown: small tables as Markdown, every cell escaped (no link, HTML, or extra column)."""

import re

from hypothesis import given, settings, strategies as st

from ui.tables import markdown


def test_cells_and_numbers():
    text = markdown([{"Scenario": "Your scenario", "Best": 35, "Cost": "$0.983"},
                     {"Scenario": "KV cache fp8", "Best": 12_345, "Cost": None}])
    assert text.splitlines() == [
        "| Scenario | Best | Cost |",
        "| --- | --- | --- |",
        "| Your scenario | 35 | \\$0.983 |",  # "$" escaped: no math span
        "| KV cache fp8 | 12,345 |   |",  # 12345 with a thousands separator; None: an empty cell
    ]
    assert markdown([]) == ""


def test_hostile_text_stays_text():
    text = markdown([{"a": "<script>x</script>", "b": "[x](javascript:alert(1)) | y"}])
    row = text.splitlines()[2]
    assert not re.search(r"(?<!\\)[<\[\]()]", row)  # every <, [, ], ( backslash-escaped: no HTML, no link
    assert "\\|" in row


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=4))
def test_every_row_has_the_header_s_columns(cells):
    """Whatever the text, a row has exactly as many unescaped | separators as the header."""
    text = markdown([{f"c{i}": c for i, c in enumerate(cells)}])
    counts = [len(re.findall(r"(?<!\\)\|", line)) for line in text.splitlines()]
    assert len(set(counts)) == 1 and len(text.splitlines()) == 3
