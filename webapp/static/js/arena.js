// The arena battle page: the answer keys act on the highlighted side (its buttons carry
// data-shortcut), and focus returns to the panel after each answer. Progressive enhancement only:
// every key has a button and every form works without JavaScript.
(function () {
  "use strict";

  function panel() { return document.getElementById("battle-panel"); }

  function isTyping(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function focusPanel() {
    var p = panel();
    if (!p) return;
    var target = p.querySelector("#word-input") || p;
    target.focus({ preventScroll: true });
  }

  document.addEventListener("keydown", function (event) {
    var p = panel();
    if (!p || event.defaultPrevented) return;
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat || isTyping(event.target)) return;
    // htmx binds a swapped-in panel only when it settles; a key pressed before that would submit
    // natively (a full page load). Bind it now (htmx skips what is already bound).
    if (window.htmx) window.htmx.process(p);
    var key = event.key.toLowerCase();
    var buttons = p.querySelectorAll("[data-shortcut]");
    for (var i = 0; i < buttons.length; i++) {
      if (buttons[i].dataset.shortcut.split(" ").indexOf(key) !== -1 && !buttons[i].disabled) {
        event.preventDefault();
        buttons[i].click();
        return;
      }
    }
  });

  var refocus = false;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    refocus = !!elt && elt.tagName === "FORM" && !!elt.closest("#battle-panel");
  });
  document.addEventListener("htmx:afterSwap", function () {
    if (refocus) {
      refocus = false;
      focusPanel();
    }
  });

  document.addEventListener("DOMContentLoaded", focusPanel);
})();
