import { test } from "node:test";
import assert from "node:assert/strict";
import { normalize } from "../src/a2ui/normalize.js";
import { mountSurface } from "../src/a2ui/render.js";
import { A2uiHost } from "../src/a2ui/host.js";
import { makeDom, click, fire } from "../test-support/dom.mjs";
import { GS_FORM } from "../test-support/fixtures.mjs";

const v9 = (surfaceId, components, data) => [
  { version: "v0.9", createSurface: { surfaceId, catalogId: "basic" } },
  { version: "v0.9", updateComponents: { surfaceId, components } },
  ...(data ? [{ version: "v0.9", updateDataModel: { surfaceId, path: "/", value: data } }] : []),
];

function mount(messages, opts = {}) {
  const { window, document } = makeDom();
  const actions = [];
  const { surfaces } = normalize(messages);
  const view = mountSurface(surfaces[0], { doc: document, onAction: (a) => actions.push(a), ...opts });
  document.body.append(view.el);
  return { window, document, el: view.el, actions, surface: surfaces[0] };
}

test("a <script> string in Text stays text", () => {
  const { el } = mount(v9("s", [{ id: "root", component: "Text", text: "<script>alert(1)</script><img src=x onerror=alert(2)>" }]));
  assert.equal(el.querySelector("script"), null);
  assert.equal(el.querySelector("img"), null);
  assert.equal(el.querySelector("[data-component-id=root]").textContent, "<script>alert(1)</script><img src=x onerror=alert(2)>");
});

test("image URLs: data:image renders, http(s) waits for a click; javascript:, relative, data:text/html, svg dropped", () => {
  const urls = {
    ok1: "https://example.com/a.png",
    ok2: "data:image/png;base64,iVBORw0KGgo=",
    bad1: "javascript:alert(1)",
    bad2: "//evil.example/x.png",
    bad3: "x.png",
    bad4: "data:text/html;base64,PHNjcmlwdD4=",
    bad5: "data:image/svg+xml,<svg onload=alert(1)>",
    bad6: " JAVASCRIPT:alert(1)",
  };
  const comps = [{ id: "root", component: "Column", children: Object.keys(urls) }, ...Object.entries(urls).map(([id, url]) => ({ id, component: "Image", url }))];
  const { el } = mount(v9("s", comps));
  const box = (id) => el.querySelector(`[data-component-id=${id}]`);
  assert.equal(box("ok1").querySelector("img"), null);
  assert.equal(box("ok1").querySelector(".gth-media-placeholder").dataset.gthSrc, "https://example.com/a.png");
  assert.equal(box("ok2").querySelector("img").getAttribute("src"), urls.ok2);
  for (const id of Object.keys(urls).filter((k) => k.startsWith("bad"))) {
    assert.equal(box(id).querySelector("img, button"), null, id);
    assert.ok(box(id).querySelector(".gth-media-blocked"), id);
  }
});

test("openUrl runs only for http(s) and only from a trusted click", () => {
  const opened = [];
  const comps = [
    { id: "root", component: "Row", children: ["good", "evil"] },
    { id: "good", component: "Button", label: "Docs", action: { functionCall: { call: "openUrl", args: { url: "https://example.com" } } } },
    { id: "evil", component: "Button", label: "Evil", action: { functionCall: { call: "openUrl", args: { url: "javascript:alert(1)" } } } },
  ];
  const { window, el, actions } = mount(v9("s", comps), { openUrl: (u) => opened.push(u) });
  click(window, el.querySelector("[data-component-id=good]"), { trusted: false });
  assert.deepEqual(opened, []);
  click(window, el.querySelector("[data-component-id=good]"));
  click(window, el.querySelector("[data-component-id=evil]"));
  assert.deepEqual(opened, ["https://example.com/"]);
  assert.deepEqual(actions, []); // local functions send nothing to the agent
});

test("actions are ignored when isTrusted is false", () => {
  const { window, el, actions } = mount(GS_FORM);
  const button = el.querySelector("button[data-component-id=send]");
  click(window, button, { trusted: false });
  assert.equal(actions.length, 0);
  click(window, button);
  assert.equal(actions.length, 1);
});

test("Gaunt Sloth form: label button, typed TextField value collected by component id", () => {
  const { window, el, actions, surface } = mount(GS_FORM, { now: () => new Date("2026-03-01T10:00:00Z") });
  assert.equal(el.querySelector("h2").textContent, "New email");
  const button = el.querySelector("button[data-component-id=send]");
  assert.equal(button.textContent, "Send");
  const input = el.querySelector("[data-component-id=to] input");
  input.value = "ana@example.com";
  fire(window, input, "input");
  assert.equal(surface.data.to, "ana@example.com");
  click(window, button);
  assert.deepEqual(actions[0], {
    actionName: "send_email",
    sourceComponentId: "send",
    surfaceId: "email",
    timestamp: "2026-03-01T10:00:00.000Z",
    context: { to: "ana@example.com" },
  });
});

test("action context is resolved from the data model (absolute and template-relative paths)", () => {
  const comps = [
    { id: "root", component: "List", children: { componentId: "item", path: "/people" } },
    { id: "item", component: "Button", child: "label", action: { event: { name: "pick", context: { name: { path: "name" }, team: { path: "/team" }, fixed: 7 } } } },
    { id: "label", component: "Text", text: { path: "name" } },
  ];
  const { window, el, actions } = mount(v9("t", comps, { team: "blue", people: [{ name: "Ana" }, { name: "Bo" }] }));
  const buttons = el.querySelectorAll("button[data-component-id=item]");
  assert.equal(buttons.length, 2);
  assert.deepEqual([...buttons].map((b) => b.textContent), ["Ana", "Bo"]);
  click(window, buttons[1]);
  assert.equal(actions[0].actionName, "pick");
  assert.deepEqual(actions[0].context, { name: "Bo", team: "blue", fixed: 7 });
});

test("two-way binding: an input updates every Text bound to the same path", () => {
  const comps = [
    { id: "root", component: "Column", children: ["name", "echo", "agree", "agreeText", "size", "choice"] },
    { id: "name", component: "TextField", label: "Name", value: { path: "/form/name" } },
    { id: "echo", component: "Text", text: { path: "/form/name" } },
    { id: "agree", component: "CheckBox", label: "Agree", value: { path: "/form/agree" } },
    { id: "agreeText", component: "Text", text: { path: "/form/agree" } },
    { id: "size", component: "Slider", value: { path: "/form/size" }, min: 1, max: 10 },
    { id: "choice", component: "ChoicePicker", options: [{ label: "Red", value: "r" }, { label: "Green", value: "g" }], value: { path: "/form/colors" } },
  ];
  const { window, el, surface } = mount(v9("b", comps, { form: { name: "Ana", agree: false, size: 3, colors: ["g"] } }));
  const input = el.querySelector("[data-component-id=name] input");
  assert.equal(input.value, "Ana");
  input.value = "Bea";
  fire(window, input, "input");
  assert.equal(el.querySelector("[data-component-id=echo]").textContent, "Bea");
  const box = el.querySelector("[data-component-id=agree] input");
  box.checked = true;
  fire(window, box, "change");
  assert.equal(surface.data.form.agree, true);
  assert.equal(el.querySelector("[data-component-id=agreeText]").textContent, "true");
  const slider = el.querySelector("[data-component-id=size] input");
  assert.equal(slider.value, "3");
  slider.value = "7";
  fire(window, slider, "input");
  assert.equal(surface.data.form.size, 7);
  const opts = el.querySelectorAll("[data-component-id=choice] input");
  assert.deepEqual([...opts].map((o) => o.checked), [false, true]);
  opts[0].checked = true;
  fire(window, opts[0], "change");
  assert.deepEqual(surface.data.form.colors, ["r", "g"]);
});

test("templates follow the list: a data update adds rows", () => {
  const { document } = makeDom();
  const host = new A2uiHost({ doc: document, onAction: () => {} });
  const box = document.createElement("div");
  document.body.append(box);
  host.ingest(v9("l", [
    { id: "root", component: "List", children: { componentId: "row", path: "/items" } },
    { id: "row", component: "Text", text: { path: "title" } },
  ], { items: [{ title: "one" }] }), box);
  const texts = () => [...box.querySelectorAll("[data-component-id=row]")].map((n) => n.textContent);
  assert.deepEqual(texts(), ["one"]);
  host.ingest([{ version: "v0.9", updateDataModel: { surfaceId: "l", path: "/items/1", value: { title: "two" } } }], box);
  assert.deepEqual(texts(), ["one", "two"]);
  assert.equal(box.querySelectorAll(".gth-a2ui-surface").length, 1); // repainted in place
  host.ingest([{ version: "v0.9", deleteSurface: { surfaceId: "l" } }], box);
  assert.equal(box.querySelectorAll(".gth-a2ui-surface").length, 0);
});

test("one bad component shows an inline error, an unknown one a labelled placeholder; its siblings still render", () => {
  const comps = [
    { id: "root", component: "Column", children: ["a", "bad", "missing", "weird", "b"] },
    { id: "a", component: "Text", text: "before" },
    { id: "bad", component: "Button", label: "x", action: { event: {} } },
    { id: "weird", component: "Marquee", text: "nope" },
    { id: "b", component: "Text", text: "after" },
  ];
  const { el } = mount(v9("e", comps));
  assert.equal(el.querySelector("[data-component-id=a]").textContent, "before");
  assert.equal(el.querySelector("[data-component-id=b]").textContent, "after");
  const errors = [...el.querySelectorAll(".gth-a2ui-error")].map((n) => n.textContent);
  assert.ok(errors.some((t) => /bad: .*no name/.test(t)), errors.join(" | "));
  assert.ok(errors.some((t) => /missing: Missing component/.test(t)));
  const weird = el.querySelector(".gth-a2ui-unsupported[data-component-id=weird]");
  assert.equal(weird.dataset.type, "Marquee");
  assert.match(weird.textContent, /Unsupported component: Marquee/);
});

test("cycles and runaway templates are cut off", () => {
  const { el } = mount(v9("c", [
    { id: "root", component: "Column", children: ["loop"] },
    { id: "loop", component: "Card", child: "root" },
  ]));
  assert.ok([...el.querySelectorAll(".gth-a2ui-error")].some((n) => /contains itself/.test(n.textContent)));
  const big = mount(v9("big", [
    { id: "root", component: "List", children: { componentId: "r", path: "/xs" } },
    { id: "r", component: "Text", text: { path: "v" } },
  ], { xs: Array.from({ length: 1000 }, (_, i) => ({ v: i })) }));
  assert.equal(big.el.querySelectorAll("[data-component-id=r]").length, 200);
});

test("Tabs and Modal work locally", () => {
  const comps = [
    { id: "root", component: "Column", children: ["tabs", "modal"] },
    { id: "tabs", component: "Tabs", tabs: [{ title: "One", child: "t1" }, { title: "Two", child: "t2" }] },
    { id: "t1", component: "Text", text: "first" },
    { id: "t2", component: "Text", text: "second" },
    { id: "modal", component: "Modal", trigger: "open", content: "inside" },
    { id: "open", component: "Text", text: "Open" },
    { id: "inside", component: "Text", text: "modal body" },
  ];
  const { window, el } = mount(v9("tm", comps));
  const panel = el.querySelector(".gth-a2ui-tabpanel");
  assert.equal(panel.textContent, "first");
  click(window, el.querySelectorAll(".gth-a2ui-tab")[1]);
  assert.equal(panel.textContent, "second");
  const content = el.querySelector(".gth-a2ui-modal-content");
  assert.equal(content.hidden, true);
  click(window, el.querySelector(".gth-a2ui-modal-trigger"));
  assert.equal(content.hidden, false);
});

test("a style name the catalog does not have is ignored, also one an Object has (constructor, toString)", () => {
  const { el } = mount(
    v9("s", [
      { id: "root", component: "Column", children: ["t", "row", "i"], justify: "constructor", align: "toString" },
      { id: "t", component: "Text", text: "Title", variant: "constructor" },
      { id: "row", component: "Row", children: [], justify: "center" },
      { id: "i", component: "Icon", name: "constructor" },
    ]),
  );
  const root = el.querySelector("[data-component-id=root]");
  assert.equal(root.style.justifyContent, "");
  assert.equal(root.style.alignItems, "");
  const title = el.querySelector("[data-component-id=t]");
  assert.equal(title.tagName, "DIV"); // a body text, not a heading
  assert.equal(title.textContent, "Title");
  assert.equal(el.querySelector("[data-component-id=row]").style.justifyContent, "center");
  assert.equal(el.querySelector("[data-component-id=i]").textContent, "•");
});
