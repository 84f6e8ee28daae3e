"""A shell command on a page (``vllm serve …``, ``python -m calc …``): monospace, scrolled
sideways when long, with a copy button. ``st.code`` without its syntax highlighter.

Why not ``st.code``: Streamlit draws every ``st.code`` through its syntax highlighter, a 1.5 MB
JavaScript chunk (``StreamlitSyntaxHighlighter.*.js``, whatever the ``language``) fetched, compiled
and run when the first code block arrives. The frontier's and planner's commands arrive a few
milliseconds after their first chart, long before Plotly's own chunk has been compiled and the
chart drawn: on a machine with few CPUs the highlighter took ~0.4–1.1 s of the browser's one main
thread before the first chart (bench/first_paint.py --profile; a CPU profile of the page). A
command needs no colours.

Safe by construction: the command is HTML-escaped into a ``<pre>`` (``st.html`` shows it in the
page, sanitized by Streamlit's DOMPurify too); it is never Markdown. The copy button's behaviour is
one external script, ``static/command-copy.js`` (served by Streamlit's static serving at
``app/static/``; a module, so it runs once per page however many blocks there are), which reads the
``<pre>``'s text when clicked: no inline script, so the deployment's Content-Security-Policy
(``script-src 'self'``) allows it without a hash.
"""

from __future__ import annotations

import html
import re

import streamlit as st

from ui.i18n import Translator

SCRIPT_URL = "app/static/command-copy.js"  # relative: a proxy's path prefix works (ui.layout's fonts do the same)
CLASS = "cmd-block"
# st.code's look in either theme: a faint grey box (the theme's text colour shows through), Streamlit's
# monospace font, the copy button at the top right.
_BOX = ("position:relative;margin:0 0 1rem 0;border-radius:.5rem;background:rgba(128,128,128,.1);")
_PRE = ("margin:0;padding:1rem 5.5rem 1rem 1rem;overflow-x:auto;white-space:pre;background:transparent;"
        "font-family:'Source Code Pro',monospace;font-size:.875rem;line-height:1.6;color:inherit;")
# On a narrow screen a command's first line reaches the button: there the text starts below it.
_NARROW = ("<style>@media (max-width: 40rem){.cmd-block pre{padding-top:2.75rem !important;"
           "padding-right:1rem !important}}</style>")
_BUTTON = ("position:absolute;top:.5rem;right:.5rem;border:1px solid rgba(128,128,128,.5);border-radius:.5rem;"
           "padding:.1rem .6rem;background:transparent;color:inherit;font:inherit;font-size:.8rem;cursor:pointer;")


def block_html(command: str, copy_label: str, copied_label: str) -> str:
    """The block's HTML: ``command`` escaped (any text: a model id from a config file, a path),
    labels escaped too.

    >>> block_html("vllm serve a/b --x '<y>'", "Copy", "Copied")[:60]
    '<div class="cmd-block" style="position:relative;margin:0 0 1'
    >>> "&lt;y&gt;" in block_html("x '<y>'", "Copy", "Copied") and "<y>" not in block_html("x '<y>'", "C", "D")
    True
    """
    return (f'<div class="{CLASS}" style="{_BOX}">'
            f'<pre style="{_PRE}"><code>{html.escape(command, quote=False)}</code></pre>'
            f'<button class="cmd-copy" type="button" data-label="{html.escape(copy_label)}" '
            f'data-done="{html.escape(copied_label)}" style="{_BUTTON}">{html.escape(copy_label)}</button>'
            f'</div>{_NARROW}<script type="module" src="{SCRIPT_URL}"></script>')


_PRE_TEXT = re.compile(r'<div class="cmd-block"[^>]*><pre[^>]*><code>(.*?)</code></pre>', re.S)


def commands_in(body: str) -> list[str]:
    """The commands of the blocks in an ``st.html`` body (what a reader copies), for tests.

    >>> commands_in(block_html("a < b && c", "Copy", "Copied"))
    ['a < b && c']
    """
    return [html.unescape(m) for m in _PRE_TEXT.findall(body)]


def render(command: str, t: Translator) -> None:
    """Draw ``command`` as a block with a copy button (in the current container)."""
    st.html(block_html(command, t("cmd.copy"), t("cmd.copied")), unsafe_allow_javascript=True)
