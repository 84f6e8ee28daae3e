"""AppTest: a pasted vllm serve command sets the sidebar; ignored flags and bad values are shown."""

import pytest

from apptest_helpers import app, open_section

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_paste_sets_the_sidebar():
    at = open_section(app(page="pages/frontier.py"), "sec_paste")
    at.text_area(key="vllm_command_text").set_value(
        "vllm serve meta-llama/Llama-3.1-8B \\\n --tensor-parallel-size 2 --kv-cache-dtype fp8_e4m3 "
        "--no-enable-chunked-prefill --enforce-eager --max-num-seqs many").run()
    at.button(key="vllm_command_apply").click().run()
    assert not at.exception
    assert at.selectbox(key="model").value == "meta-llama/Llama-3.1-8B"
    assert at.selectbox(key="tp").value == 2 and at.selectbox(key="kv_cache_dtype").value == "fp8"
    assert at.toggle(key="chunked_prefill").value is False
    codes = [c.value for c in at.sidebar.code]
    assert any("--enforce-eager" in c for c in codes)
    assert any(c.startswith("--max-num-seqs: got 'many'") for c in codes)
    assert "vllm serve meta-llama/Llama-3.1-8B" in at.main.code[0].value  # the page's command follows
