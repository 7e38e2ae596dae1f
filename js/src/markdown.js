// Markdown for assistant messages: markdown-it with raw HTML off, so agent text can never
// inject markup. URLs follow the one policy of media.js: links only to absolute http(s) or
// mailto:, in a new tab without an opener or referrer, with the real host shown when the text
// names another; images load only from trusted hosts or after a click on their placeholder.

import MarkdownIt from "markdown-it";
import { MediaPolicy, activateMedia, escapeHtml, hostOf, mediaHtml, safeLinkUrl } from "./media.js";

/**
 * @typedef {import("./media.js").MediaPolicy} Policy
 * @typedef {import("markdown-it").RendererRule} RendererRule
 */

const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });

// Which URLs become link or image tokens at all (markdown-it normalises them first); the rules
// below decide what each may do. Anything else stays as text.
md.validateLink = (/** @type {string} */ url) => /^(https?:|mailto:|data:image\/)/i.test(String(url).trim());

/** A link target: an absolute http(s) URL (see media.js) or mailto:, else null. */
function linkHref(/** @type {string} */ href) {
  if (/^mailto:/i.test(href.trim())) return href.trim();
  return safeLinkUrl(href);
}

/** The host a link's text claims, when its text looks like a URL or a domain name. */
function claimedHost(/** @type {string} */ text) {
  const t = text.trim();
  if (!/^(https?:\/\/)?[^\s/]+\.[a-z]{2,}(?=$|[/:?#])/i.test(t)) return "";
  return hostOf(/^https?:\/\//i.test(t) ? t : `http://${t}`);
}

/** @type {RendererRule} */
md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx];
  const href = linkHref(String(token.attrGet("href") ?? ""));
  if (!href) {
    // data: and anything not http(s)/mailto: an inert <a> (its text stays, nothing to follow).
    token.attrs = [];
    return self.renderToken(tokens, idx, options);
  }
  token.attrSet("href", href);
  token.attrSet("target", "_blank");
  token.attrSet("rel", "noopener noreferrer");
  token.attrSet("title", href);
  // [https://bank.example](https://evil.example): say where the link really goes.
  let text = "";
  let close = idx + 1;
  for (; close < tokens.length && tokens[close].type !== "link_close"; close++) text += tokens[close].content || "";
  const real = hostOf(href);
  const claimed = claimedHost(text);
  if (close < tokens.length && claimed && real && claimed !== real) tokens[close].meta = { realHost: real };
  return self.renderToken(tokens, idx, options);
};

/** @type {RendererRule} */
md.renderer.rules.link_close = (tokens, idx, options, _env, self) => {
  const real = tokens[idx].meta?.realHost;
  const html = self.renderToken(tokens, idx, options);
  return real ? `${html}<span class="gth-link-host" title="The link goes to ${escapeHtml(real)}">(${escapeHtml(real)})</span>` : html;
};

/** @type {RendererRule} */
md.renderer.rules.image = (tokens, idx, _options, env) => {
  const token = tokens[idx];
  const alt = token.children?.map((t) => t.content).join("") || "";
  // `env` is what renderMarkdown passes: `{policy}`.
  const policy = /** @type {Policy | undefined} */ (env?.policy);
  return mediaHtml(String(token.attrGet("src") ?? ""), { kind: "image", alt, policy });
};

/** Markdown source to safe HTML; images follow `policy` (default: no trusted host). */
export function renderMarkdown(/** @type {string} */ text, /** @type {Policy | undefined} */ policy = undefined) {
  return md.render(String(text ?? ""), { policy });
}

/** Let a person's click on an image placeholder inside `el` load it (once per element). */
function listen(/** @type {HTMLElement} */ el, /** @type {Policy} */ policy) {
  const any = /** @type {any} */ (el);
  if (any.gthMediaPolicy === policy) return;
  if (!any.gthMediaPolicy) el.addEventListener("click", (event) => activateMedia(event, any.gthMediaPolicy));
  any.gthMediaPolicy = policy;
}

/** Paint Markdown into an element (the HTML comes only from markdown-it with html: false). */
export function setMarkdown(/** @type {HTMLElement} */ el, /** @type {string} */ text, policy = new MediaPolicy()) {
  listen(el, policy);
  el.innerHTML = renderMarkdown(text, policy);
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LIST_ITEM = /^([-+*]|\d{1,9}[.)])(\s|$)/;
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]]+\]:/m;

/**
 * Where `text` can be cut (at `from`, itself a cut, or later) so that the Markdown before the
 * cut renders exactly as it does within the whole: the start of a line that follows a blank
 * line outside fenced code, is not indented (it cannot continue a list item or an indented
 * code block) and does not start a list item (a list with blank lines between its items is one
 * loose list). A reference definition can change any block before it, so text that has one is
 * never cut (0).
 */
export function stableCut(/** @type {string} */ text, from = 0) {
  // Before `from` there is none (it would have stopped every cut), so only the rest is read.
  if (REFERENCE_DEFINITION.test(from ? text.slice(from) : text)) return 0;
  let cut = from;
  /** @type {string | null} */
  let fence = null;
  let afterBlank = false;
  for (let pos = from; pos < text.length; ) {
    const end = text.indexOf("\n", pos);
    if (end < 0) break; // the last line is still being written
    const line = text.slice(pos, end);
    if (fence) {
      const close = FENCE.exec(line);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length && !line.slice(close[0].length).trim()) fence = null;
      afterBlank = false;
    } else {
      if (afterBlank && line && !/^\s/.test(line) && !LIST_ITEM.test(line)) cut = pos;
      const open = FENCE.exec(line);
      if (open) fence = open[1];
      afterBlank = !open && !line.trim();
    }
    pos = end + 1;
  }
  return cut;
}

/** Kept blocks per `gth-md-chunk` box (see MarkdownStream). */
export const CHUNK_BLOCKS = 64;

/**
 * Streamed Markdown painted block by block: the blocks before the last `stableCut` are rendered
 * once and kept, and only the rest is rendered again on each paint. Re-rendering the whole reply
 * every frame would cost more per frame the longer the reply grows (markdown-it, then a layout
 * of every block), until frames take longer than a frame.
 *
 * The kept blocks after the first `CHUNK_BLOCKS` go into plain `<div class="gth-md-chunk">`
 * boxes of `CHUNK_BLOCKS` blocks each: the browser lays out a block's children one by one
 * whenever one of them changes, so with every paragraph of a 100,000-token answer a child of
 * the message, each paint (the tail replaced, the view scrolled) cost a layout of ~2,000
 * children; in boxes it costs a few dozen. A plain box adds no margin or padding (the blocks'
 * margins collapse through it), and the first block stays the first child, so the message
 * looks the same; without the boxes the HTML is that of rendering the text whole.
 */
export class MarkdownStream {
  /** @param {HTMLElement} el @param {Policy} [policy] which images load (shared by the view) */
  constructor(el, policy = new MediaPolicy()) {
    this.el = el;
    this.policy = policy;
    listen(el, policy);
    this.text = "";
    this.cut = 0;
    /** @type {ChildNode[]} the nodes after the cut */
    this.tail = [];
    /** @type {HTMLElement | null} the box kept blocks go into (null: the element itself) */
    this.box = null;
    /** kept blocks in `box` (or, before the first box, in the element) */
    this.boxBlocks = 0;
  }

  #resetBoxes() {
    this.box = null;
    this.boxBlocks = 0;
  }

  /** Keep rendered blocks: into the element at first, then into boxes of CHUNK_BLOCKS. */
  #keep(/** @type {DocumentFragment} */ frag) {
    for (const node of [...frag.childNodes]) {
      if (node.nodeType === 1 && this.boxBlocks >= CHUNK_BLOCKS) {
        this.box = this.el.ownerDocument.createElement("div");
        this.box.className = "gth-md-chunk";
        this.el.append(this.box);
        this.boxBlocks = 0;
      }
      (this.box ?? this.el).append(node);
      if (node.nodeType === 1) this.boxBlocks += 1;
    }
  }

  /** Paint `text`, which usually extends the text painted before. */
  set(/** @type {string} */ text) {
    text = String(text ?? "");
    let cut = text.startsWith(this.text) ? stableCut(text, this.cut) : 0;
    if (cut < this.cut) {
      this.el.replaceChildren();
      this.tail = [];
      this.cut = 0;
      this.#resetBoxes();
      cut = stableCut(text, 0);
    }
    for (const node of this.tail) node.remove();
    if (cut > this.cut) {
      this.#keep(fragment(this.el, renderMarkdown(text.slice(this.cut, cut), this.policy)));
      this.cut = cut;
    }
    const tail = fragment(this.el, renderMarkdown(text.slice(cut), this.policy));
    this.tail = [...tail.childNodes];
    this.el.append(tail);
    this.text = text;
  }
}

/** HTML (from markdown-it only) to nodes. */
function fragment(/** @type {HTMLElement} */ el, /** @type {string} */ html) {
  const template = el.ownerDocument.createElement("template");
  template.innerHTML = html;
  return template.content;
}
