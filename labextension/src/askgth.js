// The "Ask gth" button in error outputs: inserts `%gth --explain` right below the failing cell
// and runs it, as the person's own action. Found in the rendered DOM (a button only matters where
// it is drawn), checked against the cell's model so a stderr stream never gets one.
import { NotebookHandle, runCellOf } from "./bridge.js";

const STDERR = "application/vnd.jupyter.stderr";
const BUTTON_CLASS = "gth-ask-button";
export const EXPLAIN_SOURCE = "%gth --explain";

/**
 * @typedef {import("@jupyterlab/notebook").INotebookTracker} INotebookTracker
 * @typedef {import("@jupyterlab/notebook").NotebookPanel} NotebookPanel
 * @typedef {import("@jupyterlab/notebook").INotebookCellExecutor} INotebookCellExecutor
 */

export class AskGthButtons {
  /**
   * @param {INotebookTracker} tracker
   * @param {INotebookCellExecutor | null} executor
   */
  constructor(tracker, executor) {
    this._executor = executor;
    this._enabled = true;
    /** @type {Set<NotebookPanel>} */
    this._panels = new Set();
    tracker.forEach((panel) => this._watch(panel));
    tracker.widgetAdded.connect((_, panel) => this._watch(panel));
  }

  /** @param {boolean} enabled the `askGthOnErrors` setting */
  setEnabled(enabled) {
    this._enabled = enabled;
    for (const panel of this._panels) this._scan(panel);
  }

  /** @param {NotebookPanel} panel */
  _watch(panel) {
    if (this._panels.has(panel)) return;
    this._panels.add(panel);
    let pending = false;
    const schedule = () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        if (!panel.isDisposed) this._scan(panel);
      });
    };
    const observer = new MutationObserver(schedule);
    observer.observe(panel.content.node, { childList: true, subtree: true });
    panel.disposed.connect(() => {
      observer.disconnect();
      this._panels.delete(panel);
    });
    schedule();
  }

  /** @param {NotebookPanel} panel */
  _scan(panel) {
    const root = panel.content.node;
    // Where the setting stands, on the notebook (for styles and tests).
    root.dataset.gthAskGth = this._enabled ? "on" : "off";
    if (!this._enabled) {
      for (const button of root.querySelectorAll(`.${BUTTON_CLASS}`)) button.remove();
      return;
    }
    for (const output of root.querySelectorAll(`.jp-OutputArea-output[data-mime-type="${STDERR}"]`)) {
      if (output.querySelector(`.${BUTTON_CLASS}`)) continue;
      const child = output.closest(".jp-OutputArea-child");
      const cellNode = output.closest(".jp-Cell");
      const cell = panel.content.widgets.find((w) => w.node === cellNode);
      if (!child?.parentElement || !cell || cell.model.type !== "code") continue;
      const children = [...child.parentElement.children].filter((n) =>
        n.classList.contains("jp-OutputArea-child"),
      );
      const model = /** @type {any} */ (cell.model).outputs.get(children.indexOf(child));
      if (model?.type !== "error") continue;
      output.appendChild(this._button(panel, cell.model.id));
    }
  }

  /**
   * @param {NotebookPanel} panel
   * @param {string} cellId the failing cell
   */
  _button(panel, cellId) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `${BUTTON_CLASS} jp-Button`;
    button.textContent = "Ask gth";
    button.title = "Insert and run a %gth cell below that explains this error";
    button.addEventListener("click", (event) => {
      event.stopPropagation();
      button.disabled = true;
      this.explain(panel, cellId)
        .catch((error) => console.error("gth-jupyter: Ask gth failed", error))
        .finally(() => {
          button.disabled = false;
        });
    });
    return button;
  }

  /**
   * Inserts `%gth --explain` right below the failing cell, selects it and runs it.
   * @param {NotebookPanel} panel
   * @param {string} cellId
   */
  async explain(panel, cellId) {
    const handle = new NotebookHandle(panel, cellId, this._executor);
    const { cellId: newId, index } = await handle.insertCell({
      source: EXPLAIN_SOURCE,
      after: cellId,
    });
    panel.content.activeCellIndex = index;
    await runCellOf(panel, newId, this._executor);
  }
}
