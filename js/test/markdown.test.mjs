import { test } from "node:test";
import assert from "node:assert/strict";
import { parseHTML } from "linkedom";
import { CHUNK_BLOCKS, MarkdownStream, renderMarkdown, stableCut } from "../src/markdown.js";

const dom = (html) => {
  const { document } = parseHTML("<html><body><div id=r></div></body></html>");
  const r = document.getElementById("r");
  r.innerHTML = html;
  return r;
};

test("raw HTML is escaped, never parsed", () => {
  const html = renderMarkdown('hello <script>alert(1)</script> <img src=x onerror="alert(2)"> <b>b</b>');
  const r = dom(html);
  assert.equal(r.querySelector("script"), null);
  assert.equal(r.querySelector("img"), null);
  assert.equal(r.querySelector("b"), null);
  assert.match(r.textContent, /<script>alert\(1\)<\/script>/);
});

test("javascript: and other non-http links are not links", () => {
  for (const bad of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html;base64,PHNjcmlwdD4=", "vbscript:x", "file:///etc/passwd"]) {
    const r = dom(renderMarkdown(`[click](${bad})`));
    assert.equal(r.querySelector("a"), null, bad);
  }
});

test("http(s) and mailto links open in a new tab without an opener; bare URLs are linkified", () => {
  const r = dom(renderMarkdown("[docs](https://example.com/a) and mailto:me@example.com and www.example.org"));
  const links = [...r.querySelectorAll("a")];
  assert.ok(links.length >= 2);
  for (const a of links) {
    assert.equal(a.getAttribute("target"), "_blank");
    assert.equal(a.getAttribute("rel"), "noopener noreferrer");
    assert.match(a.getAttribute("href"), /^(https?:|mailto:)/);
  }
});

test("remote images become click-to-load placeholders; unsafe image URLs are dropped", () => {
  const r = dom(renderMarkdown("![a cat](https://example.com/cat.png) ![x](javascript:alert(1))"));
  assert.equal(r.querySelector("img"), null);
  assert.equal(r.querySelector("a"), null);
  const placeholders = [...r.querySelectorAll(".gth-media-placeholder")];
  assert.equal(placeholders.length, 1);
  assert.match(placeholders[0].textContent, /a cat/);
  assert.match(placeholders[0].textContent, /example\.com/);
});

test("ordinary Markdown renders", () => {
  const r = dom(renderMarkdown("# Title\n\n- **bold**\n- `code`\n\n```py\nprint(1)\n```"));
  assert.equal(r.querySelector("h1").textContent, "Title");
  assert.equal(r.querySelector("strong").textContent, "bold");
  assert.equal(r.querySelector("pre code").textContent.trim(), "print(1)");
});

const DOCS = [
  "# Title\n\nA paragraph with **bold** and `code`.\n\nAnother one\nover two lines.\n\n## Next\n\nText.",
  "- one\n- two\n\n- three (a loose list now)\n\n1. first\n2. second\n\n3. third\n\nAfter the list.",
  "- item\n\n  continued in the item\n\n      indented code in the item\n\nOutside.",
  "```py\ndef f():\n\n    return 1\n```\n\nText after.\n\n~~~\n```\nnot closed by backticks\n\nstill code\n~~~\n\nDone.",
  "    indented code\n\n    still the same block\n\nparagraph",
  "> quoted\n\n> another quote\n\nplain\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nend",
  "See [the docs][d] and [more][m].\n\nMiddle paragraph.\n\n[d]: https://example.com/d\n[m]: https://example.com/m\n\nTail.",
  "Setext heading\n==============\n\nText\n\n***\n\n* star item\n\n+ plus item\n\n10) paren item",
];

test("MarkdownStream: painting a growing text gives the HTML of rendering it whole, at every step", () => {
  for (const doc of DOCS) {
    const r = dom("");
    const stream = new MarkdownStream(r);
    const whole = dom("");
    for (let n = 1; n <= doc.length; n += 1 + (n % 3)) {
      const prefix = doc.slice(0, n);
      stream.set(prefix);
      whole.innerHTML = renderMarkdown(prefix);
      assert.equal(r.innerHTML, whole.innerHTML, `at ${n} of ${JSON.stringify(doc)}`);
    }
    stream.set(doc);
    whole.innerHTML = renderMarkdown(doc);
    assert.equal(r.innerHTML, whole.innerHTML);
  }
});

test("MarkdownStream: finished blocks are kept, only the tail is rendered again", () => {
  const r = dom("");
  const stream = new MarkdownStream(r);
  stream.set("First paragraph.\n\nSecond\nparagraph");
  const first = r.querySelector("p");
  assert.equal(stream.cut, "First paragraph.\n\n".length);
  stream.set("First paragraph.\n\nSecond\nparagraph, longer.");
  assert.equal(r.querySelector("p"), first); // the same node: not rendered again
  assert.equal(r.querySelectorAll("p").length, 2);
  stream.set("Something else"); // not an extension: painted from scratch
  assert.equal(r.textContent.trim(), "Something else");
});

test("MarkdownStream: a long answer's kept blocks go into boxes; it reads as rendering it whole", () => {
  const r = dom("");
  const stream = new MarkdownStream(r);
  let text = "";
  for (let i = 1; i <= 1000; i++) {
    text += `Paragraph ${i} with **bold** words.\n\n`;
    if (i % 7 === 0) stream.set(text);
  }
  text += "The end, still being written";
  stream.set(text);
  // Few children, however long the answer: the first blocks, boxes of CHUNK_BLOCKS, the tail.
  assert.ok(r.children.length <= CHUNK_BLOCKS + 1000 / CHUNK_BLOCKS + 2, `${r.children.length} children`);
  assert.equal(r.firstElementChild.tagName, "P");
  assert.equal(r.lastElementChild.textContent, "The end, still being written");
  for (const box of r.querySelectorAll(".gth-md-chunk")) assert.ok(box.children.length <= CHUNK_BLOCKS);
  // Without the boxes, the HTML is that of the whole text rendered at once.
  for (const box of [...r.querySelectorAll(".gth-md-chunk")]) box.replaceWith(...box.childNodes);
  const whole = dom("");
  whole.innerHTML = renderMarkdown(text);
  assert.equal(r.innerHTML, whole.innerHTML);
});

test("stableCut: after a blank line, outside fences, not before indented or list lines", () => {
  assert.equal(stableCut("a\n\nb\n"), 3);
  assert.equal(stableCut("a\n\nb"), 0); // the last line is still being written
  assert.equal(stableCut("```\na\n\nb\n"), 0);
  assert.equal(stableCut("- a\n\n- b\n"), 0);
  assert.equal(stableCut("a\n\n  b\n"), 0);
  assert.equal(stableCut("a\n\n[x]: https://e.com\n\nb\n"), 0);
});
