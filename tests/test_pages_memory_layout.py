"""AppTest of the memory page with a multi-GPU layout (PP, DP attention + EP) set through the URL."""

import pytest

from apptest_helpers import app, metrics, open_section, plain

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DSV3 = {"model": "deepseek-ai/DeepSeek-V3", "gpu": "h200", "context": "8192", "concurrency": "16"}


def test_dp_attention_with_ep_shows_per_gpu_memory_and_all_ranks():
    at = app({**DSV3, "dp": "8", "ep": "true"})
    assert not at.exception and not at.error
    m = metrics(at)
    # 17.6 GB of attention, dense MLPs, shared experts, embedding and head + 654 GB of routed experts / 8
    # = 100.8 GB = 93.9 GiB per GPU (calc.sizing.layout.rank_numbers) + the whole attention's BF16
    # W_UK/W_UV copies 61 x 128 x 512 x 256 x 2 B = 1.91 GiB (calc.sizing.memory.mla_absorbed_weight_bytes)
    assert m["Weights per GPU"] == "95.80 GiB"
    # MLA latent on every GPU: 61 x (512 + 64) x 2 B = 70,272 B = 68.6 KiB per token
    assert m["KV cache per token"] == "68.62 KiB"
    info = " ".join(plain(at.info))
    assert "TP 1 × PP 1 × DP 8 = 8 GPUs on 1 node(s), experts over EP 8 ranks" in info
    assert "across the 8 ranks" in info


def test_impossible_layout_is_refused_with_a_clear_message():
    at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "ep": "true"})
    assert not at.exception
    assert any("has no routed experts" in e for e in plain(at.error))


def test_pipeline_stages_halve_the_weights_per_gpu():
    at = app({"model": "meta-llama/Llama-3.1-405B", "gpu": "h100-sxm", "tp": "8", "pp": "2", "context": "8192"})
    assert not at.exception and not at.error
    # 405.9 B params x 2 B = 811.8 GB / 16 GPUs = 50.74 GB = 47.25 GiB (HF: 810 GB for 405B in BF16)
    assert metrics(at)["Weights per GPU"] == "47.25 GiB"


def test_sidebar_layout_section_has_the_four_controls():
    at = open_section(app(), "sec_parallel")
    keys = {w.key for w in (*at.sidebar.selectbox, *at.sidebar.number_input, *at.sidebar.toggle)}
    assert {"pp", "dp", "ep", "nodes"} <= keys


def test_why_panels_render_with_a_layout():
    from apptest_helpers import open_why

    at = open_why(app({**DSV3, "dp": "8", "ep": "true"}), "weights", "kv_token", "pool", "activations", "overhead")
    assert not at.exception and not at.error
