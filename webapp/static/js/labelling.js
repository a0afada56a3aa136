// The labelling queue: keyboard shortcuts for the buttons that are always on the page
// (Y, N, U, I, Ctrl+Space skip, Ctrl+Z undo). Progressive enhancement only: every shortcut clicks
// a real button, and every button posts a plain form when JavaScript or htmx is missing.
(function () {
  "use strict";

  // idle: keys click buttons. inflight: an answer is on its way and the next item is not shown yet,
  // so keys are dropped (one answer per item, never one for an item nobody has seen). settling: the
  // next item is on screen but htmx has not wired its forms yet, so the key waits for htmx:afterSettle.
  var state = "idle";
  var deferred = null;

  function queue() { return document.getElementById("queue"); }

  function isTyping(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function combo(event) {
    var key = event.code === "Space" ? "space" : (event.key || "").toLowerCase();
    return (event.ctrlKey || event.metaKey ? "ctrl+" : "") + key;
  }

  function button(shortcut) {
    var q = queue();
    var b = q && q.querySelector('[data-shortcut="' + shortcut + '"]');
    return b && !b.disabled ? b : null;
  }

  document.addEventListener("keydown", function (event) {
    if (!queue() || event.altKey || event.shiftKey || isTyping(event.target)) return;
    var shortcut = combo(event);
    if (!button(shortcut)) return;
    event.preventDefault();
    if (state === "idle") button(shortcut).click();
    else if (state === "settling") deferred = shortcut;
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var q = queue();
    if (q && q.contains(event.detail.elt)) state = "inflight";
  });
  // A failed request swaps nothing; its form is still in the page, so this event reaches us.
  document.addEventListener("htmx:afterRequest", function () { if (state === "inflight") state = "idle"; });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target !== queue()) return;
    state = "settling";
    var item = document.getElementById("lab-item");  // focus the new item: screen readers and keys start there
    if (item) item.focus({ preventScroll: true });
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail.target !== queue()) return;
    state = "idle";
    var next = deferred && button(deferred);
    deferred = null;
    if (next) next.click();
  });
})();
