"""The planner's disaggregated options (calc.plan.disaggregation) and `plan --disaggregated`."""

from __future__ import annotations

import json
import time

import pytest

from calc.cli.main import main
from calc.plan.disaggregation import plan_disaggregated, verdict
from calc.plan.search import PlanRequest, plan
from calc.spec.catalog import get_gpu, get_model, list_gpus
from calc.traffic.disaggregation import disaggregated_open_loop, make_pools
from calc.spec.inputs import ServingConfig

LLAMA8 = get_model("meta-llama/Llama-3.1-8B")
REQ = PlanRequest(rate_rps=40, input_len=1000, output_len=200, ttft_slo_s=1.0, tpot_slo_s=0.05)


def test_default_question_answers_in_under_a_second():
    plan_disaggregated(LLAMA8, list_gpus(), REQ, link_bw_bytes_per_s=40e9)  # imports, first-call caches
    t = time.process_time()
    rows = plan_disaggregated(LLAMA8, list_gpus(), REQ, link_bw_bytes_per_s=40e9)
    assert time.process_time() - t < 1.0
    assert rows and all(r.meets_slo for r in rows)


@pytest.mark.parametrize("percentile", ["mean", "p95"])
def test_rows_meet_the_sla_in_the_analytic_model(percentile):
    """Each row, rebuilt as pools and judged by disaggregated_open_loop at the rate (round robin), meets the SLA."""
    req = REQ.model_copy(update={"percentile": percentile})
    rows = plan_disaggregated(LLAMA8, [get_gpu("h100-sxm")], req, link_bw_bytes_per_s=40e9)
    assert rows
    for r in rows[:4]:
        pools = make_pools(LLAMA8, get_gpu(r.gpu), ServingConfig(input_len=1000, output_len=200, quantization=r.quantization),
                           prefill_instances=r.prefill_instances, decode_instances=r.decode_instances,
                           link_bw_bytes_per_s=40e9, prefill_tensor_parallel_size=r.prefill_tensor_parallel_size,
                           decode_tensor_parallel_size=r.decode_tensor_parallel_size)
        a = disaggregated_open_loop(pools, input_len=1000, output_len=200, rate_rps=40)
        ttft = float(a.ttft_s if percentile == "mean" else a.ttft_percentile_s)
        tpot = float(a.tpot_s if percentile == "mean" else a.tpot_percentile_s)
        assert ttft <= 1.0 and tpot <= 0.05 * 1.02, r.label
        assert r.gpus_total == r.prefill_instances * r.prefill_tensor_parallel_size + \
            r.decode_instances * r.decode_tensor_parallel_size


def test_rate_matching_counts_the_transfer():
    # A slow link (1 GB/s: 1000 tokens x 131,072 B = 131 ms a prompt) leaves less of the TTFT
    # target to the prefill queue: more prefill instances (or none that fits) for the same SLA.
    tight = REQ.model_copy(update={"ttft_slo_s": 0.3})
    fast = plan_disaggregated(LLAMA8, [get_gpu("h100-sxm")], tight, link_bw_bytes_per_s=100e9, tensor_parallel_sizes=(1,),
                              quantizations=("auto",))
    slow = plan_disaggregated(LLAMA8, [get_gpu("h100-sxm")], tight, link_bw_bytes_per_s=1e9, tensor_parallel_sizes=(1,),
                              quantizations=("auto",))
    assert fast
    assert not slow or slow[0].prefill_instances > fast[0].prefill_instances
    # + 4,032 descriptors (63 blocks x 32 layers x 2) x 2.4 us
    assert fast[0].kv_transfer_s == pytest.approx(1000 * 131072 / 100e9 + 4032 * 2.4e-6)


def test_verdict_compares_the_best_of_each():
    co = plan(LLAMA8, [get_gpu("h100-sxm")], REQ).ranked
    dis = plan_disaggregated(LLAMA8, [get_gpu("h100-sxm")], REQ, link_bw_bytes_per_s=40e9)
    v = verdict(co, dis)
    assert v.colocated_gpus == co[0].gpus_total and v.disaggregated_gpus == dis[0].gpus_total
    assert isinstance(v.pays, bool)
    assert verdict([], dis).pays is None


def test_cli_plan_disaggregated_marks_rows(capsys):
    args = ["plan", "--model", "meta-llama/Llama-3.1-8B", "--rate", "20", "--input-len", "1000", "--output-len", "200",
            "--ttft-slo-ms", "1000", "--tpot-slo-ms", "50", "--gpus", "h100-sxm", "--top", "3"]
    assert main(args + ["--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain and "disaggregated" not in plain[0]  # without the flag nothing changes
    assert main(args + ["--format", "json", "--disaggregated", "--kv-link", "ib-ndr"]) == 0
    cap = capsys.readouterr()
    rows = json.loads(cap.out)
    assert any(r["disaggregated"] for r in rows) and any(not r["disaggregated"] for r in rows)
    d = next(r for r in rows if r["disaggregated"])
    assert d["deployment"].endswith("D") and "kv_transfer_s" in d and "--kv-transfer-config" in d["vllm_command"]
    assert "disaggregation" in cap.err


def test_same_gpus_arithmetic():
    from calc.plan.disaggregation import same_gpus
    r = same_gpus(LLAMA8, get_gpu("h100-sxm"), ServingConfig(input_len=1000, output_len=200), gpu_counts=range(1, 9),
                  ttft_slo_s=1.0, tpot_slo_s=0.05, link_bw_bytes_per_s=40e9)
    assert r.colocated_rps_per_replica > 0 and r.prefill_rps_per_instance > 0 and r.decode_rps_per_instance > 0
    # colocated: one engine per GPU at TP 1 -> N x lambda_c
    assert r.colocated_rps[3] == pytest.approx(4 * r.colocated_rps_per_replica)
    # 4 GPUs split 3:1, 2:2, 1:3: each carries min(P x lambda_p, D x lambda_d); the best is the largest
    p, d, rate = r.splits(4)
    assert p.tolist() == [1, 2, 3] and d.tolist() == [3, 2, 1]
    assert rate[0] == pytest.approx(min(r.prefill_rps_per_instance, 3 * r.decode_rps_per_instance))
    assert r.disaggregated_rps[3] == pytest.approx(rate.max())
    assert r.disaggregated_rps[0] == 0  # one GPU cannot be split
    assert r.kv_transfer_s == pytest.approx(1000 * 131072 / 40e9 + 4032 * 2.4e-6)  # + 4,032 descriptors x 2.4 us


def test_disaggregation_pays_for_long_prompts_and_a_tight_tpot():
    # Llama-3.1-70B, 4,000-token prompts, 300 output tokens, 10 req/s, TTFT 2 s / TPOT 40 ms on H100:
    # prefill chunks stretch every colocated decode step; split pools need fewer GPUs for the same SLA
    arch = get_model("meta-llama/Llama-3.1-70B")
    req = PlanRequest(rate_rps=10, input_len=4000, output_len=300, ttft_slo_s=2.0, tpot_slo_s=0.04)
    gpus = [get_gpu("h100-sxm")]
    v = verdict(plan(arch, gpus, req).ranked, plan_disaggregated(arch, gpus, req, link_bw_bytes_per_s=40e9))
    assert v.pays is True and v.disaggregated_gpus < v.colocated_gpus


def test_cli_plan_kv_descriptor_us(capsys):
    args = ["plan", "--model", "meta-llama/Llama-3.1-8B", "--rate", "20", "--input-len", "1000", "--output-len", "200",
            "--ttft-slo-ms", "1000", "--tpot-slo-ms", "50", "--gpus", "h100-sxm", "--top", "3", "--format", "json",
            "--disaggregated", "--kv-link", "ib-ndr"]
    assert main(args + ["--kv-descriptor-us", "0"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out) if r["disaggregated"]]
    # no descriptors: 1000 tokens x 131,072 B per TP-1 rank over 0.8 x 50 GB/s + the preset's 10 us
    tp1 = [r for r in rows if r["prefill_tensor_parallel_size"] == 1 and r["decode_tensor_parallel_size"] == 1]
    assert tp1 and tp1[0]["kv_transfer_s"] == pytest.approx(1000 * 131072 / 40e9 + 1e-5)
    assert main(args + ["--kv-descriptor-us", "-1"]) == 2
    assert "kv_descriptor_us" in capsys.readouterr().err
