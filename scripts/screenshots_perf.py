"""Screenshots of the performance pages (roofline, frontier, scheduler) in both languages into
screenshots/ (git-ignored), full page and one per chart.

Usage: .venv/bin/python scripts/screenshots_perf.py [name-filter]   (needs /usr/bin/chromium)
"""

from __future__ import annotations

import sys

from browser import OUT, app_and_browser
OVERLAYS = "&overlays=kv%3Afp8&overlays=tp%3A2&overlays=gpu%3Ah100-sxm&overlays=preset%3Alow_latency"
VIEWS = [  # (file name, path and query)
    ("roofline_en", "/roofline?lang=en"),
    ("roofline_zh", "/roofline?lang=zh"),
    ("roofline_batch256_en", "/roofline?lang=en&rf_batch=256&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm"),
    ("frontier_en", "/frontier?lang=en"),
    ("frontier_zh", "/frontier?lang=zh"),
    ("frontier_overlays_en", "/frontier?lang=en" + OVERLAYS),
    ("frontier_not_fit_en", "/frontier?lang=en&model=meta-llama/Llama-3.1-405B&gpu=l4"),
    ("scheduler_en", "/scheduler?lang=en"),
    ("scheduler_zh", "/scheduler?lang=zh"),
    ("roofline_panels_en", "/roofline?lang=en"),
    ("frontier_panels_zh", "/frontier?lang=zh"),
    ("scheduler_panels_en", "/scheduler?lang=en"),
]


def main(only: str = "") -> None:
    with app_and_browser() as (url, browser):
        ctx = browser.new_context(viewport={"width": 1600, "height": 6000})
        tall = browser.new_context(viewport={"width": 1600, "height": 11000})
        for name, path in VIEWS:
            if only and only not in name:
                continue
            page = (tall if "panels" in name else ctx).new_page()
            page.goto(url + path)
            page.get_by_test_id("stSidebar").wait_for(timeout=30_000)
            if "not_fit" in name:
                page.get_by_test_id("stAlert").first.wait_for(timeout=30_000)
            else:
                page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
            page.wait_for_timeout(2500)
            if "panels" in name:  # open every "why this number" panel
                for summary in page.get_by_test_id("stExpander").locator("summary").all():
                    summary.click()
                page.wait_for_timeout(1500)
            page.screenshot(path=OUT / f"{name}.png")
            print(OUT / f"{name}.png")
            for i, chart in enumerate([] if "panels" in name else page.locator(".js-plotly-plot").all()):
                chart.scroll_into_view_if_needed()
                chart.screenshot(path=OUT / f"{name}_chart{i + 1}.png")
                print(OUT / f"{name}_chart{i + 1}.png")
            page.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
