// Copy buttons of the command blocks (ui/command_block.py). A module script: it runs once per page,
// however many blocks draw it, and one click listener on the document serves every block, drawn now or
// later. It copies the block's <pre> text: the Clipboard API in a secure context (https, localhost),
// else the text selected and execCommand('copy') (plain http on a LAN). The label reads "copied" for 2.5 s.
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button.cmd-copy") : null;
  const pre = button ? button.closest(".cmd-block")?.querySelector("pre") : null;
  if (!pre) return;
  const done = () => {
    button.textContent = button.dataset.done;
    setTimeout(() => { button.textContent = button.dataset.label; }, 2500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(pre.textContent).then(done);
  } else {
    const range = document.createRange();
    range.selectNodeContents(pre);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    if (document.execCommand("copy")) done();
  }
});
