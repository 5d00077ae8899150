// The live textbox: streams what is typed to the server's streaming parser over a websocket
// and shows the parsed reasoning, content and tool calls. Text from the server is only ever
// assigned through textContent, never parsed as HTML.
"use strict";

(function () {
  const RECONNECT_MS = 2000;
  const NOT_FOUND = 4404;
  const SETTLE_MS = 400; // a pause this long means "the text is complete for now"

  function setupLive(section) {
    if (section.dataset.liveReady) return;
    section.dataset.liveReady = "1";
    const $ = (id) => section.querySelector("#" + id);
    const input = $("live-input");
    const ui = {
      connection: $("live-connection"), deltas: $("live-deltas"), notice: $("live-notice"),
      problem: $("live-problem"), deviations: $("live-deviations"), reasoning: $("live-reasoning"), content: $("live-content"),
      toolCalls: $("live-tool-calls"),
    };
    let socket = null;
    let sent = "";
    let shown = null; // the parse state on screen; the server sends only its changes
    let replayTimer = null;
    let settleTimer = null;

    function connect() {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      socket = new WebSocket(scheme + "//" + location.host + section.dataset.wsPath);
      socket.addEventListener("open", () => {
        setConnection("connected");
        // The state on screen is of the first `received` characters sent: still the box's start?
        const kept = shown && sent !== null && input.value.startsWith(sent.slice(0, shown.received));
        if (kept) resume(); else sendOptions();
      });
      socket.addEventListener("message", (event) => handle(JSON.parse(event.data)));
      socket.addEventListener("close", (event) => {
        setConnection("disconnected");
        if (event.code !== NOT_FOUND && document.body.contains(section)) {
          setTimeout(connect, RECONNECT_MS);
        }
      });
    }

    function setConnection(state) {
      ui.connection.textContent = state;
      section.dataset.connection = state;
    }

    function send(message) {
      if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
    }

    // Send only what was added at the end; anything else restarts the parse.
    function sync() {
      const text = input.value;
      if (text === sent) return;
      if (sent !== null && text.startsWith(sent)) {
        send({ type: "append", chunk: text.slice(sent.length) });
      }
      else send({ type: "reset", text: text });
      sent = text;
      clearTimeout(settleTimer);
      settleTimer = setTimeout(() => send({ type: "finish" }), SETTLE_MS);
    }

    function currentOptions() {
      const form = document.getElementById("parser-options");
      if (!form) return {};
      const data = new FormData(form);
      const options = {
        parallel_tool_calls: data.get("parallel_tool_calls") === "on",
        reasoning_format: data.get("reasoning_format") || "auto",
        enable_thinking: { "": null, "true": true, "false": false }[data.get("enable_thinking") || ""],
        tool_choice: data.get("tool_choice") || "auto",
      };
      // Half-edited JSON keeps what the server had: the key is left out.
      const tools = parsedJson(data.get("tools") || "[]");
      if (Array.isArray(tools)) options.tools = tools;
      const schemaText = (data.get("json_schema") || "").trim();
      const schema = schemaText ? parsedJson(schemaText) : null;
      if (typeof schema === "object" && !Array.isArray(schema)) options.json_schema = schema;
      return options;
    }

    function parsedJson(text) {
      try { return JSON.parse(text); } catch (error) { return undefined; }
    }

    function sendOptions() {
      send({ type: "options", options: currentOptions(), text: input.value });
      send({ type: "finish" });
      sent = input.value;
    }

    // A new socket: the server parses the text again but sends only what the page lacks.
    function resume() {
      send({
        type: "resume", options: currentOptions(), text: input.value,
        received: Math.min(shown.received, input.value.length), finished: shown.finished,
      });
      send({ type: "finish" });
      sent = input.value;
    }

    const handlers = {
      state: (message) => { shown = message; renderState(shown); },
      delta: (message) => { if (shown) { applyDelta(shown, message); renderState(shown); } },
      unavailable: (message) => showNotice(message.reason),
      error: (message) => {
        // The server kept its text: send the whole box next time instead of an append.
        if (message.code === "text_too_long") sent = null;
        showNotice("Server: " + message.message);
      },
    };

    // Text fields and call arguments are appended; any other field present replaces ours.
    function applyDelta(state, delta) {
      for (const [key, value] of Object.entries(delta)) {
        if (key === "reasoning" || key === "content") state[key] += value;
        else if (key === "tool_calls") value.forEach((change) => applyCallChange(state, change));
        else if (key !== "type") state[key] = value;
      }
    }

    function applyCallChange(state, change) {
      const call = state.tool_calls[change.index] || { name: "", id: "", arguments: "" };
      call.arguments += change.arguments;
      if ("name" in change) call.name = change.name;
      if ("id" in change) call.id = change.id;
      state.tool_calls[change.index] = call;
    }

    function handle(message) {
      const handler = handlers[message.type];
      if (handler) handler(message);
    }

    function showNotice(text) {
      ui.notice.textContent = text;
      ui.notice.hidden = false;
      section.dataset.liveState = "unavailable";
    }

    function renderState(message) {
      ui.notice.hidden = true;
      ui.reasoning.textContent = message.reasoning;
      ui.content.textContent = message.content;
      ui.deltas.textContent = message.delta_count + " deltas";
      ui.toolCalls.replaceChildren(...message.tool_calls.map(toolCallElement));
      renderProblems(message.problems.filter((problem) => !problem.kept));
      renderDeviations(message.deviations || []);
      section.dataset.liveState = "parsed";
    }

    function toolCallElement(call) {
      const box = document.createElement("div");
      box.className = "tool-call";
      const name = document.createElement("h4");
      name.className = "tool-name";
      name.textContent = call.name + (call.id ? "  (id " + call.id + ")" : "");
      const args = document.createElement("pre");
      args.className = "tool-arguments";
      args.textContent = prettyJson(call.arguments);
      box.append(name, args);
      return box;
    }

    function prettyJson(text) {
      try { return JSON.stringify(JSON.parse(text), null, 2); } catch (error) { return text; }
    }

    // An error that stopped the parse (markers kept as text are listed as deviations).
    function renderProblems(problems) {
      ui.problem.hidden = problems.length === 0;
      ui.problem.replaceChildren(...problems.map(problemElement));
    }

    function problemElement(problem) {
      const box = document.createElement("div");
      box.className = "problem-entry" + (problem.kept ? " kept" : " stopped");
      const message = document.createElement("p");
      message.className = "problem-message";
      // A kept marker's message says so itself ("`<tool_call>` at offset 14 kept as text: ...").
      message.textContent = (problem.kept ? "" : "Parse stopped: ") + problem.message;
      const context = document.createElement("pre");
      context.className = "problem-context";
      context.textContent = problem.context;
      box.append(message, context);
      return box;
    }

    // Where the output departs from the template's form: kind, what was done, and the line
    // with a caret under the place.
    function renderDeviations(deviations) {
      ui.deviations.hidden = deviations.length === 0;
      ui.deviations.replaceChildren(...deviations.map(deviationElement));
    }

    function deviationElement(deviation) {
      const box = document.createElement("div");
      box.className = "deviation-entry " + deviation.action;
      box.dataset.kind = deviation.kind;
      const message = document.createElement("p");
      message.className = "deviation-message";
      message.textContent = deviation.message;
      const context = document.createElement("pre");
      context.className = "deviation-context";
      context.textContent = deviation.context;
      box.append(message, context);
      return box;
    }

    function replay() {
      clearInterval(replayTimer);
      const sample = input.dataset.sample || input.value;
      const size = Number(section.querySelector("#live-speed").value) || 4;
      const tick = Number(section.querySelector("#live-tick").value) || 40;
      let position = 0;
      input.value = "";
      sync();
      replayTimer = setInterval(() => {
        position = Math.min(sample.length, position + size);
        input.value = sample.slice(0, position);
        sync();
        if (position >= sample.length) clearInterval(replayTimer);
      }, tick);
    }

    input.addEventListener("input", sync);
    section.querySelector("#live-replay").addEventListener("click", replay);
    document.addEventListener("change", (event) => {
      if (event.target.closest("#parser-options")) sendOptions();
    });
    document.addEventListener("lab:parser-panel-loaded", sendOptions);
    connect();
  }

  function scan(root) {
    root.querySelectorAll("[data-ws-path]").forEach(setupLive);
    // A regenerated parser panel means new options: the live parse follows them.
    if (root.id === "parser-panel") document.dispatchEvent(new Event("lab:parser-panel-loaded"));
  }

  if (window.htmx) window.htmx.onLoad(scan);
  else document.addEventListener("DOMContentLoaded", () => scan(document));
})();
