// A pending analysis learns that it ended from the server's push over a websocket (no polling),
// then fetches its page body once. If the socket drops, the body is fetched again after a pause,
// which reconnects while the analysis is still pending.
"use strict";

(function () {
  const RETRY_MS = 2000;
  const PENDING = ["queued", "running"];

  // A finished analysis is a whole new page (results, parser, live box): loading it as a page
  // lets the browser parse it natively, which is much faster than swapping it in with htmx.
  function refresh(body, ended) {
    if (ended) {
      location.replace(body.dataset.statusRefresh);
    } else {
      htmx.ajax("GET", body.dataset.statusRefresh, { target: body, swap: "outerHTML" });
    }
  }

  function watch(body) {
    if (body.dataset.statusWatched) return;
    body.dataset.statusWatched = "1";
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(scheme + "//" + location.host + body.dataset.statusSocket);
    let ended = false;
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "status" && !PENDING.includes(message.status) && !ended) {
        ended = true;
        socket.close();
        refresh(body, true);
      }
    });
    socket.addEventListener("close", () => {
      if (!ended && document.body.contains(body)) setTimeout(() => refresh(body, false), RETRY_MS);
    });
  }

  htmx.onLoad((root) => {
    const found = root.matches && root.matches("[data-status-socket]")
      ? [root] : root.querySelectorAll("[data-status-socket]");
    found.forEach(watch);
  });
})();
