// Copy and share buttons. Kept out of the page because the CSP forbids inline scripts.
"use strict";

function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    return navigator.clipboard.writeText(text).catch(() => copyWithSelection(text));
  }
  return Promise.resolve(copyWithSelection(text));
}

// Fallback for browsers (or headless runs) that refuse the asynchronous clipboard.
function copyWithSelection(text) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  if (!ok) throw new Error("copy refused");
}

function flash(button, label) {
  const original = button.dataset.label || button.textContent;
  button.dataset.label = original;
  button.textContent = label;
  button.dataset.copied = label;
  setTimeout(() => { button.textContent = original; }, 1500);
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy-from], [data-copy-url]");
  if (!button) return;
  const source = button.dataset.copyFrom && document.getElementById(button.dataset.copyFrom);
  const text = button.dataset.copyUrl || (source ? source.textContent : "");
  Promise.resolve()
    .then(() => copyText(text))
    .then(() => flash(button, "Copied"), () => flash(button, "Copy failed"));
});
