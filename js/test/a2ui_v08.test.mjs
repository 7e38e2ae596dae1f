// One test per component of the A2UI v0.8 standard catalog (web_core ships v0.8 as schemas
// only, no examples): each written in v0.8's wire form (surfaceUpdate with wrapper keys,
// {literalString}/{path} values, explicitList/template children, dataModelUpdate contents,
// beginRendering naming the root) and checked for what a person sees and can do.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { normalize } from "../src/a2ui/normalize.js";
import { mountSurface } from "../src/a2ui/render.js";
import { makeDom, click, fire } from "../test-support/dom.mjs";

const V08_CATALOG = join(dirname(fileURLToPath(import.meta.resolve("@a2ui/web_core/v0_8"))), "schemas", "standard_catalog_definition.json");

/** Mount a v0.8 surface: `components` as {id: {Type: props}}, data as dataModelUpdate contents. */
function v08(components, contents = [], root = "root") {
  const { window, document } = makeDom();
  const messages = [
    { surfaceUpdate: { surfaceId: "s8", components: Object.entries(components).map(([id, component]) => ({ id, component })) } },
    ...(contents.length ? [{ dataModelUpdate: { surfaceId: "s8", contents } }] : []),
    { beginRendering: { surfaceId: "s8", root, styles: { primaryColor: "#336699" } } },
  ];
  const { surfaces } = normalize(messages);
  const actions = [];
  const opened = [];
  const view = mountSurface(surfaces[0], { doc: document, onAction: (a) => actions.push(a), openUrl: (u) => opened.push(u), locale: "en-US", timeZone: "UTC" });
  document.body.append(view.el);
  const by = (id) => view.el.querySelector(`[data-component-id="${id}"]`);
  assert.equal(view.el.querySelector(".gth-a2ui-error, .gth-a2ui-unsupported"), null, view.el.textContent);
  return { window, el: view.el, by, actions, opened, surface: surfaces[0] };
}

const lit = (s) => ({ literalString: s });
const TESTED = new Set();
const component = (name, fn) => {
  TESTED.add(name);
  test(`v0.8 ${name}`, fn);
};

component("Text", () => {
  const { by } = v08({
    root: { Column: { children: { explicitList: ["h", "b", "p"] } } },
    h: { Text: { text: lit("Title"), usageHint: "h2" } },
    b: { Text: { text: lit("Some **bold** <img src=x onerror=alert(1)>") } },
    p: { Text: { text: { path: "/name" }, usageHint: "caption" } },
  }, [{ key: "name", valueString: "Ada" }]);
  assert.equal(by("h").tagName.toLowerCase(), "h2");
  assert.equal(by("h").textContent, "Title");
  assert.equal(by("b").querySelector("strong").textContent, "bold");
  assert.equal(by("b").querySelector("img"), null);
  assert.match(by("b").textContent, /<img src=x onerror=alert\(1\)>/);
  assert.equal(by("p").textContent, "Ada");
  assert.equal(by("p").dataset.variant, "caption");
});

component("Image", () => {
  const { by } = v08({
    root: { Row: { children: { explicitList: ["a", "b"] } } },
    a: { Image: { url: lit("https://cdn.example.com/cat.png"), altText: lit("A cat"), fit: "cover", usageHint: "avatar" } },
    b: { Image: { url: lit("javascript:alert(1)") } },
  });
  const placeholder = by("a").querySelector(".gth-media-placeholder");
  assert.equal(placeholder.dataset.gthSrc, "https://cdn.example.com/cat.png");
  assert.match(placeholder.textContent, /A cat.*cdn\.example\.com/);
  assert.equal(by("a").dataset.variant, "avatar");
  assert.equal(by("a").style.getPropertyValue("--gth-fit"), "cover");
  assert.ok(by("b").querySelector(".gth-media-blocked"));
  assert.equal(by("b").querySelector("img"), null);
});

component("Icon", () => {
  const { by } = v08({
    root: { Row: { children: { explicitList: ["a", "b"] } } },
    a: { Icon: { name: lit("shoppingCart") } },
    b: { Icon: { name: { path: "/icon" } } },
  }, [{ key: "icon", valueString: "favorite" }]);
  assert.equal(by("a").getAttribute("aria-label"), "shoppingCart");
  assert.equal(by("a").textContent, "🛒");
  assert.equal(by("b").textContent, "♥");
});

component("Video", () => {
  const { by } = v08({
    root: { Column: { children: { explicitList: ["v", "bad"] } } },
    v: { Video: { url: lit("https://media.example.com/clip.mp4") } },
    bad: { Video: { url: lit("javascript:alert(1)") } },
  });
  assert.equal(by("v").querySelector("video"), null); // remote media waits for a click
  assert.equal(by("v").querySelector(".gth-media-placeholder").dataset.gthKind, "video");
  assert.ok(by("bad").querySelector(".gth-media-blocked"));
});

component("AudioPlayer", () => {
  const { window, by } = v08({
    root: { AudioPlayer: { url: lit("https://media.example.com/ep1.mp3"), description: lit("Episode 1") } },
  });
  const placeholder = by("root").querySelector(".gth-media-placeholder");
  assert.equal(placeholder.dataset.gthKind, "audio");
  assert.match(placeholder.textContent, /Episode 1/);
  click(window, placeholder);
  assert.equal(by("root").querySelector("audio").getAttribute("src"), "https://media.example.com/ep1.mp3");
});

component("Row", () => {
  const { by } = v08({
    root: { Row: { children: { explicitList: ["a", "b"] }, distribution: "spaceBetween", alignment: "center" } },
    a: { Text: { text: lit("left") } },
    b: { Text: { text: lit("right") } },
  });
  assert.equal(by("root").style.justifyContent, "space-between");
  assert.equal(by("root").style.alignItems, "center");
  assert.deepEqual([...by("root").children].map((n) => n.textContent), ["left", "right"]);
});

component("Column", () => {
  const { by } = v08({
    root: { Column: { children: { template: { dataBinding: "/people", componentId: "row" } }, alignment: "stretch" } },
    row: { Text: { text: { path: "name" } } },
  }, [{ key: "people", valueMap: [{ key: "0", valueMap: [{ key: "name", valueString: "Ada" }] }, { key: "1", valueMap: [{ key: "name", valueString: "Grace" }] }] }]);
  assert.equal(by("root").style.alignItems, "stretch");
  assert.deepEqual([...by("root").children].map((n) => n.textContent), ["Ada", "Grace"]);
});

component("List", () => {
  const { by } = v08({
    root: { List: { children: { explicitList: ["a", "b"] }, direction: "horizontal", alignment: "start" } },
    a: { Text: { text: lit("one") } },
    b: { Text: { text: lit("two") } },
  });
  assert.equal(by("root").dataset.direction, "horizontal");
  assert.equal(by("root").textContent, "onetwo");
});

component("Card", () => {
  const { by } = v08({ root: { Card: { child: "t" } }, t: { Text: { text: lit("Inside") } } });
  assert.ok(by("root").classList.contains("gth-a2ui-card"));
  assert.equal(by("root").querySelector("[data-component-id=t]").textContent, "Inside");
});

component("Tabs", () => {
  const { window, by } = v08({
    root: { Tabs: { tabItems: [{ title: lit("First"), child: "a" }, { title: { path: "/second" }, child: "b" }] } },
    a: { Text: { text: lit("Panel A") } },
    b: { Text: { text: lit("Panel B") } },
  }, [{ key: "second", valueString: "Second" }]);
  const tabs = [...by("root").querySelectorAll("[role=tab]")];
  assert.deepEqual(tabs.map((t) => t.textContent), ["First", "Second"]);
  assert.equal(by("root").querySelector("[role=tabpanel]").textContent, "Panel A");
  click(window, tabs[1]);
  assert.equal(by("root").querySelector("[role=tabpanel]").textContent, "Panel B");
});

component("Divider", () => {
  const { by } = v08({
    root: { Row: { children: { explicitList: ["d", "h"] } } },
    d: { Divider: { axis: "vertical" } },
    h: { Divider: {} },
  });
  assert.equal(by("d").tagName.toLowerCase(), "hr");
  assert.equal(by("d").dataset.axis, "vertical");
  assert.equal(by("h").dataset.axis, undefined);
});

component("Modal", () => {
  const { window, by } = v08({
    root: { Modal: { entryPointChild: "open", contentChild: "body" } },
    open: { Button: { child: "ol", action: { name: "noop" } } },
    ol: { Text: { text: lit("Details") } },
    body: { Text: { text: lit("The details") } },
  });
  const dialog = by("root").querySelector("[role=dialog]");
  assert.equal(dialog.hidden, true);
  click(window, by("open"));
  assert.equal(dialog.hidden, false);
  assert.match(dialog.textContent, /The details/);
});

component("Button", () => {
  const { window, by, actions, el } = v08({
    root: { Button: { child: "l", primary: true, action: { name: "book", context: [{ key: "city", value: { path: "/city" } }, { key: "n", value: { literalNumber: 2 } }] } } },
    l: { Text: { text: lit("Book") } },
  }, [{ key: "city", valueString: "Paris" }]);
  assert.equal(by("root").dataset.variant, "primary");
  assert.equal(by("root").textContent, "Book");
  assert.equal(el.style.getPropertyValue("--gth-a2ui-primary"), "#336699"); // beginRendering styles
  click(window, by("root"), { trusted: false });
  assert.equal(actions.length, 0);
  click(window, by("root"));
  assert.equal(actions.length, 1);
  assert.equal(actions[0].actionName, "book");
  assert.deepEqual(actions[0].context, { city: "Paris", n: 2 });
});

component("CheckBox", () => {
  const { window, by, surface } = v08({
    root: { CheckBox: { label: lit("Subscribe"), value: { path: "/sub" } } },
  }, [{ key: "sub", valueBoolean: true }]);
  const box = by("root").querySelector("input[type=checkbox]");
  assert.equal(box.checked, true);
  assert.match(by("root").textContent, /Subscribe/);
  box.checked = false;
  fire(window, box, "change");
  assert.equal(surface.data.sub, false);
});

component("TextField", () => {
  const { window, by, surface } = v08({
    root: { Column: { children: { explicitList: ["name", "zip", "notes"] } } },
    name: { TextField: { label: lit("Name"), text: { path: "/name", literalString: "Ada" } } },
    zip: { TextField: { label: lit("Zip"), text: { path: "/zip" }, textFieldType: "number", validationRegexp: "^\\d{5}$" } },
    notes: { TextField: { label: lit("Notes"), textFieldType: "longText" } },
  });
  const name = by("name").querySelector("input");
  assert.equal(name.value, "Ada"); // the literal seeds the bound path
  name.value = "Grace";
  fire(window, name, "input");
  assert.equal(surface.data.name, "Grace");
  const zip = by("zip").querySelector("input");
  assert.equal(zip.getAttribute("type"), "number");
  zip.value = "123";
  fire(window, zip, "input");
  assert.equal(zip.getAttribute("aria-invalid"), "true");
  assert.equal(by("zip").querySelector(".gth-a2ui-invalid").hidden, false);
  zip.value = "12345";
  fire(window, zip, "input");
  assert.equal(zip.getAttribute("aria-invalid"), null);
  assert.ok(by("notes").querySelector("textarea"));
});

component("DateTimeInput", () => {
  const { window, by, surface } = v08({
    root: { Row: { children: { explicitList: ["d", "t"] } } },
    d: { DateTimeInput: { value: { path: "/day" }, enableDate: true, enableTime: false } },
    t: { DateTimeInput: { value: { path: "/at" }, enableDate: false, enableTime: true } },
  }, [{ key: "day", valueString: "2026-03-01" }, { key: "at", valueString: "2026-03-01T09:30:00Z" }]);
  const day = by("d").querySelector("input");
  assert.equal(day.getAttribute("type"), "date");
  assert.equal(day.value, "2026-03-01");
  assert.equal(by("t").querySelector("input").getAttribute("type"), "time");
  assert.equal(by("t").querySelector("input").value, "09:30");
  day.value = "2026-04-02";
  fire(window, day, "change");
  assert.equal(surface.data.day, "2026-04-02");
});

component("MultipleChoice", () => {
  const { window, by, surface } = v08({
    root: { MultipleChoice: { selections: { path: "/picked" }, maxAllowedSelections: 1, variant: "chips", filterable: true,
      options: [{ label: lit("Tea"), value: "tea" }, { label: lit("Coffee"), value: "coffee" }, { label: lit("Water"), value: "water" }] } },
  }, [{ key: "picked", valueArray: ["coffee"] }]);
  const node = by("root");
  assert.equal(node.dataset.display, "chips");
  const radios = [...node.querySelectorAll("input[type=radio]")];
  assert.deepEqual(radios.map((r) => r.checked), [false, true, false]);
  radios[0].checked = true;
  fire(window, radios[0], "change");
  assert.deepEqual(surface.data.picked, ["tea"]);
  const filter = node.querySelector("input[type=search]");
  filter.value = "wat";
  fire(window, filter, "input");
  assert.deepEqual([...node.querySelectorAll(".gth-a2ui-option")].map((o) => o.hidden), [true, true, false]);
  assert.deepEqual(surface.data.picked, ["tea"]); // filtering changes no data
});

component("Slider", () => {
  const { window, by, surface } = v08({
    root: { Slider: { label: lit("Volume"), value: { path: "/vol" }, minValue: 0, maxValue: 11 } },
  }, [{ key: "vol", valueNumber: 7 }]);
  const range = by("root").querySelector("input[type=range]");
  assert.equal(range.getAttribute("max"), "11");
  assert.equal(range.value, "7");
  assert.equal(by("root").querySelector("output").textContent, "7");
  range.value = "9";
  fire(window, range, "input");
  assert.equal(surface.data.vol, 9);
});

test("every component of the v0.8 standard catalog has a test here", () => {
  const catalog = JSON.parse(readFileSync(V08_CATALOG, "utf8"));
  assert.deepEqual(Object.keys(catalog.components).sort(), [...TESTED].sort());
});
