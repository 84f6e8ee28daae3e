"""The Chinese UI names each latency and throughput metric one way: the course's own words
(chapter 3, §3.4–3.5: 首Token延迟, 单Token延迟, 吞吐量), so a reader moving between the chapter and
the pages never meets three names for TTFT."""

from __future__ import annotations

import re

from ui.i18n import ZH

# Other names the UI once used for the same metrics (issue 19: TTFT was written three ways).
VARIANTS = {
    "TTFT": ("首字延迟", "首 token 时间", "首 token 延迟", "首个 token", "首词元"),
    "TPOT": ("每 token 时间", "每个输出 token 的时间", "每 token 毫秒", "token 间延迟", "单 token 延迟"),
}


def test_no_other_names_for_ttft_and_tpot():
    found = [(key, v) for key, text in ZH.items() for names in VARIANTS.values() for v in names
             if v.lower() in text.lower() and v in text]
    assert not found, found


def test_metric_names_are_the_course_words():
    # every Chinese string that spells out TTFT or TPOT in words uses the course's term
    for key, text in ZH.items():
        for m in re.finditer(r"首 ?[Tt]oken ?(延迟|时间|时延)|单 ?[Tt]oken ?(延迟|时间|时延)", text):
            assert m.group(0) in ("首 Token 延迟", "单 Token 延迟"), (key, text)
    assert ZH["lt.row.ttft_s"] == "TTFT（首 Token 延迟）"
    assert ZH["lt.row.tpot_s"] == "TPOT（单 Token 延迟）"
    assert ZH["case.metric.ttft_ms"] == "首 Token 延迟" and ZH["case.metric.tpot_ms"] == "单 Token 延迟"


def test_throughput_metric_is_tuntuliang():
    # as a metric (a label or axis), throughput is 吞吐量; "高吞吐" (a preset's adjective) and
    # "有效吞吐" (goodput) are other words
    for key in ("cmp.m.output_tokens_per_s", "fr.metric.x", "fr.y.total", "fr.y.per_gpu", "db.y_right",
                "lt.metric.throughput", "case.metric.tokens_per_s"):
        assert "吞吐量" in ZH[key], (key, ZH[key])
