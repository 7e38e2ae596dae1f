import { test } from "node:test";
import assert from "node:assert/strict";
import { parseHTML } from "linkedom";
import { renderMarkdown } from "../src/markdown.js";

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

test("images become links; unsafe image URLs are dropped", () => {
  const r = dom(renderMarkdown("![a cat](https://example.com/cat.png) ![x](javascript:alert(1))"));
  assert.equal(r.querySelector("img"), null);
  const links = [...r.querySelectorAll("a")];
  assert.equal(links.length, 1);
  assert.equal(links[0].textContent, "a cat");
});

test("ordinary Markdown renders", () => {
  const r = dom(renderMarkdown("# Title\n\n- **bold**\n- `code`\n\n```py\nprint(1)\n```"));
  assert.equal(r.querySelector("h1").textContent, "Title");
  assert.equal(r.querySelector("strong").textContent, "bold");
  assert.equal(r.querySelector("pre code").textContent.trim(), "print(1)");
});
