"""Controls of the speculative-decoding view (specs only, URL-bound; no streamlit here)."""

from __future__ import annotations

from ui.controls import Control

SPEC_ON = Control("spec_on", "toggle", False)  # the frontier's, load test's and planner's switch
SPEC_METHOD = Control("spec_method", "select", "eagle3", options=("ngram", "eagle", "eagle3", "mtp"))
SPEC_K = Control("spec_k", "slider", 3, lo=1, hi=8, step=1)
SPEC_ACCEPTANCE = Control("spec_acceptance", "slider", 0.7, lo=0.05, hi=0.95, step=0.05, integer=False)
SPECULATIVE = (SPEC_METHOD, SPEC_K, SPEC_ACCEPTANCE)
