// The connection of one view: the transport (HTTP to the server extension, else the kernel's
// comm), the server calls on it (the backend), the browser tools, and the chat controller that
// runs the turns over it. A busy thread (another tab, `Session`, another client) is waited out,
// never an error.

import { randomUUID } from "@ag-ui/client";
import { ChatController } from "../chat/controller.js";
import { waitOutBusy } from "../order.js";
import { linkNotebook } from "../tools/notebook.js";
import { createRegistry } from "../tools/registry.js";
import { chooseTransport, createBackend, httpFetch, resolveBaseUrl } from "../transport.js";

/**
 * @typedef {import("../comm.js").AnyModel} AnyModel
 * @typedef {import("../transcript.js").TranscriptView} TranscriptView
 * @typedef {{ fetch?: (url: string, init?: any) => Promise<Response>, raf?: (cb: () => void) => any,
 *   location?: { protocol: string }, healthTimeoutMs?: number, toolEnv?: any }} MountEnv
 *   What a test (or an unusual host) puts in place of the page's own.
 */

/**
 * Choose the transport and build the chat on it, feeding the view every chat event; the chat
 * stops when `signal` aborts. Resolves null when the view went away while the transport was
 * chosen.
 * @param {{ model: AnyModel, view: TranscriptView, doc: Document, env: MountEnv, turnId: string, signal: AbortSignal }} opts
 */
export async function connect({ model, view, doc, env, turnId, signal }) {
  const baseUrl = resolveBaseUrl(model.get("base_url"), doc);
  const kind = await chooseTransport({
    transport: model.get("transport") || "auto",
    baseUrl,
    fetchImpl: env.fetch ? httpFetch({ fetchImpl: env.fetch, doc }) : undefined,
    location: env.location,
    timeoutMs: env.healthTimeoutMs,
  });
  if (signal.aborted) return null;
  const backend = createBackend(kind, { model, baseUrl, fetchImpl: env.fetch, doc });
  view.setHeader({ transport: kind });
  const registry = createRegistry(model.get("client_tools"), { notebook: linkNotebook({ model, view, env: env.toolEnv }) });
  /** @type {string} */
  const threadId = model.get("thread_id") || randomUUID();
  const busyFetch = waitOutBusy(backend.fetch, {
    threadId,
    onWait: () =>
      view.setWaiting({
        text: "Waiting for the run in progress on this conversation…",
        actions: [{ label: "Cancel", run: () => chat.stop() }],
      }),
    onDone: () => view.setWaiting(null),
  });
  const chat = new ChatController({
    url: backend.runUrl(model.get("agent") || "default"),
    threadId,
    registry,
    fetch: busyFetch,
    ui: view.toolUi,
    env: env.toolEnv,
    turnId,
    kernelId: model.get("kernel_id") || "",
    // A `%gth <prompt>` cell's turn: the server replaces the cell's earlier turn with it.
    cellId: turnId ? model.get("cell_id") || "" : "",
    // Over HTTP a run goes on when the page reloads or the connection drops, and is
    // re-attached to (src/reattach.js); Stop then tells the server to stop it.
    detach: backend.detach,
    eventsUrl: backend.eventsUrl ?? undefined,
    cancelRun: backend.cancelRun ?? undefined,
    // What the server suspended a client tool call with (an approval the person edited).
    suspended: async () => (await backend.history(threadId, turnId || undefined)).interrupts,
  });
  signal.addEventListener("abort", () => chat.stop(), { once: true });
  chat.on((e) => view.handle(e));
  return { backend, registry, threadId, chat };
}
