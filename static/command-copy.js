// Copy buttons: the command blocks' (ui/command_block.py) and the share box's link (ui/state.py). A module
// script: it runs once per page, however many buttons draw it, and one click listener on the document
// serves every button, drawn now or later. A command block's button copies its <pre>'s text; the share
// box's copies its link text box. The Clipboard API in a secure context (https, localhost), else the text
// selected and execCommand('copy') (plain http on a LAN). The label reads "copied" for 2.5 s. Served from
// the app's own origin, so the deployment's Content-Security-Policy (script-src 'self') allows it with no hash.
// The page says when the listener is in place (a click before this script has run copies nothing; the browser
// test waits for it rather than racing the script's download on a busy machine).
document.documentElement.dataset.copyReady = "1";
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button.cmd-copy, button.share-copy") : null;
  if (!button) return;
  const pre = button.classList.contains("cmd-copy") ? button.closest(".cmd-block")?.querySelector("pre") : null;
  const input = button.classList.contains("share-copy") ? document.querySelector(".st-key-share_link input") : null;
  if (!pre && !input) return;
  const done = () => {
    button.textContent = button.dataset.done;
    setTimeout(() => { button.textContent = button.dataset.label; }, 2500);
  };
  const text = pre ? pre.textContent : input.value;
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done);
  } else if (pre) {
    const range = document.createRange();
    range.selectNodeContents(pre);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    if (document.execCommand("copy")) done();
  } else {
    input.focus();
    input.select();
    if (document.execCommand("copy")) done();
  }
});
