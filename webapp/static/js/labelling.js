// The labelling queue: keyboard shortcuts for the buttons that are always on the page
// (Y, N, U, I, Ctrl+Space skip, Ctrl+Z undo). Progressive enhancement only: every shortcut clicks
// a real button, and every button posts a plain form when JavaScript or htmx is missing.
(function () {
  "use strict";

  var busy = false; // one answer per item: keys pressed while a request is on its way are ignored

  function queue() { return document.getElementById("queue"); }

  function isTyping(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function combo(event) {
    var key = event.code === "Space" ? "space" : (event.key || "").toLowerCase();
    return (event.ctrlKey || event.metaKey ? "ctrl+" : "") + key;
  }

  document.addEventListener("keydown", function (event) {
    var q = queue();
    if (!q || event.altKey || event.shiftKey || isTyping(event.target)) return;
    var button = q.querySelector('[data-shortcut="' + combo(event) + '"]');
    if (!button || button.disabled) return;
    event.preventDefault();
    if (!busy) button.click();
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var q = queue();
    if (q && q.contains(event.detail.elt)) busy = true;
  });
  document.addEventListener("htmx:afterRequest", function () { busy = false; });

  // After a swap, put focus on the new item so screen readers and the keyboard start there.
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target !== queue()) return;
    var item = document.getElementById("lab-item");
    if (item) item.focus({ preventScroll: true });
  });
})();
