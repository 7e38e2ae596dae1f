// The notebook tools: read_notebook, insert_cell and edit_cell, fulfilled in the browser through
// the notebook bridge, the global the gth-jupyter-notebook JupyterLab / Notebook 7 extension
// sets on the page (`__gth_jupyter_notebook__`, version 1). The widget is an anywidget in a cell
// output and cannot see the notebook by itself; the bridge finds the notebook holding this
// widget's cell (the `cell_id` trait: the cellId JupyterLab sent with the execute request).
//
// The tools are declared only while the bridge finds this widget's notebook. Where it does
// not (VS Code, a page without the extension, a headless run) they are not offered and the
// first widget of the page says why, once. What the agent may do with them (reads unasked,
// writes and runs per the approval mode) is decided on the server, by tool name; the page only
// fulfils the calls the server let through.

import tools from "../../../gth_jupyter/contract/spec/browser_tools.json" with { type: "json" };
import { lineDiff, runResult, summarizeNotebook } from "./notebook_summary.js";

export const BRIDGE_KEY = "__gth_jupyter_notebook__";
/** Their names, which the server gates by (contract/spec/browser_tools.json). */
export const NOTEBOOK_TOOLS = tools.notebook;
export const [READ_NOTEBOOK, INSERT_CELL, EDIT_CELL] = NOTEBOOK_TOOLS;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
const MAX_DIFF_LINES = 400;
// What the model hears when the bridge rewrote its Markdown (the diff of edit_cell shows it).
const MARKDOWN_REWRITTEN =
  "The Markdown was rewritten so that it loads nothing when shown: images from hosts not trusted for images became links, and HTML that loads or styles anything is shown as text.";

/**
 * @typedef {{ path: string, read: (o?: { offset?: number, limit?: number }) => any,
 *   insertCell: (o: { source: string, cellType?: string, after?: string, askingCellId?: string, turnId?: string, run?: boolean, imageHosts?: string[], provenance?: Provenance }) => Promise<any>,
 *   editCell: (o: { cellId: string, source: string, turnId?: string, imageHosts?: string[], cellType?: string, allowMagic?: boolean, provenance?: Provenance }) => any,
 *   setStaticCopy?: (o: { displayId: string, data: Record<string, string> }) => boolean,
 *   reveal?: (cellId: string) => boolean }} NotebookHandle
 * @typedef {{ version?: number, find: (o: { cellId: string, kernelId: string }) => NotebookHandle | null }} NotebookBridge
 * @typedef {{ threadId?: string, toolCallId?: string, tool?: string, model?: string, approvedBy?: string }} Provenance
 *   What the bridge keeps in a written cell's `metadata.gth` beside its turn (bridge.js).
 * @typedef {{ cellId: string, kernelId: string, turnId: string, threadId: string, bridge: () => NotebookBridge | null,
 *   handle: () => NotebookHandle | null, why: () => string, imageHosts?: () => string[],
 *   approvalMode?: () => string, model?: () => string }} NotebookLink
 *   This widget's way to its notebook: found again at each use, so a closed notebook or a
 *   reloaded extension is never held on to. `imageHosts`: the hosts whose images load in the
 *   view (`a2ui.imageHosts`); the bridge lets only those load in the Markdown cells it writes.
 *   `model`: the agent's model as the cells it writes record it ("" where the server's
 *   `jupyter.provenance.model` is off).
 */

/** Pages already told the notebook tools are off (each page once, by its global). */
const told = new WeakSet();

/**
 * @param {{ get: (k: string) => any }} model the widget's model (traits cell_id, kernel_id, turn_id, thread_id)
 * @param {{ global?: any }} [env] where the bridge is looked for (a test's fake page)
 * @returns {NotebookLink}
 */
export function notebookLink(model, env = {}) {
  const cellId = String(model.get("cell_id") || "");
  const kernelId = String(model.get("kernel_id") || "");
  const turnId = String(model.get("turn_id") || "");
  const threadId = String(model.get("thread_id") || "");
  const bridge = () => {
    const found = (env.global ?? globalThis)[BRIDGE_KEY];
    return found && typeof found.find === "function" ? /** @type {NotebookBridge} */ (found) : null;
  };
  const handle = () => {
    const b = bridge();
    if (!b || !cellId) return null;
    try {
      return b.find({ cellId, kernelId }) ?? null;
    } catch {
      return null; // a bridge that fails to look is no bridge
    }
  };
  const why = () => {
    if (!bridge()) {
      return (
        "Notebook tools are off: this page has no JupyterLab/Notebook 7 notebook the widget can reach " +
        "(VS Code, the standalone server and headless runs have none, or the gth-jupyter-notebook extension is disabled)."
      );
    }
    if (!cellId) return "Notebook tools are off: the kernel did not say which cell made this widget.";
    return handle() ? "" : "Notebook tools are off: this widget's notebook is not open on this page.";
  };
  return { cellId, kernelId, turnId, threadId, bridge, handle, why };
}

/**
 * Link a view to its notebook: its cards get the Insert-as-cell action while the bridge finds
 * the notebook, else the first view of the page says once, quietly, why the notebook tools are
 * off. Returns the link the registry's notebook tools use.
 * @param {{ model: { get: (k: string) => any }, view: { doc: Document, root: any, cardActions: import("../view/kernelcards.js").CardActions,
 *   media?: { hosts: string[] }, approvalMode?: string, provenanceModel?: string,
 *   changes?: { reveal: ((cellId: string) => void) | null } }, env?: { global?: any } }} opts
 */
export function linkNotebook({ model, view, env = {} }) {
  const link = notebookLink(model, env);
  link.imageHosts = () => [...(view.media?.hosts ?? [])];
  link.approvalMode = () => String(view.approvalMode ?? "");
  link.model = () => String(view.provenanceModel ?? "");
  const why = link.why();
  if (!why) {
    view.cardActions.insertCell = (code) => insertCode(link, code);
    view.cardActions.cellAt = (cellId) => cellAt(link, cellId);
    // A line of a Changes card shows its cell (the bridge scrolls the notebook to it).
    if (view.changes) view.changes.reveal = (cellId) => void link.handle()?.reveal?.(cellId);
    return link;
  }
  const page = env.global ?? globalThis;
  if (!told.has(page)) {
    told.add(page);
    // Under the header, not in the transcript (a history load redraws that).
    // Built by hand: tools/ stand below view/ and import nothing of it.
    const note = view.doc.createElement("p");
    note.className = "gth-note gth-note-info gth-notebook-off";
    note.textContent = why;
    view.root.querySelector(".gth-body")?.before(note);
  }
  return link;
}

/**
 * Insert as cell: the person's own action on a run_python card, so it asks nobody; the code goes
 * below the asking cell (after the cells this turn inserted), not run.
 * @param {NotebookLink} link
 * @param {string} code
 */
export async function insertCode(link, code) {
  const nb = link.handle();
  if (!nb) throw new Error(link.why() || "The notebook is not open on this page.");
  return nb.insertCell({ source: code, cellType: "code", askingCellId: link.cellId, turnId: link.turnId, run: false });
}

/**
 * A cell of this widget's notebook as it is now (its index, type and source); for "" the cell a
 * new one goes below by default (the asking cell, or the last cell below it this turn inserted,
 * as the bridge places it). Null when the notebook or the cell is not found.
 * @param {NotebookLink} link @param {string} cellId
 */
export function cellAt(link, cellId) {
  const nb = link.handle();
  const id = cellId || link.cellId;
  if (!nb || !id) return null;
  /** @type {any[]} */
  const cells = [];
  try {
    for (let at = 0; ; ) {
      const page = nb.read({ offset: at, limit: 1000 });
      const got = page?.cells ?? [];
      cells.push(...got);
      if (!got.length || at + got.length >= Number(page?.cellCount ?? 0)) break;
      at += got.length;
    }
  } catch {
    return null;
  }
  let hit = cells.findIndex((c) => c?.id === id);
  if (hit < 0) return null;
  if (!cellId && link.turnId) {
    for (let i = hit + 1; i < cells.length; i++) if (insertedIn(cells[i], link.turnId)) hit = i;
  }
  const cell = cells[hit];
  return { index: cell.index, type: cell.cell_type, source: String(cell.source ?? "") };
}

/**
 * Whether turn `turnId` inserted this cell (read_notebook's JSON): an edited cell names its turn
 * but does not place the turn's next insert (bridge.js places it the same way).
 * @param {any} cell @param {string} turnId
 */
const insertedIn = (cell, turnId) => cell?.metadata?.gth?.turnId === turnId && (cell.metadata.gth.change ?? "inserted") === "inserted";

/**
 * A written cell's provenance: the thread, the call and its tool, and the model.
 * @param {NotebookLink} link @param {{ toolCallId?: string, toolName?: string } | undefined} ctx
 * @returns {Provenance}
 */
const provenanceOf = (link, ctx) => {
  const given = { threadId: link.threadId, toolCallId: ctx?.toolCallId, tool: ctx?.toolName, model: link.model?.() };
  return /** @type {Provenance} */ (Object.fromEntries(Object.entries(given).filter(([, v]) => typeof v === "string" && v)));
};

/** @param {string} message */
const failed = (message) => ({ error: message });

/** @param {unknown} err */
const messageOf = (err) => (err instanceof Error ? err.message : String(err)) || "The notebook did not answer.";

/**
 * The notebook as the model reads it. Offset and limit page it; without an offset the asking
 * cell's index is looked up even when it is past the page, so the model knows where it is.
 * @param {NotebookHandle} nb
 * @param {any} args
 * @param {NotebookLink} link
 */
export function readNotebook(nb, args, link) {
  const offset = Number.isInteger(args?.offset) && args.offset > 0 ? args.offset : 0;
  const limit = Number.isInteger(args?.limit) && args.limit > 0 ? Math.min(args.limit, MAX_LIMIT) : DEFAULT_LIMIT;
  const includeOutputs = args?.include_outputs !== false;
  const page = nb.read({ offset, limit });
  let askingIndex = null;
  const onPage = (page?.cells ?? []).some((/** @type {any} */ c) => c?.id === link.cellId);
  if (link.cellId && !onPage) askingIndex = indexOf(nb, link.cellId, Number(page?.cellCount) || 0);
  return summarizeNotebook(page, { offset, includeOutputs, askingCellId: link.cellId, askingIndex });
}

/**
 * A cell's index, read page by page (the bridge caps a page), or null.
 * @param {NotebookHandle} nb @param {string} cellId @param {number} total
 */
function indexOf(nb, cellId, total) {
  for (let at = 0; at < total; ) {
    const cells = nb.read({ offset: at, limit: 1000 })?.cells ?? [];
    const hit = cells.find((/** @type {any} */ c) => c?.id === cellId);
    if (hit) return typeof hit.index === "number" ? hit.index : null;
    if (!cells.length) break;
    at += cells.length;
  }
  return null;
}

/**
 * insert_cell: the new cell's id and index; with run, its outputs as run_python gives them.
 * `run` is read as JavaScript reads it (any truthy value runs the cell): the server's gate asks
 * for exactly those as code (tools/kinds.py), so an approved run call runs.
 * @param {NotebookHandle} nb
 * @param {any} args
 * @param {NotebookLink} link
 * @param {{ turnId?: string, toolCallId?: string, toolName?: string }} [ctx] the call's context: its
 *   turn marks the cell, its id and tool go into the cell's provenance
 */
export async function insertCell(nb, args, link, ctx) {
  if (typeof args?.source !== "string") return failed("insert_cell needs 'source', the cell's text.");
  const cellType = args.cell_type ?? "code";
  if (cellType !== "code" && cellType !== "markdown") return failed("'cell_type' must be \"code\" or \"markdown\".");
  if (args.after !== undefined && typeof args.after !== "string") return failed("'after' must be a cell id from read_notebook.");
  const run = Boolean(args.run);
  const turnId = turnOf(link, ctx);
  const imageHosts = link.imageHosts?.() ?? [];
  const provenance = provenanceOf(link, ctx);
  const done = await nb.insertCell({ source: args.source, cellType, after: args.after || undefined, askingCellId: link.cellId, turnId, run, imageHosts, provenance });
  /** @type {Record<string, unknown>} */
  const answer = { cell_id: String(done?.cellId ?? ""), index: done?.index ?? null };
  if (typeof done?.source === "string") answer.note = `${MARKDOWN_REWRITTEN} It reads:\n${done.source}`;
  if (!run || cellType !== "code") return answer;
  return { ...answer, ...runResult(done) };
}

/**
 * edit_cell: the change as a line diff (the card draws it; the model reads what it did).
 * @param {NotebookHandle} nb
 * @param {any} args
 * @param {NotebookLink} link
 * @param {{ turnId?: string, toolCallId?: string, toolName?: string }} [ctx]
 */
export async function editCell(nb, args, link, ctx) {
  if (typeof args?.cell_id !== "string" || !args.cell_id) return failed("edit_cell needs 'cell_id', a cell id from read_notebook.");
  if (typeof args.source !== "string") return failed("edit_cell needs 'source', the cell's new text.");
  const cellType = args.cell_type ?? "code";
  if (cellType !== "code" && cellType !== "markdown") return failed("'cell_type' must be \"code\" or \"markdown\".");
  // The server asked for this call as what cell_type says; the bridge holds the call to it, and
  // rewrites a %gth cell only at bypass (the server's mode, from the agent's info).
  const allowMagic = link.approvalMode?.() === "bypass";
  const done = await nb.editCell({
    cellId: args.cell_id, source: args.source, turnId: turnOf(link, ctx), imageHosts: link.imageHosts?.() ?? [], cellType, allowMagic,
    provenance: provenanceOf(link, ctx),
  });
  const diff = lineDiff(String(done?.before ?? ""), String(done?.after ?? args.source));
  const lines = diff.lines.length > MAX_DIFF_LINES ? [...diff.lines.slice(0, MAX_DIFF_LINES), `@@ ${diff.lines.length - MAX_DIFF_LINES} more diff lines not shown @@`] : diff.lines;
  /** @type {Record<string, unknown>} */
  const answer = { cell_id: String(done?.cellId ?? args.cell_id) };
  if (typeof done?.index === "number") answer.index = done.index;
  // `undo`: what the edit replaced, whole, for the Changes card's Undo; the server keeps it
  // with the call and never sends it to the model (gth_jupyter/contract/undo.py).
  return { ...answer, added: diff.added, removed: diff.removed, diff: lines, undo: { before: String(done?.before ?? "") } };
}

/**
 * The turn a call marks its cells with: the one the chat runs it in (the widget's turn, or for
 * `%gth` alone, whose typed turns carry none, the turn's user message id), else the widget's.
 * @param {NotebookLink} link @param {{ turnId?: string } | undefined} ctx
 */
const turnOf = (link, ctx) => (typeof ctx?.turnId === "string" && ctx.turnId) || link.turnId;

/**
 * A tool def run against this widget's notebook; a missing notebook or a bridge error is an
 * `{error}` result, never a throw, so the model can tell the person what went wrong.
 * @param {NotebookLink} link
 * @param {(nb: NotebookHandle, args: any, link: NotebookLink, ctx?: { turnId?: string, toolCallId?: string, toolName?: string }) => any} fn
 */
const onNotebook = (link, fn) => async (/** @type {any} */ args, /** @type {{ turnId?: string, toolCallId?: string, toolName?: string } | undefined} */ ctx) => {
  const nb = link.handle();
  if (!nb) return JSON.stringify(failed(link.why() || "The notebook is not open on this page."));
  try {
    return JSON.stringify(await fn(nb, args ?? {}, link, ctx));
  } catch (err) {
    return JSON.stringify(failed(messageOf(err)));
  }
};

/**
 * The three tool defs for a link.
 * @param {NotebookLink} link
 * @returns {import("./registry.js").ToolDef[]}
 */
export function notebookTools(link) {
  return [
    {
      name: READ_NOTEBOOK,
      description:
        "Read the notebook this chat is in, as it is on screen (unsaved edits included): each cell's index, id, " +
        "type, source, execution count and outputs summarised (text cut to its head and tail, errors with their " +
        "traceback, images counted), and which cell is the %gth cell asking (asking_cell). Pages: give offset " +
        "(from next_offset) and limit for more.",
      parameters: {
        type: "object",
        properties: {
          include_outputs: { type: "boolean", description: "Include the cells' outputs (default true)." },
          offset: { type: "integer", minimum: 0, description: "The first cell index to read (default 0)." },
          limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT, description: `How many cells at most (default ${DEFAULT_LIMIT}).` },
        },
        required: [],
      },
      handler: onNotebook(link, readNotebook),
    },
    {
      name: INSERT_CELL,
      description:
        "Insert a cell into the notebook, by default right below the %gth cell asking (after the cells you " +
        "inserted before). With run: true the code cell runs in the notebook's kernel as if the person ran it, " +
        "and you get its outputs as run_python gives them. Returns the new cell's id.",
      parameters: {
        type: "object",
        properties: {
          source: { type: "string", description: "The cell's text." },
          cell_type: { type: "string", enum: ["code", "markdown"], description: "Default code." },
          after: { type: "string", description: "Insert below this cell id instead (from read_notebook)." },
          run: { type: "boolean", description: "Run the code cell after inserting it (default false)." },
        },
        required: ["source"],
      },
      handler: onNotebook(link, insertCell),
    },
    {
      name: EDIT_CELL,
      description: "Replace the source of a cell of the notebook (an id from read_notebook). It is not run.",
      parameters: {
        type: "object",
        properties: {
          cell_id: { type: "string", description: "The cell's id." },
          source: { type: "string", description: "The cell's new text." },
          cell_type: { type: "string", enum: ["code", "markdown"], description: "The cell's type, as read_notebook shows it (default code)." },
        },
        required: ["cell_id", "source"],
      },
      handler: onNotebook(link, editCell),
    },
  ];
}
