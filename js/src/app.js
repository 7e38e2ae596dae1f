// Wiring for one widget view: pick the transport, build the tool registry and the chat
// controller, rehydrate the transcript from the server, and follow the model's traits
// (`pending_prompt`, `model_label`, `offline`, `show_event_log`). Separate from widget.js so
// tests can mount it with a fake model, a fake fetch and a manual animation frame.

import { randomUUID } from "@ag-ui/client";
import { ChatController } from "./chat.js";
import { createRegistry } from "./tools/registry.js";
import { TranscriptView } from "./transcript.js";
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

  /** Send the prompt the kernel queued, once the chat is ready and idle. */
  const sendPending = () => {
    const prompt = model.get("pending_prompt");
    if (disposed || !chat || chat.running || typeof prompt !== "string" || !prompt.trim()) return;
    void chat.send(prompt); // adds the message and starts the run before its first await
    // Cleared at once, so another view of this model does not send it again.
    model.set("pending_prompt", "");
    model.save_changes?.();
  };
  // `%gth --log` opens the event log; the header button still toggles it.
  const showLog = () => view.showLog(Boolean(model.get("show_event_log")));
  showLog();
  model.on("change:show_event_log", showLog);
  model.on("change:model_label", showTraits);
  model.on("change:offline", showTraits);
  model.on("change:pending_prompt", sendPending);

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
    chat = new ChatController({
      url: backend.runUrl(model.get("agent") || "default"),
      threadId,
      registry,
      fetch: backend.fetch,
      ui: view.toolUi,
      env: env.toolEnv,
    });
    chat.on((e) => view.handle(e));
    chat.on((e) => {
      if (e.type === "run-state" && !e.running) sendPending();
    });
    // The agent's info carries the hosts whose images load at once (`a2ui.imageHosts`). Asked
    // beside the history and applied whenever it comes: until then every remote image waits
    // for a click, and an old kernel that never answers changes nothing.
    const info = backend.info(gone.signal).catch(() => null);
    void info.then((i) => {
      if (disposed || !i) return;
      view.setMediaHosts(i.a2ui?.imageHosts);
      if (!model.get("model_label")) view.setHeader({ modelLabel: [i.provider, i.model].filter(Boolean).join(" · "), offline: Boolean(i.offline) });
    });
    try {
      const thread = await backend.history(threadId);
      if (disposed) return;
      if (thread.messages.length) chat.setHistory(thread.messages);
      chat.restoreInterrupts(thread.interrupts); // approvals still waiting get their cards again
    } catch (err) {
      view.addError("history_unavailable", `Could not load this conversation: ${/** @type {Error} */ (err).message}`);
    }
    // After the history, which rebuilds the transcript.
    for (const e of registry.errors) view.addNote(`Browser tool '${e.name}' is not available: ${e.message}`, "warning");
    view.setReady(true, threadId);
    sendPending();
  })().catch((err) => view.addError("widget_error", String(err?.message || err)));

  return () => {
    disposed = true;
    gone.abort();
    chat?.stop();
    model.off("change:model_label", showTraits);
    model.off("change:offline", showTraits);
    model.off("change:pending_prompt", sendPending);
    model.off("change:show_event_log", showLog);
    view.destroy();
  };
}
