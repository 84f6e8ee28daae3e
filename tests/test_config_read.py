"""ui.config_read: Streamlit's options read without its lock give Streamlit's values, follow a re-parse."""

import threading

import pytest
from streamlit import config

from ui import config_read


def test_every_option_reads_as_streamlits_own():
    assert config_read.install() and config_read.install()  # idempotent
    original = config.get_option.__wrapped__
    for key in config.get_config_options():
        assert config.get_option(key) == original(key), key
    with pytest.raises(RuntimeError, match="not defined"):
        config.get_option("no.suchOption")


def test_a_reparsed_configuration_is_read_through_the_lock_and_then_followed(monkeypatch):
    config_read.install()
    key = "global.minCachedMessageSize"
    config.get_option(key)  # the current dict, seen under the lock
    new = {k: v for k, v in config.get_config_options().items()}
    option = type("Option", (), {"value": 123})()
    new[key] = option
    monkeypatch.setattr(config, "_config_options", new)  # what a re-parse binds
    assert config.get_option(key) == 123
    option.value = 456  # st.set_option: a value changed in place
    assert config.get_option(key) == 456


def test_reads_from_many_threads_at_once():
    config_read.install()
    keys = list(config.get_config_options())[:50]
    expected = {k: config.get_option(k) for k in keys}
    errors = []

    def read():
        for _ in range(200):
            for k in keys:
                if config.get_option(k) != expected[k]:
                    errors.append(k)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_not_installed_over_apptests_stand_in(monkeypatch):
    """AppTest's run swaps ``get_option`` for a stand-in with overrides (``global.appTest`` True, which
    makes widgets save their format functions for the test). Wrapping that stand-in read past its
    overrides: a page test run alone, the first to install, failed with a KeyError on the language
    radio's format function (it passed in the full suite only because an earlier test installed first)."""
    from streamlit.testing.v1.util import patch_config_options

    monkeypatch.setattr(config_read, "_INSTALLED", False)
    with patch_config_options({"global.appTest": True}):
        assert not config_read.install()
        assert config.get_option("global.appTest") is True
