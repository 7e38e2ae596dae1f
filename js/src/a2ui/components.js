// Display and layout components of the basic catalog: Text, Image, Video, AudioPlayer, Icon,
// Row, Column, List, Card, Tabs, Modal, Divider. Each is `(component, scope, ctx, ancestors,
// depth) => Element`. Text goes in through textContent only; media through media.js's policy
// (`ctx.media`): a remote URL from an untrusted host shows a click-to-load placeholder.

import { mediaNode } from "../media.js";
import { resolve, resolveText } from "./resolve.js";

/** @typedef {import("./normalize.js").Component} Component */
/** @typedef {import("./resolve.js").Scope} Scope */

const JUSTIFY = { start: "flex-start", center: "center", end: "flex-end", spaceBetween: "space-between", spaceAround: "space-around", spaceEvenly: "space-evenly", stretch: "stretch" };
const ALIGN = { start: "flex-start", center: "center", end: "flex-end", stretch: "stretch" };
const HEADINGS = { h1: "h1", h2: "h2", h3: "h3", h4: "h4", h5: "h5" };
const FIT = { contain: "contain", cover: "cover", fill: "fill", none: "none", scaleDown: "scale-down" };
// A few common icon names as text glyphs; the rest show their name (no icon font to load).
const ICONS = {
  add: "+", check: "✓", close: "✕", delete: "🗑", edit: "✎", error: "⚠", warning: "⚠", info: "ℹ",
  search: "🔍", mail: "✉", phone: "☎", star: "★", starOff: "☆", favorite: "♥", home: "⌂",
  settings: "⚙", calendarToday: "📅", accountCircle: "👤", person: "👤", send: "➤", help: "?",
  arrowBack: "←", arrowForward: "→", refresh: "↻", share: "⤴", camera: "📷", photo: "🖼",
};

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
  const justify = /** @type {any} */ (JUSTIFY)[resolve(p.justify, scope)];
  const align = /** @type {any} */ (ALIGN)[resolve(p.align, scope)];
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
    const node = el(ctx.doc, /** @type {any} */ (HEADINGS)[variant] || "p");
    node.dataset.variant = variant;
    ctx.bind(node, () => {
      node.textContent = resolveText(c.props.text, scope);
    });
    return node;
  },

  Image(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const node = media(c, scope, ctx, "image");
    const fit = /** @type {any} */ (FIT)[resolve(c.props.fit, scope)];
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
    ctx.bind(node, () => {
      const name = resolve(c.props.name, scope);
      const key = typeof name === "string" ? name : "";
      node.dataset.icon = key;
      node.setAttribute("aria-label", key);
      node.textContent = /** @type {any} */ (ICONS)[key] ?? "•";
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
