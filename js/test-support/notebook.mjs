// A fake notebook bridge (the gth-jupyter-notebook extension's `__gth_jupyter_notebook__`,
// version 1): one notebook of nbformat-like cells that read, insertCell and editCell work on,
// recording each call. The real bridge is tested in the browser with the extension.

/**
 * @typedef {{ id: string, cell_type: string, source: string | string[], execution_count?: number | null,
 *   outputs?: any[], metadata?: any }} FakeCell
 */

/**
 * A written cell's `metadata.gth` as the real bridge keeps it, less its time and hash.
 * @param {{ turnId?: string, provenance?: Record<string, string | undefined> }} o @param {string} change
 */
function marks(o, change) {
  const kept = Object.entries(o.provenance ?? {}).filter(([, v]) => typeof v === "string" && v);
  return { ...(o.turnId ? { turnId: o.turnId } : {}), change, ...Object.fromEntries(kept) };
}

/**
 * @param {FakeCell[]} cells
 * @param {{ path?: string, kernelId?: string, ran?: (cell: FakeCell) => { outputs: any[], executionCount?: number, status?: string } }} [opts]
 *   `ran`: what running an inserted cell gives
 */
export function fakeBridge(cells, { path = "analysis.ipynb", kernelId = "k1", ran } = {}) {
  /** @type {{ method: string, args: any }[]} */
  const calls = [];
  let open = true;
  let made = 0;
  const indexOf = (/** @type {string} */ id) => cells.findIndex((c) => c.id === id);
  const handle = {
    path,
    /** @param {{ offset?: number, limit?: number }} [o] */
    read({ offset = 0, limit = 1000 } = {}) {
      calls.push({ method: "read", args: { offset, limit } });
      return {
        path,
        cellCount: cells.length,
        cells: cells.slice(offset, offset + limit).map((c, i) => ({ index: offset + i, execution_count: null, outputs: [], metadata: {}, ...structuredClone(c) })),
      };
    },
    /** @param {{ source: string, cellType?: string, after?: string, askingCellId?: string, turnId?: string, run?: boolean, provenance?: any }} o */
    async insertCell(o) {
      calls.push({ method: "insertCell", args: o });
      const anchor = o.after ?? o.askingCellId ?? "";
      let at = indexOf(anchor);
      if (at < 0) throw new Error(`No cell ${anchor} in ${path}.`);
      // Below the asking cell means after the cells this turn already inserted there.
      // (Cells it edited do not count.)
      const own = (/** @type {FakeCell | undefined} */ c) => c?.metadata?.gth?.turnId === o.turnId && (c?.metadata?.gth?.change ?? "inserted") === "inserted";
      if (o.after === undefined) while (o.turnId && own(cells[at + 1])) at += 1;
      /** @type {FakeCell} */
      const cell = { id: `new-${++made}`, cell_type: o.cellType ?? "code", source: o.source, execution_count: null, outputs: [], metadata: { gth: marks(o, "inserted") } };
      cells.splice(at + 1, 0, cell);
      if (!o.run || cell.cell_type !== "code") return { cellId: cell.id, index: at + 1, status: "ok" };
      const r = ran?.(cell) ?? { outputs: [] };
      cell.outputs = r.outputs;
      cell.execution_count = r.executionCount ?? 1;
      return { cellId: cell.id, index: at + 1, executionCount: cell.execution_count, outputs: r.outputs, status: r.status ?? "ok" };
    },
    /** @param {{ cellId: string, source: string, turnId?: string, cellType?: string, allowMagic?: boolean, provenance?: any }} o */
    editCell(o) {
      calls.push({ method: "editCell", args: o });
      const cell = cells[indexOf(o.cellId)];
      if (!cell) throw new Error(`No cell ${o.cellId} in ${path}.`);
      // The real bridge's refusals (labextension/src/bridge.js), as it words them.
      const text = Array.isArray(cell.source) ? cell.source.join("") : cell.source;
      if (o.cellType === "markdown" && cell.cell_type !== "markdown") throw new Error(`Cell ${o.cellId} is a ${cell.cell_type} cell, not markdown.`);
      if (!o.allowMagic && /%%?gth\b/.test(text)) throw new Error(`Cell ${o.cellId} is a %gth cell: it cannot be rewritten.`);
      const before = Array.isArray(cell.source) ? cell.source.join("") : cell.source;
      cell.source = o.source;
      const own = cell.metadata?.gth?.turnId === o.turnId && cell.metadata?.gth?.change === "inserted";
      cell.metadata = { ...cell.metadata, gth: marks(o, own ? "inserted" : "edited") };
      return { cellId: o.cellId, before, after: o.source };
    },
    setStaticCopy: () => false,
  };
  const bridge = {
    version: 1,
    /** @param {{ cellId: string, kernelId: string }} o */
    find(o) {
      calls.push({ method: "find", args: o });
      return open && indexOf(o.cellId) >= 0 && (!o.kernelId || o.kernelId === kernelId) ? handle : null;
    },
  };
  return {
    bridge,
    handle,
    cells,
    calls,
    /** The notebook is closed: `find` finds nothing any more. */
    close() {
      open = false;
    },
  };
}
