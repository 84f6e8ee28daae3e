"""Calibration: the calculator, with the default Efficiency and nothing tuned per row, against the
published measurements in bench/data (bench/calibration_report.py; sources in its README).

Fit set = high + medium confidence rows. Gates: median |error| < 15 % overall and < 20 % per
metric group; and the three regimes a user leans on most must each be credible (within 25 %):
batch-1 decode TPOT, large-batch throughput (TensorRT-LLM pm-008/010/011/012) and long-prompt
TTFT (2048 tokens, pm-002/006). ``pytest -s`` prints the per-row table.
"""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import calibration_report as cr  # noqa: E402

GROUPS = ("TTFT", "TPOT/ITL", "throughput")
MAX_THROUGHPUT_ROWS = ("pm-008", "pm-010", "pm-011", "pm-012")
LONG_PROMPT_TTFT_ROWS = ("pm-002", "pm-006")


@pytest.fixture(scope="module")
def comparisons():
    comps = cr.compare(cr.load_rows(include_low=False))
    print(f"\n{'row':<10} {'regime':<15} {'conf':<6} {'metric':<20} {'measured':>11} {'predicted':>11} {'error':>8}")
    for c in comps:
        print(f"{c.row_id:<10} {c.regime:<15} {c.confidence:<6} {c.metric:<20} {c.measured:>11.4g} {c.predicted:>11.4g} "
              f"{c.error:>+8.1%}")
    for group, err in cr.summarize(comps).items():
        print(f"median |error| {group:<11} {err:6.1%}")
    return comps


def _rows(comps, ids, metric):
    got = {c.row_id: c for c in comps if c.row_id in ids and c.metric == metric}
    assert set(got) == set(ids), f"missing rows {set(ids) - set(got)}"
    return got.values()


def test_fit_set_is_the_high_and_medium_rows(comparisons):
    assert {c.confidence for c in comparisons} == {"high", "medium"}
    assert len({c.row_id for c in comparisons}) == 41  # 33 high + 8 medium (data README)


def test_every_prediction_is_finite_and_positive(comparisons):
    bad = [(c.row_id, c.metric, c.predicted) for c in comparisons if not c.predicted > 0]
    assert not bad


def test_median_error_overall(comparisons):
    assert cr.summarize(comparisons)["all"] < 0.15


@pytest.mark.parametrize("group", GROUPS)
def test_median_error_per_group(comparisons, group):
    summary = cr.summarize(comparisons)
    assert group in summary
    assert summary[group] < 0.20, f"{group}: median |error| {summary[group]:.1%}"


def test_batch1_decode_tpot(comparisons):
    rows = [c for c in comparisons if c.regime == "decode_bs1" and c.metric == "tpot_s"]
    assert len(rows) >= 5
    for c in rows:
        assert abs(c.error) < 0.25, f"{c.row_id}: TPOT {c.predicted:.4g} s vs {c.measured:.4g} s ({c.error:+.1%})"


def test_large_batch_throughput(comparisons):
    for c in _rows(comparisons, MAX_THROUGHPUT_ROWS, "output_tokens_per_s"):
        assert abs(c.error) < 0.25, f"{c.row_id}: {c.predicted:.4g} tok/s vs {c.measured:.4g} ({c.error:+.1%})"


def test_long_prompt_ttft(comparisons):
    for c in _rows(comparisons, LONG_PROMPT_TTFT_ROWS, "ttft_s"):
        assert abs(c.error) < 0.25, f"{c.row_id}: TTFT {c.predicted:.4g} s vs {c.measured:.4g} s ({c.error:+.1%})"


# --- vLLM 0.10-0.11 serving benchmarks (bench/data/vllm_benchmarks.jsonl), asked as the CLI is asked:
# closed loops with `estimate --concurrency C`, bursts and static batches with `simulate --arrival burst`.
# Median |error| per group is within issue #17's 10 % target on the vLLM rows and on both files
# together, and the p90 within its 35 % on both files together (TTFT 34.9 %, TPOT 30.2 %, throughput 17.4 %;
# the worst: bursts through the API server, MoE on A100, MI300X); the gates hold today's level.
VLLM_MEDIAN_CEILING = {"TTFT": 0.10, "TPOT/ITL": 0.08, "throughput": 0.07, "E2E": 0.05, "all": 0.09}
# E2E: the MI300X static batches, 21.9 % -> 2.5 % with rocm_custom_allreduce_latency_s


@pytest.fixture(scope="module")
def vllm_comparisons():
    return cr.compare_vllm(cr.load_vllm_rows())


BOTH_FILES_MEDIAN_TARGET = 0.10  # issue #17: TTFT, TPOT and throughput each
BOTH_FILES_P90_CEILING = {"TTFT": 0.35, "TPOT/ITL": 0.35, "throughput": 0.23}  # the target is 0.35 (TTFT: 39.5 %
# -> 34.9 % since the LMDeploy closed loops are asked with their harness's start; TPOT: 37.6 % -> 30.2 % since the
# ShareGPT bursts are asked within vllm bench's sampler bounds and with the chat template's tokens)


@pytest.mark.parametrize("group", sorted(BOTH_FILES_P90_CEILING))
def test_both_files_median_within_target_and_p90_does_not_regress(comparisons, vllm_comparisons, group):
    both = comparisons + vllm_comparisons
    median, p90 = cr.summarize(both)[group], cr.p90_errors(both)[group]
    assert median <= BOTH_FILES_MEDIAN_TARGET, f"{group}: median |error| {median:.1%}"
    assert p90 <= BOTH_FILES_P90_CEILING[group], f"{group}: p90 |error| {p90:.1%}"


def test_every_vllm_row_is_asked_and_scored(vllm_comparisons):
    rows = cr.load_vllm_rows()
    assert len(rows) == 27
    assert {c.row_id for c in vllm_comparisons} == {r["id"] for r in rows}
    assert {r["load"]["arrival"] for r in rows} == {"closed", "burst"}
    bad = [(c.row_id, c.metric, c.predicted) for c in vllm_comparisons if not c.predicted > 0]
    assert not bad


@pytest.mark.parametrize("group", sorted(VLLM_MEDIAN_CEILING))
def test_vllm_median_error_does_not_regress(vllm_comparisons, group):
    summary = cr.summarize(vllm_comparisons)
    assert summary[group] <= VLLM_MEDIAN_CEILING[group], f"{group}: median |error| {summary[group]:.1%}"


def test_the_vllm_mechanisms_move_the_rows_towards_the_measurements():
    """Before/after of the five efficiency terms vLLM rows need (the engine's per-sequence CPU in
    every step, the API server's time per request, vLLM's share of Hopper's peak, its GEMMs' 0.6 of
    peak where TensorRT-LLM's reach 0.7, its MoE kernels' share on Ampere), lengths and
    preemption asked as the benchmarks ran them: without them median |error| was throughput 36 %
    (p90 108 %), TTFT 45 %, TPOT 34 %, static-batch E2E 31 %."""
    from calc.spec.inputs import Efficiency

    rows = cr.load_vllm_rows()
    # (request_overhead_s as it was before the API server's time was refitted with its turn-taking: 28 ms)
    before = cr.compare_vllm(rows, Efficiency(sequence_overhead_s=0.0, api_server_request_s=0.0, hopper_flops_scale=1.0,
                                              request_overhead_s=0.028,
                                              prefill_flops_fraction=0.7, decode_flops_fraction=0.7,
                                              ampere_moe_flops_scale=1.0))
    after = cr.compare_vllm(rows)
    b, a = cr.summarize(before), cr.summarize(after)
    assert b["throughput"] > 0.3 and b["TTFT"] > 0.4 and b["TPOT/ITL"] > 0.3
    assert a["throughput"] < b["throughput"] - 0.2
    assert cr.p90_errors(after)["throughput"] < cr.p90_errors(before)["throughput"] - 0.3
    assert a["TTFT"] < b["TTFT"] - 0.15 and a["TPOT/ITL"] < b["TPOT/ITL"] - 0.15 and a["E2E"] < b["E2E"]


def test_chat_rows_are_asked_with_the_template_and_the_sampler_bounds():
    """gpustack ran every row through the chat endpoint (``--backend openai-chat``): the engine prefills
    ChatML's 8 tokens around each Qwen3 prompt, which ``vllm bench serve`` does not count; its ShareGPT
    rows' lengths are what vllm bench's sampler kept (prompt 4-1024, output >= 4, total <= 2048 tokens).
    The offline ROCm runs and the completions-endpoint run have neither."""
    from calc.cli.measured import chat_template_tokens, length_bounds

    rows = {r["id"]: r for r in cr.load_vllm_rows() + cr.load_vllm_rows(cr.FOUND_PATH)}
    assert chat_template_tokens(rows["t3-gs-q14h-short"]) == 8 and chat_template_tokens(rows["t3-gs-q8-c1"]) == 8
    assert chat_template_tokens(rows["t3-rocm-thr-70B-128-2048"]) == 0 and chat_template_tokens(rows["kv331-q06h-burst"]) == 0
    assert length_bounds(rows["t3-gs-q14h-sharegpt"], 8) == {"min_prompt_len": 12, "max_prompt_len": 1032,
                                                            "min_output_len": 4, "max_total_len": 2056}
    assert length_bounds(rows["t3-gs-q14h-short"]) is None


def test_sharegpt_burst_tpot_is_not_one_draw_s_luck():
    """t3-gs-q14h-sharegpt (Qwen3-14B, H100, 1,000 ShareGPT prompts at once): its TPOT error was -32 to -39 %
    over five seeds of the unbounded lognormal lengths (whose sample means missed the run's by up to 6 %);
    asked as run it is -29 to -32 % (still short: the H100 hosts' bursts, README issue 17). Since the API
    server's requests take turns (Efficiency.api_server_final_share) they reach the engine together:
    -19 to -21 % over seeds 0-4 (TTFT -2 to -4 %)."""
    import calc.cli.measured as measured
    from unittest import mock

    row = {r["id"]: r for r in cr.load_vllm_rows()}["t3-gs-q14h-sharegpt"]
    simulate = measured.simulate_record
    for seed in (0, 1, 3):
        with mock.patch.object(measured, "simulate_record", lambda o, e, s=seed: simulate({**o, "seed": s}, e)):
            err = measured.ask_row(row)["tpot_s"] / row["measured"]["tpot_s"]["value"] - 1
        assert -0.25 < err < -0.15, (seed, err)


def test_closed_loops_of_a_chat_dataset_are_within_a_few_percent():
    """vLLM 0.11, Qwen3-8B on one H100, ShareGPT closed loops of 1/2/4/8 clients (gpustack rows
    t3-gs-q8-*), asked as `estimate --concurrency C --input-len-cv 1 --output-len-cv 1`: TPOT within
    3 % (7.28 -> 7.71 ms measured: the engine's 35 us per extra sequence and the other prompts riding
    along), TTFT within 2 % at 1-4 clients (59 -> 64 ms measured: prefill and the step in flight ~14.5 ms
    + the API server's 14.5 ms + 30 ms of request latency; +7 to +9 % with 22 + 28 ms) and -13.5 % at 8
    (75 ms measured; -6 % with 22 ms: a closed loop's clumps reach the API server one after another here,
    their turn-taking is modelled for requests that arrive together only), output tokens/s within 10 %."""
    rows = {r["id"]: r for r in cr.load_vllm_rows()}
    for c in (1, 2, 4, 8):
        row = rows[f"t3-gs-q8-c{c}"]
        got = cr.ask_vllm_row(row)
        m = {k: v["value"] for k, v in row["measured"].items()}
        assert got["tpot_s"] == pytest.approx(m["tpot_s"], rel=0.03), c
        assert got["ttft_s"] == pytest.approx(m["ttft_s"], rel=0.02 if c < 8 else 0.15), c
        assert got["output_tokens_per_s"] == pytest.approx(m["output_tokens_per_s"], rel=0.10), c


def test_found_rows_are_asked_as_their_benchmark_ran_and_kept_out_of_the_gates():
    """bench/data/vllm_found.jsonl: public runs this project found (an open loop at a Poisson rate, a
    burst; vLLM 0.19, the completions endpoint), asked with `simulate --rate` / `--arrival burst`.
    Reported apart, not fitted: today they show the API server of 0.19's completions endpoint is about
    twice as fast per request as the 0.11 chat endpoint our default comes from (95 vs 44 requests/s)."""
    rows = cr.load_vllm_rows(cr.FOUND_PATH)
    assert {r["load"]["arrival"] for r in rows} == {"poisson", "burst"}
    comps = {(c.row_id, c.metric): c for c in cr.compare_vllm(rows)}
    assert all(c.predicted > 0 for c in comps.values())
    assert abs(comps[("kv331-q06h-rate16", "tpot_s")].error) < 0.15  # the step time of a 0.6B model at ~6 sequences
    assert comps[("kv331-q06h-burst", "requests_per_s")].error < -0.3  # the API-server gap, stated in the README


def test_lmdeploy_closed_loops_mean_in_the_harness_start():
    # profile_throughput.py @3e391df467 starts its C threads together and averages FTL over all N = 3000
    # requests: ((N − C)·steady + C·start) / N. By hand: C = 128, steady 0.04 s, start 2.4 s:
    # (2872 × 0.04 + 128 × 2.4) / 3000 = (114.88 + 307.2) / 3000 = 0.140693 s.
    assert cr.harness_mean_ttft_s(steady_s=0.04, start_s=2.4, concurrency=128, num_requests=3000) == pytest.approx(
        0.140693, abs=1e-6)
    # the start: every prompt of the C context-decoded in one iteration, then one decode step, then t_request
    from calc.cli.measured import efficiency_for_engine
    from calc.spec.catalog import get_gpu, get_model
    from calc.spec.inputs import Efficiency, ServingConfig
    from calc.timing.estimate import engine_numbers
    from calc.timing.serving import decode_step, prefill_step

    eff = efficiency_for_engine("LMDeploy (TurboMind) v0.1.0a1", Efficiency())
    eng = engine_numbers(get_model("meta-llama/Llama-2-7b-hf"), get_gpu("a100-80gb"),
                         ServingConfig(dtype="float16", disable_custom_all_reduce=True), eff)
    start = cr.turbomind_start_ttft_s(eng, concurrency=128, input_len=270, request_s=0.002)
    t_pf = prefill_step(eng, prompts=128, prompt_tokens=270).step_s
    t_dec = decode_step(eng, batch=128, context_tokens=270).step_s
    assert start == pytest.approx(t_pf + t_dec + 0.002)
    assert 2.0 < start < 2.4  # 34,560 prompt tokens at ~16 k tokens/s; the table's FTL(max) is 2.241 s


def test_lmdeploy_closed_loop_rows_move_towards_the_measurements(comparisons):
    ttft = {c.row_id: c for c in comparisons if c.metric == "ttft_s" and c.row_id in ("pm-069", "pm-070")}
    assert ttft["pm-069"].error == pytest.approx(-0.358, abs=0.01)  # -80.8 % asked as the steady state
    assert ttft["pm-070"].error == pytest.approx(-0.252, abs=0.01)  # -92.7 %


def test_xiongjiedai_dec_2023_rows_are_asked_as_they_ran():
    rows = {r["id"]: cr.as_run(r) for r in cr.load_rows(include_low=True)}
    pp, tg = rows["pm-131-pp"], rows["pm-130-tg"]
    assert pp["input_len"] == "494" and float(pp["ttft_s"]) == pytest.approx(494 / 7367.0, rel=1e-4)
    assert tg["gpu"] == "a100-80gb-pcie"  # nvidia-smi in LLaMA 2/Professional GPUs/A100_v2.ipynb
    assert rows["pm-126-pp"]["input_len"] == "512"  # the May 2024 Llama-3 rows ran llama-bench pp 512


def test_a_short_closed_run_is_asked_as_it_ran_and_a_long_one_for_its_steady_state():
    """calc.cli.measured.ask_row: a closed loop of N ≤ 10·C requests (CLOSED_RUN_CYCLES) is simulated from
    its synchronized start with every request counted; a longer one is estimate's steady state.
    vLLM issue #40838 (gpt-oss-120b, H200 TP 4, 300 clients, 3,000 random 1,058 / 1,038 prompts: 10 cycles):
    median TTFT 0.474 s measured; the steady state says 0.095 s (a mean, -80 %). Asked as it ran, the simulated
    median is 0.284 s (-40 %; the row is a median, and ask_row answers a median with the simulated median since
    2026-12-05: its simulated mean, 0.436 s, read -8 % before), three times the steady state: 300 prompts queued
    at once for the token budget at the start. Its client, benchmark_serving / vllm bench serve, goes through
    the API server (measured.through_api_server). The gpustack closed loops (100 prompts, 1-8 clients: ≥ 12.5
    cycles) stay the steady state, equal to `estimate`."""
    import json
    from calc.cli import measured
    from calc.cli.estimate import estimate_record
    data = Path(__file__).resolve().parents[1] / "bench" / "data" / "gptoss_found.jsonl"
    row = next(r for r in (json.loads(x) for x in data.read_text().splitlines()
                           if x.strip()) if r["id"] == "vllm40838-oss120-h200-tp4-c300")
    assert row["load"]["num_requests"] <= measured.CLOSED_RUN_CYCLES * row["load"]["concurrency"]
    assert row["measured"]["ttft_s"]["stat"] == "median"
    got = measured.ask_row(row)["ttft_s"]
    assert got == pytest.approx(0.284, rel=0.05) and got == pytest.approx(row["measured"]["ttft_s"]["value"], rel=0.45)
    long_run = {**row, "load": {**row["load"], "num_requests": 11 * row["load"]["concurrency"]}}
    steady = measured.ask_row(long_run)["ttft_s"]
    options = {k: v for k, v in row["options"].items() if k != "concurrency"}
    from calc.spec.inputs import Efficiency
    eff = measured.efficiency_for_engine(row.get("engine", ""), Efficiency(),
                                         api_server=measured.through_api_server(row))
    assert steady == pytest.approx(estimate_record({**options, "concurrency": 300}, eff)["ttft_s"], rel=1e-9)
    assert got > 2.5 * steady  # the start's wave: 300 prompts queued for the token budget together


def test_the_rocm_all_reduce_latency_fitted_on_70b_holds_on_the_kept_back_405b_runs(tmp_path):
    """rocm_custom_allreduce_latency_s (30 us) was chosen on the calibration set's seven MI300X Llama-3.1-70B
    static batches (E2E median 21.9 % -> 2.5 %); the same page's sixteen Llama-3.1-405B runs (126 layers
    where 70B has 80, so 1.6x the all-reduces a step) were kept back: median |error| 26.6 % -> 9.2 %."""
    import json

    from calc.cli.main import main
    from calc.spec.inputs import Efficiency

    path = str(cr.ROOT / "bench" / "data" / "rocm_dev_docker_found.jsonl")

    def median(extra):
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["validate", path, "--format", "json", *extra]) == 0
        return json.loads(buf.getvalue())["summary"]["e2e"]["median_abs_error"]

    old = tmp_path / "cuda_latency.json"  # the CUDA kernel's 8 us on AMD too: before
    old.write_text(json.dumps({"rocm_custom_allreduce_latency_s": Efficiency().custom_allreduce_latency_s}))
    before, after = median(["--efficiency", str(old)]), median([])
    assert before > 0.25 and after < 0.10, (before, after)


def test_rocm_throughput_table_is_read_as_output_tokens_per_s(vllm_comparisons):
    """calc.cli.measured.read_as_run: ROCm's 'Throughput (tokens/s)' is output tokens/s. Read as total the
    2,048 + 2,048 run was +129 % where the 128 + 2,048 run was +6 %; read as output both are within 15 %, and
    so are the page's two other 70B runs, kept back (bench/data/rocm_dev_docker_found.jsonl: +13 / +12 %)."""
    from calc.cli.measured import read_as_run, score_rows

    rocm = {c.row_id: c for c in vllm_comparisons if c.row_id.startswith("t3-rocm-thr")}
    assert {c.metric for c in rocm.values()} == {"output_tokens_per_s"}
    assert all(abs(c.error) < 0.15 for c in rocm.values()), {k: round(c.error, 3) for k, c in rocm.items()}
    kept = [json.loads(x) for x in (cr.ROOT / "bench" / "data" / "rocm_dev_docker_found.jsonl").read_text().splitlines()]
    seventy = [s for s in score_rows([r for r in kept if r["id"].startswith("rocm-thr-70b")])]
    assert len(seventy) == 2 and all(abs(s.error) < 0.15 for s in seventy)
    raw = [json.loads(x) for x in cr.JSONL_PATH.read_text().splitlines() if '"t3-rocm-thr' in x]
    assert all("total_tokens_per_s" in r["measured"] for r in raw)  # the row file's own reading, kept as shipped
    assert all("output_tokens_per_s" in read_as_run(r)["measured"] for r in raw)
