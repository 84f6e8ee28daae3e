"""ui.prefixcache.figures: log axes labelled in full numbers, as on the other pages (issue #19's look
check: Plotly's own labels put "2 3 4 5 6 7 8 9" in small print between decades and wrote "10k")."""

from types import SimpleNamespace

import numpy as np

from ui.i18n import Translator
from ui.prefixcache import figures as PF


def test_ttft_axes_written_out():
    rate = np.array([0.1, 0.3, 1.0, 3.0, 10.0])
    ttft = np.array([0.1, 0.12, 0.2, 0.9, 20.0])  # 100 ms … 20 s
    ok = np.array([True, True, True, True, False])
    point = SimpleNamespace(rate_rps=rate, ttft_s=ttft, ttft_p95_s=ttft * 2, stable=ok,
                            ttft_off_s=ttft * 2, ttft_p95_off_s=ttft * 3, stable_off=ok)
    fig = PF.ttft_figure(point, Translator("en"), chosen_rate=2.0)
    x, y = fig.layout.xaxis, fig.layout.yaxis
    assert x.type == y.type == "log"
    assert list(x.ticktext) == ["0.1", "0.2", "0.5", "1", "2", "5", "10"]
    # y: the stable rates only (the 10 req/s point is dropped): 100 ms … 0.9 s × 3 = 2,700 ms
    assert list(y.ticktext) == ["100", "200", "500", "1,000", "2,000"]


def test_hit_rate_x_axis_written_out():
    items = np.array([1, 10, 100, 1000])
    fig = PF.hit_rate_figure(items, [[0.6, 0.6, 0.3, 0.05]], ["2 req/s"], chosen=10, held=[50.0],
                             t=Translator("en"), chat=False)
    assert fig.layout.xaxis.type == "log"
    assert list(fig.layout.xaxis.ticktext) == ["1", "10", "100", "1,000"]  # three decades: powers of ten only
    assert fig.layout.yaxis.type == "linear" and list(fig.layout.yaxis.range) == [0, 100]
