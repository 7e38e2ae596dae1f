// The only URLs a surface may use: http(s) everywhere, and inline raster images for media.
// No javascript:, no protocol-relative or relative URLs, no data: documents or SVG.

/** http(s) only: for links and openUrl. */
export function safeLinkUrl(/** @type {unknown} */ url) {
  if (typeof url !== "string") return null;
  const u = url.trim();
  if (!/^https?:\/\//i.test(u)) return null;
  try {
    return new URL(u).href;
  } catch {
    return null;
  }
}

/** http(s), or an inline raster image (`data:image/png;base64,…`); nothing else. */
export function safeMediaUrl(/** @type {unknown} */ url) {
  if (typeof url !== "string") return null;
  const u = url.trim();
  if (/^data:image\/(png|jpe?g|gif|webp|bmp|avif)[;,]/i.test(u)) return u;
  return safeLinkUrl(u);
}
