// The tiny `_esm` the Python side ships with every widget instance. anywidget stores `_esm` in
// the notebook for each widget, so the real bundle (hundreds of KB) is not put there: it is
// imported from the server extension's static route (cached by the browser), and only where
// that fails (VS Code, Colab: no Jupyter server page) asked of the kernel over the comm.

import { commRequest } from "./comm.js";
import { resolveBaseUrl } from "./transport.js";

/** @type {Promise<any> | null} */
let bundle = null;

/** @param {any} model */
async function load(model) {
  try {
    const base = resolveBaseUrl(model.get("base_url"));
    // Absolute, because this module itself runs from a blob: URL that cannot resolve "/static/…".
    const url = new URL(`${base}static/gth_jupyter/widget.js`, document.baseURI).href;
    if (!/^https?:$/.test(new URL(url).protocol)) throw new Error("no http page");
    return await import(/* @vite-ignore */ url);
  } catch {
    const reply = await commRequest(model, "esm", { timeoutMs: 60000 });
    if (typeof reply.code !== "string" || !reply.code) throw new Error("The kernel sent no widget code.");
    const blobUrl = URL.createObjectURL(new Blob([reply.code], { type: "text/javascript" }));
    try {
      return await import(/* @vite-ignore */ blobUrl);
    } finally {
      URL.revokeObjectURL(blobUrl);
    }
  }
}

export default {
  /** @param {{ model: any, el: HTMLElement }} props */
  async render(props) {
    try {
      bundle ??= load(props.model);
      const mod = await bundle;
      return mod.default.render(props);
    } catch (err) {
      bundle = null; // let the next view try again
      props.el.textContent = `gth: could not load the chat widget (${/** @type {Error} */ (err).message}).`;
      return undefined;
    }
  },
};
