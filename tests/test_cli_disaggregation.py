"""`estimate` / `simulate` with --prefill-instances / --decode-instances: JSON keys, errors naming the field."""

from __future__ import annotations

import json

import pytest

from calc.cli.main import main

BASE = ["--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm", "--input-len", "1000", "--output-len", "100"]
DIS = ["--prefill-instances", "2", "--decode-instances", "1", "--kv-transfer-gb-per-s", "25"]


def _json(capsys, args):
    assert main(args + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_estimate_json(capsys):
    d = _json(capsys, ["estimate"] + BASE + DIS + ["--rate", "10"])
    assert d["deployment"] == "2P1D" and d["gpus_total"] == 3
    # 1000 tokens x 131,072 B / 25 GB/s = 5.24 ms (+ the preset's 10 us latency)
    # + the connector's descriptors: ceil(1000/16) = 63 blocks x 32 layers x 2 = 4,032 x 2.4 us = 9.68 ms
    assert d["kv_transfer_s"] == pytest.approx(1000 * 131072 / 25e9 + 1e-5 + 4032 * 2.4e-6)
    assert d["kv_descriptor_s"] == pytest.approx(2.4e-6)
    assert d["ttft_s"] > d["prefill_ttft_s"] + d["kv_transfer_s"] and d["stable"] is True


def test_simulate_json_and_the_analytic_beside(capsys):
    d = _json(capsys, ["simulate"] + BASE + DIS + ["--rate", "10", "--num-requests", "300"])
    assert d["kv_transfer_s"] == pytest.approx(1000 * 131072 / 25e9 + 1e-5 + 4032 * 2.4e-6)
    assert d["finished_requests"] == 300 and "analytic_ttft_s" in d and "ttft_s_p95" in d


def test_without_the_flags_nothing_changes(capsys):
    d = _json(capsys, ["simulate"] + BASE + ["--rate", "5", "--num-requests", "100"])
    assert "kv_transfer_s" not in d and "deployment" not in d


@pytest.mark.parametrize("extra,field", [(["--kv-transfer-gb-per-s", "-3", "--rate", "1"], "kv_transfer_gb_per_s"),
                                         (["--prefill-instances", "999", "--rate", "1"], "prefill_instances"),
                                         (["--decode-instances", "2"], "rate")])
def test_bad_input_names_the_field(capsys, extra, field):
    assert main(["estimate"] + BASE + ["--decode-instances", "1"] + extra) == 2
    err = capsys.readouterr().err
    assert field in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_simulated_closed_loop_is_refused(capsys):
    assert main(["simulate"] + BASE + DIS + ["--concurrency", "8"]) == 2
    assert "open loop" in capsys.readouterr().err


def test_unused_options_are_reported_back(capsys):
    d = _json(capsys, ["estimate"] + BASE + DIS + ["--rate", "4", "--replicas", "3"])
    assert d["ignored_options"] == ["replicas"]
    # a batch line may carry what only `simulate` reads: the analytic estimate says so
    from calc.cli.disaggregation import estimate_record
    rec = estimate_record({"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "input_len": 1000, "output_len": 100,
                           "prefill_instances": 1, "decode_instances": 1, "rate": 4, "seed": 3, "ttft_slo_ms": 300})
    assert rec["ignored_options"] == ["seed", "ttft_slo_ms"]


def test_estimate_closed_loop_holds_littles_law(capsys):
    # C clients without think time: the rate the deployment runs at times the E2E latency is C
    d = _json(capsys, ["estimate"] + BASE + DIS + ["--concurrency", "16"])
    assert d["requests_per_s"] * d["e2e_latency_s"] == pytest.approx(16, rel=0.01)
    assert d["saturated"] is False and d["output_tokens_per_s"] == pytest.approx(d["requests_per_s"] * 100)
    big = _json(capsys, ["estimate"] + BASE + DIS + ["--concurrency", "20000"])
    # 20,000 clients: the deployment runs at its capacity and the clients queue (Little: TTFT ~ C / λ)
    assert big["requests_per_s"] > d["requests_per_s"] and big["ttft_s"] > 0.5 * 20000 / big["requests_per_s"]


def test_kv_descriptor_us_option(capsys):
    # 0 leaves the descriptors out: the bytes and the latency alone
    d = _json(capsys, ["estimate"] + BASE + DIS + ["--rate", "10", "--kv-descriptor-us", "0"])
    assert d["kv_transfer_s"] == pytest.approx(1000 * 131072 / 25e9 + 1e-5)
    assert main(["estimate"] + BASE + DIS + ["--rate", "10", "--kv-descriptor-us", "-2"]) == 2
    assert "kv_descriptor_us" in capsys.readouterr().err


def test_estimate_takes_the_length_spread_as_simulate_prints_it(capsys):
    # --input-len-cv / --output-len-cv were accepted and dropped by the disaggregated estimate (its P95 read
    # as fixed lengths: 0.84 s where 4,000 simulated requests give 1.48 s at prompt CV 1). Now the estimate is
    # the analytic answer `simulate` prints beside its run, and the spread widens the P95.
    spread = ["--input-len-cv", "1.0", "--output-len-cv", "0.5", "--max-model-len", "8192"]
    args = BASE + DIS + ["--rate", "10"]
    fixed = _json(capsys, ["estimate"] + args)
    est = _json(capsys, ["estimate"] + args + spread)
    sim = _json(capsys, ["simulate"] + args + spread + ["--num-requests", "50"])
    assert est["input_len_cv"] == 1.0 and est["output_len_cv"] == 0.5 and "ignored_options" not in est
    assert est["ttft_s"] == pytest.approx(sim["analytic_ttft_s"]) and est["ttft_p95_s"] == pytest.approx(sim["analytic_ttft_p95_s"])
    assert est["ttft_p95_s"] > 1.2 * fixed["ttft_p95_s"]
    closed = _json(capsys, ["estimate"] + BASE + DIS + ["--concurrency", "16"] + spread)
    assert closed["input_len_cv"] == 1.0
    assert closed["ttft_s"] != _json(capsys, ["estimate"] + BASE + DIS + ["--concurrency", "16"])["ttft_s"]
