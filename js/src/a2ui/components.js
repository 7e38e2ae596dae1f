// Display and layout components of the basic catalog: Text, Image, Video, AudioPlayer, Icon,
// Row, Column, List, Card, Tabs, Modal, Divider. Each is `(component, scope, ctx, ancestors,
// depth) => Element`. Text goes in through textContent only (its simple Markdown is built as
// DOM by markdown.js, without links or images); media through media.js's policy (`ctx.media`):
// a remote URL from an untrusted host shows a click-to-load placeholder.

import { mediaNode } from "../media.js";
import { hasMarkdown, renderMarkdown } from "./markdown.js";
import { resolve, resolveText } from "./resolve.js";

/** @typedef {import("./normalize.js").Component} Component */
/** @typedef {import("./resolve.js").Scope} Scope */

/**
 * `table[key]` when the table has that key itself: a resolved value is the agent's, and may be
 * anything ("constructor" must not find Object's).
 * @template T @param {Record<string, T>} table @param {unknown} key @returns {T | undefined}
 */
function pick(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

const JUSTIFY = { start: "flex-start", center: "center", end: "flex-end", spaceBetween: "space-between", spaceAround: "space-around", spaceEvenly: "space-evenly", stretch: "stretch" };
const ALIGN = { start: "flex-start", center: "center", end: "flex-end", stretch: "stretch" };
const HEADINGS = { h1: "h1", h2: "h2", h3: "h3", h4: "h4", h5: "h5" };
const FIT = { contain: "contain", cover: "cover", fill: "fill", none: "none", scaleDown: "scale-down" };
// Every icon name of the basic catalog as a text glyph (no icon font to load); a name outside the
// list shows a bullet and keeps its name as the accessible label.
const ICONS = {
  accountCircle: "👤", add: "+", arrowBack: "←", arrowForward: "→", attachFile: "📎", calendarToday: "📅",
  call: "📞", camera: "📷", check: "✓", close: "✕", delete: "🗑", download: "⭳", edit: "✎", event: "📆",
  error: "⚠", fastForward: "⏩", favorite: "♥", favoriteOff: "♡", folder: "📁", help: "?", home: "⌂",
  info: "ℹ", locationOn: "📍", lock: "🔒", lockOpen: "🔓", mail: "✉", menu: "☰", moreVert: "⋮",
  moreHoriz: "⋯", notificationsOff: "🔕", notifications: "🔔", pause: "⏸", payment: "💳", person: "👤",
  phone: "☎", photo: "🖼", play: "▶", print: "🖨", refresh: "↻", rewind: "⏪", search: "🔍", send: "➤",
  settings: "⚙", share: "⤴", shoppingCart: "🛒", skipNext: "⏭", skipPrevious: "⏮", star: "★",
  starHalf: "⯨", starOff: "☆", stop: "⏹", upload: "⭱", visibility: "👁", visibilityOff: "🙈",
  volumeDown: "🔉", volumeMute: "🔇", volumeOff: "🔇", volumeUp: "🔊", warning: "⚠",
  // v0.8 spellings and common extras
  favoriteBorder: "♡", accountBox: "👤", arrowDropDown: "▾", arrowDropUp: "▴", cancel: "✕", checkCircle: "✔",
};
export const ICON_NAMES = Object.keys(ICONS);
const SVG = "http://www.w3.org/2000/svg";
// SVG path data: commands and numbers only (it is an attribute value, never markup).
const PATH_DATA = /^[MmZzLlHhVvCcSsQqTtAaEe0-9.,+\-\s]{1,4000}$/;

/** @param {Document} doc @param {string} tag @param {string} [cls] @returns {any} */
function el(doc, tag, cls) {
  const node = doc.createElement(tag);
  if (cls) node.className = cls;
  return node;
}

/** @param {Component} c @param {Scope} scope @param {any} ctx @param {Set<string>} anc @param {number} depth */
function container(c, scope, ctx, anc, depth, cls = "") {
  const node = el(ctx.doc, "div", cls);
  const p = c.props;
  const justify = pick(JUSTIFY, resolve(p.justify, scope));
  const align = pick(ALIGN, resolve(p.align, scope));
  if (justify) node.style.justifyContent = justify;
  if (align) node.style.alignItems = align;
  ctx.fillChildren(node, p.children, scope, anc, depth);
  return node;
}

/**
 * A box holding the media element, its placeholder, or a refusal; repainted when the bound URL
 * or description changes (not on other data changes, so a loaded video keeps playing).
 * @param {Component} c @param {Scope} scope @param {any} ctx @param {"image" | "video" | "audio"} kind
 */
function media(c, scope, ctx, kind) {
  const node = el(ctx.doc, "span");
  let shown = "";
  ctx.bind(node, () => {
    const url = resolve(c.props.url, scope);
    const alt = resolveText(c.props.description, scope);
    const key = JSON.stringify([url, alt]);
    if (key === shown) return;
    shown = key;
    node.replaceChildren(mediaNode(ctx.doc, url, { kind, alt, policy: ctx.media }));
  });
  return node;
}

export const DISPLAY = {
  Text(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const variant = String(resolve(c.props.variant, scope) ?? "body");
    const heading = pick(HEADINGS, variant);
    const node = el(ctx.doc, heading || (variant === "caption" ? "span" : "div"));
    node.dataset.variant = variant;
    /** @type {string | null} */
    let shown = null;
    ctx.bind(node, () => {
      const text = resolveText(c.props.text, scope);
      if (text === shown) return;
      shown = text;
      if (hasMarkdown(text)) renderMarkdown(node, text, { inline: Boolean(heading) || variant === "caption" });
      else node.textContent = text;
    });
    return node;
  },

  Image(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const node = media(c, scope, ctx, "image");
    const fit = pick(FIT, resolve(c.props.fit, scope));
    if (fit) node.style.setProperty("--gth-fit", fit);
    const variant = resolve(c.props.variant, scope);
    if (typeof variant === "string") node.dataset.variant = variant;
    return node;
  },

  Video: (/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) => media(c, scope, ctx, "video"),
  AudioPlayer: (/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) => media(c, scope, ctx, "audio"),

  Icon(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const node = el(ctx.doc, "span");
    node.setAttribute("role", "img");
    let shown = "";
    ctx.bind(node, () => {
      const name = resolve(c.props.name, scope);
      const key = JSON.stringify(name ?? null);
      if (key === shown) return;
      shown = key;
      const svgPath = name && typeof name === "object" ? /** @type {{ svgPath?: unknown }} */ (name).svgPath : undefined;
      if (typeof svgPath === "string") {
        if (!PATH_DATA.test(svgPath)) throw new Error("The icon's svgPath is not SVG path data.");
        node.dataset.icon = "svgPath";
        node.setAttribute("aria-label", resolveText(c.props.accessibility?.label, scope) || "icon");
        const svg = ctx.doc.createElementNS(SVG, "svg");
        svg.setAttribute("viewBox", "0 0 24 24");
        svg.setAttribute("width", "1em");
        svg.setAttribute("height", "1em");
        svg.setAttribute("aria-hidden", "true");
        const path = ctx.doc.createElementNS(SVG, "path");
        path.setAttribute("d", svgPath);
        path.setAttribute("fill", "currentColor");
        svg.append(path);
        node.replaceChildren(svg);
        return;
      }
      const text = typeof name === "string" ? name : "";
      node.dataset.icon = text;
      node.setAttribute("aria-label", text);
      node.textContent = pick(ICONS, text) ?? "•";
    });
    return node;
  },

  Row: (/** @type {any[]} */ ...a) => container(a[0], a[1], a[2], a[3], a[4]),
  Column: (/** @type {any[]} */ ...a) => container(a[0], a[1], a[2], a[3], a[4]),
  List(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx, /** @type {Set<string>} */ anc, /** @type {number} */ depth) {
    const node = container(c, scope, ctx, anc, depth);
    node.dataset.direction = resolve(c.props.direction, scope) === "horizontal" ? "horizontal" : "vertical";
    return node;
  },

  Card(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx, /** @type {Set<string>} */ anc, /** @type {number} */ depth) {
    const node = el(ctx.doc, "div");
    if (typeof c.props.child === "string") node.append(ctx.child(c.props.child, scope, anc, depth));
    else ctx.fillChildren(node, c.props.children, scope, anc, depth);
    return node;
  },

  Divider(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const node = el(ctx.doc, "hr");
    if (resolve(c.props.axis, scope) === "vertical") node.dataset.axis = "vertical";
    return node;
  },

  Tabs(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx, /** @type {Set<string>} */ anc, /** @type {number} */ depth) {
    const node = el(ctx.doc, "div");
    const bar = el(ctx.doc, "div", "gth-a2ui-tablist");
    bar.setAttribute("role", "tablist");
    const panel = el(ctx.doc, "div", "gth-a2ui-tabpanel");
    panel.setAttribute("role", "tabpanel");
    const tabs = Array.isArray(c.props.tabs) ? c.props.tabs : [];
    /** @type {any[]} */
    const buttons = [];
    const show = (/** @type {number} */ i) => {
      buttons.forEach((b, j) => b.setAttribute("aria-selected", String(i === j)));
      panel.replaceChildren();
      if (tabs[i] && typeof tabs[i].child === "string") panel.append(ctx.child(tabs[i].child, scope, anc, depth));
    };
    tabs.forEach((t, i) => {
      const b = el(ctx.doc, "button", "gth-a2ui-tab");
      b.setAttribute("type", "button");
      b.setAttribute("role", "tab");
      ctx.bind(b, () => {
        b.textContent = resolveText(t.title, scope) || `Tab ${i + 1}`;
      });
      b.addEventListener("click", () => show(i)); // local view state, not an agent action
      buttons.push(b);
      bar.append(b);
    });
    node.append(bar, panel);
    show(0);
    return node;
  },

  Modal(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx, /** @type {Set<string>} */ anc, /** @type {number} */ depth) {
    const node = el(ctx.doc, "div");
    const trigger = el(ctx.doc, "div", "gth-a2ui-modal-trigger");
    const content = el(ctx.doc, "div", "gth-a2ui-modal-content");
    content.setAttribute("role", "dialog");
    content.hidden = true;
    const close = el(ctx.doc, "button", "gth-a2ui-modal-close");
    close.setAttribute("type", "button");
    close.setAttribute("aria-label", "Close");
    close.textContent = "✕";
    close.addEventListener("click", () => (content.hidden = true));
    if (typeof c.props.trigger === "string") trigger.append(ctx.child(c.props.trigger, scope, anc, depth));
    if (typeof c.props.content === "string") content.append(close, ctx.child(c.props.content, scope, anc, depth));
    trigger.addEventListener("click", () => (content.hidden = false));
    node.append(trigger, content);
    return node;
  },
};
