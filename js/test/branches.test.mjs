// A `%gth <prompt>` cell that runs again replaces its earlier turn (issue 18): the widget sends
// its cell id with its turn (forwardedProps.gth.cellId; the server branches from just before
// the cell's earlier turn and says so with RUN_STARTED.parentRunId), says in a muted line that
// it replaced the earlier turn, and a cell whose turn the thread left behind says it is from an
// earlier run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { forwardedProps } from "../src/chat/run.js";
import { threadOf } from "../src/interrupts.js";
import { mount } from "../src/app/mount.js";
import { EARLIER_RUN_TEXT, REPLACED_TEXT } from "../src/transcript.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { until } from "../test-support/mount.mjs";
import { sse, started, finished, text } from "../test-support/sse.mjs";

test("the cell id goes with a cell's own turn only", () => {
  assert.deepEqual(forwardedProps({ turnId: "turn-1", kernelId: "", detach: false, cellId: "c-1" }), { gth: { turnId: "turn-1", cellId: "c-1" } });
  // `%gth` alone (no turn of its own): typed turns continue the conversation, never replace.
  assert.equal(forwardedProps({ turnId: "", kernelId: "", detach: false, cellId: "c-1" }), undefined);
});

test("a thread view says whether it is on the current branch (old servers: it is)", () => {
  assert.equal(threadOf({ messages: [], currentBranch: false }).currentBranch, false);
  assert.equal(threadOf({ messages: [] }).currentBranch, true);
});

/** A prompt widget whose server answers with `view` and runs that start from `parentRunId`. */
function widget(view, parentRunId, turnId = "turn-2") {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({
    thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", pending_prompt: "",
    client_tools: [], turn_id: turnId, cell_id: "cell-b",
  });
  const bodies = [];
  const fetch = async (url, init = {}) => {
    if (url === "/base/gth/health") return Response.json({ status: "ok" });
    if (url.startsWith("/base/gth/threads/t1")) return Response.json({ threadId: "t1", ...view });
    if (url === "/base/gth/agents/default/run") {
      const body = JSON.parse(init.body);
      bodies.push(body);
      const start = { ...started(body), ...(parentRunId ? { parentRunId } : {}) };
      return new Response(sse([start, ...text("m1", "hi"), finished(body)]), { headers: { "Content-Type": "text/event-stream" } });
    }
    return new Response("not found", { status: 404 });
  };
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  return { el, model, bodies, cleanup };
}

const notes = (el) => [...el.querySelectorAll(".gth-note-muted")].map((n) => n.textContent);

test("a re-run cell sends its cell id and says it replaced its earlier turn", async () => {
  const { el, model, bodies, cleanup } = widget({ messages: [], turns: [] }, "run-1");
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  model.set("pending_prompt", "again?");
  await until(() => el.querySelector("[data-message-id=m1]"), "answer");
  assert.equal(bodies[0].forwardedProps.gth.cellId, "cell-b");
  assert.equal(bodies[0].forwardedProps.gth.turnId, "turn-2");
  assert.deepEqual(notes(el), [REPLACED_TEXT]);
  cleanup();
});

test("a first run says nothing of a replaced turn", async () => {
  const { el, model, cleanup } = widget({ messages: [], turns: [] }, undefined, "turn-3");
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  model.set("pending_prompt", "first?");
  await until(() => el.querySelector("[data-message-id=m1]"), "answer");
  assert.deepEqual(notes(el), []);
  cleanup();
});

test("a turn the thread left behind is shown with a muted 'from an earlier run' line", async () => {
  const view = {
    messages: [{ id: "u", role: "user", content: "third?" }, { id: "a", role: "assistant", content: "Third answer." }],
    turns: [{ turnId: "turn-2", done: true, cellId: "cell-b" }],
    currentBranch: false,
  };
  const { el, bodies, cleanup } = widget(view, undefined);
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  await until(() => notes(el).length, "the earlier-run line");
  assert.deepEqual(notes(el), [EARLIER_RUN_TEXT]);
  assert.ok(el.textContent.includes("Third answer."));
  assert.equal(bodies.length, 0, "a turn already on the thread is not sent again");
  cleanup();
});
