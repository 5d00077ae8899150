// A pending corpus run's progress is pushed by the server over a websocket (no polling): the
// counter and the bar follow each message, and the page reloads once the run has closed. If the
// socket drops, it reconnects after a pause; the server sends the progress on every connect.
"use strict";

(function () {
  const RETRY_MS = 2000;
  const PENDING = ["queued", "running"];

  function show(panel, message) {
    panel.querySelector("#run-progress").textContent =
      message.completed + " / " + message.total + " templates";
    const bar = panel.querySelector("progress");
    if (bar) {
      bar.max = message.total;
      bar.value = message.completed;
    }
  }

  function watch(panel) {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(scheme + "//" + location.host + panel.dataset.progressSocket);
    let ended = false;
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (message.type !== "progress" || ended) return;
      show(panel, message);
      if (!PENDING.includes(message.status)) {
        ended = true;
        socket.close();
        location.reload();
      }
    });
    socket.addEventListener("close", (event) => {
      if (!ended && event.code !== 4404) setTimeout(() => watch(panel), RETRY_MS);
    });
  }

  const panel = document.querySelector("[data-progress-socket]");
  if (panel) watch(panel);
})();
