import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatController } from "../src/chat/controller.js";
import { createRegistry } from "../src/tools/registry.js";
import { scriptedFetch, started, finished, text, toolCall } from "../test-support/sse.mjs";

const tool = (name, handler) => ({ name, description: name, parameters: { type: "object", properties: {} }, handler });

function controller(scripts, tools, opts = {}) {
  const { fetch, requests } = scriptedFetch(scripts);
  const registry = createRegistry([], { builtins: tools });
  const chat = new ChatController({ url: "http://x/gth/agents/default/run", threadId: "t1", registry, fetch, ...opts });
  const events = [];
  chat.on((e) => events.push(e));
  return { chat, requests, events };
}

test("a suspended client tool runs in the browser and its result resumes the run", async () => {
  const seen = [];
  const { chat, requests, events } = controller(
    [
      (b) => [started(b), ...toolCall("call_1", "echo", { x: 1 }), finished(b, { type: "success", pendingToolCallIds: ["call_1"] })],
      (b) => [started(b), ...text("m2", "done"), finished(b)],
    ],
    [tool("echo", async (args, ctx) => { seen.push([args, ctx.toolCallId]); return { echoed: args.x }; })],
  );
  assert.equal(await chat.send("hi"), true);
  assert.equal(requests.length, 2);
  assert.deepEqual(seen, [[{ x: 1 }, "call_1"]]);
  // Tools are declared on every request, JSON Schema passed through.
  assert.deepEqual(requests[0].body.tools.map((t) => t.name), ["echo"]);
  const last = requests[1].body.messages.at(-1);
  assert.equal(last.role, "tool");
  assert.equal(last.toolCallId, "call_1");
  assert.equal(last.content, '{"echoed":1}');
  assert.equal(requests[1].body.threadId, "t1");
  assert.notEqual(requests[1].body.runId, requests[0].body.runId);
  const runs = events.filter((e) => e.type === "tool-run").map((e) => e.status);
  assert.deepEqual(runs, ["running", "done"]);
  assert.equal(chat.running, false);
  assert.ok(chat.messages.some((m) => m.role === "assistant" && m.content === "done"));
});

test("a handler error becomes {\"error\": message} as the result", async () => {
  const { chat, requests, events } = controller(
    [
      (b) => [started(b), ...toolCall("c1", "boom", {}), finished(b, { type: "success", pendingToolCallIds: ["c1"] })],
      (b) => [started(b), finished(b)],
    ],
    [tool("boom", async () => { throw new Error("no camera here"); })],
  );
  await chat.send("go");
  assert.equal(requests[1].body.messages.at(-1).content, JSON.stringify({ error: "no camera here" }));
  assert.equal(events.filter((e) => e.type === "tool-run").at(-1).status, "error");
});

test("Stop during a tool handler latches: no resume is sent", async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  const { chat, requests, events } = controller(
    [(b) => [started(b), ...toolCall("c1", "slow", {}), finished(b, { type: "success", pendingToolCallIds: ["c1"] })]],
    [tool("slow", async (_a, ctx) => { await gate; return ctx.signal.aborted ? "aborted" : "ok"; })],
  );
  const done = chat.send("go");
  while (!events.some((e) => e.type === "tool-run" && e.status === "running")) await new Promise((r) => setTimeout(r, 1));
  chat.stop();
  release();
  await done;
  assert.equal(requests.length, 1);
  assert.ok(events.some((e) => e.type === "stopped"));
  assert.equal(chat.running, false);
});

test("Stop during the HTTP stream aborts the request", async () => {
  let signal;
  const { chat, events } = controller(
    [(b, init) => {
      signal = init.signal;
      const enc = new TextEncoder();
      const body = new ReadableStream({
        start(c) {
          c.enqueue(enc.encode(`data: ${JSON.stringify(started(b))}\n\n`));
          init.signal.addEventListener("abort", () => c.error(new DOMException("aborted", "AbortError")));
        },
      });
      return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
    }],
    [],
  );
  const done = chat.send("go");
  while (!events.some((e) => e.type === "agui" && e.event.type === "RUN_STARTED")) await new Promise((r) => setTimeout(r, 1));
  chat.stop();
  await done;
  assert.equal(signal.aborted, true);
  assert.ok(events.some((e) => e.type === "stopped"));
  assert.ok(!events.some((e) => e.type === "error"), JSON.stringify(events.filter((e) => e.type === "error")));
});

test("calls from before this turn's user message are not replayed", async () => {
  const ran = [];
  const { chat, requests } = controller(
    [(b) => [started(b), ...text("m3", "ok"), finished(b, { type: "success", pendingToolCallIds: ["old"] })]],
    [tool("echo", async () => { ran.push(1); return "x"; })],
  );
  chat.setHistory([
    { id: "u0", role: "user", content: "earlier" },
    { id: "a0", role: "assistant", toolCalls: [{ id: "old", type: "function", function: { name: "echo", arguments: "{}" } }] },
  ]);
  await chat.send("new turn");
  assert.equal(requests.length, 1);
  assert.deepEqual(ran, []);
});

test("the loop stops after maxRounds", async () => {
  let n = 0;
  const script = (b) => { n++; return [started(b), ...toolCall(`c${n}`, "echo", {}), finished(b, { type: "success", pendingToolCallIds: [`c${n}`] })]; };
  const { chat, requests, events } = controller(Array(5).fill(script), [tool("echo", async () => "x")], { maxRounds: 3 });
  await chat.send("loop");
  assert.equal(requests.length, 3);
  assert.equal(events.find((e) => e.type === "error").code, "too_many_rounds");
});

test("an HTTP refusal surfaces its code and message", async () => {
  const { chat, events } = controller(
    [() => new Response(JSON.stringify({ code: "run_busy", message: "Thread t1 is busy." }), { status: 409, headers: { "Content-Type": "application/json" } })],
    [],
  );
  await chat.send("hi");
  const err = events.find((e) => e.type === "error");
  assert.equal(err.code, "run_busy");
  assert.equal(err.message, "Thread t1 is busy.");
});

test("RUN_ERROR from the producer is reported with its code", async () => {
  const { chat, events } = controller([(b) => [started(b), { type: "RUN_ERROR", code: "model_error", message: "quota" }]], []);
  await chat.send("hi");
  assert.deepEqual(events.filter((e) => e.type === "error").map((e) => [e.code, e.message]), [["model_error", "quota"]]);
});

test("an interrupt is surfaced; cancelling resumes with status cancelled", async () => {
  const { chat, requests, events } = controller(
    [
      (b) => [started(b), finished(b, { type: "interrupt", interrupts: [{ id: "i1", reason: "confirmation", message: "Run rm?" }] })],
      (b) => [started(b), ...text("m", "cancelled"), finished(b)],
    ],
    [],
  );
  await chat.send("delete it");
  const intr = events.find((e) => e.type === "interrupt");
  assert.equal(intr.interrupts[0].message, "Run rm?");
  // A new message is refused while the interrupt waits.
  assert.equal(await chat.send("other"), false);
  assert.equal(events.at(-1).code, "interrupt_pending");
  await chat.resolveInterrupts([{ interruptId: "i1", status: "cancelled" }]);
  assert.deepEqual(requests[1].body.resume, [{ interruptId: "i1", status: "cancelled" }]);
  assert.equal(chat.pendingInterrupts.length, 0);
});

test("an A2UI action is sent as a user message whose content is the JSON", async () => {
  const { chat, requests } = controller([(b) => [started(b), finished(b)]], []);
  const action = { actionName: "submit", sourceComponentId: "b1", surfaceId: "s", timestamp: "2026-01-01T00:00:00.000Z", context: { a: 1 } };
  await chat.sendAction(action);
  const m = requests[0].body.messages.at(-1);
  assert.equal(m.role, "user");
  assert.deepEqual(JSON.parse(m.content), action);
});

/** A text message of `n` one-token deltas (ids t000001…), in one SSE response. */
const longText = (id, n) => [
  { type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" },
  ...Array.from({ length: n }, (_, i) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: `t${String(i + 1).padStart(6, "0")} ` })),
  { type: "TEXT_MESSAGE_END", messageId: id },
];

test("a 20,000-token answer: the client copies its message list a few times, not once per token", async () => {
  const N = 20_000;
  const { chat, requests, events } = controller(
    [(b) => [started(b), ...longText("long", N), finished(b)], (b) => [started(b), ...text("m2", "ok"), finished(b)]],
    [],
  );
  // Each time the client replaces its message list (a deep copy of every message) it says so.
  let copies = 0;
  chat.agent.subscribe({ onMessagesChanged: () => void (copies += 1) });
  await chat.send("a long one");
  assert.equal(events.filter((e) => e.type === "agui" && e.event.type === "TEXT_MESSAGE_CONTENT").length, N);
  assert.ok(copies < 10, `${copies} copies of the message list for ${N} tokens`);
  const answer = chat.messages.find((m) => m.id === "long");
  assert.equal(answer.content.length, N * 8);
  assert.ok(answer.content.startsWith("t000001 t000002 ") && answer.content.endsWith("t020000 "));
  // The next run re-sends the whole answer, as the client would have kept it.
  await chat.send("and then?");
  const sent = requests[1].body.messages;
  assert.deepEqual(sent.map((m) => m.role), ["user", "assistant", "user"]);
  assert.equal(sent[1].id, "long");
  assert.equal(sent[1].content, answer.content);
});

test("a 20,000-token answer: the work per token stays flat", async () => {
  const N = 20_000;
  const { chat, events } = controller([(b) => [started(b), ...longText("long", N), finished(b)]], []);
  /** ms for each fifth of the tokens, timed between content events */
  const slices = [];
  let seen = 0;
  let t0 = 0;
  chat.on((e) => {
    if (e.type !== "agui" || e.event.type !== "TEXT_MESSAGE_CONTENT") return;
    seen += 1;
    if (seen === 1) t0 = performance.now();
    if (seen % (N / 5) === 0) {
      const t = performance.now();
      slices.push(t - t0);
      t0 = t;
    }
  });
  await chat.send("a long one");
  assert.equal(events.filter((e) => e.type === "agui" && e.event.type === "TEXT_MESSAGE_CONTENT").length, N);
  // Quadratic work made the last fifth ~6x the second (and more with longer answers); flat
  // work keeps them alike. The bound is loose: the machine may be busy with other things.
  const [, second, , , last] = slices;
  assert.ok(last < 3 * second + 50, `slices ${slices.map((s) => s.toFixed(0)).join(" ")} ms`);
});

test("Stop in the middle of an answer: the text so far stays in the history sent next", async () => {
  const { chat, requests, events } = controller(
    [
      (b, init) => {
        const enc = new TextEncoder();
        const body = new ReadableStream({
          start(c) {
            const frames = [started(b), { type: "TEXT_MESSAGE_START", messageId: "cut", role: "assistant" }, { type: "TEXT_MESSAGE_CONTENT", messageId: "cut", delta: "half " }, { type: "TEXT_MESSAGE_CONTENT", messageId: "cut", delta: "an answer" }];
            c.enqueue(enc.encode(frames.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")));
            init.signal.addEventListener("abort", () => c.error(new DOMException("aborted", "AbortError")));
          },
        });
        return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
      },
      (b) => [started(b), finished(b)],
    ],
    [],
  );
  const done = chat.send("go");
  while (events.filter((e) => e.type === "agui" && e.event.type === "TEXT_MESSAGE_CONTENT").length < 2) await new Promise((r) => setTimeout(r, 1));
  chat.stop();
  await done;
  assert.equal(chat.messages.find((m) => m.id === "cut")?.content, "half an answer");
  await chat.send("go on");
  assert.equal(requests[1].body.messages.find((m) => m.id === "cut")?.content, "half an answer");
});

/** An approval of insert_cell with run (a code card), and the runs after it is answered. */
const INSERT = { source: "df.plot()", run: true };
const insertApproval = { id: "int-1", reason: "confirmation", toolCallId: "c1", metadata: { gth: { value: { toolName: "insert_cell", args: INSERT, code: INSERT.source, codeArgument: "source" } } } };
const insertRuns = () => [
  (b) => [started(b), ...toolCall("c1", "insert_cell", INSERT), finished(b, { type: "interrupt", interrupts: [insertApproval] })],
  (b) => [started(b), finished(b, { type: "success", pendingToolCallIds: ["c1"] })],
  (b) => [started(b), ...text("m2", "Inserted."), finished(b)],
];
/** The server's copy of the thread: the call suspended with the arguments the edit gave it. */
const suspendedWith = (args) => [{ id: "tc-1", reason: "tool_call", toolCallId: "c1", metadata: { gth: { clientTool: "insert_cell", args } } }];

test("an approval edited here: the browser tool runs with the arguments the server suspended it with, not the streamed ones", async () => {
  const seen = [];
  let asked = 0;
  const { chat, requests } = controller(insertRuns(), [tool("insert_cell", async (args) => { seen.push(args); return { cell_id: "n1" }; })], {
    suspended: async () => { asked += 1; return suspendedWith({ source: "df.plot(kind='bar')", run: true }); },
  });
  await chat.send("put that in a cell");
  // The code card edits `code`; the server moves it into `source` (codeArgument).
  await chat.resolveInterrupts([{ interruptId: "int-1", status: "resolved", payload: { approved: true, editedArgs: { ...INSERT, code: "df.plot(kind='bar')" } } }]);
  assert.deepEqual(seen, [{ source: "df.plot(kind='bar')", run: true }]);
  assert.equal(asked, 1);
  assert.equal(requests[2].body.messages.at(-1).toolCallId, "c1");
});

test("an approval answered without an edit runs the streamed arguments and asks the server nothing", async () => {
  const seen = [];
  let asked = 0;
  const { chat } = controller(insertRuns(), [tool("insert_cell", async (args) => { seen.push(args); return {}; })], {
    suspended: async () => { asked += 1; return suspendedWith({ source: "other" }); },
  });
  await chat.send("put that in a cell");
  await chat.resolveInterrupts([{ interruptId: "int-1", status: "resolved", payload: { approved: true } }]);
  assert.deepEqual(seen, [INSERT]);
  assert.equal(asked, 0);
});

test("an edited approval whose arguments the server does not give back is answered with an error, unrun", async () => {
  for (const suspended of [async () => { throw new Error("offline"); }, async () => [], undefined]) {
    const seen = [];
    const { chat, requests, events } = controller(insertRuns(), [tool("insert_cell", async (args) => { seen.push(args); return {}; })], { suspended });
    await chat.send("put that in a cell");
    await chat.resolveInterrupts([{ interruptId: "int-1", status: "resolved", payload: { approved: true, editedArgs: { ...INSERT, code: "x = 1" } } }]);
    assert.deepEqual(seen, []); // never the model's original code
    assert.match(JSON.parse(requests[2].body.messages.at(-1).content).error, /approved this call with edits.*not run/);
    assert.equal(events.filter((e) => e.type === "tool-run").at(-1).status, "error");
  }
});

test("a handler is told its turn: the widget's own, else the id of the turn's user message", async () => {
  const turns = [];
  const echo = tool("echo", async (_a, ctx) => { turns.push(ctx.turnId); return {}; });
  const runs = (id) => [
    (b) => [started(b), ...toolCall(id, "echo", {}), finished(b, { type: "success", pendingToolCallIds: [id] })],
    (b) => [started(b), finished(b)],
  ];
  await controller(runs("c1"), [echo], { turnId: "turn-7" }).chat.send("go");
  // `%gth` alone: no turn of its own; each typed turn is its user message.
  const { chat, requests } = controller([...runs("c2"), ...runs("c3")], [echo]);
  await chat.send("first");
  await chat.send("second");
  const users = requests.map((r) => r.body.messages.filter((m) => m.role === "user").at(-1).id);
  assert.deepEqual(turns, ["turn-7", users[0], users[2]]);
  assert.notEqual(users[0], users[2]);
});
