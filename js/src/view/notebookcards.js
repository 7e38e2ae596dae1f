// The notebook tools' cards (../tools/notebook.js): read_notebook as a short list of the cells
// it read, insert_cell's source as code and, when it ran, its outputs drawn as run_python's,
// edit_cell's change as a line diff. Everything here came from the notebook or the agent, so it
// goes in as text only; a plot becomes an <img> only through media.js's inlineImageUrl.

import { EDIT_CELL, INSERT_CELL, READ_NOTEBOOK } from "../tools/notebook.js";
import { joinText, lineDiff } from "../tools/notebook_summary.js";
import { h } from "./dom.js";
import { parseResult, renderRunPython } from "./kernelcards.js";

const LIST_CELLS = 60;
const FIRST_LINE = 100;

/** Whether `name` is one of the notebook tools drawn here. */
export const isNotebookTool = (/** @type {string} */ name) => name === READ_NOTEBOOK || name === INSERT_CELL || name === EDIT_CELL;

/** A cell's first non-empty line, cut (nbformat's list of lines joined). @param {unknown} source */
function firstLine(source) {
  const line = joinText(source).split("\n").find((l) => l.trim()) ?? "";
  return line.length > FIRST_LINE ? `${line.slice(0, FIRST_LINE)}…` : line;
}

/** read_notebook: "12 cells of 40 from analysis.ipynb", then one line per cell. @param {Document} doc @param {any} v */
export function renderRead(doc, v) {
  if (!Array.isArray(v?.cells)) return null;
  const cells = /** @type {any[]} */ (v.cells).filter((c) => c && typeof c === "object");
  const index = (/** @type {any} */ c) => String(c?.index ?? "?");
  const range = cells.length ? ` (cells ${index(cells[0])}–${index(cells[cells.length - 1])})` : "";
  // As the saved copy words it: a count only if it is a whole number, a path only if it is text.
  const total = Number.isInteger(v.cell_count) ? v.cell_count : cells.length;
  const path = typeof v.path === "string" && v.path ? ` of ${v.path}` : "";
  const head = `Read ${cells.length} of ${total} cells${range}${path}.`;
  const rows = cells.slice(0, LIST_CELLS).map((c) => {
    const failed = Array.isArray(c.outputs) ? c.outputs.find((/** @type {any} */ o) => o?.type === "error") : null;
    const marks = [c.asking ? "asking" : "", failed ? `${failed.ename}` : ""].filter(Boolean).join(" · ");
    return h(doc, "li", { cls: "gth-nb-cell", data: { type: String(c.type ?? ""), ...(c.asking ? { asking: "true" } : {}), ...(failed ? { error: "true" } : {}) } }, [
      h(doc, "span", { cls: "gth-nb-index", text: `[${index(c)}]` }),
      h(doc, "span", { cls: "gth-nb-type", text: c.type === "markdown" ? "md" : String(c.type ?? "") }),
      h(doc, "code", { cls: "gth-nb-line", text: firstLine(c.source) }),
      marks ? h(doc, "span", { cls: "gth-nb-mark", text: marks }) : null,
    ]);
  });
  return h(doc, "div", { cls: "gth-kernel gth-notebook-read" }, [
    h(doc, "p", { cls: "gth-run-status", text: head }),
    h(doc, "ol", { cls: "gth-nb-cells" }, rows),
    cells.length > LIST_CELLS ? h(doc, "p", { cls: "gth-kernel-note", text: `${cells.length - LIST_CELLS} more cells read, not listed here.` }) : null,
    typeof v.note === "string" && v.note ? h(doc, "p", { cls: "gth-kernel-note", text: v.note }) : null,
  ]);
}

/** insert_cell: where the cell went; when it ran, its outputs as run_python draws them. @param {Document} doc @param {any} v */
export function renderInsert(doc, v) {
  if (typeof v?.cell_id !== "string") return null;
  const where = `Inserted cell ${v.index ?? "?"} (id ${v.cell_id})`;
  const ran = typeof v.status === "string" ? renderRunPython(doc, v) : null;
  // The run's own status line ("ok") would repeat this one, which says how it went.
  ran?.querySelector(".gth-run-status")?.remove();
  const count = typeof v.execution_count === "number" ? `, ran as [${v.execution_count}]` : ", ran";
  const how = ran ? `${count}${v.status === "ok" ? "" : `: ${v.status}`}` : "";
  return h(doc, "div", { cls: "gth-kernel gth-notebook-insert", data: ran ? { status: String(v.status) } : {} }, [
    h(doc, "p", { cls: "gth-run-status", text: `${where}${how}.` }),
    ran,
  ]);
}

/** edit_cell: the change, removed lines and added lines marked. @param {Document} doc @param {any} v */
export function renderEdit(doc, v) {
  if (typeof v?.cell_id !== "string" || !Array.isArray(v.diff)) return null;
  const lines = /** @type {unknown[]} */ (v.diff).map((l) => String(l));
  const kind = (/** @type {string} */ l) => (l.startsWith("+ ") ? "add" : l.startsWith("- ") ? "del" : l.startsWith("@@") ? "gap" : "same");
  const text = lines.length ? `Edited cell ${v.cell_id}: +${v.added ?? 0} −${v.removed ?? 0} lines.` : `Cell ${v.cell_id} unchanged.`;
  return h(doc, "div", { cls: "gth-kernel gth-notebook-edit" }, [
    h(doc, "p", { cls: "gth-run-status", text }),
    lines.length ? h(doc, "pre", { cls: "gth-diff" }, lines.map((l) => h(doc, "span", { cls: `gth-diff-line gth-diff-${kind(l)}`, text: `${l}\n` }))) : null,
  ]);
}

/** @type {Record<string, (doc: Document, value: any) => any>} */
const RENDERERS = { [READ_NOTEBOOK]: renderRead, [INSERT_CELL]: renderInsert, [EDIT_CELL]: renderEdit };

/** The result drawn for the notebook tool `name`, or null (another tool, an error, another shape). */
export function renderNotebookResult(/** @type {Document} */ doc, /** @type {string} */ name, /** @type {unknown} */ text) {
  const value = isNotebookTool(name) ? parseResult(text) : null;
  // `{error: "…"}` is a refusal (shown as the card's error); a run's `error` object is drawn.
  if (!value || typeof value.error === "string") return null;
  return RENDERERS[name](doc, value);
}

/**
 * Where a cell is, for the person deciding on a change: "cell 3 (code) · `sales.groupby(…)`".
 * @param {{ index?: number, type?: string, source?: string } | null | undefined} cell
 */
function cellName(cell) {
  if (!cell) return "";
  const line = firstLine(cell.source);
  return `cell ${cell.index ?? "?"} (${cell.type === "markdown" ? "markdown" : String(cell.type ?? "code")})${line ? ` · ${line}` : ""}`;
}

/** A line diff drawn as edit_cell's result is (removed and added lines marked). @param {Document} doc @param {string[]} lines */
export function diffBlock(doc, lines) {
  const kind = (/** @type {string} */ l) => (l.startsWith("+ ") ? "add" : l.startsWith("- ") ? "del" : l.startsWith("@@") ? "gap" : "same");
  return h(doc, "pre", { cls: "gth-diff" }, lines.map((l) => h(doc, "span", { cls: `gth-diff-line gth-diff-${kind(l)}`, text: `${l}\n` })));
}

/**
 * insert_cell's and edit_cell's source drawn as code, or null. With the notebook at hand
 * (`actions.cellAt`, while the bridge finds it), an edit shows the change as a line diff of the
 * cell as it is now (old → new, three lines of context) and names the cell; an insert names the
 * cell it goes below. That is what an approval is asked over, before anything changed.
 * @param {Document} doc @param {string} name @param {unknown} text
 * @param {import("./kernelcards.js").CardActions} [actions]
 */
export function renderNotebookArgs(doc, name, text, actions = {}) {
  const args = name === INSERT_CELL || name === EDIT_CELL ? parseResult(text) : null;
  if (typeof args?.source !== "string") return null;
  const markdown = args.cell_type === "markdown";
  const language = markdown ? "markdown" : "python";
  if (name === EDIT_CELL) {
    const cell = typeof args.cell_id === "string" ? actions.cellAt?.(args.cell_id) : null;
    const diff = cell && typeof cell.source === "string" ? lineDiff(cell.source, args.source) : null;
    const where = cell ? `Edit ${cellName(cell)}` : `Edit cell ${String(args.cell_id ?? "?")}`;
    const counts = diff ? (diff.lines.length ? `: +${diff.added} −${diff.removed} lines` : ": no change") : "";
    return h(doc, "div", { cls: "gth-run-args gth-notebook-change" }, [
      h(doc, "p", { cls: "gth-run-justification", text: `${where}${counts}` }),
      diff && diff.lines.length ? diffBlock(doc, diff.lines) : null,
      // The new source whole (what Edit edits), folded when the diff already shows it.
      diff && diff.lines.length
        ? h(doc, "details", { cls: "gth-notebook-new" }, [h(doc, "summary", { text: "New source" }), h(doc, "pre", { cls: "gth-run-code", text: args.source, data: { language } })])
        : h(doc, "pre", { cls: "gth-run-code", text: args.source, data: { language } }),
    ]);
  }
  const below = args.after ? actions.cellAt?.(String(args.after)) : actions.cellAt?.("");
  const place = below ? `below ${cellName(below)}` : args.after ? `after ${args.after}` : "below the asking cell";
  const where = [`New ${markdown ? "markdown" : "code"} cell ${place}`, args.run ? "run" : ""].filter(Boolean).join(", ");
  return h(doc, "div", { cls: "gth-run-args gth-notebook-change" }, [
    h(doc, "p", { cls: "gth-run-justification", text: where }),
    typeof args.justification === "string" && args.justification ? h(doc, "p", { cls: "gth-run-justification", text: args.justification }) : null,
    h(doc, "pre", { cls: "gth-run-code", text: args.source, data: { language } }),
  ]);
}
