"""The multi-GPU layout flags of ``estimate``, ``memory``, ``simulate`` and ``plan``
(--pipeline-parallel-size, --data-parallel-size, --enable-expert-parallel, --nodes): accepted,
reported, and impossible combinations refused in one line (exit 2), as vLLM would refuse them."""

import json
import time

import pytest

from calc.cli.main import main
from calc.plan.search import Layout, PlanRequest, chosen_layouts, default_layouts, plan
from calc.spec.catalog import get_gpu, get_model, list_gpus

DSV3 = "deepseek-ai/DeepSeek-V3"
EST = ["estimate", "--model", DSV3, "--gpu", "h200", "--input-len", "2000", "--output-len", "1000",
       "--max-model-len", "4096"]


def _json(capsys, argv):
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


class TestEstimate:
    def test_dp_ep_is_reported_and_scales_the_deployment(self, capsys):
        d = _json(capsys, [*EST, "--data-parallel-size", "16", "--enable-expert-parallel", "--concurrency", "2048"])
        assert (d["data_parallel_size"], d["expert_parallel_size"], d["nodes"], d["gpus_total"]) == (16, 16, 2, 16)
        # 16 ranks of 128 clients each: the deployment runs all 2,048
        assert d["concurrency"] == 2048 and d["running"] == 2048
        # per GPU: 17.6 GB + 654 GB / 16 = 58.5 GB + the embedding/head = 59.9 GB + the whole attention's
        # BF16 W_UK/W_UV copies (61 * 128 * 512 * 256 * 2 = 2.05 GB) = 62.0 GB
        assert d["weights_bytes"] == pytest.approx(62.0e9, rel=0.01)

    def test_default_flags_change_nothing(self, capsys):
        a = _json(capsys, [*EST, "-tp", "8", "--concurrency", "64"])
        b = _json(capsys, [*EST, "-tp", "8", "--concurrency", "64", "-pp", "1", "-dp", "1"])
        assert a["tpot_s"] == b["tpot_s"] and a["kv_pool_bytes"] == b["kv_pool_bytes"]
        assert a["nodes"] == 1 and a["expert_parallel_size"] == 1

    @pytest.mark.parametrize("extra, message", [
        (["--model", "meta-llama/Llama-3.1-8B", "--enable-expert-parallel"], "has no routed experts"),
        (["-tp", "8", "-pp", "2", "--nodes", "1"], "must split evenly over the nodes, at most 8 GPUs per"),
        (["-pp", "62"], "every pipeline stage needs at least one of the 61 decoder layers"),
    ])
    def test_impossible_combinations_are_refused(self, capsys, extra, message):
        assert main([*EST, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_memory_reports_per_gpu_and_all_ranks(capsys):
    d = _json(capsys, ["memory", "--model", DSV3, "--gpu", "h200", "-dp", "8", "--enable-expert-parallel",
                       "--max-model-len", "8192"])
    assert d["kv_bytes_per_token"] == 70272  # 61 x (512 + 64) x 2 B, the whole latent on every GPU
    assert d["max_concurrency_total"] == pytest.approx(8 * d["max_concurrency"])
    assert d["gpus_per_replica"] == 8


def test_simulate_splits_the_rate_over_the_dp_ranks(capsys):
    d = _json(capsys, ["simulate", "--model", DSV3, "--gpu", "h200", "-dp", "8", "--enable-expert-parallel",
                       "--input-len", "1000", "--output-len", "100", "--rate", "8", "--num-requests", "400",
                       "--max-model-len", "4096"])
    assert d["data_parallel_size"] == 8
    # the deployment carries the offered 8 req/s (each rank 1 req/s); requests/s counts N over the
    # first send to the last answer, so the last requests' ~4 s E2E (MLA layers' floor, calc.timing.
    # mla_layers) weigh less over 400 requests (50 s of arrivals) than over 200
    assert d["requests_per_s"] == pytest.approx(8.0, rel=0.25)


class TestPlan:
    REQ = PlanRequest(rate_rps=10, input_len=2000, output_len=1000, ttft_slo_s=2.0, tpot_slo_s=0.05)

    def test_layouts_searched(self):
        arch = get_model(DSV3)
        ls = default_layouts(arch, (1, 2, 4, 8))
        assert Layout(8) in ls and Layout(8, 2) in ls and Layout(1, 1, 8, True) in ls and Layout(8, 1, 1, True) in ls
        assert all(not lay.enable_expert_parallel and lay.data_parallel_size == 1
                   for lay in default_layouts(get_model("meta-llama/Llama-3.1-8B"), (1, 2, 4, 8)))
        assert {lay.data_parallel_size for lay in chosen_layouts(arch, data_parallel_size=16,
                                                                 enable_expert_parallel=True)} == {16}

    def test_deepseek_best_option_is_a_wide_ep_deployment_in_under_a_second(self):
        arch, gpus = get_model(DSV3), list_gpus()
        plan(arch, gpus, self.REQ)  # warm the engine cache (a page rerun)
        t0 = time.perf_counter()
        r = plan(arch, gpus, self.REQ.model_copy(update={"rate_rps": 12.0}))
        assert time.perf_counter() - t0 < 1.0
        best = r.ranked[0]
        # what practitioners deploy: FP8 weights, DP attention + EP over 8-16 GPUs (vLLM's DeepSeek
        # recipes, SGLang's and DeepSeek's own units), not a 4-bit community quant on TP 4
        assert best.quantization == "fp8" and best.enable_expert_parallel and best.data_parallel_size >= 4
        assert 8 <= best.gpus_total // best.replicas <= 16

    def test_plan_cli_accepts_the_flags_and_shows_the_columns(self, capsys):
        argv = ["plan", "--model", DSV3, "--gpus", "h200", "--rate", "10", "--input-len", "2000", "--output-len",
                "1000", "--ttft-slo-ms", "2000", "--tpot-slo-ms", "50", "-dp", "16", "--enable-expert-parallel",
                "--nodes", "2", "--top", "3"]
        rows = _json(capsys, argv)
        assert rows and all(r["data_parallel_size"] == 16 and r["enable_expert_parallel"] and r["nodes"] == 2
                            for r in rows)
        assert "--data-parallel-size 16" in rows[0]["vllm_command"] and "--enable-expert-parallel" in rows[0][
            "vllm_command"]
        assert main(argv[:-2]) == 0
        out = capsys.readouterr().out
        assert "  pp  dp  ep " in out

    def test_plan_refuses_ep_on_a_dense_model(self, capsys):
        assert main(["plan", "--model", "meta-llama/Llama-3.1-8B", "--rate", "1", "--input-len", "100", "--output-len",
                     "10", "--ttft-slo-ms", "1000", "--tpot-slo-ms", "100", "--enable-expert-parallel"]) == 2
        assert "has no routed experts" in capsys.readouterr().err


def test_gpu_catalog_ids_have_node_entries():
    from calc.spec.nodes import node_for, node_ids

    for g in list_gpus():
        n = node_for(g)
        assert n.gpus_per_node >= 1 and n.scale_out_bw_bytes_per_s > 0
    assert {"h100-sxm", "h200", "b200", "mi300x", "gb200"} <= set(node_ids())
    assert node_for(get_gpu("h200")).sources
