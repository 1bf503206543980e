// sitedrop copy buttons: <button type="button" class="button small copy"
// data-copy="TEXT" hidden>Copy</button> copies TEXT to the clipboard. The
// buttons start hidden and are shown here, so a page without JavaScript (or
// without the Clipboard API, as on plain http away from localhost) shows no
// button that cannot work. The Layout loads it on every page. Plain
// ES2017, no framework.
(function () {
  "use strict";

  if (!navigator.clipboard || !window.isSecureContext) return;

  var buttons = document.querySelectorAll("button[data-copy]");
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].hidden = false;
  }

  // One live region for every button, so a screen reader hears the outcome.
  var live = document.createElement("span");
  live.className = "visually-hidden";
  live.setAttribute("role", "status");
  document.body.appendChild(live);

  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button[data-copy]");
    if (!btn) return;
    var label = btn.getAttribute("data-label") || btn.textContent;
    btn.setAttribute("data-label", label);
    navigator.clipboard.writeText(btn.getAttribute("data-copy")).then(
      function () {
        btn.textContent = "Copied";
        live.textContent = "Copied to the clipboard";
        setTimeout(function () { btn.textContent = label; live.textContent = ""; }, 2000);
      },
      function () {
        btn.textContent = "Copy failed";
        live.textContent = "Could not copy: select the text and copy it by hand";
        setTimeout(function () { btn.textContent = label; }, 2000);
      }
    );
  });
})();
