// The cell's static copy (src/app/static.js) and a turn never sent twice: each copy is written
// once, through the notebook extension's bridge, else by the kernel. Over HTTP the server ran the
// turn: its end reads the thread once, with the copy the server renders from that read, and the
// kernel is told only where the page has no bridge. Over the comm the kernel renders the turn.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mount } from "../src/app/mount.js";
import { Turns } from "../src/app/turns.js";
import { wireStaticCopy } from "../src/app/static.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { testEnv, until } from "../test-support/mount.mjs";
import { sse, started, finished, text } from "../test-support/sse.mjs";

const DATA = { "text/plain": "The answer.", "text/markdown": "The answer.", "text/html": "<div class=\"gth-static-copy\">The answer.</div>" };
/** The server's copy of a thread's view, as `?copy=1` adds it (here: its last message's text). */
const copyOf = (/** @type {any[]} */ messages) => {
  const text = String(messages.at(-1)?.content ?? "");
  return { "text/plain": text, "text/markdown": text, "text/html": `<div class="gth-static-copy">${text}</div>` };
};

/**
 * A server with thread t1 whose turns are `turns` (each `{turnId, done}`, their messages one
 * question and answer), answering runs with one text message.
 * @param {{ turnId: string, done: boolean }[]} turns
 */
function server(turns) {
  /** @type {{ url: string, init: RequestInit }[]} */
  const requests = [];
  let answered = false;
  const fetch = async (/** @type {string} */ url, /** @type {RequestInit} */ init = {}) => {
    requests.push({ url, init });
    if (url === "/base/gth/health") return Response.json({ status: "ok" });
    if (url.startsWith("/base/gth/threads/t1")) {
      const messages = turns.length ? [{ id: "u0", role: "user", content: "hi" }, { id: "a0", role: "assistant", content: "hello" }] : [];
      if (answered) messages.push({ id: "u1", role: "user", content: "What is it?" }, { id: "m1", role: "assistant", content: "The answer." });
      const copy = !url.includes("copy=1") ? undefined : url.includes("turn=") && !messages.length ? null : copyOf(messages);
      return Response.json({ threadId: "t1", messages, interrupts: [], busy: false, turns, ...(copy === undefined ? {} : { copy }) });
    }
    if (url === "/base/gth/agents/default/run") {
      answered = true;
      const body = JSON.parse(String(init.body));
      return new Response(sse([started(body), ...text("m1", "The answer."), finished(body)]), { headers: { "Content-Type": "text/event-stream" } });
    }
    return new Response("not found", { status: 404 });
  };
  const runs = () => requests.filter((r) => r.url.endsWith("/run"));
  /** The reads of the thread since the first run started. */
  const readsAfterRun = () => requests.slice(requests.indexOf(runs()[0]) + 1).filter((r) => isThreadRead(r.url));
  return { fetch, requests, runs, readsAfterRun };
}

/** A read of thread t1 itself (not of its standing approvals, `…/grants`). */
const isThreadRead = (/** @type {string} */ url) => /^\/base\/gth\/threads\/t1(\?|$)/.test(url);

let displays = 0;
/** The traits of a widget with an output of its own (the page remembers outputs it refreshed). */
const traits = (/** @type {Record<string, any>} */ more) => ({
  thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", client_tools: [], pending_prompt: "",
  display_id: `gth-d${++displays}`, cell_id: "cell-1", kernel_id: "k-1", ...more,
});

/** A bridge that records what it is asked. */
function fakeBridge() {
  const calls = { find: /** @type {any[]} */ ([]), set: /** @type {any[]} */ ([]) };
  return {
    calls,
    version: 1,
    find(/** @type {any} */ where) {
      calls.find.push(where);
      return { setStaticCopy: (/** @type {any} */ copy) => (calls.set.push(copy), true) };
    },
  };
}

test("a live HTTP turn's end reads its thread once and writes its copy once, through the bridge; the kernel is not told", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel(traits({ turn_id: "tt-1", pending_prompt: "What is it?" }));
  const bridge = fakeBridge();
  /** @type {any} */ (globalThis).__gth_jupyter_notebook__ = bridge;
  try {
    const { fetch, runs, readsAfterRun } = server([]);
    const cleanup = mount({ model, el, env: testEnv(fetch) });
    await until(() => el.querySelector("[data-message-id=m1]"), "answer");
    await until(() => bridge.calls.set.length > 0, "the copy written");
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(runs().length, 1);
    // One read after the run: the turn with the copy the server rendered from that read.
    assert.deepEqual(readsAfterRun().map((r) => r.url), ["/base/gth/threads/t1?turn=tt-1&copy=1"]);
    // One write: the server's copy, into the notebook, by the page.
    assert.deepEqual(bridge.calls.set, [{ displayId: model.get("display_id"), data: copyOf([{ content: "The answer." }]) }]);
    assert.deepEqual(model.sent.filter((m) => m.type === "turn_end"), []);
    assert.equal(el.querySelector(".gth-root").dataset.transport, "http");
    cleanup();
  } finally {
    delete (/** @type {any} */ (globalThis).__gth_jupyter_notebook__);
  }
});

test("without a bridge the server's copy goes to the kernel, which writes it: still one read and one write", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel(traits({ turn_id: "tt-1b", pending_prompt: "What is it?" }));
  const { fetch, runs, readsAfterRun } = server([]);
  const cleanup = mount({ model, el, env: testEnv(fetch) });
  await until(() => el.querySelector("[data-message-id=m1]"), "answer");
  await until(() => model.sent.some((m) => m.type === "turn_end"), "turn_end");
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(runs().length, 1);
  assert.equal(readsAfterRun().length, 1);
  // The copy as the server rendered it, for the kernel to write as it came; no view to render.
  assert.deepEqual(model.sent.filter((m) => m.type === "turn_end"), [{ type: "turn_end", turnIds: ["tt-1b"], copy: copyOf([{ content: "The answer." }]) }]);
  cleanup();
});

test("over the comm transport the turn's end names the turn only (the kernel ran it and has it)", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel(traits({ turn_id: "tt-c", pending_prompt: "over the comm?" }), {
    onSend: (msg, m) => {
      if (msg.type === "history") setTimeout(() => m.deliver({ type: "history", requestId: msg.requestId, messages: [], turns: [] }));
      if (msg.type === "run") {
        const b = msg.body;
        setTimeout(() => {
          m.deliver({ type: "chunk", requestId: msg.requestId, data: sse([started(b), ...text("k1", "over the comm"), finished(b)]) });
          m.deliver({ type: "end", requestId: msg.requestId });
        });
      }
    },
  });
  const fetch = async () => new Response("nope", { status: 404, headers: { "Content-Type": "text/html" } });
  const cleanup = mount({ model, el, env: testEnv(fetch) });
  await until(() => model.sent.some((m) => m.type === "turn_end"), "turn_end");
  assert.equal(el.querySelector(".gth-root").dataset.transport, "comm");
  // The kernel renders it; with no bridge on this page it writes it too.
  assert.deepEqual(model.sent.filter((m) => m.type === "turn_end"), [{ type: "turn_end", turnIds: ["tt-c"], pageWrites: false }]);
  cleanup();
});

test("the kernel's static copy goes to the notebook bridge, found by the widget's cell and kernel", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel(traits({ turn_id: "", display_id: "gth-b1" }));
  const bridge = fakeBridge();
  /** @type {any} */ (globalThis).__gth_jupyter_notebook__ = bridge;
  try {
    const { fetch } = server([]);
    const cleanup = mount({ model, el, env: testEnv(fetch), parkMs: 0 });
    await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
    model.deliver({ type: "static", displayId: "gth-other", data: DATA }); // another widget's output
    model.deliver({ type: "static", displayId: "gth-b1", data: DATA });
    // (the widget's notebook tools ask the bridge too, with the same cell and kernel)
    assert.ok(bridge.calls.find.length >= 1);
    for (const where of bridge.calls.find) assert.deepEqual(where, { cellId: "cell-1", kernelId: "k-1" });
    assert.deepEqual(bridge.calls.set, [{ displayId: "gth-b1", data: DATA }]);
    cleanup();
    model.deliver({ type: "static", displayId: "gth-b1", data: DATA }); // the view is gone
    assert.equal(bridge.calls.set.length, 1);
  } finally {
    delete (/** @type {any} */ (globalThis).__gth_jupyter_notebook__);
  }
});

test("a kernel's copy the bridge cannot write (none on this page, a closed notebook, no such output) goes back for the kernel to write", () => {
  const model = fakeModel(traits({ display_id: "gth-d1", turn_id: "tt-f" }));
  const gone = new AbortController();
  /** @type {any} */
  let bridge;
  wireStaticCopy({ model, signal: gone.signal, bridge: () => bridge });
  model.deliver({ type: "static", displayId: "gth-d1", data: DATA }); // no bridge on this page
  bridge = { find: () => null };
  model.deliver({ type: "static", displayId: "gth-d1", data: DATA });
  bridge = { find: () => { throw new Error("The notebook was closed."); } };
  model.deliver({ type: "static", displayId: "gth-d1", data: DATA });
  bridge = { find: () => ({ setStaticCopy: () => { throw new Error("No such cell."); } }) };
  model.deliver({ type: "static", displayId: "gth-d1", data: DATA });
  bridge = { find: () => ({ setStaticCopy: () => false }) }; // the notebook holds no such output
  model.deliver({ type: "static", displayId: "gth-d1", data: DATA });
  assert.deepEqual(model.sent, Array(5).fill({ type: "turn_end", turnIds: ["tt-f"], copy: DATA }));
  model.deliver({ type: "static", displayId: "gth-d1" }); // malformed: no data
  model.deliver({ type: "static", displayId: "gth-d1", data: { "text/html": 1 } });
  assert.equal(model.sent.length, 5);
  gone.abort();
  assert.equal(model.listenerCount("msg:custom"), 0);
});

test("a turn the thread already has is shown, never sent again, and its copy refreshed", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  // The page was reloaded (or the kernel ran the turn): the widget still holds its prompt.
  const model = fakeModel(traits({ turn_id: "tt-2", pending_prompt: "hi" }));
  const { fetch, runs, requests } = server([{ turnId: "tt-2", done: true }]);
  const cleanup = mount({ model, el, env: testEnv(fetch) });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  await until(() => model.sent.some((m) => m.type === "turn_end"), "refresh asked");
  assert.equal(el.querySelector("[data-message-id=a0]").textContent.trim(), "hello");
  assert.equal(model.get("pending_prompt"), "");
  // Nothing is sent later either (a change of the prompt to "" is not a new prompt).
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(runs().length, 0);
  // The history and the copy came in one read; the copy goes to the kernel (no bridge here).
  const ends = model.sent.filter((m) => m.type === "turn_end");
  assert.deepEqual(ends, [{ type: "turn_end", turnIds: ["tt-2"], copy: copyOf([{ content: "hello" }]) }]);
  assert.deepEqual(requests.filter((r) => isThreadRead(r.url)).map((r) => r.url), ["/base/gth/threads/t1?turn=tt-2&copy=1"]);
  cleanup();

  // The kernel's refresh makes the notebook draw the widget again: the new view does not ask
  // again (each refresh would ask for the next).
  const again = document.createElement("div");
  const cleanupAgain = mount({ model, el: again, env: testEnv(fetch) });
  await until(() => again.querySelector(".gth-root").dataset.ready === "true", "ready again");
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(model.sent.filter((m) => m.type === "turn_end").length, 1);
  assert.equal(runs().length, 0);
  cleanupAgain();
});

/** A view's turns with a stand-in chat and view. */
function turnsFor(/** @type {Record<string, any>} */ more) {
  const model = fakeModel(traits(more));
  const sent = /** @type {string[]} */ ([]);
  const chat = /** @type {any} */ ({ running: false, send: (/** @type {string} */ t) => sent.push(t), on() {}, accepts: () => true });
  const view = /** @type {any} */ ({ addNote() {}, setWaiting() {} });
  const gone = new AbortController();
  let ended = 0;
  const turns = new Turns({ model, view, signal: gone.signal, onTurnEnd: () => (ended += 1) });
  turns.connect(chat, "t1");
  return { model, sent, turns, gone, ended: () => ended };
}

test("a turn sent from elsewhere while this view waited (another tab, the kernel) is not sent again", async () => {
  // The thread gets this turn between the history and the send: shown again, not sent.
  const one = turnsFor({ turn_id: "tt-3", pending_prompt: "once", after_turn: "tt-above" });
  let reloads = 0;
  let asked = 0;
  const turnsOf = async () => (++asked === 1 ? [{ turnId: "tt-above", done: true }] : [{ turnId: "tt-above", done: true }, { turnId: "tt-3", done: false }]);
  one.turns.start({ threadId: "t1", turnsOf, sent: false, reload: () => (reloads += 1) });
  await one.turns.sendPending();
  assert.deepEqual([one.sent, reloads, one.model.get("pending_prompt")], [[], 1, ""]);

  // Another page sent it: the kernel cleared the prompt while this view waited.
  const two = turnsFor({ turn_id: "tt-4", pending_prompt: "once", after_turn: "tt-above-2" });
  let release = () => {};
  const gate = new Promise((r) => (release = () => r(undefined)));
  const turnsOf2 = async () => (await gate, [{ turnId: "tt-above-2", done: true }]);
  two.turns.start({ threadId: "t1", turnsOf: turnsOf2, sent: false, reload: () => {} });
  const pending = two.turns.sendPending();
  two.model.set("pending_prompt", "");
  release();
  await pending;
  assert.deepEqual(two.sent, []);

  // Otherwise it goes once, and the run's end asks for the static copy.
  const three = turnsFor({ turn_id: "tt-5", pending_prompt: "go" });
  three.turns.start({ threadId: "t1", turnsOf: async () => [], sent: false });
  await three.turns.sendPending();
  assert.deepEqual(three.sent, ["go"]);
  three.turns.threadFree("t1");
  assert.equal(three.ended(), 1);
  for (const v of [one, two, three]) v.gone.abort();
});

test("a turn the server holds nothing of (its run refused) has the kernel show the cell's prompt; a failed read writes nothing", async () => {
  const model = fakeModel(traits({ turn_id: "tt-6" }));
  const gone = new AbortController();
  /** @type {any} */
  let bridge;
  const copy = wireStaticCopy({ model, signal: gone.signal, bridge: () => bridge });
  copy.copyFrom(async () => ({ copy: null }));
  await copy.turnEnded();
  bridge = { find: () => ({ setStaticCopy: () => true }) }; // the kernel answers, the page writes
  await copy.turnEnded();
  copy.copyFrom(async () => { throw new Error("HTTP 500"); });
  await copy.turnEnded(); // the copy stays as it was
  assert.deepEqual(model.sent, [
    { type: "turn_end", turnIds: ["tt-6"], copy: null, pageWrites: false },
    { type: "turn_end", turnIds: ["tt-6"], copy: null, pageWrites: true },
  ]);
  gone.abort();
  await copy.turnEnded(); // the view is gone: nothing more
  assert.equal(model.sent.length, 2);
});

test("the notebook drawing the widget again (the kernel's refresh) moves the view; no second view loads", async () => {
  const { document } = makeDom();
  const renderer = document.createElement("div");
  document.body.append(renderer);
  const first = document.createElement("div");
  renderer.append(first);
  const model = fakeModel(traits({ turn_id: "tt-7" }));
  const { fetch, requests, runs } = server([{ turnId: "tt-7", done: true }]);
  const cleanupFirst = mount({ model, el: first, env: testEnv(fetch) });
  await until(() => first.querySelector(".gth-root")?.dataset.ready === "true", "ready");
  const root = first.querySelector(".gth-root");
  const asked = requests.length;
  // What the widget manager does when the output is updated: the old view's element leaves
  // the page (the old view is not ended), and a new view is drawn in its place.
  renderer.textContent = "Loading widget...";
  const second = document.createElement("div");
  renderer.textContent = "";
  renderer.append(second);
  const cleanupSecond = mount({ model, el: second, env: testEnv(fetch), parkMs: 0 });
  assert.equal(second.querySelector(".gth-root"), root);
  assert.equal(requests.length, asked); // nothing loaded again
  cleanupFirst(); // the old renderer is disposed later: the view it held lives on
  assert.equal(second.querySelector(".gth-root"), root);
  // A prompt from the kernel (GthChat.ask) goes once, from the view on the page.
  model.set("pending_prompt", "and more?");
  await until(() => second.querySelector("[data-message-id=m1]"), "answer in the view on the page");
  assert.equal(runs().length, 1);
  cleanupSecond();
  assert.equal(second.querySelector(".gth-root"), null);
});

/**
 * A view's model as anywidget gives it: the widget's model, with the listeners added through it
 * dropped when the view ends (`drop`).
 * @param {ReturnType<typeof fakeModel>} model
 */
function viewModel(model) {
  /** @type {[string, any][]} */
  const added = [];
  return {
    get: model.get,
    set: model.set,
    save_changes: model.save_changes,
    send: model.send,
    on(/** @type {string} */ name, /** @type {any} */ cb) {
      added.push([name, cb]);
      model.on(name, cb);
    },
    off(/** @type {string} */ name, /** @type {any} */ cb) {
      model.off(name, cb);
    },
    drop() {
      for (const [name, cb] of added) model.off(name, cb);
    },
  };
}

test("a view the notebook let go waits for a new view of its model to take it over, else it ends", async () => {
  const { document } = makeDom();
  const model = fakeModel(traits({ turn_id: "tt-8" }));
  const { fetch, requests, runs } = server([{ turnId: "tt-8", done: true }]);
  const first = document.createElement("div");
  document.body.append(first);
  const firstModel = viewModel(model);
  const cleanupFirst = mount({ model: firstModel, el: first, env: testEnv(fetch), parkMs: 60_000 });
  await until(() => first.querySelector(".gth-root")?.dataset.ready === "true", "ready");
  const root = first.querySelector(".gth-root");
  const asked = requests.length;
  // The output is drawn again by ending the old view (its listeners dropped) and drawing a new one.
  first.remove();
  firstModel.drop();
  cleanupFirst();
  const second = document.createElement("div");
  document.body.append(second);
  const cleanupSecond = mount({ model: viewModel(model), el: second, env: testEnv(fetch), parkMs: 10 });
  assert.equal(second.querySelector(".gth-root"), root);
  assert.equal(requests.length, asked);
  assert.equal(model.listenerCount("change:pending_prompt"), 1); // one view, listening again
  model.set("pending_prompt", "still there?");
  await until(() => runs().length === 1, "the kernel's prompt sent by the view taken over");
  // Let go with nothing to take it over: it ends once the wait is over.
  second.remove();
  cleanupSecond();
  assert.equal(model.listenerCount("change:pending_prompt"), 1);
  await until(() => model.listenerCount("change:pending_prompt") === 0, "the view ended");
  assert.equal(root.isConnected, false);
});
