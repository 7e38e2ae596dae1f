// Reading values out of a surface: bindings (`{path}`), a few basic-catalog functions, and the
// user action a Button sends, with its context resolved from the data model.

import { getAt } from "./pointer.js";

/**
 * @typedef {import("./normalize.js").Surface} Surface
 * @typedef {import("./normalize.js").Component} Component
 * @typedef {{ surface: Surface, base: string }} Scope  base: the template item's path, or ""
 */

const MAX_CALL_DEPTH = 8;

/** The value of a literal / `{path}` / `{call}`. */
export function resolve(/** @type {any} */ v, /** @type {Scope} */ scope, depth = 0) {
  if (!v || typeof v !== "object" || Array.isArray(v)) return v;
  if (typeof v.path === "string") return getAt(scope.surface.data, v.path, scope.base);
  if (typeof v.call === "string") return call(v, scope, depth + 1);
  return v;
}

/** As text: null/undefined become "", objects their JSON. */
export function resolveText(/** @type {any} */ v, /** @type {Scope} */ scope) {
  const value = resolve(v, scope);
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function call(/** @type {any} */ v, /** @type {Scope} */ scope, /** @type {number} */ depth) {
  if (depth > MAX_CALL_DEPTH) throw new Error("Function calls are nested too deeply.");
  const args = v.args && typeof v.args === "object" ? v.args : {};
  const arg = (/** @type {string} */ k) => resolve(args[k], scope, depth);
  switch (v.call) {
    case "formatString":
      return String(arg("value") ?? "").replace(/\$\{([^}]*)\}/g, (_m, p) => {
        const x = getAt(scope.surface.data, p.trim(), scope.base);
        return x === null || x === undefined ? "" : typeof x === "object" ? JSON.stringify(x) : String(x);
      });
    case "not":
      return !arg("value");
    case "and":
      return (Array.isArray(args.values) ? args.values : []).every((x) => resolve(x, scope, depth));
    case "or":
      return (Array.isArray(args.values) ? args.values : []).some((x) => resolve(x, scope, depth));
    case "equals":
      return JSON.stringify(arg("a") ?? arg("left")) === JSON.stringify(arg("b") ?? arg("right"));
    case "required": {
      const x = arg("value");
      return !(x === undefined || x === null || x === "" || (Array.isArray(x) && !x.length));
    }
    case "email":
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(String(arg("value") ?? ""));
    case "numeric":
      return String(arg("value") ?? "").trim() !== "" && Number.isFinite(Number(arg("value")));
    default:
      throw new Error(`Unsupported function '${v.call}'.`);
  }
}

/** False when any of a component's `checks` fails (a failing check disables a Button). */
export function checksPass(/** @type {any} */ checks, /** @type {Scope} */ scope) {
  if (!Array.isArray(checks)) return true;
  return checks.every((c) => {
    try {
      return Boolean(resolve(c?.condition ?? c, scope));
    } catch {
      return false;
    }
  });
}

/**
 * The user action for a Button: `{actionName, sourceComponentId, surfaceId, timestamp, context}`.
 * When the action names no context (Gaunt Sloth's forms), the values typed into unbound inputs
 * are sent instead, keyed by component id, as the reference client does.
 * @param {Component} component
 * @param {Scope} scope
 */
export function buildAction(component, scope, now = new Date()) {
  const ev = component.props.action?.event;
  if (!ev) throw new Error(`Button '${component.id}' has no action to send.`);
  /** @type {Record<string, any>} */
  const context = {};
  for (const [k, v] of Object.entries(ev.context || {})) context[k] = resolve(v, scope);
  if (!Object.keys(context).length) {
    for (const c of scope.surface.components.values()) {
      if (!c.implicit) continue;
      const value = resolve(c.props.value, scope);
      if (value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length)) continue;
      context[c.id] = value;
    }
  }
  return {
    actionName: ev.name,
    sourceComponentId: component.id,
    surfaceId: scope.surface.id,
    timestamp: now.toISOString(),
    context,
  };
}
