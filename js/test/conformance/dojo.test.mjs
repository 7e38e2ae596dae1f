// AG-UI Dojo scenarios through the official @ag-ui/client 1.0 HttpAgent (enforce + verify +
// reducer), where agui_client and state_activity do not cover them: shared_state with the Dojo's
// recipe and a later run that sends no state (the thread remembers it), agentic_generative_ui
// (steps set, then completed one STATE_DELTA at a time), a reasoning response (and the next turn
// with the reasoning message in the history) and an image input part.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, test } from "node:test";

import { installConsoleCapture, runRecorded, startServer, userMessage } from "./harness.mjs";

delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
installConsoleCapture();

const RECIPE = {
  recipe: {
    title: "Pancakes",
    skill_level: "Beginner",
    ingredients: [{ icon: "🥚", name: "Eggs", amount: "2" }],
    instructions: ["Mix"],
  },
};
// Arrays are replaced whole under JSON Merge Patch, so the tool sends the full ingredient list.
const RECIPE_UPDATE = {
  recipe: {
    title: "Fluffy pancakes",
    ingredients: [...RECIPE.recipe.ingredients, { icon: "🥛", name: "Milk", amount: "1 cup" }],
  },
};
const RECIPE_AFTER = { recipe: { ...RECIPE.recipe, ...RECIPE_UPDATE.recipe } };

const STEP_NAMES = ["Preheat the pan", "Whisk the batter", "Flip the pancakes"];
const stepsDone = (done) => ({
  steps: STEP_NAMES.map((description, i) => ({ description, status: i < done ? "completed" : "pending" })),
});
const updateState = (state) => ({ name: "gth_update_state", args: { state } });

// A 1x1 PNG.
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

const servers = [];
after(async () => Promise.all(servers.map((s) => s.stop())));

async function serve(responses, options) {
  const srv = await startServer(responses, options);
  servers.push(srv);
  return srv;
}

/** A clean 1.0 run: the frame, a success outcome, no RUN_ERROR. */
function assertFinished(rec, agent) {
  assert.equal(rec.types[0], "RUN_STARTED");
  assert.equal(rec.events[0].protocolVersion, "1.0");
  assert.equal(rec.types.at(-1), "RUN_FINISHED");
  assert.equal(rec.events[0].threadId, agent.threadId);
  assert.equal(rec.finished.length, 1);
  assert.equal(rec.finished[0].outcome, "success");
  assert.equal(rec.runErrors.length, 0);
}

const textOf = (rec) =>
  rec
    .of("TEXT_MESSAGE_CONTENT")
    .map((e) => e.delta)
    .join("");

/** `state` with JSON Patch `patch` applied (add, replace, remove), independently of the client. */
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

test("shared_state: the Dojo recipe edited by the agent; a run without state keeps it", async () => {
  const srv = await serve(
    [
      { content: "Adding milk.", toolCalls: [updateState(RECIPE_UPDATE)] },
      "Added milk and renamed it.",
      "We are making fluffy pancakes.",
    ],
    { name: "shared-state", builtInTools: ["gth_update_state"] },
  );
  const agent = srv.agent(undefined, { initialState: RECIPE });
  agent.messages.push(userMessage("Add milk and give it a better name"));
  const rec = await runRecorded(agent);
  assertFinished(rec, agent);
  assert.equal(rec.types[1], "STATE_SNAPSHOT");
  assert.deepEqual(rec.of("STATE_SNAPSHOT")[0].snapshot, RECIPE);
  const deltas = rec.of("STATE_DELTA");
  assert.equal(deltas.length, 1);
  assert.deepEqual(applyPatch(RECIPE, deltas[0].delta), RECIPE_AFTER);
  assert.deepEqual(rec.of("STATE_SNAPSHOT").at(-1).snapshot, RECIPE_AFTER);
  assert.deepEqual(agent.state, RECIPE_AFTER);
  assert.equal(textOf(rec), "Adding milk.Added milk and renamed it.");

  // Another client on the same thread, with no state and only its new message.
  const other = srv.agent(agent.threadId);
  other.messages.push(userMessage("What are we making?"));
  const next = await runRecorded(other);
  assertFinished(next, other);
  assert.deepEqual(next.input.state, {});
  assert.equal(next.types[1], "STATE_SNAPSHOT");
  assert.deepEqual(next.of("STATE_SNAPSHOT")[0].snapshot, RECIPE_AFTER, "the thread remembered it");
  assert.equal(next.of("STATE_DELTA").length, 0);
  assert.deepEqual(other.state, RECIPE_AFTER);
  assert.equal(textOf(next), "We are making fluffy pancakes.");
  const prompt = JSON.stringify((await srv.lastCall()).messages);
  assert.match(prompt, /Fluffy pancakes/);
  assert.match(prompt, /Milk/);
});

test("agentic_generative_ui: steps set, then completed one STATE_DELTA at a time", async () => {
  const srv = await serve(
    [
      { content: "Here is the plan.", toolCalls: [updateState(stepsDone(0))] },
      ...STEP_NAMES.map((_, i) => ({ toolCalls: [updateState(stepsDone(i + 1))] })),
      "All steps are done.",
    ],
    { name: "generative-ui", builtInTools: ["gth_update_state"] },
  );
  const agent = srv.agent();
  agent.messages.push(userMessage("Make pancakes, step by step"));
  const seen = [];
  const rec = await runRecorded(agent, {}, {
    onEvent: (event) => {
      if (event.type === "STATE_DELTA") seen.push(event);
    },
  });
  assertFinished(rec, agent);
  const deltas = rec.of("STATE_DELTA");
  assert.equal(deltas.length, STEP_NAMES.length + 1, "a STATE_DELTA per change");
  let state = {};
  deltas.forEach((delta, i) => {
    state = applyPatch(state, delta.delta);
    assert.deepEqual(state, stepsDone(i), `after STATE_DELTA ${i}`);
  });
  const results = rec.of("TOOL_CALL_RESULT");
  assert.equal(results.length, deltas.length);
  results.forEach((r, i) => {
    assert.equal(rec.events.indexOf(r) + 1, rec.events.indexOf(deltas[i]), `delta ${i} after result ${i}`);
  });
  assert.equal(seen.length, deltas.length);
  assert.deepEqual(agent.state, stepsDone(STEP_NAMES.length));
  assert.deepEqual(rec.of("STATE_SNAPSHOT").at(-1).snapshot, stepsDone(STEP_NAMES.length));
  assert.equal(textOf(rec), "Here is the plan.All steps are done.");
});

test("reasoning: REASONING_* events and the text; the next turn carries the reasoning message", async () => {
  const srv = await serve(
    [{ reasoning: "The user greets me. A short greeting will do.", content: "Hello there!" }, "Still here."],
    { name: "reasoning" },
  );
  const agent = srv.agent();
  agent.messages.push(userMessage("Hi"));
  const rec = await runRecorded(agent);
  assertFinished(rec, agent);
  assert.deepEqual(
    [...new Set(rec.types.filter((t) => t.startsWith("REASONING_")))],
    ["REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_END"],
  );
  const reasoning = rec
    .of("REASONING_MESSAGE_CONTENT")
    .map((e) => e.delta)
    .join("");
  assert.equal(reasoning, "The user greets me. A short greeting will do.");
  assert.ok(rec.types.lastIndexOf("REASONING_END") < rec.types.indexOf("TEXT_MESSAGE_START"));
  assert.equal(textOf(rec), "Hello there!");
  assert.deepEqual(
    agent.messages.map((m) => m.role),
    ["user", "reasoning", "assistant"],
  );
  assert.equal(agent.messages[1].content, "The user greets me. A short greeting will do.");
  assert.equal(agent.messages[2].content, "Hello there!");

  agent.messages.push(userMessage("Are you there?"));
  const next = await runRecorded(agent);
  assertFinished(next, agent);
  assert.ok(next.input.messages.some((m) => m.role === "reasoning"), "the client sent the reasoning back");
  assert.equal(textOf(next), "Still here.");
  // The reasoning message the client sends back is not a model message; the thread's own copy of
  // the answer may keep its reasoning as a content block.
  const textContent = (content) =>
    typeof content === "string"
      ? content
      : content
          .filter((b) => b.type === "text")
          .map((b) => b.text)
          .join("");
  const messages = (await srv.lastCall()).messages.filter((m) => m.type !== "system");
  assert.deepEqual(
    messages.map((m) => [m.type, textContent(m.content)]),
    [
      ["human", "Hi"],
      ["ai", "Hello there!"],
      ["human", "Are you there?"],
    ],
  );
});

test("an image input: a user message with an image part reaches the model", async () => {
  const srv = await serve(["A single pixel."], { name: "image" });
  const agent = srv.agent();
  agent.messages.push({
    id: `user-${randomUUID()}`,
    role: "user",
    content: [
      { type: "text", text: "What is in this picture?" },
      { type: "image", source: { type: "data", value: PNG_BASE64, mimeType: "image/png" } },
    ],
  });
  const rec = await runRecorded(agent);
  assertFinished(rec, agent);
  assert.equal(textOf(rec), "A single pixel.");
  const human = (await srv.lastCall()).messages.find((m) => m.type === "human");
  assert.deepEqual(human.content, [
    { type: "text", text: "What is in this picture?" },
    { type: "image", base64: PNG_BASE64, mime_type: "image/png" },
  ]);
});
