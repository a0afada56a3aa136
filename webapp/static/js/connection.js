// A request that never reached the server (it is down, or the network is: htmx:sendError,
// htmx:timeout, or a proxy answering 502/503/504 for it) says "Connection lost, retrying…" in the
// page's #connection-status, and the page asks the server's health check every few seconds until
// it answers. Once the server answers (the health check, or any request that succeeds), a lost
// click (a form sent, not a page's own GET such as a poll or a suggestion) is named: it is not sent
// again by itself (it may have been an answer), so the message asks to repeat it and stays until
// an action succeeds; otherwise the message clears. Another server error (5xx) says the server
// failed, until the next request succeeds.
(function () {
  "use strict";

  var RETRY_MS = 3000;
  var LOST = "Connection lost, retrying…";
  var BACK = "Connected again. Your last click did not reach the server: please repeat it.";
  var UNREACHABLE = [0, 502, 503, 504]; // no answer, or a proxy's: the app cannot be reached
  var timer = null;
  var state = ""; // "", "lost", "back" or "error"
  var missedClick = false;

  function say(text, next) {
    state = next;
    var el = document.getElementById("connection-status");
    if (!el) return;
    if (el.textContent !== text) el.textContent = text;
    if (next) el.dataset.state = next;
    else delete el.dataset.state;
  }

  function stopChecking() {
    if (timer) clearTimeout(timer);
    timer = null;
  }

  function reached() {
    stopChecking();
    if (missedClick) say(BACK, "back");
    else say("", "");
    missedClick = false;
  }

  function check() {
    var el = document.getElementById("connection-status");
    var url = (el && el.dataset.health) || "/healthz";
    timer = setTimeout(function () {
      fetch(url, { cache: "no-store", credentials: "same-origin" }).then(
        function (response) {
          if (state !== "lost") return;
          if (response.ok) reached();
          else check();
        },
        function () { if (state === "lost") check(); }
      );
    }, RETRY_MS);
  }

  function isAction(event) {
    var config = event.detail.requestConfig;
    return Boolean(config && config.verb && config.verb.toLowerCase() !== "get");
  }

  function lost(event) {
    missedClick = missedClick || isAction(event);
    say(LOST, "lost");
    if (!timer) check();
  }

  document.addEventListener("htmx:sendError", lost);
  document.addEventListener("htmx:timeout", lost);
  document.addEventListener("htmx:responseError", function (event) {
    var code = event.detail.xhr ? event.detail.xhr.status : 0;
    if (UNREACHABLE.indexOf(code) >= 0) return lost(event);
    if (code < 500) return; // a refusal: the page that asked shows its own message
    stopChecking();
    missedClick = false;
    say("The server could not do that (error " + code + "). Please try again.", "error");
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (!event.detail.successful) return;
    if (state === "lost") reached();
    else if (state === "error" || (state === "back" && isAction(event))) say("", "");
  });
})();
