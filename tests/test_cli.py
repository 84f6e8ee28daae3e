"""calc.cli.main: `python -m calc memory | models | gpus` with vLLM's flag names.

Bad input exits 2 with one line on stderr naming the field, and no traceback."""

import json
import subprocess
import sys

import pytest

from calc.spec.catalog import gpu_ids, model_config_json, model_ids
from calc.cli.main import main
from calc.spec.inputs import Efficiency
from tests.conftest import ROOT

LLAMA31_8B = ["--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm", "--max-model-len", "8192"]


def run_json(capsys, *argv):
    assert main(["memory", *argv, "--format", "json"]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    return json.loads(out.out)


def run_error(capsys, *argv) -> str:
    rc = main(list(argv))
    out = capsys.readouterr()
    assert rc == 2
    assert out.out == ""
    lines = out.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out.err
    return lines[0]


class TestMemoryCommand:
    def test_json_keys_carry_units(self, capsys):
        d = run_json(capsys, *LLAMA31_8B)
        for key in ("weights_bytes", "kv_bytes_per_token", "kv_pool_bytes", "max_concurrency", "fits",
                    "activation_bytes", "overhead_bytes", "budget_bytes", "usable_memory_bytes", "num_blocks"):
            assert key in d
        assert isinstance(d["fits"], bool)

    def test_llama31_8b_h100(self, capsys):
        d = run_json(capsys, *LLAMA31_8B)
        assert d["weights_bytes"] == 16_060_522_496           # 8,030,261,248 params * 2 B
        assert d["kv_bytes_per_token"] == 131_072             # 2 * 32 * 8 * 128 * 2 B
        # The CLI uses the library's calibrated defaults: read them rather than copy them.
        eff = Efficiency()
        # activation (T = 8192, 1024 seqs): max(forward 8192 * (3*14336 + (32 + 2*8)*128 + k_h*4096) * 2 B,
        #   sampler phase 8192*4096*2 + 128,256 * (1024 * 14 B + 132 SMs * 4 B) = 1,973,506,048) + workspaces
        fwd = 8192 * (43_008 + 6_144 + eff.activation_live_hidden_buffers * 4096) * 2
        act = max(fwd, 1_973_506_048) + eff.allocator_workspace_bytes
        # pool = usable 85,029,615,043 * 0.9 - weights - activation - non-torch overhead
        pool = 85_029_615_043 * 0.9 - 16_060_522_496 - act - eff.non_torch_overhead_bytes
        assert d["activation_bytes"] == pytest.approx(act)
        assert d["kv_pool_bytes"] == pytest.approx(pool, abs=1)
        assert d["num_blocks"] == int(pool // 2_097_152)      # 16 tokens * 131,072 B = 2 MiB per block
        assert d["max_concurrency"] == pytest.approx(d["num_blocks"] / 512)  # 512 blocks per 8192-token request
        assert d["fits"] is True and d["attention"] == "GQA" and d["params_total"] == 8_030_261_248

    def test_tensor_parallel(self, capsys):
        # TP2: 16,060,522,496 / 2 + 266,240 norm params * 2 B / 2 = 8,030,527,488; KV 4 heads per rank = 65,536 B
        d = run_json(capsys, *LLAMA31_8B, "--tensor-parallel-size", "2")
        assert (d["weights_bytes"], d["kv_bytes_per_token"], d["tensor_parallel_size"]) == (8_030_527_488, 65_536, 2)
        assert run_json(capsys, *LLAMA31_8B, "-tp", "2")["weights_bytes"] == 8_030_527_488

    def test_precisions(self, capsys):
        assert run_json(capsys, *LLAMA31_8B, "--kv-cache-dtype", "fp8")["kv_bytes_per_token"] == 65_536
        # FP8 linear layers: 6,979,321,856 * 1 B + 2,101,878,784 B (embedding, LM head, norms at 2 B)
        assert run_json(capsys, *LLAMA31_8B, "--quantization", "fp8")["weights_bytes"] == 9_081_200_640
        # AWQ: 6,979,321,856 * 0.51953125 + 2,101,878,784
        assert run_json(capsys, *LLAMA31_8B, "-q", "awq", "--dtype", "fp16")["weights_bytes"] == 3_625_975_808 + 2_101_878_784

    def test_utilization_and_block_size(self, capsys):
        d = run_json(capsys, *LLAMA31_8B, "--gpu-memory-utilization", "0.5", "--block-size", "32")
        assert d["budget_bytes"] == pytest.approx(85_029_615_043 * 0.5)
        assert d["block_size"] == 32 and d["kv_pool_tokens"] == d["num_blocks"] * 32

    def test_batched_tokens_set_the_activation_peak(self, capsys):
        # T = 65,536: the forward pass, 65,536 * (43,008 + 6,144 + k_h * 4096) * 2 B (k_h = 4: 8 GiB), beats the
        # sampler phase 65,536*4096*2 + 128,256 * (1024*14 + 132*4) = 536,870,912 + 1,906,397,184
        eff = Efficiency()
        d = run_json(capsys, *LLAMA31_8B, "--max-num-batched-tokens", "65536")
        fwd = 65_536 * (43_008 + 6_144 + eff.activation_live_hidden_buffers * 4096) * 2
        assert d["activation_bytes"] == pytest.approx(fwd + eff.allocator_workspace_bytes)
        # T = 2048: the sampler warm-up sets the peak: 2048*4096*2 = 16,777,216 + 1,906,397,184
        d = run_json(capsys, *LLAMA31_8B, "--max-num-batched-tokens", "2048")
        assert d["activation_bytes"] == pytest.approx(16_777_216 + 1_906_397_184 + eff.allocator_workspace_bytes)

    def test_concurrency_and_context(self, capsys):
        # 1000 tokens -> 63 blocks * 16 * 131,072 = 132,120,576 B per request; waste 8 tokens = 1,048,576 B
        d = run_json(capsys, *LLAMA31_8B, "--concurrency", "10", "--context-len", "1000")
        assert d["kv_bytes_per_request"] == 132_120_576
        assert d["kv_in_use_bytes"] == 10 * 132_120_576
        assert d["paged_waste_bytes_per_request"] == 1_048_576
        assert d["concurrency_fits"] is True

    def test_short_max_model_len_is_fine(self, capsys):
        assert run_json(capsys, "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm",
                        "--max-model-len", "512")["max_model_len"] == 512

    def test_does_not_fit_is_data(self, capsys):
        d = run_json(capsys, "--model", "meta-llama/Llama-3.1-405B", "--gpu", "l4")
        assert d["fits"] is False and d["kv_pool_bytes"] < 0 and d["num_blocks"] == 0

    def test_does_not_fit_says_what_would(self, capsys):
        # The example: Llama-3.1-70B on 2 × H100 at 32k (calc.sizing.fit: 10,096 tokens
        # fit; FP8 weights hold 6.7 requests of 32k, TP 4 13.7)
        d = run_json(capsys, "--model", "meta-llama/Llama-3.1-70B", "--gpu", "h100-sxm", "-tp", "2",
                     "--max-model-len", "32768")
        assert d["fits"] is False
        advice = d["does_not_fit"]
        assert advice["max_model_len_that_fits"] == 10096
        by = {a["change"]: a for a in advice["alternatives"]}
        assert list(by) == ["gpu_memory_utilization", "quantization", "tensor_parallel_size", "max_model_len"]
        assert (by["gpu_memory_utilization"]["value"], by["quantization"]["value"]) == (0.95, "fp8")
        assert (by["tensor_parallel_size"]["value"], by["max_model_len"]["value"]) == (4, 10096)
        assert by["quantization"]["max_concurrency"] == pytest.approx(6.68, abs=0.01)
        assert by["tensor_parallel_size"]["max_concurrency"] == pytest.approx(13.73, abs=0.01)
        assert set(by["quantization"]) == {"change", "value", "vllm_flags", "max_model_len", "max_concurrency",
                                           "requests_at_context", "meets_goal"}
        assert advice["message"].startswith("To serve one request of max_model_len 32,768")
        assert "\n" not in advice["message"]

    def test_fits_has_no_advice(self, capsys):
        assert "does_not_fit" not in run_json(capsys, *LLAMA31_8B)

    def test_does_not_fit_table(self, capsys):
        assert main(["memory", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "l4"]) == 0
        out = capsys.readouterr().out
        assert "does not fit: To serve one request of max_model_len 131,072" in out
        assert "--tensor-parallel-size 2" in out and "{" not in out

    def test_case_insensitive_model_id(self, capsys):
        assert run_json(capsys, "--model", "META-LLAMA/LLAMA-3.1-8B", "--gpu", "H100-SXM",
                        "--max-model-len", "8192")["model"] == "meta-llama/Llama-3.1-8B"

    def test_config_json_path(self, capsys, tmp_path):
        cfg = {k: v for k, v in model_config_json("meta-llama/Llama-3.1-8B").items() if not k.startswith("_")}
        path = tmp_path / "config.json"
        path.write_text(json.dumps(cfg))
        d = run_json(capsys, "--model", str(path), "--gpu", "h100-sxm", "--max-model-len", "8192")
        assert (d["model"], d["weights_bytes"], d["kv_bytes_per_token"]) == ("config", 16_060_522_496, 131_072)

    def test_table(self, capsys):
        assert main(["memory", *LLAMA31_8B]) == 0
        out = capsys.readouterr().out
        assert "weights_bytes" in out and "14.96 GiB (16.06 GB)" in out and "kv_bytes_per_token" in out


class TestCatalogCommands:
    def test_models_json(self, capsys):
        assert main(["models", "--format", "json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert len(rows) == len(model_ids())
        by_id = {r["id"]: r for r in rows}
        assert by_id["meta-llama/Llama-2-7b-hf"]["params_total"] == 6_738_415_616
        assert by_id["deepseek-ai/DeepSeek-V3"]["attention"] == "MLA"

    def test_gpus_json(self, capsys):
        assert main(["gpus", "--format", "json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert len(rows) == len(gpu_ids()) == 23
        assert next(r for r in rows if r["id"] == "b200")["fp4_flops_per_s"] == 9e15  # dense FP4
        h100 = next(r for r in rows if r["id"] == "h100-sxm")
        assert (h100["bf16_flops_per_s"], h100["hbm_bw_bytes_per_s"]) == (989.4e12, 3.35e12)
        assert next(r for r in rows if r["id"] == "a100-80gb")["fp8_flops_per_s"] is None

    @pytest.mark.parametrize("command, expected", [("models", "meta-llama/Llama-2-7b-hf"), ("gpus", "mi325x")])
    def test_tables(self, capsys, command, expected):
        assert main([command]) == 0
        assert expected in capsys.readouterr().out


class TestBadInput:
    def test_bad_model_id(self, capsys):
        assert run_error(capsys, "memory", "--model", "gpt-5", "--gpu", "h100-sxm").startswith(
            "error: unknown model 'gpt-5'; catalog ids:")

    def test_bad_gpu(self, capsys):
        assert run_error(capsys, "memory", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h800").startswith(
            "error: unknown GPU 'h800'; catalog ids:")

    def test_utilization_above_one(self, capsys):
        assert run_error(capsys, "memory", *LLAMA31_8B, "--gpu-memory-utilization", "1.5") == (
            "error: gpu_memory_utilization: Input should be less than or equal to 1 (got 1.5); "
            "allowed: 0 < gpu_memory_utilization <= 1")

    def test_block_size_7(self, capsys):
        assert run_error(capsys, "memory", *LLAMA31_8B, "--block-size", "7") == \
            "error: block_size: Input should be 1, 8, 16, 32, 64 or 128 (got 7)"

    def test_tp_0(self, capsys):
        assert run_error(capsys, "memory", *LLAMA31_8B, "--tensor-parallel-size", "0") == (
            "error: tensor_parallel_size: Input should be greater than or equal to 1 (got 0); "
            "allowed: 1 <= tensor_parallel_size <= 1024")

    def test_tp_must_divide_heads(self, capsys):
        assert run_error(capsys, "memory", *LLAMA31_8B, "-tp", "3") == (
            "error: tensor_parallel_size: got 3, allowed 1, 2, 4, 8, 16, 32 (it must divide the 32 attention heads "
            "of Llama-3.1-8B)")

    def test_tp_must_divide_kv_heads_or_be_a_multiple(self, capsys):
        # Qwen2.5-7B: 28 query heads, 4 KV heads; TP 7 divides 28 but neither divides nor is a multiple of 4
        assert run_error(capsys, "memory", "--model", "Qwen/Qwen2.5-7B", "--gpu", "h100-sxm", "-tp", "7") == (
            "error: tensor_parallel_size: got 7, allowed 1, 2, 4, 28 (it must divide the 4 KV heads of Qwen2.5-7B "
            "or be a multiple of them)")

    def test_garbage_config_path(self, capsys, tmp_path):
        path = tmp_path / "config.json"
        path.write_text("this is not json {")
        assert run_error(capsys, "memory", "--model", str(path), "--gpu", "h100-sxm").startswith(
            "error: config.json is not valid JSON")

    def test_missing_config_path(self, capsys, tmp_path):
        assert "cannot read model config file" in run_error(
            capsys, "memory", "--model", str(tmp_path / "nope.json"), "--gpu", "h100-sxm")

    def test_unsupported_config(self, capsys, tmp_path):
        path = tmp_path / "config.json"
        path.write_text(json.dumps({"model_type": "gpt2", "n_embd": 768}))
        assert "model_type: got 'gpt2', allowed one of the supported deepseek_v2" in run_error(
            capsys, "memory", "--model", str(path), "--gpu", "h100-sxm")

    def test_context_longer_than_max_model_len(self, capsys):
        assert run_error(capsys, "memory", *LLAMA31_8B, "--context-len", "9000") == \
            "error: --context-len must be between 1 and max_model_len (8,192) (got 9000)"

    def test_context_zero(self, capsys):
        assert "--context-len must be between 1 and max_model_len" in run_error(
            capsys, "memory", *LLAMA31_8B, "--context-len", "0")

    def test_not_a_number(self, capsys):
        assert run_error(capsys, "memory", *LLAMA31_8B, "--block-size", "big") == \
            "error: argument --block-size: expected a whole number, got 'big'"

    def test_bad_choice(self, capsys):
        assert run_error(capsys, "memory", *LLAMA31_8B, "--kv-cache-dtype", "fp4").startswith(
            "error: argument --kv-cache-dtype: invalid choice: 'fp4'")

    def test_missing_argument(self, capsys):
        # --gpu or --gpu-spec (a user-defined GPU): the message names both
        assert run_error(capsys, "memory", "--model", "meta-llama/Llama-3.1-8B") == \
            "error: --gpu is required (a catalog id), or --gpu-spec JSON for a user-defined GPU"

    def test_unknown_command(self, capsys):
        assert run_error(capsys, "frobnicate").startswith("error: argument command: invalid choice: 'frobnicate'")


class TestSubprocess:
    def test_python_m_calc(self):
        proc = subprocess.run([sys.executable, "-m", "calc", "memory", *LLAMA31_8B, "--format", "json"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["weights_bytes"] == 16_060_522_496

    def test_error_exit_code_and_one_line(self):
        proc = subprocess.run([sys.executable, "-m", "calc", "memory", *LLAMA31_8B, "--block-size", "7"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.splitlines() == ["error: block_size: Input should be 1, 8, 16, 32, 64 or 128 (got 7)"]


def test_plan_one_row_per_gpu_first_and_the_flag_that_turns_it_off(capsys):
    """Issue #19: the default table opens with one row per GPU type (was: four MI300X variants on top);
    --no-one-per-gpu lists every option in one ranking, the order it had."""
    argv = ["plan", "--model", "meta-llama/Llama-2-7b-hf", "--rate", "2", "--input-len", "1792", "--output-len", "256",
            "--ttft-slo-ms", "500", "--tpot-slo-ms", "50", "--format", "json"]

    def rows(*extra):
        assert main([*argv, *extra]) == 0
        return json.loads(capsys.readouterr().out)
    first, every = rows(), rows("--no-one-per-gpu")
    assert len({r["gpu"] for r in first}) == len(first) == 10
    assert len({r["gpu"] for r in every}) < len(every)  # one GPU's precision variants take rows
    assert first[0] == every[0]  # the best option is the best either way


class TestVllmCommand:
    """--vllm-command: a pasted `vllm serve` line's flags, read as the dashboard's paste box reads them."""

    SERVE = ("vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n  --tensor-parallel-size 2 --max-model-len 8k "
             "--kv-cache-dtype fp8 --max-num-seqs 64 --no-enable-prefix-caching --enforce-eager "
             "--speculative-config '{\"method\": \"eagle3\", \"num_speculative_tokens\": 3}'")
    LOAD = ["--gpu", "h100-sxm", "--input-len", "1000", "--output-len", "200", "--concurrency", "8", "--format", "json"]

    def test_the_same_answer_as_the_flags_it_holds(self, capsys):
        assert main(["estimate", "--vllm-command", self.SERVE, *self.LOAD]) == 0
        out = capsys.readouterr()
        assert out.err == "note: --vllm-command: not modelled, ignored: --enforce-eager\n"
        pasted = json.loads(out.out)
        assert main(["estimate", "--model", "meta-llama/Llama-3.1-8B", "-tp", "2", "--max-model-len", "8000",
                     "--kv-cache-dtype", "fp8", "--max-num-seqs", "64", "--no-enable-prefix-caching",
                     "--speculative-config", '{"method": "eagle3", "num_speculative_tokens": 3}', *self.LOAD]) == 0
        assert json.loads(capsys.readouterr().out) == pasted
        assert pasted["speculative_method"] == "eagle3" and pasted["tensor_parallel_size"] == 2

    def test_a_flag_given_beside_it_wins(self, capsys):
        d = run_json(capsys, "--vllm-command", "vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 64 -tp 2",
                     "--gpu", "h100-sxm", "--max-num-seqs", "32")
        assert d["max_num_seqs"] == 32 and d["tensor_parallel_size"] == 2

    def test_memory_says_what_it_does_not_take(self, capsys):
        assert main(["memory", "--vllm-command", self.SERVE, "--gpu", "h100-sxm", "--format", "json"]) == 0
        err = capsys.readouterr().err
        assert "not taken by this command: --no-enable-prefix-caching --speculative-config" in err

    @pytest.mark.parametrize("argv, want", [
        (["estimate", "--vllm-command", "vllm serve x --max-num-seqs lots", "--gpu", "h100-sxm"],
         "error: --vllm-command: --max-num-seqs: got 'lots', allowed a whole number"),
        (["estimate", "--vllm-command", "ls -la", "--gpu", "h100-sxm"], "error: --vllm-command: command: expected"),
        (["simulate", "--gpu", "h100-sxm", "--vllm-command",
          "vllm serve Qwen/Qwen3-8B --speculative-config '{\"method\": \"medusa\", \"num_speculative_tokens\": 2}'"],
         "error: --vllm-command (method): got 'medusa'"),
        (["plan", "--vllm-command", "vllm serve x"], "error: --vllm-command: not taken by 'plan'"),
        (["estimate", "--gpu", "h100-sxm", "--vllm-command"], "error: --vllm-command: needs a value"),
        (["estimate", "--vllm-command", "vllm serve a", "--vllm-command=vllm serve b"],
         "error: --vllm-command: given 2 times"),
    ])
    def test_problems_are_named(self, capsys, argv, want):
        assert run_error(capsys, *argv).startswith(want.replace("--vllm-command (method)",
                                                               "--vllm-command: --speculative-config (method)"))
