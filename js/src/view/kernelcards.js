// What the data-agent tools (list_variables, describe_variable, run_python) return, drawn in
// their tool cards: a variables table, a variable's schema and sample tables, and a cell's
// output with its plots. Each result is a JSON string from the notebook's kernel; everything in
// it is agent- and data-controlled, so it goes in as text only (h's `text`), and an image
// becomes an <img> only as a base64 data: URL of a plain raster type. A result of another shape
// returns null and the card keeps its plain rendering.

import { inlineImageUrl } from "../media.js";
import { stripAnsi } from "../tools/notebook_summary.js";
import { h } from "./dom.js";

/** @typedef {{ columns?: any[], index?: any[], data?: any[] }} SplitTable pandas' `orient="split"` */

export const RUN_PYTHON = "run_python";
const MAX_ROWS = 100;
const MAX_COLS = 50;
const COLUMNS_SHOWN = 6;
const COLUMNS_CHARS = 120;

/** The result as an object, or null when it is not a JSON object. */
export function parseResult(/** @type {unknown} */ text) {
  if (typeof text !== "string" || !text.trimStart().startsWith("{")) return null;
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** The message of an `{error, message}` result (what a person should read), else null. */
export function errorMessage(/** @type {any} */ value) {
  if (typeof value?.error !== "string") return null;
  return typeof value.message === "string" && value.message ? value.message : value.error;
}

/** Bytes as a person reads them. */
export function humanBytes(/** @type {unknown} */ n) {
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return "";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return i === 0 ? `${v} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** A shape as "12×3", a length as "len 3", else "". */
export function shapeText(/** @type {any} */ v) {
  if (Array.isArray(v?.shape)) return v.shape.map(String).join("×");
  if (typeof v?.length === "number") return `len ${v.length}`;
  return "";
}

/** A cell value as text: JSON null (pandas' NaN and None) as "null", objects as JSON. */
function cellText(/** @type {unknown} */ v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "object") {
    try {
      return JSON.stringify(v);
    } catch {
      return String(v);
    }
  }
  return String(v);
}

/** Columns as "month: object, revenue: float64", cut after a few and at a length. */
function columnsText(/** @type {any[]} */ columns) {
  const all = columns.filter((c) => c && typeof c === "object").map((c) => `${cellText(c.name)}: ${cellText(c.dtype)}`);
  let text = all.slice(0, COLUMNS_SHOWN).join(", ");
  if (text.length > COLUMNS_CHARS) text = `${text.slice(0, COLUMNS_CHARS)}…`;
  if (all.length > COLUMNS_SHOWN) text += `, … +${all.length - COLUMNS_SHOWN} more`;
  return { text, full: all.join(", ") };
}

/** Cells made here (a row header, a classed cell); any other value in a row is data, drawn as text. */
const ownCells = new WeakSet();
const cell = (/** @type {Document} */ doc, /** @type {string} */ tag, /** @type {any} */ opts) => {
  const el = h(doc, tag, opts);
  ownCells.add(el);
  return el;
};

/** A plain table: header cells, then rows of cells. */
function table(/** @type {Document} */ doc, /** @type {string} */ cls, /** @type {string[]} */ head, /** @type {any[][]} */ rows) {
  return h(doc, "table", { cls }, [
    h(doc, "thead", {}, [h(doc, "tr", {}, head.map((t) => h(doc, "th", { text: t, attrs: { scope: "col" } })))]),
    h(doc, "tbody", {}, rows.map((r) => h(doc, "tr", {}, r.map((c) => (ownCells.has(c) ? c : h(doc, "td", { text: cellText(c) })))))),
  ]);
}

const note = (/** @type {Document} */ doc, /** @type {unknown} */ text, cls = "gth-kernel-note") =>
  typeof text === "string" && text ? h(doc, "p", { cls, text }) : null;

/** @returns {Record<string, string>} */
const ranOn = (/** @type {any} */ v) => (typeof v.ranOn === "string" ? { ranOn: v.ranOn } : {});

/** `list_variables`: a table of the kernel's variables, and where the page ends. */
export function renderVariables(/** @type {Document} */ doc, /** @type {any} */ v) {
  if (!Array.isArray(v?.variables)) return null;
  const vars = /** @type {any[]} the server's JSON */ (v.variables).filter((x) => x && typeof x === "object");
  const rows = vars.map((x) => {
    const cols = Array.isArray(x.columns) ? columnsText(x.columns) : { text: "", full: "" };
    return [
      cell(doc, "td", { cls: "gth-var-name", text: cellText(x.name) }),
      cellText(x.type ?? ""),
      shapeText(x),
      humanBytes(x.size_bytes),
      cell(doc, "td", { cls: "gth-var-columns", text: cols.text, attrs: cols.full ? { title: cols.full } : {} }),
    ];
  });
  const total = typeof v.total === "number" ? v.total : vars.length;
  const offset = typeof v.offset === "number" ? v.offset : 0;
  let summary = `${total} variable${total === 1 ? "" : "s"}`;
  if (v.next_offset !== null && v.next_offset !== undefined) {
    summary = `Showing ${offset + 1}–${offset + vars.length} of ${total} variables; more from offset ${cellText(v.next_offset)}.`;
  }
  return h(doc, "div", { cls: "gth-kernel gth-variables-result", data: ranOn(v) }, [
    vars.length ? table(doc, "gth-variables", ["Name", "Type", "Shape", "Size", "Columns"], rows) : h(doc, "p", { cls: "gth-kernel-empty", text: "No variables." }),
    h(doc, "p", { cls: "gth-variables-total", text: summary }),
    note(doc, v.note),
  ]);
}

/** A pandas split table (`{columns, index, data}`; a Series' `{index, data}` has one column). */
function splitTable(/** @type {Document} */ doc, /** @type {string} */ cls, /** @type {any} */ t, /** @type {string} */ caption, /** @type {string} */ name) {
  if (!t || typeof t !== "object" || !Array.isArray(t.data)) return null;
  /** @type {unknown[]} */
  const columns = Array.isArray(t.columns) ? t.columns : [name || "value"];
  /** @type {unknown[][]} rows of cells */
  const data = t.data.map((/** @type {unknown} */ r) => (Array.isArray(r) && Array.isArray(t.columns) ? r : [r]));
  /** @type {unknown[]} */
  const index = Array.isArray(t.index) ? t.index : data.map((_, i) => i);
  const cols = columns.slice(0, MAX_COLS);
  const rows = data.slice(0, MAX_ROWS).map((r, i) => [
    cell(doc, "th", { text: cellText(index[i]), attrs: { scope: "row" } }),
    ...cols.map((_, j) => r[j]),
  ]);
  const more = [];
  if (data.length > MAX_ROWS) more.push(`${data.length - MAX_ROWS} more rows`);
  if (columns.length > MAX_COLS) more.push(`${columns.length - MAX_COLS} more columns`);
  const el = table(doc, cls, ["", ...cols.map(cellText)], rows);
  el.prepend(h(doc, "caption", { text: more.length ? `${caption} (${more.join(", ")} not shown)` : caption }));
  return el;
}

/** `describe_variable`: header, schema, summary statistics and first rows, or a repr. */
export function renderDescribe(/** @type {Document} */ doc, /** @type {any} */ v) {
  if (typeof v?.name !== "string" || typeof v.type !== "string") return null;
  const context = typeof v.data_context === "string" ? v.data_context : "";
  const headBits = [v.name, v.type, shapeText(v), humanBytes(v.size_bytes), context && `data context: ${context}`];
  /** @type {any[]} */
  const parts = [h(doc, "p", { cls: "gth-describe-header", text: headBits.filter(Boolean).join(" · ") })];
  if (Array.isArray(v.columns)) {
    const nulls = v.null_counts && typeof v.null_counts === "object" ? v.null_counts : {};
    const rows = v.columns
      .filter((/** @type {any} */ c) => c && typeof c === "object")
      .map((/** @type {any} */ c) => [c.name, c.dtype, Object.hasOwn(nulls, c.name) ? nulls[c.name] : ""]);
    parts.push(table(doc, "gth-describe-schema", ["Column", "Dtype", "Nulls"], rows));
  } else if (typeof v.dtype === "string") {
    parts.push(table(doc, "gth-describe-schema", ["Name", "Dtype", "Nulls"], [[v.name, v.dtype, v.null_count ?? ""]]));
  }
  if (v.stats && typeof v.stats === "object") {
    const keys = ["min", "max", "mean", "std"].filter((k) => k in v.stats);
    parts.push(table(doc, "gth-describe-stats", keys, [keys.map((k) => v.stats[k])]));
  }
  parts.push(splitTable(doc, "gth-describe-stats", v.describe, "Summary statistics", v.name));
  if (Array.isArray(v.head)) {
    parts.push(h(doc, "pre", { cls: "gth-describe-values", text: v.head.map(cellText).join("\n") })); // an ndarray's first values
  } else parts.push(splitTable(doc, "gth-describe-head", v.head, "First rows", v.name));
  if (typeof v.repr === "string") parts.push(h(doc, "pre", { cls: "gth-describe-repr", text: v.repr }));
  if (context === "schema") parts.push(note(doc, "Only the schema is shared with the agent (data context: schema).", "gth-kernel-note gth-describe-schema-only"));
  parts.push(note(doc, v.note));
  return h(doc, "div", { cls: "gth-kernel gth-describe", data: { ...ranOn(v), ...(context ? { context } : {}) } }, parts);
}

/** `run_python`: output streams, the value, the error, and the plots the code drew. */
export function renderRunPython(/** @type {Document} */ doc, /** @type {any} */ v) {
  if (typeof v?.status !== "string") return null;
  // IPython colours its tracebacks; the escapes would show as noise in a <pre>.
  const clean = (/** @type {unknown} */ s) => (typeof s === "string" ? stripAnsi(s) : "");
  const pre = (/** @type {string} */ cls, /** @type {string} */ text) => (text ? h(doc, "pre", { cls, text }) : null);
  const status = v.status === "timeout" ? "timed out" : v.status;
  const elapsed = typeof v.elapsed === "number" ? ` in ${v.elapsed < 10 ? v.elapsed.toFixed(2) : Math.round(v.elapsed)} s` : "";
  let error = "";
  if (v.error && typeof v.error === "object") {
    const tb = clean(Array.isArray(v.error.traceback) ? v.error.traceback.join("\n") : v.error.traceback);
    error = `${clean(v.error.ename)}: ${clean(v.error.evalue)}${tb ? `\n${tb}` : ""}`;
  }
  const images = (Array.isArray(v.images) ? v.images : []).map((/** @type {any} */ img) => {
    const url = inlineImageUrl(img?.mimeType, img?.data);
    if (url) return plotImage(doc, url);
    // After a reload the bytes may not have been kept; anything else is not an image we show.
    const omitted = Boolean(img?.omitted) || img?.data === null;
    const text = omitted ? "Image not kept after reload." : "Image not shown (not a PNG, JPEG, GIF or WebP in base64).";
    return h(doc, "p", { cls: "gth-run-image-omitted", text, data: { reason: omitted ? "omitted" : "refused" } });
  });
  return h(doc, "div", { cls: "gth-kernel gth-run-python", data: { status: v.status, ...ranOn(v) } }, [
    h(doc, "p", { cls: "gth-run-status", text: `${status}${elapsed}` }),
    pre("gth-run-stdout", clean(v.stdout)),
    pre("gth-run-stderr", clean(v.stderr)),
    pre("gth-run-result", clean(v.result)),
    ...(Array.isArray(v.displays) ? v.displays : []).map((/** @type {unknown} */ d) => pre("gth-run-display", clean(d))),
    pre("gth-run-error", error),
    ...images,
    note(doc, v.note),
  ]);
}

/**
 * A plot as an image at most its natural size, its height capped (styles.css); a click, or Enter
 * or Space, shows it whole and another shrinks it again.
 */
export function plotImage(/** @type {Document} */ doc, /** @type {string} */ url) {
  const img = h(doc, "img", {
    cls: "gth-tool-image",
    data: { enlarged: "false" },
    attrs: { src: url, alt: "Plot from run_python", title: "Click to enlarge", tabindex: "0", role: "button", "aria-pressed": "false" },
  });
  const toggle = () => {
    const enlarged = img.dataset.enlarged !== "true";
    img.dataset.enlarged = String(enlarged);
    img.setAttribute("aria-pressed", String(enlarged));
    img.title = enlarged ? "Click to shrink" : "Click to enlarge";
  };
  img.addEventListener("click", toggle);
  img.addEventListener("keydown", (/** @type {KeyboardEvent} */ ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    ev.preventDefault();
    toggle();
  });
  return img;
}

/** @type {Record<string, (doc: Document, value: any) => any>} */
const RENDERERS = { list_variables: renderVariables, describe_variable: renderDescribe, [RUN_PYTHON]: renderRunPython };

/** Whether `name` is one of the kernel tools drawn here. */
export const isKernelTool = (/** @type {string} */ name) => Object.hasOwn(RENDERERS, name);

/** The result drawn for the tool `name`, or null (not a kernel tool, an error, or another shape). */
export function renderKernelResult(/** @type {Document} */ doc, /** @type {string} */ name, /** @type {unknown} */ text) {
  const value = isKernelTool(name) ? parseResult(text) : null;
  if (!value || typeof value.error === "string") return null;
  return RENDERERS[name](doc, value);
}

/**
 * @typedef {{ insertCell?: (code: string) => Promise<unknown>,
 *   cellAt?: (cellId: string) => { index?: number, type?: string, source?: string } | null }} CardActions
 *   What a person can do and see from a card while the notebook bridge finds this widget's
 *   notebook: `insertCell` (Insert as cell), `cellAt` (a cell as it is now; "" the asking one).
 */

/**
 * run_python's arguments drawn as code (and the why beside it), or null for anything else.
 * With `actions.insertCell`, an "Insert as cell" button puts the code in a new cell below the
 * asking cell: the person's own action, so nothing asks first, and nothing runs.
 * @param {Document} doc @param {string} name @param {unknown} text @param {CardActions} [actions]
 */
export function renderKernelArgs(doc, name, text, actions = {}) {
  const args = name === RUN_PYTHON ? parseResult(text) : null;
  if (typeof args?.code !== "string") return null;
  return h(doc, "div", { cls: "gth-run-args" }, [
    note(doc, args.justification, "gth-run-justification"),
    h(doc, "pre", { cls: "gth-run-code", text: args.code, data: { language: "python" } }),
    actions.insertCell ? insertButton(doc, args.code, actions.insertCell) : null,
  ]);
}

/** The "Insert as cell" button and the line saying how it went. */
function insertButton(/** @type {Document} */ doc, /** @type {string} */ code, /** @type {(code: string) => Promise<unknown>} */ insert) {
  const button = h(doc, "button", { cls: "gth-insert-cell", text: "Insert as cell", attrs: { type: "button", title: "Put this code in a new cell below the %gth cell (not run)" } });
  const said = h(doc, "span", { cls: "gth-insert-cell-status", attrs: { role: "status" } });
  button.addEventListener("click", async () => {
    button.disabled = true;
    said.textContent = "Inserting…";
    try {
      await insert(code);
      said.textContent = "Inserted below the %gth cell.";
      said.dataset.state = "done";
    } catch (err) {
      said.textContent = `Not inserted: ${/** @type {Error} */ (err)?.message || String(err)}`;
      said.dataset.state = "error";
    } finally {
      button.disabled = false;
    }
  });
  return h(doc, "div", { cls: "gth-run-actions" }, [button, said]);
}
