"""The load test's problems in the reader's language. :mod:`calc.traffic` words its errors in
English (calc has no UI); each known form is matched here and said with a message key, its
parts (line numbers, the user's value) kept as they are. An unknown message is shown unchanged.
No streamlit here."""

from __future__ import annotations

import re
from typing import Callable

_FORMS: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"^trace: file larger than (?P<n>[\d,]+) MB$"), "lt.err.too_large"),
    (re.compile(r"^trace: not UTF-8 text$"), "lt.err.not_utf8"),
    (re.compile(r"^trace: more than (?P<n>[\d,]+) requests$"), "lt.err.too_many"),
    (re.compile(r"^trace: no requests \("), "lt.err.empty"),
    (re.compile(r"^trace line (?P<line>\d+): not a JSON object$"), "lt.err.not_json"),
    (re.compile(r"^trace line (?P<line>\d+): not valid CSV \((?P<detail>.*)\)$", re.S), "lt.err.bad_csv"),
    (re.compile(r"^trace line (?P<line>\d+): missing field (?P<field>\w+)$"), "lt.err.missing"),
    (re.compile(r"^trace line (?P<line>\d+): arrival_s must be seconds between 0 and 1e9 \(got (?P<raw>.*)\)$",
                re.S), "lt.err.arrival"),
    (re.compile(r"^trace line (?P<line>\d+): (?P<field>\w+) must be a whole number between 1 and (?P<max>[\d,]+) "
                r"\(got (?P<raw>.*)\)$", re.S), "lt.err.tokens"),
    (re.compile(r"^trace line (?P<line>\d+): input_len \+ output_len \((?P<n>\d+)\) exceeds max_model_len "
                r"\((?P<max>\d+)\)$"), "lt.err.too_long"),
    (re.compile(r"^request (?P<i>\d+): input_len \+ output_len = (?P<n>\d+) tokens needs more KV blocks than the "
                r"pool holds \((?P<blocks>\d+) blocks of (?P<bs>\d+)\)$"), "lt.err.pool"),
)


def localize(message: str, t: Callable[..., str]) -> str:
    """One load-test problem in ``t``'s language.

    >>> from ui.i18n import Translator
    >>> zh = Translator("zh")
    >>> localize("trace line 3: missing field output_len", zh)
    '轨迹第 3 行：缺少字段 output_len'
    >>> localize("trace line 1: input_len must be a whole number between 1 and 10,000,000 (got '-3')", zh)
    "轨迹第 1 行：input_len 必须是 1 到 10,000,000 之间的整数（收到 '-3'）"
    >>> localize("something new", zh)
    'something new'
    """
    for pattern, key in _FORMS:
        m = pattern.match(message)
        if m is not None:
            return t(key, **m.groupdict())
    return message
