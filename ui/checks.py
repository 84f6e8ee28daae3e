"""How close a feature's model has been to published runs: a lazy "how close to real servers" panel the
feature pages share (prefix cache, speculative decoding). Each reads its checks from calc/data (written by
its bench script's ``--write``): ``rows`` of id, source, confidence, metric, predicted, measured, error."""

from __future__ import annotations

from typing import Callable

from ui import format as F

T = Callable[..., str]


def measured_value(metric: str, x: float) -> str:
    """A published run's number in its unit: latencies as durations, throughputs per second, the hit
    rate as a percentage.

    >>> measured_value("ttft_s", 0.1994), measured_value("output_tokens_per_s", 871.43), measured_value(
    ...     "requests_per_s", 9.8), measured_value("prefix_cache_hit_rate", 0.37)
    ('199.4 ms', '871 tok/s', '9.80 req/s', '37.0 %')
    """
    if metric == "prefix_cache_hit_rate":
        return F.percent(x, 1)
    if metric.endswith("tokens_per_s"):
        return f"{F.number(x, 0)} tok/s"
    if metric == "requests_per_s":
        return f"{x:,.2f} req/s"
    return F.duration(x)


def rows(checks: dict, t: T) -> list[dict[str, str]]:
    """The published runs of ``checks`` as table rows in the reader's language (the error's sign kept
    with its number: a no-break space before "%"); a confidence column only where the runs state one."""
    rated = any(r.get("confidence") for r in checks["rows"])
    out = []
    for r in checks["rows"]:
        row = {t("checks.col.run"): r["id"]}
        if rated:
            row[t("checks.col.confidence")] = t(f"checks.conf.{r['confidence']}") if r.get("confidence") else "—"
        row |= {t("checks.col.metric"): r["metric"], t("checks.col.measured"): measured_value(r["metric"], r["measured"]),
                t("checks.col.predicted"): measured_value(r["metric"], r["predicted"]),
                t("checks.col.error"): f"{100 * r['error']:+.0f}\u00a0%", t("checks.col.source"): r["source"]}
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
        st.table(tables.arrow(rows(c, t)), hide_index=True)
