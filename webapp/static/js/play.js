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

  // Shortcuts act wherever focus is on the page, except while typing in a box (where Ctrl/Cmd+Enter
  // still sends the question). A button's data-shortcut lists its keys, separated by spaces.
  document.addEventListener("keydown", function (event) {
    var p = panel();
    if (!p || event.defaultPrevented) return;
    var typing = isTyping(event.target);
    // htmx binds a swapped-in panel only when it settles; a shortcut pressed before that would
    // submit natively (a full page load). Bind it now (htmx skips what is already bound).
    if (window.htmx) window.htmx.process(p);
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      var form = p.querySelector("#question-form");
      if (form && (!typing || form.contains(event.target))) {
        event.preventDefault();
        form.requestSubmit();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat || typing) return;
    var key = event.key.toLowerCase();
    var buttons = p.querySelectorAll("[data-shortcut]");
    for (var i = 0; i < buttons.length; i++) {
      var keys = buttons[i].dataset.shortcut.split(" ");
      if (keys.indexOf(key) !== -1 && !buttons[i].disabled) {
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
    refocus = !!elt && (elt.tagName === "FORM" || elt.id === "thinking") && !!elt.closest("#game-panel");
  });
  document.addEventListener("htmx:afterSwap", function () {
    if (refocus) {
      refocus = false;
      focusPanel();
    }
  });

  document.addEventListener("DOMContentLoaded", focusPanel);
})();
