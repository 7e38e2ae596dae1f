// What the notebook tools tell the model about cells: the bridge (the gth-jupyter-notebook
// JupyterLab extension) hands back raw nbformat JSON, which would cost the model a fortune in
// base64 images, ANSI colour codes and megabytes of printed text. Here it becomes a summary:
// sources and output text capped keeping head and tail, errors with their ANSI-free traceback,
// images counted (read_notebook) or kept apart for the model to see once (insert_cell's run,
// in run_python's shape), and pages cut to a total size, saying what was left out.
// Pure functions on plain JSON: no DOM, no bridge.

import output from "../../../gth_jupyter/contract/spec/output.json" with { type: "json" };

export const MAX_SOURCE = 8000;
export const MAX_OUTPUT_TEXT = 2000;
export const MAX_TRACEBACK = 4000;
export const MAX_OUTPUTS = 20;
/** The JSON size of a read_notebook page the cells are cut to (at least one cell is given). */
export const MAX_PAGE_CHARS = 40000;
/** As run_python (one spec, contract/spec/output.json): a run's text capped at this, a display's
 * text and an error's value at DISPLAY_CHARS, at most MAX_RUN_IMAGES images of IMAGE_TYPES. */
export const MAX_RUN_TEXT = output.run.maxText;
export const MAX_RUN_IMAGES = output.run.maxImages;
const DISPLAY_CHARS = output.run.displayChars;
const IMAGE_TYPES = output.run.imageTypes;
// IPython colours tracebacks; CSI sequences and OSC links, each OSC ended by its first BEL or ST.
const ANSI = new RegExp(output.ansi, "g");
// How base64 may be wrapped: ASCII white space, as the kernel reads it.
const WRAP = /[\t\n\v\f\r ]+/g;

/** @param {unknown} text */
export const stripAnsi = (text) => String(text ?? "").replace(ANSI, "");

/**
 * `text` within `limit` characters, keeping its head and tail and saying how much was cut
 * (the same marker as run_python's results).
 * @param {string} text
 * @param {number} limit
 */
export function capText(text, limit) {
  if (text.length <= limit) return text;
  const half = Math.floor(limit / 2);
  return `${text.slice(0, half)}\n… [${text.length - 2 * half} characters cut] …\n${text.slice(-half)}`;
}

/** nbformat multiline strings are a string or a list of lines. @param {unknown} value */
export function joinText(value) {
  if (Array.isArray(value)) return value.map((v) => String(v ?? "")).join("");
  return typeof value === "string" ? value : value == null ? "" : String(value);
}

/** The gth chat of a cell: its output carries `metadata.gth_jupyter` (the widget and its copy). */
const isGthOutput = (/** @type {any} */ out) => Boolean(out?.metadata && typeof out.metadata === "object" && out.metadata.gth_jupyter);

/** The image mimetypes an output's data holds. @param {any} data */
const imageTypes = (data) => (data && typeof data === "object" ? Object.keys(data).filter((k) => k.startsWith("image/")) : []);

/**
 * One output as the model reads it: streams and text/plain capped, errors with an ANSI-free
 * traceback, images counted, other mimetypes named.
 * @param {any} out an nbformat output
 */
export function summarizeOutput(out) {
  const type = String(out?.output_type ?? "unknown");
  if (type === "stream") return { type, name: String(out.name ?? "stdout"), text: capText(stripAnsi(joinText(out.text)), MAX_OUTPUT_TEXT) };
  if (type === "error") return { type, ...errorOf(out, MAX_TRACEBACK) };
  if (type === "execute_result" || type === "display_data" || type === "update_display_data") {
    if (isGthOutput(out)) return { type, gth: "the gth chat widget of this cell (its conversation is already yours)" };
    const data = out.data && typeof out.data === "object" ? out.data : {};
    /** @type {Record<string, any>} */
    const item = { type };
    if ("text/plain" in data) item.text = capText(stripAnsi(joinText(data["text/plain"])), MAX_OUTPUT_TEXT);
    const images = imageTypes(data);
    if (images.length) item.images = images.length;
    const other = Object.keys(data).filter((k) => k !== "text/plain" && !k.startsWith("image/"));
    if (other.length) item.mimetypes = other;
    return item;
  }
  return { type };
}

/** `{ename, evalue, traceback}` ANSI-free and capped. @param {any} out @param {number} limit @param {number} [valueLimit] */
function errorOf(out, limit, valueLimit = MAX_OUTPUT_TEXT) {
  const tb = Array.isArray(out?.traceback) ? out.traceback.map(stripAnsi).join("\n") : stripAnsi(joinText(out?.traceback));
  return { ename: stripAnsi(out?.ename ?? ""), evalue: capText(stripAnsi(out?.evalue ?? ""), valueLimit), traceback: capText(tb, limit) };
}

/**
 * One cell for read_notebook. Adjacent streams of one name are one text (Jupyter splits them
 * arbitrarily); at most MAX_OUTPUTS outputs, saying how many more there were.
 * @param {any} cell a bridge cell: {index, id, cell_type, source, execution_count, outputs}
 * @param {{ includeOutputs: boolean, askingCellId: string }} opts
 */
export function summarizeCell(cell, { includeOutputs, askingCellId }) {
  const source = joinText(cell?.source);
  /** @type {Record<string, any>} */
  const item = { index: cell?.index, id: String(cell?.id ?? ""), type: String(cell?.cell_type ?? "code") };
  if (askingCellId && item.id === askingCellId) item.asking = true;
  item.source = capText(source, MAX_SOURCE);
  if (item.type !== "code") return item;
  item.execution_count = cell?.execution_count ?? null;
  const outputs = Array.isArray(cell?.outputs) ? cell.outputs : [];
  if (!includeOutputs) {
    item.output_count = outputs.length;
    return item;
  }
  const merged = mergeStreams(outputs).map(summarizeOutput);
  item.outputs = merged.slice(0, MAX_OUTPUTS);
  if (merged.length > MAX_OUTPUTS) item.outputs_left_out = merged.length - MAX_OUTPUTS;
  return item;
}

/** Adjacent stream outputs of the same name joined into one. @param {any[]} outputs */
function mergeStreams(outputs) {
  /** @type {any[]} */
  const out = [];
  for (const o of outputs) {
    const last = out[out.length - 1];
    if (o?.output_type === "stream" && last?.output_type === "stream" && last.name === o.name) {
      out[out.length - 1] = { ...last, text: joinText(last.text) + joinText(o.text) };
    } else out.push(o);
  }
  return out;
}

/**
 * A read_notebook answer from a bridge page: the cells summarised until the page's JSON would
 * pass `maxChars` (one cell at least), where the asking cell is, and where to go on.
 * @param {{ path?: string, cellCount?: number, cells?: any[] }} page what `handle.read` returned
 * @param {{ offset: number, includeOutputs: boolean, askingCellId: string, askingIndex?: number | null, maxChars?: number }} opts
 */
export function summarizeNotebook(page, { offset, includeOutputs, askingCellId, askingIndex = null, maxChars = MAX_PAGE_CHARS }) {
  const cells = Array.isArray(page?.cells) ? page.cells : [];
  const total = typeof page?.cellCount === "number" ? page.cellCount : offset + cells.length;
  /** @type {any[]} */
  const shown = [];
  let size = 0;
  for (const cell of cells) {
    const item = summarizeCell(cell, { includeOutputs, askingCellId });
    const chars = JSON.stringify(item).length;
    if (shown.length && size + chars > maxChars) break;
    shown.push(item);
    size += chars;
  }
  const nextIndex = offset + shown.length;
  const asking = shown.find((c) => c.asking);
  /** @type {Record<string, any>} */
  const answer = {
    path: String(page?.path ?? ""),
    cell_count: total,
    offset,
    asking_cell: askingCellId ? { id: askingCellId, index: asking ? asking.index : askingIndex } : null,
    cells: shown,
    next_offset: nextIndex < total ? nextIndex : null,
  };
  const notes = [];
  if (shown.length < cells.length) notes.push(`cells ${nextIndex}–${offset + cells.length - 1} were left out to keep this answer short`);
  if (answer.next_offset !== null) notes.push(`${total - nextIndex} more cell(s) from offset ${nextIndex}: call read_notebook with offset=${nextIndex}`);
  if (notes.length) answer.note = `${notes.join("; ")}.`;
  return answer;
}

/**
 * A cell run by insert_cell, in run_python's result shape (stdout, stderr, result, displays,
 * images as {mimeType, data}, error when it failed), so the server shows its plots to the model once, as
 * images, as it does for run_python.
 * @param {{ status?: string, executionCount?: number | null, outputs?: any[] }} ran
 */
export function runResult(ran) {
  /** @type {string[]} */
  const stdout = [];
  /** @type {string[]} */
  const stderr = [];
  /** @type {string | null} */
  let result = null;
  /** @type {string[]} */
  const displays = [];
  /** @type {{ mimeType: string, data: string }[]} */
  const images = [];
  const seen = new Set();
  /** @type {any} */
  let error = null;
  let dropped = 0;
  for (const out of Array.isArray(ran?.outputs) ? ran.outputs : []) {
    const type = out?.output_type;
    if (type === "stream") (out.name === "stderr" ? stderr : stdout).push(joinText(out.text));
    else if (type === "error") error = errorOf(out, MAX_RUN_TEXT, DISPLAY_CHARS);
    else if ((type === "execute_result" || type === "display_data") && !isGthOutput(out)) {
      const data = out.data && typeof out.data === "object" ? out.data : {};
      const mime = IMAGE_TYPES.find((t) => typeof data[t] === "string" || Array.isArray(data[t]));
      if (mime) {
        const b64 = joinText(data[mime]).replace(WRAP, "");
        // A figure left as the last value is also displayed: the same bytes are one image.
        if (b64 && !seen.has(b64)) {
          seen.add(b64);
          if (images.length < MAX_RUN_IMAGES) images.push({ mimeType: mime, data: b64 });
          else dropped += 1;
        }
      }
      const text = "text/plain" in data ? capText(stripAnsi(joinText(data["text/plain"])), type === "execute_result" ? MAX_RUN_TEXT : DISPLAY_CHARS) : null;
      if (type === "execute_result") result = text;
      else if (text !== null) displays.push(text);
    }
  }
  const status = error ? "error" : ran?.status === "error" ? "error" : "ok";
  return {
    status,
    execution_count: ran?.executionCount ?? null,
    stdout: capText(stripAnsi(stdout.join("")), MAX_RUN_TEXT),
    stderr: capText(stripAnsi(stderr.join("")), MAX_RUN_TEXT),
    result,
    displays,
    images,
    // No `"error": null`: a browser tool's result with an `error` key reads as failed.
    ...(error ? { error } : {}),
    ...(dropped ? { note: `${dropped} more image(s) left out` } : {}),
  };
}

/** The line a diff shows where kept lines were left out. */
export const GAP = "@@ … @@";

/**
 * A line diff of `before` → `after` as unified-style lines ("  " kept, "- " removed, "+ "
 * added), with `context` kept lines around each change and a gap line (GAP) between hunks.
 * Longest common subsequence on lines; past `maxCells` line pairs (a rewrite of a long cell)
 * it is every old line removed and every new one added.
 * @param {string} before
 * @param {string} after
 * @param {{ context?: number, maxCells?: number }} [opts]
 */
export function lineDiff(before, after, { context = 3, maxCells = 250000 } = {}) {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  // Common head and tail first: an edit usually touches a few lines of a cell.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const mid = diffMiddle(a.slice(head, a.length - tail), b.slice(head, b.length - tail), maxCells);
  /** @type {[string, string][]} */
  const ops = [...a.slice(0, head).map((l) => /** @type {[string, string]} */ ([" ", l])), ...mid, ...a.slice(a.length - tail).map((l) => /** @type {[string, string]} */ ([" ", l]))];
  const changed = ops.map((op, i) => (op[0] !== " " ? i : -1)).filter((i) => i >= 0);
  if (!changed.length) return { added: 0, removed: 0, lines: [] };
  const keep = new Set();
  for (const i of changed) for (let j = Math.max(0, i - context); j <= Math.min(ops.length - 1, i + context); j++) keep.add(j);
  const lines = [];
  let last = -1;
  for (let i = 0; i < ops.length; i++) {
    if (!keep.has(i)) continue;
    if (last >= 0 && i > last + 1) lines.push(GAP);
    lines.push(`${ops[i][0]} ${ops[i][1]}`);
    last = i;
  }
  // Kept lines left out before the first hunk or after the last are marked too.
  if (!keep.has(0)) lines.unshift(GAP);
  if (last < ops.length - 1) lines.push(GAP);
  return { added: ops.filter((o) => o[0] === "+").length, removed: ops.filter((o) => o[0] === "-").length, lines };
}

/** @param {string[]} a @param {string[]} b @param {number} maxCells @returns {[string, string][]} */
function diffMiddle(a, b, maxCells) {
  if ((a.length + 1) * (b.length + 1) > maxCells) return [...a.map((l) => /** @type {[string, string]} */ (["-", l])), ...b.map((l) => /** @type {[string, string]} */ (["+", l]))];
  // lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
  const lcs = Array.from({ length: a.length + 1 }, () => new Int32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  /** @type {[string, string][]} */
  const ops = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      ops.push([" ", a[i++]]);
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) ops.push(["-", a[i++]]);
    else ops.push(["+", b[j++]]);
  }
  while (i < a.length) ops.push(["-", a[i++]]);
  while (j < b.length) ops.push(["+", b[j++]]);
  return ops;
}
