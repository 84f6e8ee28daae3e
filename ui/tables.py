"""The tables behind the charts, as CSV text for ``st.download_button`` (exact bytes + GiB)."""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Mapping, Sequence

import numpy as np

from calc.sizing.scenario import MemoryResult
from calc.spec.units import GiB

MEMORY_COLUMNS = ("weights_bytes", "activation_bytes", "overhead_bytes", "kv_in_use_bytes", "kv_free_bytes",
                  "reserved_bytes", "usable_memory_bytes", "budget_bytes", "kv_bytes_per_request",
                  "max_concurrency_at_context", "concurrency_fits")


def to_csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def memory_sweep_csv(x_name: str, x: Sequence[int], r: MemoryResult) -> str:
    """One row per sweep point: every memory component in bytes, plus GiB for the bytes."""
    n = len(x)
    cols = {c: np.broadcast_to(np.asarray(getattr(r, c)), (n,)) for c in MEMORY_COLUMNS}
    gib_cols = [c for c in MEMORY_COLUMNS if c.endswith("_bytes") or c.endswith("_request")]
    header = [x_name, "concurrency" if x_name == "context_tokens" else "context_tokens", *MEMORY_COLUMNS,
              *(c.replace("_bytes", "_GiB") for c in gib_cols)]
    other = np.broadcast_to(np.asarray(r.concurrency if x_name == "context_tokens" else r.context_tokens), (n,))
    rows = []
    for i in range(n):
        row = [int(x[i]), int(other[i])]
        row += [_plain(cols[c][i]) for c in MEMORY_COLUMNS]
        row += [round(float(cols[c][i]) / GiB, 4) for c in gib_cols]
        rows.append(row)
    return to_csv(header, rows)


def waste_csv(r: MemoryResult, *, block_size: int, max_model_len: int) -> str:
    header = ["scheme", "block_size", "max_model_len", "context_tokens", "wasted_bytes_per_request", "requests_fit"]
    ctx = int(np.max(r.context_tokens))
    rows = [["paged", block_size, max_model_len, ctx, float(np.max(r.paged_waste_bytes)),
             int(np.max(r.max_concurrency_at_context))],
            ["contiguous", block_size, max_model_len, ctx, float(np.max(r.contiguous_waste_bytes)),
             int(np.max(r.contiguous_max_sequences))]]
    return to_csv(header, rows)


def _plain(v: Any) -> Any:
    v = np.asarray(v).item()
    return v


def course_rows(figures: Sequence[Any], computed: Sequence[float], t: Any) -> list[dict[str, Any]]:
    """One row per course figure: labels, printed text, computed value (GB and GiB), reason."""
    from calc.spec.catalog import get_model
    from ui import format as F

    lang = t.lang
    rows = []
    for i, (fig, value) in enumerate(zip(figures, computed), start=1):
        what = ("kv.short.weights" if fig.quantity == "weights" else
                "kv.short.kv_total" if fig.quantity == "kv_total" else "kv.short.kv")
        ctx = F.tokens_short(fig.context_tokens) if fig.context_tokens else ""
        rows.append({
            "short": f"({i}) {get_model(fig.model_id).name.removeprefix('Llama-2-')} "
                     f"{t(what, ctx=ctx, n=fig.requests)}",
            "key": fig.key,
            "section": fig.section,
            "label": fig.label_zh if lang == "zh" else fig.label_en,
            "model": fig.model_id,
            "concept": "weights" if fig.quantity == "weights" else "kv",
            "printed": fig.printed_text,
            "printed_bytes": fig.printed_bytes,
            "computed": F.both(value),
            "computed_bytes": value,
            "why": fig.reason_zh if lang == "zh" else fig.reason_en,
        })
    return rows


def course_csv(rows: Sequence[dict[str, Any]]) -> str:
    header = ["key", "section", "model", "printed", "printed_bytes", "computed_bytes", "label", "why"]
    return to_csv(header, [[r[h] for h in header] for r in rows])


def own_table_csv(rows: Sequence[dict[str, Any]], contexts: Sequence[int]) -> str:
    header = ["model", "attention", "params", "weights_bytes", "kv_bytes_per_token",
              *(f"kv_bytes_at_{c}" for c in contexts)]
    return to_csv(header, [[r["model"], r["attention"], r["params"], r["weights_bytes"], r["kv_bytes_per_token"],
                            *r["kv_bytes"]] for r in rows])


def arrow(rows: Sequence[dict[str, Any]]) -> Any:
    """Rows (dicts with the same keys) as an Arrow table for ``st.table`` / ``st.dataframe``.

    Given a list of dicts, Streamlit builds a pandas DataFrame and converts it to Arrow on every
    rerun (about 2 ms for a 5-row table); from an Arrow table it only serializes (0.1 ms). The
    tables are drawn with ``hide_index=True``, so they look the same. Rows Arrow cannot type (a
    column mixing numbers and text) are returned as they are, for Streamlit to convert as before.
    """
    import pyarrow as pa

    try:
        return pa.Table.from_pylist(list(rows))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return rows


# an app path with a URL-encoded query: no ( ) [ ] < > or space, and not "//host" (a protocol-relative link elsewhere)
_RELATIVE_LINK = re.compile(r"/(?!/)[A-Za-z0-9_./?=&%+~-]*")


def markdown(rows: Sequence[dict[str, Any]], links: Mapping[str, str] | None = None) -> str:
    """Rows (dicts with the same keys) as a Markdown table for ``st.markdown``, every cell escaped
    (:func:`ui.safe.md_escape`: no link, HTML or a ``|`` that would start a column).

    ``links``: column → link text. Those columns hold the app's own relative URLs (``/frontier?model=…``,
    URL-encoded), drawn as links (Streamlit opens them in a new tab, as a data grid's link column
    does); a cell that is not such a URL is shown as escaped text, never as a link.

    Whole numbers with thousands separators, None as an empty cell. For a small table on a page's
    first view: ``st.table`` loads its Arrow scripts (0.9 MB) before it draws, where Markdown's
    renderer is in the page already; it keeps the theme's table style (light and dark). No index
    column, as ``st.table(..., hide_index=True)``.

    >>> print(markdown([{"a": 1200, "b|c": "<x>"}]))
    | a | b\\|c |
    | --- | --- |
    | 1,200 | \\<x\\> |
    >>> "](" in markdown([{"go": "https://evil.example/x"}, {"go": "/x)[y](/z"}, {"go": "//evil.example/x"}],
    ...                  links={"go": "open"})  # not links
    False
    >>> markdown([{"go": "/frontier?gpu=h100-sxm&tp=2"}], links={"go": "open ↗"}).splitlines()[-1]
    '| [open ↗](/frontier?gpu=h100-sxm&tp=2) |'
    """
    from ui.safe import md_escape  # noqa: PLC0415

    rows = list(rows)
    if not rows:
        return ""
    head = list(rows[0])

    def cell(value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{value:,}"
        return md_escape("" if value is None else str(value)) or " "

    links = links or {}

    def body_cell(key: str, value: Any) -> str:
        if key in links and isinstance(value, str) and _RELATIVE_LINK.fullmatch(value):
            return f"[{md_escape(links[key])}]({value})"
        return cell(value)

    return "\n".join(["| " + " | ".join(cell(k) for k in head) + " |", "| " + " | ".join("---" for _ in head) + " |",
                      *("| " + " | ".join(body_cell(k, r[k]) for k in head) + " |" for r in rows)])
