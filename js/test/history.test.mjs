// History, rehydration and the run to follow (src/app/history.js). A reload mid-run, and a run
// whose events are gone, are followed end to end in reattach.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mount } from "../src/app/mount.js";
import { runToFollow } from "../src/app/history.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { fakeServer, testEnv, until } from "../test-support/mount.mjs";

test("runToFollow: a cell follows its own turn's run; the whole-thread view only a run no cell owns", () => {
  const run = { runId: "r1" };
  assert.equal(runToFollow({ run: null, turns: [] }, ""), null);
  assert.equal(runToFollow({ run, turns: [] }, ""), "r1"); // a Session's run, say
  assert.equal(runToFollow({ run, turns: [{ turnId: "a", done: true }] }, ""), "r1");
  assert.equal(runToFollow({ run, turns: [{ turnId: "a", done: false }] }, ""), null);
  assert.equal(runToFollow({ run: { runId: "r1", turnId: "a" }, turns: [] }, ""), null);
  assert.equal(runToFollow({ run, turns: [{ turnId: "a", done: true }, { turnId: "b", done: false }] }, "b"), "r1");
  assert.equal(runToFollow({ run, turns: [{ turnId: "a", done: true }, { turnId: "b", done: false }] }, "a"), null);
  assert.equal(runToFollow({ run: { runId: "r1", turnId: "a" }, turns: [] }, "a"), "r1");
  assert.equal(runToFollow({ run: { runId: "r1", turnId: "b" }, turns: [{ turnId: "a", done: false }] }, "a"), null);
});

test("after a reload the event log shows the thread's shared state from the history", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel({ thread_id: "t1", transport: "auto", base_url: "/base/", client_tools: [], show_event_log: true });
  const { fetch } = fakeServer([], { state: { rows: 3, plan: ["load", "plot"] } });
  const cleanup = mount({ model, el, env: testEnv(fetch) });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  assert.equal(el.querySelector("[data-message-id=a0]").textContent.trim(), "earlier answer");
  const box = el.querySelector(".gth-eventlog-state");
  assert.equal(box.hidden, false);
  await until(() => el.querySelector(".gth-eventlog-state-json").textContent, "state painted");
  assert.deepEqual(JSON.parse(el.querySelector(".gth-eventlog-state-json").textContent), { rows: 3, plan: ["load", "plot"] });
  cleanup();
});

test("a thread without shared state leaves the event log's state view hidden", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel({ thread_id: "t1", transport: "auto", base_url: "/base/", client_tools: [], show_event_log: true });
  const { fetch } = fakeServer([]);
  const cleanup = mount({ model, el, env: testEnv(fetch) });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  assert.equal(el.querySelector(".gth-eventlog-state").hidden, true);
  cleanup();
});

test("a history that cannot be loaded is said, and the view still takes a prompt", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel({ thread_id: "t1", transport: "auto", base_url: "/base/", client_tools: [] });
  const base = fakeServer([]);
  const fetch = async (url, init) => (url.startsWith("/base/gth/threads/") ? new Response("boom", { status: 500 }) : base.fetch(url, init));
  const cleanup = mount({ model, el, env: testEnv(fetch) });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  const error = el.querySelector("[data-code=history_unavailable]") ?? el.querySelector(".gth-error");
  assert.match(error.textContent, /Could not load this conversation: HTTP 500/);
  assert.equal(el.querySelector(".gth-send").disabled, false);
  cleanup();
});
