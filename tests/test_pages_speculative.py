"""AppTest of the speculative-decoding page."""

import pytest

from apptest_helpers import app, commands, metrics, plotly_specs

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PAGE = "pages/speculative.py"


def test_defaults_render():
    at = app(page=PAGE)
    assert not at.exception
    m = metrics(at)
    # EAGLE-3, k = 3, a = 0.7: τ = 1 + 0.7 + 0.49 + 0.343 = 2.53
    assert m["Tokens per step τ"] == "2.53"
    assert float(m["Speed-up at batch 1"].rstrip("×")) >= 1.5
    specs = plotly_specs(at)
    assert len(specs) == 2 and specs[0]["layout"]["xaxis"]["type"] == "log"


def test_url_state_and_bad_value():
    at = app(page=PAGE, query={"spec_method": "ngram", "spec_k": "99"})
    assert not at.exception
    assert at.warning  # spec_k out of range: named, default used
    assert at.selectbox(key="spec_method").value == "ngram"


def test_chinese():
    at = app(page=PAGE, query={"lang": "zh"})
    assert not at.exception
    assert "每步 token 数 τ" in metrics(at)


def test_frontier_takes_the_speculative_inputs():
    # the frontier page's one call (ui.speculative.inputs): off by default, on from the link
    at = app({"spec_on": "true", "spec_method": "ngram", "spec_k": "3", "spec_acceptance": "0.7"}, page="pages/frontier.py")
    assert not at.exception
    assert at.toggle(key="spec_on").value is True and at.selectbox(key="spec_method").value == "ngram"
    off = app(page="pages/frontier.py")
    assert off.toggle(key="spec_on").value is False
    assert "--speculative-config" in commands(at)[0] and '"method": "ngram"' in commands(at)[0]
    assert "--speculative-config" not in commands(off)[0]
    # at the same (sidebar) concurrency speculation lowers TPOT: the "TPOT there" cards differ
    assert metrics(at)["TPOT there"] != metrics(off)["TPOT there"]


def test_load_test_takes_the_speculative_inputs():
    small = {"lt_requests": "100", "lt_sweep": "false"}
    at = app({**small, "spec_on": "true", "spec_method": "eagle3", "spec_k": "3", "spec_acceptance": "0.7"},
             page="pages/load_test.py")
    assert not at.exception and not at.error
    assert at.toggle(key="spec_on").value is True
    off = app(small, page="pages/load_test.py")
    tpot = [k for k in metrics(at) if "TPOT" in k]
    assert tpot and any(metrics(at)[k] != metrics(off)[k] for k in tpot)  # the simulated TPOT moves


def test_load_test_command_runs():
    # the page's command for one's own machine parses (the per-position acceptance < 1)
    from calc.spec.speculative import parse_speculative_config
    from ui.loadtest.runs import Load, cli_command
    import shlex
    from calc.spec.catalog import get_gpu, get_model
    from calc.spec.inputs import ServingConfig
    sp = parse_speculative_config({"method": "eagle", "num_speculative_tokens": 7})  # defaults end 0.02, 0.02
    load = Load(arrival="closed", rate_per_s=1.0, cv=1.0, concurrency=4, num_requests=10, lengths="fixed",
                input_len=100, output_len=50, spread=0.0, seed=0, speculative=sp)
    cmd = cli_command(get_model("meta-llama/Llama-3.1-8B"), get_gpu("h100-sxm"), ServingConfig(), load)
    raw = shlex.split(cmd)[shlex.split(cmd).index("--speculative-config") + 1]
    back = parse_speculative_config(raw)
    assert back.method == "eagle" and abs(sum(back.accepted_at_position) - sum(sp.accepted_at_position)) < 1e-3


def test_the_sweep_says_where_the_kv_pool_is_full():
    # Llama-2-7B (MHA, 32 layers × 32 KV heads × 128 × 2 × 2 B = 0.5 MiB a token) on one A100 80 GB at the default
    # 2,048-token context: 1 GiB a request, so fewer than 80 fit; the card's range stops there, not at 1,024,
    # and a dotted line marks it on the chart
    at = app(page=PAGE)
    assert not at.exception
    shown = metrics(at)["No longer pays from batch"]
    if shown.startswith("none up to"):
        n = int(shown.split()[-1].replace(",", ""))
        assert 1 <= n < 80
    # the dotted wall is a trace at x = n on both charts (ui.speculative.figures), inside the batch axis
    for spec in plotly_specs(at):
        walls = [tr for tr in spec["data"] if tr.get("line", {}).get("dash") == "dot"]
        assert walls and 1 <= walls[0]["x"][0] < 80


def test_text_says_what_the_chart_shows():
    # issue 19: the intro claimed the gain "reverses" at large batch while, for Llama-2-7B (MHA) at
    # 2k context, the chart stays ~1.8x up to batch 1,024: reading the KV cache dominates both paths.
    import re

    at = app(page=PAGE)
    text = " ".join(c.value for c in at.caption)
    assert "reverses" not in " ".join(m.value for m in at.markdown) + text
    said = next(c.value for c in at.caption if c.value.startswith("Here the speed-up"))
    lo, hi = (float(v) for v in re.search(r"stays at ([\d.]+)×–([\d.]+)×", said).groups())
    assert 1.5 < lo < hi and "never falls below 1 (up to 1,024)" in said and "reading the" in said
    assert metrics(at)["No longer pays from batch"].startswith("none up to")


@pytest.mark.parametrize("lang, title, column", [("en", "How close to real servers", "Predicted"),
                                                 ("zh", "离真实服务器有多近", "预测")])
def test_published_runs_panel_lists_the_checks(lang, title, column):
    """The page says how far the model has been from published runs (calc/data/speculative_checks.json), in the
    reader's language, drawn only once opened."""
    from apptest_helpers import open_checks  # noqa: PLC0415

    table, caption = open_checks(PAGE, lang, "sd_checks", title, column)
    assert len(table) == 13
    assert "7.2\u00a0%" in caption


def test_published_runs_table_has_no_empty_confidence_column():
    """The speculative runs state no confidence: the shared table (ui.checks) leaves that column out."""
    from ui import checks  # noqa: PLC0415
    from ui.i18n import Translator  # noqa: PLC0415

    from calc.timing.speculative import published_checks  # noqa: PLC0415

    rows = checks.rows(published_checks(), Translator("en"))
    assert "Confidence" not in rows[0] and {"Run", "Measured", "Predicted", "Error", "Source"} <= set(rows[0])
    assert rows[0]["Error"].endswith("\u00a0%")
