// What a turn changed in the notebook (issue 20): a turn that inserted or edited cells ends with
// a Changes card, one line per cell (`+ cell 8 (code, ran as [12])`, `~ cell 3 (markdown, +4
// −1)`); a line opens its diff (or the inserted source) and shows its cell in the notebook. Live,
// from the results of the turn's insert_cell and edit_cell calls as the page ran them; after a
// reload, from the same results kept in the thread. The saved copy lists the same lines
// (gth_jupyter/copy/_changes.py writes them the same way).

import { EDIT_CELL, INSERT_CELL } from "../tools/notebook.js";
import { h } from "./dom.js";
import { diffBlock } from "./notebookcards.js";

/**
 * @typedef {{ kind: "inserted" | "edited", toolCallId: string, cellId: string, index: number | null,
 *   cellType: string, ran: number | null, added: number, removed: number, diff: string[], source: string,
 *   before: string | null }} Change
 *   `before`: an edited cell's whole source before the edit (kept with the call by the server)
 */

/** @param {unknown} text */
function json(text) {
  if (text && typeof text === "object") return /** @type {any} */ (text);
  if (typeof text !== "string" || !text.startsWith("{")) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** @param {unknown} n */
const whole = (n) => (typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : null);

/**
 * The change one call made, from its arguments and result; null for a call that changed nothing
 * (an error, a read, another tool).
 * @param {string} toolCallId @param {string} name @param {unknown} args @param {unknown} result
 * @param {any} [undo] what the thread kept of it (a history's tool message `undo`)
 * @returns {Change | null}
 */
export function changeOf(toolCallId, name, args, result, undo) {
  if (name !== INSERT_CELL && name !== EDIT_CELL) return null;
  const a = json(args) ?? {};
  const r = json(result);
  if (!r || typeof r.error === "string" || typeof r.cell_id !== "string" || !r.cell_id) return null;
  const cellType = a.cell_type === "markdown" ? "markdown" : "code";
  const diff = Array.isArray(r.diff) ? r.diff.map(String) : [];
  return {
    kind: name === INSERT_CELL ? "inserted" : "edited",
    toolCallId,
    cellId: r.cell_id,
    index: whole(r.index),
    cellType,
    ran: whole(r.execution_count),
    added: whole(r.added) ?? 0,
    removed: whole(r.removed) ?? 0,
    diff,
    source: typeof a.source === "string" ? a.source : "",
    before: typeof (undo ?? r.undo)?.before === "string" ? (undo ?? r.undo).before : null,
  };
}

/**
 * A change as one line; an edited cell's index is the one the model read (the result names
 * the cell by id).
 * @param {Change} c
 */
export function changeLine(c) {
  const where = c.index === null ? `cell ${c.cellId}` : `cell ${c.index}`;
  if (c.kind === "inserted") return `+ ${where} (${c.cellType}${c.ran !== null ? `, ran as [${c.ran}]` : ""})`;
  return `~ ${where} (${c.cellType}, +${c.added} −${c.removed})`;
}

/**
 * Each turn's changes in a thread's messages, by the turn's user message id (in order).
 * @param {any[]} messages AG-UI messages
 * @returns {{ userId: string, changes: Change[] }[]}
 */
export function turnsChanges(messages) {
  /** @type {{ userId: string, changes: Change[] }[]} */
  const turns = [];
  /** @type {Map<string, { name: string, args: unknown }>} */
  const calls = new Map();
  for (const msg of messages) {
    if (msg?.role === "user") turns.push({ userId: String(msg.id ?? ""), changes: [] });
    else if (msg?.role === "assistant") {
      for (const tc of msg.toolCalls ?? []) calls.set(tc.id, { name: tc.function?.name ?? "", args: tc.function?.arguments });
    } else if (msg?.role === "tool" && turns.length) {
      const call = calls.get(msg.toolCallId);
      const change = call ? changeOf(msg.toolCallId, call.name, call.args, msg.content, msg.undo) : null;
      if (change) turns[turns.length - 1].changes.push(change);
    }
  }
  return turns.filter((t) => t.changes.length);
}

/** The Changes cards of one transcript. */
export class ChangesCards {
  /** @param {Document} doc @param {{ list: any, append: (node: any) => void }} view */
  constructor(doc, view) {
    this.doc = doc;
    this.view = view;
    /** @type {Change[]} the turn in progress */
    this.turn = [];
    /** @type {any} its card, once it has one */
    this.card = null;
    /** Shows a cell in the notebook, while the bridge finds it (set by linkNotebook). @type {((cellId: string) => void) | null} */
    this.reveal = null;
  }

  /** A person's new turn. */
  newTurn() {
    this.turn = [];
    this.card = null;
  }

  /** A call the page ran for this turn; one that changed a cell joins the turn's list. @param {string} toolCallId @param {string} name @param {unknown} args @param {unknown} result */
  toolRan(toolCallId, name, args, result) {
    const change = changeOf(toolCallId, name, args, result);
    if (!change || this.turn.some((c) => c.toolCallId === toolCallId)) return;
    this.turn.push(change);
  }

  /** A run of the turn ended: its card (new or redrawn) goes to the end. */
  runEnded() {
    if (!this.turn.length) return;
    const card = this.#card(this.turn);
    if (this.card) this.card.replaceWith(card);
    this.card = card;
    this.view.append(card);
  }

  /**
   * After the transcript was rebuilt from the thread: a card at the end of each turn that changed
   * the notebook (before the next turn's first message).
   * @param {any[]} messages @param {(id: string) => any} elementOf
   */
  showHistory(messages, elementOf) {
    const userIds = messages.filter((m) => m?.role === "user").map((m) => String(m.id ?? ""));
    for (const { userId, changes } of turnsChanges(messages)) {
      const later = userIds.slice(userIds.indexOf(userId) + 1).map(elementOf).find(Boolean) ?? null;
      const card = this.#card(changes);
      this.view.list.insertBefore(card, later);
      this.turn = changes;
      this.card = card; // a run that follows this turn (after a reload) redraws its card
    }
  }

  /** @param {Change[]} changes */
  #card(changes) {
    const doc = this.doc;
    const lines = changes.map((c) => {
      const body =
        c.kind === "edited"
          ? c.diff.length
            ? diffBlock(doc, c.diff)
            : h(doc, "p", { cls: "gth-note", text: "No change." })
          : h(doc, "pre", { cls: "gth-run-code", text: c.source, data: { language: c.cellType === "markdown" ? "markdown" : "python" } });
      const item = h(doc, "details", { cls: `gth-change gth-change-${c.kind}`, data: { cellId: c.cellId } }, [h(doc, "summary", { text: changeLine(c) }), body]);
      // Opening a line shows its cell too.
      item.addEventListener("toggle", () => {
        if (item.open) this.reveal?.(c.cellId);
      });
      return h(doc, "li", {}, [item]);
    });
    return h(doc, "div", { cls: "gth-changes", attrs: { role: "group", "aria-label": "What this turn changed in the notebook" } }, [
      h(doc, "p", { cls: "gth-changes-title", text: `Changes · ${changes.length} cell${changes.length === 1 ? "" : "s"}` }),
      h(doc, "ul", { cls: "gth-changes-list" }, lines),
    ]);
  }
}
