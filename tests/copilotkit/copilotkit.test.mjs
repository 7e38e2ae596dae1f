// gth-jupyter serve behind CopilotKit's runtime (@copilotkit/runtime 1.75.0, pinned), whose
// agents are HttpAgents of the @ag-ui/client 0.0.59 it bundles: that client sends no
// protocolVersion and verifies every event with 0.0.59's schemas, so this suite checks the 0.x
// dialect end to end. The scenarios are the AG-UI Dojo's: a chat turn, a server tool
// (get_weather) and the three frontend tools (change_background, generate_haiku,
// generate_task_steps), answered the way the Dojo's frontend answers them; shared state (the
// recipe the agent edits with gth_update_state, remembered by the thread), agentic generative UI
// (steps the agent marks completed one STATE_DELTA at a time), reasoning and an image input.
//
// Each scenario gets its own server (the scripted model's responses are per server). A run goes
// to the runtime's fetch handler (POST /api/copilotkit/agent/default/run, as a CopilotKit
// frontend posts it); the runtime runs its HttpAgent against the server and re-streams the
// events. A stream the bundled client refuses becomes RUN_ERROR or an error the runtime logs:
// both fail the test. The state, reasoning and image scenarios run as a CopilotKit frontend
// does: a ProxiedCopilotRuntimeAgent (@copilotkit/core 1.75.0, the runtime's own dependency; an
// HttpAgent of 0.0.59 too) posts to the runtime's handler, verifies the re-streamed events a second
// time and applies them, so its `state` and `messages` are what the page would show.

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
const { ProxiedCopilotRuntimeAgent } = await import("@copilotkit/core");

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

const RUNTIME_URL = "http://copilotkit.local/api/copilotkit";

/**
 * The agent a CopilotKit frontend holds for "default": a ProxiedCopilotRuntimeAgent posting to
 * the runtime's handler (REST transport, SSE mode, so it asks for no /info first).
 */
function frontendAgent(handler, { threadId = `t-${randomUUID()}`, initialState } = {}) {
  return new ProxiedCopilotRuntimeAgent({
    runtimeUrl: RUNTIME_URL,
    agentId: "default",
    transport: "rest",
    runtimeMode: "sse",
    threadId,
    initialState,
    fetch: (url, init) => handler(new Request(url, init)),
  });
}

/**
 * One run of a frontend agent: the events it applied, and the state after each state event
 * (`states`). Fails on RUN_ERROR, onRunFailed, a rejected runAgent or any console warning or
 * error (either 0.0.59 client, the runtime's or the frontend's, refusing the stream).
 */
async function runFrontend(agent, params = {}) {
  captured.length = 0;
  const rec = { events: [], states: [], failed: [] };
  const subscriber = {
    onEvent: ({ event }) => {
      rec.events.push(structuredClone(event));
    },
    onStateChanged: ({ state }) => {
      rec.states.push(structuredClone(state));
    },
    onRunFailed: ({ error }) => {
      rec.failed.push(error);
    },
  };
  await agent.runAgent(params, subscriber);
  rec.types = rec.events.map((e) => e.type);
  rec.of = (type) => rec.events.filter((e) => e.type === type);
  assert.deepEqual(captured, [], "a client or the runtime logged a warning or an error");
  assert.deepEqual(rec.failed.map(String), [], "onRunFailed");
  assert.ok(!rec.types.includes("RUN_ERROR"), `RUN_ERROR: ${JSON.stringify(rec.of("RUN_ERROR"))}`);
  assert.equal(rec.types[0], "RUN_STARTED");
  assert.equal(rec.types.at(-1), "RUN_FINISHED");
  assert.equal(rec.events.at(-1).outcome, undefined, "a 0.x client gets no outcome");
  return rec;
}

/** `state` with each of `patch`'s JSON Patch operations applied (add, replace, remove). */
function applyPatch(state, patch) {
  const doc = structuredClone(state);
  for (const op of patch) {
    const keys = op.path.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = keys.pop();
    let parent = doc;
    for (const key of keys) parent = parent[key];
    if (op.op === "remove") {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    } else if (op.op === "add" && Array.isArray(parent)) {
      parent.splice(last === "-" ? parent.length : Number(last), 0, op.value);
    } else if (op.op === "add" || op.op === "replace") {
      parent[last] = op.value;
    } else {
      assert.fail(`unexpected JSON Patch operation ${JSON.stringify(op)}`);
    }
  }
  return doc;
}

/** The state a client builds from a run's STATE_SNAPSHOT/STATE_DELTA events, from `initial`. */
function stateFromEvents(run, initial = {}) {
  let state = structuredClone(initial);
  for (const e of run.events) {
    if (e.type === "STATE_SNAPSHOT") state = structuredClone(e.snapshot);
    if (e.type === "STATE_DELTA") state = applyPatch(state, e.delta);
  }
  return state;
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

// The Dojo's shared_state recipe, and what the agent changes: a new title and an ingredient
// (arrays are replaced whole under JSON Merge Patch, so the tool sends the full list).
const RECIPE = {
  recipe: {
    title: "Pancakes",
    skill_level: "Beginner",
    ingredients: [{ icon: "🥚", name: "Eggs", amount: "2" }],
    instructions: ["Mix"],
  },
};
const RECIPE_UPDATE = {
  recipe: {
    title: "Fluffy pancakes",
    ingredients: [...RECIPE.recipe.ingredients, { icon: "🥛", name: "Milk", amount: "1 cup" }],
  },
};
const RECIPE_AFTER = { recipe: { ...RECIPE.recipe, ...RECIPE_UPDATE.recipe } };

// The Dojo's agentic_generative_ui: steps set pending, then completed one by one.
const STEP_NAMES = ["Preheat the pan", "Whisk the batter", "Flip the pancakes"];
const stepsDone = (done) => ({
  steps: STEP_NAMES.map((description, i) => ({ description, status: i < done ? "completed" : "pending" })),
});
const updateState = (state) => ({ name: "gth_update_state", args: { state } });

// A 1x1 PNG.
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

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

  test("shared state: the agent edits the client's recipe; a later run without state keeps it", async () => {
    const server = await startServer(
      [
        { content: "Adding milk.", toolCalls: [updateState(RECIPE_UPDATE)] },
        "Added milk and renamed it.",
        "We are making fluffy pancakes.",
      ],
      { builtInTools: ["gth_update_state"] },
    );
    const handler = copilotRuntime(server);
    const threadId = `t-${randomUUID()}`;
    const page = frontendAgent(handler, { threadId, initialState: RECIPE });
    page.addMessage(user("Add milk and give it a better name"));
    const run = await runFrontend(page);
    assert.equal(run.types[1], "STATE_SNAPSHOT", "the state follows RUN_STARTED");
    assert.deepEqual(run.of("STATE_SNAPSHOT")[0].snapshot, RECIPE);
    const deltas = run.of("STATE_DELTA");
    assert.equal(deltas.length, 1, "one STATE_DELTA for the one change");
    assert.deepEqual(applyPatch(RECIPE, deltas[0].delta), RECIPE_AFTER);
    const [result] = run.of("TOOL_CALL_RESULT");
    assert.ok(run.events.indexOf(result) < run.events.indexOf(deltas[0]), "the delta follows the result");
    assert.deepEqual(run.of("STATE_SNAPSHOT").at(-1).snapshot, RECIPE_AFTER);
    assert.deepEqual(stateFromEvents(run), RECIPE_AFTER);
    assert.deepEqual(page.state, RECIPE_AFTER, "the page's agent holds the merged recipe");
    assert.equal(textOf(run), "Adding milk.Added milk and renamed it.");

    // A reloaded page: the same thread, no state and only the new message.
    const reloaded = frontendAgent(handler, { threadId });
    reloaded.addMessage(user("What are we making?"));
    const next = await runFrontend(reloaded);
    assert.equal(next.types[1], "STATE_SNAPSHOT");
    assert.deepEqual(next.of("STATE_SNAPSHOT")[0].snapshot, RECIPE_AFTER, "the thread remembered it");
    assert.equal(next.of("STATE_DELTA").length, 0);
    assert.deepEqual(reloaded.state, RECIPE_AFTER);
    assert.equal(textOf(next), "We are making fluffy pancakes.");
    const prompt = JSON.stringify(await lastCall(server));
    assert.match(prompt, /Fluffy pancakes/, "the model saw the remembered state");
    assert.match(prompt, /Milk/);
  });

  test("agentic generative UI: steps set, then completed one STATE_DELTA at a time", async () => {
    const server = await startServer(
      [
        { content: "Here is the plan.", toolCalls: [updateState(stepsDone(0))] },
        ...STEP_NAMES.map((_, i) => ({ content: "", toolCalls: [updateState(stepsDone(i + 1))] })),
        "All steps are done.",
      ],
      { builtInTools: ["gth_update_state"] },
    );
    const handler = copilotRuntime(server);
    const page = frontendAgent(handler);
    page.addMessage(user("Make pancakes, step by step"));
    const run = await runFrontend(page);
    const deltas = run.of("STATE_DELTA");
    assert.equal(deltas.length, STEP_NAMES.length + 1, "a STATE_DELTA per change");
    // Each delta takes the state one stage further (the server may patch the whole array).
    let state = {};
    deltas.forEach((delta, i) => {
      state = applyPatch(state, delta.delta);
      assert.deepEqual(state, stepsDone(i), `after STATE_DELTA ${i}`);
    });
    // Each change streams right after its tool call's result.
    const results = run.of("TOOL_CALL_RESULT");
    assert.equal(results.length, deltas.length);
    results.forEach((r, i) => {
      assert.equal(run.events.indexOf(r) + 1, run.events.indexOf(deltas[i]), `delta ${i} after result ${i}`);
    });
    // The page saw every stage, in order, and ends with every step completed.
    const stages = [];
    for (const state of run.states) {
      const done = state.steps?.filter((st) => st.status === "completed").length;
      if (done !== undefined && stages.at(-1) !== done) stages.push(done);
    }
    assert.deepEqual(stages, [0, 1, 2, 3]);
    assert.deepEqual(page.state, stepsDone(STEP_NAMES.length));
    assert.deepEqual(stateFromEvents(run), stepsDone(STEP_NAMES.length));
    assert.equal(textOf(run), "Here is the plan.All steps are done.");
  });

  test("reasoning: REASONING_* events, then the text; the next turn carries the history", async () => {
    const server = await startServer([
      { reasoning: "The user greets me. A short greeting will do.", content: "Hello there!" },
      "Still here.",
    ]);
    const handler = copilotRuntime(server);
    const page = frontendAgent(handler);
    page.addMessage(user("Hi"));
    const run = await runFrontend(page);
    const reasoningTypes = run.types.filter((t) => t.startsWith("REASONING_"));
    assert.deepEqual(
      [...new Set(reasoningTypes)],
      ["REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_END"],
    );
    const reasoning = run.of("REASONING_MESSAGE_CONTENT").map((e) => e.delta).join("");
    assert.equal(reasoning, "The user greets me. A short greeting will do.");
    assert.ok(run.types.lastIndexOf("REASONING_END") < run.types.indexOf("TEXT_MESSAGE_START"));
    assert.equal(textOf(run), "Hello there!");
    assert.equal(page.messages.filter((m) => m.role === "assistant").at(-1).content, "Hello there!");

    page.addMessage(user("Are you there?"));
    const next = await runFrontend(page);
    assert.equal(textOf(next), "Still here.");
    const seen = (await lastCall(server)).map((m) => [m.type, m.content]);
    assert.deepEqual(seen.filter(([type]) => type !== "system").at(-1), ["human", "Are you there?"]);
  });

  test("an image input: a user message with an image part reaches the model", async () => {
    const server = await startServer(["A single pixel."]);
    const handler = copilotRuntime(server);
    const page = frontendAgent(handler);
    page.addMessage({
      id: `u-${randomUUID()}`,
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image", source: { type: "data", value: PNG_BASE64, mimeType: "image/png" } },
      ],
    });
    const run = await runFrontend(page);
    assert.equal(textOf(run), "A single pixel.");
    const human = (await lastCall(server)).find((m) => m.type === "human");
    assert.deepEqual(human.content, [
      { type: "text", text: "What is in this picture?" },
      { type: "image", base64: PNG_BASE64, mime_type: "image/png" },
    ]);
  });

  // 0.0.59's schema (and the 0.x SDKs before it) accept `{type: "binary", mimeType, data}`, which
  // 1.0 has no part for: the server turns it into an image part before validating (as 0.0.59's
  // own BackwardCompatibility_0_0_47 middleware does).
  test("an image input as a 0.x binary part (what 0.0.x clients send)", async () => {
    const server = await startServer(["A single pixel."]);
    const handler = copilotRuntime(server);
    const page = frontendAgent(handler);
    page.addMessage({
      id: `u-${randomUUID()}`,
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "binary", mimeType: "image/png", data: PNG_BASE64 },
      ],
    });
    const run = await runFrontend(page);
    assert.equal(textOf(run), "A single pixel.");
    const human = (await lastCall(server)).find((m) => m.type === "human");
    assert.deepEqual(human.content, [
      { type: "text", text: "What is in this picture?" },
      { type: "image", base64: PNG_BASE64, mime_type: "image/png" },
    ]);
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
