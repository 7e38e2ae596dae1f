import { test } from "node:test";
import assert from "node:assert/strict";
import { parseHTML } from "linkedom";
import { HttpAgent } from "@ag-ui/client";
import { authHeaders, chooseTransport, commFetch, createBackend, httpFetch, resolveBaseUrl, slicedFetch, sliceStream, xsrfToken } from "../src/transport.js";
import { fakeModel } from "../test-support/model.mjs";
import { sse } from "../test-support/sse.mjs";

const tick = () => new Promise((r) => setTimeout(r, 0));

function pageWith(config) {
  const { document } = parseHTML(
    `<html><body><script id="jupyter-config-data" type="application/json">${JSON.stringify(config)}</script></body></html>`,
  );
  return document;
}

test("base URL: trait first, then the page config, then '/'; always ending in '/'", () => {
  const doc = pageWith({ baseUrl: "/user/ana/" });
  assert.equal(resolveBaseUrl("/lab-base", doc), "/lab-base/");
  assert.equal(resolveBaseUrl("", doc), "/user/ana/");
  assert.equal(resolveBaseUrl("", parseHTML("<html><body></body></html>").document), "/");
  assert.equal(resolveBaseUrl(undefined, null), "/");
});

test("XSRF header from the _xsrf cookie, token from the page config", async () => {
  const doc = pageWith({ token: "tok" });
  Object.defineProperty(doc, "cookie", { value: "a=1; _xsrf=2|abc|def; b=2" });
  assert.equal(xsrfToken(doc), "2|abc|def");
  assert.deepEqual(authHeaders(doc), { "X-XSRFToken": "2|abc|def", Authorization: "token tok" });
  let seen;
  const f = httpFetch({ doc, fetchImpl: async (url, init) => { seen = init; return new Response("{}"); } });
  await f("/gth/x", { method: "POST", headers: { "Content-Type": "application/json" } });
  assert.equal(seen.credentials, "same-origin");
  assert.equal(seen.headers["X-XSRFToken"], "2|abc|def");
  assert.equal(seen.headers["Content-Type"], "application/json");
});

test("auto picks http when gth/health answers JSON, comm otherwise", async () => {
  const loc = { protocol: "http:" };
  const ok = async () => new Response('{"status":"ok"}', { headers: { "Content-Type": "application/json" } });
  assert.equal(await chooseTransport({ baseUrl: "/", fetchImpl: ok, location: loc }), "http");
  const html = async () => new Response("<html>", { headers: { "Content-Type": "text/html" } });
  assert.equal(await chooseTransport({ baseUrl: "/", fetchImpl: html, location: loc }), "comm");
  const down = async () => { throw new TypeError("network"); };
  assert.equal(await chooseTransport({ baseUrl: "/", fetchImpl: down, location: loc }), "comm");
  const hang = (_u, init) => new Promise((_r, rej) => init.signal.addEventListener("abort", () => rej(new Error("aborted"))));
  const t0 = Date.now();
  assert.equal(await chooseTransport({ baseUrl: "/", fetchImpl: hang, location: loc, timeoutMs: 50 }), "comm");
  assert.ok(Date.now() - t0 < 1000);
  assert.equal(await chooseTransport({ baseUrl: "/", fetchImpl: ok, location: { protocol: "vscode-webview:" } }), "comm");
  assert.equal(await chooseTransport({ transport: "http", baseUrl: "/" }), "http");
});

function kernel(frames, { split = 7 } = {}) {
  // Answers a "run" with the SSE text cut into small, frame-straddling chunks.
  return (msg, model) => {
    if (msg.type !== "run") return;
    const body = msg.body;
    const text = sse(frames(body));
    setTimeout(async () => {
      for (let i = 0; i < text.length; i += split) {
        model.deliver({ type: "chunk", requestId: msg.requestId, data: text.slice(i, i + split) });
        if (i % (split * 20) === 0) await tick();
      }
      model.deliver({ type: "end", requestId: msg.requestId });
    }, 0);
  };
}

test("commFetch: kernel chunks become a stream that HttpAgent reads unchanged", async () => {
  const model = fakeModel({}, {
    onSend: kernel((b) => [
      { type: "RUN_STARTED", threadId: b.threadId, runId: b.runId },
      { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "héllo " },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "wörld" },
      { type: "TEXT_MESSAGE_END", messageId: "m1" },
      { type: "RUN_FINISHED", threadId: b.threadId, runId: b.runId },
    ]),
  });
  const agent = new HttpAgent({ url: "comm:run", threadId: "t", fetch: commFetch(model) });
  agent.addMessage({ id: "u1", role: "user", content: "hi" });
  const types = [];
  await agent.runAgent({}, { onEvent: ({ event }) => { types.push(event.type); } });
  assert.deepEqual(types, ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]);
  assert.equal(agent.messages.at(-1).content, "héllo wörld");
  const run = model.sent.find((m) => m.type === "run");
  assert.equal(run.body.threadId, "t"); // the RunAgentInput JSON, as an object
  assert.equal(run.body.messages[0].content, "hi");
  assert.equal(model.listenerCount("msg:custom"), 0); // no listener left behind
});

test("commFetch: an error before data answers like an HTTP refusal", async () => {
  const model = fakeModel({}, {
    onSend: (msg, m) => setTimeout(() => m.deliver({ type: "error", requestId: msg.requestId, status: 409, body: { code: "run_busy", message: "busy" } })),
  });
  const res = await commFetch(model)("comm:run", { method: "POST", body: "{}" });
  assert.equal(res.status, 409);
  assert.deepEqual(await res.json(), { code: "run_busy", message: "busy" });
});

test("commFetch: abort sends {type: abort} and fails the stream with AbortError", async () => {
  const model = fakeModel({}, {
    onSend: (msg, m) => {
      if (msg.type === "run") setTimeout(() => m.deliver({ type: "chunk", requestId: msg.requestId, data: "data: {\"type\":\"RUN_STARTED\"" }));
    },
  });
  const ac = new AbortController();
  const res = await commFetch(model)("comm:run", { method: "POST", body: "{}", signal: ac.signal });
  const reader = res.body.getReader();
  await reader.read();
  ac.abort();
  await assert.rejects(reader.read(), (e) => e.name === "AbortError");
  const abort = model.sent.find((m) => m.type === "abort");
  assert.equal(abort.requestId, model.sent[0].requestId);
  assert.equal(model.listenerCount("msg:custom"), 0);
});

test("comm backend: history over the comm", async () => {
  const model = fakeModel({}, {
    onSend: (msg, m) => {
      if (msg.type === "history") {
        const interrupts = [{ id: "i1", reason: "confirmation", message: "Run ls?" }];
        setTimeout(() => m.deliver({ type: "history", requestId: msg.requestId, messages: [{ id: "u", role: "user", content: "x" }], interrupts }));
      }
    },
  });
  const backend = createBackend("comm", { model, baseUrl: "/" });
  assert.deepEqual(await backend.history("t"), {
    messages: [{ id: "u", role: "user", content: "x" }],
    interrupts: [{ id: "i1", reason: "confirmation", message: "Run ls?" }],
    turns: [],
    busy: false,
    run: null,
    state: null,
    currentBranch: true,
    usageTurns: [],
    usage: [],
    cost: null,
  });
});

test("http backend: run URL, history and info", async () => {
  const calls = [];
  const fetchImpl = async (url) => {
    calls.push(url);
    if (url.endsWith("gth/info")) return Response.json({ provider: "demo", model: "gth-demo", offline: true, agents: ["default"] });
    if (url.includes("gth/threads/")) return Response.json({ threadId: "a b", messages: [{ id: "1", role: "user", content: "hi" }] });
    return new Response("", { status: 404 });
  };
  const backend = createBackend("http", { model: fakeModel(), baseUrl: "/base/", fetchImpl, doc: null });
  assert.equal(backend.runUrl("default"), "/base/gth/agents/default/run");
  assert.deepEqual(await backend.history("a b"), { messages: [{ id: "1", role: "user", content: "hi" }], interrupts: [], turns: [], busy: false, run: null, state: null, currentBranch: true, usageTurns: [], usage: [], cost: null });
  assert.equal(calls[0], "/base/gth/threads/a%20b");
  await backend.history("a b", "turn-1&x");
  assert.equal(calls[1], "/base/gth/threads/a%20b?turn=turn-1%26x");
  assert.equal((await backend.info()).offline, true);
});

const bytesOf = (s) => new TextEncoder().encode(s);
const streamOf = (chunks) =>
  new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(bytesOf(chunk));
      c.close();
    },
  });
async function readAll(stream) {
  const pieces = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return pieces;
    pieces.push(new TextDecoder().decode(value));
  }
}

test("sliceStream: a burst is handed on in pieces ending at line breaks, a task apart", async () => {
  const burst = sse(Array.from({ length: 400 }, (_, i) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: `t${i} ` })));
  let yields = 0;
  const pieces = await readAll(sliceStream(streamOf([burst, "data: {}\n\n"]), { yieldTask: async () => void yields++ }));
  assert.equal(pieces.join(""), burst + "data: {}\n\n");
  assert.ok(pieces.length > 5, `${pieces.length} pieces`);
  assert.ok(pieces.every((p) => p.endsWith("\n")));
  assert.ok(pieces[0].length <= 1024); // small at first, growing while pieces are quick
  assert.ok(pieces.some((p) => p.length > 1024));
  assert.equal(yields, pieces.length); // one yield between pieces, and one before the end
});

test("sliceStream: pieces shrink when handling one takes longer than the budget, and grow back", async () => {
  let clock = 0;
  const sizes = [];
  const stream = sliceStream(streamOf(["x\n".repeat(100000)]), {
    now: () => clock,
    yieldTask: async () => {
      clock += sizes.length < 6 ? 40 : 1; // slow to handle at first, then fast
    },
  });
  const reader = stream.getReader();
  for (let i = 0; i < 14; i++) sizes.push((await reader.read()).value.length);
  await reader.cancel();
  assert.deepEqual(sizes.slice(0, 4), [1024, 512, 256, 256]);
  assert.ok(sizes[13] > sizes[6], `${sizes}`);
});

test("slicedFetch: only event streams are re-chunked; cancelling reaches the source", async () => {
  let cancelled = false;
  const source = new ReadableStream({
    pull(c) {
      c.enqueue(bytesOf("data: {}\n\n"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const json = Response.json({ ok: true });
  const f = slicedFetch(async (url) =>
    url === "json" ? json : new Response(source, { headers: { "Content-Type": "text/event-stream" } }),
  );
  assert.equal(await f("json"), json);
  const res = await f("sse");
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  const reader = res.body.getReader();
  assert.equal(new TextDecoder().decode((await reader.read()).value), "data: {}\n\n");
  await reader.cancel();
  assert.equal(cancelled, true);
});
