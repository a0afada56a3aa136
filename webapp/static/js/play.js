// The game page: keyboard shortcuts and focus. Progressive enhancement only: every action has a
// button and every form works without JavaScript.
(function () {
  "use strict";

  function panel() { return document.getElementById("game-panel"); }

  function isTyping(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function focusPanel() {
    var p = panel();
    if (!p) return;
    var target = p.querySelector("#question-input, #secret-input") || p;
    target.focus({ preventScroll: true });
  }

  // Shortcuts act only while focus is inside the game panel.
  document.addEventListener("keydown", function (event) {
    var p = panel();
    if (!p || !p.contains(document.activeElement)) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      var form = p.querySelector("#question-form");
      if (form) {
        event.preventDefault();
        form.requestSubmit();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    var key = event.key.toLowerCase();
    var buttons = p.querySelectorAll("[data-shortcut]");
    for (var i = 0; i < buttons.length; i++) {
      if (buttons[i].dataset.shortcut === key && !buttons[i].disabled) {
        event.preventDefault();
        buttons[i].click();
        return;
      }
    }
  });

  // After a form in the panel is answered, the panel is replaced: put focus back into it at once
  // (in the same task as the swap, so no key press falls between the swap and the focus).
  var refocus = false;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    refocus = !!elt && elt.tagName === "FORM" && !!elt.closest("#game-panel");
  });
  document.addEventListener("htmx:afterSwap", function () {
    if (refocus) {
      refocus = false;
      focusPanel();
    }
  });

  document.addEventListener("DOMContentLoaded", focusPanel);
})();
