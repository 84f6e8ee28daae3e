"""The user's own benchmark results on the pages: upload or paste them (``vllm bench serve
--save-result`` JSON, the summary block it prints, rows of ``vllm_benchmarks.jsonl``: parsed by
:mod:`calc.spec.results`), see each measured point against the calculator's answer for the same
settings (:func:`calc.cli.measured.score_rows`) on the frontier and load-test charts with its
error, and calibrate the sidebar's efficiency inputs on them in one click
(:func:`calc.cli.validate.calibrate`).

Uploads are released after every run (:func:`ui.state.release_uploads`), so the file is parsed in
the uploader's callback and only the parsed rows are kept, in the session, bounded in bytes
(:data:`MAX_KEPT_BYTES`) and rows (:data:`MAX_KEPT_ROWS`). A file that cannot be used leaves a
message naming what is missing; the rows kept before stay, and the pasted text stays in its box.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import streamlit as st
from pydantic import ValidationError

from calc.cli.measured import Scored, ask_row, score_rows, summary
from calc.cli.validate import FITTED, calibrate, mean_log_error
from calc.spec.catalog import CatalogError
from calc.spec.inputs import Efficiency, describe_validation_error
from calc.spec.results import ResultsError, parse_results
from calc.spec.untrusted import InputError
from ui import controls as C
from ui import format as F
from ui.budget import shared_memo
from ui.layout import lazy_expander
from ui import uploader
from calc.spec.untrusted import shorten
from ui.safe import user_text

T = Callable[..., str]
ROWS = "_measured_rows"        # list of parsed rows (dicts), oldest first
MESSAGES = "_measured_messages"  # (level, message id, values) left by callbacks, shown once
CALIBRATION = "_measured_calibration"  # the last calibration: before / after error, the values set
TEXT = "measured_text"         # the paste box (persist_state: kept across pages and runs)
UPLOAD = "measured_upload"
MAX_UPLOAD_BYTES = 8 * 2**20   # a save-result file with per-request lists of 10,000 requests is a few MB
MAX_KEPT_ROWS = 40             # each row is asked on every change of the scenario (cached by both)
MAX_KEPT_BYTES = 200_000       # the kept rows as JSON (a row is ~1 kB: lengths, options, measured means)
CALIBRATE_EVALUATIONS = 150
# Fitted field -> (sidebar control, SI per control unit, decimals kept): the calibration is written
# into the sidebar's efficiency controls, rounded to what they show, and so into the link and the scenario file.
APPLY = {"hbm_bw_fraction": ("eff_hbm_bw_fraction", 1.0, 2),
         "prefill_flops_fraction": ("eff_prefill_flops_fraction", 1.0, 2),
         "decode_flops_fraction": ("eff_decode_flops_fraction", 1.0, 2),
         "hopper_flops_scale": ("eff_hopper_flops_scale", 1.0, 2),
         "geforce_flops_fraction": ("eff_geforce_flops_fraction", 1.0, 2),
         "step_overhead_s": ("eff_step_overhead_ms", 1e-3, 3),
         "sequence_overhead_s": ("eff_sequence_overhead_us", 1e-6, 2),
         "request_overhead_s": ("eff_request_overhead_ms", 1e-3, 2),
         "api_server_request_s": ("eff_api_server_request_ms", 1e-3, 2),
         "api_server_harmony_request_s": ("eff_api_server_harmony_request_ms", 1e-3, 2)}
assert set(APPLY) == set(FITTED) | {"api_server_harmony_request_s", "geforce_flops_fraction"}  # fitted_inputs adds them
SCENARIO_FROM_SIDEBAR = ("model", "gpu", "tensor_parallel_size", "dtype", "quantization", "kv_cache_dtype",
                         "gpu_memory_utilization", "block_size", "max_model_len", "max_num_seqs",
                         "max_num_batched_tokens")


# ----------------------------------------------------------------------------- reading (callbacks)

def _say(level: str, msg_id: str, **values: Any) -> None:
    st.session_state.setdefault(MESSAGES, []).append((level, msg_id, values))


def scenario_of(sc) -> dict[str, Any]:
    """What a result file does not say, from the sidebar (the GPU, TP, precisions; the model for
    a printed summary). A row's own options win."""
    s = sc.serving
    out = {"model": sc.arch.id, "gpu": sc.gpu.id, "tensor_parallel_size": s.tensor_parallel_size, "dtype": s.dtype,
           "quantization": s.quantization, "kv_cache_dtype": s.kv_cache_dtype,
           "gpu_memory_utilization": s.gpu_memory_utilization, "block_size": s.block_size,
           "max_model_len": s.max_model_len, "max_num_seqs": s.max_num_seqs,
           "max_num_batched_tokens": s.max_num_batched_tokens}
    return {k: v for k, v in out.items() if v is not None}


def problem_of(row: dict, efficiency: Efficiency) -> str | None:
    """None when the calculator can answer the row, else why not (row named)."""
    try:
        ask_row(row, efficiency)
    except ValidationError as exc:
        return f"{row['id']}: {describe_validation_error(exc)}"
    except KeyError as exc:
        return f"{row['id']}: the row has no {exc.args[0] if exc.args else '?'}"
    except (CatalogError, InputError, ValueError, TypeError, ZeroDivisionError) as exc:
        return f"{row['id']}: {exc}"
    return None


def read(data: bytes, name: str, scenario: dict[str, Any], efficiency: Efficiency) -> tuple[list[dict], list[str]]:
    """The usable rows of one file or pasted text, and one problem per row (or for the file) that
    cannot be used. Pure: no session (tests call it)."""
    if len(data) > MAX_UPLOAD_BYTES:
        return [], [f"{name}: larger than {MAX_UPLOAD_BYTES // 2**20} MiB"]
    try:
        parsed = parse_results(data, name=name, scenario=scenario)
    except (ResultsError, InputError) as exc:
        return [], [str(exc)]
    rows, problems = [], []
    for i, row in enumerate(parsed):
        row = dict(row)
        row["options"] = {**scenario, **row["options"]}
        rid = row.get("id")  # untrusted: a short printable string, else the file and row number
        row["id"] = rid if isinstance(rid, str) and 0 < len(rid) <= 80 and rid.isprintable() else f"{name[:60]}#{i + 1}"
        if not any(m.get("scored") for m in row.get("measured", {}).values()):
            problems.append(f"{row['id']}: no measured TTFT, TPOT, latency or throughput to compare")
            continue
        problem = problem_of(row, efficiency)
        rows.append(row) if problem is None else problems.append(problem)
    return rows, problems


def keep(rows: list[dict], new: list[dict]) -> tuple[list[dict], int]:
    """``rows`` with ``new`` added (a row of the same id replaced), the oldest dropped past the
    bounds (:data:`MAX_KEPT_ROWS`, :data:`MAX_KEPT_BYTES`); and how many were dropped."""
    ids = {r["id"] for r in new}
    out = [r for r in rows if r["id"] not in ids] + new
    dropped = 0
    while out and (len(out) > MAX_KEPT_ROWS or len(json.dumps(out)) > MAX_KEPT_BYTES):
        out.pop(0)
        dropped += 1
    return out, dropped


def _add(data: bytes, name: str) -> None:
    sc = st.session_state.get("_scenario")  # the last run's scenario (ui.shell)
    if sc is None:
        _say("error", "ms.no_scenario")
        return
    rows, problems = read(data, name, scenario_of(sc), sc.efficiency)
    for p in problems[:5]:
        _say("error", "ms.problem", problem=p)
    if len(problems) > 5:
        _say("error", "ms.more_problems", n=len(problems) - 5)
    if rows:
        kept, dropped = keep(st.session_state.get(ROWS, []), rows)
        st.session_state[ROWS] = kept
        _say("success", "ms.added", n=len(rows), name=name)
        if dropped:
            _say("warning", "ms.dropped", n=dropped, max=MAX_KEPT_ROWS)
        st.session_state.pop(CALIBRATION, None)


def _on_upload() -> None:
    from ui.state import fresh_upload  # noqa: PLC0415

    up = fresh_upload(UPLOAD)
    if up is not None:
        _add(up.getvalue()[: MAX_UPLOAD_BYTES + 1], str(up.name)[:80])


def _on_paste() -> None:
    text = str(st.session_state.get(TEXT) or "")
    if not text.strip():
        _say("warning", "ms.empty")
        return
    _add(text.encode("utf-8", "replace"), "pasted")


def _on_forget() -> None:
    st.session_state.pop(ROWS, None)
    st.session_state.pop(CALIBRATION, None)


# ----------------------------------------------------------------------------- scoring

@shared_memo(32)
def _scored_cached(rows_json: str, eff_json: str) -> tuple[tuple[Scored, ...], tuple[str, ...]]:
    eff = Efficiency.model_validate_json(eff_json)
    out, problems = [], []
    for row in json.loads(rows_json):
        try:
            out += score_rows([row], eff)
        except (ValidationError, KeyError, CatalogError, InputError, ValueError, TypeError, ZeroDivisionError) as exc:
            problems.append(f"{row.get('id', '?')}: {exc}")
    return tuple(out), tuple(problems)


def rows() -> list[dict]:
    return list(st.session_state.get(ROWS, []))


def scored(rows_: list[dict], efficiency: Efficiency) -> tuple[tuple[Scored, ...], tuple[str, ...]]:
    """Every measured metric of the kept rows against the calculator with these efficiencies (memoized)."""
    if not rows_:
        return (), ()
    return _scored_cached(json.dumps(rows_, sort_keys=True), efficiency.model_dump_json())


def median_error(s: tuple[Scored, ...]) -> float:
    return float(summary(list(s))["all"]["median_abs_error"]) if s else math.nan


# ----------------------------------------------------------------------------- calibration

def applied_values(fitted: Efficiency) -> dict[str, float]:
    """The sidebar control values of a fitted efficiency, rounded to what the controls show and
    clipped to their ranges."""
    by_key = {c.key: c for c in C.EFFICIENCY}
    out = {}
    for field, (key, scale, digits) in APPLY.items():
        ctl = by_key[key]
        v = round(getattr(fitted, field) / scale, digits)
        out[key] = float(min(max(v, ctl.lo), ctl.hi))
    return out


def calibrate_values(rows_: list[dict], values: dict[str, Any], start: Efficiency) -> dict[str, Any]:
    """Fit the efficiency inputs to ``rows_`` from ``start``; the sidebar values (``values`` with
    the fitted ones, rounded) and the mean |log error| and median |error| before and after."""
    fitted, n = calibrate(rows_, start, max_evaluations=CALIBRATE_EVALUATIONS)
    new = applied_values(fitted)
    after_eff = C.efficiency_from({**values, **new})
    before_s, after_s = score_rows(rows_, start), score_rows(rows_, after_eff)
    return {"values": new, "evaluations": n, "rows": len(rows_),
            "log_before": mean_log_error(rows_, start), "log_after": mean_log_error(rows_, after_eff),
            "median_before": median_error(tuple(before_s)), "median_after": median_error(tuple(after_s))}


def _on_calibrate() -> None:
    sc = st.session_state.get("_scenario")
    kept = st.session_state.get(ROWS, [])
    if sc is None or not kept:
        _say("warning", "ms.nothing")
        return
    try:
        result = calibrate_values(kept, sc.values, sc.efficiency)
    except (ValidationError, KeyError, CatalogError, InputError, ValueError, TypeError, ZeroDivisionError) as exc:
        _say("error", "ms.problem", problem=str(exc))
        return
    if not result["log_after"] < result["log_before"]:
        _say("info", "ms.cal_no_gain")
        return
    for key, v in result["values"].items():
        st.session_state[key] = v  # the sidebar's lazy efficiency controls: session, URL, scenario file
    st.session_state[CALIBRATION] = result
    from ui import shell  # noqa: PLC0415

    shell.request_app_rerun()  # the sidebar's values changed: the whole app reruns


# ----------------------------------------------------------------------------- figures' traces

MARK = "#D55E00"  # vermillion (Okabe-Ito): a measured point, distinct from every series colour


@dataclass(frozen=True)
class Point:
    """One measured row as a point: measured and predicted of each metric (NaN where not measured)."""

    row_id: str
    arrival: str
    tp: int
    measured: dict[str, float]
    predicted: dict[str, float]

    def error(self, metric: str) -> float:
        m, p = self.measured.get(metric, math.nan), self.predicted.get(metric, math.nan)
        return p / m - 1.0 if m and np.isfinite(m) and np.isfinite(p) else math.nan


def points(s: tuple[Scored, ...], rows_: list[dict]) -> list[Point]:
    """The scored metrics grouped per row (order kept)."""
    by_row: dict[str, Point] = {}
    meta = {r["id"]: r for r in rows_}
    for x in s:
        r = meta.get(x.row_id, {})
        p = by_row.setdefault(x.row_id, Point(x.row_id, r.get("load", {}).get("arrival", ""),
                                              int(r.get("options", {}).get("tensor_parallel_size") or 1), {}, {}))
        p.measured[x.metric], p.predicted[x.metric] = x.measured, x.predicted
    return list(by_row.values())


def _hover(p: Point, metric: str, unit_scale: float, unit: str, t: T) -> str:
    e = p.error(metric)
    return t("ms.hover", id=html.escape(shorten(p.row_id, 40)), metric=t(f"ms.metric.{metric}"),
             measured=F.number(p.measured[metric] * unit_scale, 1), predicted=F.number(p.predicted[metric] * unit_scale, 1),
             unit=unit, error="—" if not np.isfinite(e) else f"{e * 100:+.1f}")


def frontier_traces(pts: list[Point], t: T, *, per_gpu: bool) -> list[dict]:
    """Measured points on the frontier's two panels (TPOT ms, TTFT ms against output tokens/s):
    a filled vermillion marker at the measurement, a hollow one at the calculator's answer for the
    same settings, a dotted line between them; the hover names the row and the error."""
    out = []
    for k, (metric, xa, ya) in enumerate((("tpot_s", "x", "y"), ("ttft_s", "x2", "y2"))):
        mx, my, px, py, text = [], [], [], [], []
        for p in pts:
            if metric not in p.measured:
                continue
            div = p.tp if per_gpu else 1
            y_m = p.measured.get("output_tokens_per_s", p.predicted.get("output_tokens_per_s", math.nan)) / div
            y_p = p.predicted.get("output_tokens_per_s", math.nan) / div
            mx.append(p.measured[metric] * 1e3)
            my.append(y_m)
            px.append(p.predicted[metric] * 1e3)
            py.append(y_p)
            text.append(_hover(p, metric, 1e3, "ms", t))
        if not mx:
            continue
        lx = [v for a, b in zip(mx, px) for v in (a, b, None)]
        ly = [v for a, b in zip(my, py) for v in (a, b, None)]
        out.append(dict(type="scatter", mode="lines", x=lx, y=ly, line=dict(color=MARK, width=1.5, dash="dot"),
                        hoverinfo="skip", showlegend=False, legendgroup="measured", xaxis=xa, yaxis=ya))
        out.append(dict(type="scatter", mode="markers", x=px, y=py, name=t("ms.trace.predicted"), legendgroup="measured",
                        showlegend=k == 0, marker=dict(symbol="circle-open", size=13, color=MARK, line=dict(width=2.5)),
                        text=text, hovertemplate="%{text}<extra></extra>", xaxis=xa, yaxis=ya))
        out.append(dict(type="scatter", mode="markers", x=mx, y=my, name=t("ms.trace.measured"), legendgroup="measured",
                        showlegend=k == 0, marker=dict(symbol="x", size=14, color=MARK, line=dict(width=1, color="#FFFFFF")),
                        text=text, hovertemplate="%{text}<extra></extra>", xaxis=xa, yaxis=ya))
    return out


def cdf_traces(pts: list[Point], simulated_s, metric: str, t: T) -> list[dict]:
    """Measured means on the load test's latency distribution: each at the share of simulated
    requests at or under it (where it falls in the prediction), the hover with its own prediction."""
    v = np.sort(np.asarray(simulated_s, dtype=float))
    v = v[np.isfinite(v)]
    xs, ys, text = [], [], []
    for p in pts:
        m = p.measured.get(metric)
        if m is None or not np.isfinite(m):
            continue
        xs.append(m * 1e3)
        ys.append(float(np.searchsorted(v, m, side="right")) / max(v.size, 1) * 100.0)
        text.append(_hover(p, metric, 1e3, "ms", t))
    if not xs:
        return []
    return [dict(type="scatter", mode="markers", x=xs, y=ys, name=t("ms.trace.measured_mean"),
                 marker=dict(symbol="x", size=15, color=MARK, line=dict(width=1, color="#FFFFFF")), text=text,
                 hovertemplate="%{text}<extra></extra>")]


# ----------------------------------------------------------------------------- the panel

def current(sc) -> tuple[list[Point], tuple[Scored, ...]]:
    """The kept rows as points, and their scores, against the sidebar's efficiency inputs."""
    kept = rows()
    s, _ = scored(kept, sc.efficiency)
    return points(s, kept), s


def render(sc, t: T, *, key: str) -> None:
    """The "your measurements" panel: upload, paste, each row's error, calibrate, forget.

    Drawn only while open (:func:`ui.layout.lazy_expander`): closed, it sends its label alone, where
    a plain expander sent its ten elements (uploader, text box, columns, buttons) and registered
    its widgets on every rerun (~1.3 ms of script CPU on the frontier, bench/bench_pages.py). Its
    messages come from its own buttons and uploads, so they wait in the session until it is open."""
    # One label whatever it holds, and nothing drawn above it that comes and goes: a new label is
    # a new expander in the browser.
    exp = lazy_expander(st, t("ms.title"), f"ms_panel_{key}")
    if not exp.open:
        return
    kept = rows()
    s, problems = scored(kept, sc.efficiency)
    with exp:
        for level, msg_id, values in st.session_state.pop(MESSAGES, []):
            safe = {k: user_text(v, 300) if isinstance(v, str) else v for k, v in values.items()}
            getattr(st, level)(t(msg_id, **safe))
        st.caption(t("ms.caption"))
        c1, c2 = st.columns(2)
        uploader.file_uploader(c1, t, t("ms.upload"), type=["json", "jsonl", "txt", "log"], key=UPLOAD,
                               on_change=_on_upload, help=t("ms.upload.help"))
        c2.text_area(t("ms.paste"), key=TEXT, height=110, persist_state="session", max_chars=200_000,
                     placeholder="Successful requests: 100\nMaximum request concurrency: 1\n...")
        c2.button(t("ms.paste.add"), on_click=_on_paste, key=f"ms_add_{key}")
        for p in problems:
            st.warning(t("ms.problem", problem=user_text(p, 300)))
        if kept:
            st.table([{t("ms.col.row"): shorten(r.row_id, 60), t("ms.col.metric"): t(f"ms.metric.{r.metric}"),
                       t("ms.col.measured"): F.number(r.measured * (1e3 if r.metric.endswith("_s") else 1), 1),
                       t("ms.col.predicted"): F.number(r.predicted * (1e3 if r.metric.endswith("_s") else 1), 1),
                       t("ms.col.error"): f"{r.error * 100:+.1f} %",
                       t("ms.col.inside"): t("word.yes") if r.inside else t("word.no")} for r in s])
            st.markdown(t("ms.summary", n=len(kept), median=F.number(median_error(s) * 100, 1)))
            b1, b2 = st.columns(2)
            b1.button(t("ms.calibrate"), on_click=_on_calibrate, key=f"ms_calibrate_{key}", type="primary",
                      help=t("ms.calibrate.help"))
            b2.button(t("ms.forget"), on_click=_on_forget, key=f"ms_forget_{key}")
        cal = st.session_state.get(CALIBRATION)
        if cal:
            st.success(t("ms.calibrated", before=F.number(cal["median_before"] * 100, 1),
                         after=F.number(cal["median_after"] * 100, 1), n=cal["rows"],
                         values=", ".join(f"{t(f'ctl.{k}')} = {F.number(v, 3)}" for k, v in cal["values"].items())))
