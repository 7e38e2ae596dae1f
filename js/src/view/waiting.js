// The "waiting" line above the input: why this widget's prompt has not gone out yet (the cell
// before it still runs, or another run holds the thread), with what the person can do about it.

import { h } from "./dom.js";

export class WaitingLine {
  /** @param {Document} doc */
  constructor(doc) {
    this.doc = doc;
    this.text = h(doc, "span", { cls: "gth-waiting-text" });
    this.actions = h(doc, "span", { cls: "gth-waiting-actions" });
    this.el = h(doc, "div", { cls: "gth-waiting", attrs: { role: "status", "aria-live": "polite" } }, [this.text, this.actions]);
    this.el.hidden = true;
  }

  /**
   * Show `text` with a button per action, or hide the line (`null`).
   * @param {{ text: string, actions?: { label: string, run: () => void }[] } | null} state
   */
  set(state) {
    this.el.hidden = !state;
    this.text.textContent = state?.text ?? "";
    this.actions.replaceChildren(
      ...(state?.actions ?? []).map((a) => {
        const button = h(this.doc, "button", { cls: "gth-waiting-action", text: a.label, attrs: { type: "button" } });
        button.addEventListener("click", () => a.run());
        return button;
      }),
    );
  }
}
