// A tiny element builder. Agent text only ever goes in through `text` (textContent).

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

/** A data: URL for an image a tool returned, or null if it is not a plain raster image. */
export function imageDataUrl(/** @type {unknown} */ mimeType, /** @type {unknown} */ data) {
  if (typeof mimeType !== "string" || typeof data !== "string") return null;
  if (!/^image\/(png|jpeg|gif|webp)$/.test(mimeType) || !/^[A-Za-z0-9+/=\s]+$/.test(data)) return null;
  return `data:${mimeType};base64,${data.replace(/\s+/g, "")}`;
}

/** Content (a string or AG-UI content parts) as text, plus any inline images found in it. */
export function contentParts(/** @type {any} */ content) {
  if (typeof content === "string") return { text: content, images: /** @type {string[]} */ ([]) };
  const texts = [];
  const images = [];
  for (const part of Array.isArray(content) ? content : []) {
    if (part?.type === "text") texts.push(String(part.text ?? ""));
    else if (part?.type === "image" && part.source?.type === "data") {
      const url = imageDataUrl(part.source.mimeType, part.source.value);
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
