// Wiring for one widget view: the view and the parts that feed it, each a concern of its own
// in src/app/ beside it — the model's traits (traits.js), the transport and the chat (connect.js), turn
// order and sending (turns.js), history, rehydration and the run to follow (history.js), MCP
// notices and sign-in (mcp.js), the cell's static copy (static.js), and a view kept when the
// notebook draws its widget again (hosting.js). Separate from widget.js so tests can mount it
// with a fake model, a fake fetch and a manual animation frame.
//
// Every part stops itself when `gone` aborts (the view is removed): `gone.signal` ends requests
// nobody will read, and names this view in the page's news (src/order.js).

import { connect } from "./connect.js";
import { followNews, followRun, loadHistory } from "./history.js";
import { PARK_MS, host, rebindable, takeOver } from "./hosting.js";
import { wireMcpNotices } from "./mcp.js";
import { wireStaticCopy } from "./static.js";
import { followTraits, showAgentInfo } from "./traits.js";
import { Turns } from "./turns.js";
import { TranscriptView } from "../transcript.js";
import { wireGrants } from "../view/grants.js";

/**
 * @typedef {import("./connect.js").MountEnv} MountEnv
 */

/**
 * @param {{ model: import("../comm.js").AnyModel, el: HTMLElement, css?: string, env?: MountEnv, parkMs?: number }} opts
 *   `parkMs`: how long the view, once let go, waits to be taken over by a new view of its widget
 *   (src/app/hosting.js; 0: it ends at once).
 * @returns {() => void} cleanup
 */
export function mount({ model: own, el, css, env = {}, parkMs = PARK_MS }) {
  const taken = takeOver(own, el, parkMs);
  if (taken) return taken;
  const rebound = rebindable(own);
  const model = rebound.model;
  const doc = el.ownerDocument ?? globalThis.document;
  if (css) {
    // Scoped by the gth- prefix; kept inside the view so it leaves with it.
    const style = doc.createElement("style");
    style.textContent = css;
    el.append(style);
  }
  const gone = new AbortController();
  // The view's buttons go to the turns, made just below (the view is theirs to write to).
  /** @type {TranscriptView} */
  const view = new TranscriptView({
    doc,
    el,
    raf: env.raf,
    onSend: (text) => turns.send(text),
    onStop: () => turns.stop(),
    onAction: (action) => turns.sendAction(action),
    onResolveInterrupts: (resume) => turns.resolveInterrupts(resume),
  });
  followTraits(model, view, gone.signal);
  view.setReady(false);
  const staticCopy = wireStaticCopy({ model, signal: gone.signal });
  /** @type {Turns} */
  const turns = new Turns({ model, view, signal: gone.signal, onTurnEnd: () => void staticCopy.turnEnded() });
  start({ model, view, doc, env, turns, staticCopy, signal: gone.signal }).catch((err) => view.addError("widget_error", String(err?.message || err)));
  const end = () => {
    gone.abort();
    view.destroy();
  };
  return host({ el, model: rebound, ready: () => view.root.dataset.ready === "true", end }, parkMs);
}

/**
 * Connect, rebuild the transcript from the history, then let the queued prompt go (after
 * re-attaching to a run in flight, which it then waits for).
 * @param {{ model: import("../comm.js").AnyModel, view: TranscriptView, doc: Document, env: MountEnv,
 *   turns: Turns, staticCopy: ReturnType<typeof wireStaticCopy>, signal: AbortSignal }} opts
 */
async function start({ model, view, doc, env, turns, staticCopy, signal }) {
  const { turnId } = turns;
  const connected = await connect({ model, view, doc, env, turnId, signal });
  if (!connected) return;
  const { backend, registry, threadId, chat } = connected;
  // Over HTTP the server ran the turn: the turn's end reads it with the copy the server renders.
  const http = backend.kind === "http";
  // Each turn's Context view (what the model was sent), where the backend serves it.
  const { context } = backend;
  if (context) view.usage.contextOf = (turn) => context(threadId, turn);
  if (http) staticCopy.copyFrom(() => backend.history(threadId, turnId || undefined, { copy: true }));
  // What the person allowed without asking (approvals granted for the thread or the session),
  // above the input, each with a Revoke button; hidden while there is none.
  const grantsBox = doc.createElement("div");
  view.root.insertBefore(grantsBox, view.waiting.el);
  const grants = wireGrants({ doc, backend, chat, threadId, parent: grantsBox });
  signal.addEventListener("abort", grants.stop, { once: true });
  turns.connect(chat, threadId);
  // The agent's info is asked beside the history and applied whenever it comes: an old kernel
  // that never answers changes nothing.
  const info = backend.info(signal).catch(() => null);
  const notices = wireMcpNotices({ doc, view, backend, chat, signal });
  void info.then((i) => !signal.aborted && i && showAgentInfo(model, view, i));

  // A `%gth <prompt>` cell shows its own turn; `%gth` alone, the whole thread. A cell's first
  // view asks for the turn's copy with it: if the turn is answered, that read writes it too.
  const copy = http && Boolean(turnId) && staticCopy.wantsCopy();
  const loaded = await loadHistory({ backend, chat, view, threadId, turnId, signal, copy });
  if (!loaded) return;
  // Notices after the history, which rebuilds the transcript.
  void info.then((i) => !signal.aborted && i && notices.show(i));
  for (const e of registry.errors) view.addNote(`Browser tool '${e.name}' is not available: ${e.message}`, "warning");
  // Shows this cell's turn when it turns out to have been sent from elsewhere (never twice).
  const reload = async () => {
    const again = await loadHistory({ backend, chat, view, threadId, turnId, signal });
    if (again?.follow && !chat.running) followRun({ backend, chat, view, threadId, turnId, runId: again.follow, signal, onFree: () => turns.threadFree(threadId) });
  };
  turns.start({ threadId, turnsOf: async (turn) => (await backend.history(threadId, turn)).turns, sent: loaded.sent, reload: () => void reload() });
  // `%gth` alone follows the turns other cells of this page run.
  if (!turnId) followNews({ backend, chat, view, threadId, signal });
  view.setReady(true, threadId);
  // The run this cell started is still going (the page was reloaded): followed before the
  // queued prompt is looked at, so that finds the chat running.
  if (loaded.follow) {
    followRun({ backend, chat, view, threadId, turnId, runId: loaded.follow, signal, onFree: () => turns.threadFree(threadId) });
  } else if (loaded.sent) {
    // This cell's turn ran already (a reload, or a turn that ended with no page open): its copy
    // is written again so the saved file holds its end, whichever page ran the cell.
    void staticCopy.turnEnded({ onMount: true, read: loaded.read });
  }
  void turns.sendPending();
}
