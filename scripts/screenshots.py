"""Screenshots of every page in both languages (and the dark theme) into screenshots/.

Usage: .venv/bin/python scripts/screenshots.py   (needs /usr/bin/chromium; starts its own server)
       .venv/bin/python scripts/screenshots.py --matrix [--out DIR] [--only TEXT] [--widths 390,1440]
           every page of ui/shell.py PAGES at 1440x900, 1920x1080 and 390x844, English and Chinese,
           light and dark theme, full page (file names: <page>_<lang>_<theme>_<width>.png); --only
           keeps the shots whose name contains TEXT.
Chinese text renders without any CJK font installed (the app serves its own subset, static/cjk-ui*.woff2);
emoji need an emoji font on the machine (Debian: fonts-noto-color-emoji).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from browser import OUT, ROOT, app_and_browser
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


SIZES = ((1440, 900), (390, 844), (1920, 1080))
# The 390 x 844 shots are a phone's (an iPhone 12-15's viewport): its browser's User-Agent too, which
# is how the server picks the phone layout of the charts (ui.phone).
PHONE_UA = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            "Version/17.5 Mobile/15E148 Safari/604.1")
LANGS = ("en", "zh")
THEMES = ("light", "dark")


def page_paths() -> list[tuple[str, str]]:
    """(name, URL path) of every page in ui/shell.py PAGES, the default page at ``/``."""
    sys.path.insert(0, str(ROOT))
    from ui.shell import PAGES, alias_path

    return [(alias_path(p), "/" if p.default else "/" + alias_path(p)) for p in PAGES]


def matrix(pages: list[tuple[str, str]], only: str = "",
           widths: tuple[int, ...] = ()) -> list[tuple[str, str, str, tuple[int, int]]]:
    """Every (file name, path and query, theme, viewport) of the matrix, grouped by size and theme
    (one browser context each); ``widths`` picks sizes by width, in that order (default: all)."""
    sizes = [next(s for s in SIZES if s[0] == w) for w in widths] if widths else SIZES
    return [(f"{name}_{lang}_{theme}_{w}", f"{path}?lang={lang}", theme, (w, h))
            for w, h in sizes for theme in THEMES for name, path in pages for lang in LANGS
            if only in f"{name}_{lang}_{theme}_{w}"]


def shoot_matrix(out: Path, only: str = "", widths: tuple[int, ...] = ()) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with app_and_browser() as (url, browser):
        ctx, key = None, None
        for name, path, theme, (w, h) in matrix(page_paths(), only, widths):
            if key != (theme, w, h):
                if ctx:
                    ctx.close()
                phone = dict(user_agent=PHONE_UA, is_mobile=True, has_touch=True) if w < 600 else {}
                ctx, key = browser.new_context(viewport={"width": w, "height": h}, color_scheme=theme, **phone), (theme, w, h)
            page = ctx.new_page()
            page.goto(url + path)
            page.get_by_test_id("stSidebar").wait_for(state="attached", timeout=60_000)
            try:
                page.locator(".js-plotly-plot, [data-testid='stDataFrame'], [data-testid='stTable']").first.wait_for(
                    timeout=60_000)
            except Exception:  # noqa: BLE001  (a page without a chart or table still gets its shot)
                print(f"{name}: no chart or table after 60 s")
            try:  # every placeholder filled (a page draws skeletons first, its charts and tables later)
                page.wait_for_function("!document.querySelector('[data-testid=stSkeleton]')", timeout=60_000)
            except Exception:  # noqa: BLE001
                print(f"{name}: placeholders left after 60 s")
            page.wait_for_timeout(2500)  # reruns settle (the theme is known after the first one)
            # The main area scrolls inside a fixed-height frame, so a full-page shot would stop at the
            # viewport: grow the viewport to the content's height instead.
            tall = page.evaluate("() => document.querySelector('[data-testid=stMain]')?.scrollHeight || 0")
            if tall > h:
                page.set_viewport_size({"width": w, "height": min(tall, 12_000)})
                page.wait_for_timeout(1000)
            file = out / f"{name}.png"
            page.screenshot(path=file, full_page=True)
            print(file, flush=True)
            page.close()
        if ctx:
            ctx.close()


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
    ap = argparse.ArgumentParser()
    ap.add_argument("--matrix", action="store_true", help="every page x 3 sizes x EN/ZH x light/dark")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", default="")
    ap.add_argument("--widths", default="", help="sizes by width, in this order, e.g. 390,1440")
    args = ap.parse_args()
    widths = tuple(int(w) for w in args.widths.split(",") if w)
    shoot_matrix(args.out, args.only, widths) if args.matrix else main()
