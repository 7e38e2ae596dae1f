// Standing approvals in the widget: the card's "Always allow" buttons, the grants list with its
// Revoke button, and the backend calls behind them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatController } from "../src/chat/controller.js";
import { createBackend } from "../src/transport.js";
import { createRegistry } from "../src/tools/registry.js";
import { TranscriptView } from "../src/transcript.js";
import { GrantsPanel, wireGrants } from "../src/view/grants.js";
import { makeDom, click } from "../test-support/dom.mjs";
import { scriptedFetch, started, finished, text, toolCall } from "../test-support/sse.mjs";

const SCHEMA = {
  type: "object",
  properties: { approved: { type: "boolean" }, editedArgs: { type: "object" }, grant: { type: "string", enum: ["thread", "session"] } },
  required: ["approved"],
};

const approval = (schema = SCHEMA) => ({
  id: "int-1",
  reason: "confirmation",
  message: "The agent wants to run `ls` (run_shell_command): approvals mode asks.",
  toolCallId: "call-1",
  responseSchema: schema,
  metadata: { gth: { value: { type: "gth.approval", reason: "confirmation", toolCallId: "call-1", toolName: "run_shell_command", args: { command: "ls" }, command: "ls" } } },
});

const until = async (cond, what = "condition") => {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
};

function setup(interrupt = approval()) {
  const { window, document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const { fetch, requests } = scriptedFetch([
    (b) => [started(b), ...toolCall("call-1", "run_shell_command", { command: "ls" }), finished(b, { type: "interrupt", interrupts: [interrupt] })],
    (b) => [started(b), ...text("m2", "Done."), finished(b)],
  ]);
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
  return { window, document, el, chat, requests };
}

for (const scope of ["thread", "session"]) {
  test(`"Always allow" (${scope}) resumes with {approved: true, grant: "${scope}"}`, async () => {
    const { window, el, chat, requests } = setup();
    await chat.send("list");
    const card = el.querySelector(".gth-approval");
    assert.ok(card.querySelector("button.gth-approve-thread") && card.querySelector("button.gth-approve-session"));
    assert.match(card.querySelector(`.gth-approve-${scope}`).getAttribute("title"), /this exact command/);
    // A script's click does nothing.
    click(window, card.querySelector(`.gth-approve-${scope}`), { trusted: false });
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(requests.length, 1);
    click(window, card.querySelector(`.gth-approve-${scope}`));
    await until(() => requests.length === 2, "resume request");
    assert.deepEqual(requests[1].body.resume, [{ interruptId: "int-1", status: "resolved", payload: { approved: true, grant: scope } }]);
    assert.equal(card.dataset.state, scope);
    assert.match(card.querySelector(".gth-approval-decision").textContent, /without asking/);
    for (const b of card.querySelectorAll("button")) assert.equal(b.disabled, true);
  });
}

test("a server whose answers carry no grant gets no Always allow buttons", async () => {
  const { el, chat } = setup(approval({ type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] }));
  await chat.send("list");
  const card = el.querySelector(".gth-approval");
  assert.equal(card.querySelector(".gth-approve-thread"), null);
  assert.equal(card.querySelector(".gth-approve-session"), null);
  assert.ok(card.querySelector(".gth-approve"));
});

test("a call the server will not grant shows why and offers no Always allow, even with grant in the schema", async () => {
  const reason = "This command contains a line break, which the shell reads as the start of another command, so it can be approved only this once, never always allowed.";
  const multiLine = approval();
  multiLine.metadata.gth.value = { ...multiLine.metadata.gth.value, command: "echo cleaning:\nrm -f victim.txt", grantable: false, grantReason: reason };
  const { window, el, chat, requests } = setup(multiLine);
  await chat.send("clean");
  const card = el.querySelector(".gth-approval");
  assert.equal(card.querySelector(".gth-approve-thread"), null);
  assert.equal(card.querySelector(".gth-approve-session"), null);
  assert.equal(card.querySelector(".gth-approval-once").textContent, reason);
  // Approve is still offered, and answers for this call only.
  click(window, card.querySelector(".gth-approve"));
  await until(() => requests.length === 2, "resume request");
  assert.deepEqual(requests[1].body.resume, [{ interruptId: "int-1", status: "resolved", payload: { approved: true } }]);
});

test("a grantable call shows no once-only note", async () => {
  const plain = approval();
  plain.metadata.gth.value = { ...plain.metadata.gth.value, grantable: true };
  const { el, chat } = setup(plain);
  await chat.send("list");
  const card = el.querySelector(".gth-approval");
  assert.equal(card.querySelector(".gth-approval-once"), null);
  assert.ok(card.querySelector(".gth-approve-thread") && card.querySelector(".gth-approve-session"));
});

const GRANTS = [
  { id: "g1", scope: "thread", kind: "shell", label: "ls -l", createdAt: 1 },
  { id: "g2", scope: "session", kind: "tool", label: "web_fetch", createdAt: 2 },
];

function fakeBackend(initial = GRANTS) {
  let grants = [...initial];
  const calls = [];
  return {
    calls,
    async grants(threadId) {
      calls.push(["list", threadId]);
      return grants;
    },
    async revokeGrant(id) {
      calls.push(["revoke", id]);
      const had = grants.some((g) => g.id === id);
      grants = grants.filter((g) => g.id !== id);
      return had;
    },
  };
}

test("the grants list shows one row per grant and Revoke removes it", async () => {
  const { window, document } = makeDom();
  const backend = fakeBackend();
  const panel = new GrantsPanel(document, backend, "t1");
  assert.equal(panel.el.hidden, true);
  await panel.refresh();
  assert.equal(panel.el.hidden, false);
  const rows = panel.el.querySelectorAll(".gth-grant");
  assert.deepEqual([...rows].map((r) => r.dataset.grantId), ["g1", "g2"]);
  assert.equal(rows[0].querySelector(".gth-grant-label").textContent, "ls -l");
  assert.match(rows[1].querySelector(".gth-grant-scope").textContent, /every conversation/);
  assert.match(panel.el.querySelector("summary").textContent, /\(2\)/);
  click(window, rows[0].querySelector(".gth-grant-revoke"), { trusted: false });
  await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(backend.calls, [["list", "t1"]]);
  click(window, rows[0].querySelector(".gth-grant-revoke"));
  await until(() => panel.el.querySelectorAll(".gth-grant").length === 1, "revoked row gone");
  assert.deepEqual(backend.calls, [["list", "t1"], ["revoke", "g1"], ["list", "t1"]]);
  click(window, panel.el.querySelector(".gth-grant-revoke"));
  await until(() => panel.el.hidden, "empty list hidden");
});

test("no route (the comm, an older server) hides the list; a failed refresh keeps it", async () => {
  const { document } = makeDom();
  const panel = new GrantsPanel(document, { grants: async () => null, revokeGrant: async () => false }, "t1");
  await panel.refresh();
  assert.equal(panel.el.hidden, true);
  panel.show(GRANTS);
  panel.backend = { grants: async () => Promise.reject(new Error("offline")), revokeGrant: async () => false };
  await panel.refresh();
  assert.equal(panel.el.querySelectorAll(".gth-grant").length, 2);
});

test("wireGrants refreshes the list after each run", async () => {
  const { document } = makeDom();
  const parent = document.createElement("div");
  const backend = fakeBackend([]);
  const listeners = new Set();
  const chat = { on: (fn) => (listeners.add(fn), () => listeners.delete(fn)) };
  const { panel, stop } = wireGrants({ doc: document, backend, chat, threadId: "t9", parent });
  assert.equal(parent.firstChild, panel.el);
  await until(() => backend.calls.length === 1, "first refresh");
  for (const fn of listeners) fn({ type: "run-state", running: true });
  for (const fn of listeners) fn({ type: "run-state", running: false });
  await until(() => backend.calls.length === 2, "refresh after the run");
  stop();
  assert.equal(listeners.size, 0);
});

test("the HTTP backend lists and revokes grants; the comm backend has none", async () => {
  const seen = [];
  const fetchImpl = async (url, init) => {
    seen.push([init?.method, url]);
    if (url.endsWith("/grants")) return new Response(JSON.stringify({ grants: GRANTS }), { status: 200, headers: { "Content-Type": "application/json" } });
    if (url.endsWith("/gone")) return new Response(JSON.stringify({ code: "grant_not_found" }), { status: 404 });
    return new Response(null, { status: 204 });
  };
  const { document } = makeDom();
  const http = createBackend("http", { model: {}, baseUrl: "/base/", fetchImpl, doc: document });
  assert.deepEqual(await http.grants("t 1"), GRANTS);
  assert.equal(await http.revokeGrant("g1"), true);
  assert.equal(await http.revokeGrant("gone"), false);
  assert.deepEqual(seen, [
    ["GET", "/base/gth/threads/t%201/grants"],
    ["DELETE", "/base/gth/grants/g1"],
    ["DELETE", "/base/gth/grants/gone"],
  ]);
  const comm = createBackend("comm", { model: { on() {}, off() {}, send() {} }, baseUrl: "/" });
  assert.equal(await comm.grants("t1"), null);
  assert.equal(await comm.revokeGrant("g1"), false);
});
