"""Helpers for the AppTest page tests (no browser)."""

from __future__ import annotations

import base64
import json

from streamlit.testing.v1 import AppTest

from conftest import APP


def app(query: dict | None = None, *, locale: str | None = None, page: str | None = None) -> AppTest:
    """A fresh AppTest of app.py, run once (then switched to ``page`` and run again)."""
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    if locale:
        at.context = {"locale": locale}
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def open_page(page: str, query: dict | None = None) -> AppTest:
    """A fresh AppTest whose first run is ``page`` (a link opened on that page, as a browser does);
    :func:`app` runs the default page first."""
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page(page).run()
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def commands(block) -> list[str]:
    """The command blocks (ui.command_block) in ``block`` (an AppTest, ``at.main``, ``at.sidebar``), in
    order: what their copy buttons copy."""
    from ui.command_block import commands_in

    return [c for h in block.html for c in commands_in(h.value)]


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def plain(elements) -> list[str]:
    """Element texts as the reader sees them: Markdown backslash-escapes (ui.safe) undone."""
    return [unescape(e.value) for e in elements]


def unescape(text: str) -> str:
    """``a\\_b`` → ``a_b``: what the reader sees of an escaped Markdown text."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def plotly_specs(at: AppTest) -> list[dict]:
    """Plotly charts as their JSON specs (AppTest has no typed accessor; arrays may be base64)."""
    specs = []
    for el in at.get("plotly_chart"):
        specs.append(json.loads(el.proto.spec))
    return specs


def chart_titles(at: AppTest) -> list[str]:
    """Chart titles, in page order: ui.layout.chart draws each as an HTML heading above its plot."""
    import html
    import re

    out = []
    for el in at.get("html"):
        m = re.search(r'<div class="chart-title">(.*?)</div>', el.proto.body, re.S)
        if m:
            out.append(html.unescape(m.group(1)))
    return out


def decode(arr):
    """A plotly array from a spec: a list, or {"bdata": base64, "dtype": ...}."""
    import numpy as np

    if isinstance(arr, dict) and "bdata" in arr:
        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=arr["dtype"]).tolist()
    return arr


def open_why(at: AppTest, *keys: str) -> AppTest:
    """Open "why" panels by their keys (the flag ui.layout.lazy_expander's callback stores) and
    rerun: closed panels are lazy and send only their titles."""
    for key in keys:
        at.session_state[f"_open_why_{key}"] = True
    return at.run()


def open_section(at: AppTest, *keys: str) -> AppTest:
    """Open lazy sidebar sections (``sec_engine``, ``sec_efficiency``, ...) and rerun."""
    for key in keys:
        at.session_state[f"_open_{key}"] = True
    return at.run()


def open_checks(page: str, lang: str, key: str, title: str, column: str):
    """A page's "how close to real servers" panel (ui.checks.render, lazy): checked closed first (its
    label shown, no table drawn), then opened; returns its table (the one with ``column``) as a DataFrame
    and the page's captions joined."""
    at = app({"lang": lang}, page=page)
    assert any(title in e.label for e in at.expander) and not at.table  # closed: nothing drawn
    open_section(at, key)
    assert not at.exception
    (table,) = [tb for tb in at.table if column in tb.value.columns.tolist()]
    return table.value, " ".join(c.value for c in at.caption)


def md_tables(at: AppTest) -> list[list[dict[str, str]]]:
    """The Markdown tables (ui.tables.markdown) of the page, in order: rows as {header: cell}, the
    cells as the reader sees them (escapes undone)."""
    out = []
    for el in at.markdown:
        lines = [ln for ln in el.value.splitlines() if ln.startswith("| ")]
        if len(lines) < 2 or not set(lines[1]) <= set("| -"):
            continue

        def cells(line: str) -> list[str]:
            import re

            return [unescape(c.strip()) for c in re.split(r"(?<!\\)\|", line)[1:-1]]

        head = cells(lines[0])
        out.append([dict(zip(head, cells(ln))) for ln in lines[2:]])
    return out
