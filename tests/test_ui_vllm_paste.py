"""AppTest: a pasted vllm serve command sets the sidebar; ignored flags and bad values are shown."""

import pytest

from apptest_helpers import app, commands, open_section

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def paste(at, text: str):
    """Type ``text`` in the paste box and press Apply."""
    at.text_area(key="vllm_command_text").set_value(text).run()
    return at.button(key="vllm_command_apply").click().run()


def test_paste_sets_the_sidebar():
    at = paste(open_section(app(page="pages/frontier.py"), "sec_paste"),
               "vllm serve meta-llama/Llama-3.1-8B \\\n --tensor-parallel-size 2 --kv-cache-dtype fp8_e4m3 "
               "--no-enable-chunked-prefill --enforce-eager --max-num-seqs many")
    assert not at.exception
    assert at.selectbox(key="model").value == "meta-llama/Llama-3.1-8B"
    # TP and the precisions are in closed lazy sections: kept in the session, shown once opened
    assert at.session_state["tp"] == 2 and at.session_state["kv_cache_dtype"] == "fp8"
    assert at.toggle(key="chunked_prefill").value is False
    at = open_section(at, "sec_parallel", "sec_precision")
    assert at.selectbox(key="tp").value == 2 and at.selectbox(key="kv_cache_dtype").value == "fp8"
    codes = [c.value for c in at.sidebar.code]
    assert any("--enforce-eager" in c for c in codes)
    assert any(c.startswith("--max-num-seqs: got 'many'") for c in codes)
    assert "vllm serve meta-llama/Llama-3.1-8B" in commands(at.main)[0]  # the page's command follows


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


def test_instruct_checkpoint_resolves_to_the_catalog_architecture():
    """Issue #19: meta-llama/Llama-3.1-8B-Instruct (and -Chat, -it, -Instruct-2507) is the catalog's
    architecture; the box says which one is calculated."""
    at = open_section(app(page="pages/frontier.py"), "sec_paste")
    at.text_area(key="vllm_command_text").set_value("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2").run()
    at.button(key="vllm_command_apply").click().run()
    assert not at.exception
    assert at.selectbox(key="model").value == "meta-llama/Llama-3.1-8B"
    assert any("meta-llama/Llama-3.1-8B-Instruct has the architecture of the catalog's meta-llama/Llama-3.1-8B"
               in c.value for c in at.sidebar.caption)


def test_refused_model_applies_nothing():
    """Issue #19: the flags of a model the catalog lacks used to land on whatever model was selected."""
    at = open_section(app(page="pages/frontier.py"), "sec_paste")
    at.text_area(key="vllm_command_text").set_value("vllm serve someone/unknown -tp 4 --kv-cache-dtype fp8").run()
    at.button(key="vllm_command_apply").click().run()
    assert not at.exception
    assert "tp" not in at.session_state and "kv_cache_dtype" not in at.session_state  # nothing set: the defaults
    assert at.sidebar.warning[0].value.startswith("Nothing was applied")


def test_second_paste_resets_the_flags_it_leaves_out():
    """Issue #19: a second paste inherited the first one's flags; vllm serve would use its defaults."""
    at = open_section(app(page="pages/frontier.py"), "sec_paste")
    at.text_area(key="vllm_command_text").set_value(
        "vllm serve meta-llama/Llama-3.1-8B -tp 2 --kv-cache-dtype fp8 --max-num-seqs 64 --no-enable-chunked-prefill").run()
    at.button(key="vllm_command_apply").click().run()
    assert at.session_state["tp"] == 2 and at.toggle(key="chunked_prefill").value is False
    at.text_area(key="vllm_command_text").set_value("vllm serve Qwen/Qwen3-8B --max-num-seqs 128").run()
    at.button(key="vllm_command_apply").click().run()
    assert not at.exception
    assert at.selectbox(key="model").value == "Qwen/Qwen3-8B"
    assert at.session_state["tp"] == 1 and at.session_state["kv_cache_dtype"] == "auto"
    assert at.toggle(key="chunked_prefill").value is True
    reset = [c.value for c in at.sidebar.caption if c.value.startswith("Left out of the command")]
    assert reset and "--tensor-parallel-size" in reset[0] and "--kv-cache-dtype" in reset[0]


@pytest.mark.parametrize("lang, want", [
    ("en", "context (input + output tokens): got 2,048, allowed 16 – 512: context length 2,048 > --max-model-len 512; shorten the input"),
    ("zh", "context（输入 + 输出 token）：收到 2,048，允许 16 – 512：上下文长度 2,048 > --max-model-len 512；请缩短输入或输出"),
])
def test_max_model_len_below_the_context_is_said_in_the_users_terms(lang, want):
    """Issue #19: the page said 'ServingConfig: input_len + output_len (2048) must be <= max_model_len (512)'."""
    at = open_section(app({"lang": lang}), "sec_paste")
    at.text_area(key="vllm_command_text").set_value("vllm serve meta-llama/Llama-3.1-8B --max-model-len 512").run()
    at.button(key="vllm_command_apply").click().run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert want in errors and "ServingConfig" not in errors and "input_len" not in errors


@pytest.mark.parametrize("name, arch", [("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"),
                                        ("Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen/Qwen3-235B-A22B"),
                                        ("google/gemma-2-9b-it", "google/gemma-2-9b")])
def test_a_link_with_a_tuned_checkpoint_opens_its_architecture(name, arch):
    at = app({"model": name})
    assert not at.exception and not at.warning
    assert at.selectbox(key="model").value == arch


def test_paste_sets_the_serving_features():
    """Issue #21: --speculative-config and --no-enable-prefix-caching were listed as ignored; they set
    the frontier's speculative switch, method and k, and the prefix cache, as the CLI reads them."""
    at = paste(open_section(app(page="pages/frontier.py"), "sec_paste"),
               "vllm serve meta-llama/Llama-3.1-8B --no-enable-prefix-caching "
               "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 5, \"prompt_lookup_max\": 4}'")
    assert not at.exception
    assert at.toggle(key="spec_on").value is True
    assert at.selectbox(key="spec_method").value == "ngram" and at.slider(key="spec_k").value == 5
    assert at.session_state["pc_caching"] is False
    assert not [c.value for c in at.sidebar.code if "--speculative-config" in c.value]  # not ignored
    assert "--speculative-config" in commands(at.main)[0] and "--no-enable-prefix-caching" in commands(at.main)[0]
    # a config the pages cannot take is named and keeps the switch as it was
    at = paste(at, "vllm serve meta-llama/Llama-3.1-8B --speculative-config "
                   "'{\"method\": \"medusa\", \"num_speculative_tokens\": 2}'")
    assert not at.exception
    assert at.code[-1].value == ("--speculative-config (method): got 'medusa', allowed one of ngram, eagle, eagle3, "
                                 "mtp, draft_model")
    assert at.toggle(key="spec_on").value is True and at.session_state["pc_caching"] is True
    # a command without the flag drafts nothing, and says so
    at = paste(at, "vllm serve meta-llama/Llama-3.1-8B")
    assert at.toggle(key="spec_on").value is False
    reset = [c.value for c in at.sidebar.caption if c.value.startswith("Left out of the command")]
    assert reset and "--speculative-config" in reset[0]
