// Wiring for one widget view: pick the transport, build the tool registry and the chat
// controller, rehydrate the transcript from the server, and follow the model's traits
// (`pending_prompt`, `model_label`, `offline`, `show_event_log`, `turn_id`, `after_turn`). Separate from widget.js so
// tests can mount it with a fake model, a fake fetch and a manual animation frame.

import { randomUUID } from "@ag-ui/client";
import { ChatController } from "./chat.js";
import { announce, claim, giveUp, onNews, pause, waitForTurn, waitOutBusy } from "./order.js";
import { createRegistry } from "./tools/registry.js";
import { TranscriptView } from "./transcript.js";
import { wireGrants } from "./view/grants.js";
import { chooseTransport, createBackend, httpFetch, resolveBaseUrl } from "./transport.js";

/**
 * @param {{ model: import("./comm.js").AnyModel, el: any, css?: string,
 *   env?: { fetch?: any, raf?: any, location?: any, healthTimeoutMs?: number, toolEnv?: any } }} opts
 * @returns {() => void} cleanup
 */
export function mount({ model, el, css, env = {} }) {
  const doc = el.ownerDocument ?? globalThis.document;
  if (css) {
    // Scoped by the gth- prefix; kept inside the view so it leaves with it.
    const style = doc.createElement("style");
    style.textContent = css;
    el.append(style);
  }
  /** @type {ChatController | null} */
  let chat = null;
  let disposed = false;
  /** @type {{ stop: () => void } | null} */
  let grants = null;
  const gone = new AbortController(); // ends requests nobody will read once the view is gone

  const view = new TranscriptView({
    doc,
    el,
    raf: env.raf,
    onSend: (text) => {
      if (!chat?.accepts(text)) return false;
      void chat.send(text);
      return true;
    },
    onStop: () => chat?.stop(),
    onAction: (action) => {
      if (!chat) return;
      if (chat.running) {
        view.addNote("The agent is still answering; press the button again when it has finished.", "warning");
        return;
      }
      void chat.sendAction(action);
    },
    onResolveInterrupts: (resume) => void chat?.resolveInterrupts(resume),
  });
  const showTraits = () => view.setHeader({ modelLabel: model.get("model_label") || "", offline: Boolean(model.get("offline")) });
  showTraits();
  view.setReady(false);

  const turnId = model.get("turn_id") || "";
  const afterTurn = model.get("after_turn") || "";
  /** Set once the history is loaded: what the server knows, and how to ask it again. */
  /** @type {{ threadId: string, turnsOf: (turn: string) => Promise<any[] | null>, sent: boolean } | null} */
  let ready = null;
  let waitingTurn = false;
  /** @type {() => void} */
  let stopNews = () => {};
  const clearPending = () => {
    model.set("pending_prompt", "");
    model.save_changes?.();
  };

  /**
   * Send the prompt the kernel queued, once the chat is ready and idle, and, for a `%gth`
   * cell, once the cell the kernel ran before it on this thread is done (src/order.js).
   */
  const sendPending = async () => {
    const prompt = model.get("pending_prompt");
    if (disposed || !chat || !ready || chat.running || waitingTurn || typeof prompt !== "string" || !prompt.trim()) return;
    const { threadId, turnsOf } = ready;
    if (ready.sent) {
      // The cell's own prompt went out: this is a follow-up (`GthChat.ask`), sent like typed text.
      void chat.send(prompt);
      return clearPending();
    }
    // A second view of this widget never sends its turn again.
    if (!claim(turnId)) return clearPending();
    waitingTurn = true;
    const choice = new AbortController();
    try {
      await waitForTurn({
        threadId,
        afterTurn,
        turnsOf,
        signal: AbortSignal.any ? AbortSignal.any([choice.signal, gone.signal]) : choice.signal,
        onWait: (state) =>
          view.setWaiting({
            text: state === "running" ? "Waiting for the %gth cell above to finish…" : "Waiting for the %gth cell above to send its prompt…",
            actions: [
              { label: "Send now", run: () => choice.abort("now") },
              { label: "Cancel", run: () => choice.abort("cancel") },
            ],
          }),
      });
    } catch (err) {
      if (disposed || choice.signal.reason !== "now") {
        waitingTurn = false;
        view.setWaiting(null);
        if (!disposed) {
          clearPending();
          giveUp(threadId, turnId);
          view.addNote("Not sent: the prompt was cancelled.", "stopped");
        }
        return;
      }
    }
    waitingTurn = false;
    view.setWaiting(null);
    if (disposed || !chat || chat.running) return;
    ready.sent = true;
    void chat.send(prompt); // adds the message and starts the run before its first await
    // Cleared once sent, so another view of this model does not send it again.
    clearPending();
  };
  // `%gth --log` opens the event log; the header button still toggles it.
  const showLog = () => view.showLog(Boolean(model.get("show_event_log")));
  showLog();
  model.on("change:show_event_log", showLog);
  model.on("change:model_label", showTraits);
  model.on("change:offline", showTraits);
  const onPending = () => void sendPending();
  model.on("change:pending_prompt", onPending);

  (async () => {
    const baseUrl = resolveBaseUrl(model.get("base_url"), doc);
    const kind = await chooseTransport({
      transport: model.get("transport") || "auto",
      baseUrl,
      fetchImpl: env.fetch ? httpFetch({ fetchImpl: env.fetch, doc }) : undefined,
      location: env.location,
      timeoutMs: env.healthTimeoutMs,
    });
    if (disposed) return;
    const backend = createBackend(kind, { model, baseUrl, fetchImpl: env.fetch, doc });
    view.setHeader({ transport: kind });
    const registry = createRegistry(model.get("client_tools"));
    const threadId = model.get("thread_id") || randomUUID();
    // A busy thread (another tab, Session, another client) is waited out, never an error.
    const busyFetch = waitOutBusy(backend.fetch, {
      threadId,
      onWait: () =>
        view.setWaiting({
          text: "Waiting for the run in progress on this conversation…",
          actions: [{ label: "Cancel", run: () => chat?.stop() }],
        }),
      onDone: () => view.setWaiting(null),
    });
    chat = new ChatController({
      url: backend.runUrl(model.get("agent") || "default"),
      threadId,
      registry,
      fetch: busyFetch,
      ui: view.toolUi,
      env: env.toolEnv,
      turnId,
      kernelId: model.get("kernel_id") || "",
      // Over HTTP a run goes on when the page reloads or the connection drops, and is
      // re-attached to (src/reattach.js); Stop then tells the server to stop it.
      detach: backend.detach,
      eventsUrl: backend.eventsUrl ?? undefined,
      cancelRun: backend.cancelRun ?? undefined,
    });
    chat.on((e) => view.handle(e));
    // What the person allowed without asking (approvals granted for the thread or the session),
    // above the input, each with a Revoke button; hidden while there is none.
    const grantsBox = doc.createElement("div");
    view.root.insertBefore(grantsBox, view.waiting.el);
    grants = wireGrants({ doc, backend, chat, threadId, parent: grantsBox });
    chat.on((e) => {
      if (e.type !== "run-state" || e.running) return;
      announce(threadId, gone); // the next cell of this page may be waiting for this turn
      void sendPending();
    });
    // The agent's info carries the hosts whose images load at once (`a2ui.imageHosts`). Asked
    // beside the history and applied whenever it comes: until then every remote image waits
    // for a click, and an old kernel that never answers changes nothing.
    const info = backend.info(gone.signal).catch(() => null);
    // A tool source the agent had to skip (an MCP server that failed) is said once, as a notice.
    const noticed = new Set();
    let pending = false; // an MCP server not yet connected (they connect with the first run)
    const showNotices = (/** @type {any} */ i) => {
      const servers = i?.mcp?.servers && typeof i.mcp.servers === "object" ? Object.entries(i.mcp.servers) : [];
      pending = servers.some(([, s]) => s?.status === "pending" || s?.status === "needs_authorization");
      // A shortened MCP tool name is shown as its server and real name.
      const labels = new Map();
      for (const [key, srv] of servers) {
        for (const [call, real] of Object.entries(srv?.names ?? {})) {
          if (typeof real === "string" && call !== `mcp__${key}__${real}`) labels.set(call, `${key} › ${real}`);
        }
      }
      view.setToolLabels(labels);
      for (const n of Array.isArray(i?.mcp?.notices) ? i.mcp.notices : []) {
        if (typeof n !== "string" || noticed.has(n)) continue;
        noticed.add(n);
        view.addNote(n, "warning");
      }
      // An MCP server that needs the person to sign in (OAuth): a button opening its page.
      for (const [key, s] of servers) {
        const url = signInUrl(s);
        if (!url || noticed.has(url)) continue;
        noticed.add(url);
        view.append(signInNote(doc, String(key), url));
      }
    };
    // MCP servers connect with the first run: what failed is known after it.
    chat.on((e) => {
      if (e.type !== "run-state" || e.running || !pending) return;
      void backend.info(gone.signal).then((i) => !disposed && showNotices(i)).catch(() => {});
    });
    void info.then((i) => {
      if (disposed || !i) return;
      view.setMediaHosts(i.a2ui?.imageHosts);
      if (!model.get("model_label")) view.setHeader({ modelLabel: [i.provider, i.model].filter(Boolean).join(" · "), offline: Boolean(i.offline) });
    });
    let sent = false;
    /** @type {string | null} the run in flight this view follows (after a reload) */
    let follow = null;
    try {
      // A `%gth <prompt>` cell shows its own turn; `%gth` alone, the whole thread.
      const thread = await backend.history(threadId, turnId || undefined);
      if (disposed) return;
      if (thread.messages.length) chat.setHistory(thread.messages);
      if (thread.state && typeof thread.state === "object") view.log.setState(thread.state); // the event log's state view, after a reload
      follow = backend.eventsUrl ? runToFollow(thread, turnId) : null;
      // approvals still waiting get their cards again (a run in flight says its own at its end)
      if (!follow) chat.restoreInterrupts(thread.interrupts);
      sent = Boolean(turnId) && thread.turns.some((/** @type {any} */ t) => t.turnId === turnId);
      // A reload never sends the turn again: a prompt left over from before it is dropped.
      if (sent) clearPending();
    } catch (err) {
      view.addError("history_unavailable", `Could not load this conversation: ${/** @type {Error} */ (err).message}`);
    }
    // After the history, which rebuilds the transcript.
    void info.then((i) => !disposed && i && showNotices(i));
    for (const e of registry.errors) view.addNote(`Browser tool '${e.name}' is not available: ${e.message}`, "warning");
    ready = { threadId, turnsOf: async (turn) => (await backend.history(threadId, turn)).turns, sent };
    /**
     * The run could not be followed (its events are no longer kept): wait until the thread
     * is free, then show what the server has.
     */
    const settle = async () => {
      view.setWaiting({ text: "Waiting for the run in progress on this conversation…" });
      try {
        for (;;) {
          const thread = await backend.history(threadId, turnId || undefined).catch(() => null);
          if (disposed || !chat) return;
          if (thread && !thread.busy) {
            if (chat.running) return;
            chat.setHistory(thread.messages);
            chat.restoreInterrupts(thread.interrupts);
            announce(threadId, gone);
            return void sendPending();
          }
          await pause(2000, gone.signal).catch(() => {});
          if (gone.signal.aborted) return;
        }
      } finally {
        if (!disposed) view.setWaiting(null);
      }
    };
    if (!turnId) {
      // `%gth` alone shows the whole thread: it follows the turns other cells of this page run.
      const refresh = async () => {
        if (disposed || !chat || chat.running) return;
        const thread = await backend.history(threadId).catch(() => null);
        if (disposed || !thread || chat.running) return;
        chat.setHistory(thread.messages);
        chat.restoreInterrupts(thread.interrupts);
      };
      stopNews = onNews(threadId, () => void refresh(), gone);
    }
    view.setReady(true, threadId);
    if (follow) {
      // The run this cell started is still going (the page was reloaded): it is followed
      // live, from the history on; Stop stops it. Before the first await, so sendPending
      // below finds the chat running.
      const runId = follow;
      void chat.reattach(runId).then((how) => {
        if (how === "gone" && !disposed) void settle();
      });
    }
    void sendPending();
  })().catch((err) => view.addError("widget_error", String(err?.message || err)));

  return () => {
    disposed = true;
    gone.abort();
    stopNews();
    chat?.stop();
    grants?.stop();
    model.off("change:model_label", showTraits);
    model.off("change:offline", showTraits);
    model.off("change:pending_prompt", onPending);
    model.off("change:show_event_log", showLog);
    view.destroy();
  };
}

/**
 * The run in flight this view should follow after a reload, or null. A `%gth <prompt>` cell
 * follows its own turn's run (the server names the run's turn, or this turn is the thread's
 * last and not done). `%gth` alone follows only a run no cell owns (a turn open on the thread
 * is its cell's to follow: two views would both answer its browser tools and interrupts).
 * @param {{ run: { runId: string, turnId?: string } | null, turns: any[] }} thread
 * @param {string} turnId
 */
export function runToFollow(thread, turnId) {
  const run = thread.run;
  if (!run) return null;
  const last = thread.turns.at(-1);
  if (!turnId) {
    if (typeof run.turnId === "string" && run.turnId) return null;
    return last && !last.done ? null : run.runId;
  }
  if (typeof run.turnId === "string") return run.turnId === turnId ? run.runId : null;
  return last?.turnId === turnId && !last.done ? run.runId : null;
}

/** The sign-in page of an MCP server waiting for OAuth, if it is an http(s) URL. */
function signInUrl(/** @type {any} */ server) {
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
