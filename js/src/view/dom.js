// A tiny element builder. Agent text only ever goes in through `text` (textContent).

import { inlineImageUrl } from "../media.js";

/**
 * @param {Document} doc
 * @param {string} tag
 * @param {{ cls?: string, text?: string, attrs?: Record<string, string>, data?: Record<string, string> }} [opts]
 * @param {any[]} [children]
 * @returns {any} the element (typed loosely: callers know which tag they made)
 */
export function h(doc, tag, opts = {}, children = []) {
  const node = doc.createElement(tag);
  if (opts.cls) node.className = opts.cls;
  if (opts.text !== undefined) node.textContent = opts.text;
  for (const [k, v] of Object.entries(opts.attrs || {})) node.setAttribute(k, v);
  for (const [k, v] of Object.entries(opts.data || {})) node.dataset[k] = v;
  for (const c of children) if (c) node.append(c);
  return node;
}

/** Content (a string or AG-UI content parts) as text, plus any inline images found in it. */
export function contentParts(/** @type {any} */ content) {
  if (typeof content === "string") return { text: content, images: /** @type {string[]} */ ([]) };
  const texts = [];
  const images = [];
  for (const part of Array.isArray(content) ? content : []) {
    if (part?.type === "text") texts.push(String(part.text ?? ""));
    else if (part?.type === "image" && part.source?.type === "data") {
      const url = inlineImageUrl(part.source.mimeType, part.source.value);
      if (url) images.push(url);
    }
  }
  return { text: texts.join("\n"), images };
}

/**
 * Tool-call arguments as streamed so far (an object, or its JSON text) as a value, or null while
 * the text is not yet whole JSON. Views read partial calls with it, so it never throws.
 * @param {any} args
 * @returns {any}
 */
export function argsObject(args) {
  if (typeof args !== "string") return args;
  try {
    return JSON.parse(args);
  } catch {
    return null;
  }
}

/**
 * The pixel size of a base64 PNG or JPEG, read from its header, or null (another type, or bytes
 * that do not parse). Cards say how big a photo is without waiting for it to load.
 * @param {unknown} mimeType
 * @param {unknown} data
 * @returns {{ width: number, height: number } | null}
 */
export function imageSize(mimeType, data) {
  if (typeof data !== "string") return null;
  let bytes;
  try {
    const bin = atob(data.replace(/\s+/g, ""));
    bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
  const u16 = (/** @type {number} */ i) => (bytes[i] << 8) | bytes[i + 1];
  if (mimeType === "image/png") {
    if (bytes.length < 24 || bytes[12] !== 0x49 || bytes[13] !== 0x48) return null; // IHDR
    const u32 = (/** @type {number} */ i) => u16(i) * 65536 + u16(i + 2);
    return { width: u32(16), height: u32(20) };
  }
  if (mimeType !== "image/jpeg" || u16(0) !== 0xffd8) return null;
  // Walk the segments to the frame header (SOFn; not DHT C4, JPG C8, DAC CC).
  for (let i = 2; i + 9 < bytes.length; ) {
    if (bytes[i] !== 0xff) return null;
    const marker = bytes[i + 1];
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      return { width: u16(i + 7), height: u16(i + 5) };
    }
    i += 2 + u16(i + 2);
  }
  return null;
}
