"""Upload callbacks of ui.state (issue #19). ui.state.release_uploads frees uploaded bytes after
every run, so on the next run an uploader's value is Streamlit's DeletedFile and its on_change
fires again: the callbacks must ignore it and keep what the upload gave (custom model, scenario,
trace). AppTest registers the file again before every run, so the release is shown here with the
session state as a dict, and end to end in tests/test_e2e_upload.py."""

import json

import pytest
import streamlit as st
from streamlit.proto.Common_pb2 import FileURLs
from streamlit.runtime.uploaded_file_manager import DeletedFile, UploadedFile, UploadedFileRec

import ui.state as S
from apptest_helpers import app, open_section, texts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TINY = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
        "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "max_position_embeddings": 8192}


def uploaded(name: str, data: bytes) -> UploadedFile:
    return UploadedFile(UploadedFileRec(file_id="f1", name=name, type="application/json", data=data), FileURLs())


@pytest.fixture
def session(monkeypatch):
    """st.session_state as a plain dict (the callbacks use get / [] / setdefault / pop)."""
    state: dict = {}
    monkeypatch.setattr(st, "session_state", state)
    return state


def test_config_upload_then_its_release(session):
    session.update({c.key: c.default for c in S.C.SHARED})
    session["config_upload"] = uploaded("tiny.json", json.dumps(TINY).encode())
    S._on_config_upload()
    arch = session[S._CUSTOM_ARCH]
    assert arch.name == "tiny" and session["model"] == "custom"
    assert [level for level, _ in session.pop(S._MESSAGES)] == ["success"]
    for released in (DeletedFile("f1"), None):  # the next run; the user removing the file
        session["config_upload"] = released
        S._on_config_upload()  # was: AttributeError: 'DeletedFile' object has no attribute 'getvalue'
        assert session[S._CUSTOM_ARCH] is arch and session["model"] == "custom"
        assert S._MESSAGES not in session


def test_scenario_upload_then_its_release(session):
    doc = json.loads(S.scenario_json(S.default_scenario()))
    doc["controls"] |= {"concurrency": 99}
    session["scenario_upload"] = uploaded("s.json", json.dumps(doc).encode())
    S._on_scenario_upload()
    assert session["concurrency"] == 99
    assert [level for level, _ in session.pop(S._MESSAGES)] == ["success"]
    session["concurrency"] = 40  # changed after loading: a stray second load would undo it
    for released in (DeletedFile("f1"), None):
        session["scenario_upload"] = released
        S._on_scenario_upload()
        assert session["concurrency"] == 40 and S._MESSAGES not in session


def test_kept_upload_is_bounded_survives_the_release_and_is_forgotten_on_removal(session):
    session["lt_trace"] = uploaded("t.csv", b"0123456789")
    S.keep_upload("lt_trace", 4)
    assert S.kept_upload("lt_trace") == ("t.csv", b"01234")  # max_bytes + 1: the reader still sees "too big"
    session["lt_trace"] = DeletedFile("f1")
    S.keep_upload("lt_trace", 4)
    assert S.kept_upload("lt_trace") == ("t.csv", b"01234")
    session["lt_trace"] = None  # the user removed the file
    S.keep_upload("lt_trace", 4)
    assert S.kept_upload("lt_trace") is None
    session["lt_trace"] = uploaded("u.csv", b"ab")
    S.keep_upload("lt_trace", 4)
    S.forget_upload("lt_trace")  # the page's "use the workload above" button
    assert S.kept_upload("lt_trace") is None


def test_load_test_page_uses_an_uploaded_trace():
    at = app({"lt_requests": "100", "lt_sweep": "false"}, page="pages/load_test.py")
    assert not at.file_uploader  # the uploader's section is lazy: drawn once opened
    at = open_section(at, "sec_lt_trace")
    trace = "arrival_s,input_len,output_len\n" + "".join(f"{i * 0.5},{200 + i},{20 + i}\n" for i in range(40))
    at.file_uploader(key="lt_trace").set_value(("trace.csv", trace.encode(), "text/csv")).run()
    assert not at.exception
    assert any(c.startswith("Trace trace.csv: 40 requests") for c in texts(at.caption))
    at.number_input(key="lt_seed").set_value(7).run()
    assert any(c.startswith("Trace trace.csv: 40 requests") for c in texts(at.caption))
    at.session_state["_open_sec_lt_trace"] = False  # the section closed: the kept trace stays in use
    at.run()
    assert not at.file_uploader and any(c.startswith("Trace trace.csv: 40 requests") for c in texts(at.caption))
