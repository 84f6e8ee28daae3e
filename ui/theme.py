"""One colour per concept, across every chart of the app (Okabe–Ito, colour-blind safe).

Okabe & Ito (2008), "Color Universal Design": orange #E69F00, sky blue #56B4E9, bluish green
#009E73, yellow #F0E442, blue #0072B2, vermillion #D55E00, reddish purple #CC79A7, plus a
neutral grey for memory nobody can use. Values printed in the course (not computed) reuse the
concept's colour with a hatch pattern, so "printed vs computed" never needs a new colour.
"""

from __future__ import annotations

from typing import Final

COLORS: Final[dict[str, str]] = {
    "weights": "#0072B2",  # blue
    "kv": "#E69F00",  # orange: KV cache in use
    "activations": "#009E73",  # bluish green
    "overhead": "#CC79A7",  # reddish purple: CUDA graphs, NCCL, workspaces
    "reserved": "#999999",  # grey: (1 − gpu_memory_utilization) left to other processes
    "free": "#56B4E9",  # sky blue: KV pool not in use
    "limit": "#D55E00",  # vermillion: capacity lines, "does not fit"
}

# The memory stack, bottom to top (the order of the stacked bars and the legend).
STACK_ORDER: Final[tuple[str, ...]] = ("weights", "activations", "overhead", "kv", "free", "reserved")

PRINTED_PATTERN: Final[str] = "/"  # hatch for values printed in the course
WASTE_PATTERN: Final[str] = "x"  # hatch for wasted KV memory

FONT_SIZE: Final[int] = 16  # chart text, readable on a projector
TITLE_SIZE: Final[int] = 20
CHART_HEIGHT: Final[int] = 480

# Performance pages (roofline, frontier, scheduler): concepts the memory charts do not have.
# Operators reuse the memory concept they stream (MLP/projections = weights, attention = KV,
# elementwise = activations); scheduler phases and SLA marks take Paul Tol's colour-blind-safe
# "muted" colours, so they never collide with a memory concept.
COLORS.update({
    "op.qkv_proj": "#56B4E9",  # sky blue
    "op.attention": "#E69F00",  # orange, as the KV cache it reads
    "op.o_proj": "#CC79A7",  # reddish purple
    "op.mlp": "#0072B2",  # blue, as the weights it streams
    "op.lm_head": "#000000",  # black
    "op.elementwise": "#009E73",  # bluish green, as activations
    "roof": "#444444",  # dark grey: memory slope and compute roofs
    "prefill": "#CC6677",  # Tol rose: prompt tokens (compute-bound)
    "decode": "#332288",  # Tol indigo: one token per request (memory-bound)
    "stalled": "#DDCC77",  # Tol sand: running, but skipped by this step
    "queued": "#BBBBBB",  # light grey: arrived, waiting for a slot
    "feasible": "#117733",  # Tol green: meets the SLA
    "traffic": "#44AA99",  # Tol teal: the offered load (rate ÷ replicas), readable on light and dark
})
# Scenarios overlaid on the frontier: your scenario first (black), then up to four variants.
SERIES_COLORS: Final[tuple[str, ...]] = ("#000000", "#0072B2", "#E69F00", "#CC79A7", "#999933")

# The dark theme (Streamlit's [theme.dark], background #0E1117): the inks that carry meaning on white
# (black and dark greys, Tol indigo) would vanish on near-black. ui.layout.chart swaps them for light
# equivalents when the viewer's theme is dark. Contrast on #0E1117 ≥ 4.5:1 each (WCAG text level).
# Chart text (tick labels, axis and legend titles): dark grey on white (12.6:1), where Streamlit's
# Plotly theme drew #808495 (3.7:1 on white, under WCAG's 4.5:1 for text); light grey on dark below.
TEXT_INK: Final[str] = "#333333"
# Text in a concept's colour where that colour is too light for text on white: vermillion darkened
# (5.5:1 on white); on the dark background the concept's own #D55E00 reads (4.9:1).
LIMIT_TEXT: Final[str] = "#B34700"
FEASIBLE_FILL: Final[str] = "rgba(17, 119, 51, 0.13)"  # COLORS["feasible"] at 13 % opacity: "meets the target"
DARK_INKS: Final[dict[str, str]] = {
    "#000000": "#F2F2F2",  # your scenario, lm_head, step time, first-step marks
    "#333333": "#D9D9D9",  # annotation arrows and text
    "#444444": "#BFBFBF",  # roofline: memory slope and compute roofs
    "#332288": "#9C8FE0",  # decode (Tol indigo, lightened)
    LIMIT_TEXT: COLORS["limit"],  # "does not fit" and other limit labels
    # "meets the target" shading: Tol green at 13 % is #0F1E1A on #0E1117, invisible; at 28 % of a
    # lighter green the region reads (#1D4132) and the curves stay on top of it
    FEASIBLE_FILL.upper(): "rgba(68, 187, 119, 0.28)",
}
