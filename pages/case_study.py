"""Course §3.5, the teacher's path: the case study's before (A) and after (B) side by side, one click
from the navigation. Fixed inputs (Llama-2-7B FP16 on one A100 80GB, 1,792 + 256 tokens), so the
sidebar's scenario does not apply; the efficiency assumptions do. The numbers at each case's own
clients (16 and 32), both frontiers on one chart against the course's chat SLA, and the course's
printed numbers beside the calculator's with why they differ."""

import numpy as np
import streamlit as st

from ui import format as F
from ui import layout, shell, tables
from ui.perf import figures as FP
from ui.perf import view as V
from ui.theme import SERIES_COLORS

sc, t = shell.page()
layout.header(t("cs.page_title"), t("case.intro", i=F.integer(V.CASE_INPUT), o=F.integer(V.CASE_OUTPUT)))

case = V.case_study(sc.efficiency)
labels = (t("cs.series.before", c=V.CASE_BEFORE["concurrency"]), t("cs.series.after", c=V.CASE_AFTER["concurrency"]))
series = V.case_series(sc.efficiency, labels, (SERIES_COLORS[0], SERIES_COLORS[1]))
rows = V.case_rows(case, t)
ms = lambda x: f"{F.number(float(x) * 1e3, 0)} ms"  # noqa: E731
units = {"ttft_ms": "ms", "tpot_ms": "ms", "tokens_per_s": "tok/s", "memory_gb": "GB"}
digits = {"ttft_ms": 0, "tpot_ms": 1, "tokens_per_s": 0, "memory_gb": 1}
lower_is_better = {"ttft_ms": True, "tpot_ms": True, "tokens_per_s": False, "memory_gb": True}

# One row of eight cards on a projector (A's four, then B's with the change from A), two rows elsewhere.
cards = layout.grid("cs", 8 if layout.presenting() else 4)
for which, label in (("before", labels[0]), ("after", labels[1])):
    for r in rows:
        v = r[f"calc_{which}"]
        value = f"{F.number(v, digits[r['key']])} {units[r['key']]}"
        delta = None
        if which == "after":
            d = r["calc_after"] - r["calc_before"]
            delta = f"{F.number(d, digits[r['key']])} {units[r['key']]} ({V._pct(r['calc_after'], r['calc_before'])})"
        cards.metric(f"{'A' if which == 'before' else 'B'} · {r['metric']}", value, delta=delta, border=True,
                     delta_color="inverse" if lower_is_better[r["key"]] else "normal",
                     help=label if which == "before" else t("cs.delta.help", label=label))

ttft_slo_s, tpot_slo_s = V.CASE_SLA_S
layout.chart(FP.frontier_sla_figure(series, t, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s, per_gpu=False,
                                    mark_chosen=True,
                                    title=t("cs.chart.title", ttft=F.number(ttft_slo_s * 1e3, 0),
                                            tpot=F.number(tpot_slo_s * 1e3, 0))),
             key="case_frontier")
st.caption(t("cs.chart.caption", a=V.CASE_BEFORE["concurrency"], b=V.CASE_AFTER["concurrency"]))

st.subheader(t("cs.table.title"))
st.table(tables.arrow([{t("case.col.metric"): r["metric"], t("case.col.course"): r["course"],
                        t("case.col.calc"): r["calc"], t("case.col.why"): r["why"]} for r in rows]), hide_index=True)
st.caption(t("cs.table.caption"))
