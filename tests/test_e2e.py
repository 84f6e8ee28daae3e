"""Browser tests: Debian's chromium through pytest-playwright against a real `streamlit run`."""

import re

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from ui.i18n import Translator  # noqa: E402
from ui.shell import PAGES  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 30_000  # ms: first load of a page, server warm-up included
NAV = [Translator("en")(p.title_key) for p in PAGES]  # our navigation, in order
NAV_ZH = [Translator("zh")(p.title_key) for p in PAGES]
NAV_OF = {p.path: Translator("en")(p.title_key) for p in PAGES}  # by script: positions move when pages are added
assert NAV[:2] == ["Memory", "KV table (course §3.2)"]


def metric(page: Page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def _label(text: str) -> str:
    return text.strip().splitlines()[-1].strip()  # drop the icon line


def sidebar_nav(page: Page) -> list[str]:
    links = page.get_by_test_id("stSidebar").locator(".st-key-app_nav a")
    # drawn by the app's script after the page's first elements: on a loaded box a second after the heading it
    # was still empty (fresh-clone CI of c11829e, another browser test running beside it)
    expect(links.first).to_be_visible(timeout=LOAD)
    return [_label(t) for t in links.all_inner_texts()]


def test_slider_updates_metric_chart_and_url(page: Page, streamlit_url):
    page.goto(streamlit_url + "/?lang=en")
    expect(metric(page, "Max concurrency")).to_have_text("58", timeout=LOAD)
    in_use = metric(page, "KV in use")
    expect(in_use).to_have_text("16.00 GiB")
    entry = page.get_by_role("spinbutton", name="Concurrency (requests at once)")
    entry.fill("20")  # typed: a precise value, no slider dragging
    entry.press("Enter")
    expect(in_use).to_have_text("20.00 GiB", timeout=LOAD)
    expect(entry).to_have_value("20")
    expect(page).to_have_url(re.compile(r"[?&]concurrency=20"))
    expect(page.locator(".js-plotly-plot .xtick text").filter(has_text="20 ★")).to_have_count(1)
    # Beyond what fits: the chart marks it and the page says so; the card says how many of them fit.
    entry.fill("1024")
    entry.press("Enter")
    expect(page.get_by_test_id("stAlert").filter(has_text="1,024 requests")).to_be_visible(timeout=LOAD)
    expect(page.locator(".js-plotly-plot .annotation-text").filter(has_text="max 58")).to_have_count(1)
    expect(page.get_by_test_id("stMetric").filter(has_text="58 of 1,024 req. fit")).to_be_visible()
    # An engine knob: gpu_memory_utilization 0.90 -> 0.50 shrinks the KV pool.
    page.get_by_test_id("stSidebar").get_by_text("Engine (vLLM)").click()
    util = page.get_by_role("slider", name="gpu_memory_utilization")
    util.focus()
    for _ in range(40):
        page.keyboard.press("ArrowLeft")
    expect(util).to_have_value("0.5")
    expect(metric(page, "Max concurrency")).to_have_text("26")
    expect(page).to_have_url(re.compile(r"[?&]gpu_memory_utilization=0.5"))


def test_copied_link_opens_the_same_view(page: Page, streamlit_url, browser):
    page.goto(streamlit_url + "/?lang=en&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&context=8192"
              "&concurrency=48&kv_cache_dtype=fp8&sweep_context=true")
    expect(metric(page, "KV cache per token")).to_have_text("64 KiB", timeout=LOAD)
    page.get_by_test_id("stSidebar").get_by_text("Share and save").click()
    box = page.get_by_test_id("stSidebar").get_by_label("Link to this view")
    expect(box).to_have_value(re.compile(r"concurrency=48"), timeout=LOAD)  # the section is drawn when opened
    link = box.input_value().strip()
    assert link.startswith(streamlit_url) and "concurrency=48" in link
    values = {lab: metric(page, lab).inner_text() for lab in ("Weights per GPU", "KV cache per request",
                                                               "Max concurrency", "KV in use")}
    other = browser.new_context(viewport={"width": 1400, "height": 1800})  # another machine, a new session
    try:
        p2 = other.new_page()
        p2.goto(link)
        for label, value in values.items():
            expect(metric(p2, label)).to_have_text(value, timeout=LOAD)
        expect(p2.get_by_role("spinbutton", name="Concurrency (requests at once)")).to_have_value("48")
        expect(p2.locator(".js-plotly-plot .g-xtitle").first).to_contain_text("Context length")
    finally:
        other.close()


def test_page_switch_keeps_shared_state_in_the_url(page: Page, streamlit_url):
    page.goto(streamlit_url + "/?lang=en&concurrency=40&context=1024")
    expect(metric(page, "KV cache per request")).to_have_text("0.50 GiB", timeout=LOAD)
    page.get_by_test_id("stSidebar").get_by_role("link", name=NAV[1]).click()
    expect(page.locator("h1").first).to_contain_text("Course §3.2", timeout=LOAD)
    expect(page).to_have_url(re.compile(r"/kv_table\?.*concurrency=40"))
    expect(page).to_have_url(re.compile(r"[?&]context=1024"))
    page.get_by_test_id("stSidebar").get_by_role("link", name=NAV[0]).click()
    expect(metric(page, "KV cache per request")).to_have_text("0.50 GiB", timeout=LOAD)
    expect(page.get_by_role("spinbutton", name="Concurrency (requests at once)")).to_have_value("40")


def test_sla_and_rate_follow_from_the_planner_to_the_load_test_and_the_frontier(page: Page, streamlit_url):
    """One SLA and one rate (ui.traffic): an old planner link is read as the shared keys, and what
    is set on one page is what the next page shows and puts in its link."""
    page.goto(streamlit_url + "/planner?lang=en&pl_ttft_ms=800&pl_rate=1")  # the planner's old keys
    ttft = page.get_by_role("spinbutton", name="SLA: TTFT (ms)")
    expect(ttft).to_have_value("800", timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]sla_ttft_ms=800"), timeout=LOAD)
    assert "pl_ttft_ms" not in page.url and "pl_rate" not in page.url
    tpot = page.get_by_role("spinbutton", name="SLA: TPOT (ms)")
    tpot.fill("40")
    tpot.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]sla_tpot_ms=40"), timeout=LOAD)
    rate = page.get_by_role("spinbutton", name="Rate (requests/s)")
    for name in (NAV_OF["pages/load_test.py"], NAV_OF["pages/frontier.py"]):  # the load test, then the frontier
        page.get_by_test_id("stSidebar").get_by_role("link", name=name).click()
        expect(page.get_by_test_id("stMetric").first).to_be_visible(timeout=LOAD)
        expect(ttft).to_have_value("800", timeout=LOAD)
        expect(tpot).to_have_value("40")
        if name == NAV_OF["pages/frontier.py"]:  # the frontier's rate is in a lazy section: drawn when opened
            page.get_by_test_id("stExpander").filter(has_text="Price, replicas, rate and lengths").locator("summary").click()
        expect(rate).to_have_value("1.00", timeout=LOAD)
        expect(page).to_have_url(re.compile(r"[?&]sla_ttft_ms=800"), timeout=LOAD)
        expect(page).to_have_url(re.compile(r"[?&]sla_tpot_ms=40"))


def test_switch_to_chinese(page: Page, streamlit_url):
    page.goto(streamlit_url + "/?lang=en")
    expect(page.locator("h1").first).to_contain_text("GPU memory", timeout=LOAD)
    page.get_by_test_id("stSidebar").get_by_text("中文").click()
    expect(page.locator("h1").first).to_contain_text("显存", timeout=LOAD)
    expect(page).to_have_url(re.compile(r"[?&]lang=zh"))
    expect(metric(page, "每卡权重")).to_have_text("12.55 GiB")
    expect(page.locator(".js-plotly-plot .g-ytitle").first).to_contain_text("每卡显存（GiB）")
    assert sidebar_nav(page) == NAV_ZH and NAV_ZH[:2] == ["显存", "KV 表（课程 §3.2）"]


def test_bad_url_parameter_warns_and_falls_back(page: Page, streamlit_url):
    page.goto(streamlit_url + "/?lang=en&concurrency=abc&gpu=h999")
    expect(metric(page, "Max concurrency")).to_have_text("58", timeout=LOAD)
    alerts = page.get_by_test_id("stAlert")
    expect(alerts.filter(has_text="concurrency=abc")).to_be_visible()
    expect(alerts.filter(has_text="gpu=h999")).to_be_visible()
    expect(page.get_by_role("spinbutton", name="Concurrency (requests at once)")).to_have_value("16")


def test_deep_link_cold_start_shows_only_our_navigation(page: Page, fresh_streamlit_url):
    """First request to a fresh server is a deep link to a non-default page: the pages/ folder must
    not bring Streamlit's automatic page list (app / kv_table / memory)."""
    page.goto(fresh_streamlit_url + "/kv_table?lang=en&concurrency=32")
    expect(page.locator("h1").first).to_contain_text("Course §3.2", timeout=LOAD)
    expect(page.get_by_test_id("stSidebar").locator(".st-key-app_nav a")).to_have_count(len(NAV))
    assert sidebar_nav(page) == NAV
    expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
    sidebar_links = [_label(t) for t in page.get_by_test_id("stSidebar").locator("a").all_inner_texts()]
    assert sidebar_links == NAV, sidebar_links
    expect(page.get_by_role("spinbutton", name="Concurrency (requests at once)")).to_have_value("32", timeout=LOAD)


def test_csv_download_is_built_on_click(page: Page, streamlit_url):
    """Download buttons get their data as a callable (nothing built or fetched while the page
    loads): a click still saves the file, with the page's values in it."""
    page.goto(streamlit_url + "/?lang=en&concurrency=20")
    expect(metric(page, "KV in use")).to_have_text("20.00 GiB", timeout=LOAD)
    with page.expect_download(timeout=LOAD) as info:
        page.get_by_test_id("stDownloadButton").filter(has_text="Download chart data (CSV)").click()
    d = info.value
    assert d.suggested_filename == "memory_sweep.csv"
    text = open(d.path(), encoding="utf-8").read()
    assert text.splitlines()[0].startswith("concurrency,") and "\n20," in text


def test_memory_page_by_its_name(page: Page, streamlit_url):
    """Issue #19: /memory said "Page not found" (the default page lives at / only); it opens the
    memory page now, with the link's state, and the navigation is unchanged (no extra entry)."""
    page.goto(streamlit_url + "/memory?lang=en&gpu=h100-sxm")
    expect(page.locator("h1").first).to_have_text(re.compile(r"^GPU memory"), timeout=LOAD)
    expect(page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").nth(1).locator("input")).to_have_value(
        "NVIDIA H100 SXM5 80GB", timeout=LOAD)  # the sidebar may still be drawing on a loaded box
    page.wait_for_timeout(1000)
    assert page.get_by_text("Page not found").count() == 0
    assert re.search(r"/memory\?.*gpu=h100-sxm", page.url)
    assert sidebar_nav(page) == NAV
    page.goto(streamlit_url + "/?lang=en")  # the root still opens it
    expect(page.locator("h1").first).to_have_text(re.compile(r"^GPU memory"), timeout=LOAD)


def test_heavy_planner_link_shows_its_progress_then_its_result(page: Page, streamlit_url):
    """Issue 18: the 405B p99 planner link (~5 s of CPU) runs in the server's worker process; the page
    shows a bar with the run's CPU seconds against the budget, then the plan."""
    page.goto(streamlit_url + "/planner?lang=en&model=meta-llama%2FLlama-3.1-405B&sla_stat=p99&pl_top=50"
              "&context=131072&max_model_len=131072&output_len=65536&sla_ttft_ms=600000&sla_tpot_ms=10000&rate=7777")
    bar = page.get_by_test_id("stProgress")
    expect(bar).to_contain_text(re.compile(r"s of CPU of this server's budget of 15 s"), timeout=LOAD)
    expect(bar).to_have_count(0, timeout=120_000)
    expect(metric(page, "Configurations evaluated")).to_be_visible()
