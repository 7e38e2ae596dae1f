// Render one normalised surface into plain DOM.
//
// Safety rules live here and in the catalog modules: agent strings only ever reach the page
// through textContent or attribute values; URLs follow media.js (links http(s) only, remote
// media only from trusted hosts or after a click on their placeholder); an action
// needs a trusted click; every component renders inside its own try/catch, so one bad
// component becomes an inline error and its siblings still render. Sizes are capped so a
// hostile surface cannot freeze the notebook.

import { MediaPolicy, activateMedia } from "../media.js";
import { DISPLAY } from "./components.js";
import { INPUTS } from "./inputs.js";
import { rootOf } from "./normalize.js";
import { absolute, setAt } from "./pointer.js";
import { UnsupportedFunction } from "./functions.js";
import { resolve } from "./resolve.js";

/**
 * @typedef {import("./normalize.js").Surface} Surface
 * @typedef {import("./normalize.js").Component} Component
 * @typedef {import("./resolve.js").Scope} Scope
 * @typedef {(action: object) => void} ActionHandler
 */

export const LIMITS = { depth: 32, nodes: 2000, templateItems: 200 };
const CATALOG = { ...DISPLAY, ...INPUTS };
export const SUPPORTED = Object.keys(CATALOG);

/**
 * @param {Surface} surface
 * @param {{ doc: Document, onAction?: ActionHandler, openUrl?: (url: string) => void, now?: () => Date,
 *   media?: MediaPolicy, locale?: string, timeZone?: string }} opts
 */
export function mountSurface(surface, opts) {
  const { doc } = opts;
  const el = doc.createElement("div");
  el.className = "gth-a2ui-surface";
  el.dataset.surfaceId = surface.id;
  const media = opts.media ?? new MediaPolicy();
  el.addEventListener("click", (/** @type {Event} */ event) => activateMedia(event, media));
  /** @type {{ el: any, fn: () => void }[]} */
  let updaters = [];
  let count = 0;
  /** Locale and time zone for the formatters (the browser's unless the host says). */
  const env = { locale: opts.locale, timeZone: opts.timeZone };

  const ctx = {
    doc,
    surface,
    onAction: opts.onAction ?? (() => {}),
    openUrl: opts.openUrl ?? ((/** @type {string} */ url) => globalThis.open?.(url, "_blank", "noopener,noreferrer")),
    now: opts.now ?? (() => new Date()),
    media,
    /** Run `fn` now and whenever the data model changes (except from `el` itself). */
    bind(/** @type {any} */ node, /** @type {() => void} */ fn) {
      updaters.push({ el: node, fn });
      fn();
    },
    /** Write an input's value into the data model and refresh everything bound to it. */
    write(/** @type {string} */ path, /** @type {any} */ value, /** @type {Scope} */ scope, /** @type {any} */ source) {
      surface.data = setAt(surface.data, path, value, scope.base);
      notify(source);
    },
    /** Render child `id` one level below a component at `depth`. */
    child: (/** @type {string} */ id, /** @type {Scope} */ scope, /** @type {Set<string>} */ ancestors, /** @type {number} */ depth) =>
      renderNode(id, scope, ancestors, depth + 1),
    /** Fill `container` with a children list or template; templates refill when the list changes. */
    fillChildren(/** @type {any} */ container, /** @type {any} */ spec, /** @type {Scope} */ scope, /** @type {Set<string>} */ ancestors, /** @type {number} */ depth) {
      if (Array.isArray(spec)) {
        for (const id of spec) container.append(renderNode(id, scope, ancestors, depth + 1));
        return;
      }
      if (!spec) return;
      let shown = -1;
      ctx.bind(container, () => {
        const list = resolve({ path: spec.path }, scope);
        const items = Array.isArray(list) ? list.length : list && typeof list === "object" ? Object.keys(list).length : 0;
        if (items === shown) return;
        shown = items;
        const keys = Array.isArray(list) ? [...list.keys()].map(String) : Object.keys(list || {});
        const base = absolute(spec.path, scope.base);
        container.replaceChildren();
        for (const key of keys.slice(0, LIMITS.templateItems)) {
          const itemScope = { surface, base: `${base === "/" ? "" : base}/${key}`, env };
          container.append(renderNode(spec.componentId, itemScope, ancestors, depth + 1));
        }
        if (keys.length > LIMITS.templateItems) container.append(errorNode(doc, "", `Showing ${LIMITS.templateItems} of ${keys.length} items.`));
      });
    },
  };

  function notify(/** @type {any} */ source) {
    updaters = updaters.filter((u) => el.contains(u.el));
    for (const u of updaters) {
      if (u.el === source) continue;
      try {
        u.fn();
      } catch (err) {
        u.el.replaceWith?.(failureNode(doc, "", err));
      }
    }
  }

  /** @param {string} id @param {Scope} scope @param {Set<string>} ancestors @param {number} depth */
  function renderNode(id, scope, ancestors, depth) {
    try {
      const comp = surface.components.get(id);
      if (!comp) throw new Error(`Missing component '${id}'.`);
      if (ancestors.has(id)) throw new Error(`Component '${id}' contains itself.`);
      if (depth > LIMITS.depth) throw new Error(`Nesting deeper than ${LIMITS.depth} levels.`);
      if (++count > LIMITS.nodes) throw new Error(`More than ${LIMITS.nodes} components to show.`);
      if (comp.type === "__invalid") throw new Error(comp.props.error);
      const inner = new Set(ancestors).add(id);
      if (!Object.prototype.hasOwnProperty.call(CATALOG, comp.type)) return unsupportedNode(comp, scope, inner, depth);
      const render = /** @type {any} */ (CATALOG)[comp.type];
      const node = render(comp, scope, ctx, inner, depth);
      node.classList.add("gth-a2ui-c", `gth-a2ui-${comp.type.toLowerCase()}`);
      node.dataset.componentId = comp.id;
      const weight = Number(resolve(comp.props.weight, scope));
      if (Number.isFinite(weight) && weight > 0) node.style.flexGrow = String(weight);
      return node;
    } catch (err) {
      return failureNode(doc, id, err);
    }
  }

  /**
   * A component type no catalog here has: a labelled placeholder, holding its children (when it
   * names them) so that what they say is not lost.
   * @param {Component} comp @param {Scope} scope @param {Set<string>} inner @param {number} depth
   */
  function unsupportedNode(comp, scope, inner, depth) {
    const node = doc.createElement("div");
    node.className = "gth-a2ui-unsupported";
    node.dataset.componentId = comp.id;
    node.dataset.type = comp.type;
    const label = doc.createElement("div");
    label.className = "gth-a2ui-unsupported-label";
    label.textContent = `Unsupported component: ${comp.type}`;
    node.append(label);
    if (typeof comp.props.child === "string") node.append(renderNode(comp.props.child, scope, inner, depth + 1));
    else if (comp.props.children) ctx.fillChildren(node, comp.props.children, scope, inner, depth);
    return node;
  }

  function paint() {
    updaters = [];
    count = 0;
    el.replaceChildren();
    const label = doc.createElement("div");
    label.className = "gth-a2ui-label";
    label.textContent = "Agent-provided form";
    el.append(label);
    for (const message of surface.errors.slice(0, 5)) el.append(errorNode(doc, "", message));
    const root = rootOf(surface);
    const color = surface.theme?.primaryColor;
    if (typeof color === "string" && /^#[0-9a-fA-F]{6}$/.test(color)) el.style.setProperty("--gth-a2ui-primary", color);
    if (root) el.append(renderNode(root, { surface, base: "", env }, new Set(), 0));
    else if (!surface.errors.length) el.append(errorNode(doc, "", "The surface has no components to show."));
  }

  paint();
  return { el, refresh: paint };
}

/**
 * What shows when a component cannot render: a labelled placeholder for a function no catalog
 * here has, an inline error for anything else.
 * @param {Document} doc @param {string} id @param {unknown} err
 */
function failureNode(doc, id, err) {
  if (err instanceof UnsupportedFunction) {
    const node = doc.createElement("div");
    node.className = "gth-a2ui-unsupported";
    node.dataset.function = err.functionName;
    if (id) node.dataset.componentId = id;
    node.textContent = `Unsupported function: ${err.functionName}`;
    return node;
  }
  return errorNode(doc, id, /** @type {Error} */ (err)?.message ?? String(err));
}

/** An inline error in place of a component. */
export function errorNode(/** @type {Document} */ doc, /** @type {string} */ id, /** @type {string} */ message) {
  const node = doc.createElement("div");
  node.className = "gth-a2ui-error";
  node.setAttribute("role", "alert");
  if (id) node.dataset.componentId = id;
  node.textContent = id ? `${id}: ${message}` : message;
  return node;
}
