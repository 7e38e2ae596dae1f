// What each turn cost (issue 19): the widget ends every turn with one quiet line built from
// RUN_FINISHED.usage / RUN_ERROR.usage and metadata.gth.cost, sums a turn's runs into it, shows
// the conversation's total in the header, and after a reload draws the same from the thread
// view's turns[].usage and usage.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mount } from "../src/app/mount.js";
import { Tally, usageText, usdText } from "../src/view/usage.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { until } from "../test-support/mount.mjs";
import { sse, started, finished, text } from "../test-support/sse.mjs";

const USAGE = [{ provider: "anthropic", model: "claude-x", inputTokens: 1204, outputTokens: 356, cachedInputTokens: 812 }];

test("the line reads as the saved copy writes it", () => {
  assert.equal(usageText(USAGE, { usd: 0.0041, source: "genai-prices" }), "1,204 in · 356 out · 812 cached · $0.0041");
  assert.equal(usageText(USAGE, { usd: null, source: "unknown" }), "1,204 in · 356 out · 812 cached · cost unknown");
  assert.equal(usageText(USAGE, null), "1,204 in · 356 out · 812 cached"); // a server without prices
  assert.equal(usageText([], null), "");
  assert.deepEqual([usdText(0), usdText(0.127), usdText(1234.5)], ["$0.00", "$0.127", "$1,234.50"]);
});

test("a tally adds runs per model, and one unknown price makes the sum unknown", () => {
  const tally = new Tally();
  tally.add(USAGE, { usd: 0.004, source: "genai-prices" });
  tally.add(USAGE, { usd: 0.001, source: "genai-prices" });
  assert.equal(tally.text(), "2,408 in · 712 out · 1,624 cached · $0.0050");
  tally.add([{ provider: "openai", model: "local", inputTokens: 10, outputTokens: 1 }], { usd: null, source: "unknown" });
  assert.equal(tally.usage.length, 2);
  assert.equal(tally.text(), "2,418 in · 713 out · 1,624 cached · cost unknown");
});

/**
 * A prompt widget over HTTP whose runs report `usages` in turn, whose thread is `view`, and
 * whose context route answers `calls` (each URL it is asked for goes into the returned `asked`).
 */
function widget(view, usages, { thread = "t1", turn = "turn-1", calls = [] } = {}) {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({
    thread_id: thread, agent: "default", transport: "auto", base_url: "/base/", pending_prompt: "",
    client_tools: [], turn_id: turn, cell_id: "cell-a",
  });
  const asked = [];
  let runs = 0;
  const fetch = async (url, init = {}) => {
    if (url === "/base/gth/health") return Response.json({ status: "ok" });
    if (url.startsWith(`/base/gth/threads/${thread}/context`)) {
      asked.push(url);
      return Response.json({ threadId: thread, calls });
    }
    if (url.startsWith(`/base/gth/threads/${thread}`)) return Response.json({ threadId: thread, ...view });
    if (url === "/base/gth/agents/default/run") {
      const body = JSON.parse(init.body);
      const { usage, cost } = usages[runs++];
      const end = { ...finished(body), usage, metadata: { gth: { cost } } };
      return new Response(sse([started(body), ...text(`m${runs}`, "hi"), end]), { headers: { "Content-Type": "text/event-stream" } });
    }
    return new Response("not found", { status: 404 });
  };
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  return { el, model, asked, cleanup };
}

const lines = (el) => [...el.querySelectorAll(".gth-usage")].map((n) => n.textContent);

test("each turn ends with its line and the header shows the total", async () => {
  const view = { messages: [], turns: [], usage: [{ inputTokens: 100, outputTokens: 10 }], cost: { usd: 0.001, source: "config" } };
  const { el, model, cleanup } = widget(view, [
    { usage: USAGE, cost: { usd: 0.0041, source: "genai-prices" } },
    { usage: [{ ...USAGE[0], cachedInputTokens: 0 }], cost: { usd: 0.002, source: "genai-prices" } },
  ]);
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  const total = el.querySelector(".gth-usage-total");
  assert.equal(total.textContent, "Σ 100 in · 10 out · $0.0010"); // the thread so far
  model.set("pending_prompt", "first?");
  await until(() => lines(el).length === 1, "the first turn's line");
  assert.deepEqual(lines(el), ["1,204 in · 356 out · 812 cached · $0.0041"]);
  // The line ends the turn: after the answer.
  const transcript = el.querySelector(".gth-transcript");
  assert.ok(transcript.lastElementChild.querySelector(".gth-usage"));
  assert.equal(total.textContent, "Σ 1,304 in · 366 out · 812 cached · $0.0051");
  await until(() => el.querySelector(".gth-root").dataset.state === "idle", "idle");
  el.querySelector(".gth-input").value = "second?";
  el.querySelector(".gth-send").dispatchEvent(new (makeDom().window.Event)("click"));
  await until(() => lines(el).length === 2, "the second turn's line");
  assert.equal(lines(el)[1], "1,204 in · 356 out · $0.0020");
  cleanup();
});

test("after a reload each turn shown gets its line back, before the next turn", async () => {
  const view = {
    messages: [
      { id: "u1", role: "user", content: "one" },
      { id: "a1", role: "assistant", content: "One." },
      { id: "u2", role: "user", content: "two" },
      { id: "a2", role: "assistant", content: "Two." },
    ],
    turns: [
      { turnId: "turn-1", messageId: "u1", done: true, usage: USAGE, cost: { usd: 0.0041, source: "genai-prices" } },
      { turnId: null, runId: "r2", messageId: "u2", done: true, usage: [{ inputTokens: 50, outputTokens: 5 }], cost: null },
    ],
    usage: [{ inputTokens: 1254, outputTokens: 361, cachedInputTokens: 812 }],
    cost: { usd: null, source: "unknown" },
  };
  const { el, cleanup } = widget(view, []);
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  await until(() => lines(el).length === 2, "both lines");
  const order = [...el.querySelector(".gth-transcript").children].map((n) => n.dataset.messageId ?? n.querySelector(".gth-usage")?.textContent);
  assert.deepEqual(order, ["u1", "a1", "1,204 in · 356 out · 812 cached · $0.0041", "u2", "a2", "50 in · 5 out"]);
  assert.equal(el.querySelector(".gth-usage-total").textContent, "Σ 1,254 in · 361 out · 812 cached · cost unknown");
  cleanup();
});

test("a turn's Context view loads what each call was sent, as plain text", async () => {
  const view = { messages: [], turns: [], usage: [], cost: null };
  const calls = [
    {
      messageId: "m1", model: "claude-x", usage: { inputTokens: 5120, outputTokens: 12 }, tools: ["read_notebook", "run_python"],
      largest: [{ kind: "read_notebook result", tokens: 3210, share: 0.41 }],
      messages: [
        { role: "system", kind: "system prompt", tokens: 40, chars: 160, content: "Be terse." },
        { role: "tool", kind: "read_notebook result", tokens: 3210, chars: 20000, cut: true, content: "<img src=x onerror=alert(1)>" },
      ],
    },
  ];
  const { el, model, asked, cleanup } = widget(view, [{ usage: USAGE, cost: { usd: 0.01, source: "genai-prices" } }], { thread: "t5", turn: "turn-5", calls });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  model.set("pending_prompt", "what is in my notebook?");
  await until(() => el.querySelector(".gth-usage"), "the cost line");
  await until(() => el.querySelector(".gth-context"), "the Context view");
  const details = el.querySelector(".gth-context");
  assert.equal(details.hasAttribute("open"), false); // folded by default, nothing asked yet
  assert.equal(asked.length, 0);
  details.setAttribute("open", "");
  details.dispatchEvent(new (makeDom().window.Event)("toggle"));
  await until(() => el.querySelector(".gth-context-call"), "the calls");
  // Asked by the run that started the turn.
  const runId = new URL(asked[0], "http://x").searchParams.get("turn");
  assert.ok(runId && runId.length > 8);
  assert.equal(el.querySelector(".gth-context-largest li").textContent, "read_notebook result: 3,210 tokens · 41% of this call");
  assert.equal(el.querySelector(".gth-context-tools").textContent, "Tools offered: read_notebook, run_python");
  const items = [...el.querySelectorAll(".gth-context-item summary")].map((s) => s.textContent);
  assert.deepEqual(items, ["system · system prompt · 40 tokens", "tool · read_notebook result · 3,210 tokens · cut (20,000 characters)"]);
  // The model's input is shown as text, never as markup.
  assert.equal(el.querySelector(".gth-context img"), null);
  assert.ok([...el.querySelectorAll(".gth-context-text")].some((p) => p.textContent === "<img src=x onerror=alert(1)>"));
  cleanup();
});
