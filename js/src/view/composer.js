// The input row: a text box (Enter sends, Shift+Enter is a new line), Send and Stop.

import { h } from "./dom.js";

export class Composer {
  /**
   * @param {Document} doc
   * @param {{ onSend: (text: string) => boolean, onStop: () => void }} handlers
   *   onSend returns false when the text was not taken (the box keeps it).
   */
  constructor(doc, { onSend, onStop }) {
    this.input = h(doc, "textarea", {
      cls: "gth-input",
      attrs: { rows: "2", placeholder: "Message the agent (Enter to send, Shift+Enter for a new line)", "aria-label": "Message" },
    });
    this.sendButton = h(doc, "button", { cls: "gth-send", text: "Send", attrs: { type: "button" } });
    this.stopButton = h(doc, "button", { cls: "gth-stop", text: "Stop", attrs: { type: "button" } });
    this.stopButton.disabled = true;
    this.el = h(doc, "div", { cls: "gth-composer" }, [this.input, this.sendButton, this.stopButton]);
    this.running = false;
    this.ready = true;

    const submit = () => {
      const text = String(this.input.value ?? "").trim();
      if (!text || this.running || !this.ready) return;
      if (onSend(text) !== false) this.input.value = "";
    };
    this.sendButton.addEventListener("click", submit);
    this.input.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        submit();
      }
    });
    this.stopButton.addEventListener("click", () => onStop());
  }

  /** While a run is in flight: Stop on, Send off (typing stays possible). */
  setRunning(/** @type {boolean} */ running) {
    this.running = running;
    this.stopButton.disabled = !running;
    this.sendButton.disabled = running || !this.ready;
  }

  /** Before the history has loaded, nothing can be sent. */
  setReady(/** @type {boolean} */ ready) {
    this.ready = ready;
    this.sendButton.disabled = this.running || !ready;
  }
}
