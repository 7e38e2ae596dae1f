// The "simple Markdown (without HTML, images, or links)" of the basic catalog's Text, built as
// DOM nodes: headings, paragraphs, bullet and numbered lists, **bold**, *italic*, ~~struck~~ and
// `code`. Every piece of agent text reaches the page through textContent; a link shows its text
// and an image its description, and raw HTML stays literal text.

const BLOCK_MARK = /^(#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s)/m;
const INLINE_MARK = /(\*\*|__|\*|_|~~|`|!?\[[^\]]*\]\([^)]*\))/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;

/** Whether `text` uses any Markdown this module renders (plain text stays one text node). */
export function hasMarkdown(/** @type {string} */ text) {
  return BLOCK_MARK.test(text) || INLINE_MARK.test(text);
}

/**
 * Fill `node` with `text` as Markdown. `inline`: no blocks (a heading or caption variant).
 * @param {any} node @param {string} text @param {{ inline?: boolean }} [opts]
 */
export function renderMarkdown(node, text, { inline = false } = {}) {
  const doc = node.ownerDocument;
  node.replaceChildren();
  if (inline || !BLOCK_MARK.test(text)) {
    const paras = inline ? [text] : text.split(/\n{2,}/);
    if (paras.length === 1) appendInline(doc, node, paras[0]);
    else for (const p of paras) appendInline(doc, node.appendChild(doc.createElement("p")), p);
    return;
  }
  /** @type {any} */
  let list = null;
  /** @type {string[]} */
  let para = [];
  const flush = () => {
    if (para.length) appendInline(doc, node.appendChild(doc.createElement("p")), para.join("\n"));
    para = [];
  };
  for (const line of text.split("\n")) {
    const h = HEADING.exec(line);
    const b = BULLET.exec(line);
    const n = NUMBERED.exec(line);
    if (h) {
      flush();
      list = null;
      appendInline(doc, node.appendChild(doc.createElement(`h${h[1].length}`)), h[2]);
    } else if (b || n) {
      flush();
      const tag = b ? "ul" : "ol";
      if (!list || list.tagName.toLowerCase() !== tag) {
        list = node.appendChild(doc.createElement(tag));
        if (n && n[1] !== "1") list.setAttribute("start", String(Number(n[1])));
      }
      appendInline(doc, list.appendChild(doc.createElement("li")), b ? b[1] : /** @type {RegExpExecArray} */ (n)[2]);
    } else if (!line.trim()) {
      flush();
      list = null;
    } else if (list && /^\s{2,}\S/.test(line)) {
      list.lastChild.append(doc.createTextNode(` ${line.trim()}`)); // a continued list item
    } else {
      list = null;
      para.push(line);
    }
  }
  flush();
}

/** Inline spans: code first (nothing inside it is markup), then links and emphasis. */
function appendInline(/** @type {Document} */ doc, /** @type {any} */ parent, /** @type {string} */ text, depth = 0) {
  const re = /`([^`\n]+)`|!\[([^\]]*)\]\([^)]*\)|\[([^\]]+)\]\([^)]*\)|\*\*(.+?)\*\*|__(.+?)__|~~(.+?)~~|\*([^*\s](?:[^*]*[^*\s])?)\*|\b_([^_\s](?:[^_]*[^_\s])?)_\b/gs;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > at) parent.append(doc.createTextNode(text.slice(at, m.index)));
    at = m.index + m[0].length;
    const [, code, alt, linkText, strong, strong2, struck, em, em2] = m;
    /** @type {[string, string] | null} */
    const span =
      code !== undefined ? ["code", code]
      : strong !== undefined || strong2 !== undefined ? ["strong", strong ?? strong2]
      : struck !== undefined ? ["s", struck]
      : em !== undefined || em2 !== undefined ? ["em", em ?? em2]
      : null;
    if (alt !== undefined) parent.append(doc.createTextNode(alt)); // images: their description only
    else if (linkText !== undefined) appendInline(doc, parent, linkText, depth + 1); // links: their text only
    else if (span) {
      const el = parent.appendChild(doc.createElement(span[0]));
      if (span[0] === "code" || depth > 4) el.textContent = span[1];
      else appendInline(doc, el, span[1], depth + 1);
    }
  }
  if (at < text.length) parent.append(doc.createTextNode(text.slice(at)));
}
