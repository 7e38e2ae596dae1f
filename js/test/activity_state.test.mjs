import { test } from "node:test";
import assert from "node:assert/strict";
import { applyPatch } from "../src/a2ui/patch.js";
import { ActivityStore } from "../src/a2ui/activity.js";
import { ChatController } from "../src/chat/controller.js";
import { createRegistry } from "../src/tools/registry.js";
import { TranscriptView } from "../src/transcript.js";
import { EventLog } from "../src/view/eventlog.js";
import { FrameScheduler } from "../src/view/frame.js";
import { makeDom } from "../test-support/dom.mjs";
import { scriptedFetch, started, finished } from "../test-support/sse.mjs";

const SURFACE = [
  { surfaceUpdate: { surfaceId: "s1", components: [{ id: "root", component: { Text: { text: { literalString: "Hello" } } } }] } },
  { beginRendering: { surfaceId: "s1", root: "root" } },
];
const RETEXT = { surfaceUpdate: { surfaceId: "s1", components: [{ id: "root", component: { Text: { text: { literalString: "Bye" } } } }] } };
const snapshot = (ops) => ({ type: "ACTIVITY_SNAPSHOT", messageId: "c1-a2ui-s1", activityType: "a2ui-surface", content: { a2ui_operations: ops } });
const delta = (ops) => ({
  type: "ACTIVITY_DELTA",
  messageId: "c1-a2ui-s1",
  activityType: "a2ui-surface",
  patch: ops.map((value) => ({ op: "add", path: "/a2ui_operations/-", value })),
});

test("JSON Patch: add, replace, remove, move, copy and test, on a copy", () => {
  const doc = { a: { b: 1 }, l: [1, 2], "x/y": 0 };
  const out = applyPatch(doc, [
    { op: "replace", path: "/a/b", value: 2 },
    { op: "add", path: "/l/-", value: 3 },
    { op: "add", path: "/l/0", value: 0 },
    { op: "remove", path: "/x~1y" },
    { op: "copy", from: "/a", path: "/c" },
    { op: "move", from: "/c/b", path: "/d" },
    { op: "test", path: "/d", value: 2 },
  ]);
  assert.deepEqual(out, { a: { b: 2 }, l: [0, 1, 2, 3], c: {}, d: 2 });
  assert.deepEqual(doc, { a: { b: 1 }, l: [1, 2], "x/y": 0 });
  assert.throws(() => applyPatch(doc, [{ op: "replace", path: "/nope", value: 1 }]));
  assert.throws(() => applyPatch(doc, [{ op: "test", path: "/a/b", value: 9 }]));
});

test("the activity store gives the operations each event adds", () => {
  const store = new ActivityStore();
  assert.deepEqual(store.apply(snapshot(SURFACE)), SURFACE);
  assert.deepEqual(store.apply(delta([RETEXT])), [RETEXT]);
  assert.deepEqual(store.contents.get("c1-a2ui-s1").a2ui_operations, [...SURFACE, RETEXT]);
  // A delta for an activity never seen is ignored, as the official client does.
  assert.equal(store.apply({ ...delta([RETEXT]), messageId: "other" }), null);
  assert.equal(store.apply({ ...snapshot([]), activityType: "something-else" }), null);
  // History seeds the store, so a later delta applies to the reloaded surface.
  const reloaded = new ActivityStore();
  reloaded.load([{ id: "c1-a2ui-s1", role: "activity", activityType: "a2ui-surface", content: { a2ui_operations: SURFACE } }]);
  assert.deepEqual(reloaded.apply(delta([RETEXT])), [RETEXT]);
});

test("an ACTIVITY_DELTA is drawn, and the surface its tool result showed is drawn once", async () => {
  const { fetch } = scriptedFetch([
    (b) => [
      started(b),
      { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "show_a2ui_surface" },
      { type: "TOOL_CALL_END", toolCallId: "c1" },
      { type: "TOOL_CALL_RESULT", messageId: "r1", toolCallId: "c1", content: SURFACE.map((o) => JSON.stringify(o)).join("\n"), role: "tool" },
      snapshot(SURFACE),
      delta([RETEXT]),
      finished(b),
    ],
  ]);
  const chat = new ChatController({ url: "http://x/run", threadId: "t1", registry: createRegistry([], { builtins: [] }), fetch });
  const { window } = makeDom();
  const el = window.document.createElement("div");
  window.document.body.append(el); // surfaces on screen (isConnected) are repainted in place
  const view = new TranscriptView({ doc: window.document, el, raf: (cb) => cb(), onSend: () => true, onStop() {}, onAction() {}, onResolveInterrupts() {} });
  const seen = [];
  chat.on((e) => {
    seen.push(e);
    view.handle(e);
  });
  await chat.send("show me");
  view.frames.flush();
  const derived = seen.filter((e) => e.type === "agui" && e.event.gthDerived);
  assert.deepEqual(derived.map((e) => e.event.content.a2ui_operations), [[RETEXT]]);
  assert.equal(el.querySelectorAll("[data-surface-id]").length, 1); // tool result, snapshot and delta: one surface
  assert.match(el.textContent, /Bye/);
  assert.doesNotMatch(el.textContent, /Hello/);
  // The official client applied the delta to its activity message too.
  const activity = chat.messages.find((m) => m.role === "activity");
  assert.equal(activity.content.a2ui_operations.length, 3);
  // The event log lists only the events that came over the wire.
  const log = new EventLog(window.document, new FrameScheduler((cb) => cb()));
  for (const e of seen) log.handle(e);
  assert.deepEqual(log.rows.filter((r) => r.type.startsWith("ACTIVITY")).map((r) => r.type), ["ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"]);
});

test("the event log shows the shared state as snapshots and deltas leave it", () => {
  const { window } = makeDom();
  const frames = new FrameScheduler((cb) => cb());
  const log = new EventLog(window.document, frames);
  assert.equal(log.stateBox.hidden, true);
  log.handle({ type: "agui", event: { type: "STATE_SNAPSHOT", snapshot: { recipe: { servings: 2 } } } });
  log.handle({ type: "agui", event: { type: "STATE_DELTA", delta: [{ op: "replace", path: "/recipe/servings", value: 4 }] } });
  frames.flush();
  assert.equal(log.stateBox.hidden, false);
  assert.deepEqual(log.state, { recipe: { servings: 4 } });
  assert.deepEqual(JSON.parse(log.stateView.textContent), { recipe: { servings: 4 } });
});
