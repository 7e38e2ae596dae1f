// The cell's static copy: beside the widget's view, the cell's output keeps a static rendering
// of the turn (what GitHub, nbviewer and nbconvert show). Only the page knows when a turn ends,
// and each copy is written into the notebook once, by one writer: the notebook extension's
// bridge where this page has one (the kernel's display update would reach only the page that
// ran the cell, not one reloaded since), else the kernel's display update.
//
// Over HTTP the server ran the turn and holds its thread: the turn's end reads the thread once,
// and the server renders the copy from that read (`GET gth/threads/{id}?turn=…&copy=1`); the
// kernel is told only where the page has no bridge (`turn_end` with the `copy` to write), and
// renders nothing. Over the comm the kernel ran the turn and renders it (`turn_end`); it writes
// it itself, or answers the copy (`static`) for this page's bridge (`pageWrites`).

import { isCopy } from "../transport.js";

/**
 * The outputs this page asked to refresh. Updating an output makes the notebook draw the widget
 * again, which mounts a new view: a view that mounts on an answered turn asks only when this
 * page has not asked yet, or each refresh would ask for the next.
 */
const asked = new Set();

/**
 * @typedef {import("../comm.js").AnyModel} AnyModel
 * @typedef {Record<string, string>} Copy the copy's text/html, text/markdown and text/plain
 * @typedef {{ setStaticCopy(copy: { displayId: string, data: Copy }): unknown }} NotebookHandle
 * @typedef {{ find(where: { cellId: string, kernelId: string }): null | undefined | NotebookHandle }} Bridge
 * @typedef {{ copy?: Copy | null }} CopyRead a read of the turn that asked for its copy: the
 *   server's copy, or null when nothing of the turn is on the thread (absent: none was given)
 */

/** The notebook extension's bridge on this page (absent outside JupyterLab and Notebook 7). */
export function pageBridge() {
  return /** @type {Bridge | undefined} */ (/** @type {any} */ (globalThis).__gth_jupyter_notebook__);
}

/**
 * Write each copy this widget's output gets once; the returned `turnEnded()` says a turn of this
 * view ended. Stops listening for the kernel's copies when `signal` aborts.
 * @param {{ model: AnyModel, signal: AbortSignal, bridge?: () => Bridge | undefined }} opts
 */
export function wireStaticCopy({ model, signal, bridge = pageBridge }) {
  const displayIdOf = () => String(model.get("display_id") || "");
  const turnIdsOf = () => {
    const turnId = String(model.get("turn_id") || "");
    return turnId ? [turnId] : [];
  };
  /** The notebook holding this widget's cell, through the bridge; null when there is none. */
  const notebook = () => {
    try {
      return bridge()?.find?.({ cellId: String(model.get("cell_id") || ""), kernelId: String(model.get("kernel_id") || "") }) ?? null;
    } catch {
      return null; // the notebook was closed
    }
  };
  /**
   * The one write of `copy`: through the bridge, or where it finds no output to write (no
   * bridge on this page, a closed notebook, an output it does not hold) by the kernel.
   * @param {Copy} copy
   */
  const write = (copy) => {
    const displayId = displayIdOf();
    if (!displayId) return;
    try {
      if (notebook()?.setStaticCopy({ displayId, data: copy }) === true) return;
    } catch {
      // The cell is gone: the kernel's update is all there is.
    }
    model.send({ type: "turn_end", turnIds: turnIdsOf(), copy });
  };
  // The kernel's copy of a turn it rendered (`pageWrites`), for this page to write.
  const onMessage = (/** @type {any} */ msg) => {
    if (!msg || msg.type !== "static" || typeof msg.displayId !== "string") return;
    if (!msg.displayId || msg.displayId !== displayIdOf() || !isCopy(msg.data)) return;
    write(msg.data);
  };
  model.on("msg:custom", onMessage);
  signal.addEventListener("abort", () => model.off("msg:custom", onMessage), { once: true });
  /** @type {(() => Promise<CopyRead>) | null} */
  let readCopy = null;
  return {
    /**
     * The server ran the turn (HTTP): `source()` reads it with the copy the server renders.
     * @param {() => Promise<CopyRead>} source
     */
    copyFrom(source) {
      readCopy = source;
    },
    /** Whether a view mounting now would refresh the copy (so its first read may bring it). */
    wantsCopy() {
      const displayId = displayIdOf();
      return Boolean(displayId) && !asked.has(displayId);
    },
    /**
     * A turn of this view ended (or, `onMount`, was found ended when the view mounted, `read`
     * being that read): its copy is written into the output.
     * @param {{ onMount?: boolean, read?: CopyRead }} [opts]
     */
    async turnEnded({ onMount = false, read } = {}) {
      const displayId = displayIdOf();
      if (signal.aborted || !displayId || (onMount && asked.has(displayId))) return;
      asked.add(displayId);
      if (!readCopy) {
        // The kernel ran the turn (the comm): it renders it, and writes it unless this page does.
        model.send({ type: "turn_end", turnIds: turnIdsOf(), pageWrites: notebook() !== null });
        return;
      }
      const got = read && read.copy !== undefined ? read : await readCopy().catch(() => null);
      if (signal.aborted || !got) return; // the server could not be read: the copy stays
      if (isCopy(got.copy)) return write(got.copy);
      // Nothing of the turn reached the thread (its run was refused): the kernel shows the
      // cell's prompt, which only it knows, with no answer.
      if (got.copy === null) model.send({ type: "turn_end", turnIds: turnIdsOf(), copy: null, pageWrites: notebook() !== null });
    },
  };
}
