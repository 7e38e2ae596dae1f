import { test } from "node:test";
import assert from "node:assert/strict";
import { mount } from "../src/app.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { sse, started, finished, text, toolCall } from "../test-support/sse.mjs";

const until = async (cond, what = "condition") => {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
};

function server(runScripts) {
  const requests = [];
  const fetch = async (url, init = {}) => {
    requests.push({ url, init });
    if (url === "/base/gth/health") return Response.json({ status: "ok" });
    if (url === "/base/gth/threads/t1") {
      return Response.json({ threadId: "t1", messages: [
        { id: "u0", role: "user", content: "earlier question" },
        { id: "a0", role: "assistant", content: "earlier answer" },
      ] });
    }
    if (url === "/base/gth/agents/default/run") {
      const body = JSON.parse(init.body);
      const script = runScripts.shift();
      return new Response(sse(script(body)), { headers: { "Content-Type": "text/event-stream" } });
    }
    return new Response("not found", { status: 404 });
  };
  return { fetch, requests };
}

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
  const { fetch, requests } = server([
    (b) => [started(b), ...toolCall("c1", "double", { n: 21 }), finished(b, { type: "success", pendingToolCallIds: ["c1"] })],
    (b) => [started(b), ...text("m1", "It is **42**."), finished(b)],
  ]);
  const cleanup = mount({ model, el, css: ".gth-root{}", env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
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
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
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
  const { fetch } = server([]);
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  assert.equal(el.querySelector(".gth-eventlog").hidden, false);
  assert.equal(el.querySelector(".gth-log-toggle").getAttribute("aria-pressed"), "true");
  model.set("show_event_log", false);
  assert.equal(el.querySelector(".gth-eventlog").hidden, true);
  assert.equal(el.querySelector(".gth-log-toggle").getAttribute("aria-pressed"), "false");
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  cleanup();
});

test("mount: an MCP server the agent skipped is a notice, also when it is learnt after the first run", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", model_label: "x", pending_prompt: "" });
  let infoCalls = 0;
  const base = server([(b) => [started(b), ...text("m1", "hi"), finished(b)]]);
  const fetch = async (url, init = {}) => {
    if (url === "/base/gth/info") {
      infoCalls += 1;
      // Before the first run the servers are still connecting; after it one has failed.
      const status = infoCalls === 1 ? "pending" : "error";
      const notices = infoCalls === 1 ? [] : ["MCP server 'files' was skipped: <b>boom</b>"];
      return Response.json({ a2ui: { imageHosts: [] }, mcp: { servers: { files: { status } }, notices } });
    }
    return base.fetch(url, init);
  };
  const cleanup = mount({ model, el, css: "", env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  assert.equal([...el.querySelectorAll(".gth-note-warning")].length, 0);
  model.set("pending_prompt", "hello");
  await until(() => el.querySelector(".gth-note-warning"), "notice");
  const notes = [...el.querySelectorAll(".gth-note-warning")];
  assert.equal(notes.length, 1);
  assert.equal(notes[0].textContent.includes("<b>boom</b>"), true); // shown as text, never as HTML
  assert.equal(notes[0].querySelector("b"), null);
  cleanup();
});

test("mount: an MCP server waiting for OAuth gets a sign-in button (http(s) pages only)", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", model_label: "x", pending_prompt: "" });
  const base = server([]);
  const fetch = async (url, init = {}) => {
    if (url === "/base/gth/info") {
      return Response.json({ mcp: { notices: [], servers: {
        docs: { status: "needs_authorization", authorizationUrl: "https://auth.example/authorize?state=s1" },
        evil: { status: "needs_authorization", authorizationUrl: "javascript:alert(1)" },
      } } });
    }
    return base.fetch(url, init);
  };
  const cleanup = mount({ model, el, css: "", env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  await until(() => el.querySelector(".gth-oauth-button"), "sign-in button");
  const buttons = [...el.querySelectorAll(".gth-oauth-button")];
  assert.equal(buttons.length, 1);
  assert.equal(buttons[0].getAttribute("href"), "https://auth.example/authorize?state=s1");
  assert.equal(buttons[0].getAttribute("target"), "_blank");
  assert.equal(buttons[0].getAttribute("rel"), "noopener noreferrer");
  assert.match(buttons[0].textContent, /docs/);
  cleanup();
});
