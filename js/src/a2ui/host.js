// Where surfaces live in a transcript. One store per view: a later message for a surface id
// already on screen (a data update, say) repaints it in place; deleteSurface removes it.

import { SurfaceStore, normalize } from "./normalize.js";
import { errorNode, mountSurface } from "./render.js";

export class A2uiHost {
  /** @param {{ doc: Document, onAction: (action: object) => void, openUrl?: (url: string) => void,
   *   media?: import("../media.js").MediaPolicy }} opts */
  constructor(opts) {
    this.opts = opts;
    this.store = new SurfaceStore();
    /** @type {Map<string, { el: any, refresh: () => void }>} */
    this.mounted = new Map();
  }

  /**
   * Apply A2UI text or messages; new surfaces are appended to `container`.
   * @param {unknown} input
   * @param {any} container
   */
  ingest(input, container) {
    const { surfaces, deleted, errors } = normalize(input, this.store);
    for (const id of deleted) {
      this.mounted.get(id)?.el.remove();
      this.mounted.delete(id);
    }
    for (const surface of surfaces) {
      const existing = this.mounted.get(surface.id);
      if (existing && existing.el.isConnected !== false) {
        existing.refresh();
        continue;
      }
      const view = mountSurface(surface, { ...this.opts });
      this.mounted.set(surface.id, view);
      container.append(view.el);
    }
    for (const message of errors) container.append(errorNode(this.opts.doc, "", message));
    return { surfaceIds: surfaces.map((s) => s.id), errors };
  }

  /** Forget every surface (the transcript is being rebuilt). */
  reset() {
    this.store = new SurfaceStore();
    this.mounted.clear();
  }
}
