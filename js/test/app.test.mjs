// mount (src/app/mount.js): the wiring of one view. Each part has its own tests (turns, history,
// mcp, traits in this file); these follow a view from its mount to its cleanup.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mount } from "../src/app/mount.js";
import { announce } from "../src/order.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { fakeServer, testEnv, until } from "../test-support/mount.mjs";
import { sse, started, finished, text, toolCall } from "../test-support/sse.mjs";

test("mount: http transport, history rehydrated, pending_prompt sent, a user-defined tool answered", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({
    thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", model_label: "gth-demo (offline)", offline: true,
    pending_prompt: "", client_tools: [
      { name: "double", description: "Double n", parameters: { type: "object", properties: { n: { type: "number" } } }, js: "async (args, ctx) => { ctx.log('doubling'); return args.n * 2 }" },
      { name: "broken", description: "", js: "this is not js(" },
    ],
  });
  const { fetch, requests } = fakeServer([
    (b) => [started(b), ...toolCall("c1", "double", { n: 21 }), finished(b, { type: "success", pendingToolCallIds: ["c1"] })],
    (b) => [started(b), ...text("m1", "It is **42**."), finished(b)],
  ]);
  const cleanup = mount({ model, el, css: ".gth-root{}", env: testEnv(fetch) });
  assert.equal(el.querySelector("style").textContent, ".gth-root{}");
  assert.equal(el.querySelector(".gth-model").textContent, "gth-demo (offline)");
  assert.equal(el.querySelector(".gth-badge-offline").hidden, false);
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  assert.equal(el.querySelector(".gth-root").dataset.transport, "http");
  assert.equal(el.querySelector("[data-message-id=a0]").textContent.trim(), "earlier answer");
  assert.match(el.querySelector(".gth-note-warning").textContent, /broken/);

  model.set("pending_prompt", "double 21");
  await until(() => model.get("pending_prompt") === "", "prompt taken");
  assert.equal(model.saved, 1);
  await until(() => el.querySelector("[data-message-id=m1] strong"), "answer");
  await until(() => el.querySelector(".gth-root").dataset.state === "idle", "idle");

  const runs = requests.filter((r) => r.url.endsWith("/run"));
  assert.equal(runs.length, 2);
  const first = JSON.parse(runs[0].init.body);
  assert.deepEqual(first.tools.map((t) => t.name).sort(), ["ask_user", "browser_context", "capture_image", "double"]);
  assert.deepEqual(first.messages.map((m) => m.id).slice(0, 2), ["u0", "a0"]); // history goes along
  assert.equal(first.messages.at(-1).content, "double 21");
  assert.equal(runs[0].init.credentials, "same-origin");
  const second = JSON.parse(runs[1].init.body);
  assert.deepEqual(second.messages.at(-1), { id: second.messages.at(-1).id, role: "tool", toolCallId: "c1", content: "42" });
  const card = el.querySelector(".gth-tool[data-tool-name=double]");
  assert.equal(card.dataset.status, "done");
  assert.equal(card.querySelector(".gth-tool-line").textContent, "doubling");

  cleanup();
  assert.equal(el.querySelector(".gth-root"), null);
});

test("mount: comm transport when the server route is missing", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel({ thread_id: "t9", transport: "auto", base_url: "/", client_tools: [] }, {
    onSend: (msg, m) => {
      if (msg.type === "history") setTimeout(() => m.deliver({ type: "history", requestId: msg.requestId, messages: [] }));
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
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  assert.equal(el.querySelector(".gth-root").dataset.transport, "comm");
  // The kernel keeps many threads: the history request names the widget's.
  assert.equal(model.sent.find((m) => m.type === "history").threadId, "t9");
  const input = el.querySelector(".gth-input");
  input.value = "hello";
  el.querySelector(".gth-send").dispatchEvent(new (makeDom().window.Event)("click"));
  await until(() => el.querySelector("[data-message-id=k1]")?.textContent.includes("over the comm"), "comm answer");
  cleanup();
});

test("mount: show_event_log (%gth --log) opens the event log, and follows the trait", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel({ thread_id: "t1", transport: "auto", base_url: "/base/", client_tools: [], show_event_log: true });
  const { fetch } = fakeServer([]);
  const cleanup = mount({ model, el, env: testEnv(fetch) });
  assert.equal(el.querySelector(".gth-eventlog").hidden, false);
  assert.equal(el.querySelector(".gth-log-toggle").getAttribute("aria-pressed"), "true");
  model.set("show_event_log", false);
  assert.equal(el.querySelector(".gth-eventlog").hidden, true);
  assert.equal(el.querySelector(".gth-log-toggle").getAttribute("aria-pressed"), "false");
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  cleanup();
});

test("mount: cleanup stops every part (trait listeners, the queued prompt, the page's news) and removes the view", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel({ thread_id: "t1", transport: "auto", base_url: "/base/", client_tools: [], pending_prompt: "" });
  const { fetch, requests } = fakeServer([]);
  const cleanup = mount({ model, el, env: testEnv(fetch), parkMs: 0 }); // ends at once when let go
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  for (const name of ["change:model_label", "change:offline", "change:show_event_log", "change:pending_prompt"]) {
    assert.equal(model.listenerCount(name), 1, name);
  }
  const before = requests.length;
  announce("t1", "another view"); // a run on the thread ended elsewhere: the thread is asked again
  assert.deepEqual(requests.slice(before).map((r) => r.url), ["/base/gth/threads/t1"]);
  cleanup();
  for (const name of ["change:model_label", "change:offline", "change:show_event_log", "change:pending_prompt"]) {
    assert.equal(model.listenerCount(name), 0, name);
  }
  assert.equal(el.querySelector(".gth-root"), null);
  // `%gth` alone no longer follows the thread: news of a run on it asks the server nothing
  // (while mounted, the same news asked for the thread at once: see above).
  const asked = requests.length;
  announce("t1", "another view");
  assert.equal(requests.length, asked);
});
