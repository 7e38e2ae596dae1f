// One internal surface model for every A2UI dialect we receive:
//  - v0.8 (Gaunt Sloth's `show_a2ui_surface`): surfaceUpdate / dataModelUpdate / beginRendering /
//    deleteSurface, `{literalString}` values, `explicitList` / `template` children, Button.label;
//  - v0.9: createSurface / updateComponents / updateDataModel / deleteSurface, plain values;
//  - AG-UI ACTIVITY_SNAPSHOT (activityType "a2ui-surface") carrying `a2ui_operations`.
// Components come out v0.9-shaped (`variant`, `justify`, `min`/`max`, `action.event`, …), so
// the renderer knows one vocabulary. Each message is applied on its own: a bad one is recorded
// against its surface and the rest still apply.

import { parseMessages } from "./parse.js";
import { getAt, setAt } from "./pointer.js";

/**
 * @typedef {{ id: string, type: string, props: Record<string, any>, implicit?: boolean }} Component
 * @typedef {{ id: string, version: string, catalogId?: string, rootId: string | null,
 *   components: Map<string, Component>, data: any, errors: string[], sendDataModel?: boolean,
 *   theme?: { primaryColor?: string } }} Surface
 */

export const MAX_COMPONENTS = 1000;
const INPUTS = { TextField: "", CheckBox: false, Slider: 0, ChoicePicker: [], DateTimeInput: "" };
const LITERAL_KEYS = ["literalString", "literalNumber", "literalBoolean", "literalArray"];

export class SurfaceStore {
  constructor() {
    /** @type {Map<string, Surface>} */
    this.surfaces = new Map();
  }

  /** @param {string} id @param {string} version */
  ensure(id, version) {
    if (typeof id !== "string" || !id) throw new Error("The message names no surfaceId.");
    let s = this.surfaces.get(id);
    if (!s) {
      s = { id, version, rootId: null, components: new Map(), data: {}, errors: [] };
      this.surfaces.set(id, s);
    }
    return s;
  }

  /**
   * Apply messages one by one. Returns the surfaces touched, those deleted, and the errors of
   * messages that named no usable surface.
   * @param {any[]} messages
   */
  applyAll(messages) {
    const touched = new Set();
    const deleted = new Set();
    /** @type {string[]} */
    const errors = [];
    for (const msg of messages) {
      const sid = surfaceIdOf(msg);
      try {
        const { surfaceId, removed } = this.apply(msg);
        (removed ? deleted : touched).add(surfaceId);
        if (removed) touched.delete(surfaceId);
      } catch (err) {
        const message = /** @type {Error} */ (err).message;
        if (sid && this.surfaces.has(sid)) {
          this.surfaces.get(sid)?.errors.push(message);
          touched.add(sid);
        } else errors.push(message);
      }
    }
    return { touched, deleted, errors };
  }

  /** Apply one message. Throws on a message it cannot use. */
  apply(/** @type {any} */ msg) {
    if (!msg || typeof msg !== "object" || Array.isArray(msg)) throw new Error("An A2UI message must be a JSON object.");
    if (msg.createSurface) {
      const m = msg.createSurface;
      const s = this.ensure(m.surfaceId, "0.9");
      s.version = "0.9";
      s.catalogId = m.catalogId;
      s.rootId = "root";
      s.sendDataModel = Boolean(m.sendDataModel);
      if (m.theme && typeof m.theme === "object") s.theme = { primaryColor: m.theme.primaryColor };
      return { surfaceId: s.id };
    }
    if (msg.updateComponents || msg.surfaceUpdate) {
      const m = msg.updateComponents || msg.surfaceUpdate;
      const s = this.ensure(m.surfaceId, msg.updateComponents ? "0.9" : "0.8");
      if (!Array.isArray(m.components)) throw new Error("The component update has no 'components' list.");
      const bad = [];
      for (const raw of m.components) {
        try {
          if (!s.components.has(raw?.id) && s.components.size >= MAX_COMPONENTS) throw new Error(`More than ${MAX_COMPONENTS} components.`);
          const c = normalizeComponent(raw, s);
          s.components.set(c.id, c);
        } catch (err) {
          const message = /** @type {Error} */ (err).message;
          bad.push(message);
          // Keep a placeholder, so the error shows where the component would have been.
          if (typeof raw?.id === "string" && s.components.size < MAX_COMPONENTS) {
            s.components.set(raw.id, { id: raw.id, type: "__invalid", props: { error: message } });
          }
        }
      }
      s.errors.push(...bad);
      return { surfaceId: s.id };
    }
    if (msg.updateDataModel) {
      const m = msg.updateDataModel;
      const s = this.ensure(m.surfaceId, "0.9");
      s.data = setAt(s.data, m.path || "/", "value" in m ? m.value : undefined);
      return { surfaceId: s.id };
    }
    if (msg.dataModelUpdate) {
      const m = msg.dataModelUpdate;
      const s = this.ensure(m.surfaceId, "0.8");
      if (!Array.isArray(m.contents)) throw new Error("dataModelUpdate has no 'contents' list.");
      s.data = setAt(s.data, m.path || "/", entriesToValue(m.contents));
      return { surfaceId: s.id };
    }
    if (msg.beginRendering) {
      const m = msg.beginRendering;
      const s = this.ensure(m.surfaceId, "0.8");
      if (typeof m.root === "string" && m.root) s.rootId = m.root;
      if (m.catalogId) s.catalogId = m.catalogId;
      if (m.styles && typeof m.styles === "object") s.theme = { primaryColor: m.styles.primaryColor };
      return { surfaceId: s.id };
    }
    if (msg.deleteSurface) {
      const id = msg.deleteSurface.surfaceId;
      if (typeof id !== "string") throw new Error("deleteSurface names no surfaceId.");
      this.surfaces.delete(id);
      return { surfaceId: id, removed: true };
    }
    throw new Error(`Unknown A2UI message (keys: ${Object.keys(msg).slice(0, 5).join(", ") || "none"}).`);
  }
}

/** The messages inside an AG-UI ACTIVITY_SNAPSHOT for A2UI, or [] for any other activity. */
export function messagesFromActivity(/** @type {any} */ event) {
  if (!event || event.activityType !== "a2ui-surface") return [];
  const ops = event.content?.a2ui_operations;
  return Array.isArray(ops) ? ops : [];
}

/**
 * Parse text (JSONL, concatenated objects, an array, or an activity's operations) and apply it.
 * @param {unknown} input
 * @param {SurfaceStore} [store]
 */
export function normalize(input, store = new SurfaceStore()) {
  const parsed = parseMessages(input);
  const applied = store.applyAll(parsed.messages);
  return {
    store,
    surfaces: [...applied.touched].map((id) => store.surfaces.get(id)).filter(/** @returns {s is Surface} */ (s) => s !== undefined),
    deleted: [...applied.deleted],
    errors: [...parsed.errors.map((e) => e.message), ...applied.errors],
  };
}

/** The root component id to render: declared, else "root", else the first unreferenced one. */
export function rootOf(/** @type {Surface} */ s) {
  if (s.rootId && s.components.has(s.rootId)) return s.rootId;
  if (s.components.has("root")) return "root";
  const referenced = new Set();
  for (const c of s.components.values()) for (const id of childIds(c)) referenced.add(id);
  for (const id of s.components.keys()) if (!referenced.has(id)) return id;
  return null;
}

/** Ids a component refers to (for root finding). */
export function childIds(/** @type {Component} */ c) {
  const p = c.props;
  const out = [];
  if (Array.isArray(p.children)) out.push(...p.children);
  else if (p.children?.componentId) out.push(p.children.componentId);
  for (const k of ["child", "trigger", "content"]) if (typeof p[k] === "string") out.push(p[k]);
  if (Array.isArray(p.tabs)) for (const t of p.tabs) if (typeof t?.child === "string") out.push(t.child);
  return out;
}

function surfaceIdOf(/** @type {any} */ msg) {
  if (!msg || typeof msg !== "object") return undefined;
  for (const v of Object.values(msg)) if (v && typeof v === "object" && typeof v.surfaceId === "string") return v.surfaceId;
  return undefined;
}

/** v0.8 `contents` entries to a plain value. */
function entriesToValue(/** @type {any[]} */ entries) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const e of entries) {
    if (!e || typeof e.key !== "string") continue;
    if (["__proto__", "constructor", "prototype"].includes(e.key)) throw new Error(`The data key '${e.key}' is not allowed.`);
    if ("valueString" in e) out[e.key] = e.valueString;
    else if ("valueNumber" in e) out[e.key] = e.valueNumber;
    else if ("valueBoolean" in e) out[e.key] = e.valueBoolean;
    else if (Array.isArray(e.valueMap)) out[e.key] = entriesToValue(e.valueMap);
    else if (Array.isArray(e.valueArray ?? e.valueList)) out[e.key] = e.valueArray ?? e.valueList;
    else if ("value" in e) out[e.key] = e.value;
  }
  return out;
}

/**
 * A v0.8 bound value (`{literalString}`, `{path}`, both) or a v0.9 one, as a v0.9 value:
 * a literal, or `{path}`. A v0.8 literal given with a path seeds the data model.
 */
function dyn(/** @type {any} */ v, /** @type {Surface} */ s) {
  if (!v || typeof v !== "object" || Array.isArray(v)) return v;
  const lit = LITERAL_KEYS.find((k) => k in v);
  if (typeof v.path === "string") {
    if (lit && getAt(s.data, v.path) === undefined) s.data = setAt(s.data, v.path, v[lit]);
    return { path: v.path };
  }
  if (lit) return v[lit];
  return v;
}

const RENAMES = {
  usageHint: "variant",
  distribution: "justify",
  alignment: "align",
  textFieldType: "variant",
  altText: "description",
  minValue: "min",
  maxValue: "max",
  entryPointChild: "trigger",
  contentChild: "content",
  tabItems: "tabs",
};

/** @returns {Component} */
function normalizeComponent(/** @type {any} */ raw, /** @type {Surface} */ s) {
  if (!raw || typeof raw !== "object" || typeof raw.id !== "string" || !raw.id) throw new Error("A component has no string 'id'.");
  /** @type {string} */
  let type;
  /** @type {Record<string, any>} */
  let props;
  if (typeof raw.component === "string") {
    const { id: _id, component: _c, ...rest } = raw;
    type = raw.component;
    props = rest;
  } else if (raw.component && typeof raw.component === "object" && Object.keys(raw.component).length === 1) {
    type = Object.keys(raw.component)[0];
    props = { ...(raw.component[type] || {}) };
    if (raw.weight !== undefined) props.weight = raw.weight;
  } else {
    throw new Error(`Component '${raw.id}' has no component type.`);
  }
  for (const [from, to] of Object.entries(RENAMES)) {
    if (from in props && !(to in props)) props[to] = props[from];
    delete props[from];
  }
  if (type === "MultipleChoice") {
    type = "ChoicePicker";
    if ("selections" in props && !("value" in props)) props.value = props.selections;
    // v0.8's `variant` was the display style (checkbox / chips); v0.9 calls that displayStyle.
    if (props.variant === "chips" || props.variant === "checkbox") {
      if (!props.displayStyle) props.displayStyle = props.variant;
      delete props.variant;
    }
    if (!props.variant) props.variant = props.maxAllowedSelections === 1 ? "mutuallyExclusive" : "multipleSelection";
  }
  if (type === "TextField" && "text" in props && !("value" in props)) props.value = props.text;
  if (type === "Button" && props.primary === true && !props.variant) props.variant = "primary";
  for (const k of ["text", "url", "description", "label", "value", "name", "min", "max", "enableDate", "enableTime", "variant", "placeholder"]) {
    if (k in props) props[k] = dyn(props[k], s);
  }
  props.children = normalizeChildren(props.children);
  if (props.children === undefined) delete props.children;
  if (Array.isArray(props.tabs)) props.tabs = props.tabs.map((t) => ({ title: dyn(t?.title, s), child: t?.child }));
  if (Array.isArray(props.options)) props.options = props.options.map((o) => ({ label: dyn(o?.label, s), value: dyn(o?.value, s) }));
  if (props.action) props.action = normalizeAction(props.action, s);
  /** @type {Component} */
  const c = { id: raw.id, type, props };
  // Inputs need a place in the data model to be two-way: an unbound input (Gaunt Sloth's
  // TextField has no value at all) writes to "/<id>", as the reference client does.
  if (type in INPUTS && !(props.value && typeof props.value === "object" && typeof props.value.path === "string")) {
    const path = `/${raw.id.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    const initial = props.value !== undefined ? props.value : /** @type {any} */ (INPUTS)[type];
    if (getAt(s.data, path) === undefined) s.data = setAt(s.data, path, initial);
    props.value = { path };
    c.implicit = true;
  }
  return c;
}

function normalizeChildren(/** @type {any} */ ch) {
  if (ch === undefined || ch === null) return undefined;
  if (Array.isArray(ch)) return ch.filter((x) => typeof x === "string");
  if (Array.isArray(ch.explicitList)) return ch.explicitList.filter((/** @type {any} */ x) => typeof x === "string");
  const t = ch.template || ch;
  const path = t.path ?? t.dataBinding;
  if (typeof t.componentId === "string" && typeof path === "string") return { componentId: t.componentId, path };
  throw new Error("Unrecognised 'children' (expected a list of ids or a template).");
}

/** Every dialect's Button action as `{event: {name, context}}` or `{functionCall}`. */
function normalizeAction(/** @type {any} */ a, /** @type {Surface} */ s) {
  if (a.functionCall) return { functionCall: a.functionCall };
  const ev = a.event || a;
  if (typeof ev.name !== "string" || !ev.name) throw new Error("A Button action has no name.");
  /** @type {Record<string, any>} */
  const context = {};
  if (Array.isArray(ev.context)) {
    for (const e of ev.context) if (e && typeof e.key === "string") context[e.key] = dyn(e.value, s);
  } else if (ev.context && typeof ev.context === "object") {
    for (const [k, v] of Object.entries(ev.context)) context[k] = dyn(v, s);
  }
  return { event: { name: ev.name, context } };
}
