"""A user-defined GPU (calc.spec.inputs.CustomGPU, calc.spec.catalog.custom_gpu): the same calc
functions as a catalog GPU, from the CLI (--gpu-spec, --batch gpu_spec) and the UI (gpu=custom)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apptest_helpers import app, metrics, texts
from calc.cli.main import main
from calc.spec.catalog import CatalogError, custom_gpu, get_gpu, get_model
from calc.spec.inputs import Efficiency, CustomGPU, ServingConfig
from calc.timing.estimate import engine_numbers, estimate
from calc.timing.serving import decode_step
from ui import controls as C

GiB = 2**30
H100 = get_gpu("h100-sxm")
H100_SPEC = {"memory_gib": H100.usable_memory_bytes / GiB, "hbm_tb_per_s": 3.35, "bf16_tflops": 989.4,
             "fp8_tflops": 1978.9, "int8_tops": 1978.9, "link_gb_per_s": 450.0}


class TestCalc:
    def test_units(self):
        # 24 GiB = 25,769,803,776 B; 1 TB/s = 1e12 B/s; 165.2 TFLOPS = 1.652e14; 32 GB/s = 3.2e10 B/s
        g = CustomGPU(memory_gib=24, hbm_tb_per_s=1, bf16_tflops=165.2, link_gb_per_s=32).to_gpu_spec()
        assert g.usable_memory_bytes == 25_769_803_776 and g.hbm_bw_bytes_per_s == 1e12
        assert g.bf16_flops_per_s == g.fp16_flops_per_s == pytest.approx(1.652e14)
        assert g.interconnect_bw_bytes_per_s == 3.2e10 and g.link_topology == "switch"
        assert g.fp8_flops_per_s is None and g.price_usd_per_hour is None

    def test_same_numbers_as_the_catalog_h100_give_the_same_answers(self):
        sc = ServingConfig(tensor_parallel_size=4, input_len=1000, output_len=200, concurrency=32, max_model_len=8192)
        # a user-defined GPU has no architecture, so vLLM's share of Hopper's peak
        # (Efficiency.hopper_flops_scale) applies to the catalog H100 only: compare without it
        a = estimate(get_model("meta-llama/Llama-3.1-70B"), H100, sc, Efficiency(hopper_flops_scale=1.0))
        b = estimate(get_model("meta-llama/Llama-3.1-70B"), custom_gpu(H100_SPEC), sc)
        assert bool(a.serving.fits) and bool(b.serving.fits)
        for k in ("ttft_s", "tpot_s", "output_tokens_per_s"):
            assert float(getattr(b.serving, k)) == pytest.approx(float(getattr(a.serving, k)), rel=1e-12), k
        assert float(b.memory.kv_pool_bytes) == pytest.approx(float(a.memory.kv_pool_bytes), rel=1e-12)

    def test_decode_step_at_the_users_bandwidth(self):
        # Llama-2-7B FP16 batch 1 streams 13,214,154,752 B of weights (test_roofline); at 1 TB/s x 0.8
        # the memory time of those weights alone is 16.52 ms.
        g = custom_gpu({"memory_gib": 48, "hbm_tb_per_s": 1.0, "bf16_tflops": 1000, "link_gb_per_s": 64})
        e = engine_numbers(get_model("meta-llama/Llama-2-7b-hf"), g, ServingConfig(dtype="float16"))
        step = decode_step(e, batch=1.0, context_tokens=0.0)
        assert float(step.memory_s) >= 13_214_154_752 / 0.8e12
        assert float(step.memory_s) == pytest.approx(13_214_154_752 / 0.8e12, rel=0.01)  # + activations/KV

    @pytest.mark.parametrize("spec,msg", [
        ("{", "gpu_spec: not valid JSON"),
        ("[1, 2]", "gpu_spec: must be a JSON object"),
        ({"memory_gib": 5000, "hbm_tb_per_s": 1, "bf16_tflops": 1, "link_gb_per_s": 1}, "allowed: 0 < memory_gib <= 4096"),
        ({"memory_gib": 24, "hbm_tb_per_s": 1, "bf16_tflops": 1}, "link_gb_per_s: Field required"),
        ({"memory_gib": 24, "hbm_tb_per_s": 1, "bf16_tflops": 1, "link_gb_per_s": 1, "tdp": 3}, "tdp: Extra inputs"),
    ])
    def test_bad_specs_name_the_field(self, spec, msg):
        with pytest.raises(CatalogError, match=msg.replace("(", r"\(")):
            custom_gpu(spec)

    @settings(max_examples=30, deadline=None)
    @given(f=st.floats(1.0, 10.0))
    def test_more_bandwidth_never_slower(self, f):
        base = dict(H100_SPEC)
        fast = dict(base, hbm_tb_per_s=base["hbm_tb_per_s"] * f, link_gb_per_s=base["link_gb_per_s"] * f)
        sc = ServingConfig(tensor_parallel_size=2, input_len=2000, output_len=100, concurrency=16, max_model_len=4096)
        a = estimate(get_model("meta-llama/Llama-3.1-8B"), custom_gpu(base), sc).serving
        b = estimate(get_model("meta-llama/Llama-3.1-8B"), custom_gpu(fast), sc).serving
        assert float(b.ttft_s) <= float(a.ttft_s) * (1 + 1e-12) and float(b.tpot_s) <= float(a.tpot_s) * (1 + 1e-12)


class TestCli:
    def test_gpu_spec_flag(self, capsys):
        assert main(["estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu-spec", json.dumps(H100_SPEC),
                     "--input-len", "1000", "--output-len", "200", "--concurrency", "8", "--max-model-len", "4096",
                     "--format", "json"]) == 0
        d = json.loads(capsys.readouterr().out)
        assert main(["estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm", "--input-len", "1000",
                     "--output-len", "200", "--concurrency", "8", "--max-model-len", "4096", "--format", "json"]) == 0
        ref = json.loads(capsys.readouterr().out)
        # the decode step (memory-bound at batch 8, so vLLM's share of Hopper's peak, which a
        # user-defined GPU does not get, does not enter)
        assert d["gpu"] == "custom" and d["decode_step_s"] == pytest.approx(ref["decode_step_s"], rel=1e-12)

    def test_memory_command_and_errors(self, capsys):
        assert main(["memory", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "custom", "--gpu-spec",
                     json.dumps(H100_SPEC), "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["gpu"] == "custom"
        assert main(["memory", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "a10g", "--gpu-spec", "{}"]) == 2
        assert "both given" in capsys.readouterr().err
        assert main(["memory", "--model", "meta-llama/Llama-3.1-8B", "--gpu-spec", '{"memory_gib": "x"}']) == 2
        assert "gpu_spec: memory_gib" in capsys.readouterr().err

    def test_batch_line_with_gpu_spec(self, tmp_path, capsys):
        f = tmp_path / "b.jsonl"
        f.write_text(json.dumps({"model": "meta-llama/Llama-3.1-8B", "gpu_spec": H100_SPEC, "input_len": 500,
                                 "output_len": 50, "max_model_len": 4096}) + "\n")
        assert main(["estimate", "--batch", str(f)]) == 0
        rec = json.loads(capsys.readouterr().out.splitlines()[0])
        assert rec["gpu"] == "custom" and rec["fits"] is True and "ignored_options" not in rec


class TestUi:
    def test_every_field_is_a_validated_url_control_with_labels(self):
        from ui.i18n import Translator

        assert set(C.CUSTOM_GPU_FIELDS) == {c.key for c in C.CUSTOM_GPU_CONTROLS}
        assert set(C.CUSTOM_GPU_FIELDS.values()) == set(CustomGPU.model_fields) - {"name"}
        for ctl in C.CUSTOM_GPU_CONTROLS:
            assert ctl in C.SHARED and C.BY_KEY[ctl.key] is ctl
            for lang in ("en", "zh"):
                t = Translator(lang)
                assert not t(f"ctl.{ctl.key}").startswith("ctl.") and not t(f"ctl.{ctl.key}.help").startswith("ctl.")
        assert C.GPU.parse("custom") == "custom"
        # the defaults are the H100 SXM: "custom" starts from a known card
        g = C.custom_gpu_from({})
        assert g.hbm_bw_bytes_per_s == H100.hbm_bw_bytes_per_s and g.bf16_flops_per_s == H100.bf16_flops_per_s

    def test_link_drives_the_pages(self):
        at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "custom", "cgpu_memory_gib": "40"})
        assert not at.exception and not at.error
        labels = [n.label for n in at.number_input]
        assert "Memory per GPU (GiB)" in labels and "GPU link, one direction (GB/s)" in labels
        small = metrics(at)["Max concurrency"]
        big = metrics(app({"model": "meta-llama/Llama-3.1-8B", "gpu": "custom", "cgpu_memory_gib": "80"}))["Max concurrency"]
        assert int(small.replace(",", "")) < int(big.replace(",", ""))

    def test_bad_field_in_link_is_named(self):
        at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "custom", "cgpu_hbm_tbps": "-1"})
        assert not at.exception
        assert any("cgpu_hbm_tbps=-1" in w and "0.01 – 100" in w for w in texts(at.warning))

    def test_price_reaches_the_cost_metric(self):
        at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "custom", "cgpu_price_usd_h": "2.5"}, page="pages/frontier.py")
        assert not at.exception and not at.error
        assert metrics(at)["Cost per million output tokens"].startswith("$")

    def test_chinese_labels(self):
        at = app({"model": "meta-llama/Llama-3.1-8B", "gpu": "custom", "lang": "zh"})
        assert not at.exception and "每卡显存（GiB）" in [n.label for n in at.number_input]


def test_fp4_peak_is_optional_and_used_by_nvfp4():
    # a B200-like card: 9,000 dense FP4 TFLOPS -> NVFP4 weights at the FP4 rate; without it, the 16-bit rate
    from calc.timing.estimate import engine_numbers
    from calc.spec.inputs import ServingConfig
    spec = {"memory_gib": 178.35, "hbm_tb_per_s": 8.0, "bf16_tflops": 2250, "fp8_tflops": 4500, "link_gb_per_s": 900}
    sc = ServingConfig(quantization="modelopt_fp4")
    arch = get_model("meta-llama/Llama-3.1-8B")
    assert engine_numbers(arch, custom_gpu({**spec, "fp4_tflops": 9000}), sc).peak_flops_per_s == 9000e12
    assert engine_numbers(arch, custom_gpu(spec), sc).peak_flops_per_s == 2250e12
