"""Browser tests of uploads (issue #19): an uploaded config.json, scenario file or load-test trace
stays in use after later clicks. The server releases uploaded bytes after every run
(ui.state.release_uploads); the next click used to fire the uploader's on_change on a DeletedFile
(the page replaced by "This app has encountered an error") or drop the trace for the synthetic
workload. AppTest cannot show this: it registers the file again before every run."""

import json
import re

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from ui.i18n import Translator  # noqa: E402
from ui.shell import PAGES  # noqa: E402

pytestmark = pytest.mark.e2e
LOAD = 30_000
NAV = {p.path: Translator("en")(p.title_key) for p in PAGES}
CRASH = "This app has encountered an error"
# A small Llama (head_dim 2048/32 = 64): KV per token 2·16·8·64·2 B = 32,768 B = 32 KiB.
TINY = {"_name_or_path": "tiny-upload-test", "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
        "max_position_embeddings": 8192}


def metric(page: Page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def expect_metric(page: Page, label: str, value: str):
    """The card ``label`` shows ``value``, and only one such card is left. While a rerun runs, the
    browser keeps the last run's elements until the new ones replace them; a card that moved stands
    beside its new copy for that while (a strict-mode violation for a plain locator, in CI)."""
    cards = page.get_by_test_id("stMetric").filter(has_text=label)
    expect(cards.filter(has_text=value).first).to_be_visible(timeout=LOAD)
    expect(cards).to_have_count(1, timeout=LOAD)
    expect(cards.get_by_test_id("stMetricValue")).to_have_text(value, timeout=LOAD)


def go_to(page: Page, path: str):
    page.get_by_test_id("stSidebar").locator(".st-key-app_nav").get_by_role("link", name=NAV[path]).click()


def type_number(page: Page, name: str, value: str):
    box = page.get_by_role("spinbutton", name=name)
    box.fill(value)
    box.press("Enter")
    expect(box).to_have_value(value, timeout=LOAD)


def assert_alive(page: Page):
    """The page is still the app: no crash page, no exception box, the sidebar drawn."""
    page.wait_for_load_state("networkidle")
    expect(page.get_by_text(CRASH)).to_have_count(0)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(page.get_by_test_id("stSidebar").locator(".st-key-app_nav a")).to_have_count(len(PAGES))


def upload(page: Page, section: str, key: str, path, name: str):
    """Open the sidebar section, give its uploader the file, wait for "<name> loaded"."""
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text(section).click()
    sidebar.locator(f".st-key-{key} input[type=file]").set_input_files(str(path))
    expect(page.get_by_test_id("stAlert").filter(has_text=f"{name} loaded")).to_be_visible(timeout=LOAD)


def test_uploaded_config_survives_page_switch_and_number_box(page: Page, streamlit_url, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(TINY))
    page.goto(streamlit_url + "/?lang=en")
    sidebar = page.get_by_test_id("stSidebar")
    expect_metric(page, "KV cache per token", "512 KiB")
    upload(page, "Your own model (config.json)", "config_upload", cfg, "tiny-upload-test")
    expect_metric(page, "KV cache per token", "32 KiB")
    go_to(page, "pages/kv_table.py")  # the next click after the upload (was the crash)
    expect(page.locator("h1").first).to_contain_text("Course §3.2", timeout=LOAD)
    assert_alive(page)
    go_to(page, "pages/memory.py")
    type_number(page, "Concurrency (requests at once)", "20")
    assert_alive(page)
    expect(page).to_have_url(re.compile(r"[?&]model=custom"))
    expect(sidebar.get_by_text(re.compile(r"^tiny-upload-test: "))).to_be_visible()
    expect_metric(page, "KV cache per token", "32 KiB")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.screenshot(path=tmp_path / "after_config_upload.png")


def test_uploaded_scenario_survives_page_switch_and_number_box(page: Page, streamlit_url, tmp_path):
    from ui.state import default_scenario, scenario_json  # what the download button serves

    doc = json.loads(scenario_json(default_scenario()))
    doc["controls"] |= {"concurrency": 40, "context": 1024}
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(doc))
    page.goto(streamlit_url + "/?lang=en")
    expect_metric(page, "KV cache per request", "1.00 GiB")
    upload(page, "Share and save", "scenario_upload", scenario, "scenario.json")
    expect_metric(page, "KV cache per request", "0.50 GiB")
    type_number(page, "Concurrency (requests at once)", "30")  # the next click after the upload
    assert_alive(page)
    go_to(page, "pages/kv_table.py")
    expect(page.locator("h1").first).to_contain_text("Course §3.2", timeout=LOAD)
    assert_alive(page)
    go_to(page, "pages/memory.py")
    expect_metric(page, "KV cache per request", "0.50 GiB")
    expect(page.get_by_role("spinbutton", name="Concurrency (requests at once)")).to_have_value("30")
    assert_alive(page)


def test_uploaded_trace_stays_in_use_after_other_clicks(page: Page, streamlit_url, tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("arrival_s,input_len,output_len\n" + "".join(f"{i * 0.5},{200 + i},{20 + i}\n" for i in range(40)))
    page.goto(streamlit_url + "/load_test?lang=en&lt_requests=100&lt_sweep=false")
    expect(page.get_by_test_id("stMetric").first).to_be_visible(timeout=LOAD)
    page.get_by_test_id("stExpander").filter(has_text="Or your own trace").locator("summary").click()  # lazy: drawn when opened
    page.locator(".st-key-lt_trace input[type=file]").set_input_files(str(trace))
    used = page.get_by_text("Trace trace.csv: 40 requests")
    expect(used).to_be_visible(timeout=LOAD)
    type_number(page, "Random seed", "7")  # the next click after the upload (was: synthetic workload)
    assert_alive(page)
    expect(used).to_be_visible()
    go_to(page, "pages/memory.py")
    expect(metric(page, "Max concurrency").first).to_be_visible(timeout=LOAD)
    go_to(page, "pages/load_test.py")
    expect(used).to_be_visible(timeout=LOAD)  # still the trace after a visit elsewhere
    assert_alive(page)
    page.get_by_role("button", name="Use the workload above instead of the trace").click()
    expect(used).to_have_count(0, timeout=LOAD)
    assert_alive(page)
