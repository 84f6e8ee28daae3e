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


def test_problems_in_chinese():
    """Issue #19: the paste box's problems (its own and calc.spec.vllm_command's English ones) were
    English in Chinese; they are worded in the reader's language now, user parts kept literally."""
    at = open_section(app({"lang": "zh"}), "sec_paste")
    at.text_area(key="vllm_command_text").input(
        "vllm serve foo/bar -tp inf --max-num-seqs 0 --enable-chunked-prefill=maybe --block-size").run()
    at.button(key="vllm_command_apply").click().run()
    problems = at.code[-1].value.splitlines()
    assert problems == ["--enable-chunked-prefill：收到 'maybe'，允许 true 或 false",
                        "--block-size：缺少取值",
                        "model：'foo/bar' 不在目录中；请上传它的 config.json（侧边栏“自定义模型”），再粘贴一次命令",
                        "--tensor-parallel-size (-tp)：收到 'inf'，允许 {1, 2, 4, 8, 16, 32, 64}",
                        "--max-num-seqs：收到 0，允许 整数 1 – 65,536 （或留空）"], problems
    for text, want in (("echo 'hi", "command：引号未闭合（请检查引号）"),
                       ("ls -la", "command：应为 'vllm serve MODEL …'")):
        at.text_area(key="vllm_command_text").input(text).run()
        at.button(key="vllm_command_apply").click().run()
        assert at.code[-1].value.startswith(want)
    at.text_area(key="vllm_command_text").input("vllm serve meta-llama/Llama-3.1-8B -tp 2").run()
    at.button(key="vllm_command_apply").click().run()
    assert at.sidebar.success[0].value == "从命令中取得 2 项设置："


def test_problems_stay_english_in_english():
    at = open_section(app(), "sec_paste")
    at.text_area(key="vllm_command_text").input("vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 0 -tp 1").run()
    at.button(key="vllm_command_apply").click().run()
    assert at.code[-1].value == "--max-num-seqs: got 0, allowed integer 1 – 65,536 (or empty)"
    assert at.sidebar.success[0].value == "2 settings taken from the command:"
