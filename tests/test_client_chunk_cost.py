"""bench/client_chunk_cost.py: the SSE framing and parsing it measures, and (only where aiohttp is
installed: it is not a project dependency) one tiny end-to-end run. No timing is asserted."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import client_chunk_cost as ccc  # noqa: E402  (imports without aiohttp)


def test_token_chunk_is_one_http_chunk_of_one_sse_message():
    """``<hex len>\\r\\n data: {...}\\n\\n \\r\\n``: the length counts the SSE message bytes only."""
    raw = ccc.token_chunk("chatcmpl-1", 7, 2)
    size, rest = raw.split(b"\r\n", 1)
    body = rest[:-2]
    assert rest.endswith(b"\r\n") and int(size, 16) == len(body)
    assert body.startswith(b"data: ") and body.endswith(b"\n\n")
    msg = json.loads(body[len(b"data: "):])
    assert msg["object"] == "chat.completion.chunk"
    assert msg["choices"][0]["delta"]["content"] == ccc.TOKEN_TEXT * 2  # two merged tokens, one delta
    assert "system_fingerprint" not in msg  # vLLM's chunks carry none unless --stamp


def test_sse_buffer_splits_joined_messages_and_waits_for_a_split_one():
    """Two messages in one read come out as two; a message cut mid-JSON waits for its rest; a stripped
    read (no trailing blank line) still counts as whole once its JSON parses, as in vLLM's handler."""
    buf = ccc.SSEBuffer()
    assert buf.add(b'data: {"a":1}\n\ndata: {"b":2}\n\n') == ['data: {"a":1}', 'data: {"b":2}']
    assert buf.add(b'data: {"c":') == []
    assert buf.add(b"3}") == ['data: {"c":3}']
    assert buf.add(b"data: [DONE]") == ["data: [DONE]"]


def test_without_aiohttp_the_script_says_so_and_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(ccc, "aiohttp", None)
    assert ccc.main(["--streams", "2", "--tokens", "3"]) == 2
    assert "aiohttp is not installed" in capsys.readouterr().out


def test_out_of_range_arguments_are_refused(capsys):
    if ccc.aiohttp is None:
        pytest.skip("aiohttp is not installed (a measurement tool's dependency, not the project's)")
    assert ccc.main(["--streams", "0"]) == 2
    assert "--streams 1-5000" in capsys.readouterr().out


def test_a_tiny_run_receives_every_chunk():
    """3 streams × 4 tokens: 4 token chunks + the finish chunk each = 15 chunks, 12 tokens by usage."""
    pytest.importorskip("aiohttp")
    res = ccc.measure(3, 4, 0.0, ccc.chat_stream_request, stamp=True)
    assert res["succeeded"] == 3 and res["chunks"] == 15 and res["tokens"] == 12
    assert res["cpu_us_per_chunk"] > 0 and res["lag_mean_s"] is not None


def test_data_file_names_its_host_and_source():
    d = json.loads((ROOT / "bench" / "data" / "client_chunk_cost.json").read_text())
    assert "EPYC" in d["host"]["cpu"] and "differ" in d["note_hosts_differ"]
    assert d["source"] and all(r["source"] for r in d["benchmark_host_bounds"]["rows"])
    # c <= 1 / peak chunks per second: 1e6 / 8890 = 112.5 us (t3-gs-q14h-sharegpt)
    for r in d["benchmark_host_bounds"]["rows"]:
        assert r["c_max_us"] == pytest.approx(1e6 / r["peak_chunks_per_s"], abs=0.6)
