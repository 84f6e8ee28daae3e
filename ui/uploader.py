"""Every file uploader of the app, with Streamlit's own uploader text in the user's language.

Streamlit 1.67 draws its uploader's text in English only, with no locale setting or option
(``FileUploader.*.js`` in its frontend: the button "Upload", the line "2MB per file • JSON" in
``stFileUploaderDropzoneInstructions`` and, while a file is dragged over it, "Drag and drop a file
here"). In Chinese, :func:`file_uploader` scopes a small style sheet to its own uploader
(``.st-key-<key>``) that hides those English texts and shows the Chinese ones in their place
(``::after`` content): the same box, button and size, only the words change. The limit and the
file types are this uploader's own (``server.maxUploadSize`` or ``max_upload_size``, ``type``), written
as Streamlit writes them. In English nothing is added.

Not translated: the messages Streamlit makes up for a refused file ("application/pdf files are not
allowed.", a size error), which carry the browser's file type; the app checks every upload again and
says what is wrong in the user's language.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import streamlit as st

# The uploader's parts, by the test ids of Streamlit 1.67's frontend (tests/test_ui_uploader.py pins them).
DROPZONE = '[data-testid="stFileUploaderDropzone"]'
INSTRUCTIONS = '[data-testid="stFileUploaderDropzoneInstructions"]'
BUTTON = '[data-testid="stBaseButton-secondary"]'


def limit_mb(max_upload_size: int | None = None) -> int:
    """The per-file limit Streamlit applies, in its MB (``server.maxUploadSize``, 2 here)."""
    if max_upload_size is not None:
        return int(max_upload_size)
    return int(st.get_option("server.maxUploadSize"))


def types_text(types: Sequence[str]) -> str:
    """The file types as Streamlit's instructions line lists them (``.json`` -> ``JSON``).

    >>> types_text(["csv", "jsonl", ".json"])
    'CSV, JSONL, JSON'
    """
    return ", ".join(t.lstrip(".").upper() for t in types)


def instructions(t, mb: int, types: Sequence[str]) -> str:
    """The line under the button, in this language ("2MB per file • JSON" in English).

    >>> from ui.i18n import Translator
    >>> instructions(Translator("zh"), 2, ["json"])
    '单个文件上限 2 MB • JSON'
    """
    text = t("upload.limit", mb=mb)
    return f"{text} • {types_text(types)}" if types else text


def _css_string(text: str) -> str:
    """A CSS string literal of ``text`` (quotes, backslashes and anything outside ASCII escaped)."""
    return '"' + "".join(c if c.isascii() and c.isalnum() or c in " .,•" and c.isascii() else f"\\{ord(c):x} "
                         for c in text) + '"'


def style(key: str, t, mb: int, types: Sequence[str]) -> str:
    """The style sheet that shows uploader ``key``'s own texts in Chinese ("" in English).

    The English texts stay in the page (for screen readers the button keeps its aria name) but take
    no room: font-size 0 on the English text, the Chinese text at the normal size after it.
    """
    if t.lang == "en":
        return ""
    scope = f".st-key-{key}"
    rules = {
        f"{scope} {INSTRUCTIONS} span": ("font-size: 0; white-space: normal; overflow: visible;", instructions(t, mb, types)),
        f"{scope} {DROPZONE} {BUTTON} p": ("font-size: 0;", t("upload.button")),
    }
    # The Chinese line may wrap in a narrow box (the sidebar's) where Streamlit's English one is cut.
    css = "".join(f"{sel} {{ {hide} }}\n{sel}::after {{ content: {_css_string(text)}; font-size: 0.875rem; "
                  "white-space: normal; }\n" for sel, (hide, text) in rules.items())
    # While a file is dragged over the box, Streamlit shows one line of its own (a div without a test id).
    drag = f"{scope} {DROPZONE} > div:not([data-testid]) span"
    css += f"{drag} {{ font-size: 0; }}\n{drag}::after {{ content: {_css_string(t('upload.drag'))}; font-size: 1rem; }}\n"
    return css


def file_uploader(where, t, label: str, *, type: Sequence[str], key: str, on_change: Callable[..., Any] | None = None,
                  args: tuple = (), help: str | None = None, max_upload_size: int | None = None):
    """``where.file_uploader(...)`` (``where``: ``st`` or a container), its text in the user's language."""
    kwargs = dict(type=list(type), key=key, help=help, on_change=on_change, args=args)
    if max_upload_size is not None:
        kwargs["max_upload_size"] = max_upload_size
    value = where.file_uploader(label, **kwargs)
    css = style(key, t, limit_mb(max_upload_size), type)
    if css:
        where.html(f"<style>{css}</style>")  # a style-only st.html takes no room in the layout
    return value

