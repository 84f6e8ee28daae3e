"""The MLA layers' fixed time (calc.timing.mla_layers, Efficiency.mla_layer_fixed_s) against the
public vLLM runs it was derived from (bench/data/mla_moe_lowbatch_found.jsonl)."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np
import pytest

from calc.cli.measured import efficiency_for_engine
from calc.spec.catalog import get_gpu, get_model
from calc.spec.inputs import Efficiency, ServingConfig
from calc.timing.estimate import engine_numbers
from calc.timing.mla_layers import mla_fixed_time_s
from calc.timing.serving import decode_step
from calc.traffic.steptime import StepTimer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.mla_layer_check import load_rows, predicted  # noqa: E402

DSR1 = "deepseek-ai/DeepSeek-R1"


def _e(model, tp=8, gpu="h200", **eff):
    return engine_numbers(get_model(model), get_gpu(gpu), ServingConfig(tensor_parallel_size=tp, max_model_len=8192),
                          Efficiency(**eff))


def test_formula_broadcasts_and_is_zero_without_mla():
    assert mla_fixed_time_s(num_mla_layers=np.array([0, 61]), mla_layer_fixed_s=150e-6).tolist() == [0.0, 61 * 150e-6]


def test_only_mla_models_pay_it_once_per_layer():
    assert _e(DSR1).attention_fixed_s == pytest.approx(61 * Efficiency().mla_layer_fixed_s)
    assert _e("meta-llama/Llama-3.1-8B", tp=1, gpu="h100-sxm").attention_fixed_s == 0.0
    assert _e("Qwen/Qwen3-235B-A22B", gpu="h100-sxm").attention_fixed_s == 0.0


def test_decode_step_grows_by_the_floor_at_every_batch_and_the_simulator_agrees():
    on, off = _e(DSR1), _e(DSR1, mla_layer_fixed_s=0.0)
    for b in (1, 16, 256):
        d = float(decode_step(on, batch=b, context_tokens=2000).step_s - decode_step(off, batch=b, context_tokens=2000).step_s)
        assert d == pytest.approx(61 * Efficiency().mla_layer_fixed_s, rel=1e-9)
    assert StepTimer(on, max_tokens=4096).fast  # the simulator's fast path equals engine_step


def test_other_engines_do_not_take_vllms_floor():
    assert efficiency_for_engine("TensorRT-LLM v0.6", Efficiency()).mla_layer_fixed_s == 0.0
    assert efficiency_for_engine("vLLM 0.11", Efficiency()).mla_layer_fixed_s == Efficiency().mla_layer_fixed_s


def test_the_found_single_node_rows_are_met_and_were_far_off_without_it():
    errors_on, errors_off = [], []
    for row in load_rows():
        if int(row["options"].get("nodes", 1)) != 1:
            continue
        for metric in ("tpot_s", "output_tokens_per_s"):
            m = row["measured"].get(metric)
            if not (m and m.get("scored")):
                continue
            errors_on.append(abs(predicted(row, metric, Efficiency().mla_layer_fixed_s) / m["value"] - 1))
            errors_off.append(abs(predicted(row, metric, 0.0) / m["value"] - 1))
    assert len(errors_on) == 3
    assert statistics.median(errors_off) > 0.5 and max(errors_on) < 0.12
