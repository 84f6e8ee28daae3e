"""The command line's output: JSON-ready values, the table format and the "does not fit" record."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from calc.sizing.fit import DoesNotFit
from calc.spec.units import GB, GiB, KiB, MiB


def _plain(x: Any) -> Any:
    a = np.asarray(x)
    return a.item() if a.ndim == 0 else a.tolist()


def does_not_fit_record(d: DoesNotFit | None) -> dict[str, Any] | None:
    """The JSON object beside ``fits: false``: vLLM's estimated maximum model length, the
    alternatives that fit (:func:`calc.sizing.fit.what_would_fit`) and a one-line message."""
    if d is None:
        return None
    return {
        "max_model_len_that_fits": d.max_model_len_that_fits,
        "kv_needed_bytes": d.kv_needed_bytes, "kv_available_bytes": d.kv_available_bytes,
        "alternatives": [{"change": a.change, "value": a.value, "vllm_flags": a.vllm_flags,
                          "max_model_len": a.max_model_len, "max_concurrency": round(a.max_concurrency, 4),
                          "requests_at_context": a.requests_at_context, "meets_goal": a.meets_goal}
                         for a in d.alternatives],
        "message": d.message,
    }


def _fmt(key: str, value: Any) -> str:
    if key.endswith("_bytes") or key.endswith("_bytes_per_request") or key == "kv_bytes_per_token":
        v = float(value)
        if abs(v) >= GiB:
            return f"{v / GiB:,.2f} GiB ({v / GB:,.2f} GB)"
        if abs(v) >= MiB:
            return f"{v / MiB:,.2f} MiB ({v:,.0f} B)"
        if abs(v) >= KiB:
            return f"{v / KiB:,.2f} KiB ({v:,.0f} B)"
        return f"{v:,.0f} B"
    if isinstance(value, float):
        return f"{value:,.4g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def print_table(d: dict[str, Any], out=None) -> None:
    out = sys.stdout if out is None else out  # looked up per call, so redirection (capsys) works
    advice = d.get("does_not_fit")
    d = {k: v for k, v in d.items() if k != "does_not_fit"}
    width = max(len(k) for k in d)
    for k, v in d.items():
        print(f"{k:<{width}}  {_fmt(k, v)}", file=out)
    if advice:  # after the table: vLLM's refusal in one line, then one alternative a line
        print(f"\ndoes not fit: {advice['message']}", file=out)
        for a in advice["alternatives"]:
            goal = "  meets the goal" if a["meets_goal"] else ""
            print(f"  {a['vllm_flags']:<42}  {a['max_concurrency']:,.1f} requests of {a['max_model_len']:,} tokens{goal}",
                  file=out)


def add_bands(record: dict[str, Any], metrics: dict[str, str], *, family: str, moe: bool,
              basis_key: str = "band_basis", condition: str = "engine") -> dict[str, Any]:
    """``record`` with ``<metric>_low`` / ``<metric>_high`` beside each of ``metrics`` (field →
    load regime, :mod:`calc.timing.bands`) and ``band_basis``: per band cell used, its regime,
    measurements, their median and p90 |error|, the label and the fields it covers. A field whose
    value is missing (None) gets None bounds. ``basis_key``: the field the bases go in;
    ``condition``: which process sets the pace (:func:`calc.timing.bands.load_condition`)."""
    from calc.timing.bands import BandKey, band, band_basis, metric_group  # noqa: PLC0415

    out, basis = dict(record), {}
    for field, regime in metrics.items():
        if field not in record:
            continue
        b = band_basis(BandKey(regime, family, moe, metric_group(field), condition))
        value = record[field]
        lo, hi = (None, None) if value is None else (float(x) for x in band(value, b))
        out[f"{field}_low"], out[f"{field}_high"] = lo, hi
        entry = basis.setdefault(b.key.cell(("regime", "condition", "family", "moe")), b.record())
        entry.setdefault("fields", []).append(field)
    out[basis_key] = basis
    return out
