// The shared sidebar of a fresh session is drawn after the page's first chart (ui/deferred_sidebar.py):
// the session's first run draws the page and, in the sidebar, only a hidden button. This module clicks
// it once the first Plotly chart has drawn its SVG, or, when the run ended without a chart (its marker
// says data-charts="0"), at once; after 30 s in any case. The click reruns the script, which draws the
// controls. A module script runs once per page load; a button that is gone (a rerun drew the sidebar
// already) is not clicked. Served from the app's own origin, so the deployment's Content-Security-Policy
// (script-src 'self') allows it.
const BUTTON = ".st-key-sidebar_later button";
const CHART = ".js-plotly-plot .main-svg";
const DONE = ".sidebar-later-done";
let done = false;
const go = () => {
  if (done) return;
  done = true;
  observer.disconnect();
  clearTimeout(timer);
  // after the chart's frame is painted: its first paint is not delayed by the rerun's messages
  requestAnimationFrame(() => setTimeout(() => document.querySelector(BUTTON)?.click(), 0));
};
const check = () => {
  if (document.querySelector(CHART) || document.querySelector(DONE)?.dataset.charts === "0") go();
};
const observer = new MutationObserver(check);
const timer = setTimeout(go, 30000);
observer.observe(document.body, { subtree: true, childList: true });
check();
