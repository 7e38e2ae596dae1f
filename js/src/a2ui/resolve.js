// Reading values out of a surface: bindings (`{path}`), function calls (`{call, args}`, run by
// functions.js, with formatString's `${…}` parsed by expression.js), and the user action a
// Button sends, with its context resolved from the data model.

import { renderTemplate } from "./expression.js";
import { invoke } from "./functions.js";
import { getAt } from "./pointer.js";

/**
 * @typedef {import("./normalize.js").Surface} Surface
 * @typedef {import("./normalize.js").Component} Component
 * @typedef {import("./functions.js").Env} Env
 * @typedef {{ surface: Surface, base: string, env?: Env }} Scope
 *   base: the template item's path, or ""; env: locale and time zone for the formatters
 */

const MAX_CALL_DEPTH = 8;

/** The value of a literal / `{path}` / `{call}`. @returns {unknown} */
export function resolve(/** @type {any} */ v, /** @type {Scope} */ scope, depth = 0) {
  if (!v || typeof v !== "object" || Array.isArray(v)) return v;
  if (typeof v.path === "string") return getAt(scope.surface.data, v.path, scope.base);
  if (typeof v.call === "string") return callFunction(v, scope, {}, depth + 1);
  return v;
}

/** As text: null/undefined become "", objects their JSON. */
export function resolveText(/** @type {any} */ v, /** @type {Scope} */ scope) {
  const value = resolve(v, scope);
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * Run a `{call, args}` in `scope`: each argument resolved (the items of a list too), then the
 * catalog function. `extra` adds to the environment (openUrl, while a click runs an action).
 * @param {any} v @param {Scope} scope @param {Partial<Env>} [extra]
 * @returns {unknown}
 */
export function callFunction(v, scope, extra = {}, depth = 1) {
  if (depth > MAX_CALL_DEPTH) throw new Error("Function calls are nested too deeply.");
  const raw = v.args && typeof v.args === "object" && !Array.isArray(v.args) ? v.args : {};
  /** @type {Record<string, any>} */
  const args = {};
  // A binding to data not there yet is null (the argument was given), not missing.
  const value = (/** @type {any} */ a) => resolve(a, scope, depth) ?? (a && typeof a === "object" ? null : undefined);
  for (const [k, a] of Object.entries(raw)) args[k] = Array.isArray(a) ? a.map(value) : value(a);
  const env = {
    ...scope.env,
    ...extra,
    template: (/** @type {string} */ text) => renderTemplate(text, (expr) => resolve(expr, scope, depth)),
  };
  return invoke(v.call, args, env);
}

/** False when any of a component's `checks` fails (a failing check disables a Button). */
export function checksPass(/** @type {any} */ checks, /** @type {Scope} */ scope) {
  return failedChecks(checks, scope).length === 0;
}

/**
 * The messages of a component's failing `checks` (`{condition, message}`, or a bare call). A
 * check that cannot be evaluated fails.
 * @returns {string[]}
 */
export function failedChecks(/** @type {any} */ checks, /** @type {Scope} */ scope) {
  if (!Array.isArray(checks)) return [];
  /** @type {string[]} */
  const out = [];
  for (const c of checks) {
    let ok = false;
    try {
      ok = Boolean(resolve(c?.condition ?? c, scope));
    } catch {
      ok = false;
    }
    if (!ok) out.push(typeof c?.message === "string" && c.message ? c.message : "This value is not valid.");
  }
  return out;
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
