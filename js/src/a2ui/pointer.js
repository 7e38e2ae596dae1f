// JSON Pointer paths into a surface's data model, with A2UI's twist: inside a template a path
// without a leading "/" is relative to the item (e.g. "name" under "/items/2" is
// "/items/2/name"). Segments that could reach Object.prototype are refused outright.

const FORBIDDEN = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Absolute segments for `path`, resolved against `base` (an absolute path) when relative.
 * @param {string} path
 * @param {string} [base]
 * @returns {string[]}
 */
export function segments(path, base = "") {
  if (typeof path !== "string") throw new Error(`A data path must be a string, not ${typeof path}.`);
  const rel = !path.startsWith("/");
  const full = rel ? `${base.replace(/\/$/, "")}/${path}` : path;
  const parts = full
    .split("/")
    .filter((s) => s !== "") // "/" is the root; a trailing "/" is tolerated
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  for (const s of parts) if (FORBIDDEN.has(s)) throw new Error(`The data path '${path}' is not allowed.`);
  return parts;
}

/** Absolute pointer text for `path` under `base`. */
export function absolute(/** @type {string} */ path, base = "") {
  return `/${segments(path, base).map((s) => s.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;
}

/** The value at `path`, or undefined. */
export function getAt(/** @type {any} */ data, /** @type {string} */ path, base = "") {
  let node = data;
  for (const s of segments(path, base)) {
    if (node === null || typeof node !== "object" || !Object.prototype.hasOwnProperty.call(node, s)) return undefined;
    node = node[s];
  }
  return node;
}

/**
 * Set (or, with `value === undefined`, delete) the value at `path`. Creates objects (or arrays,
 * for numeric segments) on the way. Returns the new root: setting "/" replaces the whole model.
 * @returns {any}
 */
export function setAt(/** @type {any} */ data, /** @type {string} */ path, /** @type {any} */ value, base = "") {
  const parts = segments(path, base);
  if (!parts.length) return value === undefined ? {} : value;
  const root = data !== null && typeof data === "object" ? data : {};
  let node = root;
  for (let i = 0; i < parts.length - 1; i++) {
    const s = parts[i];
    const next = Object.prototype.hasOwnProperty.call(node, s) ? node[s] : undefined;
    if (next === null || typeof next !== "object") node[s] = /^\d+$/.test(parts[i + 1]) ? [] : {};
    node = node[s];
  }
  const last = parts[parts.length - 1];
  if (value === undefined) {
    if (Array.isArray(node) && /^\d+$/.test(last)) node.splice(Number(last), 1);
    else delete node[last];
  } else {
    node[last] = value;
  }
  return root;
}
