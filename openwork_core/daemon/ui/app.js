// The context page (issue 16 point 4, issue 25 point 7). Plain script, no build step, no third-party code: every
// request goes to the daemon that served this page, with the token from sessionStorage.
"use strict";

const TOKEN_KEY = "openwork.token";
const REGION_LABELS = { system: "System", conversation: "Conversation", tools: "Tools",
                        mcp_tools: "MCP tools", free: "free", reserved: "reserved for output" };
const state = { token: null, sessionId: null, session: null, stream: null, updates: 0, renders: 0,
                waiters: [], seen: {}, lastRenderSeen: {} };
let resolveReady;
const ready = new Promise((resolve) => { resolveReady = resolve; });

// For tests and scripts: `openworkPage.ready` resolves after the first overview is drawn;
// `nextRender()` after the next one; `renderedAfter(kind, n)` once an overview was drawn from a
// request made after the n-th live update of that kind arrived.
const seenAtRender = (kind) => state.lastRenderSeen[kind] || 0;
window.openworkPage = {
  ready,
  nextRender: () => new Promise((resolve) => state.waiters.push({ resolve, done: () => true })),
  renderedAfter: (kind, count) => new Promise((resolve) => {
    if (seenAtRender(kind) >= count) resolve(state.renders);
    else state.waiters.push({ resolve, done: () => seenAtRender(kind) >= count });
  }),
  get updates() { return state.updates; },
};

const $ = (id) => document.getElementById(id);

function setStatus(text, isError = false) {
  $("status").textContent = text;
  $("status").classList.toggle("error", isError);
}

function fragmentParams() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

function readToken() {
  const params = fragmentParams();
  const fromUrl = params.get("token");
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

async function api(path) {
  const response = await fetch(path, { headers: { Authorization: "Bearer " + state.token } });
  if (response.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    showTokenForm("The token was refused; paste the current one.");
    throw new Error("unauthorized");
  }
  const body = await response.json();
  if (!response.ok) {
    throw new Error(body.error ? body.error.code + ": " + body.error.message : response.statusText);
  }
  return body;
}

function showTokenForm(message) {
  $("main").hidden = true;
  $("token-form").hidden = false;
  document.body.dataset.state = "token";
  setStatus(message || "");
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "dataset") Object.assign(node.dataset, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child);
  return node;
}

const fmt = (n) => Number(n).toLocaleString("en-US");

async function loadSessions() {
  const page = await api("/v1/sessions?limit=100");
  const list = $("sessions");
  list.replaceChildren();
  for (const s of page.sessions) {
    const item = el("li", { dataset: { sessionId: s.session_id, status: s.status } },
      el("strong", { textContent: s.title || s.session_id }),
      el("small", { textContent: s.workspace }),
      el("small", {
        className: s.status === "running" ? "status-running" : "",
        textContent: `${s.status} · ${s.turn_count} turns · ${new Date(s.last_activity_at).toLocaleString()}`,
      }));
    item.addEventListener("click", () => selectSession(s.session_id));
    list.append(item);
  }
  if (!page.sessions.length) setStatus("No sessions yet.");
  return page.sessions;
}

function renderBar(bar) {
  const node = $("bar");
  node.dataset.contextWindow = bar.context_window;
  node.querySelectorAll(".segment").forEach((s) => s.remove());
  const legend = $("legend");
  legend.replaceChildren();
  for (const segment of bar.segments) {
    const share = bar.context_window > 0 ? segment.tokens / bar.context_window : 0;
    const part = el("div", {
      className: "segment",
      title: `${REGION_LABELS[segment.region]}: ${fmt(segment.tokens)} tokens`,
      dataset: { region: segment.region, tokens: segment.tokens },
    });
    part.style.width = (share * 100).toFixed(4) + "%";
    node.insertBefore(part, $("auto-compact-line"));
    const key = el("span", { textContent: `${REGION_LABELS[segment.region]} ${fmt(segment.tokens)}` });
    key.style.setProperty("--c", `var(--${segment.region})`);
    legend.append(key);
  }
  const line = $("auto-compact-line");
  line.dataset.tokens = bar.auto_compact_input_tokens;
  line.style.left = ((bar.auto_compact_input_tokens / bar.context_window) * 100).toFixed(4) + "%";
  legend.append(el("span", {
    className: "auto",
    textContent: `auto-compact at ${fmt(bar.auto_compact_input_tokens)} input tokens · ` +
      `${bar.auto_compact_percent.toFixed(1)} % of the way`,
  }));
  legend.lastChild.style.setProperty("--c", "var(--line)");
}

function renderRows(tableId, rows) {
  const body = $(tableId).querySelector("tbody");
  body.replaceChildren(...rows);
}

// Where an item is, as a reader names it (no internal ids): a button that opens the
// Conversation region at that item.
function itemLink(index) {
  const button = el("button", { type: "button", className: "link", textContent: `Conversation item ${index + 1}`,
                                dataset: { index } });
  button.addEventListener("click", () => openItem(index));
  return button;
}

function openItem(index) {
  const region = $("region-conversation");
  region.open = true;
  for (const row of region.querySelectorAll("tbody tr")) {
    row.classList.toggle("highlight", row.dataset.index === String(index));
  }
  const row = region.querySelector(`tbody tr[data-index="${index}"]`);
  if (row) row.scrollIntoView({ block: "nearest" });
}

const sum = (items) => items.reduce((total, i) => total + i.tokens, 0);
const count = (n, word) => `${fmt(n)} ${word}${n === 1 ? "" : "s"}`;
const pct = (ratio) => (ratio * 100).toFixed(1) + " %";

function renderRegions(regions) {
  const system = $("region-system");
  system.querySelector(".count").textContent =
    `· ${count(regions.system.length, "part")} · ${count(sum(regions.system), "token")}`;
  system.querySelector(".items").replaceChildren(...regions.system.map((p) =>
    el("section", { className: "part", dataset: { key: p.key, tokens: p.tokens } },
      el("h4", { textContent: `${p.key} · ${fmt(p.tokens)} tokens` }),
      el("pre", { textContent: p.content }))));
  const conversation = $("region-conversation");
  conversation.querySelector(".count").textContent =
    `· ${count(regions.conversation.length, "item")} · ${count(sum(regions.conversation), "token")}`;
  conversation.querySelector("tbody").replaceChildren(...regions.conversation.map((i) =>
    el("tr", { dataset: { index: i.index, tokens: i.tokens } },
      el("td", { className: "num", textContent: String(i.index + 1) }),
      el("td", { textContent: i.label }),
      el("td", { className: "num", textContent: fmt(i.tokens) }),
      el("td", { textContent: i.preview }))));
  const tools = $("region-tools");
  tools.querySelector(".count").textContent =
    `· ${count(regions.tools.length, "tool")} · ${count(sum(regions.tools), "token")}`;
  tools.querySelector("tbody").replaceChildren(...regions.tools.map((t) =>
    el("tr", { dataset: { tool: t.label.replace(/^tool · /, ""), tokens: t.tokens } },
      el("td", {}, el("code", { textContent: t.label.replace(/^tool · /, "") })),
      el("td", { className: "num", textContent: fmt(t.tokens) }),
      el("td", { textContent: t.preview }))));
}

function renderUsage(usage) {
  const node = $("usage");
  if (usage === null) { node.textContent = "usage unavailable (the database does not answer)"; return; }
  if (usage.model_calls === 0) { node.textContent = "no model call recorded yet"; return; }
  const ratio = usage.cache_hit_ratio === null ? "no input reported" : `cache-hit ratio ${pct(usage.cache_hit_ratio)}`;
  let text = `${count(usage.model_calls, "model call")} · ${fmt(usage.input_tokens)} input tokens reported, ` +
    `${fmt(usage.cached_input_tokens)} from the cache (${ratio}) · ${fmt(usage.output_tokens)} output tokens`;
  const last = usage.last_call;
  if (last !== null) {
    const reported = (n) => (n === null ? "not reported" : fmt(n));
    text += ` · last call (${last.model_name}): ${reported(last.input_tokens)} input, ` +
      `${reported(last.cached_input_tokens)} cached, for about ${fmt(last.estimated_input_tokens)} estimated`;
  }
  node.textContent = text;
  node.dataset.cacheHitRatio = usage.cache_hit_ratio === null ? "" : String(usage.cache_hit_ratio);
}

function renderWarnings(warnings) {
  $("warnings").replaceChildren(...warnings.map((w) =>
    el("li", { dataset: { code: w.code }, textContent: `${w.code.replaceAll("_", " ")}: ${w.message}` })));
}

function renderMeta(overview) {
  const s = state.session;
  if (!s) return;
  $("session-meta").textContent = `${s.workspace} · ${overview.model.name} (provider ` +
    `${overview.model.provider_id}) · ${s.status} · ${s.turn_count} turns`;
  $("session-meta").dataset.model = overview.model.name;
}

function renderOverview(overview, seen) {
  renderMeta(overview);
  renderWarnings(overview.warnings);
  renderBar(overview.bar);
  renderUsage(overview.usage);
  renderRegions(overview.regions);
  renderRows("world-state", overview.world_state.map((w) =>
    el("tr", { dataset: { section: w.section, index: w.index } },
      el("td", { textContent: w.section }), el("td", { textContent: w.form }),
      el("td", { className: "num", textContent: fmt(w.tokens) }),
      el("td", {}, itemLink(w.index)))));
  if (!overview.world_state.length) {
    renderRows("world-state", [el("tr", {}, el("td", { colSpan: 4, textContent: "no World State message in the window" }))]);
  }
  renderRows("largest", overview.largest.map((i) =>
    el("tr", { dataset: { region: i.region } },
      el("td", { className: "num", textContent: fmt(i.tokens) }),
      el("td", { textContent: i.label }),
      el("td", {}, i.region === "conversation" ? itemLink(i.index) : "Tools"),
      el("td", { textContent: i.preview }))));
  state.renders += 1;
  state.lastRenderSeen = seen;
  document.body.dataset.renders = state.renders;
  document.body.dataset.state = "ready";
  resolveReady();
  const waiting = state.waiters.splice(0);
  for (const waiter of waiting) {
    if (waiter.done()) waiter.resolve(state.renders);
    else state.waiters.push(waiter);
  }
}

async function refreshOverview() {
  if (!state.sessionId) return;
  const seen = { ...state.seen };
  const sid = encodeURIComponent(state.sessionId);
  try {
    state.session = await api(`/v1/sessions/${sid}`);
    renderOverview(await api(`/v1/sessions/${sid}/context/overview`), seen);
    setStatus("");
  } catch (error) {
    setStatus(String(error.message || error), true);
    document.body.dataset.state = "error";
  }
}

let refreshTimer = null;
function scheduleRefresh() {
  if (refreshTimer !== null) return;
  refreshTimer = setTimeout(() => { refreshTimer = null; refreshOverview(); }, 150);
}

// EventSource cannot send an Authorization header, so the stream is read with fetch().
async function follow(sessionId) {
  if (state.stream) state.stream.abort();
  const controller = new AbortController();
  state.stream = controller;
  let lastEventId = null;
  while (!controller.signal.aborted) {
    const headers = { Authorization: "Bearer " + state.token, Accept: "text/event-stream" };
    if (lastEventId !== null) headers["Last-Event-ID"] = lastEventId;
    try {
      const response = await fetch(`/v1/sessions/${encodeURIComponent(sessionId)}/events`,
                                   { headers, signal: controller.signal });
      if (!response.ok || !response.body) throw new Error("event stream refused: " + response.status);
      $("live-state").textContent = "· connected";
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
          const event = parseEvent(block);
          if (event.id !== null) lastEventId = event.id;
          if (event.data !== null) onUpdate(event);
        }
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      $("live-state").textContent = "· reconnecting";
    }
    if (!controller.signal.aborted) await new Promise((r) => setTimeout(r, 1000));
  }
}

function parseEvent(block) {
  const event = { id: null, event: "message", data: null };
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") event.id = value;
    else if (field === "event") event.event = value;
    else if (field === "data") event.data = event.data === null ? value : event.data + "\n" + value;
  }
  return event;
}

function onUpdate(event) {
  state.updates += 1;
  $("live-count").textContent = String(state.updates);
  let type = event.event;
  try { type = JSON.parse(event.data).update.type; } catch (_) { /* resync carries {} */ }
  state.seen[type] = (state.seen[type] || 0) + 1;
  if (type === "context_updated" || type === "warning" || type === "turn_finished" || type === "resync") {
    scheduleRefresh();
    loadSessions().catch(() => {});
  }
}

async function selectSession(sessionId) {
  state.sessionId = sessionId;
  for (const item of $("sessions").children) {
    item.setAttribute("aria-current", String(item.dataset.sessionId === sessionId));
  }
  const params = fragmentParams();
  params.set("session", sessionId);
  history.replaceState(null, "", location.pathname + "#" + params.toString());
  $("session").hidden = false;
  try {
    const session = await api(`/v1/sessions/${encodeURIComponent(sessionId)}`);
    state.session = session;
    $("session-title").textContent = session.title || session.session_id;
    $("session-meta").textContent = `${session.workspace} · ${session.status} · ${session.turn_count} turns`;
  } catch (error) {
    setStatus(String(error.message || error), true);
    return;
  }
  await refreshOverview();
  follow(sessionId);
}

async function start() {
  state.token = readToken();
  if (!state.token) { showTokenForm("Paste the daemon's token to begin."); return; }
  $("token-form").hidden = true;
  $("main").hidden = false;
  try {
    const sessions = await loadSessions();
    const wanted = fragmentParams().get("session");
    const first = sessions.find((s) => s.session_id === wanted) || sessions[0];
    if (first) await selectSession(first.session_id);
    else { document.body.dataset.state = "ready"; resolveReady(); }
  } catch (error) {
    if (String(error.message) !== "unauthorized") setStatus(String(error.message || error), true);
  }
}

$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const value = $("token-input").value.trim();
  if (!value) return;
  sessionStorage.setItem(TOKEN_KEY, value);
  $("token-input").value = "";
  start();
});

start();
