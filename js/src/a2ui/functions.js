// The client-side functions of the A2UI catalogs: the v0.9 basic catalog (validation, formatting,
// logic, openUrl), the minimal catalog's `capitalize`, and the arithmetic, comparison and string
// helpers that the official web renderer also offers. Each takes its arguments already resolved
// (literals, bindings and nested calls have been evaluated) and an `env`:
//   locale, timeZone   how numbers, currencies, dates and plurals read (Intl; the browser's by default)
//   template(text)     formatString's interpolation, evaluated in the caller's scope
//   openUrl(url)       present only while a person's click runs an action
// A function that is missing a required argument, or cannot do its job, throws; the renderer
// shows that in place of the component. Agent-supplied patterns are length-capped and refused
// when their shape is a known catastrophic-backtracking one.

import { safeLinkUrl } from "../media.js";
import { formatDate } from "./dates.js";

/** @typedef {{ locale?: string, timeZone?: string, template?: (text: string) => string, openUrl?: (url: string) => void }} Env */

export class FunctionError extends Error {}

/** A call to a function no catalog here defines. */
export class UnsupportedFunction extends Error {
  constructor(/** @type {string} */ name) {
    super(`Unsupported function '${name}'.`);
    this.functionName = name;
  }
}

export const MAX_PATTERN = 500;
export const MAX_MATCHED = 10_000;
// A quantified group whose body is itself quantified: (a+)+, (\w*)*, (x{1,9})+ …
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*(?:[+*]|\{\d+,?\d*\})(?:[^()\\]|\\.)*\)(?:[+*]|\{\d+,?\d*\})/;
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)*\.[A-Za-z]{2,}$/;

/** @param {Record<string, any>} args @param {string[]} names */
function need(args, ...names) {
  for (const n of names) if (args[n] === undefined) throw new FunctionError(`Missing argument '${n}'.`);
}

/** A number from a number or numeric text; throws otherwise. */
function num(/** @type {unknown} */ v, /** @type {string} */ name) {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  if (Number.isNaN(n)) throw new FunctionError(`Argument '${name}' is not a number.`);
  return n;
}

/** A number to format, or null when there is nothing to show. */
function amount(/** @type {unknown} */ v) {
  if (v === null || v === undefined || v === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Decimal places, 0..20, or undefined for the locale's default. */
function places(/** @type {unknown} */ v) {
  if (v === undefined || v === null) return undefined;
  const n = Math.trunc(Number(v));
  return Number.isFinite(n) ? Math.min(20, Math.max(0, n)) : undefined;
}

/** Equality of JSON values (deep). */
function same(/** @type {unknown} */ a, /** @type {unknown} */ b) {
  return a === b || (typeof a === "object" && typeof b === "object" && JSON.stringify(a) === JSON.stringify(b));
}

/** `values` for and/or: a list of at least two. */
function list(/** @type {Record<string, any>} */ args) {
  need(args, "values");
  if (!Array.isArray(args.values) || args.values.length < 2) throw new FunctionError("'values' must list at least two values.");
  return args.values;
}

/** An agent's regular expression, refused when too long or of a catastrophic shape. */
export function compilePattern(/** @type {unknown} */ pattern) {
  if (typeof pattern !== "string") throw new FunctionError("The pattern must be a string.");
  if (pattern.length > MAX_PATTERN) throw new FunctionError(`The pattern is longer than ${MAX_PATTERN} characters.`);
  if (NESTED_QUANTIFIER.test(pattern)) throw new FunctionError("The pattern nests quantifiers (a+)+, which can take forever to match; refused.");
  try {
    return new RegExp(pattern);
  } catch (err) {
    throw new FunctionError(`Invalid pattern: ${/** @type {Error} */ (err).message}`);
  }
}

/** Whether `value` matches `pattern` (text over MAX_MATCHED characters does not). */
export function matches(/** @type {unknown} */ value, /** @type {unknown} */ pattern) {
  const re = compilePattern(pattern);
  const text = value === null || value === undefined ? "" : String(value);
  return text.length <= MAX_MATCHED && re.test(text);
}

/** @type {Record<string, (args: Record<string, any>, env: Env) => unknown>} */
export const FUNCTIONS = {
  // Validation
  required(args) {
    if (!("value" in args)) throw new FunctionError("Missing argument 'value'.");
    const v = args.value;
    return !(v === undefined || v === null || v === "" || (Array.isArray(v) && !v.length));
  },
  regex(args) {
    need(args, "value", "pattern");
    return matches(args.value, args.pattern);
  },
  length(args) {
    need(args, "value");
    if (args.min === undefined && args.max === undefined) throw new FunctionError("'length' needs 'min' or 'max'.");
    const v = args.value;
    const n = Array.isArray(v) ? v.length : v === null ? 0 : [...String(v)].length;
    return (args.min === undefined || n >= num(args.min, "min")) && (args.max === undefined || n <= num(args.max, "max"));
  },
  numeric(args) {
    need(args, "value");
    const v = args.value;
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
    if (!Number.isFinite(n)) return false;
    return (args.min === undefined || n >= num(args.min, "min")) && (args.max === undefined || n <= num(args.max, "max"));
  },
  email(args) {
    need(args, "value");
    return typeof args.value === "string" && args.value.length <= 320 && EMAIL.test(args.value);
  },

  // Formatting
  formatString(args, env) {
    need(args, "value");
    const text = typeof args.value === "string" ? args.value : String(args.value ?? "");
    return env.template ? env.template(text) : text;
  },
  formatNumber(args, env) {
    need(args, "value");
    const n = amount(args.value);
    if (n === null) return "";
    const d = places(args.decimals);
    return new Intl.NumberFormat(env.locale, {
      minimumFractionDigits: d,
      maximumFractionDigits: d,
      useGrouping: args.grouping !== false,
    }).format(n);
  },
  formatCurrency(args, env) {
    need(args, "value", "currency");
    const n = amount(args.value);
    if (n === null) return "";
    const d = places(args.decimals);
    try {
      return new Intl.NumberFormat(env.locale, {
        style: "currency",
        currency: String(args.currency),
        minimumFractionDigits: d,
        maximumFractionDigits: d,
        useGrouping: args.grouping !== false,
      }).format(n);
    } catch {
      return n.toFixed(d ?? 2); // not an ISO 4217 code: the plain amount
    }
  },
  formatDate(args, env) {
    need(args, "value", "format");
    return formatDate(args.value, String(args.format), env);
  },
  pluralize(args, env) {
    need(args, "value", "other");
    const n = Number(args.value);
    if (n === 0 && args.zero !== undefined) return args.zero;
    let category = "other";
    try {
      category = Number.isFinite(n) ? new Intl.PluralRules(env.locale).select(n) : "other";
    } catch {
      // An unknown locale: "other".
    }
    const chosen = args[category];
    return chosen === undefined || chosen === null ? args.other : chosen;
  },

  // Logic
  and: (args) => list(args).every(Boolean),
  or: (args) => list(args).some(Boolean),
  not(args) {
    need(args, "value");
    return !args.value;
  },

  // Actions
  openUrl(args, env) {
    need(args, "url");
    const url = safeLinkUrl(args.url);
    if (!url) throw new FunctionError("Unsupported URL scheme: only absolute http(s) addresses may be opened.");
    // Only a click opens a page: evaluated anywhere else (a bound property), it does nothing.
    env.openUrl?.(url);
    return undefined;
  },

  // The minimal catalog
  capitalize(args) {
    need(args, "value");
    const s = args.value === null ? "" : String(args.value);
    return s.charAt(0).toUpperCase() + s.slice(1);
  },

  // What the official web renderer adds to the basic catalog
  add: (args) => (need(args, "a", "b"), num(args.a, "a") + num(args.b, "b")),
  subtract: (args) => (need(args, "a", "b"), num(args.a, "a") - num(args.b, "b")),
  multiply: (args) => (need(args, "a", "b"), num(args.a, "a") * num(args.b, "b")),
  divide(args) {
    need(args, "a", "b");
    const b = num(args.b, "b");
    return b === 0 ? Infinity : num(args.a, "a") / b;
  },
  equals: (args) => (need(args, "a", "b"), same(args.a, args.b)),
  not_equals: (args) => (need(args, "a", "b"), !same(args.a, args.b)),
  greater_than: (args) => (need(args, "a", "b"), num(args.a, "a") > num(args.b, "b")),
  less_than: (args) => (need(args, "a", "b"), num(args.a, "a") < num(args.b, "b")),
  contains: (args) => (need(args, "string", "substring"), String(args.string).includes(String(args.substring))),
  starts_with: (args) => (need(args, "string", "prefix"), String(args.string).startsWith(String(args.prefix))),
  ends_with: (args) => (need(args, "string", "suffix"), String(args.string).endsWith(String(args.suffix))),
};

/** Whether `name` is a function this renderer runs. */
export function isSupported(/** @type {string} */ name) {
  return Object.prototype.hasOwnProperty.call(FUNCTIONS, name);
}

/**
 * Run `name` with resolved `args`.
 * @param {string} name
 * @param {Record<string, any>} args
 * @param {Env} [env]
 */
export function invoke(name, args, env = {}) {
  if (!isSupported(name)) throw new UnsupportedFunction(name);
  return FUNCTIONS[name](args && typeof args === "object" ? args : {}, env);
}
