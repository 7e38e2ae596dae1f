// The cell's static copy: the kernel keeps, beside the widget's view in the cell's output, a
// static rendering of the turn (what GitHub, nbviewer and nbconvert show). Only the page knows
// when a turn ends (over HTTP it runs in the server), so it tells the kernel (`turn_end`, over
// the widget's comm whatever the transport); the kernel updates the output and answers with the
// copy (`static`), which goes to the notebook extension's bridge when the page has one: the
// kernel's display update reaches only the page that ran the cell, not one reloaded since.
// Over HTTP the server ran the turn, and the page sends the turn as the server gave it along
// (`view`): that is what the kernel renders, building no agent of its own for it.

/** A larger view is left out: the page's websocket to the server refuses big messages. */
export const MAX_VIEW_CHARS = 4_000_000;

/**
 * The outputs this page asked the kernel to refresh. Updating an output makes the notebook draw
 * the widget again, which mounts a new view: a view that mounts on an answered turn asks only
 * when this page has not asked yet, or each refresh would ask for the next.
 */
const asked = new Set();

/**
 * @typedef {import("../comm.js").AnyModel} AnyModel
 * @typedef {{ find(where: { cellId: string, kernelId: string }): null | undefined | {
 *   setStaticCopy(copy: { displayId: string, data: Record<string, string> }): unknown } }} Bridge
 */

/** The notebook extension's bridge on this page (absent outside JupyterLab and Notebook 7). */
export function pageBridge() {
  return /** @type {Bridge | undefined} */ (/** @type {any} */ (globalThis).__gth_jupyter_notebook__);
}

/**
 * Hand each `static` reply for this widget's output to the bridge, until `signal` aborts; the
 * returned `turnEnded()` asks the kernel to refresh the copy (a turn of this view ended).
 * @param {{ model: AnyModel, signal: AbortSignal, bridge?: () => Bridge | undefined }} opts
 */
export function wireStaticCopy({ model, signal, bridge = pageBridge }) {
  const onMessage = (/** @type {any} */ msg) => {
    if (!msg || msg.type !== "static" || typeof msg.displayId !== "string") return;
    const displayId = String(model.get("display_id") || "");
    if (!displayId || msg.displayId !== displayId || !msg.data || typeof msg.data !== "object") return;
    try {
      const notebook = bridge()?.find?.({ cellId: String(model.get("cell_id") || ""), kernelId: String(model.get("kernel_id") || "") });
      notebook?.setStaticCopy?.({ displayId, data: msg.data });
    } catch {
      // The notebook was closed, or the cell is gone: the kernel's own update is all there is.
    }
  };
  model.on("msg:custom", onMessage);
  signal.addEventListener("abort", () => model.off("msg:custom", onMessage), { once: true });
  /** @type {(() => Promise<{ messages: any[], interrupts: any[] }>) | null} */
  let viewOf = null;
  return {
    /**
     * Where the turn's view comes from when the server ran it (HTTP): sent along with `turn_end`.
     * @param {() => Promise<{ messages: any[], interrupts: any[] }>} source
     */
    viewFrom(source) {
      viewOf = source;
    },
    /**
     * A turn of this view ended (or, `onMount`, was found ended when the view mounted): the
     * kernel renders it into the output.
     * @param {{ onMount?: boolean }} [opts]
     */
    async turnEnded({ onMount = false } = {}) {
      const displayId = String(model.get("display_id") || "");
      if (signal.aborted || !displayId || (onMount && asked.has(displayId))) return;
      asked.add(displayId);
      const turnId = String(model.get("turn_id") || "");
      /** @type {{ type: string, turnIds: string[], view?: { messages: any[], interrupts: any[] } }} */
      const message = { type: "turn_end", turnIds: turnId ? [turnId] : [] };
      const shown = viewOf ? await viewOf().catch(() => null) : null;
      if (signal.aborted) return;
      if (shown) {
        const view = { messages: shown.messages, interrupts: shown.interrupts };
        if (JSON.stringify(view).length <= MAX_VIEW_CHARS) message.view = view;
      }
      model.send(message);
    },
  };
}
