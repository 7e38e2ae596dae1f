// Live parts of the transcript: tool output chunks (CUSTOM gth.tool_output), the gth_checklist
// panel and the gth_status_update line.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatController } from "../src/chat/controller.js";
import { createRegistry } from "../src/tools/registry.js";
import { TranscriptView } from "../src/transcript.js";
import { itemsFromArgs, itemsFromResult } from "../src/view/checklist.js";
import { makeDom } from "../test-support/dom.mjs";
import { scriptedFetch, started, finished, text, toolCall } from "../test-support/sse.mjs";

function setup() {
  const { window, document } = makeDom();
  const queue = [];
  const raf = (cb) => queue.push(cb);
  const frame = () => queue.splice(0).forEach((cb) => cb());
  const el = document.createElement("div");
  document.body.append(el);
  const view = new TranscriptView({ doc: document, el, raf, onSend: () => true, onStop: () => {}, onAction: () => {}, onResolveInterrupts: () => {} });
  const agui = (event) => view.handle({ type: "agui", event });
  return { window, document, el, view, frame, agui };
}

const output = (value) => ({ type: "CUSTOM", name: "gth.tool_output", value });
const lines = (card) => [...card.querySelectorAll(".gth-tool-output > .gth-tool-line")].map((n) => n.textContent);

test("tool output chunks land in their own card, split on line breaks, text only", () => {
  const { el, frame, agui } = setup();
  agui({ type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "run_shell_command" });
  agui({ type: "TOOL_CALL_START", toolCallId: "c2", toolCallName: "gth_grep" });
  agui(output({ chunk: "one\ntw", name: "run_shell_command", toolCallId: "c1" }));
  agui(output({ chunk: "o\n<b>three</b>\n", name: "run_shell_command", toolCallId: "c1" }));
  agui(output({ chunk: "src/a.js:1: match\n", name: "gth_grep", toolCallId: "c2" }));
  agui(output({ chunk: "[output truncated]", name: "run_shell_command", toolCallId: "c1", isNotice: true }));
  frame();
  const c1 = el.querySelector(".gth-tool[data-tool-call-id=c1]");
  const c2 = el.querySelector(".gth-tool[data-tool-call-id=c2]");
  assert.deepEqual(lines(c1), ["one", "two", "<b>three</b>", "[output truncated]"]);
  assert.equal(c1.querySelector("b"), null);
  assert.ok(c1.querySelectorAll(".gth-tool-line")[3].classList.contains("gth-tool-notice"));
  assert.deepEqual(lines(c2), ["src/a.js:1: match"]);
  assert.equal(c1.querySelector(".gth-tool-output").hidden, false);
  assert.equal(el.querySelectorAll(".gth-tool").length, 2);
});

test("an unfinished line shows at once and is completed by the next chunk; a carriage return redraws it", () => {
  const { el, frame, agui } = setup();
  agui({ type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "run_shell_command" });
  agui(output({ chunk: "downloading 10%", name: "run_shell_command", toolCallId: "c1" }));
  frame();
  const card = el.querySelector(".gth-tool[data-tool-call-id=c1]");
  assert.deepEqual(lines(card), ["downloading 10%"]);
  agui(output({ chunk: "\rdownloading 90%", name: "run_shell_command", toolCallId: "c1" }));
  frame();
  assert.deepEqual(lines(card), ["downloading 90%"]);
  agui(output({ chunk: "\r\ndone\r\n", name: "run_shell_command", toolCallId: "c1" }));
  frame();
  assert.deepEqual(lines(card), ["downloading 90%", "done"]);
});

test("only the last 200 lines are kept; a chunk without a call id goes to that tool's running card", () => {
  const { el, frame, agui } = setup();
  agui({ type: "TOOL_CALL_START", toolCallId: "old", toolCallName: "run_shell_command" });
  agui({ type: "TOOL_CALL_RESULT", messageId: "r", toolCallId: "old", content: "ok" });
  agui({ type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "run_shell_command" });
  const chunk = Array.from({ length: 250 }, (_, i) => `line ${i}`).join("\n") + "\n";
  agui(output({ chunk, name: "run_shell_command" }));
  frame();
  const got = lines(el.querySelector(".gth-tool[data-tool-call-id=c1]"));
  assert.equal(got.length, 200);
  assert.equal(got[0], "line 50");
  assert.equal(got.at(-1), "line 249");
  assert.deepEqual(lines(el.querySelector(".gth-tool[data-tool-call-id=old]")), []);
});

test("CUSTOM tool output travels from the stream through the controller to the card", async () => {
  const { el, view, frame } = setup();
  const { fetch } = scriptedFetch([
    (b) => [
      started(b),
      { type: "TOOL_CALL_START", toolCallId: "call-n", toolCallName: "noisy" },
      output({ chunk: "one\n", name: "noisy", toolCallId: "call-n" }),
      output({ chunk: "two\n", name: "noisy", toolCallId: "call-n" }),
      { type: "TOOL_CALL_END", toolCallId: "call-n" },
      { type: "TOOL_CALL_RESULT", messageId: "r1", toolCallId: "call-n", content: "ok" },
      ...text("m1", "Done."),
      finished(b),
    ],
  ]);
  const chat = new ChatController({ url: "http://x/run", threadId: "t", registry: createRegistry([], { builtins: [] }), fetch });
  chat.on((e) => view.handle(e));
  await chat.send("go");
  frame();
  const card = el.querySelector(".gth-tool[data-tool-call-id=call-n]");
  assert.deepEqual(lines(card), ["one", "two"]);
  assert.equal(card.dataset.status, "done");
});

const checklistCall = (agui, id, items, { pieces = 3 } = {}) => {
  agui({ type: "TOOL_CALL_START", toolCallId: id, toolCallName: "gth_checklist" });
  const json = JSON.stringify({ items });
  const size = Math.ceil(json.length / pieces);
  for (let i = 0; i < json.length; i += size) agui({ type: "TOOL_CALL_ARGS", toolCallId: id, delta: json.slice(i, i + size) });
  agui({ type: "TOOL_CALL_END", toolCallId: id });
};

test("gth_checklist shows one panel above the composer, updated in place by each call", () => {
  const { el, frame, agui } = setup();
  const panel = el.querySelector(".gth-checklist");
  assert.equal(panel.hidden, true);
  assert.equal(panel.nextElementSibling, el.querySelector(".gth-composer"));
  // Half the arguments: nothing yet.
  agui({ type: "TOOL_CALL_START", toolCallId: "k1", toolCallName: "gth_checklist" });
  agui({ type: "TOOL_CALL_ARGS", toolCallId: "k1", delta: '{"items": [{"content": "Read' });
  frame();
  assert.equal(panel.hidden, true);
  agui({ type: "TOOL_CALL_ARGS", toolCallId: "k1", delta: '", "status": "in_progress"}, {"content": "Fix", "status": "pending"}]}' });
  frame(); // shown as soon as the JSON is whole, before TOOL_CALL_END
  assert.equal(panel.hidden, false);
  const items = () => [...panel.querySelectorAll("li")].map((li) => [li.querySelector(".gth-checklist-text").textContent, li.dataset.status]);
  assert.deepEqual(items(), [["Read", "in_progress"], ["Fix", "pending"]]);
  assert.equal(panel.querySelector("li[data-status=in_progress]").getAttribute("aria-current"), "step");
  assert.equal(panel.querySelector(".gth-checklist-mark").textContent, "◐");
  assert.equal(panel.querySelector(".gth-checklist-count").textContent, "0/2");
  agui({ type: "TOOL_CALL_END", toolCallId: "k1" });

  checklistCall(agui, "k2", [{ content: "Read", status: "completed" }, { content: "Fix", status: "in_progress" }]);
  assert.equal(el.querySelectorAll(".gth-checklist").length, 1);
  assert.equal(el.querySelector(".gth-checklist"), panel);
  assert.deepEqual(items(), [["Read", "completed"], ["Fix", "in_progress"]]);
  assert.equal(panel.querySelector(".gth-checklist-count").textContent, "1/2");
  assert.equal(panel.dataset.toolCallId, "k2");
  assert.equal(panel.querySelector("li[data-status=completed] .gth-checklist-mark").textContent, "☑");

  // A list with two items in progress is one the tool rejects: the panel keeps the last.
  checklistCall(agui, "k3", [{ content: "Read", status: "in_progress" }, { content: "Fix", status: "in_progress" }]);
  agui({ type: "TOOL_CALL_RESULT", messageId: "r3", toolCallId: "k3", content: 'Rejected: 2 items are "in_progress"' });
  frame();
  assert.deepEqual(items(), [["Read", "completed"], ["Fix", "in_progress"]]);

  // The result is what the tool kept.
  agui({ type: "TOOL_CALL_START", toolCallId: "k4", toolCallName: "gth_checklist" });
  agui({ type: "TOOL_CALL_RESULT", messageId: "r4", toolCallId: "k4", content: "Checklist (2/2 completed):\n[x] Read\n[x] Fix" });
  assert.deepEqual(items(), [["Read", "completed"], ["Fix", "completed"]]);
  // Text only.
  checklistCall(agui, "k5", [{ content: "<img src=x onerror=alert(1)>", status: "pending" }]);
  assert.equal(panel.querySelector("img"), null);
  assert.equal(panel.querySelector(".gth-checklist-text").textContent, "<img src=x onerror=alert(1)>");
  // An empty list hides the panel.
  checklistCall(agui, "k6", []);
  assert.equal(panel.hidden, true);
});

test("an older call's late paint does not replace a newer checklist", () => {
  const { el, frame, agui } = setup();
  agui({ type: "TOOL_CALL_START", toolCallId: "a", toolCallName: "gth_checklist" });
  agui({ type: "TOOL_CALL_ARGS", toolCallId: "a", delta: JSON.stringify({ items: [{ content: "old", status: "pending" }] }) });
  checklistCall(agui, "b", [{ content: "new", status: "pending" }]);
  frame();
  assert.equal(el.querySelector(".gth-checklist-text").textContent, "new");
});

test("the checklist comes back from the history; results parse", () => {
  const { el, view } = setup();
  const call = (id, items) => ({ id, type: "function", function: { name: "gth_checklist", arguments: JSON.stringify({ items }) } });
  view.handle({
    type: "history",
    messages: [
      { id: "u", role: "user", content: "plan" },
      { id: "a1", role: "assistant", toolCalls: [call("k1", [{ content: "A", status: "in_progress" }, { content: "B", status: "pending" }])] },
      { id: "t1", role: "tool", toolCallId: "k1", content: "Checklist (0/2 completed):\n[~] A\n[ ] B" },
      { id: "a2", role: "assistant", toolCalls: [call("k2", [{ content: "A", status: "in_progress" }, { content: "B", status: "in_progress" }])] },
      { id: "t2", role: "tool", toolCallId: "k2", content: 'Rejected: 2 items are "in_progress"' },
    ],
  });
  const panel = el.querySelector(".gth-checklist");
  assert.equal(panel.hidden, false);
  assert.deepEqual([...panel.querySelectorAll("li")].map((li) => li.dataset.status), ["in_progress", "pending"]);
  assert.deepEqual(itemsFromResult("Checklist cleared (no items)."), []);
  assert.equal(itemsFromResult("Rejected: ..."), null);
  assert.equal(itemsFromArgs('{"items": [{"content": "x", "status": "done"}]}'), null);
  assert.deepEqual(itemsFromArgs({ items: [{ content: "x", status: "completed", extra: 1 }] }), [{ content: "x", status: "completed" }]);
});

const statusCall = (agui, id, args) => {
  agui({ type: "TOOL_CALL_START", toolCallId: id, toolCallName: "gth_status_update" });
  agui({ type: "TOOL_CALL_ARGS", toolCallId: id, delta: JSON.stringify(args) });
  agui({ type: "TOOL_CALL_END", toolCallId: id });
};

test("gth_status_update shows one line under the header, replaced by each update and cleared when the run ends", () => {
  const { el, view, agui } = setup();
  const line = el.querySelector(".gth-status-line");
  assert.equal(line.previousElementSibling, el.querySelector(".gth-header"));
  assert.equal(line.hidden, true);
  view.handle({ type: "run-state", running: true });
  statusCall(agui, "s1", { input: "Reading the notebook" });
  assert.equal(line.hidden, false);
  assert.equal(line.textContent, "Reading the notebook");
  statusCall(agui, "s2", { message: "Running\nthe tests" });
  assert.equal(line.textContent, "Running the tests");
  assert.equal(el.querySelectorAll(".gth-status-line").length, 1);
  agui({ type: "TOOL_CALL_RESULT", messageId: "r2", toolCallId: "s2", content: "Running the tests" });
  assert.equal(line.textContent, "Running the tests");
  view.handle({ type: "run-state", running: false });
  assert.equal(line.hidden, true);
  assert.equal(line.textContent, "");
});

test("the status line follows a real run and clears when it finishes", async () => {
  const { el, view } = setup();
  let seenWhileRunning = "";
  const { fetch } = scriptedFetch([
    (b) => [started(b), ...toolCall("s1", "gth_status_update", { input: "Thinking hard" }), { type: "TOOL_CALL_RESULT", messageId: "r", toolCallId: "s1", content: "Thinking hard" }, ...text("m1", "Done."), finished(b)],
  ]);
  const chat = new ChatController({ url: "http://x/run", threadId: "t", registry: createRegistry([], { builtins: [] }), fetch });
  chat.on((e) => view.handle(e));
  chat.on((e) => {
    if (e.type === "agui" && e.event.type === "RUN_FINISHED") seenWhileRunning = el.querySelector(".gth-status-line").textContent;
  });
  await chat.send("go");
  assert.equal(seenWhileRunning, "Thinking hard");
  assert.equal(el.querySelector(".gth-status-line").hidden, true);
});
