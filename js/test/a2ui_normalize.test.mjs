import { test } from "node:test";
import assert from "node:assert/strict";
import { normalize, messagesFromActivity, rootOf, SurfaceStore } from "../src/a2ui/normalize.js";
import { parseMessages } from "../src/a2ui/parse.js";
import { getAt, setAt } from "../src/a2ui/pointer.js";
import { GS_FORM } from "../test-support/fixtures.mjs";

test("v0.8 Gaunt Sloth dialect: components unwrapped, literals unwrapped, root from beginRendering", () => {
  const { surfaces, errors } = normalize(GS_FORM);
  assert.deepEqual(errors, []);
  const s = surfaces[0];
  assert.equal(s.id, "email");
  assert.equal(rootOf(s), "col");
  const title = s.components.get("title");
  assert.equal(title.type, "Text");
  assert.equal(title.props.text, "New email");
  assert.equal(title.props.variant, "h2");
  assert.deepEqual(s.components.get("col").props.children, ["title", "to", "send"]);
  const send = s.components.get("send");
  assert.equal(send.props.label, "Send");
  assert.deepEqual(send.props.action, { event: { name: "send_email", context: {} } });
  // The unbound TextField writes to /to, as the reference client stores it.
  const to = s.components.get("to");
  assert.deepEqual(to.props.value, { path: "/to" });
  assert.equal(to.implicit, true);
  assert.equal(getAt(s.data, "/to"), "");
});

test("v0.8 data model, bound literals seed the model, templates and renames", () => {
  const text = [
    { surfaceUpdate: { surfaceId: "s", components: [
      { id: "list", component: { List: { children: { template: { dataBinding: "/items", componentId: "row" } } } } },
      { id: "row", component: { Text: { text: { path: "name" } } } },
      { id: "name", component: { TextField: { label: { literalString: "Name" }, text: { path: "/user/name", literalString: "Ana" }, textFieldType: "shortText" } } },
      { id: "mc", component: { MultipleChoice: { selections: { path: "/pick" }, options: [{ label: { literalString: "A" }, value: "a" }], maxAllowedSelections: 1 } } },
      { id: "sl", component: { Slider: { value: { path: "/n" }, minValue: 1, maxValue: 5 } } },
    ] } },
    { dataModelUpdate: { surfaceId: "s", path: "/items", contents: [{ key: "0", valueMap: [{ key: "name", valueString: "x" }] }] } },
    { beginRendering: { surfaceId: "s", root: "list" } },
  ].map((m) => JSON.stringify(m)).join("\n");
  const s = normalize(text).surfaces[0];
  assert.deepEqual(s.components.get("list").props.children, { componentId: "row", path: "/items" });
  assert.deepEqual(s.components.get("name").props.value, { path: "/user/name" });
  assert.equal(getAt(s.data, "/user/name"), "Ana");
  const mc = s.components.get("mc");
  assert.equal(mc.type, "ChoicePicker");
  assert.equal(mc.props.variant, "mutuallyExclusive");
  assert.deepEqual(mc.props.options, [{ label: "A", value: "a" }]);
  assert.equal(s.components.get("sl").props.min, 1);
  assert.equal(s.components.get("sl").props.max, 5);
  assert.deepEqual(s.data.items, { 0: { name: "x" } });
});

test("v0.9 messages", () => {
  const msgs = [
    { version: "v0.9", createSurface: { surfaceId: "c", catalogId: "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json" } },
    { version: "v0.9", updateComponents: { surfaceId: "c", components: [
      { id: "root", component: "Column", children: ["t", "b"], justify: "center" },
      { id: "t", component: "Text", text: { path: "/greeting" }, variant: "h1" },
      { id: "b", component: "Button", child: "bt", action: { event: { name: "go", context: { who: { path: "/greeting" }, n: 3 } } } },
      { id: "bt", component: "Text", text: "Go" },
    ] } },
    { version: "v0.9", updateDataModel: { surfaceId: "c", path: "/greeting", value: "hi" } },
  ];
  const { surfaces, errors } = normalize(msgs.map((m) => JSON.stringify(m)).join("\n"));
  assert.deepEqual(errors, []);
  const s = surfaces[0];
  assert.equal(s.version, "0.9");
  assert.equal(rootOf(s), "root");
  assert.deepEqual(s.components.get("b").props.action.event.context, { who: { path: "/greeting" }, n: 3 });
  assert.equal(s.data.greeting, "hi");
  // A value-less updateDataModel deletes; deleteSurface removes the surface.
  const store = normalize(msgs).store;
  store.applyAll([{ version: "v0.9", updateDataModel: { surfaceId: "c", path: "/greeting" } }]);
  assert.equal(store.surfaces.get("c").data.greeting, undefined);
  const r = store.applyAll([{ version: "v0.9", deleteSurface: { surfaceId: "c" } }]);
  assert.deepEqual([...r.deleted], ["c"]);
  assert.equal(store.surfaces.size, 0);
});

test("AG-UI ACTIVITY_SNAPSHOT with activityType a2ui-surface", () => {
  const event = {
    type: "ACTIVITY_SNAPSHOT", messageId: "a2ui-surface-call1", activityType: "a2ui-surface", replace: true,
    content: { a2ui_operations: [
      { version: "v0.9", createSurface: { surfaceId: "act", catalogId: "basic" } },
      { version: "v0.9", updateComponents: { surfaceId: "act", components: [{ id: "root", component: "Text", text: "from activity" }] } },
    ] },
  };
  const ops = messagesFromActivity(event);
  assert.equal(ops.length, 2);
  const s = normalize(ops).surfaces[0];
  assert.equal(s.components.get("root").props.text, "from activity");
  assert.deepEqual(messagesFromActivity({ ...event, activityType: "other" }), []);
  assert.deepEqual(messagesFromActivity({ ...event, content: { status: "building" } }), []);
});

test("concatenated objects with no newline, pretty-printed objects, and code fences parse", () => {
  const a = JSON.stringify({ surfaceUpdate: { surfaceId: "x", components: [{ id: "t", component: { Text: { text: { literalString: "}{ tricky \"quote\"" } } } }] } });
  const b = JSON.stringify({ beginRendering: { surfaceId: "x", root: "t" } }, null, 2);
  const { surfaces, errors } = normalize("```json\n" + a + b + "\n```");
  assert.deepEqual(errors, []);
  assert.equal(surfaces[0].components.get("t").props.text, '}{ tricky "quote"');
  assert.equal(parseMessages(`${a}${a}${a}`).messages.length, 3);
});

test("bad input becomes error objects and spoils nothing else", () => {
  assert.match(normalize("not json at all").errors[0], /No A2UI messages/);
  assert.match(normalize('{"surfaceUpdate": {').errors[0], /not closed/);
  assert.match(normalize('{"bogus": {"surfaceId": "q"}}').errors[0], /Unknown A2UI message/);
  const mixed = [
    JSON.stringify({ surfaceUpdate: { surfaceId: "ok", components: [{ id: "t", component: { Text: { text: { literalString: "fine" } } } }] } }),
    "{broken json}",
    JSON.stringify({ surfaceUpdate: { surfaceId: "ok", components: [{ id: "bad" }, { id: "t2", component: { Text: { text: "also fine" } } }] } }),
  ].join("\n");
  const { surfaces, errors } = normalize(mixed);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /Invalid JSON/);
  const s = surfaces[0];
  assert.equal(s.components.get("t").props.text, "fine");
  assert.equal(s.components.get("t2").props.text, "also fine");
  assert.equal(s.components.get("bad").type, "__invalid");
  assert.ok(s.errors.some((e) => /no component type/.test(e)));
});

test("prototype-polluting paths and keys are refused", () => {
  assert.throws(() => setAt({}, "/__proto__/polluted", 1), /not allowed/);
  assert.throws(() => setAt({}, "/a/constructor/prototype/x", 1), /not allowed/);
  const r = normalize(JSON.stringify({ version: "v0.9", updateDataModel: { surfaceId: "p", path: "/__proto__/polluted", value: true } }));
  assert.match(r.surfaces[0].errors[0], /not allowed/); // shown inside that surface
  const r2 = normalize(JSON.stringify({ dataModelUpdate: { surfaceId: "p", contents: [{ key: "__proto__", valueMap: [{ key: "polluted", valueBoolean: true }] }] } }));
  assert.match(r2.surfaces[0].errors[0], /not allowed/);
  assert.equal(({}).polluted, undefined);
});

test("without beginRendering the unreferenced component is the root", () => {
  const store = new SurfaceStore();
  store.applyAll([{ surfaceUpdate: { surfaceId: "n", components: [
    { id: "child", component: { Text: { text: { literalString: "c" } } } },
    { id: "top", component: { Row: { children: { explicitList: ["child"] } } } },
  ] } }]);
  assert.equal(rootOf(store.surfaces.get("n")), "top");
});
