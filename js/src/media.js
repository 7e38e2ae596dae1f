// Agent-supplied URLs: one policy for every place an agent can put one (Markdown replies and
// A2UI surfaces alike).
//
// - Links (Markdown links, A2UI `openUrl`): absolute http(s) with a host and no user name or
//   password (Markdown also mailto:). They open in a new tab with no opener and no referrer.
// - Media (images; `Video` and `AudioPlayer`): a remote URL is a request the agent makes in the
//   user's name, and its query can carry anything the agent read (`?d=<secret>`). So an http(s)
//   URL loads at once only from a host the configuration trusts (`a2ui.imageHosts`); from any
//   other host a placeholder names the host, and one click loads it. An inline `data:` image of
//   a raster type in base64 renders (it sends nothing). Anything else never renders: javascript:,
//   relative and protocol-relative URLs, `data:` documents, and SVG (a document format with
//   script and external references, refused so that no later change of sink can run it).
//
// The same HTML serves both renderers: Markdown is rendered to a string (markdown-it), surfaces
// to DOM (`mediaNode` parses the same string). The owner of a rendered element calls
// `activateMedia` from a click listener on it, and `upgradeMedia` when the trusted hosts change.

import media from "../../gth_jupyter/contract/spec/media.json" with { type: "json" };

/** The raster types an inline image may have: the static copy's too (contract/spec/media.json). */
export const INLINE_IMAGE_TYPES = new Set(media.inlineImageTypes);
/** An inline image's URL: its type (case-insensitive, as URLs are) and its base64 data. */
const DATA_IMAGE = /^data:([^;,]+);base64,(.*)$/is;
// The white space base64 may be wrapped with: ASCII only, as the static copy reads it.
const WRAP = /[\t\n\v\f\r ]+/g;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * A data: URL for an image a tool or the kernel handed over as `{mimeType, data}`, or null: only
 * the inline types (exactly as named) and strict base64, so no other URL (javascript:, https:,
 * SVG with script) can ever become an image source. As the static copy's `inline_image_url`.
 */
export function inlineImageUrl(/** @type {unknown} */ mimeType, /** @type {unknown} */ data) {
  if (typeof mimeType !== "string" || !INLINE_IMAGE_TYPES.has(mimeType) || typeof data !== "string") return null;
  const clean = data.replace(WRAP, "");
  return BASE64.test(clean) ? `data:${mimeType};base64,${clean}` : null;
}

const PLACEHOLDER = "gth-media-placeholder";
const LABELS = { image: "Image", video: "Video", audio: "Audio" };
const ICONS = { image: "🖼", video: "🎞", audio: "🔊" };

/** @typedef {"image" | "video" | "audio"} MediaKind */
/** @typedef {{ kind: "inline", url: string } | { kind: "remote", url: string, host: string, load: boolean }} Verdict */

/** Escape text for HTML text and double-quoted attribute values. */
export function escapeHtml(/** @type {unknown} */ text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => /** @type {any} */ ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

/** An absolute http(s) URL with a host and no credentials, normalised (IDN as punycode), or null. */
export function safeLinkUrl(/** @type {unknown} */ url) {
  if (typeof url !== "string") return null;
  const u = url.trim();
  if (!/^https?:\/\//i.test(u)) return null; // not `https:foo`, which a page resolves against itself
  try {
    const parsed = new URL(u);
    if (!parsed.hostname || parsed.username || parsed.password) return null; // https://bank.com@evil.example/
    return parsed.href;
  } catch {
    return null;
  }
}

/** The host a link or media URL goes to, as the user should read it (punycode, no brackets). */
export function hostOf(/** @type {string} */ url) {
  try {
    return normHost(new URL(url).hostname);
  } catch {
    return "";
  }
}

/** @param {string} host */
function normHost(host) {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
}

/** One entry of `imageHosts` in the form `hostOf` gives (IDN and IPv4 forms canonical too). */
function normEntry(/** @type {string} */ entry) {
  const e = entry.trim().toLowerCase();
  if (e === "*") return e;
  const wild = e.startsWith("*.");
  const name = wild ? e.slice(2) : e;
  try {
    const host = normHost(new URL(`http://${/:/.test(name) && !name.startsWith("[") ? `[${name}]` : name}/`).hostname);
    return host ? (wild ? `*.${host}` : host) : "";
  } catch {
    return "";
  }
}

/**
 * Which agent media load without a click: the hosts the configuration trusts, plus each URL the
 * user has clicked to load in this view. One per widget view, shared by its renderers.
 */
export class MediaPolicy {
  /** @param {unknown} [hosts] `a2ui.imageHosts` */
  constructor(hosts = []) {
    /** @type {string[]} */
    this.hosts = [];
    /** @type {Set<string>} URLs the user chose to load */
    this.approved = new Set();
    this.setHosts(hosts);
  }

  /** Replace the trusted hosts (entries: `cdn.example.com`, `*.example.com`, `*`). */
  setHosts(/** @type {unknown} */ hosts) {
    this.hosts = (Array.isArray(hosts) ? hosts : []).filter((h) => typeof h === "string").map(normEntry).filter(Boolean);
  }

  /** Whether media from `host` load at once. */
  trusts(/** @type {string} */ host) {
    if (!host) return false;
    return this.hosts.some((e) => e === "*" || e === host || (e.startsWith("*.") && host.endsWith(e.slice(1))));
  }

  /**
   * What to do with a media URL: render it inline, load it (or wait for a click), or nothing.
   * @param {unknown} url
   * @param {MediaKind} [kind]
   * @returns {Verdict | null}
   */
  judge(url, kind = "image") {
    if (typeof url !== "string") return null;
    const u = url.trim();
    const data = kind === "image" ? DATA_IMAGE.exec(u) : null;
    if (data) {
      // Rendered as the static copy would: an inline type in strict base64, else nothing.
      const inline = inlineImageUrl(data[1].toLowerCase(), data[2]);
      return inline ? { kind: "inline", url: inline } : null;
    }
    const href = safeLinkUrl(u);
    if (!href) return null;
    const host = hostOf(href);
    return { kind: "remote", url: href, host, load: this.approved.has(href) || this.trusts(host) };
  }

  /** The user clicked to load `url`: it loads at once from now on in this view. */
  approve(/** @type {string} */ url) {
    this.approved.add(url);
  }
}

const STRICT = new MediaPolicy();

/**
 * HTML for agent media: the element itself when it may load, a click-to-load placeholder that
 * names the host when it may not yet, or an inert box when the URL is refused.
 * @param {unknown} url
 * @param {{ kind?: MediaKind, alt?: string, policy?: MediaPolicy }} [opts]
 */
export function mediaHtml(url, { kind = "image", alt = "", policy = STRICT } = {}) {
  const verdict = policy.judge(url, kind);
  if (!verdict) {
    const why = `${LABELS[kind]} not shown: only http(s) and inline image URLs are allowed.`;
    return `<span class="gth-media-blocked" role="img" aria-label="${escapeHtml(alt || why)}" title="${escapeHtml(why)}"></span>`;
  }
  if (verdict.kind === "inline" || verdict.load) return elementHtml(kind, verdict.url, alt);
  const label = `${LABELS[kind]} from ${verdict.host}`;
  return (
    `<button type="button" class="${PLACEHOLDER}" data-gth-kind="${kind}" data-gth-src="${escapeHtml(verdict.url)}" data-gth-alt="${escapeHtml(alt)}"` +
    ` title="${escapeHtml(`Load ${verdict.url}\nThe agent chose this address; loading it tells ${verdict.host} that you viewed it.`)}">` +
    `<span class="gth-media-icon" aria-hidden="true">${ICONS[kind]}</span>` +
    (alt ? `<span class="gth-media-alt">${escapeHtml(alt)}</span>` : "") +
    `<span class="gth-media-host">${escapeHtml(label)}</span>` +
    `<span class="gth-media-load">Click to load</span></button>`
  );
}

/** @param {MediaKind} kind @param {string} url @param {string} alt */
function elementHtml(kind, url, alt) {
  const src = escapeHtml(url);
  if (kind === "video") return `<video class="gth-media" src="${src}" controls preload="metadata" aria-label="${escapeHtml(alt)}"></video>`;
  if (kind === "audio") return `<audio class="gth-media" src="${src}" controls preload="metadata" aria-label="${escapeHtml(alt)}"></audio>`;
  return `<img class="gth-media" src="${src}" alt="${escapeHtml(alt)}" referrerpolicy="no-referrer">`;
}

/** `mediaHtml` as a node. @param {Document} doc @param {unknown} url @param {Parameters<typeof mediaHtml>[1]} [opts] */
export function mediaNode(doc, url, opts) {
  const template = doc.createElement("template");
  template.innerHTML = mediaHtml(url, opts);
  return /** @type {Element} */ (template.content.firstChild);
}

/** Replace a placeholder with the media it stands for, which the policy judges again. */
function load(/** @type {any} */ button, /** @type {MediaPolicy} */ policy, approve = false) {
  const kind = /** @type {MediaKind} */ (button.dataset.gthKind in LABELS ? button.dataset.gthKind : "image");
  const verdict = policy.judge(button.dataset.gthSrc, kind);
  if (!verdict || verdict.kind !== "remote") return;
  if (approve) policy.approve(verdict.url);
  else if (!verdict.load) return;
  const template = button.ownerDocument.createElement("template");
  template.innerHTML = elementHtml(kind, verdict.url, button.dataset.gthAlt || "");
  button.replaceWith(template.content);
}

/**
 * A click listener's body for an element holding agent media: a person's click on a placeholder
 * loads it. A click inside a Markdown link loads the image, it does not follow the link.
 * @param {Event} event
 * @param {MediaPolicy} policy
 */
export function activateMedia(event, policy) {
  const target = /** @type {any} */ (event.target);
  const button = target?.closest?.(`.${PLACEHOLDER}`);
  if (!button) return;
  event.preventDefault();
  if (event.isTrusted) load(button, policy, true); // a script's click is not the user's choice
}

/** Load the placeholders under `root` whose host the policy now trusts (after `setHosts`). */
export function upgradeMedia(/** @type {any} */ root, /** @type {MediaPolicy} */ policy) {
  for (const button of [...root.querySelectorAll(`.${PLACEHOLDER}`)]) load(button, policy);
}
