// Dead widget views: a gth cell saves the chat as a widget view plus a static copy. Reopened
// with a new kernel, the widget's model is gone, and a trusted notebook still prefers the widget
// view, which then reads "Error displaying widget: model not found". On notebook open and on
// every kernel change or restart, the widget view is dropped from gth outputs whose model is not
// a live `jupyter.widget` comm of the kernel, so the static copy shows instead.
import { WIDGET_VIEW } from "./bridge.js";

/**
 * @typedef {import("@jupyterlab/notebook").INotebookTracker} INotebookTracker
 * @typedef {import("@jupyterlab/notebook").NotebookPanel} NotebookPanel
 */

const ANSWER_MS = 30_000;

/**
 * `promise`'s value, or null when it takes longer than `ms`.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @returns {Promise<T | null>}
 */
function within(promise, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** @param {INotebookTracker} tracker */
export function watchDeadWidgets(tracker) {
  tracker.forEach(watchPanel);
  tracker.widgetAdded.connect((_, panel) => watchPanel(panel));
}

/** @param {NotebookPanel} panel */
function watchPanel(panel) {
  const session = panel.sessionContext;
  // One check at a time: on page load the session's ready and its kernelChanged come together.
  let queue = Promise.resolve();
  const check = () => {
    queue = queue.then(async () => {
      if (panel.isDisposed || !session.isReady) return;
      try {
        await dropDeadWidgetViews(panel);
      } catch (error) {
        console.warn("gth-jupyter: could not check the notebook's widget outputs", error);
      }
    });
  };
  let restarting = false;
  void panel.context.ready.then(() => session.ready).then(check);
  session.kernelChanged.connect(check);
  session.statusChanged.connect((_, status) => {
    // A restart asked by another page or through the REST API shows only as the new kernel
    // process "starting" (its first words): ask it now.
    if (status === "starting") check();
    else if (status === "restarting" || status === "autorestarting") restarting = true;
    else if (restarting && status === "idle") {
      restarting = false;
      check();
    }
  });
}

/**
 * The gth outputs of the notebook that carry a widget view: [cell model, output index, json].
 * @param {any} model the notebook model
 */
function gthWidgetOutputs(model) {
  const found = [];
  for (let c = 0; c < model.cells.length; c++) {
    const cell = model.cells.get(c);
    if (cell.type !== "code") continue;
    for (let i = 0; i < cell.outputs.length; i++) {
      const json = cell.outputs.get(i).toJSON();
      if (json.metadata?.gth_jupyter && json.data?.[WIDGET_VIEW]) found.push([cell, i, json]);
    }
  }
  return found;
}

/**
 * Drops the widget view of gth outputs whose widget model the kernel does not have. A clean
 * notebook stays clean: this only changes how it shows, not what the person wrote.
 * @param {NotebookPanel} panel
 */
export async function dropDeadWidgetViews(panel) {
  if (!panel.model || gthWidgetOutputs(panel.model).length === 0) return 0;
  const kernel = panel.sessionContext.session?.kernel ?? null;
  /** @type {Set<string>} */
  let live = new Set();
  if (kernel) {
    // A kernel that does not answer leaves the outputs as they are (and the next check runs).
    const reply = await within(
      Promise.resolve(kernel.info).then(() =>
        kernel.requestCommInfo({ target_name: "jupyter.widget" }),
      ),
      ANSWER_MS,
    );
    const content = /** @type {any} */ (reply?.content);
    if (content?.status !== "ok") return 0; // cannot tell: leave the outputs as they are
    live = new Set(Object.keys(content.comms ?? {}));
    // The kernel changed while we asked: the check for the new kernel decides.
    if (panel.sessionContext.session?.kernel !== kernel) return 0;
  }
  const model = /** @type {any} */ (panel.model);
  if (panel.isDisposed || !model) return 0;
  const wasDirty = model.dirty;
  let dropped = 0;
  for (const [cell, index, json] of gthWidgetOutputs(model)) {
    if (live.has(json.data[WIDGET_VIEW]?.model_id)) continue;
    const { [WIDGET_VIEW]: _dead, ...data } = json.data;
    cell.outputs.set(index, { ...json, data });
    dropped++;
  }
  if (dropped && !wasDirty) model.dirty = false;
  return dropped;
}
