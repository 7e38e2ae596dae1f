import { test } from "node:test";
import assert from "node:assert/strict";
import { TranscriptView } from "../src/transcript.js";
import { makeDom, click, fire } from "../test-support/dom.mjs";
import { GS_FORM } from "../test-support/fixtures.mjs";

function setup(handlers = {}) {
  const { window, document } = makeDom();
  const queue = [];
  const raf = (cb) => queue.push(cb);
  const frame = () => queue.splice(0).forEach((cb) => cb());
  const calls = { send: [], stop: 0, actions: [], resumes: [] };
  const el = document.createElement("div");
  document.body.append(el);
  const view = new TranscriptView({
    doc: document,
    el,
    raf,
    onSend: (t) => (calls.send.push(t), true),
    onStop: () => calls.stop++,
    onAction: (a) => calls.actions.push(a),
    onResolveInterrupts: (r) => calls.resumes.push(r),
    ...handlers,
  });
  const agui = (event) => view.handle({ type: "agui", event });
  return { window, document, el, view, frame, queue, calls, agui };
}

test("streamed text is painted once per animation frame, not per token", () => {
  const { el, view, frame, queue, agui } = setup();
  agui({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" });
  for (let i = 0; i < 500; i++) agui({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: i === 0 ? "**Hello** " : "x" });
  assert.equal(queue.length, 1); // one frame requested for 500 deltas
  assert.equal(view.stats.markdownRenders, 0);
  frame();
  assert.equal(view.stats.markdownRenders, 1);
  const msg = el.querySelector(".gth-msg-assistant[data-message-id=m1]");
  assert.equal(msg.querySelector("strong").textContent, "Hello");
  assert.equal(msg.textContent.trim().length, "Hello ".length + 499);
  for (let i = 0; i < 100; i++) agui({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "y" });
  agui({ type: "TEXT_MESSAGE_END", messageId: "m1" });
  frame();
  assert.equal(view.stats.markdownRenders, 2);
  assert.ok(msg.textContent.trim().endsWith("y".repeat(100)));
});

test("assistant Markdown is sanitised; user text stays text", () => {
  const { el, view, frame, agui } = setup();
  view.handle({ type: "user", message: { id: "u1", role: "user", content: "<b>hi</b> **no md**" } });
  agui({ type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" });
  agui({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "<script>x()</script> [a](javascript:alert(1))" });
  frame();
  assert.equal(el.querySelector(".gth-msg-user").textContent, "<b>hi</b> **no md**");
  assert.equal(el.querySelector(".gth-msg-user b"), null);
  const a = el.querySelector(".gth-msg-assistant");
  assert.equal(a.querySelector("script"), null);
  assert.equal(a.querySelector("a"), null);
});

test("reasoning goes into a collapsed <details>", () => {
  const { el, frame, agui } = setup();
  agui({ type: "REASONING_MESSAGE_START", messageId: "r1", role: "reasoning" });
  agui({ type: "REASONING_MESSAGE_CONTENT", messageId: "r1", delta: "thinking hard" });
  frame();
  const d = el.querySelector("details.gth-reasoning");
  assert.equal(d.hasAttribute("open"), false);
  assert.equal(d.querySelector(".gth-reasoning-text").textContent, "thinking hard");
});

test("tool card: name, streamed args, status, output lines, result preview", () => {
  const { el, view, frame, agui } = setup();
  agui({ type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "read_file" });
  agui({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: '{"path":' });
  agui({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: '"a.txt"}' });
  agui({ type: "TOOL_CALL_END", toolCallId: "c1" });
  frame();
  const card = el.querySelector(".gth-tool[data-tool-name=read_file]");
  assert.equal(card.dataset.toolCallId, "c1");
  assert.equal(card.dataset.status, "running");
  assert.equal(card.querySelector(".gth-tool-args-text").textContent, '{\n  "path": "a.txt"\n}');
  agui({ type: "TOOL_CALL_RESULT", messageId: "t1", toolCallId: "c1", content: "hello world" });
  assert.equal(card.dataset.status, "done");
  assert.equal(card.querySelector(".gth-tool-preview").textContent, "hello world");
  agui({ type: "TOOL_CALL_START", toolCallId: "c2", toolCallName: "my_tool" });
  view.handle({ type: "tool-run", toolCallId: "c2", name: "my_tool", status: "running" });
  view.handle({ type: "tool-output", toolCallId: "c2", line: "step 1" });
  view.handle({ type: "tool-output", toolCallId: "c2", line: "step 2" });
  frame();
  const c2 = el.querySelector("[data-tool-call-id=c2]");
  assert.deepEqual([...c2.querySelectorAll(".gth-tool-line")].map((n) => n.textContent), ["step 1", "step 2"]);
  view.handle({ type: "tool-run", toolCallId: "c2", name: "my_tool", status: "error", content: '{"error":"boom"}' });
  assert.equal(c2.dataset.status, "error");
  assert.equal(c2.querySelector(".gth-tool-error").textContent, "boom");
});

test("capture_image: thumbnail from the tool and from a rehydrated result", () => {
  const { el, view, agui } = setup();
  agui({ type: "TOOL_CALL_START", toolCallId: "cam", toolCallName: "capture_image" });
  view.toolUi.showImage("cam", "data:image/jpeg;base64,AAAA");
  const img = el.querySelector("[data-tool-name=capture_image] img.gth-thumb");
  assert.equal(img.getAttribute("src"), "data:image/jpeg;base64,AAAA");
  view.toolUi.showImage("cam", "javascript:alert(1)"); // ignored
  view.renderHistory([
    { id: "u", role: "user", content: "photo" },
    { id: "a", role: "assistant", toolCalls: [{ id: "cam2", type: "function", function: { name: "capture_image", arguments: "{}" } }] },
    { id: "t", role: "tool", toolCallId: "cam2", content: JSON.stringify({ mimeType: "image/jpeg", data: "QUJD" }) },
  ]);
  const card = el.querySelector("[data-tool-call-id=cam2]");
  assert.equal(card.querySelector("img.gth-thumb").getAttribute("src"), "data:image/jpeg;base64,QUJD");
  assert.match(card.querySelector(".gth-tool-preview").textContent, /image\/jpeg image/);
});

/** A JPEG's first bytes as base64: SOI, an APP0 segment, then the frame header of a w×h picture. */
function jpegBase64(width, height) {
  const app0 = [0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00];
  const sof0 = [0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 255, width >> 8, width & 255, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
  return Buffer.from([0xff, 0xd8, ...app0, ...sof0, ...new Array(2000).fill(0)]).toString("base64");
}

test("capture_image: the finished card says what happened, not \"Asking for the camera…\"", () => {
  const { el, view, frame, agui } = setup();
  agui({ type: "TOOL_CALL_START", toolCallId: "cam", toolCallName: "capture_image" });
  view.handle({ type: "tool-run", toolCallId: "cam", name: "capture_image", status: "running" });
  view.handle({ type: "tool-output", toolCallId: "cam", line: "Asking for the camera…" });
  frame();
  const card = el.querySelector("[data-tool-call-id=cam]");
  assert.match(card.textContent, /Asking for the camera…/); // while it waits on the person
  const data = jpegBase64(640, 480);
  view.handle({ type: "tool-run", toolCallId: "cam", name: "capture_image", status: "done", content: JSON.stringify({ mimeType: "image/jpeg", data }) });
  frame();
  const summary = card.querySelector(".gth-tool-summary");
  assert.equal(summary.hidden, false);
  assert.equal(summary.textContent, "Photo taken: 640×480 JPEG, 2 KB, sent to the agent.");
  assert.doesNotMatch(card.textContent, /Asking for the camera/);
  assert.ok(card.querySelector("img.gth-thumb"));
  // The server's result for the model (the photo moved out) does not take the sentence away.
  agui({ type: "TOOL_CALL_RESULT", toolCallId: "cam", messageId: "r", content: "[image captured: image/jpeg, about 2 KB; shown to you in the next message]" });
  frame();
  assert.equal(card.querySelector(".gth-tool-summary").textContent, "Photo taken: 640×480 JPEG, 2 KB, sent to the agent.");

  // No camera: the card says so and why.
  agui({ type: "TOOL_CALL_START", toolCallId: "cam2", toolCallName: "capture_image" });
  view.handle({ type: "tool-output", toolCallId: "cam2", line: "Asking for the camera…" });
  view.handle({ type: "tool-run", toolCallId: "cam2", name: "capture_image", status: "error", content: '{"error":"No camera was found."}' });
  frame();
  const failed = el.querySelector("[data-tool-call-id=cam2]");
  assert.equal(failed.querySelector(".gth-tool-summary").textContent, "No photo: No camera was found.");
  assert.doesNotMatch(failed.textContent, /Asking for the camera/);

  // Rebuilt from the thread, the card says the same.
  view.renderHistory([
    { id: "a", role: "assistant", toolCalls: [{ id: "cam3", type: "function", function: { name: "capture_image", arguments: "{}" } }] },
    { id: "t", role: "tool", toolCallId: "cam3", content: JSON.stringify({ mimeType: "image/jpeg", data }) },
  ]);
  const again = el.querySelector("[data-tool-call-id=cam3]");
  assert.equal(again.querySelector(".gth-tool-summary").textContent, "Photo taken: 640×480 JPEG, 2 KB, sent to the agent.");
  assert.ok(again.querySelector("img.gth-thumb"));
});

test("imageSize reads a PNG's and a JPEG's header; anything else is null", async () => {
  const { imageSize } = await import("../src/view/dom.js");
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
  assert.deepEqual(imageSize("image/png", png), { width: 1, height: 1 });
  assert.deepEqual(imageSize("image/jpeg", jpegBase64(590, 340)), { width: 590, height: 340 });
  assert.equal(imageSize("image/jpeg", png), null);
  assert.equal(imageSize("image/gif", png), null);
  assert.equal(imageSize("image/jpeg", "!!!"), null);
  assert.equal(imageSize("image/jpeg", Buffer.from([0xff, 0xd8, 0x00, 0x01]).toString("base64")), null);
});

test("ask_user: buttons for choices, a text box otherwise", async () => {
  const { window, el, view, agui } = setup();
  agui({ type: "TOOL_CALL_START", toolCallId: "q1", toolCallName: "ask_user" });
  const answer = view.toolUi.ask({ toolCallId: "q1", question: "Which?", choices: ["A", "B"] });
  const buttons = el.querySelectorAll("[data-tool-call-id=q1] .gth-ask-choice");
  assert.deepEqual([...buttons].map((b) => b.textContent), ["A", "B"]);
  click(window, buttons[1]);
  assert.equal(await answer, "B");
  assert.equal(el.querySelector("[data-tool-call-id=q1] .gth-ask-answer").textContent, "B");
  agui({ type: "TOOL_CALL_START", toolCallId: "q2", toolCallName: "ask_user" });
  const free = view.toolUi.ask({ toolCallId: "q2", question: "Name?", choices: [] });
  const input = el.querySelector("[data-tool-call-id=q2] .gth-ask-input");
  input.value = "Ana";
  click(window, el.querySelector("[data-tool-call-id=q2] .gth-ask-submit"));
  assert.equal(await free, "Ana");
  const ac = new AbortController();
  agui({ type: "TOOL_CALL_START", toolCallId: "q3", toolCallName: "ask_user" });
  const cancelled = view.toolUi.ask({ toolCallId: "q3", question: "?", choices: ["x"], signal: ac.signal });
  ac.abort();
  await assert.rejects(cancelled, /cancelled/);
});

test("show_a2ui_surface results render a surface; its button sends the action", () => {
  const { window, el, calls, agui } = setup();
  agui({ type: "TOOL_CALL_START", toolCallId: "s1", toolCallName: "show_a2ui_surface" });
  agui({ type: "TOOL_CALL_RESULT", messageId: "r", toolCallId: "s1", content: GS_FORM });
  const surface = el.querySelector("[data-tool-name=show_a2ui_surface] .gth-a2ui-surface[data-surface-id=email]");
  assert.ok(surface);
  const input = surface.querySelector("input");
  input.value = "bo@example.com";
  fire(window, input, "input");
  click(window, surface.querySelector("button"));
  assert.equal(calls.actions[0].actionName, "send_email");
  assert.deepEqual(calls.actions[0].context, { to: "bo@example.com" });
  // An error result becomes an error note, not a surface.
  agui({ type: "TOOL_CALL_START", toolCallId: "s2", toolCallName: "show_a2ui_surface" });
  agui({ type: "TOOL_CALL_RESULT", messageId: "r2", toolCallId: "s2", content: '{"error":"surfaceJsonl is required"}' });
  const bad = el.querySelector("[data-tool-call-id=s2]");
  assert.equal(bad.querySelector(".gth-a2ui-surface"), null);
  assert.equal(bad.querySelector(".gth-tool-error").textContent, "surfaceJsonl is required");
});

test("ACTIVITY_SNAPSHOT a2ui-surface renders in the transcript", () => {
  const { el, agui } = setup();
  agui({ type: "ACTIVITY_SNAPSHOT", messageId: "act1", activityType: "a2ui-surface", content: { status: "building" } });
  assert.match(el.querySelector(".gth-activity[data-message-id=act1]").textContent, /Building/);
  agui({
    type: "ACTIVITY_SNAPSHOT", messageId: "act1", activityType: "a2ui-surface", replace: true,
    content: { a2ui_operations: [
      { version: "v0.9", createSurface: { surfaceId: "z", catalogId: "basic" } },
      { version: "v0.9", updateComponents: { surfaceId: "z", components: [{ id: "root", component: "Text", text: "ready" }] } },
    ] },
  });
  const block = el.querySelector(".gth-activity[data-message-id=act1]");
  assert.equal(block.querySelector(".gth-a2ui-surface [data-component-id=root]").textContent, "ready");
  assert.equal(block.querySelector(".gth-note"), null);
});

test("errors show their code; interrupts offer Cancel; Stop is enabled only while running", () => {
  const { window, el, view, calls } = setup();
  view.handle({ type: "error", code: "run_busy", message: "Thread busy." });
  const err = el.querySelector(".gth-error[data-code=run_busy]");
  assert.equal(err.querySelector(".gth-error-code").textContent, "run_busy");
  view.handle({ type: "interrupt", interrupts: [{ id: "i1", reason: "input_required", message: "Delete it?" }] });
  assert.equal(el.querySelector(".gth-interrupt-message[data-interrupt-id=i1]").textContent, "Delete it?");
  click(window, el.querySelector(".gth-interrupt-cancel"));
  assert.deepEqual(calls.resumes, [[{ interruptId: "i1", status: "cancelled" }]]);
  const stop = el.querySelector(".gth-stop");
  assert.equal(stop.disabled, true);
  view.handle({ type: "run-state", running: true });
  assert.equal(stop.disabled, false);
  assert.equal(el.querySelector(".gth-send").disabled, true);
  click(window, stop);
  assert.equal(calls.stop, 1);
  view.handle({ type: "run-state", running: false });
  assert.equal(stop.disabled, true);
});

test("input box: Enter sends, Shift+Enter does not", () => {
  const { window, el, calls } = setup();
  const input = el.querySelector(".gth-input");
  input.value = "hello";
  const key = (shiftKey) => {
    const ev = new window.Event("keydown", { bubbles: true, cancelable: true });
    Object.assign(ev, { key: "Enter", shiftKey, isComposing: false });
    input.dispatchEvent(ev);
  };
  key(true);
  assert.deepEqual(calls.send, []);
  key(false);
  assert.deepEqual(calls.send, ["hello"]);
  assert.equal(input.value, "");
});

test("header shows the model and the offline badge; the event log lists event types", () => {
  const { window, el, view, frame, agui } = setup();
  view.setHeader({ modelLabel: "gth-demo (offline)", offline: true, transport: "comm" });
  assert.equal(el.querySelector(".gth-model").textContent, "gth-demo (offline)");
  assert.equal(el.querySelector(".gth-badge-offline").hidden, false);
  assert.equal(el.querySelector(".gth-root").dataset.transport, "comm");
  const log = el.querySelector(".gth-eventlog");
  assert.equal(log.hidden, true);
  click(window, el.querySelector(".gth-log-toggle"));
  assert.equal(log.hidden, false);
  agui({ type: "RUN_STARTED", threadId: "t", runId: "r" });
  agui({ type: "TEXT_MESSAGE_START", messageId: "m" });
  for (let i = 0; i < 5; i++) agui({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "x" });
  frame();
  const rows = [...el.querySelectorAll(".gth-event")];
  assert.deepEqual(rows.map((r) => r.dataset.type), ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]);
  assert.equal(rows[2].dataset.count, "5");
});

test("history: messages, tool results matched to their calls, A2UI results rendered", () => {
  const { el, view } = setup();
  view.renderHistory([
    { id: "u1", role: "user", content: "make a form" },
    { id: "a1", role: "assistant", content: "Here it is:", toolCalls: [
      { id: "s1", type: "function", function: { name: "show_a2ui_surface", arguments: JSON.stringify({ surfaceJsonl: GS_FORM }) } },
      { id: "x1", type: "function", function: { name: "other", arguments: "{}" } },
    ] },
    { id: "t1", role: "tool", toolCallId: "s1", content: GS_FORM },
    { id: "u2", role: "user", content: JSON.stringify({ actionName: "send_email", sourceComponentId: "send", surfaceId: "email", timestamp: "2026-01-01T00:00:00Z", context: {} }) },
    { id: "a2", role: "assistant", content: "Sent **now**." },
  ]);
  assert.equal(el.querySelectorAll(".gth-msg-user").length, 2);
  assert.match(el.querySelector(".gth-msg-action").textContent, /send_email/);
  assert.equal(el.querySelector("[data-message-id=a2] strong").textContent, "now");
  assert.ok(el.querySelector("[data-tool-call-id=s1] .gth-a2ui-surface[data-surface-id=email]"));
  assert.equal(el.querySelector("[data-tool-call-id=s1]").dataset.status, "done");
  assert.equal(el.querySelector("[data-tool-call-id=x1]").dataset.status, "pending");
  // Rendering again replaces, never duplicates.
  view.renderHistory([{ id: "u1", role: "user", content: "again" }]);
  assert.equal(el.querySelectorAll(".gth-msg").length, 1);
});
