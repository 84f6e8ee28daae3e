"""The user's own model in the link (ui.config_link): a reload or a shared link keeps it; a bad or
oversized ``model_config`` is named and never shows another model silently."""

import base64
import json
import zlib

import pytest
from hypothesis import given, settings, strategies as st_

from apptest_helpers import app, metrics, open_section, plain, texts
from calc.spec.hf_config import MAX_CONFIG_BYTES
from calc.spec.untrusted import InputError
from ui import config_link

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
# head_dim 2048/32 = 64: KV per token 2·16·8·64·2 B = 32,768 B = 32 KiB
TINY = {"_name_or_path": "tiny-link-test", "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
        "max_position_embeddings": 8192}


def test_a_config_round_trips_and_is_short():
    text = config_link.encode(TINY)
    assert config_link.decode(text) == TINY
    assert len(text) < 400  # ~300 bytes of JSON, compressed
    assert set(text) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")  # URL-safe, no padding


@given(st_.dictionaries(st_.text(max_size=20), st_.integers(-2**53, 2**53) | st_.text(max_size=30), max_size=20))
@settings(max_examples=50, deadline=None)
def test_any_small_dict_round_trips(cfg):
    text = config_link.encode(cfg)
    assert text is None or config_link.decode(text) == cfg


def test_a_decompression_bomb_is_refused_without_inflating_it():
    bomb = base64.urlsafe_b64encode(zlib.compress(b"{" + b" " * (5 * MAX_CONFIG_BYTES) + b"}", 9)).decode()
    assert len(bomb) < config_link.MAX_LINK_CHARS  # 5 MB of spaces in a few kB: inflated only up to the limit
    with pytest.raises(InputError, match="model_config is larger than 1,000,000 bytes"):
        config_link.decode(bomb)


@pytest.mark.parametrize("text", ["", "!!!", "A" * 9000, base64.urlsafe_b64encode(zlib.compress(b"[1]")).decode(),
                                  base64.urlsafe_b64encode(zlib.compress(b"{bad"))[:-4].decode()])
def test_garbage_is_an_input_error_naming_the_field(text):
    with pytest.raises(InputError, match="model_config"):
        config_link.decode(text)


def test_too_large_a_config_is_not_written():
    big = {f"k{i}": "x" * 40 + str(i * 7919 % 1000003) for i in range(800)}  # ~40 kB, random-ish
    assert config_link.encode(big) is None or len(config_link.encode(big)) <= config_link.MAX_LINK_CHARS


def _with_custom():
    at = open_section(app(), "sec_config")
    at.text_area(key="config_text").set_value(json.dumps(TINY)).run()
    at.button(key="config_apply").click().run()
    assert at.selectbox(key="model").value == "custom"
    return at


def test_a_reload_keeps_the_users_own_model():
    at = _with_custom()
    link = dict(at.query_params)
    assert config_link.decode(link["model_config"]) == TINY and link["model"] == "custom"
    again = app(link)  # a reload: a fresh session with the same address
    assert not again.exception and not again.warning
    assert again.selectbox(key="model").value == "custom"
    assert metrics(again)["KV cache per token"] == "32 KiB"
    assert any(c.startswith("tiny-link-test: ") for c in plain(again.sidebar.caption))
    # the share box's link carries it too
    share = open_section(at, "sec_share").text_input(key="share_link").value
    assert "model_config=" + link["model_config"] in share


def test_choosing_a_catalog_model_drops_the_config_from_the_link():
    at = _with_custom()
    at.selectbox(key="model").set_value("meta-llama/Llama-3.1-8B").run()
    assert "model_config" not in dict(at.query_params)


@pytest.mark.parametrize("lang, said", [("en", "URL parameter model_config (your own model) is not used"),
                                        ("zh", "网址参数 model_config（自定义模型）未采用")])
def test_a_bad_config_in_a_link_is_named_and_the_default_model_said(lang, said):
    text = config_link.encode(TINY | {"hidden_size": "big"})
    at = app({"model": "custom", "model_config": text, "lang": lang})
    assert not at.exception
    shown = plain(at.warning)
    assert any(w.startswith(said) and "hidden_size" in w for w in shown)
    assert at.selectbox(key="model").value == "meta-llama/Llama-2-7b-hf"  # and the link said so
    assert any("model=custom" in w for w in shown)
    assert "model_config" not in dict(at.query_params)
