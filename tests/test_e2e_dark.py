"""Browser: in the dark theme every drawn line and marker outline reads on the background (issue
#19: "Your scenario" on the frontier and the roofline's lines were black or dark grey on near-black).
Computed from the colours Plotly actually drew (the traces' resolved line/marker colours on the page),
against the dark background #0E1117: contrast ≥ 3:1 (WCAG 1.4.11, graphical objects)."""

import pytest

pytest.importorskip("pytest_playwright")
from playwright.sync_api import Browser  # noqa: E402

pytestmark = pytest.mark.e2e

LOW_CONTRAST_JS = """() => {
  const lum = (c) => {
    const m = c.match(/^#([0-9a-f]{6})$/i), r = c.match(/^rgba?\\(([^)]+)\\)/i);
    let v;
    if (m) v = [0, 2, 4].map(i => parseInt(m[1].slice(i, i + 2), 16));
    else if (r) { const p = r[1].split(',').map(Number); if (p.length > 3 && p[3] < 0.5) return null; v = p.slice(0, 3); }
    else return null;
    const [R, G, B] = v.map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  const bg = lum('#0E1117'), bad = [];
  const plots = document.querySelectorAll('.js-plotly-plot');
  if (!plots.length) return ['no chart yet'];
  for (const plot of plots) for (const tr of (plot._fullData || [])) {
    if (tr.visible !== true || !(tr.mode || '').includes('lines') && !(tr.mode || '').includes('markers')) continue;
    const cs = [];
    if ((tr.mode || '').includes('lines') && tr.line) cs.push(tr.line.color);
    if ((tr.mode || '').includes('markers') && tr.marker && tr.marker.line && tr.marker.line.width > 0) cs.push(tr.marker.line.color);
    for (const c of cs) {
      if (typeof c !== 'string') continue;
      const l = lum(c);
      if (l !== null && (Math.max(l, bg) + 0.05) / (Math.min(l, bg) + 0.05) < 3) bad.push(`${tr.name}: ${c}`);
    }
  }
  return bad;
}"""


@pytest.mark.parametrize("path", ["/frontier", "/roofline"])
def test_dark_theme_lines_read_on_the_background(browser: Browser, streamlit_url, path):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme="dark")
    try:
        page = ctx.new_page()
        page.goto(f"{streamlit_url}{path}?lang=en")
        page.locator(".js-plotly-plot").first.wait_for(timeout=45_000)
        page.wait_for_function(f"({LOW_CONTRAST_JS})().length === 0", timeout=30_000)  # the theme is known after a rerun
        assert page.evaluate(LOW_CONTRAST_JS) == []
    except Exception:
        print(page.evaluate(LOW_CONTRAST_JS))
        raise
    finally:
        ctx.close()


# Text drawn in the charts (tick labels, axis and legend titles, annotations): the computed fill of
# every SVG <text> against the page background, ≥ 4.5:1 (WCAG 1.4.3, normal text).
LOW_CONTRAST_TEXT_JS = """(bgHex) => {
  const lum = (c) => {
    const m = c.match(/^#([0-9a-f]{6})$/i), r = c.match(/^rgba?\\(([^)]+)\\)/i);
    let v;
    if (m) v = [0, 2, 4].map(i => parseInt(m[1].slice(i, i + 2), 16));
    else if (r) { const p = r[1].split(',').map(Number); if (p.length > 3 && p[3] < 0.5) return null; v = p.slice(0, 3); }
    else return null;
    const [R, G, B] = v.map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  const bg = lum(bgHex), bad = [];
  const plots = document.querySelectorAll('.js-plotly-plot');
  if (!plots.length) return ['no chart yet'];
  for (const plot of plots) for (const t of plot.querySelectorAll('.main-svg text, .main-svg .legendtext')) {
    if (!t.textContent.trim() || t.getBBox().width === 0) continue;
    if (t.closest('.hoverlayer')) continue;  // hover labels carry their own box
    const l = lum(getComputedStyle(t).fill);
    if (l !== null && (Math.max(l, bg) + 0.05) / (Math.min(l, bg) + 0.05) < 4.5) bad.push(`${t.textContent.slice(0, 30)}: ${getComputedStyle(t).fill}`);
  }
  return bad;
}"""


@pytest.mark.parametrize("scheme, background", [("dark", "#0E1117"), ("light", "#FFFFFF")])
@pytest.mark.parametrize("path", ["/", "/frontier?overlays=kv:fp8&overlays=tp:2&overlays=quant:fp8&overlays=gpu:h100-sxm",
                                  "/roofline", "/load_test?lt_requests=200&lt_sweep=false",
                                  "/planner", "/scheduler"])
def test_chart_text_reads_in_both_themes(browser: Browser, streamlit_url, path, scheme, background):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
    try:
        page = ctx.new_page()
        page.goto(f"{streamlit_url}{path}{'&' if '?' in path else '?'}lang=en")
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
        page.wait_for_function(f"({LOW_CONTRAST_TEXT_JS})('{background}').length === 0", timeout=30_000)
        assert page.evaluate(LOW_CONTRAST_TEXT_JS, background) == []
    except Exception:
        print(page.evaluate(LOW_CONTRAST_TEXT_JS, background))
        raise
    finally:
        ctx.close()
