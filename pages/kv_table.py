"""Course §3.2: the weights / KV-cache table, printed beside computed, then your own table."""

import numpy as np
import streamlit as st

from calc.spec.catalog import get_model
from calc.spec.inputs import ServingConfig
from calc.spec.params import param_counts
from calc.sizing.scenario import memory_for
from ui import layout, shell, tables
from ui.i18n import weights_phrase
from ui.memory import figures
from ui import format as F
from ui.controls import KV_CONTEXTS, KV_MODELS
from ui.state import check_query_params, render_control

sc, t = shell.page()
url_warnings = check_query_params((KV_MODELS, KV_CONTEXTS), t)
for warning in url_warnings:
    st.warning(warning)
layout.header(t("kv.title"), t("kv.intro"))

st.subheader(t("kv.course_table"))
try:
    from calc.sizing.course import computed_bytes, course_figures
except ImportError:
    st.info(t("kv.unavailable"))
else:
    st.caption(t("kv.course_note"))
    figs = course_figures()
    rows = tables.course_rows(figs, [computed_bytes(f) for f in figs], t)
    st.table(tables.arrow([{t("kv.col.section"): r["section"], t("kv.col.figure"): r["short"] + ": " + r["label"],
               t("kv.col.printed"): r["printed"], t("kv.col.computed"): r["computed"], t("kv.col.why"): r["why"]}
              for r in rows]), hide_index=True)
    layout.chart(figures.printed_vs_computed_figure(rows, t), key="course_chart")
    st.download_button(t("csv.kv_course"), data=lambda rows=rows: tables.course_csv(rows), file_name="course_kv_table.csv",
                       mime="text/csv", key="course_csv", on_click="ignore")

st.subheader(t("kv.own"))
st.caption(t("kv.own.intro"))
chosen_models = render_control(KV_MODELS, t)
raw_contexts = render_control(KV_CONTEXTS, t)
contexts, bad = [], []
for value in raw_contexts:  # typed-in lengths are free text: keep the valid ones, name the others
    try:
        contexts += KV_CONTEXTS.parse([value])
    except ValueError:
        bad.append(str(value))
if bad and not url_warnings:
    st.warning(t("warn.bad_param", key=KV_CONTEXTS.key, raw=", ".join(bad), allowed=KV_CONTEXTS.allowed(),
                 default=", ".join(str(c) for c in KV_CONTEXTS.default)))
contexts = sorted(set(contexts)) or list(KV_CONTEXTS.default)
s = sc.serving
serving = ServingConfig(dtype=s.dtype, quantization=s.quantization, kv_cache_dtype=s.kv_cache_dtype,
                        block_size=s.block_size)
own = []
for model_id in chosen_models:
    arch = get_model(model_id)
    r = memory_for(arch, sc.gpu, serving, sc.efficiency, context_tokens=np.array(contexts or [1]))
    own.append({"model": arch.id, "attention": arch.attention_kind, "params": param_counts(arch).total,
                "weights_bytes": float(r.weights_bytes), "kv_bytes_per_token": float(r.kv_bytes_per_token),
                "kv_bytes": [float(v) for v in np.atleast_1d(r.kv_bytes_per_request)][:len(contexts)],
                "max_len": arch.max_position_embeddings})
st.dataframe(tables.arrow([{t("kv.col.model"): o["model"], t("kv.col.attention"): o["attention"],
               t("kv.col.params"): F.params_billions(o["params"]), t("kv.col.weights"): F.both(o["weights_bytes"]),
               t("kv.col.kv_token"): F.binary(o["kv_bytes_per_token"]),
               **{t("kv.col.kv_at", ctx=F.tokens_short(c)): F.both(v) + (" †" if c > o["max_len"] else "")
                  for c, v in zip(contexts, o["kv_bytes"])}} for o in own]), hide_index=True, key="own_table")
st.caption(t("kv.own.note", weights=weights_phrase(t, dtype=s.dtype, quantization=s.quantization), kv=s.kv_cache_dtype,
             block=s.block_size))
st.download_button(t("csv.kv_own"), data=lambda: tables.own_table_csv(own, contexts), file_name="kv_table.csv",
                   mime="text/csv", key="own_csv", on_click="ignore")
