"""AppTest: the course §3.5 case study page (issue #19, the teacher's path): A and B side by side, the
cards at the case's own clients agree with the table, the chart holds both setups and their operating
points, the explanations follow the computed directions, both languages."""

import pytest

from apptest_helpers import app, metrics

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _num(text: str) -> float:
    return float(text.split(" ")[0].replace(",", ""))


def test_cards_chart_and_table_agree():
    at = app(page="pages/case_study.py")
    assert not at.exception
    m = metrics(at)
    table = at.table[-1].value
    calc = dict(zip(table.iloc[:, 0], table.iloc[:, 2]))  # "200 → 266 ms (+33 %)"
    for metric in ("TTFT", "Throughput"):
        before, after = (_num(x) for x in calc[metric].split(" (")[0].split(" → "))
        assert _num(m[f"A · {metric}"]) == pytest.approx(before, abs=1)
        assert _num(m[f"B · {metric}"]) == pytest.approx(after, abs=1)
    spec = at.get("plotly_chart")[0].proto.spec
    assert "A: before (16 clients" in spec and "B: after (32 clients" in spec
    assert "A at 16 clients" in spec and "B at 32 clients" in spec  # the operating points


def test_ttft_explanation_follows_the_computed_direction():
    """The frontier's old text argued chunked prefill raises TTFT next to a row where it fell: the
    explanation is now chosen from the numbers."""
    at = app(page="pages/case_study.py")
    row = at.table[-1].value.iloc[0]
    before, after = (_num(x) for x in row.iloc[2].split(" (")[0].split(" → "))
    assert ("tends to raise TTFT" in row.iloc[3]) == (after >= before)
    at = app({"eff_step_overhead_ms": "40"}, page="pages/case_study.py")  # a large per-step cost: whole prompts wait longer
    row = at.table[-1].value.iloc[0]
    before, after = (_num(x) for x in row.iloc[2].split(" (")[0].split(" → "))
    assert ("falls too" in row.iloc[3]) == (after < before)


def test_chinese_and_the_frontier_links_here():
    at = app({"lang": "zh"}, page="pages/case_study.py")
    assert not at.exception and at.title[0].value.startswith("课程 §3.5")
    fr = app(page="pages/frontier.py")
    assert any(getattr(p.proto, "page", "").endswith("case_study.py") or "case_study" in str(p.proto)
               for p in fr.get("page_link"))
