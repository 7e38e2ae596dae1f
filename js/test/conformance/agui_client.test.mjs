// AG-UI 1.0 conformance of `gth-jupyter serve`, checked with the official @ag-ui/client HttpAgent.
//
// Every run goes through the client's full pipeline (enforce -> chunk expansion -> verify ->
// reducer), so a stream the client rejects fails the run, and so does any warning the client
// logs about our stream (stripped or unknown material, deprecated shapes, reducer anomalies).
// Each scenario gets its own server (the fake model's script is shared by all threads of a
// server); servers start in the background when this file loads, a few at a time.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

import {
  assertClean,
  installConsoleCapture,
  request,
  runInput,
  runRecorded,
  startServer,
  toolMessage,
  userMessage,
} from "./harness.mjs";

// The client's warnings are part of what is checked: never let the environment silence them.
delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
installConsoleCapture();

// -- scripts and tools --------------------------------------------------------------------------

const CAPTURE_IMAGE = {
  name: "capture_image",
  description: "Capture an image from the user's camera.",
  parameters: { type: "object", properties: {} },
};
const PICK_COLOR = {
  name: "pick_color",
  description: "Ask the user to pick a colour.",
  parameters: { type: "object", properties: { hint: { type: "string" } } },
};

const PLAIN_TEXT = "Hello there! This answer streams in several small tokens.";
const CLIENT_FOLLOW_UP = "I can see a cat sitting on the desk.";
const CLIENT_SCRIPT = [
  { content: "Let me take a picture.", toolCalls: [{ name: "capture_image", args: {} }] },
  CLIENT_FOLLOW_UP,
];
const TWO_FOLLOW_UP = "Thanks, I have the image and the colour.";
const TWO_SCRIPT = [
  {
    content: "I need two things from you.",
    toolCalls: [
      { name: "capture_image", args: {} },
      { name: "pick_color", args: { hint: "something warm" } },
    ],
  },
  TWO_FOLLOW_UP,
];
const STATUS_TEXT = "Looking at the notebook";
const SERVER_TOOL_FOLLOW_UP = "The notebook looks fine.";
const LONG_TEXT = Array.from({ length: 100 }, (_, i) => `word${i}`).join(" ");

const SHELL_CALL = { name: "run_shell_command", args: { command: "echo approved > out.txt" } };
const APPROVAL_SCRIPT = [{ content: "Writing the file.", toolCalls: [SHELL_CALL] }, "Finished."];
// The notebook command answers approvals (Gaunt Sloth's api command refuses them).
const APPROVAL_OPTIONS = {
  command: "notebook",
  builtInTools: { run_shell_command: true },
  config: { approvals: "manual" },
};

// Started now, in the background; each test awaits its own.
const pending = new Map();
function server(name, responses, options = {}) {
  const promise = startServer(responses, { name, ...options });
  promise.catch(() => {}); // reported by the test that awaits it
  pending.set(name, promise);
  return () => promise;
}

const servers = {
  plain: server("plain", [PLAIN_TEXT]),
  branch: server("branch", ["First answer.", "Second answer.", "Third answer.", "Branched answer."]),
  serverTool: server("serverTool", [
    {
      content: "Checking.",
      toolCalls: [{ name: "gth_status_update", args: { message: STATUS_TEXT } }],
    },
    SERVER_TOOL_FOLLOW_UP,
  ]),
  resumeArray: server("resumeArray", CLIENT_SCRIPT),
  resumeCommand: server("resumeCommand", CLIENT_SCRIPT),
  resumeToolMessage: server("resumeToolMessage", CLIENT_SCRIPT),
  twoByMessages: server("twoByMessages", TWO_SCRIPT),
  twoByResume: server("twoByResume", TWO_SCRIPT),
  error: server("error", [
    { content: "Here is a partial answer", error: "boom" },
    "Recovered after the error.",
  ]),
  disconnect: server("disconnect", [
    { content: LONG_TEXT, delayMs: 30 },
    "The short version.",
  ]),
  approve: server("approve", APPROVAL_SCRIPT, APPROVAL_OPTIONS),
  reject: server("reject", APPROVAL_SCRIPT, APPROVAL_OPTIONS),
  refusals: server("refusals", [
    CLIENT_SCRIPT[0],
    { content: LONG_TEXT, delayMs: 30 },
  ]),
};

/** A test body run against one scenario's server; a failure carries the server's log. */
function scenario(getServer, body) {
  return async (t) => {
    const srv = await getServer();
    try {
      await body(srv, t);
    } catch (error) {
      if (error && typeof error === "object") {
        error.message = `${error.message}\n--- server ${srv.name} log ---\n${srv.output()}`;
      }
      throw error;
    }
  };
}

after(async () => {
  const started = await Promise.allSettled(pending.values());
  await Promise.all(
    started.filter((s) => s.status === "fulfilled").map((s) => s.value.stop()),
  );
});

// -- assertions ---------------------------------------------------------------------------------

/** RUN_STARTED first (protocolVersion "1.0", the client's ids), a terminal event last. */
function assertRunFrame(rec, agent, terminal = "RUN_FINISHED") {
  assert.ok(rec.events.length >= 2, `too few events: ${JSON.stringify(rec.types)}`);
  const [first] = rec.events;
  const last = rec.events[rec.events.length - 1];
  assert.equal(first.type, "RUN_STARTED");
  assert.equal(first.protocolVersion, "1.0");
  assert.equal(first.threadId, agent.threadId);
  assert.equal(first.runId, rec.input.runId);
  assert.equal(last.type, terminal, `last event: ${JSON.stringify(rec.types)}`);
  if (terminal === "RUN_FINISHED") {
    assert.equal(last.threadId, agent.threadId);
    assert.equal(last.runId, rec.input.runId);
  }
  assert.equal(rec.types.filter((t) => t === "RUN_STARTED").length, 1);
  assert.equal(rec.types.filter((t) => t === "RUN_FINISHED" || t === "RUN_ERROR").length, 1);
}

/** One RUN_FINISHED, outcome success, pending calls as given (also named on the wire). */
function assertSuccess(rec, pendingIds = []) {
  assert.equal(rec.finished.length, 1, "one RUN_FINISHED callback");
  const [finished] = rec.finished;
  assert.equal(finished.outcome, "success");
  assert.deepEqual(finished.pendingToolCallIds, pendingIds);
  const outcome = finished.event.outcome;
  if (outcome !== undefined) assert.equal(outcome.type, "success");
  if (pendingIds.length) {
    assert.deepEqual(outcome?.pendingToolCallIds, pendingIds, "the server names pending calls");
  } else {
    assert.ok(!outcome?.pendingToolCallIds?.length, "no pending calls on the wire");
  }
  assert.equal(rec.runErrors.length, 0);
}

/** The full text of a text message, and that it streamed as `minDeltas` or more deltas. */
function textOf(rec, messageId, minDeltas = 1) {
  const deltas = rec.of("TEXT_MESSAGE_CONTENT").filter((e) => e.messageId === messageId);
  assert.ok(deltas.length >= minDeltas, `expected >= ${minDeltas} deltas, got ${deltas.length}`);
  return deltas.map((e) => e.delta).join("");
}

/** The client's conversation as roles. */
function roles(agent) {
  return agent.messages.map((m) => m.role);
}

function indexOf(rec, predicate, label) {
  const i = rec.events.findIndex(predicate);
  assert.ok(i >= 0, `missing ${label}: ${JSON.stringify(rec.types)}`);
  return i;
}

/** TOOL_CALL_START/ARGS/END for one call, in order; returns {id, args, start, end}. */
function toolCallOf(rec, name) {
  const startEvent = rec.of("TOOL_CALL_START").find((e) => e.toolCallName === name);
  assert.ok(startEvent, `no TOOL_CALL_START for ${name}: ${JSON.stringify(rec.types)}`);
  const id = startEvent.toolCallId;
  const start = rec.events.indexOf(startEvent);
  const end = indexOf(rec, (e) => e.type === "TOOL_CALL_END" && e.toolCallId === id, "END");
  const argEvents = rec.events.filter((e) => e.type === "TOOL_CALL_ARGS" && e.toolCallId === id);
  for (const e of argEvents) {
    const i = rec.events.indexOf(e);
    assert.ok(start < i && i < end, "TOOL_CALL_ARGS between START and END");
  }
  const text = argEvents.map((e) => e.delta).join("");
  return { id, args: text ? JSON.parse(text) : {}, start, end, startEvent };
}

function resultsFor(rec, toolCallId) {
  return rec.of("TOOL_CALL_RESULT").filter((e) => e.toolCallId === toolCallId);
}

/**
 * A conversation a provider accepts: a human message last, every AI tool call answered by a
 * ToolMessage before the next non-tool message, and no ToolMessage without its call.
 */
function assertValidConversation(messages, { lastHuman = true } = {}) {
  assert.ok(messages.length > 0, "the model got no messages");
  let open = new Map();
  const seen = new Set();
  for (const [i, m] of messages.entries()) {
    assert.ok(["system", "human", "ai", "tool"].includes(m.type), `message ${i}: type ${m.type}`);
    if (m.type === "tool") {
      assert.ok(open.has(m.tool_call_id), `message ${i}: ToolMessage for unknown call`);
      open.delete(m.tool_call_id);
      continue;
    }
    assert.equal(open.size, 0, `message ${i}: unanswered tool calls ${[...open.keys()]}`);
    if (m.type === "ai") {
      open = new Map((m.tool_calls ?? []).map((c) => [c.id, c.name]));
      for (const id of open.keys()) {
        assert.ok(!seen.has(id), `tool call id ${id} reused`);
        seen.add(id);
      }
    }
  }
  assert.equal(open.size, 0, `unanswered tool calls at the end: ${[...open.keys()]}`);
  if (lastHuman) {
    assert.equal(messages[messages.length - 1].type, "human", "the last message is the user's");
  }
}

/** The model's input after a tool answer: ends with the ToolMessages for `answers`. */
function assertSawToolResults(call, answers) {
  const tools = call.messages.filter((m) => m.type === "tool");
  for (const [toolCallId, content] of Object.entries(answers)) {
    const found = tools.filter((m) => m.tool_call_id === toolCallId);
    assert.equal(found.length, 1, `one ToolMessage for ${toolCallId}, got ${found.length}`);
    assert.deepEqual(found[0].content, content);
  }
  const tail = call.messages.slice(-Object.keys(answers).length);
  assert.deepEqual(
    tail.map((m) => m.tool_call_id).sort(),
    Object.keys(answers).sort(),
    "the tool results are the model's latest input",
  );
  const ai = call.messages[call.messages.length - Object.keys(answers).length - 1];
  assert.equal(ai.type, "ai");
  assert.deepEqual(
    ai.tool_calls.map((c) => c.id),
    Object.keys(answers),
    "answered the calls of the last AI turn, in order",
  );
}

/** A client tool suspended: streamed, no result, success with the call pending. */
async function suspendCaptureImage(srv) {
  const agent = srv.agent();
  agent.addMessage(userMessage("Take a picture, please."));
  const rec = await runRecorded(agent, { tools: [CAPTURE_IMAGE] });
  assertRunFrame(rec, agent);
  const call = toolCallOf(rec, "capture_image");
  assert.deepEqual(call.args, {});
  assert.equal(resultsFor(rec, call.id).length, 0, "no TOOL_CALL_RESULT for a client tool");
  assert.equal(rec.of("TOOL_CALL_RESULT").length, 0);
  assertSuccess(rec, [call.id]);
  assert.deepEqual(roles(agent), ["user", "assistant"]);
  const assistant = agent.messages[1];
  assert.equal(assistant.content, CLIENT_SCRIPT[0].content);
  assert.deepEqual(
    assistant.toolCalls.map((c) => [c.id, c.function.name]),
    [[call.id, "capture_image"]],
  );
  return { agent, call };
}

/** After an answer: success, the follow-up text, and the model saw the client's result. */
async function assertAnswered(srv, agent, rec, callId, content, { echoed }) {
  assertRunFrame(rec, agent);
  assertSuccess(rec);
  const results = resultsFor(rec, callId);
  if (echoed) {
    assert.equal(results.length, 1, "one TOOL_CALL_RESULT for the resumed call");
    assert.equal(typeof results[0].messageId, "string");
    assert.ok(results[0].messageId.length > 0, "TOOL_CALL_RESULT.messageId");
    assert.equal(results[0].content, content);
    const resultAt = rec.events.indexOf(results[0]);
    const textAt = indexOf(rec, (e) => e.type === "TEXT_MESSAGE_START", "TEXT_MESSAGE_START");
    assert.ok(resultAt < textAt, "the result comes before the follow-up text");
  } else {
    assert.equal(results.length, 0, "the client's own result is not echoed");
  }
  assert.equal(rec.of("TOOL_CALL_START").length, 0, "no new tool call");
  const start = rec.of("TEXT_MESSAGE_START")[0];
  assert.ok(start, "a follow-up text message");
  assert.equal(textOf(rec, start.messageId), CLIENT_FOLLOW_UP);

  assert.deepEqual(roles(agent), ["user", "assistant", "tool", "assistant"]);
  const tool = agent.messages[2];
  assert.equal(tool.toolCallId, callId);
  assert.equal(tool.content, content);
  if (echoed) assert.equal(tool.id, results[0].messageId);
  assert.equal(agent.messages[3].content, CLIENT_FOLLOW_UP);
  assert.equal(agent.messages[3].id, start.messageId);

  const calls = await srv.calls();
  assert.equal(calls.length, 2, "the model was called once more");
  const last = calls[1].messages;
  assertSawToolResults(calls[1], { [callId]: content });
  assert.deepEqual(
    last.map((m) => m.type),
    ["human", "ai", "tool"],
  );
  assert.ok(calls[1].tools.includes("capture_image"), "the client tool is still bound");
}

async function runWithBusyRetry(agent, params, attempts = 6) {
  for (let attempt = 1; ; attempt += 1) {
    const rec = await runRecorded(agent, params, { allowFailure: true });
    const error = rec.error ?? rec.failed[0];
    const busy = error?.status === 409 && error?.payload?.code === "run_busy";
    if (!busy || attempt >= attempts) {
      if (error) throw new Error(`run failed after ${attempt} attempt(s): ${error.message}`);
      assertClean(rec);
      rec.attempts = attempt;
      return rec;
    }
    const retryAfter = Number(agent.lastResponse?.headers.get("retry-after"));
    const waitMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 100;
    await sleep(Math.min(waitMs, 2000));
  }
}

// -- scenarios ----------------------------------------------------------------------------------

test(
  "parentRunId (through a middleware: runAgent does not take it) branches from that run; RUN_STARTED echoes it",
  scenario(servers.branch, async (srv) => {
    const agent = srv.agent();
    const runIds = [];
    for (const text of ["One?", "Two?", "Three?"]) {
      agent.addMessage(userMessage(text));
      const rec = await runRecorded(agent);
      assertSuccess(rec);
      runIds.push(rec.of("RUN_STARTED")[0].runId);
    }
    const sent = [];
    agent.use((input, next) => {
      const branched = { ...input, parentRunId: runIds[0] };
      sent.push(branched);
      return next.run(branched);
    });
    agent.addMessage(userMessage("Four?"));
    const rec = await runRecorded(agent);
    assertSuccess(rec);
    assert.equal(sent.length, 1);
    assert.equal(rec.of("RUN_STARTED")[0].parentRunId, runIds[0]);
    // The client sent its whole history; the model saw the first turn and the new prompt.
    const call = await srv.lastCall();
    assert.deepEqual(
      call.messages.map((m) => [m.type, m.content]),
      [["human", "One?"], ["ai", "First answer."], ["human", "Four?"]],
    );
    const view = await request(srv, { method: "GET", path: `/gth/threads/${agent.threadId}` });
    assert.equal(view.status, 200);
    assert.deepEqual(view.json.messages.map((m) => m.content), ["One?", "First answer.", "Four?", "Branched answer."]);
    const current = view.json.branches.find((b) => b.current);
    assert.equal(current.parentRunId, runIds[0]);
    assert.ok(view.json.branches.some((b) => b.runId === runIds[2] && !b.current));
  }),
);

test(
  "plain text: streamed deltas, assembled assistant message, success",
  scenario(servers.plain, async (srv) => {
    const agent = srv.agent();
    const user = userMessage("Say hello.");
    agent.addMessage(user);
    const rec = await runRecorded(agent);

    assertRunFrame(rec, agent);
    assertSuccess(rec);
    const starts = rec.of("TEXT_MESSAGE_START");
    assert.equal(starts.length, 1);
    const [start] = starts;
    assert.ok(start.role === undefined || start.role === "assistant");
    assert.equal(textOf(rec, start.messageId, 3), PLAIN_TEXT);
    const endAt = indexOf(rec, (e) => e.type === "TEXT_MESSAGE_END", "TEXT_MESSAGE_END");
    assert.equal(endAt, rec.events.length - 2, "the message closes right before RUN_FINISHED");
    assert.deepEqual(
      [...new Set(rec.types)],
      [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
      ],
    );

    assert.deepEqual(roles(agent), ["user", "assistant"]);
    assert.equal(agent.messages[0].id, user.id);
    assert.equal(agent.messages[1].id, start.messageId);
    assert.equal(agent.messages[1].content, PLAIN_TEXT);
    // The run's usage (AG-UI 1.0 TokenUsage) and its cost in the event's metadata reach the
    // client's RUN_FINISHED callback through @ag-ui/client's verifier (issue 19).
    const [usage] = rec.finished[0].event.usage;
    assert.equal(usage.provider, "fake");
    assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0 && usage.totalTokens === usage.inputTokens + usage.outputTokens);
    assert.deepEqual(rec.finished[0].event.metadata, { gth: { cost: { usd: 0, source: "offline" } } });
    assert.deepEqual(
      rec.result.newMessages.map((m) => m.id),
      [start.messageId],
    );
    const [call] = await srv.calls();
    assert.deepEqual(
      call.messages.map((m) => [m.type, m.content]),
      [["human", "Say hello."]],
    );
  }),
);

test(
  "server tool: START/ARGS/END, TOOL_CALL_RESULT with messageId, then the follow-up",
  scenario(servers.serverTool, async (srv) => {
    const agent = srv.agent();
    agent.addMessage(userMessage("Check the notebook."));
    const rec = await runRecorded(agent);

    assertRunFrame(rec, agent);
    assertSuccess(rec);
    const call = toolCallOf(rec, "gth_status_update");
    assert.deepEqual(call.args, { message: STATUS_TEXT });
    const results = resultsFor(rec, call.id);
    assert.equal(results.length, 1, "one TOOL_CALL_RESULT");
    const [result] = results;
    assert.equal(typeof result.messageId, "string");
    assert.ok(result.messageId.length > 0);
    assert.ok(result.role === undefined || result.role === "tool");
    assert.equal(result.content, STATUS_TEXT);
    const resultAt = rec.events.indexOf(result);
    assert.ok(call.end < resultAt, "the result follows TOOL_CALL_END");
    const texts = rec.of("TEXT_MESSAGE_START");
    assert.equal(texts.length, 2);
    const followUpAt = rec.events.indexOf(texts[1]);
    assert.ok(resultAt < followUpAt, "the follow-up text follows the result");
    assert.equal(textOf(rec, texts[1].messageId), SERVER_TOOL_FOLLOW_UP);
    // The first text is closed before the tool call starts.
    const firstEnd = indexOf(
      rec,
      (e) => e.type === "TEXT_MESSAGE_END" && e.messageId === texts[0].messageId,
      "first TEXT_MESSAGE_END",
    );
    assert.ok(firstEnd < call.start);

    assert.deepEqual(roles(agent), ["user", "assistant", "tool", "assistant"]);
    const [, assistant, tool, followUp] = agent.messages;
    assert.deepEqual(
      assistant.toolCalls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
      [[call.id, "gth_status_update", { message: STATUS_TEXT }]],
    );
    assert.equal(tool.id, result.messageId, "the tool message id is TOOL_CALL_RESULT.messageId");
    assert.equal(tool.toolCallId, call.id);
    assert.equal(tool.content, STATUS_TEXT);
    assert.equal(followUp.content, SERVER_TOOL_FOLLOW_UP);

    const calls = await srv.calls();
    assert.equal(calls.length, 2);
    assertSawToolResults(calls[1], { [call.id]: STATUS_TEXT });
  }),
);

describe("client tool suspended and answered", () => {
  test(
    "(a) resume[] keyed by the tool call id: TOOL_CALL_RESULT, then the follow-up",
    scenario(servers.resumeArray, async (srv) => {
      const { agent, call } = await suspendCaptureImage(srv);
      const payload = { image: "data:image/png;base64,iVBORw0KGgo=", width: 1, height: 1 };
      const rec = await runRecorded(agent, {
        tools: [CAPTURE_IMAGE],
        resume: [{ interruptId: call.id, status: "resolved", payload }],
      });
      // A non-string payload reaches the model as its JSON text.
      const content = (await srv.lastCall()).messages.at(-1).content;
      assert.equal(typeof content, "string");
      assert.deepEqual(JSON.parse(content), payload);
      await assertAnswered(srv, agent, rec, call.id, content, { echoed: true });
    }),
  );

  test(
    "(b) forwardedProps.command.resume with interruptEvent.toolCallId",
    scenario(servers.resumeCommand, async (srv) => {
      const { agent, call } = await suspendCaptureImage(srv);
      const answer = "A photo of a cat on a desk.";
      const rec = await runRecorded(agent, {
        tools: [CAPTURE_IMAGE],
        forwardedProps: { command: { resume: answer, interruptEvent: { toolCallId: call.id } } },
      });
      await assertAnswered(srv, agent, rec, call.id, answer, { echoed: true });
    }),
  );

  test(
    "(c) a trailing tool message (HttpAgent's own flow): no TOOL_CALL_RESULT echo",
    scenario(servers.resumeToolMessage, async (srv) => {
      const { agent, call } = await suspendCaptureImage(srv);
      const answer = "A photo of a cat on a desk.";
      agent.addMessage(toolMessage(call.id, answer));
      const rec = await runRecorded(agent, { tools: [CAPTURE_IMAGE] });
      assert.equal(rec.of("TOOL_CALL_RESULT").length, 0, "no TOOL_CALL_RESULT at all");
      await assertAnswered(srv, agent, rec, call.id, answer, { echoed: false });
    }),
  );
});

describe("two client tools pending at once", () => {
  async function suspendBoth(srv) {
    const agent = srv.agent();
    agent.addMessage(userMessage("Take a picture and pick a colour."));
    const rec = await runRecorded(agent, { tools: [CAPTURE_IMAGE, PICK_COLOR] });
    assertRunFrame(rec, agent);
    const image = toolCallOf(rec, "capture_image");
    const color = toolCallOf(rec, "pick_color");
    assert.deepEqual(color.args, { hint: "something warm" });
    // Interleaving two open tool calls is legal; the order of their starts is the model's.
    assert.ok(image.start < color.start, "the calls start in the model's order");
    assert.equal(rec.of("TOOL_CALL_RESULT").length, 0);
    assertSuccess(rec, [image.id, color.id]);
    assert.deepEqual(roles(agent), ["user", "assistant"]);
    assert.deepEqual(
      agent.messages[1].toolCalls.map((c) => c.id),
      [image.id, color.id],
    );
    return { agent, image, color };
  }

  function assertBothAnswered(rec, agent, answers, { echoed }) {
    assertRunFrame(rec, agent);
    assertSuccess(rec);
    for (const [id, content] of Object.entries(answers)) {
      const results = resultsFor(rec, id);
      if (echoed) {
        assert.equal(results.length, 1, `one TOOL_CALL_RESULT for ${id}`);
        assert.equal(results[0].content, content);
        assert.ok(results[0].messageId);
      } else {
        assert.equal(results.length, 0, `no echo for ${id}`);
      }
    }
    const start = rec.of("TEXT_MESSAGE_START")[0];
    assert.equal(textOf(rec, start.messageId), TWO_FOLLOW_UP);
    assert.deepEqual(roles(agent), ["user", "assistant", "tool", "tool", "assistant"]);
    assert.deepEqual(
      agent.messages.slice(2, 4).map((m) => [m.toolCallId, m.content]),
      Object.entries(answers),
    );
  }

  test(
    "answered by two tool messages: the model sees both ToolMessages",
    scenario(servers.twoByMessages, async (srv) => {
      const { agent, image, color } = await suspendBoth(srv);
      const answers = { [image.id]: "image: a cat", [color.id]: "#ff8800" };
      for (const [id, content] of Object.entries(answers)) {
        agent.addMessage(toolMessage(id, content));
      }
      const rec = await runRecorded(agent, { tools: [CAPTURE_IMAGE, PICK_COLOR] });
      assertBothAnswered(rec, agent, answers, { echoed: false });
      const calls = await srv.calls();
      assert.equal(calls.length, 2);
      assertSawToolResults(calls[1], answers);
      assertValidConversation(calls[1].messages, { lastHuman: false });
    }),
  );

  test(
    "answered by resume[] with two entries: both results, then the follow-up",
    scenario(servers.twoByResume, async (srv) => {
      const { agent, image, color } = await suspendBoth(srv);
      const answers = { [image.id]: "image: a cat", [color.id]: "#ff8800" };
      const rec = await runRecorded(agent, {
        tools: [CAPTURE_IMAGE, PICK_COLOR],
        resume: Object.entries(answers).map(([interruptId, payload]) => ({
          interruptId,
          status: "resolved",
          payload,
        })),
      });
      assertBothAnswered(rec, agent, answers, { echoed: true });
      const calls = await srv.calls();
      assert.equal(calls.length, 2);
      assertSawToolResults(calls[1], answers);
    }),
  );
});

test(
  "model error mid-stream: text closed, RUN_ERROR model_error, the thread still works",
  scenario(servers.error, async (srv) => {
    const agent = srv.agent();
    agent.addMessage(userMessage("Answer me."));
    const rec = await runRecorded(agent);
    assertRunFrame(rec, agent, "RUN_ERROR");
    assert.equal(rec.runErrors.length, 1);
    assert.equal(rec.runErrors[0].code, "model_error");
    assert.equal(typeof rec.runErrors[0].message, "string");
    assert.equal(rec.finished.length, 0);
    const start = rec.of("TEXT_MESSAGE_START")[0];
    assert.equal(textOf(rec, start.messageId), "Here is a partial answer");
    const endAt = indexOf(
      rec,
      (e) => e.type === "TEXT_MESSAGE_END" && e.messageId === start.messageId,
      "TEXT_MESSAGE_END",
    );
    assert.ok(endAt < rec.events.length - 1, "the text is closed before RUN_ERROR");

    agent.addMessage(userMessage("Try again."));
    const again = await runRecorded(agent);
    assertRunFrame(again, agent);
    assertSuccess(again);
    const text = again.of("TEXT_MESSAGE_START")[0];
    assert.equal(textOf(again, text.messageId), "Recovered after the error.");
    const calls = await srv.calls();
    assert.equal(calls.length, 2);
    const humans = calls[1].messages.filter((m) => m.type === "human").map((m) => m.content);
    assert.deepEqual(humans, ["Answer me.", "Try again."]);
    assertValidConversation(calls[1].messages);
  }),
);

test(
  "disconnect mid-stream: abortRun, then a new run on the thread succeeds",
  scenario(servers.disconnect, async (srv) => {
    const agent = srv.agent();
    agent.addMessage(userMessage("Tell me a long story."));
    let contentEvents = 0;
    const first = await runRecorded(
      agent,
      {},
      {
        allowFailure: true,
        onEvent: (event) => {
          if (event.type === "TEXT_MESSAGE_CONTENT" && ++contentEvents === 1) agent.abortRun();
        },
      },
    );
    const failure = first.error ?? first.failed[0];
    if (failure) assert.equal(failure.name, "AbortError", `unexpected failure: ${failure.message}`);
    assert.deepEqual(
      first.warnings.filter((w) => w.level === "warn").map((w) => w.text),
      [],
      "no client warnings about the aborted stream",
    );
    assert.equal(first.finished.length, 0, "the aborted run did not finish");
    assert.ok(
      first.of("TEXT_MESSAGE_CONTENT").length < 50,
      "the run was aborted early in the stream",
    );
    // The client closes an aborted run itself with RUN_ERROR{code: "abort"}.
    const last = first.events.at(-1);
    assert.ok(
      last.type === "TEXT_MESSAGE_CONTENT" || (last.type === "RUN_ERROR" && last.code === "abort"),
      `the aborted run ends with the client's abort: ${JSON.stringify(last)}`,
    );
    assert.equal(first.events[0].type, "RUN_STARTED");

    agent.addMessage(userMessage("Never mind; the short version, please."));
    const rec = await runWithBusyRetry(agent, {});
    assertRunFrame(rec, agent);
    assertSuccess(rec);
    const start = rec.of("TEXT_MESSAGE_START")[0];
    assert.equal(textOf(rec, start.messageId), "The short version.");
    const calls = await srv.calls();
    assert.equal(calls.length, 2, "one model call per run");
    const input = calls[1].messages;
    const humans = input.filter((m) => m.type === "human").map((m) => m.content);
    assert.deepEqual(humans, ["Tell me a long story.", "Never mind; the short version, please."]);
    assertValidConversation(input);
  }),
);

describe("refusals (plain fetch)", () => {
  test("no token: 401 JSON with a code", scenario(servers.refusals, async (srv) => {
    const res = await request(srv, { body: runInput(), auth: false });
    assert.equal(res.status, 401);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    assert.equal(typeof res.json?.code, "string", res.text);
    assert.equal(typeof res.json?.message, "string");
    const wrong = await request(srv, {
      body: runInput(),
      auth: false,
      headers: { Authorization: "token not-the-token" },
    });
    assert.equal(wrong.status, 401);
    assert.equal(typeof wrong.json?.code, "string");
  }));

  test("invalid JSON: 400 invalid_json", scenario(servers.refusals, async (srv) => {
    const res = await request(srv, { body: '{"threadId": "t", "messages": [' });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json?.code, "invalid_json");
    assert.equal(typeof res.json?.message, "string");
  }));

  test(
    "missing messages: 422 invalid_input naming the field",
    scenario(servers.refusals, async (srv) => {
      const body = runInput();
      delete body.messages;
      const res = await request(srv, { body });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.json?.code, "invalid_input");
      const errors = res.json?.detail?.errors;
      assert.ok(Array.isArray(errors), res.text);
      assert.ok(
        errors.some((e) => e.path === "messages"),
        `detail.errors names "messages": ${JSON.stringify(errors)}`,
      );
    }),
  );

  test("unknown agent: 404 agent_not_found", scenario(servers.refusals, async (srv) => {
    const res = await request(srv, { path: "/agents/no-such-agent/run", body: runInput() });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.json?.code, "agent_not_found");
  }));

  test(
    "resume[] with nothing pending: 409 no_pending_interrupt",
    scenario(servers.refusals, async (srv) => {
      const res = await request(srv, {
        body: runInput({ resume: [{ interruptId: "nothing-here", status: "resolved" }] }),
      });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.json?.code, "no_pending_interrupt");
    }),
  );

  test(
    "resume[] with an unknown id while a client tool is pending: 409 interrupt_mismatch",
    scenario(servers.refusals, async (srv) => {
      const { agent, call } = await suspendCaptureImage(srv);
      const res = await request(srv, {
        body: runInput({
          threadId: agent.threadId,
          messages: agent.messages,
          tools: [CAPTURE_IMAGE],
          resume: [{ interruptId: "not-a-pending-id", status: "resolved", payload: "x" }],
        }),
      });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.json?.code, "interrupt_mismatch");
      assert.ok(res.text.includes(call.id), "the refusal lists what is pending");
    }),
  );

  test(
    "a second run while the thread's run streams: 409 run_busy with Retry-After",
    scenario(servers.refusals, async (srv) => {
      const body = runInput({ messages: [userMessage("Tell me a long story.")] });
      const controller = new AbortController();
      const streaming = await fetch(srv.runUrl, {
        method: "POST",
        headers: srv.headers({ Accept: "text/event-stream" }),
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      try {
        assert.equal(streaming.status, 200);
        const reader = streaming.body.getReader();
        const decoder = new TextDecoder();
        let text = "";
        while (!text.includes("TEXT_MESSAGE_CONTENT")) {
          const { value, done } = await reader.read();
          assert.ok(!done, `the stream ended early: ${text}`);
          text += decoder.decode(value, { stream: true });
        }
        const res = await request(srv, { body: { ...body, runId: "second-run" } });
        assert.equal(res.status, 409, res.text);
        assert.equal(res.json?.code, "run_busy");
        const retryAfter = res.headers.get("retry-after");
        assert.ok(retryAfter, "a Retry-After header");
        assert.ok(Number(retryAfter) >= 0, `Retry-After is seconds: ${retryAfter}`);
      } finally {
        controller.abort();
      }
    }),
  );
});


describe("approvals: an interrupt answered through resume[]", () => {
  /** Runs until the shell call waits for approval; nothing has run yet. */
  async function suspendShell(srv) {
    const agent = srv.agent();
    agent.addMessage(userMessage("Write the file."));
    const rec = await runRecorded(agent);
    const [finished] = rec.finished;
    assert.equal(finished.outcome, "interrupt");
    const [interrupt] = finished.interrupts;
    assert.equal(interrupt.reason, "confirmation");
    assert.ok(interrupt.toolCallId, "the interrupt names the tool call");
    assert.deepEqual(interrupt.responseSchema.required, ["approved"]);
    assert.equal(agent.pendingInterrupts.length, 1);
    assert.equal(existsSync(path.join(srv.dir, "out.txt")), false, "nothing ran before the answer");
    return { agent, interrupt };
  }

  test(
    "approved: the command runs and the run finishes",
    scenario(servers.approve, async (srv) => {
      const { agent, interrupt } = await suspendShell(srv);
      const rec = await runRecorded(agent, {
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
      });
      assertSuccess(rec);
      assert.equal(readFileSync(path.join(srv.dir, "out.txt"), "utf8").trim(), "approved");
      const [result] = rec.of("TOOL_CALL_RESULT");
      assert.equal(result.toolCallId, interrupt.toolCallId);
    }),
  );

  test(
    "rejected: the command never runs, the model is told, the run finishes",
    scenario(servers.reject, async (srv) => {
      const { agent, interrupt } = await suspendShell(srv);
      const rec = await runRecorded(agent, {
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: false } }],
      });
      assertSuccess(rec);
      assert.equal(existsSync(path.join(srv.dir, "out.txt")), false);
      const [result] = rec.of("TOOL_CALL_RESULT");
      assert.match(result.content, /reject/i);
    }),
  );
});
