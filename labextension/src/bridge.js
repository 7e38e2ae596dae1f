// The notebook bridge: `globalThis.__gth_jupyter_notebook__`, through which the chat widget (an
// anywidget in a cell output, a separate bundle with no handle on the notebook) reads and edits
// the notebook it sits in. Everything goes through the notebook's model, never the DOM: windowed
// notebooks detach off-screen cells, and the model holds unsaved edits.
import { NotebookActions, runCell as defaultRunCell } from "@jupyterlab/notebook";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { safeCellMarkdown } from "./safe_markdown.js";

export const BRIDGE_VERSION = 1;
export const GLOBAL_NAME = "__gth_jupyter_notebook__";
const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";
const STATIC_MIMETYPES = ["text/html", "text/markdown", "text/plain"];
const READ_LIMIT_MAX = 1000;
// A line calling the magic (`%gth …`, `%%gth`, `w = %gth …`), or IPython's spelled-out form.
const GTH_MAGIC = /(^|\n)[^\n#]*%%?gth\b|run_(line|cell)_magic\(\s*["']gth["']/;

/**
 * @typedef {import("@jupyterlab/notebook").INotebookTracker} INotebookTracker
 * @typedef {import("@jupyterlab/notebook").NotebookPanel} NotebookPanel
 * @typedef {import("@jupyterlab/notebook").INotebookCellExecutor} INotebookCellExecutor
 * @typedef {import("@jupyterlab/cells").ICellModel} ICellModel
 */

/**
 * Sets the page's bridge global.
 * @param {INotebookTracker} tracker
 * @param {INotebookCellExecutor | null} executor
 */
export function installBridge(tracker, executor) {
  const bridge = {
    version: BRIDGE_VERSION,
    /**
     * The open notebook holding the cell `cellId`; `kernelId`, if given, picks among several
     * (the same notebook open twice, or two notebooks holding a copied cell).
     * @param {{cellId: string, kernelId?: string}} query
     */
    find({ cellId, kernelId } = /** @type {any} */ ({})) {
      if (!cellId) return null;
      /** @type {NotebookPanel[]} */
      const matches = [];
      tracker.forEach((panel) => {
        if (!panel.isDisposed && panel.model && cellIndex(panel, cellId) >= 0) matches.push(panel);
      });
      if (matches.length === 0) return null;
      const byKernel = kernelId ? matches.find((p) => kernelIdOf(p) === kernelId) : undefined;
      const current = matches.find((p) => p === tracker.currentWidget);
      return new NotebookHandle(byKernel ?? current ?? matches[0], cellId, executor);
    },
    /** The notebook the person is working in (the active one), its active cell as the asking
     * one; null when no notebook is active. */
    current() {
      const panel = tracker.currentWidget;
      if (!panel || panel.isDisposed || !panel.model) return null;
      const cellId = panel.content.activeCell?.model.id ?? panel.model.cells.get(0)?.id ?? "";
      return new NotebookHandle(panel, cellId, executor);
    },
  };
  /** @type {any} */ (globalThis)[GLOBAL_NAME] = bridge;
  return bridge;
}

/** @param {NotebookPanel} panel */
function kernelIdOf(panel) {
  return panel.sessionContext.session?.kernel?.id ?? null;
}

/**
 * @param {NotebookPanel} panel
 * @param {string} cellId
 */
function cellIndex(panel, cellId) {
  const cells = panel.model?.cells;
  if (!cells) return -1;
  for (let i = 0; i < cells.length; i++) {
    if (cells.get(i).id === cellId) return i;
  }
  return -1;
}

/**
 * The turn that inserted this cell, if the agent did (an edited cell names its turn too, but
 * does not place the turn's next insert: that goes after what the turn added, not after a cell
 * it changed). Cells from before provenance carry `{turnId}` alone: inserted.
 * @param {ICellModel} cell
 */
function insertedBy(cell) {
  const gth = /** @type {any} */ (cell.getMetadata("gth"));
  if (!gth || typeof gth !== "object" || (gth.change ?? "inserted") !== "inserted") return undefined;
  return gth.turnId;
}

/**
 * The hash of a cell's source as the agent wrote it, kept in its provenance so that "edited by
 * you since" is computed on read (gth-jupyter provenance computes the same in Python).
 * @param {string} source
 */
export function sourceHash(source) {
  return `sha256:${bytesToHex(sha256(utf8ToBytes(source)))}`;
}

/**
 * @typedef {{ threadId?: string, toolCallId?: string, tool?: string, model?: string,
 *   approvedBy?: string }} Provenance
 *   Who wrote a cell, kept in its `metadata.gth` (with `turnId`, `change`, `at`, `sourceHash`).
 */

/**
 * A cell's `metadata.gth`: which turn wrote it, how, with which call and model, and the hash of
 * what it wrote. Fields the caller left out (a setting may drop `model` and `approvedBy`) are
 * not written.
 * @param {"inserted" | "edited"} change
 * @param {string | undefined} turnId
 * @param {Provenance | undefined} provenance
 * @param {string} source
 */
function provenanceOf(change, turnId, provenance, source) {
  /** @type {Record<string, string>} */
  const gth = {};
  if (turnId) gth.turnId = turnId;
  gth.change = change;
  for (const key of /** @type {const} */ (["threadId", "toolCallId", "tool", "model", "approvedBy"])) {
    const value = provenance?.[key];
    if (typeof value === "string" && value) gth[key] = value;
  }
  gth.at = new Date().toISOString();
  gth.sourceHash = sourceHash(source);
  return gth;
}

/** The part of a notebook the widget may use; every call checks the notebook is still open. */
export class NotebookHandle {
  /**
   * @param {NotebookPanel} panel
   * @param {string} askingCellId the cell the handle was found by (the widget's cell)
   * @param {INotebookCellExecutor | null} executor
   */
  constructor(panel, askingCellId, executor) {
    this._panel = panel;
    this._askingCellId = askingCellId;
    this._executor = executor;
  }

  /** The notebook's path now (it follows a rename). */
  get path() {
    return this._panel.context.path;
  }

  /** The panel, or an Error when the notebook was closed. */
  _open() {
    const panel = this._panel;
    if (panel.isDisposed || !panel.model) {
      throw new Error(`The notebook ${panel.context?.path ?? ""} was closed.`);
    }
    return panel;
  }

  /**
   * @param {string} cellId
   * @returns {[number, ICellModel]}
   */
  _cell(cellId) {
    const panel = this._open();
    const index = cellIndex(panel, cellId);
    if (index < 0) throw new Error(`No cell with id ${JSON.stringify(cellId)} in ${this.path}.`);
    return [index, /** @type {any} */ (panel.model).cells.get(index)];
  }

  /** Saves the notebook as the person's Ctrl+S does; resolves once the file is written. */
  async save() {
    await this._open().context.save();
  }

  /**
   * Cells as they are now, unsaved edits included, as nbformat JSON (no summarising).
   * @param {{offset?: number, limit?: number}} [options]
   */
  read(options) {
    const { offset = 0, limit = READ_LIMIT_MAX } = options ?? {};
    const model = /** @type {any} */ (this._open().model);
    const count = model.cells.length;
    const start = Math.max(0, Math.floor(Number(offset) || 0));
    const size = Math.min(READ_LIMIT_MAX, Math.max(0, Math.floor(Number(limit) || 0)));
    const cells = [];
    for (let i = start; i < Math.min(count, start + size); i++) {
      const json = model.cells.get(i).toJSON();
      cells.push({
        index: i,
        id: json.id,
        cell_type: json.cell_type,
        source: Array.isArray(json.source) ? json.source.join("") : json.source,
        execution_count: json.cell_type === "code" ? (json.execution_count ?? null) : null,
        outputs: json.cell_type === "code" ? (json.outputs ?? []) : [],
        metadata: json.metadata ?? {},
      });
    }
    return { path: this.path, cellCount: count, cells };
  }

  /**
   * Where a new cell goes: after `after`, else below the asking cell and after the cells this
   * turn already inserted below it (so a turn's cells read top to bottom in the order made).
   * @param {string | undefined} after
   * @param {string | undefined} askingCellId
   * @param {string | undefined} turnId
   */
  _insertIndex(after, askingCellId, turnId) {
    if (after) return this._cell(after)[0] + 1;
    const asking = askingCellId || this._askingCellId;
    let index = this._cell(asking)[0];
    if (turnId) {
      const cells = /** @type {any} */ (this._open().model).cells;
      for (let i = index + 1; i < cells.length; i++) {
        if (insertedBy(cells.get(i)) === turnId) index = i;
      }
    }
    return index + 1;
  }

  /**
   * Inserts a cell as one undoable step, its provenance in `metadata.gth` (see provenanceOf);
   * with `run`, runs it in the
   * notebook's kernel as the person's Shift+Enter would (the notebook's own executor, in order
   * with the person's queue) and resolves with its outputs once it finished.
   * @param {{source: string, cellType?: string, after?: string, askingCellId?: string,
   *   turnId?: string, run?: boolean, imageHosts?: string[], provenance?: Provenance}} options
   *   `imageHosts`: the hosts whose images may load in the Markdown written (safe_markdown.js)
   */
  async insertCell({ source, cellType = "code", after, askingCellId, turnId, run = false, imageHosts, provenance }) {
    if (typeof source !== "string") throw new Error("insertCell needs the cell's source (a string).");
    if (cellType !== "code" && cellType !== "markdown") {
      throw new Error(`A cell is "code" or "markdown", not ${JSON.stringify(cellType)}.`);
    }
    // A Markdown cell renders as soon as it is in: what it holds must load nothing.
    const written = cellType === "markdown" ? safeCellMarkdown(source, { imageHosts }) : source;
    const rewritten = written !== source;
    source = written;
    const panel = this._open();
    const model = /** @type {any} */ (panel.model);
    const index = this._insertIndex(after, askingCellId, turnId);
    // A call that cannot run leaves the notebook as it was.
    if (run && cellType === "code" && !panel.sessionContext.session?.kernel) {
      throw new Error(`The notebook ${this.path} has no running kernel.`);
    }
    /** @type {any} */
    const cell = { cell_type: cellType, source, metadata: { gth: provenanceOf("inserted", turnId, provenance, source) } };
    if (cellType === "code") {
      cell.outputs = [];
      cell.execution_count = null;
      // Never marked trusted: what the agent wrote is not the person's (its outputs, once run,
      // are trusted as any output the person's kernel made in this session).
    }
    oneUndoStep(model.sharedModel, () => model.sharedModel.insertCell(index, cell));
    const inserted = model.cells.get(index);
    /** @type {any} */
    const result = { cellId: inserted.id, index, status: "ok" };
    if (rewritten) result.source = source;
    if (run) {
      const ran = await runCellOf(panel, inserted.id, this._executor);
      const now = this._cell(inserted.id)[1];
      const json = /** @type {any} */ (now.toJSON());
      result.index = cellIndex(panel, inserted.id);
      if (cellType === "code") {
        result.executionCount = json.execution_count ?? null;
        result.outputs = json.outputs ?? [];
        const failed = result.outputs.some((/** @type {any} */ o) => o.output_type === "error");
        result.status = ran && !failed ? "ok" : "error";
      }
    }
    return result;
  }

  /**
   * Replaces a cell's source as one undoable step (the cell's own undo, Ctrl+Z in its editor,
   * or the notebook's when document-wide undo is on).
   * `cellType` is what the caller was allowed to change (the server gates a markdown edit as a
   * write and any other as code): a code cell is never changed as markdown. A `%gth` cell (the
   * asking one, one showing a chat, or one that calls the magic) is rewritten only with
   * `allowMagic` (approvals at `bypass`): its new source would run as the person's next prompt.
   * The cell's `metadata.gth` then says the agent edited it (a cell the same turn inserted
   * stays "inserted": it is still the turn's own).
   * @param {{cellId: string, source: string, turnId?: string, imageHosts?: string[],
   *   cellType?: string, allowMagic?: boolean, provenance?: Provenance}} options
   */
  editCell({ cellId, source, turnId, imageHosts, cellType = "code", allowMagic = false, provenance }) {
    if (typeof source !== "string") throw new Error("editCell needs the new source (a string).");
    const [index, cell] = this._cell(cellId);
    if (cellType === "markdown" && cell.type !== "markdown") {
      throw new Error(
        `Cell ${cellId} is a ${cell.type} cell, not markdown: call edit_cell again without cell_type "markdown" (a change to a code cell is asked as code).`,
      );
    }
    if (!allowMagic && this.isGthCell(cellId)) {
      throw new Error(`Cell ${cellId} is a %gth cell: it cannot be rewritten (only with approvals at "bypass"). Insert a new cell instead.`);
    }
    // A rendered Markdown cell renders its new source at once (see insertCell).
    if (cell.type === "markdown") source = safeCellMarkdown(source, { imageHosts });
    const shared = /** @type {any} */ (cell.sharedModel);
    const before = shared.getSource();
    const own = turnId !== undefined && insertedBy(cell) === turnId;
    const gth = provenanceOf(own ? "inserted" : "edited", turnId, provenance, source);
    oneUndoStep(shared, () => {
      shared.setSource(source);
      cell.setMetadata("gth", gth);
    });
    return { cellId, index, before, after: shared.getSource() };
  }

  /**
   * Shows the cell `cellId`: it becomes the active cell and the notebook scrolls to it (a line
   * of a Changes card). False when the cell is gone.
   * @param {string} cellId
   */
  reveal(cellId) {
    const panel = this._open();
    const index = cellIndex(panel, cellId);
    if (index < 0) return false;
    const notebook = panel.content;
    notebook.activeCellIndex = index;
    const widget = notebook.widgets[index];
    if (widget) void notebook.scrollToCell(widget, "center");
    return true;
  }

  /**
   * Whether the cell `cellId` is a `%gth` cell: the asking one, one whose outputs show a chat
   * (a display of ours), or a code cell whose source calls the magic.
   * @param {string} cellId
   */
  isGthCell(cellId) {
    if (cellId === this._askingCellId) return true;
    const [, cell] = this._cell(cellId);
    if (cell.type !== "code") return false;
    const json = /** @type {any} */ (cell.toJSON());
    const source = Array.isArray(json.source) ? json.source.join("") : String(json.source ?? "");
    if (GTH_MAGIC.test(source)) return true;
    return (json.outputs ?? []).some((/** @type {any} */ o) => o?.metadata?.gth_jupyter?.display);
  }

  /**
   * Replaces the static copy (text/html, text/markdown, text/plain) of the outputs marked with
   * this display id, keeping their widget view; false when there is none. An output that already
   * holds exactly that copy is left alone: writing it would draw its widget again (stopping the
   * run its view shows) and mark a clean notebook dirty.
   * @param {{displayId: string, data: Record<string, string>}} options
   */
  setStaticCopy({ displayId, data }) {
    const model = /** @type {any} */ (this._open().model);
    if (!displayId || !data || typeof data !== "object") return false;
    const copy = /** @type {Record<string, string>} */ ({});
    for (const mime of STATIC_MIMETYPES) {
      if (typeof data[mime] === "string") copy[mime] = data[mime];
    }
    let found = false;
    for (let c = 0; c < model.cells.length; c++) {
      const cell = model.cells.get(c);
      if (cell.type !== "code") continue;
      const outputs = cell.outputs;
      for (let i = 0; i < outputs.length; i++) {
        const json = outputs.get(i).toJSON();
        if (json.metadata?.gth_jupyter?.display !== displayId) continue;
        found = true;
        if (holdsCopy(json.data ?? {}, copy)) continue;
        outputs.set(i, { ...json, data: { ...json.data, ...copy } });
      }
    }
    return found;
  }
}

/**
 * Whether an output's `data` already holds every mimetype of `copy` with the same text (a
 * multiline string may be kept as nbformat's list of lines).
 * @param {Record<string, unknown>} data
 * @param {Record<string, string>} copy
 */
function holdsCopy(data, copy) {
  return Object.entries(copy).every(([mime, text]) => {
    const held = data[mime];
    return (Array.isArray(held) ? held.join("") : held) === text;
  });
}

/**
 * Runs `change` as its own step in the undo history of `shared` (a notebook's or a cell's shared
 * model): the undo manager otherwise merges changes made within half a second of each other, and
 * an agent's edit must not fold into the person's typing.
 * @param {any} shared
 * @param {() => void} change
 */
function oneUndoStep(shared, change) {
  shared.undoManager?.stopCapturing?.();
  shared.transact(change);
  shared.undoManager?.stopCapturing?.();
}

/**
 * Runs one cell through the notebook's executor, without touching the person's selection, mode
 * or focus (NotebookActions.runCells would switch the notebook to command mode and scroll).
 * Emits NotebookActions' executionScheduled / executed signals as a run by the person does.
 * @param {NotebookPanel} panel
 * @param {string} cellId
 * @param {INotebookCellExecutor | null} executor
 */
export async function runCellOf(panel, cellId, executor) {
  const notebook = panel.content;
  const widget = notebook.widgets.find((w) => w.model.id === cellId);
  if (!widget) throw new Error("The new cell is not in the notebook view.");
  if (widget.model.type === "code" && !panel.sessionContext.session?.kernel) {
    throw new Error(`The notebook ${panel.context.path} has no running kernel.`);
  }
  const options = {
    cell: widget,
    notebook: notebook.model,
    notebookConfig: notebook.notebookConfig,
    onCellExecuted: (/** @type {any} */ args) =>
      /** @type {any} */ (NotebookActions.executed).emit({ notebook, ...args }),
    onCellExecutionScheduled: (/** @type {any} */ args) =>
      /** @type {any} */ (NotebookActions.executionScheduled).emit({ notebook, ...args }),
    sessionContext: panel.sessionContext,
  };
  try {
    const run = executor ? executor.runCell.bind(executor) : defaultRunCell;
    return await run(/** @type {any} */ (options));
  } catch (error) {
    // A cell that raised: the kernel replied "error"; its traceback is in the outputs.
    if (String(/** @type {any} */ (error)?.message).startsWith("KernelReplyNotOK")) {
      return false;
    }
    throw error;
  }
}

export { WIDGET_VIEW };
