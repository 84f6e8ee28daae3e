"""Page controls of the disaggregation page (URL-bound specs; widgets drawn by
:func:`ui.state.render_control`). No streamlit here."""

from __future__ import annotations

from calc.traffic.disaggregation import kv_links
from ui.controls import Control
from ui.traffic import LENGTH_SPREAD, LENGTHS, RATE, SLA_STAT, SLA_TPOT_MS, SLA_TTFT_MS

DG_GPUS = Control("dg_gpus", "slider", 8, lo=2, hi=64, step=1)  # the GPU count compared at
DG_LINK = Control("dg_link", "select", "ib-ndr", options=lambda: tuple(kv_links()))
DG_BW = Control("dg_bw_gb_s", "number", None, lo=0.1, hi=10_000.0, step=5.0, integer=False, optional=True)
# The rate, the SLA and the lengths' spread are the ones every page shares (ui.traffic).
DISAGG = (RATE, SLA_TTFT_MS, SLA_TPOT_MS, SLA_STAT, DG_GPUS, DG_LINK, DG_BW, LENGTHS, LENGTH_SPREAD)
