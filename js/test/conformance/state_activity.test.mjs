// Shared state and A2UI activity through the official @ag-ui/client HttpAgent (enforce + verify +
// reducer): the Dojo's shared-state scenario (the client sends a recipe in `state`, the agent
// changes it with gth_update_state, the client ends with the new recipe) and a surface shown then
// updated (ACTIVITY_SNAPSHOT, then ACTIVITY_DELTA that the client applies to its activity message).

import assert from "node:assert/strict";
import { after, test } from "node:test";

import { installConsoleCapture, runRecorded, startServer, userMessage } from "./harness.mjs";

delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
installConsoleCapture();

const RECIPE = { recipe: { title: "Leek soup", servings: 2, ingredients: ["leek", "potato"] } };
const S1 =
  '{"surfaceUpdate":{"surfaceId":"s1","components":[{"id":"root","component":{"Text":{"text":{"literalString":"Hi"}}}}]}}\n' +
  '{"beginRendering":{"surfaceId":"s1","root":"root"}}';
const S1_DATA = '{"dataModelUpdate":{"surfaceId":"s1","contents":[]}}';

const servers = [];
after(async () => Promise.all(servers.map((s) => s.stop())));

test("shared state: the client's recipe is changed by the agent and comes back", async () => {
  const srv = await startServer(
    [{ content: "Doubling it.", toolCalls: [{ name: "gth_update_state", args: { state: { recipe: { servings: 4 } } } }] }, "Done: four servings."],
    { name: "state", builtInTools: ["gth_update_state"] },
  );
  servers.push(srv);
  const agent = srv.agent(undefined, { initialState: RECIPE });
  agent.messages.push(userMessage("Make it for four."));
  const rec = await runRecorded(agent);
  const types = rec.types;
  assert.equal(types[1], "STATE_SNAPSHOT");
  assert.deepEqual(rec.of("STATE_SNAPSHOT")[0].snapshot, RECIPE);
  assert.deepEqual(rec.of("STATE_DELTA").map((e) => e.delta), [[{ op: "replace", path: "/recipe/servings", value: 4 }]]);
  const expected = { recipe: { ...RECIPE.recipe, servings: 4 } };
  assert.deepEqual(rec.of("STATE_SNAPSHOT").at(-1).snapshot, expected);
  assert.deepEqual(agent.state, expected);
  // A model call saw the state in its system prompt.
  const calls = await srv.calls();
  assert.match(JSON.stringify(calls[0].messages[0]), /Leek soup/);
});

test("A2UI activity: a surface is an ACTIVITY_SNAPSHOT, its update an ACTIVITY_DELTA", async () => {
  const srv = await startServer(
    [
      { toolCalls: [{ name: "show_a2ui_surface", args: { surfaceJsonl: S1 } }] },
      "Shown.",
      { toolCalls: [{ name: "show_a2ui_surface", args: { surfaceJsonl: S1_DATA } }] },
      "Updated.",
    ],
    { name: "activity", builtInTools: ["show_a2ui_surface"] },
  );
  servers.push(srv);
  const agent = srv.agent();
  agent.messages.push(userMessage("Show a form."));
  const first = await runRecorded(agent);
  const [snap] = first.of("ACTIVITY_SNAPSHOT");
  assert.equal(snap.activityType, "a2ui-surface");
  assert.equal(snap.content.a2ui_operations.length, 2);
  assert.equal(first.of("STATE_SNAPSHOT").length, 0); // no state used: none sent
  agent.messages.push(userMessage("Update it."));
  const second = await runRecorded(agent);
  const [delta] = second.of("ACTIVITY_DELTA");
  assert.equal(delta.messageId, snap.messageId);
  const activity = agent.messages.find((m) => m.role === "activity");
  assert.equal(activity.content.a2ui_operations.length, 3);
  assert.equal(agent.messages.filter((m) => m.role === "activity").length, 1);
  // The thread's history holds the surface once, with every operation.
  const res = await fetch(`${srv.base}/gth/threads/${encodeURIComponent(agent.threadId)}`, { headers: srv.headers() });
  const thread = await res.json();
  const activities = thread.messages.filter((m) => m.role === "activity");
  assert.equal(activities.length, 1);
  assert.equal(activities[0].id, snap.messageId);
  assert.equal(activities[0].content.a2ui_operations.length, 3);
});
