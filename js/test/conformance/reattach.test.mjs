// Re-attaching to a run, through the official @ag-ui/client: a client whose connection dropped
// posts the same runId again and gets the whole run replayed and then followed live, and the
// client's full pipeline (enforce -> verify -> reducer) accepts it as one clean run.

import assert from "node:assert/strict";
import { after, test } from "node:test";

import { installConsoleCapture, runRecorded, startServer, userMessage } from "./harness.mjs";

delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
installConsoleCapture();

const LONG_TEXT = Array.from({ length: 120 }, (_, i) => `word${i}`).join(" ");
const servers = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

/** Posts a detached run and drops the connection after `frames` SSE frames. */
async function startAndDrop(server, input, frames) {
  const controller = new AbortController();
  const response = await fetch(server.runUrl, {
    method: "POST",
    headers: server.headers({ Accept: "text/event-stream" }),
    body: JSON.stringify(input),
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (text.split("\n\n").length <= frames) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  await reader.cancel().catch(() => {});
  return text;
}

test("a client that lost its stream re-attaches by posting the same runId", async () => {
  const server = await startServer([{ content: LONG_TEXT, delayMs: 10 }], { name: "reattach" });
  servers.push(server);
  const threadId = "thread-reattach";
  const runId = "run-reattach";
  const message = userMessage("tell me a long story");
  const input = {
    threadId,
    runId,
    protocolVersion: "1.0",
    messages: [message],
    tools: [],
    context: [],
    state: {},
    forwardedProps: { detach: true },
  };
  const partial = await startAndDrop(server, input, 4);
  assert.match(partial, /^id: 1\ndata: /);

  // The same run, through HttpAgent: replayed from its first event and followed to its end.
  const agent = server.agent(threadId, { initialMessages: [message] });
  const rec = await runRecorded(agent, { runId, forwardedProps: { detach: true } });
  assert.equal(rec.types[0], "RUN_STARTED");
  assert.equal(rec.types.at(-1), "RUN_FINISHED");
  assert.equal(rec.finished[0].outcome?.type ?? "success", "success");
  const text = rec.of("TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
  assert.equal(text, LONG_TEXT);
  const last = agent.messages.at(-1);
  assert.equal(last.role, "assistant");
  assert.equal(last.content, LONG_TEXT);
  // The model ran once: the re-attach did not start the run again.
  assert.equal((await server.calls()).length, 1);
});
