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
