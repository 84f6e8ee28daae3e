"""bench/api_output_path.py: the three tests of the API-server output-path hypothesis, with hand-computed
values, and the data file's numbers checked against the measured rows they come from."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import api_output_path as aop  # noqa: E402

DATA = json.loads(aop.DATA.read_text())


class TestChunksAfterFirst:
    def test_one_token_per_chunk_q14a(self):
        # gs-q14a-short: 4 tokens, mean TPOT 233.35 ms, mean ITL 175.01 ms: 3 x 233.35 / 175.01 = 4.0001
        assert aop.chunks_after_first(output_len=4, tpot_mean_s=0.23335, itl_mean_s=0.17501) == pytest.approx(4.0, abs=1e-3)

    def test_merged_tokens_give_fewer_chunks(self):
        # 4 tokens, the last 3 merged into one chunk 0.6 s after the first: TPOT = 0.6 / 3 = 0.2 s;
        # ITLs (~0, 0.6): mean 0.3 s -> 3 x 0.2 / 0.3 = 2 chunks after the first
        assert aop.chunks_after_first(output_len=4, tpot_mean_s=0.2, itl_mean_s=0.3) == pytest.approx(2.0)

    def test_broadcasts(self):
        k = aop.chunks_after_first(output_len=np.array([4, 11]), tpot_mean_s=0.1, itl_mean_s=np.array([[0.1], [0.2]]))
        # (3, 10) x 0.1 / (0.1, 0.2) -> [[3, 10], [1.5, 5]]
        np.testing.assert_allclose(k, [[3.0, 10.0], [1.5, 5.0]])


class TestOutputCostBounds:
    def test_q235h_sharegpt(self):
        # 4015.36 output tokens/s -> 1 / 4015.36 = 249.0 us needed; peak 9638 chunks/s -> <= 103.8 us
        need, most = aop.output_cost_bounds_s(output_tok_s=4015.36, peak_output_tok_s=9638)
        assert need == pytest.approx(249.04e-6, rel=1e-3) and most == pytest.approx(103.76e-6, rel=1e-3)

    def test_needed_exceeds_bound_on_every_run(self):
        rows = DATA["gpustack_short_bursts"] + DATA["gpustack_sharegpt_bursts"]
        need, most = aop.output_cost_bounds_s(output_tok_s=[r["output_tok_s"] for r in rows],
                                              peak_output_tok_s=[r["peak_output_tok_s"] for r in rows])
        assert np.all(need > 2.0 * most)


def test_short_bursts_read_one_chunk_per_token():
    for r in DATA["gpustack_short_bursts"]:
        k = aop.chunks_after_first(output_len=r["output_len"], tpot_mean_s=r["tpot_ms"][0], itl_mean_s=r["itl_ms"][0])
        assert k == pytest.approx(r["output_len"], abs=0.02), r["row"]
        assert r["itl_ms"][1] / r["tpot_ms"][1] == pytest.approx(1.0, abs=0.05), r["row"]


def test_data_matches_the_measured_rows():
    """The data file's TTFT/TPOT means are the rows' scored values (same pages)."""
    rows = {}
    for name in ("vllm_benchmarks.jsonl", "vllm_found.jsonl"):
        for line in (ROOT / "bench" / "data" / name).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                rows[row.get("id")] = row
    for r in DATA["gpustack_short_bursts"] + DATA["gpustack_sharegpt_bursts"][:1]:
        m = rows[r["row"]]["measured"]
        assert m["tpot_s"]["value"] == pytest.approx(r["tpot_ms"][0] * 1e-3, rel=1e-4), r["row"]
        assert m["ttft_s"]["value"] == pytest.approx(r["ttft_ms"][0] * 1e-3, rel=1e-4), r["row"]


def test_prefill_tokens_for_step_is_monotone_and_capped():
    kw = dict(model="Qwen/Qwen3-14B", gpu="h100-sxm", tp=1)
    p = [aop.prefill_tokens_for_step(s, **kw) for s in (0.05, 0.2, 0.6)]
    assert p[0] < p[1] < p[2] <= 8192
    assert aop.prefill_tokens_for_step(10.0, **kw) == 8192  # slower than a full budget: the budget
