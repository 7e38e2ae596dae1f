// Every example that @a2ui/web_core ships for the v0.9 basic and minimal catalogs, rendered by
// our renderer straight from the installed package (nothing copied here). Each example must
// paint without an error or placeholder, show every component reachable on first paint, show
// its literal and bound texts, evaluate every formatString (no "${" left on screen), and a few
// show exactly the formatted values a reader would see (en-US, UTC).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { A2uiHost } from "../src/a2ui/host.js";
import { getAt } from "../src/a2ui/pointer.js";
import { makeDom } from "../test-support/dom.mjs";

const V09 = dirname(fileURLToPath(import.meta.resolve("@a2ui/web_core/v0_9")));
const CATALOGS = join(V09, "schemas", "catalogs");

function examples(catalog) {
  const dir = join(CATALOGS, catalog, "examples");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({ file: `${catalog}/${f}`, ...JSON.parse(readFileSync(join(dir, f), "utf8")) }));
}

const ALL = [...examples("basic"), ...examples("minimal")];

function render(messages) {
  const { window, document } = makeDom();
  const box = document.createElement("div");
  document.body.append(box);
  const host = new A2uiHost({ doc: document, onAction: () => {}, locale: "en-US", timeZone: "UTC" });
  const result = host.ingest(messages, box);
  return { window, document, box, result };
}

/** The final component map and data model of each surface, as the messages leave them. */
function model(messages) {
  const surfaces = new Map();
  for (const m of messages) {
    const body = m.createSurface ?? m.updateComponents ?? m.updateDataModel;
    if (!body) continue;
    if (!surfaces.has(body.surfaceId)) surfaces.set(body.surfaceId, { components: new Map(), data: {} });
    const s = surfaces.get(body.surfaceId);
    if (m.updateComponents) for (const c of m.updateComponents.components) s.components.set(c.id, c);
    if (m.updateDataModel) {
      const path = m.updateDataModel.path ?? "/";
      if (path === "/") s.data = structuredClone(m.updateDataModel.value);
      else {
        const parts = path.split("/").filter(Boolean);
        let node = s.data;
        for (const p of parts.slice(0, -1)) node = node[p] ??= {};
        node[parts.at(-1)] = structuredClone(m.updateDataModel.value);
      }
    }
  }
  return surfaces;
}

/** Component ids on screen at first paint: all but the children of tabs not selected. */
function reachable(s) {
  const out = new Set();
  const visit = (id) => {
    const c = s.components.get(id);
    if (!c || out.has(id)) return;
    out.add(id);
    if (Array.isArray(c.children)) c.children.forEach(visit);
    else if (c.children?.componentId) {
      const list = c.children.path?.startsWith("/") ? getAt(s.data, c.children.path) : [1];
      if (list && Object.keys(list).length) visit(c.children.componentId);
    }
    for (const k of ["child", "trigger", "content"]) if (typeof c[k] === "string") visit(c[k]);
    if (Array.isArray(c.tabs) && c.tabs[0]) visit(c.tabs[0].child);
  };
  visit("root");
  return out;
}

/** Whether every absolute binding inside `v` has data (a call over empty inputs may give ""). */
function hasData(v, data) {
  if (Array.isArray(v)) return v.every((x) => hasData(x, data));
  if (!v || typeof v !== "object") return true;
  if (typeof v.path === "string") return !v.path.startsWith("/") || getAt(data, v.path) !== undefined;
  return Object.values(v).every((x) => hasData(x, data));
}

const squash = (t) => t.replace(/\s+/g, " ").trim();
const MARKDOWN = /[*_`#[]|\n/;

test("the package ships the examples this suite renders", () => {
  assert.ok(examples("basic").length >= 37, `basic examples: ${examples("basic").length}`);
  assert.ok(examples("minimal").length >= 7, `minimal examples: ${examples("minimal").length}`);
});

for (const ex of ALL) {
  test(`example ${ex.file} (${ex.name}) renders`, () => {
    const { box, result } = render(ex.messages);
    assert.deepEqual(result.errors, []);
    const surfaces = model(ex.messages);
    for (const [sid, s] of surfaces) {
      const el = box.querySelector(`.gth-a2ui-surface[data-surface-id="${sid}"]`);
      assert.ok(el, `surface ${sid} is on screen`);
      const errors = [...el.querySelectorAll(".gth-a2ui-error, .gth-a2ui-unsupported")].map((n) => n.textContent);
      assert.deepEqual(errors, [], `${sid}: no errors or placeholders`);
      const text = squash(el.textContent);
      assert.doesNotMatch(text, /\$\{/, "every interpolation is evaluated");
      for (const id of reachable(s)) {
        const c = s.components.get(id);
        const node = el.querySelector(`[data-component-id="${id}"]`);
        assert.ok(node, `${sid}/${id} (${c.component}) is on screen`);
        assert.ok(node.classList.contains(`gth-a2ui-${c.component.toLowerCase()}`), `${id} is a ${c.component}`);
        if (c.component === "Text" && typeof c.text === "string" && !MARKDOWN.test(c.text)) {
          assert.equal(squash(node.textContent), squash(c.text), `${id} shows its text`);
        }
        if (c.component === "Text" && c.text?.path?.startsWith("/")) {
          const v = getAt(s.data, c.text.path);
          if (v !== undefined && v !== null && typeof v !== "object") assert.equal(node.textContent, String(v), `${id} shows ${c.text.path}`);
        }
        if (c.component === "Text" && c.text?.call && hasData(c.text, s.data)) {
          assert.notEqual(node.textContent, "", `${id} shows what ${c.text.call} gives`);
        }
        if (c.component === "Button") assert.equal(node.tagName.toLowerCase(), "button");
        if (["Image", "Video", "AudioPlayer"].includes(c.component) && typeof c.url === "string") {
          const media = node.querySelector(".gth-media-placeholder, img, video, audio, .gth-media-blocked");
          assert.ok(media, `${id} shows its media or a placeholder`);
          if (media.classList.contains("gth-media-placeholder")) assert.equal(media.dataset.gthSrc, new URL(c.url).href);
        }
        if (["TextField", "CheckBox", "Slider", "DateTimeInput"].includes(c.component)) {
          assert.ok(node.querySelector("input, textarea"), `${id} is an input`);
        }
      }
    }
  });
}

test("examples show formatted currency, numbers, dates and plurals as a reader expects (en-US, UTC)", () => {
  const ex = (file) => ALL.find((e) => e.file === file);
  const texts = (file) => squash(render(ex(file).messages).box.textContent);
  assert.match(texts("basic/05_product-card.json"), /\$\d[\d,]*\.\d\d/);
  assert.match(texts("basic/05_product-card.json"), /\(\d[\d,]* reviews?\)/);
  assert.match(texts("basic/15_account-balance.json"), /\$\d{1,3}(,\d{3})*\.\d\d/);
  assert.match(texts("basic/12_chat-message.json"), /\d{1,2}:\d\d (AM|PM)/);
  assert.match(texts("basic/17_event-detail.json"), /(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2} • \d{1,2}:\d\d (AM|PM) - \d{1,2}:\d\d (AM|PM)/);
  assert.match(texts("basic/16_workout-summary.json"), /\d/);
});

test("the minimal catalog's capitalize follows what is typed", () => {
  const ex = ALL.find((e) => e.file === "minimal/6_capitalized_text.json");
  const { window, box } = render(ex.messages);
  const input = box.querySelector("[data-component-id=input_field] input");
  input.value = "hello world";
  input.dispatchEvent(new window.Event("input", { bubbles: true }));
  assert.equal(box.querySelector("[data-component-id=result_text]").textContent, "Hello world");
});

test("formatString follows what is typed (basic Formatted Text)", () => {
  const ex = ALL.find((e) => e.file === "basic/00_formatted-text.json");
  const { window, box } = render(ex.messages);
  const input = box.querySelector("[data-component-id=input_field] input");
  input.value = "<b>hi</b>";
  input.dispatchEvent(new window.Event("input", { bubbles: true }));
  const out = box.querySelector("[data-component-id=result_text]");
  assert.equal(out.textContent, "You typed: <b>hi</b>");
  assert.equal(out.querySelector("b"), null);
});

test("Markdown text: headings, emphasis and lists as elements; the link as its text only", () => {
  const ex = ALL.find((e) => e.file === "basic/35_markdown-text.json");
  const { box } = render(ex.messages);
  const md = box.querySelector("[data-component-id=markdown-content]");
  assert.equal(md.querySelector("h1").textContent, "Heading 1");
  assert.equal(md.querySelector("strong").textContent, "bold");
  assert.equal(md.querySelector("em").textContent, "italic");
  assert.deepEqual([...md.querySelectorAll("li")].map((li) => li.textContent), ["List item 1", "List item 2"]);
  assert.equal(md.querySelector("a"), null);
  assert.match(md.textContent, /Link to Google/);
  assert.doesNotMatch(md.textContent, /google\.com/);
});

test("checks on inputs show their messages once typed into, and a failing check disables the Button (advanced form validator)", () => {
  const ex = ALL.find((e) => e.file === "basic/32_advanced-form-validator.json");
  const { window, box } = render(ex.messages);
  const visible = () => [...box.querySelectorAll(".gth-a2ui-invalid")].filter((n) => !n.hidden).map((n) => n.textContent);
  const submit = box.querySelector("button.gth-a2ui-button");
  assert.deepEqual(visible(), []); // an empty form opens without complaints…
  assert.equal(submit.disabled, true); // …but cannot be sent
  const email = [...box.querySelectorAll(".gth-a2ui-textfield")].find((n) => /email/i.test(n.textContent)).querySelector("input");
  email.value = "not-an-address";
  email.dispatchEvent(new window.Event("input", { bubbles: true }));
  assert.ok(visible().some((t) => /email/i.test(t)), visible().join(" | "));
  assert.equal(email.getAttribute("aria-invalid"), "true");
  email.value = "jane@example.com";
  email.dispatchEvent(new window.Event("input", { bubbles: true }));
  assert.ok(!visible().some((t) => /email/i.test(t)));
  assert.equal(email.getAttribute("aria-invalid"), null);
});

