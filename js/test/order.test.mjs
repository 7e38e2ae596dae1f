import { test } from "node:test";
import assert from "node:assert/strict";
import { mount } from "../src/app/mount.js";
import { announce, giveUp, waitForTurn, waitOutBusy } from "../src/order.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { sse, started, finished, text } from "../test-support/sse.mjs";

const until = async (cond, what = "condition", tries = 1000) => {
  for (let i = 0; i < tries; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
};

test("waitForTurn: waits until the turn before is done, woken by news from this page", async () => {
  let turns = [];
  const states = [];
  const asked = [];
  const waiting = waitForTurn({
    threadId: "t",
    afterTurn: "turn-a",
    turnsOf: async (turn) => (asked.push(turn), turns),
    signal: new AbortController().signal,
    onWait: (s) => states.push(s),
    pollMs: 60_000, // only news can wake it in this test
  });
  let done = false;
  void waiting.then(() => (done = true));
  await until(() => states.length === 1, "waiting");
  assert.deepEqual(states, ["not-started"]);
  turns = [{ turnId: "turn-a", done: false }];
  announce("other-thread"); // news about another thread does not wake it
  announce("t");
  await until(() => asked.length === 2, "second look");
  assert.equal(done, false);
  turns = [{ turnId: "turn-a", done: true }];
  announce("t");
  await waiting;
  assert.deepEqual(states, ["not-started"]); // told once
  assert.deepEqual(asked, ["turn-a", "turn-a", "turn-a"]);
});

test("waitForTurn: no turn before, a turn given up, and a cancel", async () => {
  const never = async () => [];
  const signal = new AbortController().signal;
  await waitForTurn({ threadId: "t", afterTurn: "", turnsOf: never, signal, onWait: () => assert.fail("no wait") });
  giveUp("t", "turn-gone");
  await waitForTurn({ threadId: "t", afterTurn: "turn-gone", turnsOf: never, signal, onWait: () => assert.fail("no wait") });
  const cancel = new AbortController();
  const waiting = waitForTurn({ threadId: "t", afterTurn: "turn-x", turnsOf: never, signal: cancel.signal, onWait: () => cancel.abort("cancel"), pollMs: 60_000 });
  await assert.rejects(waiting);
});

test("waitOutBusy: 409 run_busy is tried again after Retry-After; other refusals pass through", async () => {
  const answers = [
    Response.json({ code: "run_busy", message: "busy" }, { status: 409, headers: { "Retry-After": "0.05" } }),
    Response.json({ code: "run_busy", message: "busy" }, { status: 409, headers: { "Retry-After": "0.05" } }),
    new Response("data: {}\n\n", { headers: { "Content-Type": "text/event-stream" } }),
  ];
  const hooks = { waits: [], done: 0 };
  const f = waitOutBusy(async () => answers.shift(), {
    onWait: (s) => hooks.waits.push(s),
    onDone: () => hooks.done++,
  });
  const started = Date.now();
  const res = await f("/run", { method: "POST", body: "{}" });
  assert.equal(res.status, 200);
  assert.deepEqual(hooks.waits, [0.2, 0.2]); // Retry-After, but never a busy loop
  assert.ok(Date.now() - started >= 350);
  assert.equal(hooks.done, 1);

  const mismatch = Response.json({ code: "interrupt_mismatch", message: "no" }, { status: 409 });
  const passed = await waitOutBusy(async () => mismatch)("/run", {});
  assert.equal((await passed.json()).code, "interrupt_mismatch");

  const stop = new AbortController();
  const busy = () => Response.json({ code: "run_busy" }, { status: 409, headers: { "Retry-After": "5" } });
  const pending = waitOutBusy(async () => busy(), { onWait: () => stop.abort() })("/run", { signal: stop.signal });
  await assert.rejects(pending, (err) => err.name === "AbortError");
});

/** A fake server for one thread: runs answer in order; the thread view follows what ran. */
function threadServer(replies) {
  const runs = [];
  const done = new Set();
  const holds = new Map(); // turnId -> release(), to keep a run in flight
  const fetch = async (url, init = {}) => {
    if (url.endsWith("gth/health")) return Response.json({ status: "ok" });
    if (url.includes("gth/threads/")) {
      const turn = new URL(url, "http://x").searchParams.get("turn");
      const turns = runs.map((r) => ({ turnId: r.turn, done: done.has(r.turn) }));
      const asMessages = (list) => list.flatMap((r) => [{ id: r.id, role: "user", content: r.prompt }, ...(done.has(r.turn) ? [{ id: `m-${r.turn}`, role: "assistant", content: replies[r.prompt] ?? "?" }] : [])]);
      return Response.json({ threadId: "t", messages: asMessages(turn ? runs.filter((r) => r.turn === turn) : runs), turns });
    }
    if (url.endsWith("/run")) {
      const body = JSON.parse(init.body);
      const turn = body.forwardedProps?.gth?.turnId;
      const user = body.messages.at(-1);
      runs.push({ turn, prompt: user.content, id: user.id });
      await new Promise((resolve) => (holds.has(turn) ? holds.get(turn).push(resolve) : resolve()));
      done.add(turn);
      const reply = replies[user.content] ?? "?";
      return new Response(sse([started(body), ...text(`m-${turn}`, reply), finished(body)]), { headers: { "Content-Type": "text/event-stream" } });
    }
    return new Response("", { status: 404 });
  };
  return { fetch, runs, hold: (turn) => holds.set(turn, []), release: (turn) => holds.get(turn).forEach((r) => r()) };
}

function widget(document, fetch, traits) {
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t", agent: "default", transport: "http", base_url: "/base/", model_label: "m", client_tools: [], ...traits });
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  return { el, model, cleanup };
}

test("Run All: the second cell renders first but sends only after the first cell's turn is done", async () => {
  const { document } = makeDom();
  const server = threadServer({ hello: "Hi!", "photo?": "Smile." });
  server.hold("turn-1");
  // The page happens to render the second cell's widget first.
  const second = widget(document, server.fetch, { turn_id: "turn-2", after_turn: "turn-1", pending_prompt: "photo?" });
  await until(() => second.el.querySelector(".gth-root").dataset.waiting === "true", "second waits");
  assert.match(second.el.querySelector(".gth-waiting-text").textContent, /cell above/);
  assert.equal(server.runs.length, 0);
  const first = widget(document, server.fetch, { turn_id: "turn-1", after_turn: "", pending_prompt: "hello" });
  await until(() => server.runs.length === 1, "first sends");
  assert.equal(server.runs[0].turn, "turn-1");
  assert.equal(second.el.querySelector(".gth-root").dataset.waiting, "true"); // still waiting: turn 1 runs
  server.release("turn-1");
  await until(() => server.runs.length === 2, "second sends", 2000);
  assert.deepEqual(server.runs.map((r) => [r.turn, r.prompt]), [["turn-1", "hello"], ["turn-2", "photo?"]]);
  await until(() => second.el.querySelector("[data-message-id=m-turn-2]"), "second answer");
  assert.match(first.el.querySelector("[data-message-id=m-turn-1]").textContent, /Hi!/);
  assert.equal(second.el.querySelector(".gth-root").dataset.waiting, "false");
  assert.equal(second.model.get("pending_prompt"), "");
  first.cleanup();
  second.cleanup();
});

test("a reload never sends a turn the server already has; cancel gives the next cell its go", async () => {
  const { document } = makeDom();
  const server = threadServer({ hello: "Hi!", next: "Next." });
  const first = widget(document, server.fetch, { turn_id: "turn-r1", pending_prompt: "hello" });
  await until(() => first.el.querySelector("[data-message-id=m-turn-r1]"), "answer");
  first.cleanup();
  // The same widget, re-rendered with a stale pending prompt (a reload): nothing is sent again.
  const again = widget(document, server.fetch, { turn_id: "turn-r1", pending_prompt: "hello" });
  await until(() => again.model.get("pending_prompt") === "", "stale prompt dropped");
  assert.equal(server.runs.length, 1);
  assert.match(again.el.querySelector(".gth-transcript").textContent, /hello/); // its own turn shown
  // A later prompt from the kernel (GthChat.ask) is a follow-up in the same turn, sent at once.
  again.model.set("pending_prompt", "follow up");
  await until(() => server.runs.length === 2, "follow-up sent");
  assert.deepEqual([server.runs[1].turn, server.runs[1].prompt], ["turn-r1", "follow up"]);
  await until(() => again.el.querySelector(".gth-root").dataset.state === "idle", "idle");

  const blocked = widget(document, server.fetch, { turn_id: "turn-r3", after_turn: "turn-never", pending_prompt: "hello" });
  const next = widget(document, server.fetch, { turn_id: "turn-r4", after_turn: "turn-r3", pending_prompt: "next" });
  await until(() => blocked.el.querySelector(".gth-waiting-action"), "waiting with actions");
  const cancel = [...blocked.el.querySelectorAll(".gth-waiting-action")].find((b) => b.textContent === "Cancel");
  cancel.click();
  await until(() => server.runs.length === 3, "the next cell goes", 2000);
  assert.deepEqual(server.runs.at(-1), { turn: "turn-r4", prompt: "next", id: server.runs.at(-1).id });
  assert.match(blocked.el.querySelector(".gth-transcript").textContent, /Not sent/);
  for (const w of [again, blocked, next]) w.cleanup();
});

test("%gth alone follows the turns the cells of its page run", async () => {
  const { document } = makeDom();
  const server = threadServer({ hello: "Hi!" });
  const chat = widget(document, server.fetch, { turn_id: "", pending_prompt: "" });
  await until(() => chat.el.querySelector(".gth-root").dataset.ready === "true", "chat ready");
  assert.equal(chat.el.querySelectorAll(".gth-msg").length, 0);
  const cell = widget(document, server.fetch, { turn_id: "turn-c1", pending_prompt: "hello" });
  await until(() => cell.el.querySelector("[data-message-id=m-turn-c1]"), "cell answered");
  await until(() => chat.el.querySelector("[data-message-id=m-turn-c1]"), "the chat shows it too");
  assert.match(chat.el.querySelector(".gth-transcript").textContent, /hello[\s\S]*Hi!/);
  cell.cleanup();
  chat.cleanup();
});
