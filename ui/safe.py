"""The one way user-supplied text enters a message on screen.

Streamlit renders warnings, errors and captions as Markdown: a backtick, a bracket or a ``<`` in
a URL parameter, a scenario file or a config.json could otherwise close a code span, form a
live link, or an image the browser fetches. Every message that echoes user text formats it
with :func:`user_text` (cut with :func:`calc.spec.untrusted.quote`, then :func:`md_escape`d), and
every validation error is worded by :func:`describe` in the current language from its parts
(field, raw value, allowed range, reason code). Nothing here imports streamlit.
"""

from __future__ import annotations

import re
from typing import Any

from calc.spec.untrusted import MAX_SHOWN_CHARS, InputError, quote, shorten

# Backslash-escaped (CommonMark: any ASCII punctuation may be escaped): every character that
# starts Markdown, GFM or Streamlit syntax (links, images, code, emphasis, HTML, tables, math,
# :emoji:/:color[...]: directives, entities). GFM also turns bare URLs, www. names and e-mail
# addresses into links by matching the final text (escapes do not stop it), so a zero-width
# space goes where its patterns need adjacency: after http/https/ftp/www, before "@".
_ACTIVE = set("\\`*_[]()<>!#|~${}&:")
_AUTOLINK = re.compile(r"(?i)(https?|ftp|mailto|www)(?=\\?[:.])|(?=@)")
_ZWSP = "\u200b"


def md_escape(text: str) -> str:
    """Text that Streamlit's Markdown shows literally: no link, image, HTML, code span or emphasis.

    Control characters and line breaks become spaces (no new block can start).

    >>> md_escape("`[click](https://evil.example)`").replace(_ZWSP, "|")
    '\\\\`\\\\[click\\\\]\\\\(https|\\\\://evil.example\\\\)\\\\`'
    >>> md_escape("<img src=x>"), md_escape("www.evil.example a@b.c").replace(_ZWSP, "|")
    ('\\\\<img src=x\\\\>', 'www|.evil.example a|@b.c')
    """
    text = "".join(" " if (not c.isprintable() or c in "\r\n\t") else c for c in str(text))
    out = "".join("\\" + c if c in _ACTIVE else c for c in text)
    return _AUTOLINK.sub(lambda m: (m.group(1) or "") + _ZWSP, out)


def user_text(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """A raw user value for a message: quoted if it is not a plain string, cut, escaped.

    >>> user_text("16")
    '16'
    >>> user_text("x" * 100).endswith("… \\\\(100 characters\\\\)")
    True
    """
    text = shorten(value, limit) if isinstance(value, str) else quote(value, limit)
    return md_escape(text)


def reason_text(err: Exception, t) -> str:
    """A validation error worded in ``t``'s language as plain text (for ``st.code``, which shows
    text literally: nothing escaped); other errors as they are, cut short."""
    if isinstance(err, InputError):
        parts = err.parts()
        parts["allowed"] = localize_allowed(str(parts["allowed"]), t)
        key = f"reason.{err.code}"
        try:
            text = t(key, **{k: str(v) for k, v in parts.items()})
        except (KeyError, IndexError):
            text = key
        if text != key:
            return text
    return shorten(str(err), 400)


def describe(err: Exception, t) -> str:
    """A validation error worded in ``t``'s language, user parts escaped; other errors escaped as they are.

    ``t`` is a :class:`ui.i18n.Translator`; reason codes are translated as ``reason.<code>``.
    """
    if isinstance(err, InputError):
        raw_parts = err.parts()
        raw_parts["allowed"] = localize_allowed(str(raw_parts["allowed"]), t)
        # The field is the app's own identifier (shown as typed: intraword "_" is no emphasis);
        # everything else may carry user text.
        parts = {k: v if k == "field" else md_escape(str(v)) for k, v in raw_parts.items()}
        key = f"reason.{err.code}"
        try:
            text = t(key, **parts)
        except (KeyError, IndexError):
            text = key
        if text != key:
            return text
        return md_escape(str(err))
    return md_escape(shorten(str(err), 400))


# English phrases of allowed ranges (controls, the planner's prices, the compare text, the vLLM
# paste box, scenario files) -> message keys; whole phrases first, then the words inside them.
_ALLOWED_PHRASES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"\((?P<n>[\d,]+) in all, as in a downloaded scenario\)"), "allowed.in_all_scenario"),
    (re.compile(r"\((?P<n>[\d,]+) in all\)"), "allowed.in_all"),
    (re.compile(r"GPU=USD pairs separated by commas, USD a number > 0 and <= (?P<max>[\d,]+), "
                r"GPU one of the catalog ids"), "allowed.prices"),
    (re.compile(r"key=value pairs separated by ';', keys from: "), "allowed.compare_pairs"),
    (re.compile(r"^at most (?P<n>[\d,]+) characters$"), "allowed.max_chars"),
    (re.compile(r"^true or false$"), "allowed.bool"),
    (re.compile(r"^a whole number$"), "allowed.whole_number"),
    (re.compile(r"^a number$"), "allowed.a_number"),
)


def localize_allowed(allowed: str, t) -> str:
    """The words of a control's allowed range (``integer 1 – 1,024 (or empty)``) in ``t``'s language.

    >>> from ui.i18n import Translator
    >>> zh = Translator("zh")
    >>> localize_allowed("{a, b, … (18 in all)}", zh), localize_allowed("integer 1 – 64 (or empty)", zh)
    ('{a, b, … （共 18 个）}', '整数 1 – 64 （或留空）')
    >>> localize_allowed("true or false", zh), localize_allowed("{a, b}", Translator("en"))
    ('true 或 false', '{a, b}')
    """
    for pattern, key in _ALLOWED_PHRASES:
        allowed = pattern.sub(lambda m, k=key: t(k, **m.groupdict()), allowed)
    for word in ("or_empty", "list_of", "integer", "number"):
        english = {"or_empty": "(or empty)", "list_of": "a list of"}.get(word, word)
        allowed = allowed.replace(english, t(f"allowed.{word}"))
    return allowed
