// gth-jupyter serve behind CopilotKit's runtime (@copilotkit/runtime 1.75.0, pinned), whose
// agents are HttpAgents of the @ag-ui/client 0.0.59 it bundles: that client sends no
// protocolVersion and verifies every event with 0.0.59's schemas, so this suite checks the 0.x
// dialect end to end. The scenarios are the AG-UI Dojo's: a chat turn, a server tool
// (get_weather) and the three frontend tools (change_background, generate_haiku,
// generate_task_steps), answered the way the Dojo's frontend answers them.
//
// Each scenario gets its own server (the scripted model's responses are per server). A run goes
// to the runtime's fetch handler (POST /api/copilotkit/agent/default/run, as a CopilotKit
// frontend posts it); the runtime runs its HttpAgent against the server and re-streams the
// events. A stream the bundled client refuses becomes RUN_ERROR or an error the runtime logs:
// both fail the test.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";
delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS;

const { HttpAgent } = await import("@ag-ui/client");
const { CopilotRuntime, createCopilotRuntimeHandler } = await import("@copilotkit/runtime/v2");

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIN =
  process.env.GTH_JUPYTER_BIN || path.resolve(HERE, "..", "..", ".venv", "bin", "gth-jupyter");
const READY = /gth-jupyter AG-UI server on http:\/\/\S+/;
const START_TIMEOUT_MS = 90_000;

// -- what the console says -------------------------------------------------------------------

const captured = [];
for (const level of ["warn", "error"]) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    captured.push(args.map((a) => (a instanceof Error ? a.stack || a.message : String(a))).join(" "));
    original(...args);
  };
}

// -- servers ---------------------------------------------------------------------------------

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const started = [];
after(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

async function startServer(responses, extra = {}) {
  assert.ok(existsSync(BIN), `gth-jupyter not found at ${BIN}; set GTH_JUPYTER_BIN`);
  const dir = await mkdtemp(path.join(os.tmpdir(), "gth-copilotkit-"));
  const recordPath = path.join(dir, "calls.jsonl");
  const configPath = path.join(dir, ".gsloth.config.json");
  const config = {
    llm: { type: "fake", tokenDelayMs: 0, recordPath, responses },
    builtInTools: ["gth_status_update"],
    ...extra,
  };
  await writeFile(configPath, JSON.stringify(config, null, 2));
  const token = randomBytes(18).toString("hex");
  const port = await freePort();
  const env = { ...process.env, PYTHONUNBUFFERED: "1" };
  delete env.GTH_JUPYTER_TOKEN;
  const args = ["serve", "--host", "127.0.0.1", "--port", String(port), `--token=${token}`];
  args.push("--memory", "-c", configPath);
  const child = spawn(BIN, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  const log = [];
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const server = {
    url: `http://127.0.0.1:${port}/agents/default/run`,
    token,
    output: () => log.join(""),
    async calls() {
      if (!existsSync(recordPath)) return [];
      const text = await readFile(recordPath, "utf8");
      return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  started.push(server);
  await new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => reject(new Error(`not ready:\n${log.join("")}`)), START_TIMEOUT_MS);
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      log.push(chunk);
      stdout += chunk;
      if (READY.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr.on("data", (chunk) => log.push(chunk));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before ready:\n${log.join("")}`));
    });
  });
  return server;
}

/** CopilotKit's runtime with one agent, "default": an HttpAgent (0.0.59) for `server`. */
function copilotRuntime(server) {
  const agent = new HttpAgent({ url: server.url, headers: { Authorization: `token ${server.token}` } });
  const runtime = new CopilotRuntime({ agents: { default: agent } });
  return createCopilotRuntimeHandler({ runtime, basePath: "/api/copilotkit", activateChannels: false });
}

/** One run through the runtime, as a CopilotKit frontend posts it; the events it streams back. */
async function runThrough(handler, input) {
  const run = await postRun(handler, input);
  const complaints = captured.filter((line) => /ag-ui|INCOMPLETE_STREAM|Agent execution failed|Error/i.test(line));
  assert.deepEqual(complaints, [], "the runtime or its client complained about the stream");
  assert.ok(!run.types.includes("RUN_ERROR"), `RUN_ERROR: ${JSON.stringify(run.events.at(-1))}`);
  assert.equal(run.types[0], "RUN_STARTED");
  assert.equal(run.types.at(-1), "RUN_FINISHED");
  assert.equal(run.events.at(-1).outcome, undefined, "a 0.x client gets no outcome");
  return run;
}

async function postRun(handler, input) {
  captured.length = 0;
  const body = {
    threadId: input.threadId,
    runId: input.runId ?? `run-${randomUUID()}`,
    messages: input.messages,
    tools: input.tools ?? [],
    context: [],
    state: {},
    forwardedProps: {},
  };
  const response = await handler(
    new Request("http://copilotkit.local/api/copilotkit/agent/default/run", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
    }),
  );
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const events = text
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => JSON.parse(frame.slice(6)));
  const types = events.map((e) => e.type);
  return { events, types, of: (type) => events.filter((e) => e.type === type) };
}

const textOf = (run) => run.of("TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");

/** The assistant messages a frontend keeps from a run's events (text and tool calls). */
function assistantMessages(run) {
  const byId = new Map();
  const message = (id) => {
    if (!byId.has(id)) byId.set(id, { id, role: "assistant", content: "", toolCalls: [] });
    return byId.get(id);
  };
  const calls = new Map();
  for (const e of run.events) {
    if (e.type === "TEXT_MESSAGE_START") message(e.messageId);
    if (e.type === "TEXT_MESSAGE_CONTENT") message(e.messageId).content += e.delta;
    if (e.type === "TOOL_CALL_START") {
      const call = { id: e.toolCallId, type: "function", function: { name: e.toolCallName, arguments: "" } };
      calls.set(e.toolCallId, call);
      message(e.parentMessageId ?? `m-${e.toolCallId}`).toolCalls.push(call);
    }
    if (e.type === "TOOL_CALL_ARGS") calls.get(e.toolCallId).function.arguments += e.delta;
  }
  return [...byId.values()].map((m) => (m.toolCalls.length ? m : { ...m, toolCalls: undefined }));
}

/** The single client tool call a run suspended on (no TOOL_CALL_RESULT for it). */
function suspendedCall(run, name) {
  const starts = run.of("TOOL_CALL_START").filter((e) => e.toolCallName === name);
  assert.equal(starts.length, 1, `one ${name} call`);
  const id = starts[0].toolCallId;
  assert.ok(!run.of("TOOL_CALL_RESULT").some((e) => e.toolCallId === id), "no result for a client tool");
  const args = run.of("TOOL_CALL_ARGS").filter((e) => e.toolCallId === id).map((e) => e.delta).join("");
  const at = run.types.lastIndexOf("TOOL_CALL_END");
  assert.equal(at, run.types.length - 2, "TOOL_CALL_END, then RUN_FINISHED");
  return { id, args: JSON.parse(args) };
}

const user = (content) => ({ id: `u-${randomUUID()}`, role: "user", content });
const toolMessage = (toolCallId, content) => ({
  id: `tool-${randomUUID()}`,
  role: "tool",
  toolCallId,
  content: typeof content === "string" ? content : JSON.stringify(content),
});

/** The messages of the model's last call, by LangChain type. */
async function lastCall(server) {
  const calls = await server.calls();
  assert.ok(calls.length, `the model was never called:\n${server.output()}`);
  return calls.at(-1).messages;
}

// -- the Dojo's tools ------------------------------------------------------------------------

const CHANGE_BACKGROUND = {
  name: "change_background",
  description: "Change the background color of the chat. Accepts any CSS background value.",
  parameters: {
    type: "object",
    properties: { background: { type: "string", description: "The CSS background." } },
    required: ["background"],
  },
};
const GENERATE_HAIKU = {
  name: "generate_haiku",
  description: "Generate a haiku in Japanese and its English translation.",
  parameters: {
    type: "object",
    properties: {
      japanese: { type: "array", items: { type: "string" }, minItems: 3, maxItems: 3 },
      english: { type: "array", items: { type: "string" }, minItems: 3, maxItems: 3 },
      image_name: { type: "string" },
      gradient: { type: "string" },
    },
    required: ["japanese", "english", "image_name", "gradient"],
  },
};
const GENERATE_TASK_STEPS = {
  name: "generate_task_steps",
  description: "Make up 10 steps (only a couple of words per step) to complete a task.",
  parameters: {
    type: "object",
    properties: {
      steps: {
        type: "array",
        items: {
          type: "object",
          properties: {
            description: { type: "string" },
            status: { type: "string", enum: ["enabled", "disabled", "executing"] },
          },
          required: ["description", "status"],
        },
      },
    },
    required: ["steps"],
  },
};

const HAIKU = {
  japanese: ["古池や", "蛙飛び込む", "水の音"],
  english: ["An old silent pond", "A frog jumps into the pond", "Splash! Silence again"],
  image_name: "Mount_Fuji_Lake_Reflection_Cherry_Blossoms_Sakura_Spring.jpg",
  gradient: "linear-gradient(135deg, #667eea 0%, #764ba2 100%)",
};
const STEPS = [
  { description: "Boil water", status: "enabled" },
  { description: "Add pasta", status: "enabled" },
  { description: "Burn sauce", status: "disabled" },
  { description: "Serve", status: "enabled" },
];

// -- scenarios -------------------------------------------------------------------------------

describe("gth-jupyter serve through @copilotkit/runtime 1.75 (@ag-ui/client 0.0.59)", () => {
  test("a chat turn", async () => {
    const server = await startServer(["Hello! How can I help you today?"]);
    const handler = copilotRuntime(server);
    const run = await runThrough(handler, { threadId: `t-${randomUUID()}`, messages: [user("Hi")] });
    assert.equal(textOf(run), "Hello! How can I help you today?");
  });

  test("a server tool: get_weather", async () => {
    const server = await startServer(
      [
        { content: "Let me check.", toolCalls: [{ name: "get_weather", args: { location: "Tokyo" } }] },
        "It is sunny in Tokyo.",
      ],
      {
        customTools: {
          get_weather: {
            description: "Get the weather for a location.",
            command: "echo Sunny, 22C in ${location}",
            parameters: { location: { description: "The city." } },
          },
        },
      },
    );
    const handler = copilotRuntime(server);
    const run = await runThrough(handler, {
      threadId: `t-${randomUUID()}`,
      messages: [user("What is the weather in Tokyo?")],
    });
    const [result] = run.of("TOOL_CALL_RESULT");
    assert.match(result.content, /Sunny, 22C in Tokyo/);
    assert.equal(textOf(run), "Let me check.It is sunny in Tokyo.");
  });

  test("a frontend tool: change_background, answered, then the follow-up turn", async () => {
    const server = await startServer([
      { content: "", toolCalls: [{ name: "change_background", args: { background: "blue" } }] },
      "Done, the background is blue now.",
    ]);
    const handler = copilotRuntime(server);
    const threadId = `t-${randomUUID()}`;
    const history = [user("Change the background to blue")];
    const first = await runThrough(handler, { threadId, messages: history, tools: [CHANGE_BACKGROUND] });
    const call = suspendedCall(first, "change_background");
    assert.deepEqual(call.args, { background: "blue" });
    const answer = { status: "success", message: "Background changed to blue" };
    history.push(...assistantMessages(first), toolMessage(call.id, answer));
    const second = await runThrough(handler, { threadId, messages: history, tools: [CHANGE_BACKGROUND] });
    assert.equal(second.of("TOOL_CALL_RESULT").length, 0, "the client's own result is not echoed");
    assert.equal(textOf(second), "Done, the background is blue now.");
    const seen = (await lastCall(server)).find((m) => m.type === "tool");
    assert.deepEqual(JSON.parse(seen.content), answer);
  });

  test("a frontend tool: generate_haiku, answered with no follow-up turn", async () => {
    const server = await startServer([
      { content: "Here is a haiku.", toolCalls: [{ name: "generate_haiku", args: HAIKU }] },
      "Another one about autumn, then.",
    ]);
    const handler = copilotRuntime(server);
    const threadId = `t-${randomUUID()}`;
    const history = [user("Write me a haiku")];
    const first = await runThrough(handler, { threadId, messages: history, tools: [GENERATE_HAIKU] });
    const call = suspendedCall(first, "generate_haiku");
    assert.deepEqual(call.args, HAIKU);
    assert.equal((await server.calls()).length, 1);
    // The Dojo's handler returns "Haiku generated!" and asks for no follow-up run; the answer
    // travels with the user's next message.
    history.push(...assistantMessages(first), toolMessage(call.id, "Haiku generated!"));
    history.push(user("Now one about autumn"));
    const next = await runThrough(handler, { threadId, messages: history, tools: [GENERATE_HAIKU] });
    assert.equal(textOf(next), "Another one about autumn, then.");
    const messages = await lastCall(server);
    const tool = messages.find((m) => m.type === "tool");
    assert.equal(tool.content, "Haiku generated!");
    assert.equal(messages.at(-1).type, "human");
    assert.equal(messages.at(-1).content, "Now one about autumn");
  });

  test("a frontend tool: generate_task_steps, the enabled steps accepted", async () => {
    const server = await startServer([
      { content: "", toolCalls: [{ name: "generate_task_steps", args: { steps: STEPS } }] },
      "Great, I will boil water, add pasta and serve.",
    ]);
    const handler = copilotRuntime(server);
    const threadId = `t-${randomUUID()}`;
    const history = [user("Plan making pasta")];
    const first = await runThrough(handler, { threadId, messages: history, tools: [GENERATE_TASK_STEPS] });
    const call = suspendedCall(first, "generate_task_steps");
    assert.deepEqual(call.args, { steps: STEPS });
    const answer = { accepted: true, steps: STEPS.filter((s) => s.status === "enabled") };
    history.push(...assistantMessages(first), toolMessage(call.id, answer));
    const second = await runThrough(handler, { threadId, messages: history, tools: [GENERATE_TASK_STEPS] });
    assert.equal(textOf(second), "Great, I will boil water, add pasta and serve.");
    const seen = (await lastCall(server)).find((m) => m.type === "tool");
    assert.deepEqual(JSON.parse(seen.content), answer);
  });

  test("control: the same frontend tool with the 1.0 dialect forced is refused by 0.0.59", async () => {
    const server = await startServer(
      [{ content: "", toolCalls: [{ name: "change_background", args: { background: "blue" } }] }],
      { agui: { protocol: "1.0" } },
    );
    const handler = copilotRuntime(server);
    const run = await postRun(handler, {
      threadId: `t-${randomUUID()}`,
      messages: [user("Change the background to blue")],
      tools: [CHANGE_BACKGROUND],
    });
    const refused = run.types.includes("RUN_ERROR") || captured.some((l) => /pendingToolCallIds|INCOMPLETE_STREAM/.test(l));
    assert.ok(refused, `expected 0.0.59 to refuse pendingToolCallIds: ${JSON.stringify(run.events.at(-1))}`);
  });
});
