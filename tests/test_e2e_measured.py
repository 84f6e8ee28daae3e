"""Browser test of the user's own measurements (ui.measured): a `vllm bench serve --save-result`
file of the calibration set (tests/data: row t3-gs-q8-c1 of vllm_benchmarks.jsonl, Qwen3-8B on one
H100 SXM, one client) uploaded in the browser is drawn on the frontier and load-test charts;
"calibrate" lowers its error; the calibrated link, opened in a fresh browser context, shows the
same calibrated numbers. The upload is parsed in the uploader's callback (the server releases the
file after the run): the next clicks and the page switch must still have it."""

import re
from pathlib import Path

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from ui.i18n import Translator  # noqa: E402
from ui.shell import PAGES  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 60_000
NAV = {p.path: Translator("en")(p.title_key) for p in PAGES}
FILE = Path(__file__).parent / "data" / "vllm_bench_serve_qwen3_8b_c1.json"
CRASH = "This app has encountered an error"
SUMMARY = re.compile(r"Median \|error\| on your 1 row\(s\): ([0-9.]+) %")


def go_to(page: Page, path: str):
    page.get_by_test_id("stSidebar").locator(".st-key-app_nav").get_by_role("link", name=NAV[path]).click()


def metric(page: Page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def median_error(page: Page) -> float:
    text = page.get_by_text(SUMMARY).inner_text(timeout=LOAD)
    found = SUMMARY.search(text.replace("\u00a0", " "))
    assert found, text
    return float(found.group(1))


def test_upload_points_calibrate_and_the_calibrated_link(page: Page, streamlit_url, browser, tmp_path):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(streamlit_url + "/?lang=en&model=Qwen/Qwen3-8B&gpu=h100-sxm")
    go_to(page, "pages/frontier.py")
    expect(metric(page, "TTFT there")).to_be_visible(timeout=LOAD)
    page.get_by_text("Your measurements: upload").click()
    page.locator(".st-key-measured_upload input[type=file]").set_input_files(str(FILE))
    expect(page.get_by_test_id("stAlert").filter(has_text="Added 1 measured row(s)")).to_be_visible(timeout=LOAD)
    # the points on both panels of the frontier's first chart, with the band around the curves
    chart = page.locator(".st-key-frontier_sla_chart")
    expect(chart.locator(".legendtext", has_text="Your measurement")).to_have_count(1, timeout=LOAD)
    expect(chart.locator(".legendtext", has_text="Likely range (measurements)")).to_have_count(1)
    assert chart.locator(".scatterlayer .point").count() > 0
    before = median_error(page)
    page.screenshot(path=tmp_path / "frontier_measured.png", full_page=True)

    page.get_by_role("button", name="Calibrate the efficiency inputs on these results").click()
    expect(page.get_by_test_id("stAlert").filter(has_text="Calibrated on 1 row(s)")).to_be_visible(timeout=LOAD)
    expect(page).to_have_url(re.compile(r"eff_[a-z_]+="), timeout=LOAD)
    after = median_error(page)
    assert after < before, (before, after)
    expect(page.get_by_text(CRASH)).to_have_count(0)
    page.wait_for_load_state("networkidle")
    ttft, x = metric(page, "TTFT there").inner_text(), metric(page, "Throughput there").inner_text()
    calibrated_url = page.url

    # the rows stay in the session: the load test draws them on its latency distributions
    go_to(page, "pages/load_test.py")
    expect(page.locator(".legendtext", has_text="Your measurement (mean)").first).to_be_visible(timeout=LOAD)
    expect(page.get_by_test_id("stException")).to_have_count(0)

    # the calibrated link in a fresh browser (no session): the same calibrated view
    fresh = browser.new_context()
    try:
        other = fresh.new_page()
        other.goto(calibrated_url)
        expect(metric(other, "TTFT there")).to_have_text(ttft, timeout=LOAD)
        expect(metric(other, "Throughput there")).to_have_text(x, timeout=LOAD)
        assert re.search(r"eff_[a-z_]+=", other.url)
    finally:
        fresh.close()
