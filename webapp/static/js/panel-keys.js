// Keyboard shortcuts and focus for a page built around one htmx panel (the game, the arena battle).
// Progressive enhancement only: every key has a button and every form works without JavaScript.
// The script tag says which panel and what in it:
//   data-panel    the panel's id
//   data-focus    where focus goes in the panel (a selector; the panel itself when nothing matches)
//   data-submit   optional: the form that Ctrl/Cmd+Enter sends, even while typing in it
//   data-refocus  what in the panel, once answered, brings focus back to it ("form" when not given)
//   data-settle   optional: milliseconds the keys wait after a new question shows. A form names its
//                 question in data-question; a key press sooner after that question first showed
//                 does nothing (one pressed in rhythm must not answer a question not yet read), and
//                 the form has the class "is-new" meanwhile. Buttons still answer at once.
// A button's data-shortcut lists its keys, separated by spaces.
(function () {
  "use strict";

  var config = document.currentScript.dataset;
  var panelId = config.panel;
  var refocusOn = config.refocus || "form";

  function panel() { return document.getElementById(panelId); }

  var firstSeen = {}; // data-question -> when it first showed (performance.now())

  function settle() { return Number(config.settle) || 0; }

  // Note when each question in the panel first showed; mark the new ones while the keys wait.
  function markNew() {
    var p = panel();
    if (!p || !settle()) return;
    var now = performance.now();
    p.querySelectorAll("[data-question]").forEach(function (form) {
      var id = form.dataset.question;
      if (!(id in firstSeen)) firstSeen[id] = now;
      var left = firstSeen[id] + settle() - now;
      if (left > 0) {
        form.classList.add("is-new");
        setTimeout(function () { form.classList.remove("is-new"); }, left);
      }
    });
  }

  function tooNew(button) {
    var holder = settle() && button.closest("[data-question]");
    if (!holder) return false;
    var id = holder.dataset.question;
    if (!(id in firstSeen)) firstSeen[id] = performance.now();
    return performance.now() - firstSeen[id] < settle();
  }

  function isTyping(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function focusPanel() {
    var p = panel();
    if (!p) return;
    var target = (config.focus && p.querySelector(config.focus)) || p;
    target.focus({ preventScroll: true });
  }

  // Shortcuts act wherever focus is on the page, except while typing in a box.
  document.addEventListener("keydown", function (event) {
    var p = panel();
    if (!p || event.defaultPrevented) return;
    var typing = isTyping(event.target);
    // htmx binds a swapped-in panel only when it settles; a key pressed before that would submit
    // natively (a full page load). Bind it now (htmx skips what is already bound).
    if (window.htmx) window.htmx.process(p);
    if (config.submit && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      var form = p.querySelector(config.submit);
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
      if (buttons[i].dataset.shortcut.split(" ").indexOf(key) !== -1 && !buttons[i].disabled) {
        event.preventDefault();
        if (tooNew(buttons[i])) return;
        buttons[i].click();
        return;
      }
    }
  });

  // After something in the panel is answered, the panel is replaced: put focus back into it at once
  // (in the same task as the swap, so no key press falls between the swap and the focus).
  var refocus = false;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    refocus = !!elt && elt.matches(refocusOn) && !!elt.closest("#" + panelId);
  });
  document.addEventListener("htmx:afterSwap", function () {
    markNew();
    if (refocus) {
      refocus = false;
      focusPanel();
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    markNew();
    focusPanel();
  });
})();
