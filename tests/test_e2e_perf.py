"""Browser tests of the performance pages: Debian's chromium through pytest-playwright against a
real `streamlit run` (fixtures in conftest.py)."""

import re

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Page, expect  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 30_000  # ms: first load of a page, server warm-up included
BEST = "Best concurrency meeting the SLA"

# The shaded "meets the target" region of each panel, read from the figure plotly drew.
REGIONS_JS = """() => {
  const gd = document.querySelectorAll('.js-plotly-plot')[0];
  return gd.data.filter(t => t.fill === 'toself' && t.legendgroup === 'feasible')  // not the error bands (ui.bands)
              .map(t => Math.max(...t.x.filter(v => v !== null)));
}"""
STAR_JS = """() => {
  const gd = document.querySelectorAll('.js-plotly-plot')[0];
  return gd.data.filter(t => t.marker && t.marker.symbol === 'star' && t.x[0] !== null && t.xaxis === 'x')
                .map(t => [t.x[0], t.y[0]]);
}"""


def metric(page: Page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def _fill_path(page: Page) -> str:
    # every filled path of the first chart (the SLA regions and the error bands, ui.bands): the SLA's move one
    fills = page.locator(".js-plotly-plot").first.locator("path.js-fill")
    return "|".join(fills.nth(i).get_attribute("d") or "" for i in range(fills.count()))


def test_sla_target_moves_the_shaded_region_and_the_best_point(page: Page, streamlit_url):
    page.goto(streamlit_url + "/frontier?lang=en&overlays=")
    best = metric(page, BEST)
    expect(best).to_have_text(re.compile(r"^\d+$"), timeout=LOAD)
    page.locator(".js-plotly-plot").first.wait_for(timeout=LOAD)
    before_best = int(best.inner_text())
    assert page.evaluate(REGIONS_JS) == [50, 500]
    before_path = _fill_path(page)
    before_star = page.evaluate(STAR_JS)

    # the SLA is a number box shared with the load test and the planner (ui.traffic); the live one
    # (while a rerun redraws the row, Streamlit keeps the old one beside it, marked stale): its "−"
    # step lowers the target 5 ms and writes the link
    box = page.locator('.st-key-sla_tpot_ms:not([data-stale="true"])')
    box.get_by_test_id("stNumberInputStepDown").click()
    expect(box.locator("input")).to_have_value("45", timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]sla_tpot_ms=45"), timeout=LOAD)
    # the tighter target through an old link (slo_tpot_ms, the frontier's key before the SLA was
    # shared): read once as sla_tpot_ms
    page.goto(streamlit_url + "/frontier?lang=en&overlays=&slo_tpot_ms=30")
    expect(box.locator("input")).to_have_value("30", timeout=LOAD)
    expect(best).not_to_have_text(str(before_best), timeout=LOAD)
    assert int(best.inner_text()) < before_best
    expect(page).to_have_url(re.compile(r"[?&]sla_tpot_ms=30"))
    assert "slo_tpot_ms" not in page.url
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot')[0].data"
                           ".some(t => t.fill === 'toself' && Math.max(...t.x) === 30)", timeout=LOAD)
    assert page.evaluate(REGIONS_JS) == [30, 500]
    assert _fill_path(page) != before_path  # the drawn region moved, not only the data
    after_star = page.evaluate(STAR_JS)
    assert after_star and after_star[0][0] <= 30 < before_star[0][0]  # the star moved left, inside the target
    # the vLLM command block (ui.command_block: a <pre>, no syntax highlighter)
    expect(page.get_by_test_id("stMain").locator(".cmd-block pre").first).to_contain_text(f"--max-num-seqs {best.inner_text()}")


def test_scheduler_budget_slider_updates_the_timeline(page: Page, streamlit_url):
    page.goto(streamlit_url + "/scheduler?lang=en")
    title = page.locator(".chart-title").first
    expect(title).to_contain_text("budget 512 tokens per step", timeout=LOAD)
    slider = page.get_by_role("slider", name="max_num_batched_tokens")
    slider.focus()
    for _ in range(6):  # 512 → 128 in steps of 64
        page.keyboard.press("ArrowLeft")
    expect(slider).to_have_value("128")
    expect(title).to_contain_text("budget 128 tokens per step", timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]sched_budget=128"))


def test_roofline_batch_deep_link_and_chinese(page: Page, streamlit_url):
    page.goto(streamlit_url + "/roofline?lang=zh&rf_batch=64")
    expect(page.get_by_test_id("stMetric").filter(has_text="批量 64").first).to_be_visible(timeout=LOAD)
    expect(page.locator(".chart-title").first).to_contain_text("批量 64")


def test_frontier_page_controls_rerun_the_fragment_and_presets_the_app(page: Page, streamlit_url):
    # The frontier body is an st.fragment: its own controls rerun only it. A preset changes sidebar
    # values, so it reruns the whole app: the closed Engine section then counts 2 changed knobs.
    page.goto(streamlit_url + "/frontier?lang=en")
    expect(metric(page, BEST)).to_be_visible(timeout=LOAD)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text("2 changed from the defaults")).to_have_count(0)
    page.get_by_role("button", name="Low latency (8 / 2048)").click()
    expect(sidebar.get_by_text("2 changed from the defaults", exact=False)).to_be_visible(timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]max_num_seqs=8"))
    # With the share box open, a page control also updates the link in it (the app reruns).
    sidebar.get_by_text("Share and save").click()
    box = sidebar.get_by_label("Link to this view")
    expect(box).to_have_value(re.compile(r"max_num_seqs=8"), timeout=LOAD)
    page.get_by_text("Throughput per GPU").click()
    expect(box).to_have_value(re.compile(r"per_gpu=true"), timeout=LOAD)
