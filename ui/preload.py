"""Import, once and completely, what Plotly and Streamlit would otherwise import lazily from
inside page scripts.

Why: every browser session runs its script in its own thread. On a fresh server, 8 sessions
opening at once used to fail with ``AttributeError: partially initialized module 'pandas' has
no attribute 'Series'``: one session's ``st.table``/``st.dataframe`` started importing pandas
(Streamlit converts tables through pandas and pyarrow), and meanwhile another session's
``st.plotly_chart`` serialized its figure, where Plotly looks pandas up in ``sys.modules`` without
importing it (``_plotly_utils.optional_imports.get_module(..., should_load=False)``) and found the
half-imported module. A module enters ``sys.modules`` before its body runs, so the only root fix
is that nothing is half-imported when a page runs: this module is imported by :mod:`ui.shell`
(the first import of ``app.py`` and of every page), and Python's import lock makes every other
session wait until ``ui.shell`` (and so this module) has finished importing.

``tests/test_cold_start.py`` checks that no page run imports a module of these packages for the
first time, and opens 8 sessions at once on a fresh server.
"""

from __future__ import annotations

import gc

import narwhals.stable.v1  # noqa: F401  (Plotly's dataframe layer)
import narwhals._interchange.dataframe  # noqa: F401  (st.table of a list of rows)
import pandas  # noqa: F401  (looked up in sys.modules by Plotly's JSON encoder)
import pandas.api.types  # noqa: F401
import plotly.graph_objects  # noqa: F401
import plotly.io  # noqa: F401
import plotly.io._json  # noqa: F401  (imported by st.plotly_chart's plotly.io.to_json)
import plotly.subplots  # noqa: F401
import plotly.tools  # noqa: F401  (st.plotly_chart's return_figure_from_figure_or_data)
import pyarrow  # noqa: F401  (st.table / st.dataframe serialize through Arrow)

PACKAGES = ("pandas", "pyarrow", "narwhals", "plotly", "_plotly_utils", "dateutil")  # checked by the test


def _exercise() -> None:
    """Run the two library paths that import lazily (a table to Arrow, a figure to JSON) once, so
    every module they touch is imported here, whatever their versions import."""
    from streamlit import dataframe_util

    dataframe_util.convert_anything_to_arrow_bytes([{"a": "x", "b": 1.5}])
    fig = plotly.graph_objects.Figure(data=[dict(type="scatter", x=[1, 2], y=[1.0, 2.0]),
                                            dict(type="scattergl", x=[1, 2], y=[1.0, 2.0]),  # the planner's Pareto
                                            dict(type="bar", x=["a"], y=[1], marker=dict(pattern=dict(shape="x")))],
                                      layout=dict(title=dict(text="t"), annotations=[dict(text="a")],
                                                  shapes=[dict(type="rect")],
                                                  xaxis=dict(title=dict(text="x", font=dict(size=1)), tickfont=dict(size=1)),
                                                  yaxis=dict(title=dict(text="y", font=dict(size=1)), tickfont=dict(size=1))))
    plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True), validate=False)
    # Figures built through Plotly's validating API (the load-test page): make_subplots, update_layout, add_*
    sub = plotly.subplots.make_subplots(rows=2, cols=1, shared_xaxes=True, specs=[[{}], [{"secondary_y": True}]])
    sub.add_trace(plotly.graph_objects.Scatter(x=[1], y=[1], mode="lines+markers", line=dict(color="#000000", dash="dot"),
                                               marker=dict(size=1)), row=2, col=1, secondary_y=True)
    sub.add_hline(y=1, line=dict(dash="dash"), annotation_text="a", row=1, col=1)
    sub.add_vrect(x0=0, x1=1, opacity=0.1, line_width=0)
    sub.update_layout(title=dict(text="t", font=dict(size=1)), font=dict(size=1),
                      legend=dict(orientation="h", yref="container", font=dict(size=1)),
                      margin=dict(t=1), hoverlabel=dict(font_size=1))
    sub.update_xaxes(title_text="x", type="log")
    sub.update_yaxes(title_text="y", rangemode="tozero")
    plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(sub, validate_figure=True), validate=False)


_exercise()

# A full garbage collection walks every tracked object, and the libraries imported above are
# ~125,000 of them: about 50 ms of CPU. Streamlit forced one after every script run by default
# (``runner.postScriptGC``, off in .streamlit/config.toml: the rest still cost ~2 ms per rerun), and
# Python's own collector still runs one now and then. They live as long as the server, so move
# them out of the collector's sight (reference counting still frees them; only cycle detection
# skips them). Objects created later (sessions, results) are collected as before.
gc.freeze()

# Python's collector starts a young-generation pass every 700 net allocations of tracked objects, and
# a full one after ten middle ones when enough survived: in issue 18's room of 50 sessions that was
# ~1,000 young passes and a full one every ~17 s, each full one ~60 ms with every thread stopped
# (bench/ui_profile.py, "GC pauses"). A page run allocates tens of thousands of short-lived objects
# (widgets, messages, figure dicts), so a larger young generation lets most of them die by reference
# counting before any pass, and fewer survive into the old generation.
GC_THRESHOLDS = (10_000, 10, 10)
gc.set_threshold(*GC_THRESHOLDS)
