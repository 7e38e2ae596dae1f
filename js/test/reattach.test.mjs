// Runs that outlive their connection (src/reattach.js): the frame ids of a broken stream, the
// stream picked up again with Last-Event-ID, and a run in flight followed after a reload with
// every message shown once. The SSE bytes are the server's own (test/fixtures/reattach-run.sse:
// gth_jupyter.agui.sse.encode + RunJournal.append, the frames a run of the server sends).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ChatController } from "../src/chat/controller.js";
import { FrameTracker, ReplayFilter, resumableFetch, runIdOf } from "../src/reattach.js";
import { createRegistry } from "../src/tools/registry.js";
import { mount } from "../src/app/mount.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";

const RECORDED = new Uint8Array(readFileSync(new URL("./fixtures/reattach-run.sse", import.meta.url)));
const TEXT = new TextDecoder().decode(RECORDED);
/** The recorded frames, each with its id and event. */
const FRAMES = TEXT.split("\n\n").filter(Boolean).map((f) => {
  const [idLine, dataLine] = f.split("\n");
  return { id: Number(idLine.slice(4)), event: JSON.parse(dataLine.slice(6)), text: `${f}\n\n` };
});
const enc = new TextEncoder();
const bytesOfFrames = (from, to = FRAMES.length) => enc.encode(FRAMES.filter((f) => f.id > from && f.id <= to).map((f) => f.text).join(""));
const deltas = (id) => FRAMES.filter((f) => f.event.type === "TEXT_MESSAGE_CONTENT" && f.event.messageId === id).map((f) => f.event.delta).join("");
const A1 = deltas("a1");
const A2 = deltas("a2");
const idOf = (pred) => FRAMES.find((f) => pred(f.event)).id;

/** An event-stream Response whose body sends `chunks` (bytes) and then ends or fails. */
function streamResponse(chunks, { fail } = {}) {
  const body = new ReadableStream({
    async start(c) {
      for (const chunk of chunks) {
        c.enqueue(chunk);
        await new Promise((r) => setTimeout(r, 0));
      }
      if (fail) c.error(fail);
      else c.close();
    },
  });
  return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
}

/** Cut bytes into pieces of `size` (splitting frames, lines and UTF-8 characters). */
function pieces(bytes, size) {
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

const until = async (cond, what = "condition") => {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
};

test("FrameTracker: whole frames only, the last id and the run's end, however the bytes are cut", () => {
  for (const size of [1, 2, 7, 64, RECORDED.length]) {
    const t = new FrameTracker();
    const out = [];
    for (const p of pieces(RECORDED, size)) out.push(...t.push(p));
    assert.deepEqual(Buffer.from(out), Buffer.from(RECORDED), `size ${size}`);
    assert.equal(t.lastId, FRAMES.length);
    assert.equal(t.ended, true);
    assert.equal(t.rest().length, 0);
  }
  // Cut in the middle of a frame: that frame is held back, and the id is the last whole one's.
  const cut = bytesOfFrames(0, 5).length + 9;
  const t = new FrameTracker();
  const handed = t.push(RECORDED.slice(0, cut));
  assert.equal(new TextDecoder().decode(handed), new TextDecoder().decode(bytesOfFrames(0, 5)));
  assert.equal(t.lastId, 5);
  assert.equal(t.ended, false);
  assert.equal(t.rest().length, 9);
  // A keep-alive comment and a frame without an id change nothing; text that names RUN_FINISHED is no end.
  const t2 = new FrameTracker(7);
  t2.push(enc.encode(': keepalive\n\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"RUN_FINISHED"}\n\n'));
  assert.equal(t2.lastId, 7);
  assert.equal(t2.ended, false);
  t2.push(enc.encode('id: 9\ndata: {"type":"RUN_ERROR","message":"x"}\n\n'));
  assert.equal(t2.lastId, 9);
  assert.equal(t2.ended, true);
});

test("runIdOf: the POST body's runId, or the events URL's", () => {
  assert.equal(runIdOf("/b/gth/agents/default/run", { method: "POST", body: JSON.stringify({ runId: "r 1" }) }), "r 1");
  assert.equal(runIdOf("/b/gth/runs/r%201/events", { method: "GET" }), "r 1");
  assert.equal(runIdOf("/b/gth/threads/t1", { method: "GET" }), null);
  assert.equal(runIdOf("/b/gth/agents/default/run", { method: "POST", body: "nope" }), null);
});

/**
 * A server whose first run stream breaks after `breakAt` bytes (mid-frame); re-attaches
 * answer `reattach(lastEventId)`.
 */
function breakingServer({ breakAt, reattach, fail = new TypeError("network error") }) {
  const requests = [];
  const fetch = async (url, init = {}) => {
    const headers = new Headers(init.headers);
    requests.push({ url, method: init.method || "GET", lastEventId: headers.get("Last-Event-ID"), init });
    if (url.endsWith("/run")) {
      return streamResponse(pieces(RECORDED.slice(0, breakAt), 50), { fail });
    }
    if (url.includes("/gth/runs/")) return reattach(Number(headers.get("Last-Event-ID") || 0), requests.length);
    return new Response("not found", { status: 404 });
  };
  return { fetch, requests };
}

function chatOver(fetch, opts = {}) {
  const registry = createRegistry([], { builtins: opts.tools ?? [] });
  const chat = new ChatController({
    url: "/b/gth/agents/default/run",
    threadId: "t1",
    registry,
    fetch: resumableFetch(fetch, { baseUrl: "/b/", delaysMs: [1, 1, 1] }),
    detach: true,
    eventsUrl: (runId) => `/b/gth/runs/${encodeURIComponent(runId)}/events`,
    ...opts,
  });
  const events = [];
  chat.on((e) => events.push(e));
  return { chat, events };
}

const shownText = (events, id) =>
  events.filter((e) => e.type === "agui" && e.event.type === "TEXT_MESSAGE_CONTENT" && e.event.messageId === id).map((e) => e.event.delta).join("");

test("a run's stream that breaks mid-frame goes on from Last-Event-ID: every delta once, the run ends", async () => {
  const inA2 = idOf((e) => e.type === "TEXT_MESSAGE_CONTENT" && e.messageId === "a2") + 3;
  const breakAt = bytesOfFrames(0, inA2).length + 11; // 11 bytes into the next frame
  let tries = 0;
  const { fetch, requests } = breakingServer({
    breakAt,
    reattach: (last) => {
      tries += 1;
      // The first try meets a restarting process (a proxy's 502); the second gets through.
      if (tries === 1) return new Response("bad gateway", { status: 502 });
      return streamResponse(pieces(bytesOfFrames(last), 33));
    },
  });
  const { chat, events } = chatOver(fetch);
  assert.equal(await chat.send("tell me about otters"), true);
  const gets = requests.filter((r) => r.method === "GET");
  const post = JSON.parse(requests[0].init.body);
  const events_ = `/b/gth/runs/${post.runId}/events`; // the run the POST named
  assert.deepEqual(gets.map((r) => [r.url, r.lastEventId]), [
    [events_, String(inA2)],
    [events_, String(inA2)],
  ]);
  assert.deepEqual(post.forwardedProps, { detach: true });
  assert.equal(shownText(events, "a1"), A1);
  assert.equal(shownText(events, "a2"), A2);
  assert.deepEqual(chat.messages.filter((m) => m.role === "assistant").map((m) => [m.id, m.content ?? ""]), [["a1", A1], ["a2", A2]]);
  assert.equal(events.filter((e) => e.type === "error").length, 0);
  assert.equal(chat.running, false);
});

test("a stream cut before its end is picked up again even when it closed cleanly", async () => {
  const breakAt = bytesOfFrames(0, 4).length;
  const { fetch, requests } = breakingServer({ breakAt, fail: null, reattach: (last) => streamResponse([bytesOfFrames(last)]) });
  const { chat, events } = chatOver(fetch);
  await chat.send("hi");
  assert.deepEqual(requests.filter((r) => r.method === "GET").map((r) => r.lastEventId), ["4"]);
  assert.equal(shownText(events, "a1"), A1);
  assert.equal(shownText(events, "a2"), A2);
  assert.equal(events.filter((e) => e.type === "error").length, 0);
});

test("no re-attach when the events are gone (410 events_expired): the refusal is said", async () => {
  const { fetch, requests } = breakingServer({
    breakAt: bytesOfFrames(0, 6).length + 3,
    reattach: () => Response.json({ code: "events_expired", message: "The run's events are no longer kept." }, { status: 410 }),
  });
  const { chat, events } = chatOver(fetch);
  await chat.send("hi");
  assert.equal(requests.filter((r) => r.method === "GET").length, 1); // not tried again
  const err = events.find((e) => e.type === "error");
  assert.equal(err?.code, "events_expired");
  assert.equal(shownText(events, "a1"), A1);
});

test("a server that does not number its frames is not re-attached to: the break is an error", async () => {
  const plain = enc.encode(FRAMES.slice(0, 8).map((f) => f.text.replace(/^id: \d+\n/, "")).join(""));
  const requests = [];
  const fetch = async (url) => {
    requests.push(url);
    if (url.endsWith("/run")) return streamResponse([plain], { fail: new TypeError("network error") });
    return new Response("not found", { status: 404 });
  };
  const { chat, events } = chatOver(fetch);
  await chat.send("hi");
  assert.deepEqual(requests, ["/b/gth/agents/default/run"]);
  assert.match(events.find((e) => e.type === "error")?.message ?? "", /network error/);
});

test("Stop: no re-attach, and the server is told to stop the run", async () => {
  const cancelled = [];
  const requests = [];
  let release;
  const fetch = async (url, init = {}) => {
    requests.push(url);
    // Half the run, then nothing until the request is aborted.
    const body = new ReadableStream({
      start(c) {
        c.enqueue(bytesOfFrames(0, 4));
        init.signal.addEventListener("abort", () => c.error(Object.assign(new Error("aborted"), { name: "AbortError" })));
        release = () => c.close();
      },
    });
    return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
  };
  const { chat, events } = chatOver(fetch, { cancelRun: async (runId) => cancelled.push(runId) });
  const done = chat.send("hi");
  await until(() => shownText(events, "a1") === "Let me look it ", "some text");
  const runId = chat.runId;
  chat.stop();
  await done;
  void release;
  assert.deepEqual(requests, ["/b/gth/agents/default/run"]);
  assert.deepEqual(cancelled, [runId]);
  assert.ok(events.some((e) => e.type === "stopped"));
  assert.equal(events.filter((e) => e.type === "error").length, 0);
});

// ---- after a reload: the history, then the run's events from the start ----

/** The thread as the server's history gives it mid-run: a1, its tool call and result are in the checkpoint. */
const HISTORY = [
  { id: "u1", role: "user", content: "tell me about otters" },
  { id: "a1", role: "assistant", content: A1, toolCalls: [{ id: "c1", type: "function", function: { name: "search", arguments: '{"q": "otters"}' } }] },
  { id: "r1", role: "tool", toolCallId: "c1", content: "3 results" },
];

test("ReplayFilter: events of what the history holds are skipped, the rest pass", () => {
  const f = new ReplayFilter(HISTORY);
  const kept = FRAMES.map((x) => x.event).filter((e) => !f.skip(e)).map((e) => `${e.type}:${e.messageId ?? e.toolCallId ?? e.name ?? ""}`);
  assert.deepEqual(kept.slice(0, 3), ["RUN_STARTED:", "CUSTOM:gth.tool_output", "TEXT_MESSAGE_START:a2"]);
  assert.equal(kept.at(-2), "TEXT_MESSAGE_END:a2");
  assert.equal(kept.at(-1), "RUN_FINISHED:");
  assert.equal(kept.some((k) => /a1|c1|r1/.test(k) && !k.startsWith("CUSTOM")), false);
  // A later text run of a message the history holds (`<id>-2`) is part of its content there.
  assert.equal(f.skip({ type: "TEXT_MESSAGE_CONTENT", messageId: "a1-2", delta: "x" }), true);
  assert.equal(f.skip({ type: "TEXT_MESSAGE_CONTENT", messageId: "a3", delta: "x" }), false);
  assert.equal(f.skip({ type: "ACTIVITY_SNAPSHOT", messageId: "u1" }), true);
});

/** A server for a reload mid-run: GET events (from the start) answers `frames` in pieces. */
function replayServer(frames, extra = {}) {
  const requests = [];
  const fetch = async (url, init = {}) => {
    const headers = new Headers(init.headers);
    requests.push({ url, method: init.method || "GET", lastEventId: headers.get("Last-Event-ID"), body: init.body ? JSON.parse(init.body) : null });
    if (url.includes("/gth/runs/")) return streamResponse(pieces(frames, 40));
    if (extra[url]) return extra[url](init);
    return new Response("not found", { status: 404 });
  };
  return { fetch, requests };
}

test("reattach: the history's messages are not shown again; the message that was streaming comes whole", async () => {
  const { fetch, requests } = replayServer(RECORDED);
  const { chat, events } = chatOver(fetch);
  chat.setHistory(HISTORY);
  assert.equal(await chat.reattach("run-1"), true);
  assert.deepEqual(requests.map((r) => [r.method, r.url, r.lastEventId]), [["GET", "/b/gth/runs/run-1/events", null]]);
  const agui = events.filter((e) => e.type === "agui").map((e) => e.event);
  assert.equal(agui.some((e) => e.messageId === "a1" || (e.toolCallId === "c1" && e.type !== "CUSTOM")), false);
  assert.equal(shownText(events, "a2"), A2);
  assert.deepEqual(chat.messages.map((m) => m.id), ["u1", "a1", "r1", "a2"]);
  assert.equal(chat.messages.find((m) => m.id === "a2").content, A2);
  assert.equal(chat.messages.find((m) => m.id === "a1").content, A1);
  assert.deepEqual(events.filter((e) => e.type === "run-state").map((e) => e.running), [true, false]);
  assert.equal(events.filter((e) => e.type === "error").length, 0);
});

test("reattach: a run that ends waiting for an approval gets its cards, as after any run", async () => {
  const interrupt = { id: "i1", reason: "confirmation", message: "Run ls?", toolCallId: "c9" };
  const frames = FRAMES.slice(0, -1).map((f) => f.text).join("") +
    `id: ${FRAMES.length}\ndata: ${JSON.stringify({ type: "RUN_FINISHED", threadId: "t1", runId: "run-1", outcome: { type: "interrupt", interrupts: [interrupt] } })}\n\n`;
  const { fetch } = replayServer(enc.encode(frames));
  const { chat, events } = chatOver(fetch);
  chat.setHistory(HISTORY);
  await chat.reattach("run-1");
  assert.deepEqual(events.find((e) => e.type === "interrupt")?.interrupts, [interrupt]);
  assert.deepEqual(chat.pendingInterrupts.map((i) => i.id), ["i1"]);
});

test("reattach: a browser tool the run stopped on runs here, and the thread resumes with its result", async () => {
  const ask = (events) => events.map((e) => `id: ${e.id}\ndata: ${JSON.stringify(e.event)}\n\n`).join("");
  const frames = ask([
    { id: 1, event: { type: "RUN_STARTED", threadId: "t1", runId: "run-1" } },
    { id: 2, event: { type: "TOOL_CALL_START", toolCallId: "c7", toolCallName: "echo", parentMessageId: "a7" } },
    { id: 3, event: { type: "TOOL_CALL_ARGS", toolCallId: "c7", delta: '{"x": 2}' } },
    { id: 4, event: { type: "TOOL_CALL_END", toolCallId: "c7" } },
    { id: 5, event: { type: "RUN_FINISHED", threadId: "t1", runId: "run-1", outcome: { type: "success", pendingToolCallIds: ["c7"] } } },
  ]);
  const after = ask([
    { id: 1, event: { type: "RUN_STARTED", threadId: "t1", runId: "x" } },
    { id: 2, event: { type: "TEXT_MESSAGE_START", messageId: "a8", role: "assistant" } },
    { id: 3, event: { type: "TEXT_MESSAGE_CONTENT", messageId: "a8", delta: "Got 4." } },
    { id: 4, event: { type: "TEXT_MESSAGE_END", messageId: "a8" } },
    { id: 5, event: { type: "RUN_FINISHED", threadId: "t1", runId: "x" } },
  ]);
  const { fetch, requests } = replayServer(enc.encode(frames), {
    "/b/gth/agents/default/run": () => streamResponse([enc.encode(after)]),
  });
  const seen = [];
  const echo = { name: "echo", description: "echo", parameters: { type: "object", properties: {} }, handler: async (args) => (seen.push(args), args.x * 2) };
  const { chat, events } = chatOver(fetch, { tools: [echo] });
  chat.setHistory([{ id: "u1", role: "user", content: "double 2" }]);
  await chat.reattach("run-1");
  assert.deepEqual(seen, [{ x: 2 }]);
  const post = requests.find((r) => r.method === "POST");
  assert.deepEqual(post.body.messages.at(-1), { id: post.body.messages.at(-1).id, role: "tool", toolCallId: "c7", content: "4" });
  assert.equal(post.body.forwardedProps.detach, true);
  assert.equal(shownText(events, "a8"), "Got 4.");
});

test("reattach: a browser tool call approved with an edit before the reload runs with the server's arguments", async () => {
  const ask = (events) => events.map((e, i) => `id: ${i + 1}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  const frames = ask([
    { type: "RUN_STARTED", threadId: "t1", runId: "run-1" },
    { type: "TOOL_CALL_START", toolCallId: "c7", toolCallName: "echo", parentMessageId: "a7" },
    { type: "TOOL_CALL_ARGS", toolCallId: "c7", delta: '{"x": 2}' },
    { type: "TOOL_CALL_END", toolCallId: "c7" },
    { type: "RUN_FINISHED", threadId: "t1", runId: "run-1", outcome: { type: "success", pendingToolCallIds: ["c7"] } },
  ]);
  const after = ask([{ type: "RUN_STARTED", threadId: "t1", runId: "x" }, { type: "RUN_FINISHED", threadId: "t1", runId: "x" }]);
  const { fetch } = replayServer(enc.encode(frames), { "/b/gth/agents/default/run": () => streamResponse([enc.encode(after)]) });
  const seen = [];
  const echo = { name: "echo", description: "echo", parameters: { type: "object", properties: {} }, handler: async (args) => (seen.push(args), args.x * 2) };
  // What the page before the reload approved (an edit) is on the server only.
  const suspended = async () => [{ id: "tc", reason: "tool_call", toolCallId: "c7", metadata: { gth: { clientTool: "echo", args: { x: 5 } } } }];
  const { chat } = chatOver(fetch, { tools: [echo], suspended });
  chat.setHistory([{ id: "u1", role: "user", content: "double 2" }]);
  await chat.reattach("run-1");
  assert.deepEqual(seen, [{ x: 5 }]);
});

test("reattach: a run the server no longer has resolves 'gone' and says nothing", async () => {
  const fetch = async () => Response.json({ code: "run_not_found", message: "There is no run." }, { status: 404 });
  const { chat, events } = chatOver(fetch);
  assert.equal(await chat.reattach("run-x"), "gone");
  assert.equal(events.filter((e) => e.type === "error").length, 0);
  assert.equal(chat.running, false);
});

test("mount after a reload mid-run: the transcript shows every message once, the answer whole, then idle", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "http", base_url: "/b/", turn_id: "turn-1", pending_prompt: "" });
  const requests = [];
  const fetch = async (url, init = {}) => {
    requests.push({ url, method: init.method || "GET" });
    if (url.startsWith("/b/gth/threads/t1")) {
      return Response.json({ threadId: "t1", messages: HISTORY, busy: true, run: { runId: "run-1" }, turns: [{ turnId: "turn-1", done: false }] });
    }
    if (url === "/b/gth/runs/run-1/events") return streamResponse(pieces(RECORDED, 64));
    if (url === "/b/gth/info") return Response.json({});
    return new Response("not found", { status: 404 });
  };
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  await until(() => requests.some((r) => r.url.includes("/gth/runs/")), "re-attach");
  await until(() => el.querySelector(".gth-root").dataset.state === "idle" && el.querySelector("[data-message-id=a2]"), "run followed to its end");
  await new Promise((r) => setTimeout(r, 20)); // the last frame painted
  const ids = [...el.querySelectorAll(".gth-msg")].map((m) => m.dataset.messageId);
  assert.deepEqual(ids, ["u1", "a1", "a2"]);
  assert.equal(el.querySelector("[data-message-id=a1] .gth-msg-content").textContent.trim(), A1.trim());
  assert.equal(el.querySelector("[data-message-id=a2] .gth-msg-content").textContent.trim(), A2.trim());
  assert.equal(el.querySelectorAll(".gth-tool[data-tool-call-id=c1]").length, 1);
  assert.equal(el.querySelectorAll(".gth-error").length, 0);
  assert.equal(requests.filter((r) => r.url.endsWith("/run")).length, 0); // nothing was sent again
  cleanup();
});

test("mount: a run whose events are gone is waited out, then the thread is shown", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "http", base_url: "/b/", turn_id: "", pending_prompt: "" });
  let views = 0;
  const fetch = async (url) => {
    if (url.startsWith("/b/gth/threads/t1")) {
      views += 1;
      if (views === 1) return Response.json({ messages: HISTORY.slice(0, 1), busy: true, run: { runId: "run-1" } });
      return Response.json({ messages: [...HISTORY, { id: "a2", role: "assistant", content: A2 }], busy: false });
    }
    if (url === "/b/gth/runs/run-1/events") return Response.json({ code: "events_expired", message: "gone" }, { status: 410 });
    return new Response("not found", { status: 404 });
  };
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  await until(() => el.querySelector("[data-message-id=a2]"), "the thread after the run");
  assert.deepEqual([...el.querySelectorAll(".gth-msg")].map((m) => m.dataset.messageId), ["u1", "a1", "a2"]);
  assert.equal(el.querySelectorAll(".gth-error").length, 0);
  cleanup();
});
