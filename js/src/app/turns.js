// Turn order and sending: what this view sends, and when. Typed text, A2UI actions and answers
// to interrupts go to the chat at once. The prompt the kernel queued (`pending_prompt`) waits
// until the history is loaded and the chat is idle, and, for a `%gth <prompt>` cell, until the
// turn the kernel ran before it on this thread is done (src/order.js). Each run's end tells the
// other cells of the page, one of which may be waiting for this turn, and has the cell's static
// copy written (`onTurnEnd`, src/app/static.js).

import { announce, claim, giveUp, waitForTurn } from "../order.js";

/**
 * @typedef {import("../comm.js").AnyModel} AnyModel
 * @typedef {import("../chat/controller.js").ChatController} ChatController
 * @typedef {import("../transcript.js").TranscriptView} TranscriptView
 * @typedef {{ threadId: string, turnsOf: (turnId: string) => Promise<any[] | null>, sent: boolean,
 *   reload?: () => void }} Ready
 *   What the server knew when the history loaded (`sent`: this cell's turn is on the thread),
 *   how to ask it again about a turn, and how to show this cell's turn again (`reload`: it was
 *   sent from elsewhere meanwhile).
 */

export class Turns {
  /**
   * @param {{ model: AnyModel, view: TranscriptView, signal: AbortSignal, onTurnEnd?: () => void }} opts
   *   `signal` aborts when the view is gone; it also names this view in the page's news
   *   (order.js). `onTurnEnd` is called when a run of this view ends.
   */
  constructor({ model, view, signal, onTurnEnd }) {
    this.model = model;
    this.view = view;
    this.signal = signal;
    this.onTurnEnd = onTurnEnd;
    /** This cell's turn (`%gth <prompt>`), and the turn the kernel ran before it on the thread. */
    this.turnId = String(model.get("turn_id") || "");
    this.afterTurn = String(model.get("after_turn") || "");
    /** @type {ChatController | null} set once the transport is chosen (`connect`) */
    this.chat = null;
    /** @type {Ready | null} set once the history is loaded (`start`) */
    this.ready = null;
    /** Whether this view claimed this cell's turn in the page (order.js `claim`). */
    this.claimed = false;
    /** Whether the queued prompt is waiting for the cell above (its Send now / Cancel line is shown). */
    this.waiting = false;
    const onPending = () => void this.sendPending();
    model.on("change:pending_prompt", onPending);
    signal.addEventListener("abort", () => model.off("change:pending_prompt", onPending), { once: true });
  }

  /** Typed text: sent when the chat takes it now; false leaves it in the input. */
  send(/** @type {string} */ text) {
    if (!this.chat?.accepts(text)) return false;
    void this.chat.send(text);
    return true;
  }

  /** An A2UI button's action, as the next user message; said to wait while a run goes on. */
  sendAction(/** @type {object} */ action) {
    if (!this.chat) return;
    if (this.chat.running) {
      this.view.addNote("The agent is still answering; press the button again when it has finished.", "warning");
      return;
    }
    void this.chat.sendAction(action);
  }

  /** @param {import("../interrupts.js").ResumeEntry[]} resume the answers to the interrupt cards */
  resolveInterrupts(resume) {
    void this.chat?.resolveInterrupts(resume);
  }

  stop() {
    this.chat?.stop();
  }

  /**
   * The chat is there: typed text goes to it, and when one of its runs ends the thread is free
   * (`threadFree`).
   * @param {ChatController} chat @param {string} threadId
   */
  connect(chat, threadId) {
    this.chat = chat;
    chat.on((e) => {
      if (e.type === "run-state" && !e.running) this.threadFree(threadId);
    });
  }

  /**
   * The history is loaded. A prompt left over from before a reload of a turn the server already
   * has is dropped (a reload never sends a turn again); the caller sends the rest (`sendPending`)
   * once it has re-attached to a run in flight.
   * @param {Ready} ready
   */
  start(ready) {
    if (ready.sent) this.#clearPending();
    this.ready = ready;
  }

  /** A run on the thread ended here: the next cell of this page may go, and so may our prompt. */
  threadFree(/** @type {string} */ threadId) {
    announce(threadId, this.signal);
    this.onTurnEnd?.();
    void this.sendPending();
  }

  /**
   * Send the prompt the kernel queued, once the chat is ready and idle, and, for a `%gth`
   * cell, once the cell the kernel ran before it on this thread is done (src/order.js).
   */
  async sendPending() {
    const { chat, ready } = this;
    const prompt = this.model.get("pending_prompt");
    if (this.signal.aborted || !chat || !ready || chat.running || this.waiting || typeof prompt !== "string" || !prompt.trim()) return;
    if (ready.sent) {
      // The cell's own prompt went out: this is a follow-up (`GthChat.ask`), sent like typed text.
      void chat.send(prompt);
      return this.#clearPending();
    }
    // A second view of this widget never sends its turn again (this view, held back by a
    // busy chat after its wait, still may).
    if (!this.claimed && !claim(this.turnId)) return this.#clearPending();
    this.claimed = true;
    this.waiting = true;
    const choice = new AbortController();
    try {
      await waitForTurn({
        threadId: ready.threadId,
        afterTurn: this.afterTurn,
        turnsOf: ready.turnsOf,
        signal: AbortSignal.any ? AbortSignal.any([choice.signal, this.signal]) : choice.signal,
        onWait: (state) =>
          this.view.setWaiting({
            text: state === "running" ? "Waiting for the %gth cell above to finish…" : "Waiting for the %gth cell above to send its prompt…",
            actions: [
              { label: "Send now", run: () => choice.abort("now") },
              { label: "Cancel", run: () => choice.abort("cancel") },
            ],
          }),
      });
    } catch {
      if (this.signal.aborted || choice.signal.reason !== "now") {
        this.waiting = false;
        this.view.setWaiting(null);
        if (!this.signal.aborted) {
          this.#clearPending();
          giveUp(ready.threadId, this.turnId);
          this.view.addNote("Not sent: the prompt was cancelled.", "stopped");
        }
        return;
      }
    }
    this.waiting = false;
    this.view.setWaiting(null);
    if (this.signal.aborted || chat.running) return;
    // A turn never runs twice: another page of this notebook (its widget's prompt was cleared)
    // or the kernel may have sent it while this view waited or loaded.
    if (!this.model.get("pending_prompt") || (await this.#onThread(ready))) {
      if (this.signal.aborted) return;
      ready.sent = true;
      this.#clearPending();
      ready.reload?.();
      return;
    }
    if (this.signal.aborted || chat.running) return;
    ready.sent = true;
    void chat.send(prompt); // adds the message and starts the run before its first await
    // Cleared once sent, so another view of this model does not send it again.
    this.#clearPending();
  }

  /** Whether this cell's turn is on the thread now (a failed answer: not known, so no). */
  async #onThread(/** @type {Ready} */ ready) {
    if (!this.turnId) return false;
    const turns = await ready.turnsOf(this.turnId).catch(() => null);
    return Array.isArray(turns) && turns.some((t) => t?.turnId === this.turnId);
  }

  #clearPending() {
    this.model.set?.("pending_prompt", "");
    this.model.save_changes?.();
  }
}
