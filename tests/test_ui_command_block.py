"""ui.command_block: a command shown literally (escaped, never Markdown or HTML), read back whole."""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ui import command_block as CB

ROOT = Path(__file__).resolve().parents[1]


def test_command_is_escaped_and_read_back():
    hostile = "vllm serve a/b </code></pre><script>alert(1)</script> --x '<y>' && echo \"$HOME\" & **bold**"
    body = CB.block_html(hostile, "Copy", "Copied")
    assert "<script>alert" not in body and body.count("</code></pre>") == 1  # the text cannot close the block
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert CB.commands_in(body) == [hostile]  # what the copy button copies: the command, unchanged
    # the only script is the page's copy module, by URL (no inline code: the CSP's script-src 'self')
    assert body.count("<script") == 1 and f'<script type="module" src="{CB.SCRIPT_URL}"></script>' in body


def test_labels_are_escaped():
    body = CB.block_html("x", 'Co"py<', "Cop&ied")
    assert 'data-label="Co&quot;py&lt;"' in body and 'data-done="Cop&amp;ied"' in body and ">Co&quot;py&lt;</button>" in body


@given(st.text(max_size=300))
def test_any_text_round_trips(text):
    assert CB.commands_in(CB.block_html(text, "Copy", "Copied")) == [text]


def test_script_is_served_from_static():
    # Streamlit's static serving maps static/ to app/static/ (.streamlit/config.toml enableStaticServing)
    assert CB.SCRIPT_URL.startswith("app/static/")
    script = ROOT / "static" / CB.SCRIPT_URL.removeprefix("app/static/")
    text = script.read_text()
    assert "button.cmd-copy" in text and ".cmd-block" in text and "data" in text
    assert "enableStaticServing = true" in (ROOT / ".streamlit" / "config.toml").read_text()
