// The notebook's kernel id goes to the server in forwardedProps.gth.kernelId on every run, so
// the data-agent tools (list_variables, describe_variable, run_python) reach this notebook's kernel.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatController } from "../src/chat/controller.js";
import { mount } from "../src/app/mount.js";
import { createRegistry } from "../src/tools/registry.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { scriptedFetch, sse, started, finished, text, toolCall } from "../test-support/sse.mjs";

const until = async (cond, what = "condition") => {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
};

const INTERRUPT = {
  id: "int-1",
  reason: "confirmation",
  toolCallId: "call-1",
  metadata: { gth: { value: { type: "gth.approval", toolName: "run_python", args: { code: "1+1" }, code: "1+1", language: "python" } } },
};

/** A first run that stops on an approval, then the resumed run. */
const suspendThenResume = () => [
  (b) => [started(b), ...toolCall("call-1", "run_python", { code: "1+1" }), finished(b, { type: "interrupt", interrupts: [INTERRUPT] })],
  (b) => [started(b), ...text("m2", "2"), finished(b)],
];

const chatWith = (opts) => {
  const { fetch, requests } = scriptedFetch(suspendThenResume());
  const chat = new ChatController({ url: "http://x/run", threadId: "t1", registry: createRegistry([], { builtins: [] }), fetch, ...opts });
  return { chat, requests };
};

const resume = [{ interruptId: "int-1", status: "resolved", payload: { approved: true } }];

test("kernelId goes with the first run and with the resume, beside turnId", async () => {
  const { chat, requests } = chatWith({ kernelId: "k-123", turnId: "turn-a" });
  await chat.send("add");
  await chat.resolveInterrupts(resume);
  assert.equal(requests.length, 2);
  for (const r of requests) assert.deepEqual(r.body.forwardedProps, { gth: { turnId: "turn-a", kernelId: "k-123" } });
});

test("kernelId alone is sent; neither leaves forwardedProps out", async () => {
  const alone = chatWith({ kernelId: "k-9" });
  await alone.chat.send("add");
  await alone.chat.resolveInterrupts(resume);
  for (const r of alone.requests) assert.deepEqual(r.body.forwardedProps, { gth: { kernelId: "k-9" } });

  const none = chatWith({ kernelId: "" });
  await none.chat.send("add");
  await none.chat.resolveInterrupts(resume);
  for (const r of none.requests) assert.equal(r.body.forwardedProps?.gth, undefined);
});

test("mount threads the kernel_id trait into the runs", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", pending_prompt: "", client_tools: [], kernel_id: "kern-42" });
  const bodies = [];
  const fetch = async (url, init = {}) => {
    if (url === "/base/gth/health") return Response.json({ status: "ok" });
    if (url === "/base/gth/threads/t1") return Response.json({ threadId: "t1", messages: [] });
    if (url === "/base/gth/agents/default/run") {
      const body = JSON.parse(init.body);
      bodies.push(body);
      return new Response(sse([started(body), ...text("m1", "hi"), finished(body)]), { headers: { "Content-Type": "text/event-stream" } });
    }
    return new Response("not found", { status: 404 });
  };
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  model.set("pending_prompt", "what is in my kernel?");
  await until(() => el.querySelector("[data-message-id=m1]"), "answer");
  assert.equal(bodies.length, 1);
  // Over HTTP the run goes on if the page reloads (detach; src/reattach.js).
  assert.deepEqual(bodies[0].forwardedProps, { gth: { kernelId: "kern-42" }, detach: true });
  cleanup();
});

test("a kernel the server's authorizer refuses is reported with its reason, not retried", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", pending_prompt: "", client_tools: [], kernel_id: "kern-42" });
  const message = "You may not use kernel 'kern-42': this Jupyter server's authorizer does not let you execute code in kernels.";
  const bodies = [];
  const fetch = async (url, init = {}) => {
    if (url === "/base/gth/health") return Response.json({ status: "ok" });
    if (url === "/base/gth/threads/t1") return Response.json({ threadId: "t1", messages: [] });
    if (url === "/base/gth/agents/default/run") {
      bodies.push(JSON.parse(init.body));
      return Response.json({ code: "kernel_forbidden", message }, { status: 403 });
    }
    return new Response("not found", { status: 404 });
  };
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  model.set("pending_prompt", "what is in my kernel?");
  await until(() => el.querySelector(".gth-error"), "the refusal");
  const shown = el.querySelector(".gth-error");
  assert.equal(shown.dataset.code, "kernel_forbidden");
  assert.equal(shown.getAttribute("role"), "alert");
  assert.equal(shown.querySelector(".gth-error-message").textContent.trim(), message);
  assert.equal(bodies.length, 1);
  assert.equal(bodies[0].forwardedProps.gth.kernelId, "kern-42");
  cleanup();
});
