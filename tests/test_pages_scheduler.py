"""AppTest of the scheduler page (chunked prefill vs whole prefills)."""

import pytest

from apptest_helpers import app, chart_titles, decode, plotly_specs, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PAGE = "pages/scheduler.py"


def _ms(text: str) -> float:
    return float(text.split()[0].replace(",", ""))


def policy_metrics(at) -> dict[str, dict[str, float]]:
    """{"chunked": {label: ms}, "whole": {...}}: the page shows the chunked row first."""
    values = [(m.label, _ms(m.value)) for m in at.metric]
    half = len(values) // 2
    return {"chunked": dict(values[:half]), "whole": dict(values[half:])}


def test_defaults_render_without_exception():
    at = app(page=PAGE)
    assert not at.exception
    assert not at.error and not at.warning
    m = policy_metrics(at)
    assert set(m["chunked"]) == {"Mean TTFT", "Worst TTFT", "Mean TPOT", "Worst token gap"}
    # whole prefills stall the decodes: the worst gap is at least one 2,048-token prefill step
    assert m["whole"]["Worst token gap"] > 3 * m["chunked"]["Worst token gap"]
    specs = plotly_specs(at)
    assert len(specs) == 2
    for spec in specs:
        lay = spec["layout"]
        assert "ms" in lay["xaxis"]["title"]["text"]
        bars = [tr for tr in spec["data"] if tr.get("orientation") == "h"]
        assert {tr["name"] for tr in bars} >= {"Prefill", "Decode"}
    budget = [tr for tr in specs[0]["data"] if tr.get("name", "").startswith("Token budget")]
    assert decode(budget[0]["y"]) == [512, 512]
    assert len(at.table) == 1 and len(at.table[0].value) == 6  # one row per request


def test_chunk_budget_trades_ttft_for_token_gaps():
    at = app(page=PAGE)
    before = policy_metrics(at)["chunked"]
    at.slider(key="sched_budget").set_value(128).run()
    assert not at.exception
    after = policy_metrics(at)["chunked"]
    # smaller chunks (Sarathi-Serve): a 2,048-token prompt needs 16+ steps, so first tokens come
    # later, but no step is long, so decodes flow more smoothly
    assert after["Worst TTFT"] > before["Worst TTFT"]
    assert after["Mean TTFT"] > before["Mean TTFT"]
    assert after["Worst token gap"] < before["Worst token gap"]
    assert "budget 128 tokens per step" in chart_titles(at)[0]


def test_max_num_seqs_one_serialises_the_requests():
    at = app(page=PAGE)
    before = policy_metrics(at)["chunked"]["Worst TTFT"]
    at.slider(key="sched_max_seqs").set_value(1).run()
    assert not at.exception
    after = policy_metrics(at)["chunked"]["Worst TTFT"]
    assert after > 3 * before  # each request waits for the previous one to finish
    waiting = [tr for tr in plotly_specs(at)[0]["data"] if tr.get("name", "").startswith("Waiting")]
    assert waiting


def test_prompt_longer_than_the_model_allows_says_so():
    at = app({"sched_long_prompt": "8192"}, page=PAGE)  # Llama-2-7B: max_model_len 4,096
    assert not at.exception
    assert any("exceeds max_model_len" in e for e in texts(at.error))
    assert plotly_specs(at) == []


def test_model_that_does_not_fit_shows_a_message_not_a_chart():
    at = app({"model": "meta-llama/Llama-3.1-405B", "gpu": "l4"}, page=PAGE)
    assert not at.exception
    assert any("does not fit" in e for e in texts(at.error))
    assert plotly_specs(at) == []


def test_chinese():
    at = app({"lang": "zh"}, page=PAGE)
    assert not at.exception
    assert texts(at.title)[0].startswith("调度器")
    assert "时间" in plotly_specs(at)[0]["layout"]["xaxis"]["title"]["text"]
