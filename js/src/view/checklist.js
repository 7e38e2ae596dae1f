// The `gth_checklist` panel: one per widget, pinned above the composer, replaced in place by
// every later call. Items come from the call's arguments `{items: [{content, status}]}` as they
// stream, or from the tool's text result ("[ ] a", "[~] b", "[x] c") when only that is known.

import { argsObject, h } from "./dom.js";

export const CHECKLIST_TOOL = "gth_checklist";

/** @typedef {{ content: string, status: "pending" | "in_progress" | "completed" }} ChecklistItem */

const MARKS = { pending: "☐", in_progress: "◐", completed: "☑" };
const LABELS = { pending: "to do", in_progress: "in progress", completed: "done" };
const RESULT_MARKS = /** @type {Record<string, ChecklistItem["status"]>} */ ({ " ": "pending", "~": "in_progress", x: "completed" });

/**
 * Checklist items from a call's arguments (an object or its JSON text); null when they are not
 * (yet) a whole, valid list. More than one item in progress is a list the tool rejects.
 * @param {any} args
 * @returns {ChecklistItem[] | null}
 */
export function itemsFromArgs(args) {
  const value = argsObject(args);
  const raw = value?.items;
  if (!Array.isArray(raw)) return null;
  /** @type {ChecklistItem[]} */
  const items = [];
  for (const it of raw) {
    if (!it || typeof it.content !== "string" || !(it.status in MARKS)) return null;
    items.push({ content: it.content, status: it.status });
  }
  if (items.filter((i) => i.status === "in_progress").length > 1) return null;
  return items;
}

/**
 * Checklist items from the tool's text result; null for a result that is not a checklist (a
 * rejection, an error).
 * @param {string} text
 * @returns {ChecklistItem[] | null}
 */
export function itemsFromResult(text) {
  if (typeof text !== "string") return null;
  if (/^Checklist cleared/.test(text)) return [];
  if (!/^Checklist \(/.test(text)) return null;
  /** @type {ChecklistItem[]} */
  const items = [];
  for (const line of text.split("\n").slice(1)) {
    const m = /^\[( |~|x)\] (.*)$/.exec(line);
    if (m) items.push({ content: m[2], status: RESULT_MARKS[m[1]] });
  }
  return items;
}

export class ChecklistPanel {
  /** @param {Document} doc */
  constructor(doc) {
    this.doc = doc;
    this.count = h(doc, "span", { cls: "gth-checklist-count" });
    this.list = h(doc, "ol", { cls: "gth-checklist-items" });
    this.el = h(doc, "div", { cls: "gth-checklist", attrs: { role: "region", "aria-label": "Checklist" } }, [
      h(doc, "div", { cls: "gth-checklist-head" }, [h(doc, "span", { cls: "gth-checklist-title", text: "Checklist" }), this.count]),
      this.list,
    ]);
    this.el.hidden = true;
    /** The last list shown, as JSON, so an identical update repaints nothing. */
    this.key = "";
  }

  /** Show these items (an empty list hides the panel). */
  set(/** @type {ChecklistItem[]} */ items, /** @type {string} */ toolCallId = "") {
    if (toolCallId) this.el.dataset.toolCallId = toolCallId;
    const key = JSON.stringify(items);
    if (key === this.key) return;
    this.key = key;
    const done = items.filter((i) => i.status === "completed").length;
    this.count.textContent = `${done}/${items.length}`;
    this.list.replaceChildren(
      ...items.map((it) => {
        const li = h(this.doc, "li", { cls: "gth-checklist-item", data: { status: it.status } }, [
          h(this.doc, "span", { cls: "gth-checklist-mark", text: MARKS[it.status], attrs: { "aria-label": LABELS[it.status] } }),
          h(this.doc, "span", { cls: "gth-checklist-text", text: it.content }),
        ]);
        if (it.status === "in_progress") li.setAttribute("aria-current", "step");
        return li;
      }),
    );
    this.el.hidden = items.length === 0;
  }

  clear() {
    this.set([]);
    delete this.el.dataset.toolCallId;
  }
}
