// Turn order and sending (src/app/turns.js), with a stand-in chat and view: what goes to the
// chat and when. The page-level order of `%gth` cells is followed end to end in order.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Turns } from "../src/app/turns.js";
import { fakeModel } from "../test-support/model.mjs";
import { until } from "../test-support/mount.mjs";

/** A chat that records what it is sent; `running` and `accepts` as a test sets them. */
function fakeChat() {
  const listeners = new Set();
  return {
    running: false,
    sent: [],
    actions: [],
    stops: 0,
    accepts(text) {
      return !this.running && Boolean(text.trim());
    },
    send(text) {
      this.sent.push(text);
    },
    sendAction(action) {
      this.actions.push(action);
    },
    stop() {
      this.stops += 1;
    },
    on(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    emit(e) {
      for (const fn of listeners) fn(e);
    },
  };
}

function fakeView() {
  return {
    notes: [],
    waiting: null,
    addNote(text, kind) {
      this.notes.push({ text, kind });
    },
    setWaiting(state) {
      this.waiting = state;
    },
  };
}

const setup = (traits) => {
  const model = fakeModel({ pending_prompt: "", ...traits });
  const view = fakeView();
  const gone = new AbortController();
  const turns = new Turns({ model, view, signal: gone.signal });
  const chat = fakeChat();
  return { model, view, gone, turns, chat };
};

test("before the transport is chosen, typed text stays in the input and the buttons do nothing", () => {
  const { turns, view } = setup({ turn_id: "tt-0" });
  assert.equal(turns.send("hello"), false);
  turns.sendAction({ name: "go" });
  turns.stop();
  assert.deepEqual(view.notes, []);
});

test("typed text goes when the chat takes it; an action while the agent answers is said to wait", () => {
  const { turns, view, chat } = setup({ turn_id: "tt-1" });
  turns.connect(chat, "t1");
  assert.equal(turns.send("hello"), true);
  assert.equal(turns.send("   "), false);
  chat.running = true;
  assert.equal(turns.send("more"), false);
  turns.sendAction({ name: "go" });
  assert.deepEqual(chat.actions, []);
  assert.match(view.notes[0].text, /still answering/);
  chat.running = false;
  turns.sendAction({ name: "go" });
  turns.stop();
  assert.deepEqual([chat.sent, chat.actions, chat.stops], [["hello"], [{ name: "go" }], 1]);
});

test("the queued prompt waits for the history, then goes once and is cleared", async () => {
  const { model, turns, chat } = setup({ turn_id: "tt-2" });
  turns.connect(chat, "t1");
  model.set("pending_prompt", "from the kernel");
  await turns.sendPending();
  assert.deepEqual(chat.sent, []); // no history yet
  turns.start({ threadId: "t1", turnsOf: async () => [], sent: false });
  await turns.sendPending();
  assert.deepEqual(chat.sent, ["from the kernel"]);
  assert.equal(model.get("pending_prompt"), "");
  // A later prompt (GthChat.ask) is a follow-up of the same turn, sent like typed text.
  model.set("pending_prompt", "follow up");
  await until(() => chat.sent.length === 2, "follow-up");
  assert.deepEqual(chat.sent, ["from the kernel", "follow up"]);
});

test("a second view of the same cell never sends its turn; a reload drops the prompt the server has", async () => {
  const one = setup({ turn_id: "tt-3", pending_prompt: "once" });
  const two = setup({ turn_id: "tt-3", pending_prompt: "once" });
  for (const v of [one, two]) {
    v.turns.connect(v.chat, "t1");
    v.turns.start({ threadId: "t1", turnsOf: async () => [], sent: false });
  }
  await one.turns.sendPending();
  await two.turns.sendPending();
  assert.deepEqual([one.chat.sent, two.chat.sent], [["once"], []]);
  assert.equal(two.model.get("pending_prompt"), "");

  const reload = setup({ turn_id: "tt-4", pending_prompt: "stale" });
  reload.turns.connect(reload.chat, "t1");
  reload.turns.start({ threadId: "t1", turnsOf: async () => [], sent: true });
  assert.equal(reload.model.get("pending_prompt"), "");
  assert.deepEqual(reload.chat.sent, []);
});

test("waiting for the cell above: Send now sends at once, and the end of a run here sends a prompt held by it", async () => {
  const { model, view, turns, chat } = setup({ turn_id: "tt-5", after_turn: "tt-above" });
  turns.connect(chat, "t1");
  turns.start({ threadId: "t1", turnsOf: async () => [{ turnId: "tt-above", done: false }], sent: false });
  model.set("pending_prompt", "below");
  await until(() => view.waiting, "waiting line");
  assert.match(view.waiting.text, /cell above to finish/);
  view.waiting.actions.find((a) => a.label === "Send now").run();
  await until(() => chat.sent.length === 1, "sent now");
  assert.equal(view.waiting, null);
  assert.equal(model.get("pending_prompt"), "");

  chat.running = true;
  model.set("pending_prompt", "after the run");
  assert.deepEqual(chat.sent, ["below"]); // the chat is busy
  chat.running = false;
  chat.emit({ type: "run-state", running: false });
  await until(() => chat.sent.length === 2, "sent at the run's end");
  assert.deepEqual(chat.sent, ["below", "after the run"]);
});

test("once the view is gone, nothing is sent and the model is let go", async () => {
  const { model, gone, turns, chat } = setup({ turn_id: "tt-6" });
  turns.connect(chat, "t1");
  turns.start({ threadId: "t1", turnsOf: async () => [], sent: false });
  assert.equal(model.listenerCount("change:pending_prompt"), 1);
  gone.abort();
  assert.equal(model.listenerCount("change:pending_prompt"), 0);
  model.set("pending_prompt", "too late");
  await turns.sendPending();
  assert.deepEqual(chat.sent, []);
});
