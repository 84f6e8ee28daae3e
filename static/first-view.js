// The first view of a fresh session (ui/first_view.py): the page down to its first chart, sent alone. Once the
// browser has shown that chart, this presses the sidebar's "Loading the controls" button: the next run sends
// the whole page. It presses at once when the run has ended with no chart on the page (the page stopped
// itself; nothing left to load), and after 15 s whatever happened. A module script: it runs once per page load. Served from the
// app's own origin, so the deployment's Content-Security-Policy (script-src 'self') allows it with no hash.
const SHOWN = ".js-plotly-plot:not([style*='visibility: hidden']) .main-svg";  // Streamlit's second, shown draw
const BUTTON = ".st-key-first_view_more button";
let pressed = false;
const press = () => {
  const button = document.querySelector(BUTTON);
  if (pressed || !button) return;
  pressed = true;
  button.click();
};
const finished = () => {
  const app = document.querySelector("[data-test-script-state]");
  return app !== null && app.getAttribute("data-test-script-state") === "notRunning";
};
// An element whose code is still loading is drawn as a skeleton: a chart on its way looks like that, not like a chart.
const pending = () => document.querySelector(".js-plotly-plot, [data-testid=stElementContainer] > [data-testid=stSkeleton]");
const check = () => {
  if (pressed) return true;
  if (!document.querySelector(BUTTON)) return false;  // not mounted yet (its own code still loading)
  if (document.querySelector(SHOWN)) {
    // after the chart's frame is painted (a timer too: a hidden tab runs no animation frames)
    requestAnimationFrame(() => setTimeout(press, 0));
    setTimeout(press, 200);
    return true;
  }
  if (finished() && !pending()) {
    press();
    return true;
  }
  return false;
};
// Looked at every 50 ms, not on every change of the page: a MutationObserver on the whole page was woken by each
// of the thousands of nodes Plotly draws, and cost ~0.1-0.2 s of the main thread before the chart was shown.
if (!check()) {
  const timer = setInterval(() => { if (check()) clearInterval(timer); }, 50);
  setTimeout(() => { clearInterval(timer); press(); }, 15000);
}
