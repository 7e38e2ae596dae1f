// What the chat controller tells its listeners (the view, the event log, the wiring): one
// `ChatEvent` stream, AG-UI events included. A listener that throws is logged and skipped, so
// one broken part of the view cannot stop a run.

/**
 * @typedef {{ type: "run-state", running: boolean }
 *   | { type: "user", message: any }
 *   | { type: "agui", event: any }
 *   | { type: "tool-run", toolCallId: string, name: string, status: "running" | "done" | "error" | "stopped", content?: string }
 *   | { type: "tool-output", toolCallId: string, line: string }
 *   | { type: "interrupt", interrupts: any[] }
 *   | { type: "error", code: string, message: string }
 *   | { type: "stopped" }
 *   | { type: "request" }
 *   | { type: "history", messages: any[] }} ChatEvent
 */

export class ChatEvents {
  constructor() {
    /** @type {Set<(e: ChatEvent) => void>} */
    this.listeners = new Set();
  }

  /** @param {(e: ChatEvent) => void} fn @returns {() => boolean} stop listening */
  on(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** @param {ChatEvent} event */
  emit(event) {
    for (const fn of this.listeners) {
      try {
        fn(event);
      } catch (err) {
        console.error("gth: a chat listener failed", err);
      }
    }
  }
}
