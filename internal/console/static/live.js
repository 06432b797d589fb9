// Live pages: a page whose <main> has data-live listens to that stream of
// Server-Sent Events and, on each "changed" event, fetches itself again and
// swaps in the parts marked data-live-region (matched by id). Forms outside
// those parts keep what the user typed. Without script, pages still work:
// reload them.
(function () {
  "use strict";
  var main = document.querySelector("main[data-live]");
  if (!main || !window.EventSource || !window.fetch) {
    return;
  }
  var busy = false;
  var again = false;

  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (res) {
        if (res.status === 404 || res.redirected) {
          // The order is gone, or the session ended: show what the server says.
          window.location.reload();
          return null;
        }
        return res.ok ? res.text() : null;
      })
      .then(function (html) {
        if (html === null) {
          return;
        }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live-region]").forEach(function (region) {
          var next = fresh.getElementById(region.id);
          if (next) {
            region.replaceWith(document.adoptNode(next));
          }
        });
        document.title = fresh.title;
        document.documentElement.setAttribute("data-refreshed", String(Date.now()));
      })
      .catch(function () {})
      .finally(function () {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }

  var stream = new EventSource(main.getAttribute("data-live"));
  stream.addEventListener("changed", refresh);
  // After a reconnect (a replica restarted), changes may have been missed.
  stream.addEventListener("open", function () {
    if (main.hasAttribute("data-live-opened")) {
      refresh();
    }
    main.setAttribute("data-live-opened", "");
  });
})();
