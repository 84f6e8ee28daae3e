"""Screenshots of every page in both languages (and the dark theme) into screenshots/.

Usage: .venv/bin/python scripts/screenshots.py   (needs /usr/bin/chromium; starts its own server)
Chinese text renders without any CJK font installed (the app serves its own subset, static/cjk-ui*.woff2);
emoji need an emoji font on the machine (Debian: fonts-noto-color-emoji).
"""

from __future__ import annotations


from browser import OUT, app_and_browser
VIEWS = [  # (file name, path and query, texts to click before the shot)
    ("memory_en", "/?lang=en"),
    ("memory_open_panels_en", "/?lang=en", ("Engine (vLLM)", "Share and save", "KV cache per token =",
                                             "Max concurrency =")),
    ("memory_open_panels_zh", "/?lang=zh", ("推理引擎（vLLM）", "分享与保存", "每 token 的 KV Cache =")),
    ("memory_zh", "/?lang=zh"),
    ("memory_context_sweep_en", "/?lang=en&sweep_context=true&model=meta-llama/Llama-3.1-8B&context=8192"),
    ("memory_does_not_fit_en", "/?lang=en&model=meta-llama/Llama-2-70b-hf&tp=2&concurrency=64"),
    ("kv_table_en", "/kv_table?lang=en"),
    ("kv_table_zh", "/kv_table?lang=zh"),
    ("memory_bad_params_en", "/?lang=en&concurrency=99999&gpu=nope"),
]


def main() -> None:
    with app_and_browser() as (url, browser):
        for theme in ("light", "dark"):
            ctx = browser.new_context(viewport={"width": 1600, "height": 2600}, color_scheme=theme)
            for name, path, *clicks in VIEWS if theme == "light" else [VIEWS[0], VIEWS[6]]:
                page = ctx.new_page()
                page.goto(url + path)
                page.get_by_test_id("stSidebar").wait_for(timeout=30_000)
                page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
                for text in (clicks[0] if clicks else ()):
                    page.get_by_text(text).first.click()
                    page.wait_for_timeout(400)
                page.wait_for_timeout(1500)
                file = OUT / f"{name}{'' if theme == 'light' else '_dark'}.png"
                page.screenshot(path=file)
                print(file)
                page.close()
            ctx.close()


if __name__ == "__main__":
    main()
