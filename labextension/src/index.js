// gth-jupyter's notebook extension for JupyterLab 4 and Notebook 7: the notebook bridge the chat
// widget uses (`globalThis.__gth_jupyter_notebook__`), the clean-up of dead widget views, and the
// "Ask gth" button on errors.
import { INotebookCellExecutor, INotebookTracker } from "@jupyterlab/notebook";
import { ISettingRegistry } from "@jupyterlab/settingregistry";
import { AskGthButtons } from "./askgth.js";
import { installBridge } from "./bridge.js";
import { watchDeadWidgets } from "./cleanup.js";

export const PLUGIN_ID = "gth-jupyter-notebook:plugin";

/** @type {import("@jupyterlab/application").JupyterFrontEndPlugin<void>} */
const plugin = {
  id: PLUGIN_ID,
  description: "Lets the gth chat widget read and edit its notebook; Ask gth on errors.",
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ISettingRegistry, INotebookCellExecutor],
  /**
   * @param {any} _app
   * @param {import("@jupyterlab/notebook").INotebookTracker} tracker
   * @param {import("@jupyterlab/settingregistry").ISettingRegistry | null} settings
   * @param {import("@jupyterlab/notebook").INotebookCellExecutor | null} executor
   */
  activate(_app, tracker, settings, executor) {
    installBridge(tracker, executor);
    watchDeadWidgets(tracker);
    const ask = new AskGthButtons(tracker, executor);
    if (settings) {
      settings
        .load(PLUGIN_ID)
        .then((loaded) => {
          const apply = () => ask.setEnabled(loaded.get("askGthOnErrors").composite !== false);
          apply();
          loaded.changed.connect(apply);
        })
        .catch((error) => console.warn("gth-jupyter: could not load its settings", error));
    }
  },
};

export default plugin;
