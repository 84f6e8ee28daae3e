"""python -m calc simulate: JSON keys, exit 2 with a one-line message naming the field, --batch."""

from __future__ import annotations

import json

import pytest

from calc.cli.main import main

BASE = ["simulate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm", "--input-len", "512", "--output-len", "64"]
KEYS = [f"{m}_{s}" for m in ("ttft_s", "tpot_s", "itl_s", "e2e_latency_s") for s in ("mean", "p50", "p90", "p95", "p99")] + [
    "output_tokens_per_s", "requests_per_s", "goodput_requests_per_s", "preemptions", "num_requests"]


def _json(capsys, args):
    assert main(BASE + args + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_poisson_json_keys_and_goodput(capsys):
    d = _json(capsys, ["--rate", "5", "--num-requests", "200", "--ttft-slo-ms", "1e6", "--tpot-slo-ms", "1e6"])
    assert all(k in d for k in KEYS)
    assert d["num_requests"] == 200 and d["preemptions"] == 0
    assert d["goodput_requests_per_s"] == pytest.approx(d["requests_per_s"])  # every request meets a huge target
    assert d["ttft_s_p50"] <= d["ttft_s_p90"] <= d["ttft_s_p95"] <= d["ttft_s_p99"]
    tight = _json(capsys, ["--rate", "5", "--num-requests", "200", "--ttft-slo-ms", "0.001"])
    assert tight["goodput_requests_per_s"] == 0


def test_closed_loop_reports_the_analytic_mean_beside(capsys):
    d = _json(capsys, ["--concurrency", "8", "--num-requests", "100", "--seed", "3"])
    assert d["arrival"] == "closed" and "analytic_ttft_s" in d and isinstance(d["analytic_closed_form"], bool)


def test_length_spread_keeps_the_means_and_lowers_a_burst_s_throughput(capsys):
    # A burst of 400 requests: with lognormal lengths (CV 1, as a chat dataset) the means stay
    # 512 / 64 (within sampling error) but a few long outputs drain at a small batch at the end,
    # so tokens/s over the run fall below the fixed-length burst's.
    fixed = _json(capsys, ["--arrival", "burst", "--num-requests", "400"])
    spread = _json(capsys, ["--arrival", "burst", "--num-requests", "400", "--input-len-cv", "1", "--output-len-cv", "1"])
    assert spread["input_len_cv"] == 1.0 and fixed["output_len_cv"] == 0.0
    assert spread["total_tokens_per_s"] / spread["output_tokens_per_s"] == pytest.approx((512 + 64) / 64, rel=0.15)
    assert spread["output_tokens_per_s"] < fixed["output_tokens_per_s"]
    assert fixed["total_tokens_per_s"] == pytest.approx(fixed["output_tokens_per_s"] * (512 + 64) / 64, rel=1e-9)


def test_the_analytic_mean_beside_follows_the_length_spread(capsys):
    # fixed lengths (the simulated clients start together and stay in step): the FCFS wave, which
    # `estimate` reports as wave_ttft_s; spread lengths: the steady state, estimate's ttft_s
    fixed = _json(capsys, ["--concurrency", "32", "--num-requests", "64"])
    spread = _json(capsys, ["--concurrency", "32", "--num-requests", "64", "--output-len-cv", "0.5"])
    # the same spread asked of estimate (its decodes' mean context is length-biased: I + O(1 + C_O²)/2)
    assert main(["estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm", "--input-len", "512",
                 "--output-len", "64", "--concurrency", "32", "--output-len-cv", "0.5", "--format", "json"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert spread["analytic_ttft_s"] == pytest.approx(est["ttft_s"], rel=1e-12)
    assert main(["estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm", "--input-len", "512",
                 "--output-len", "64", "--concurrency", "32", "--format", "json"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert fixed["analytic_ttft_s"] == pytest.approx(est["wave_ttft_s"], rel=1e-12)


def test_the_analytic_p95_beside_a_spread_closed_loop(capsys):
    """Issue 17: the closed loop's P95 TTFT (calc.traffic.queueing.closed_loop_percentile_s: estimate's
    mean + closed_loop_ttft's excess) beside the simulated one, equal to estimate's ttft_p95_s. Llama-3.1-8B
    H100, 2,500 + 256 tokens, lognormal CV 1 both, budget 1,024, 64 clients, 6,000 requests: simulated
    P95 1.345 s, analytic 1.350 s when this was written; held within 15 % (the long-run grid,
    bench/sim_vs_analytic.py --shapes, has its P95 within 11 %)."""
    args = ["--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm", "--input-len", "2500", "--output-len", "256",
            "--max-num-batched-tokens", "1024", "--concurrency", "64", "--input-len-cv", "1", "--output-len-cv", "1"]
    assert main(["simulate", *args, "--num-requests", "6000", "--format", "json"]) == 0
    sim = json.loads(capsys.readouterr().out)
    assert main(["estimate", *args, "--format", "json"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert sim["analytic_ttft_p95_s"] == pytest.approx(est["ttft_p95_s"], rel=1e-12)
    assert est["ttft_s"] < est["ttft_p95_s"] and est["ttft_p95_s_low"] <= est["ttft_p95_s"] <= est["ttft_p95_s_high"]
    assert sim["analytic_ttft_p95_s"] == pytest.approx(sim["ttft_s_p95"], rel=0.15)
    fixed = _json(capsys, ["--concurrency", "8", "--num-requests", "64"])  # the FCFS wave: no P95 beside it
    assert "analytic_ttft_p95_s" not in fixed


def test_same_seed_same_output(capsys):
    a = _json(capsys, ["--rate", "20", "--arrival", "gamma", "--cv", "3", "--num-requests", "100", "--seed", "1"])
    b = _json(capsys, ["--rate", "20", "--arrival", "gamma", "--cv", "3", "--num-requests", "100", "--seed", "1"])
    assert a == b


@pytest.mark.parametrize("args,field", [
    (["--rate", "-1"], "rate"),
    (["--rate", "nan"], "rate"),
    (["--rate", "2", "--arrival", "gamma", "--cv", "0"], "cv"),
    (["--arrival", "closed"], "concurrency"),
    (["--rate", "2", "--num-requests", "0"], "num_requests"),
    (["--rate", "2", "--ttft-slo-ms", "-5"], "ttft_slo_ms"),
    ([], "--rate R or --concurrency C"),
    (["--rate", "2", "--arrival", "sometimes"], "arrival"),
    (["--rate", "2", "--input-len-cv", "-1"], "input_len_cv"),
    (["--rate", "2", "--output-len-cv", "inf"], "--output-len-cv"),
])
def test_bad_input_exits_2_naming_the_field(capsys, args, field):
    assert main(BASE + args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and field in err and "\n" not in err


def test_batch(tmp_path, capsys):
    f = tmp_path / "runs.jsonl"
    f.write_text('{"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "input_len": 256, "output_len": 16, "rate": 4, "num_requests": 50}\n'
                 '{"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "input_len": 256, "output_len": 16, "rate": -4}\n'
                 'not json\n')
    assert main(["simulate", "--batch", str(f)]) == 2
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["num_requests"] == 50 and "rate" in lines[1]["error"] and lines[2]["line"] == 3


def test_batch_shares_estimate_hardening_and_engine_options(tmp_path, capsys):
    """One --batch runner for estimate and simulate: a line nested 1,000 deep or not an object is
    one error record and the lines after it still run; vllm_version / custom GPU options work."""
    ok = {"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "input_len": 256, "output_len": 16, "rate": 2,
          "num_requests": 20, "vllm_version": "0.19", "disable_custom_all_reduce": True}
    f = tmp_path / "b.jsonl"
    f.write_text("[" * 1000 + "\n" + json.dumps([1]) + "\n" + json.dumps(ok) + "\n")
    assert main(["simulate", "--batch", str(f)]) == 2
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r.get("line") for r in out[:2]] == [1, 2] and all("error" in r for r in out[:2])
    assert out[2]["num_requests"] == 20 and "error" not in out[2]


@pytest.mark.parametrize("key,allowed", [("seed", "0 – 9,223,372,036,854,775,807"), ("concurrency", "1 – 100,000"),
                                         ("num_requests", "1 – 100,000"), ("rate", "1e-06 – 1e+06 requests/s")])
def test_batch_huge_integer_names_the_field_not_pythons_limit(tmp_path, capsys, key, allowed):
    # issue #18: a 5,000-digit seed / concurrency / num_requests gave Python's int-string-limit message
    line = '{"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "input_len": 256, "output_len": 16, "rate": 2, ' \
           f'"{key}": {"1234" * 1250}}}'
    f = tmp_path / "b.jsonl"
    f.write_text(line + "\n")
    assert main(["simulate", "--batch", str(f)]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error.startswith(f"{key}: got 12341234123412341234… (5,000 digits), allowed ") and allowed in error, error


@pytest.mark.parametrize("args,start", [
    (["--rate", "2", "--seed", "9" * 5000], "error: argument --seed: expected a whole number, got '999"),
    (["--rate", "2", "--seed", "-1"], "error: seed: got -1, allowed a whole number 0 – "),
    (["--rate", "2", "--cv", "x" * 5000], "error: argument --cv: expected a number, got 'xxx"),
    (["--rate", "9" * 400], "error: argument --rate: expected a finite number, got '999"),
    (["--rate", "2", "--arrival", "x" * 5000], "error: argument --arrival: invalid choice: 'xxx"),
])
def test_hostile_flags_give_one_short_line(capsys, args, start):
    assert main(BASE + args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(start) and len(err) < 400 and "\n" not in err, err


def test_a_run_cut_at_the_step_cap_says_truncated(capsys, monkeypatch):
    # issue #18: a run stopped at the simulator's step cap printed complete-looking results
    monkeypatch.setattr("calc.traffic.simulator.MAX_STEPS", 50)
    assert main(BASE + ["--rate", "50", "--num-requests", "200", "--format", "json"]) == 0
    captured = capsys.readouterr()
    d = json.loads(captured.out)
    assert d["truncated"] is True and 0 <= d["finished_requests"] < d["num_requests"] == 200
    assert captured.err.startswith("note: the simulation was cut at its step cap") and "of 200 requests" in captured.err
    monkeypatch.setattr("calc.traffic.simulator.MAX_STEPS", 5_000_000)
    assert main(BASE + ["--rate", "50", "--num-requests", "200", "--format", "json"]) == 0
    captured = capsys.readouterr()
    d = json.loads(captured.out)
    assert d["truncated"] is False and d["finished_requests"] == 200 and captured.err == ""


def test_length_bounds_keep_a_benchmark_sampler_s_lengths(capsys):
    """--length-bounds vllm-sharegpt: lognormal lengths inside vllm bench's ShareGPT filter (prompt 4-1024,
    output >= 4, total <= 2048), their sample means the asked means; fixed lengths are unchanged by it."""
    from calc.traffic.workload import VLLM_SHAREGPT_BOUNDS, make_workload, LengthSpec

    w = make_workload(arrival="burst", num_requests=500, input_len=LengthSpec("lognormal", 300, cv=1.5),
                      output_len=LengthSpec("lognormal", 250, cv=1.5), bounds=VLLM_SHAREGPT_BOUNDS, seed=2)
    assert w.input_len.min() >= 4 and w.input_len.max() <= 1024 and w.output_len.min() >= 4
    assert (w.input_len + w.output_len).max() <= 2048
    assert abs(w.input_len.mean() - 300) < 1.0 and abs(w.output_len.mean() - 250) < 1.0
    d = _json(capsys, ["--arrival", "burst", "--num-requests", "200", "--input-len-cv", "1", "--output-len-cv", "1",
                       "--length-bounds", "vllm-sharegpt"])
    assert d["length_bounds"] == "vllm-sharegpt" and d["finished_requests"] == 200


@pytest.mark.parametrize("bounds", ["sharegpt", {"max_prompt_len": "x"}, {"unknown": 3}])
def test_bad_length_bounds_name_the_field(bounds):
    from calc.cli.simulate import UsageError, simulate_record

    with pytest.raises(UsageError, match="length_bounds"):
        simulate_record({"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm", "input_len": 512, "output_len": 64,
                         "arrival": "burst", "num_requests": 10, "length_bounds": bounds})
