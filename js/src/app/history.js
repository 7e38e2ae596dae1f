// History, rehydration and the run to follow. When a view mounts, the transcript is rebuilt
// from the server's copy of the thread (its messages, the shared state, the approvals still
// waiting); a run this view started that is still going (the page was reloaded) is followed
// live, and one whose events are gone is waited out. `%gth` alone, the whole thread, follows
// the turns the other cells of the page run.

import { onNews, pause } from "../order.js";
import { EARLIER_RUN_TEXT } from "../transcript.js";

/**
 * @typedef {import("../chat/controller.js").ChatController} ChatController
 * @typedef {import("../transcript.js").TranscriptView} TranscriptView
 * @typedef {ReturnType<typeof import("../transport.js").createBackend>} Backend
 * @typedef {ReturnType<typeof import("../interrupts.js").threadOf>} Thread
 */

/**
 * Show the server's copy of the thread (`turnId`: a `%gth <prompt>` cell's own turn only).
 * Resolves with the run in flight to follow (null: none, or this transport cannot re-attach)
 * and whether this cell's turn is on the thread already (a reload: its prompt went out).
 * A history that cannot be loaded is said in the transcript, and the view goes on without it;
 * null when the view went away meanwhile (`signal`). With `copy`, the same read brings the
 * turn's static copy too (`read`, for src/app/static.js): a view mounting on an answered turn
 * reads its thread once.
 * @param {{ backend: Backend, chat: ChatController, view: TranscriptView, threadId: string, turnId: string,
 *   signal: AbortSignal, copy?: boolean }} opts
 * @returns {Promise<{ follow: string | null, sent: boolean, read?: { copy?: Record<string, string> | null } } | null>}
 */
export async function loadHistory({ backend, chat, view, threadId, turnId, signal, copy = false }) {
  try {
    const thread = await backend.history(threadId, turnId || undefined, { copy });
    if (signal.aborted) return null;
    if (thread.messages.length) chat.setHistory(thread.messages);
    showUsage(view, thread);
    // This cell's turn is on a branch the thread left (a cell above ran again since).
    if (turnId && thread.currentBranch === false && thread.messages.length) view.addNote(EARLIER_RUN_TEXT, "muted");
    if (thread.state) view.log.setState(thread.state); // the event log's state view, after a reload
    const follow = backend.eventsUrl ? runToFollow(thread, turnId) : null;
    // approvals still waiting get their cards again (a run in flight says its own at its end)
    if (!follow) chat.restoreInterrupts(thread.interrupts);
    const sent = Boolean(turnId) && thread.turns.some((t) => t.turnId === turnId);
    return copy ? { follow, sent, read: { copy: thread.copy } } : { follow, sent };
  } catch (err) {
    if (signal.aborted) return null;
    view.addError("history_unavailable", `Could not load this conversation: ${/** @type {Error} */ (err).message}`);
    return { follow: null, sent: false };
  }
}

/**
 * The run in flight this view should follow after a reload, or null. A `%gth <prompt>` cell
 * follows its own turn's run (the server names the run's turn, or this turn is the thread's
 * last and not done). `%gth` alone follows only a run no cell owns (a turn open on the thread
 * is its cell's to follow: two views would both answer its browser tools and interrupts).
 * @param {{ run: { runId: string, turnId?: string } | null, turns: { turnId: string, done?: boolean }[] }} thread
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

/**
 * Follow the run `runId` in flight (the page was reloaded): live, from the history on; Stop
 * stops it. The run starts before this returns, so the chat is running for what comes next.
 * When its events are no longer kept, the thread is waited out (`settle`), then `onFree()`.
 * @param {{ backend: Backend, chat: ChatController, view: TranscriptView, threadId: string, turnId: string,
 *   runId: string, signal: AbortSignal, onFree: () => void }} opts
 */
export function followRun(opts) {
  void opts.chat.reattach(opts.runId).then((how) => {
    if (how === "gone" && !opts.signal.aborted) void settle(opts);
  });
}

/**
 * The run could not be followed (its events are no longer kept): wait until the thread is
 * free, then show what the server has and call `onFree()`.
 * @param {{ backend: Backend, chat: ChatController, view: TranscriptView, threadId: string, turnId: string,
 *   signal: AbortSignal, onFree: () => void }} opts
 */
async function settle({ backend, chat, view, threadId, turnId, signal, onFree }) {
  view.setWaiting({ text: "Waiting for the run in progress on this conversation…" });
  try {
    for (;;) {
      const thread = await backend.history(threadId, turnId || undefined).catch(() => null);
      if (signal.aborted) return;
      if (thread && !thread.busy) {
        if (chat.running) return;
        chat.setHistory(thread.messages);
        showUsage(view, thread);
        chat.restoreInterrupts(thread.interrupts);
        return onFree();
      }
      await pause(2000, signal).catch(() => {});
      if (signal.aborted) return;
    }
  } finally {
    if (!signal.aborted) view.setWaiting(null);
  }
}

/**
 * `%gth` alone shows the whole thread: it is shown again whenever a run on it ends in another
 * view of this page (news from order.js; `signal` names this view and ends the following).
 * @param {{ backend: Backend, chat: ChatController, view: TranscriptView, threadId: string, signal: AbortSignal }} opts
 */
export function followNews({ backend, chat, view, threadId, signal }) {
  const refresh = async () => {
    if (signal.aborted || chat.running) return;
    const thread = await backend.history(threadId).catch(() => null);
    if (signal.aborted || !thread || chat.running) return;
    chat.setHistory(thread.messages);
    showUsage(view, thread);
    chat.restoreInterrupts(thread.interrupts);
  };
  const stop = onNews(threadId, () => void refresh(), signal);
  signal.addEventListener("abort", stop, { once: true });
}

/** What each turn shown cost and the conversation so far, after the transcript was rebuilt
 * from `thread` (src/view/usage.js). @param {TranscriptView} view @param {Thread} thread */
function showUsage(view, thread) {
  view.usage.showHistory(thread.usageTurns, (id) => view.messages.get(id)?.el, thread);
}
