// Markdown for assistant messages: markdown-it with raw HTML off, so agent text can never
// inject markup. Links are limited to http(s)/mailto and open in a new tab without an opener;
// images become links, so a reply cannot load remote pixels (tracking beacons) by itself.

import MarkdownIt from "markdown-it";

const SAFE_LINK = /^(https?:|mailto:)/i;

const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });

// markdown-it normalises the URL before asking; anything but http(s)/mailto is left as text.
md.validateLink = (url) => SAFE_LINK.test(String(url).trim());

const defaultLinkOpen =
  md.renderer.rules.link_open || ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  token.attrSet("target", "_blank");
  token.attrSet("rel", "noopener noreferrer");
  return defaultLinkOpen(tokens, idx, options, env, self);
};

md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx];
  const src = token.attrGet("src") || "";
  const alt = token.children?.map((t) => t.content).join("") || src;
  const esc = md.utils.escapeHtml;
  return `<a href="${esc(src)}" target="_blank" rel="noopener noreferrer" class="gth-md-image-link">${esc(alt)}</a>`;
};

/** Markdown source to safe HTML. */
export function renderMarkdown(/** @type {string} */ text) {
  return md.render(String(text ?? ""));
}

/** Paint Markdown into an element (the HTML comes only from markdown-it with html: false). */
export function setMarkdown(/** @type {HTMLElement} */ el, /** @type {string} */ text) {
  el.innerHTML = renderMarkdown(text);
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

/**
 * Streamed Markdown painted block by block: the blocks before the last `stableCut` are rendered
 * once and kept, and only the rest is rendered again on each paint. Re-rendering the whole reply
 * every frame would cost more per frame the longer the reply grows (markdown-it, then a layout
 * of every block), until frames take longer than a frame. The result is the same HTML.
 */
export class MarkdownStream {
  /** @param {HTMLElement} el */
  constructor(el) {
    this.el = el;
    this.text = "";
    this.cut = 0;
    /** @type {ChildNode[]} the nodes after the cut */
    this.tail = [];
  }

  /** Paint `text`, which usually extends the text painted before. */
  set(/** @type {string} */ text) {
    text = String(text ?? "");
    let cut = text.startsWith(this.text) ? stableCut(text, this.cut) : 0;
    if (cut < this.cut) {
      this.el.replaceChildren();
      this.tail = [];
      this.cut = 0;
      cut = stableCut(text, 0);
    }
    for (const node of this.tail) node.remove();
    if (cut > this.cut) {
      this.el.append(fragment(this.el, renderMarkdown(text.slice(this.cut, cut))));
      this.cut = cut;
    }
    const tail = fragment(this.el, renderMarkdown(text.slice(cut)));
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
