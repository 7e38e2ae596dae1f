// MCP notices and sign-in, from the agent's info (`GET gth/info`, or the kernel's answer over
// the comm). A tool source the agent had to skip (an MCP server that failed) is said once, as a
// notice; an MCP server that needs the person to sign in (OAuth) gets a button opening its page;
// a shortened MCP tool name is shown as its server and real name. MCP servers connect with the
// first run, so while one is still connecting the info is asked again after each run.

/**
 * @typedef {import("../chat/controller.js").ChatController} ChatController
 * @typedef {import("../transcript.js").TranscriptView} TranscriptView
 * @typedef {{ info: (signal?: AbortSignal) => Promise<any> }} InfoSource
 */

/**
 * Wire the notices of one view; `show(info)` draws what an info says (called once the history
 * has rebuilt the transcript). Nothing is drawn once `signal` aborts (the view is gone).
 * @param {{ doc: Document, view: TranscriptView, backend: InfoSource, chat: ChatController, signal: AbortSignal }} opts
 */
export function wireMcpNotices({ doc, view, backend, chat, signal }) {
  /** Notices and sign-in pages already shown. */
  const noticed = new Set();
  /** Whether an MCP server was not connected yet at the last info (they connect with the first run). */
  let pending = false;
  const show = (/** @type {any} */ info) => {
    const servers = mcpServers(info);
    pending = servers.some(([, s]) => s?.status === "pending" || s?.status === "needs_authorization");
    view.setToolLabels(toolLabels(servers));
    for (const n of Array.isArray(info?.mcp?.notices) ? info.mcp.notices : []) {
      if (typeof n !== "string" || noticed.has(n)) continue;
      noticed.add(n);
      view.addNote(n, "warning");
    }
    for (const [key, s] of servers) {
      const url = signInUrl(s);
      if (!url || noticed.has(url)) continue;
      noticed.add(url);
      view.append(signInNote(doc, key, url));
    }
  };
  // What failed to connect is known after the first run.
  chat.on((e) => {
    if (e.type !== "run-state" || e.running || !pending) return;
    void backend
      .info(signal)
      .then((i) => !signal.aborted && show(i))
      .catch(() => {});
  });
  return { show };
}

/** The MCP servers an info lists, as `[key, server]` pairs. @returns {[string, any][]} */
function mcpServers(/** @type {any} */ info) {
  const servers = info?.mcp?.servers;
  return servers && typeof servers === "object" ? Object.entries(servers) : [];
}

/** Shortened MCP tool names (`mcp__…`) shown as "server › real name". */
function toolLabels(/** @type {[string, any][]} */ servers) {
  /** @type {Map<string, string>} */
  const labels = new Map();
  for (const [key, srv] of servers) {
    for (const [call, real] of Object.entries(srv?.names ?? {})) {
      if (typeof real === "string" && call !== `mcp__${key}__${real}`) labels.set(call, `${key} › ${real}`);
    }
  }
  return labels;
}

/** The sign-in page of an MCP server waiting for OAuth, if it is an http(s) URL. */
export function signInUrl(/** @type {any} */ server) {
  if (server?.status !== "needs_authorization" || typeof server.authorizationUrl !== "string") return null;
  try {
    const url = new URL(server.authorizationUrl);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

/** A notice with a button that opens `url` in a new tab (only when the person clicks it). */
function signInNote(/** @type {Document} */ doc, /** @type {string} */ key, /** @type {string} */ url) {
  const note = doc.createElement("div");
  note.className = "gth-note gth-note-warning gth-oauth";
  const text = doc.createElement("span");
  text.textContent = `The MCP server '${key}' needs you to sign in. `;
  const button = doc.createElement("a");
  button.className = "gth-oauth-button";
  button.textContent = `Sign in to ${key}`;
  button.setAttribute("href", url);
  button.setAttribute("target", "_blank");
  button.setAttribute("rel", "noopener noreferrer");
  note.append(text, button);
  return note;
}
