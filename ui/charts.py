"""Sending Plotly figures cheaply: ``charts.plotly_chart`` is ``st.plotly_chart`` for every page.

What a rerun's charts cost on the server, and what is skipped without changing what the browser
receives (figure builders also avoid Plotly's per-property validation: they build plain dicts and
hand them to ``go.Figure(..., _validate=False)``):

- Plotly's conversion of NumPy arrays to plotly.js typed arrays (``{"dtype": "f8", "bdata": ...}``),
  which ``st.plotly_chart`` runs on every array through ``Figure.to_dict`` (a deep copy, then a
  narwhals-based dataframe check per array: ~1 ms per array, ~50 arrays on the frontier page).
  :func:`encode_arrays` writes the same typed-array spec once, directly; what is left for Plotly
  are strings. ``tests/test_charts.py`` checks the JSON is identical to Plotly's own conversion.
- Plotly's JSON encoder (``PlotlyJSONEncoder.encode``) encodes a figure, then decodes and encodes it
  all again whenever the text holds ``NaN`` or ``Infinity`` anywhere, to write them as ``null``. A
  typed array's base64 text holds ``NaN`` by chance (~1 in 4 of the frontier's 80-90 kB charts, the
  same chart on every rerun): :func:`install_json_check` makes that second pass depend on a NaN or
  infinity *value* (the token after ``[``, ``,`` or ``:``), not on the letters inside a string. The
  JSON is the same; on the frontier page ``st.plotly_chart`` with its encoding went from 2.8 to 1.7 ms
  of a rerun's script thread (bench/element_cost.py), server CPU per rerun 0.955x (6 server pairs).
"""

from __future__ import annotations

import base64
import copy
import json
import threading
from typing import Any, Callable

import numpy as np
import plotly.graph_objects as go

# plotly.js typed-array dtypes (_plotly_utils.utils.plotlyjsShortTypes)
_SHORT = {"int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4",
          "float32": "f4", "float64": "f8"}
_INT_RANGES = ((np.int8, -2**7, 2**7 - 1), (np.int16, -2**15, 2**15 - 1), (np.int32, -2**31, 2**31 - 1))
_UINT_RANGES = ((np.uint8, 2**8 - 1), (np.uint16, 2**16 - 1), (np.uint32, 2**32 - 1))
_SKIPPED_KEYS = frozenset({"geojson", "layer", "layers", "range"})  # plotly leaves these as they are


def typed_array(v: np.ndarray) -> Any:
    """A numeric NumPy array as Plotly encodes it for plotly.js (``_plotly_utils.utils.
    to_typed_array_spec``: 64-bit integers narrowed to the smallest type that holds them); anything
    else is returned unchanged (Plotly then converts it as before).

    >>> typed_array(np.array([1.0, 2.0]))
    {'dtype': 'f8', 'bdata': 'AAAAAAAA8D8AAAAAAAAAQA=='}
    >>> typed_array(np.array([1, 300]))
    {'dtype': 'i2', 'bdata': 'AQAsAQ=='}
    """
    if not isinstance(v, np.ndarray) or v.size == 0 or v.dtype.kind not in "uif":
        return v
    a = np.ascontiguousarray(v)
    if a.dtype == np.int64:
        lo, hi = a.min(), a.max()
        fit = next((t for t, tlo, thi in _INT_RANGES if tlo <= lo and hi <= thi), None)
        if fit is None:
            return v
        a = a.astype(fit)
    elif a.dtype == np.uint64:
        hi = a.max()
        fit = next((t for t, thi in _UINT_RANGES if hi <= thi), None)
        if fit is None:
            return v
        a = a.astype(fit)
    short = _SHORT.get(str(a.dtype))
    if short is None:
        return v
    out = {"dtype": short, "bdata": base64.b64encode(a).decode("ascii")}
    if a.ndim > 1:
        out["shape"] = str(a.shape)[1:-1]
    return out


def encode_arrays(obj: Any) -> Any:
    """Every NumPy array inside dicts and lists replaced by its typed-array spec, in place."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in _SKIPPED_KEYS:
                continue
            if isinstance(value, np.ndarray):
                obj[key] = typed_array(value)
            else:
                encode_arrays(value)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            encode_arrays(value)
    return obj


_NESTED = (dict, list, tuple)


def encoded(obj: Any) -> Any:
    """A copy of ``obj`` (nested dicts and lists) with every NumPy array as its typed-array spec.
    Copies the containers only: what Plotly's ``to_dict`` deep copy protects is kept intact.
    Leaves (strings, numbers) are not visited one call each: a frontier chart holds ~20,000 of
    them (hover texts), which were 2/3 of this function's time."""
    if isinstance(obj, dict):
        return {k: (v if k in _SKIPPED_KEYS else typed_array(v) if isinstance(v, np.ndarray)
                    else encoded(v) if isinstance(v, _NESTED) else v)
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [encoded(v) if isinstance(v, _NESTED) else v for v in obj]
    if isinstance(obj, tuple):
        return type(obj)(encoded(v) if isinstance(v, _NESTED) else v for v in obj)
    return obj


_TEMPLATES: dict[int, Any] = {}


def _default_template() -> Any:
    """The layout template Plotly gives a new figure (Streamlit registers its own as the default)."""
    import plotly.io as pio

    default = pio.templates.default
    key = id(pio.templates[default]) if isinstance(default, str) else id(default)
    if key not in _TEMPLATES:
        _TEMPLATES[key] = go.Figure(layout={}, _validate=False).to_dict()["layout"].get("template")
    return _TEMPLATES[key]


_OWN = frozenset({"__dict__", "__class__", "to_dict", "_encoded", "_materialize"})


class Figure(go.Figure):
    """A ``go.Figure`` built from plain dicts that runs Plotly's constructor only if used as one.

    ``st.plotly_chart`` needs one method, ``to_dict()``, and for a figure nobody touched it returns
    ``{"data": traces, "layout": layout + the default template}`` with the arrays encoded: what
    ``go.Figure(data=traces, layout=layout, _validate=False).to_dict()`` returns, without building
    a trace object per trace, two deep copies and the per-array conversion (frontier figures:
    9.2 -> 2.2 ms build and send). Any other attribute (``fig.data``, ``fig.layout``,
    ``fig.update_layout``: tests, or a page changing the figure) first builds the real figure,
    which then behaves and serializes exactly as ``go.Figure``.
    """

    def __init__(self, data: list[dict], layout: dict, *, sendable: bool = False):  # noqa: D107 (Plotly's constructor: later, if needed)
        # sendable: data and layout are already what to_dict() returns (encoded arrays, the template)
        # and are not used again: to_dict() hands them over as they are (ui.layout.chart).
        self.__dict__["_spec"] = (data, layout)
        self.__dict__["_sendable"] = sendable

    def __getattribute__(self, name: str) -> Any:
        if name not in _OWN and "_spec" in object.__getattribute__(self, "__dict__"):
            object.__getattribute__(self, "_materialize")()
        return object.__getattribute__(self, name)

    def _materialize(self) -> None:
        data, layout = self.__dict__.pop("_spec")
        self.__dict__.pop("_sendable", None)
        go.Figure.__init__(self, data=data, layout=layout, _validate=False)

    def to_dict(self) -> dict:
        spec = self.__dict__.get("_spec")
        if spec is None:
            return go.Figure.to_dict(self)
        if self.__dict__["_sendable"]:
            return {"data": spec[0], "layout": spec[1]}
        return self._encoded(copy.deepcopy)

    def _encoded(self, copy_template: Callable[[Any], Any]) -> dict:
        data, layout = self.__dict__["_spec"]
        data, layout = encoded(data), encoded(layout)
        template = _default_template()
        if "template" not in layout and template is not None:
            layout["template"] = copy_template(template)
        return {"data": data, "layout": layout}


def sendable(fig: go.Figure) -> dict:
    """The figure's ``to_dict()`` for sending once (:func:`ui.layout.chart`): a :class:`Figure`'s
    containers copied and arrays encoded, with the default template *shared*, not copied (~4 kB of
    nested dicts per chart: ~1,600 containers a rerun on the memory page); a Plotly-built figure's
    arrays encoded in place and its own dicts (its layout shallow-copied). Whoever changes the
    result in place copies what it changes (the template: :func:`encoded`)."""
    if "_spec" in fig.__dict__:
        return fig._encoded(lambda template: template)
    encode_arrays(fig._data)
    encode_arrays(fig._layout)
    return {"data": fig._data, "layout": dict(fig._layout)}


def plotly_chart(fig: go.Figure, where: Any = None, **kwargs: Any) -> Any:
    """``st.plotly_chart(fig, **kwargs)`` with the figure's NumPy arrays already in typed-array form.

    The figure builders keep NumPy arrays (tests read ``fig.data[i].x``); this runs just before
    sending. It rewrites the figure's own trace and layout dicts (Plotly's ``BaseFigure`` keeps
    them in ``_data`` and ``_layout``), so pass a figure built for this call.
    """
    import streamlit as st

    if "_spec" not in fig.__dict__:  # a Plotly-built figure: encode its arrays in place
        encode_arrays(fig._data)
        encode_arrays(fig._layout)
    return (where or st).plotly_chart(fig, **kwargs)


def has_non_finite_value(text: str) -> bool:
    """Whether JSON ``text`` holds a NaN or infinity the encoder wrote as a value: ``NaN``,
    ``Infinity`` or ``-Infinity`` at the start or after ``[``, ``,`` or ``:`` (and any white space the
    separators or an indent add). Inside a string such a sequence is only a false alarm (the second
    pass then runs, as before); the letters inside a base64 text never count. (A regular expression
    took 1.2 ms on an 80 kB chart; ``str.find`` and a look back, ~0.1 ms.)

    >>> has_non_finite_value('{"y":[1.0,NaN]}'), has_non_finite_value('{"bdata":"AAANaN8/"}')
    (True, False)
    >>> has_non_finite_value('{"a": -Infinity}'), has_non_finite_value('NaN'), has_non_finite_value('["xInfinity"]')
    (True, True, False)
    """
    for token in ("NaN", "Infinity"):
        i = text.find(token)
        while i >= 0:
            j = i - 1
            if j >= 0 and text[j] == "-":
                j -= 1
            while j >= 0 and text[j] in " \t\r\n":
                j -= 1
            if j < 0 or text[j] in "[,:":
                return True
            i = text.find(token, i + 1)
    return False


_JSON_LOCK = threading.Lock()


def install_json_check() -> bool:
    """Patch Plotly's ``PlotlyJSONEncoder.encode`` (once per process, from :mod:`ui.shell`): the
    decode-and-encode pass that turns ``NaN`` / ``Infinity`` into ``null`` runs only where the first
    pass wrote such a value (module doc). Left alone where the encoder is not what this expects."""
    from _plotly_utils import utils as pu

    enc = pu.PlotlyJSONEncoder
    with _JSON_LOCK:
        if getattr(enc.encode, "_non_finite_check", False):
            return True
        if getattr(enc.encode, "__qualname__", "") != "PlotlyJSONEncoder.encode" or not hasattr(enc, "coerce_to_strict"):
            return False
        plotly_encode = enc.encode

        def encode(self, o):
            encoded_o = json.JSONEncoder.encode(self, o)
            if ("NaN" not in encoded_o and "Infinity" not in encoded_o) or not has_non_finite_value(encoded_o):
                return encoded_o  # what Plotly returns when it finds no "NaN" / "Infinity" at all
            # A real NaN or infinity (or a string that looks like one): Plotly's second pass, as it writes it
            try:
                strict = json.loads(encoded_o, parse_constant=self.coerce_to_strict)
            except ValueError:
                return plotly_encode(self, o)  # (invalid separators: Plotly's own error)
            return json.dumps(strict, sort_keys=self.sort_keys, indent=self.indent,
                              separators=(self.item_separator, self.key_separator))

        encode._non_finite_check = True
        encode.__doc__ = plotly_encode.__doc__
        enc.encode = encode
        return True
