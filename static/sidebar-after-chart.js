// The shared sidebar of a fresh session is drawn after the page's first chart (ui/deferred_sidebar.py):
// the session's first run draws the page and, in the sidebar, only a hidden button. This module clicks
// it once the first Plotly chart has drawn its SVG, or at once when the server sent its marker (a style
// element with the rule .sidebar-later-go: the run ended without a chart, or the page waits for a heavy
// job); after 30 s in any case. The button may be drawn after the marker (its element script loads on
// first use): the click waits for it. The click reruns the script, which draws the controls. A module
// script runs once per page load; once clicked, it stops watching. Served from the app's own origin, so
// the deployment's Content-Security-Policy (script-src 'self') allows it.
const BUTTON = ".st-key-sidebar_later button";
const CHART = ".js-plotly-plot .main-svg";
const GO = "sidebar-later-go";
let wanted = false;
let clicked = false;
const tryClick = () => {
  const button = document.querySelector(BUTTON);
  if (!wanted || clicked || !button) return;
  clicked = true;
  observer.disconnect();
  clearTimeout(timer);
  // after the chart's frame is painted: its first paint is not delayed by the rerun's messages
  requestAnimationFrame(() => setTimeout(() => button.click(), 0));
};
const check = () => {
  if (!wanted && (document.querySelector(CHART)
                  || [...document.querySelectorAll("style")].some((s) => s.textContent.includes(GO)))) wanted = true;
  tryClick();
};
const observer = new MutationObserver(check);
const timer = setTimeout(() => { wanted = true; tryClick(); }, 30000);
observer.observe(document.body, { subtree: true, childList: true });
check();
