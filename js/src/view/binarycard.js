// What `gth_read_binary` read, drawn in its tool card: the image itself, or a chip naming the file
// (name, type, size). The result is Gaunt Sloth's string
//   gth_read_binary;type:<type>;path:<URL-encoded>;data:<mime>;base64,<data>
// live, and after the server's binary-content-injection has moved the bytes to the model
//   gth_read_binary;type:<type>;path:<URL-encoded>;data:<mime>;size:<bytes>;omitted ...
// Both are agent-controlled: names and types go in as text only, and an image becomes an <img>
// only through inlineImageUrl (an inline type as clean base64: ../media.js), as everywhere.

import { inlineImageUrl } from "../media.js";
import { h } from "./dom.js";
import { humanBytes } from "./kernelcards.js";

export const READ_BINARY = "gth_read_binary";
const PREFIX = `${READ_BINARY};`;
const KINDS = new Set(["image", "file", "audio", "video", "binary"]);
const MAX_NAME = 200;

/**
 * @typedef {{ type: string, path: string, name: string, mimeType: string, data: string | null, size: number | null }} BinaryResult
 */

/** Decodes a URL-encoded path; a malformed one stays as written. */
function decodePath(/** @type {string} */ text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The parts of a `gth_read_binary` result (full or placeholder), or null for anything else. */
export function parseBinaryResult(/** @type {unknown} */ text) {
  if (typeof text !== "string" || !text.startsWith(PREFIX)) return null;
  const cut = text.indexOf(";base64,");
  const head = cut >= 0 ? text.slice(0, cut) : text;
  const parts = head.split(";");
  const field = (/** @type {number} */ i, /** @type {string} */ key) =>
    typeof parts[i] === "string" && parts[i].startsWith(`${key}:`) ? parts[i].slice(key.length + 1) : null;
  const type = field(1, "type");
  const path = field(2, "path");
  const mimeType = field(3, "data");
  if (!type || !KINDS.has(type) || !path || !mimeType) return null;
  /** @type {string | null} */
  let data = null;
  /** @type {number | null} */
  let size = null;
  if (cut >= 0 && parts.length === 4) {
    data = text.slice(cut + ";base64,".length);
    const clean = data.replace(/\s+/g, "");
    const padding = clean.length - clean.replace(/=+$/, "").length;
    size = Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
  } else {
    const sized = field(4, "size");
    if (sized === null || !/^\d+$/.test(sized) || !(parts[5] ?? "").startsWith("omitted")) return null;
    size = Number(sized);
  }
  const decoded = decodePath(path);
  const name = decoded.split(/[\\/]/).pop() || decoded;
  return /** @type {BinaryResult} */ ({ type, path: decoded, name: name.slice(0, MAX_NAME), mimeType, data, size });
}

/** One line for the result preview, instead of the base64. */
export function binarySummary(/** @type {BinaryResult} */ r) {
  const size = humanBytes(r.size);
  return `${r.name} (${r.type}, ${r.mimeType}${size ? `, ${size}` : ""})`;
}

/** The card body: the image when it is one we show, else a file chip; null if not a result. */
export function renderBinaryResult(/** @type {Document} */ doc, /** @type {unknown} */ text) {
  const r = parseBinaryResult(text);
  if (!r) return null;
  const url = r.type === "image" && r.data !== null ? inlineImageUrl(r.mimeType, r.data) : null;
  const data = { type: r.type, mimeType: r.mimeType };
  if (url) {
    return h(doc, "div", { cls: "gth-kernel gth-binary", data }, [
      h(doc, "img", { cls: "gth-tool-image", attrs: { src: url, alt: `${r.name} (read by ${READ_BINARY})` } }),
      h(doc, "p", { cls: "gth-kernel-note gth-binary-caption", text: binarySummary(r) }),
    ]);
  }
  const size = humanBytes(r.size);
  return h(doc, "div", { cls: "gth-kernel gth-binary", data }, [
    h(doc, "p", { cls: "gth-binary-chip", attrs: { title: r.path } }, [
      h(doc, "span", { cls: "gth-binary-name", text: r.name }),
      h(doc, "span", { cls: "gth-kernel-note gth-binary-type", text: ` ${r.type}, ${r.mimeType}` }),
      size ? h(doc, "span", { cls: "gth-kernel-note gth-binary-size", text: `, ${size}` }) : null,
    ]),
  ]);
}
