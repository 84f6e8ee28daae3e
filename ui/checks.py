"""How close a feature's model has been to published runs: a lazy "how close to real servers" panel the
feature pages share (prefix cache, speculative decoding, P/D disaggregation). Each reads its checks from
calc/data (written by its bench script's ``--write``): ``rows`` of id, source, metric, predicted, measured,
error, and where the runs state them a confidence and a role (fit, held out, check)."""

from __future__ import annotations

import re
from typing import Callable

from ui import format as F

T = Callable[..., str]
_URL = re.compile(r"https?://[^\s<>()\[\]]+")


def measured_value(metric: str, x: float) -> str:
    """A published run's number in its unit: latencies as durations, throughputs per second (a request
    rate, ``requests_per_s`` or ``…_rps``, in req/s), the hit rate as a percentage.

    >>> measured_value("ttft_s", 0.1994), measured_value("output_tokens_per_s", 871.43), measured_value(
    ...     "requests_per_s", 9.8), measured_value("prefix_cache_hit_rate", 0.37), measured_value("max_rate_rps", 2.3)
    ('199.4 ms', '871 tok/s', '9.80 req/s', '37.0 %', '2.30 req/s')
    >>> measured_value("cost_time_s", 8.54), measured_value("ttft_s", 277.456)
    ('8.54 s', '277.46 s')
    """
    if metric == "prefix_cache_hit_rate":
        return F.percent(x, 1)
    if metric.endswith("tokens_per_s"):
        return f"{F.number(x, 0)} tok/s"
    if metric == "requests_per_s" or metric.endswith("_rps"):
        return f"{x:,.2f} req/s"
    if x >= 1.0:  # a run's length or a queued TTFT: seconds ("8.54 s", not "8,540.0 ms")
        return f"{x:,.2f} s"
    return F.duration(x)


def percent(fraction: float, digits: int = 0) -> str:
    """A median in a panel's caption: "17 %" with a no-break space, never split over two lines at 390 px.

    >>> percent(0.1663).replace("\u00a0", "_"), percent(0.0723, 1).replace("\u00a0", "_")
    ('17_%', '7.2_%')
    """
    return F.percent(fraction, digits).replace(" ", "\u00a0")


def source_cell(source: str, limit: int = 60) -> str:
    """A run's source for a table cell (Markdown): each URL as a link whose text is the URL without its
    scheme, with a zero-width space after each "/" so a narrow column wraps it; one longer than ``limit``
    characters shows only its host, first two path parts and last (a commit-pinned GitHub file is 180
    characters: it ran out of its cell). The citation around the URLs as it is.

    >>> source_cell("https://github.com/vllm-project/vllm/pull/9668 (PR)").replace("\u200b", "")
    '[github.com/vllm-project/vllm/pull/9668](https://github.com/vllm-project/vllm/pull/9668) (PR)'
    >>> url = "https://github.com/anyscale/ray-serve-llm-perf-examples/blob/5a6aabb/prefill_decode/x_2xtp4/conc8.json"
    >>> cell = source_cell(url + " (anyscale)")
    >>> cell.replace("\u200b", "") == f"[github.com/anyscale/ray-serve-llm-perf-examples/…/conc8.json]({url}) (anyscale)"
    True
    >>> source_cell("llm-d P/D deployment notes (as above)")
    'llm-d P/D deployment notes (as above)'
    """
    def link(m: re.Match) -> str:
        url = m.group(0)
        host, *parts = url.split("://", 1)[1].rstrip("/").split("/")
        shown = [host, *parts[:2], "…", parts[-1]] if len(url) > limit and len(parts) >= 4 else [host, *parts]
        return "[" + "/\u200b".join(shown) + f"]({url})"

    return _URL.sub(link, source)


def rows(checks: dict, t: T) -> list[dict[str, str]]:
    """The published runs of ``checks`` as table rows in the reader's language (each number kept with its
    unit and the error's sign with its number: no-break spaces, so a narrow column wraps between values,
    not inside one; long URLs in the source shortened, :func:`source_cell`); a confidence column only where
    the runs state one, a role column (the fit row, held out, a check) only where they carry one.

    >>> from ui.i18n import Translator
    >>> row = rows({"rows": [{"id": "a", "source": "s", "metric": "max_rate_rps", "measured": 2.3,
    ...                       "predicted": 4.472, "error": 0.9444, "role": "held_out"}]}, Translator("en"))[0]
    >>> list(row), row["Role"]
    (['Run', 'Role', 'Number', 'Measured', 'Predicted', 'Error', 'Source'], 'held out')
    >>> [row[k].replace("\u00a0", "_") for k in ("Measured", "Predicted", "Error")]  # _: a no-break space
    ['2.30_req/s', '4.47_req/s', '+94_%']
    """
    rated = any(r.get("confidence") for r in checks["rows"])
    roled = any(r.get("role") for r in checks["rows"])
    out = []
    for r in checks["rows"]:
        row = {t("checks.col.run"): r["id"]}
        if rated:
            row[t("checks.col.confidence")] = t(f"checks.conf.{r['confidence']}") if r.get("confidence") else "—"
        if roled:
            row[t("checks.col.role")] = t(f"checks.role.{r['role']}") if r.get("role") else "—"
        row |= {t("checks.col.metric"): r["metric"],
                t("checks.col.measured"): measured_value(r["metric"], r["measured"]).replace(" ", "\u00a0"),
                t("checks.col.predicted"): measured_value(r["metric"], r["predicted"]).replace(" ", "\u00a0"),
                t("checks.col.error"): f"{100 * r['error']:+.0f}\u00a0%",
                t("checks.col.source"): source_cell(r["source"])}
        out.append(row)
    return out


def render(t: T, *, key: str, title: str, caption: Callable[[dict], str], load: Callable[[], dict]) -> None:
    """The panel (lazy: the checks are read and drawn only while it is open): ``caption(checks)``, then
    every row."""
    import streamlit as st  # noqa: PLC0415

    from ui import tables  # noqa: PLC0415
    from ui.layout import lazy_expander  # noqa: PLC0415

    exp = lazy_expander(st, title, key)
    if not exp.open:
        return
    c = load()
    with exp:
        st.caption(caption(c))
        with st.container(key=f"{key}_checks_table"):  # its columns' minimum width (ui.layout CSS)
            st.table(tables.arrow(rows(c, t)), hide_index=True)
