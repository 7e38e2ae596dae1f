// The `gth_status_update` line: one line under the header saying what the agent is doing,
// replaced by each update and cleared when the run ends.

import { argsObject, h } from "./dom.js";

export const STATUS_TOOL = "gth_status_update";

/**
 * The status text from the call's arguments (`{input}`, or `{message}`; an object or its JSON
 * text), or null while they are incomplete.
 * @param {any} args
 * @returns {string | null}
 */
export function statusFromArgs(args) {
  const value = argsObject(args);
  const text = typeof value?.input === "string" ? value.input : typeof value?.message === "string" ? value.message : null;
  return text === null ? null : oneLine(text);
}

/** Collapse whitespace so the line stays one line. */
export const oneLine = (/** @type {string} */ text) => String(text).replace(/\s+/g, " ").trim();

export class StatusLine {
  /** @param {Document} doc */
  constructor(doc) {
    this.text = h(doc, "span", { cls: "gth-status-text" });
    this.el = h(doc, "div", { cls: "gth-status-line", attrs: { role: "status", "aria-live": "polite" } }, [this.text]);
    this.el.hidden = true;
  }

  set(/** @type {string} */ text) {
    const line = oneLine(text ?? "");
    this.text.textContent = line;
    this.el.title = line;
    this.el.hidden = !line;
  }

  clear() {
    this.set("");
  }
}
