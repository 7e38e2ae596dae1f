// RFC 6902 JSON Patch, applied to a copy: the server's STATE_DELTA and ACTIVITY_DELTA events
// (add, remove, replace, move, copy, test). A failed operation throws; the input is never changed.

/** @param {string} path */
function tokens(path) {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new Error(`Bad JSON Pointer: ${path}`);
  return path.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** @param {any} doc @param {string[]} keys */
function parentOf(doc, keys) {
  let node = doc;
  for (const key of keys.slice(0, -1)) {
    node = Array.isArray(node) ? node[Number(key)] : node?.[key];
    if (node === null || typeof node !== "object") throw new Error(`No such path: /${keys.join("/")}`);
  }
  return node;
}

/** @param {any} doc @param {string} path */
function get(doc, path) {
  let node = doc;
  for (const key of tokens(path)) {
    if (node === null || typeof node !== "object" || !(key in node)) throw new Error(`No such path: ${path}`);
    node = node[key];
  }
  return node;
}

/** @param {any} doc @param {string} path @param {any} value @param {boolean} insert */
function put(doc, path, value, insert) {
  const keys = tokens(path);
  if (!keys.length) return value;
  const parent = parentOf(doc, keys);
  const key = keys[keys.length - 1];
  if (Array.isArray(parent)) {
    const index = key === "-" ? parent.length : Number(key);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new Error(`Bad index: ${path}`);
    if (insert) parent.splice(index, 0, value);
    else parent[index] = value;
  } else parent[key] = value;
  return doc;
}

/** @param {any} doc @param {string} path */
function remove(doc, path) {
  const keys = tokens(path);
  const parent = parentOf(doc, keys);
  const key = keys[keys.length - 1];
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else if (key in parent) delete parent[key];
  else throw new Error(`No such path: ${path}`);
  return doc;
}

/**
 * `doc` with `patch` applied (a deep copy; `doc` is left as it was).
 * @param {any} doc @param {any[]} patch
 */
export function applyPatch(doc, patch) {
  let out = structuredClone(doc ?? {});
  for (const op of patch ?? []) {
    switch (op.op) {
      case "add":
        out = put(out, op.path, structuredClone(op.value), true);
        break;
      case "replace":
        get(out, op.path);
        out = put(out, op.path, structuredClone(op.value), false);
        break;
      case "remove":
        out = remove(out, op.path);
        break;
      case "copy":
        out = put(out, op.path, structuredClone(get(out, op.from)), true);
        break;
      case "move": {
        const value = get(out, op.from);
        out = put(remove(out, op.from), op.path, value, true);
        break;
      }
      case "test":
        if (JSON.stringify(get(out, op.path)) !== JSON.stringify(op.value)) throw new Error(`Test failed: ${op.path}`);
        break;
      default:
        throw new Error(`Unknown patch operation: ${op.op}`);
    }
  }
  return out;
}
