import { test } from "node:test";
import assert from "node:assert/strict";
import { SequenceModel, labelOf } from "../src/view/sequence.js";
import { SequenceDiagram } from "../src/view/sequencesvg.js";
import { EventLog } from "../src/view/eventlog.js";
import { FrameScheduler } from "../src/view/frame.js";
import { makeDom, click } from "../test-support/dom.mjs";

const agui = (event) => ({ type: "agui", event });

/** The chat events of one client-tool cycle, as chat/controller.js emits them. */
function clientToolCycle({ deltas = 5, withRequests = true } = {}) {
  const req = withRequests ? [{ type: "request" }] : [];
  return [
    { type: "user", message: { id: "u1", role: "user", content: "take a photo" } },
    ...req,
    agui({ type: "RUN_STARTED", threadId: "t", runId: "r1" }),
    agui({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" }),
    ...Array.from({ length: deltas }, () => agui({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "x " })),
    agui({ type: "TEXT_MESSAGE_END", messageId: "m1" }),
    agui({ type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "capture_image" }),
    agui({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "{" }),
    agui({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "}" }),
    agui({ type: "TOOL_CALL_END", toolCallId: "c1" }),
    agui({ type: "RUN_FINISHED", threadId: "t", runId: "r1", outcome: { type: "success", pendingToolCallIds: ["c1"] } }),
    { type: "tool-run", toolCallId: "c1", name: "capture_image", status: "running" },
    { type: "tool-run", toolCallId: "c1", name: "capture_image", status: "done", content: "{}" },
    ...req,
    agui({ type: "RUN_STARTED", threadId: "t", runId: "r2" }),
    agui({ type: "TEXT_MESSAGE_START", messageId: "m2", role: "assistant" }),
    agui({ type: "TEXT_MESSAGE_CONTENT", messageId: "m2", delta: "nice" }),
    agui({ type: "TEXT_MESSAGE_END", messageId: "m2" }),
    agui({ type: "RUN_FINISHED", threadId: "t", runId: "r2" }),
  ];
}

function modelOf(events) {
  const m = new SequenceModel();
  for (const e of events) m.handle(e);
  return m;
}

const summary = (m) => m.arrows.map((a) => `${a.kind} ${a.from}>${a.to} ${labelOf(a)}`);

test("a client-tool cycle: request, events, suspend, fulfil, resume, in that order", () => {
  assert.deepEqual(summary(modelOf(clientToolCycle())), [
    "note page>page user message take a photo",
    "request page>server POST run",
    "event server>page RUN_STARTED run 1",
    "graph server>graph start the graph",
    "event graph>page TEXT_MESSAGE: START · CONTENT ×5 · END",
    "event graph>page TOOL_CALL capture_image: START · ARGS ×2 · END",
    "graph graph>server graph suspends (client tool)",
    "suspend server>page RUN_FINISHED pending: capture_image",
    "fulfil page>page fulfil capture_image done ✓",
    "request page>server POST run · resume: tool results",
    "event server>page RUN_STARTED run 2",
    "graph server>graph resume the graph",
    "event graph>page TEXT_MESSAGE: START · CONTENT · END",
    "graph graph>server graph ends",
    "finish server>page RUN_FINISHED success",
  ]);
});

test("without request events (an older controller) the POSTs are drawn at RUN_STARTED", () => {
  const withRequests = summary(modelOf(clientToolCycle()));
  assert.deepEqual(summary(modelOf(clientToolCycle({ withRequests: false }))), withRequests);
});

test("consecutive deltas share one arrow whose count grows; the arrow count stays small", () => {
  const m = modelOf(clientToolCycle({ deltas: 10_000 }));
  assert.equal(m.arrows.length, 15);
  const text = m.arrows.find((a) => a.type.startsWith("TEXT_MESSAGE"));
  assert.equal(text.count, 10_002);
  assert.match(labelOf(text), /CONTENT ×10000/);
});

test("an interrupt outcome suspends; the answers resume with resume[]", () => {
  const m = modelOf([
    { type: "request" },
    agui({ type: "RUN_STARTED", threadId: "t", runId: "r1" }),
    agui({ type: "RUN_FINISHED", threadId: "t", runId: "r1", outcome: { type: "interrupt", interrupts: [{ id: "i1", reason: "confirmation" }] } }),
    { type: "interrupt", interrupts: [{ id: "i1", reason: "confirmation" }] },
    { type: "request" },
    agui({ type: "RUN_STARTED", threadId: "t", runId: "r2" }),
  ]);
  assert.deepEqual(summary(m).slice(3), [
    "graph graph>server graph suspends (interrupt)",
    "suspend server>page RUN_FINISHED interrupt: confirmation",
    "fulfil page>page ask you 1 interrupt",
    "request page>server POST run · resume[] answers",
    "event server>page RUN_STARTED run 2",
    "graph server>graph resume the graph",
  ]);
});

test("a refused request and a run error are drawn once each", () => {
  const m = modelOf([
    { type: "request" },
    { type: "error", code: "http_409", message: "busy" },
    { type: "request" },
    agui({ type: "RUN_STARTED", threadId: "t", runId: "r" }),
    agui({ type: "RUN_ERROR", message: "boom", code: "model_error" }),
    { type: "error", code: "model_error", message: "boom" },
  ]);
  assert.deepEqual(summary(m), [
    "request page>server POST run",
    "error server>page refused http_409",
    "request page>server POST run",
    "event server>page RUN_STARTED run 1",
    "graph server>graph start the graph",
    "graph graph>server graph fails",
    "error server>page RUN_ERROR model_error",
  ]);
});

function diagram() {
  const { window, document } = makeDom();
  const queue = [];
  const frames = new FrameScheduler((cb) => queue.push(cb));
  const d = new SequenceDiagram(document, frames);
  document.body.append(d.el);
  return { window, document, d, frames, queue, frame: () => queue.splice(0).forEach((cb) => cb()) };
}

test("the SVG draws as events stream, one paint per frame, agent text as text", () => {
  const { d, queue, frame } = diagram();
  for (const e of clientToolCycle({ deltas: 500 }).slice(0, 6)) d.handle(e);
  assert.equal(queue.length, 1);
  frame();
  let arrows = [...d.el.querySelectorAll("g.gth-seq-arrow")];
  assert.deepEqual(arrows.map((g) => g.getAttribute("data-kind")), ["note", "request", "event", "graph", "event"]);
  const text = arrows[4];
  assert.equal(text.getAttribute("data-count"), "3");
  for (const e of clientToolCycle({ deltas: 500 }).slice(6)) d.handle(e);
  frame();
  arrows = [...d.el.querySelectorAll("g.gth-seq-arrow")];
  assert.equal(arrows.length, 15);
  assert.equal(arrows[4], text); // the same element, updated in place
  assert.equal(text.getAttribute("data-count"), "502");
  assert.match(text.querySelector("text").textContent, /CONTENT ×500 · END/);
  assert.deepEqual(
    arrows.filter((g) => ["request", "suspend", "fulfil"].includes(g.getAttribute("data-kind"))).map((g) => g.getAttribute("data-kind")),
    ["request", "suspend", "fulfil", "request"],
  );

  // A hostile tool name is text, never markup.
  d.handle(agui({ type: "TOOL_CALL_START", toolCallId: "x", toolCallName: '<img src=x onerror="alert(1)">' }));
  frame();
  assert.equal(d.el.querySelector("img"), null);
  assert.match(d.el.querySelector("g.gth-seq-arrow:last-of-type text").textContent, /<img src=x/);
  const svg = d.svgText();
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /&lt;img src=x/);
  assert.doesNotMatch(svg, /<img/);
});

test("a long run keeps at most 600 arrows in the SVG", () => {
  const { d, frame } = diagram();
  for (let i = 0; i < 2000; i++) {
    d.handle(agui({ type: "STEP_STARTED", stepName: `s${i}` }));
    d.handle(agui({ type: "CUSTOM", name: `n${i}`, value: null }));
    if (i % 100 === 0) frame();
  }
  frame();
  const arrows = d.el.querySelectorAll("g.gth-seq-arrow");
  assert.ok(arrows.length <= 600, String(arrows.length));
  assert.equal(arrows.length, d.arrows.length);
  assert.match(d.el.querySelector(".gth-seq-dropped").textContent, /earlier arrows not shown/);
  const height = Number(d.svg.getAttribute("height"));
  assert.ok(height < 600 * 30, String(height));
});

test("the event log toggles between the diagram and the list; both keep up", () => {
  const { window, document } = makeDom();
  const queue = [];
  const log = new EventLog(document, new FrameScheduler((cb) => queue.push(cb)));
  document.body.append(log.el);
  for (const e of clientToolCycle()) log.handle(e);
  queue.splice(0).forEach((cb) => cb());
  assert.equal(log.el.dataset.mode, "diagram");
  assert.equal(log.diagram.el.hidden, false);
  assert.equal(log.list.hidden, true);
  assert.equal(log.el.querySelectorAll("g.gth-seq-arrow").length, 15);
  assert.equal(log.el.querySelectorAll(".gth-event").length, 13); // the list: AG-UI types, runs merged
  click(window, log.el.querySelector(".gth-eventlog-mode[data-mode=list]"));
  assert.equal(log.el.dataset.mode, "list");
  assert.equal(log.diagram.el.hidden, true);
  assert.equal(log.list.hidden, false);
  assert.equal(log.exportButton.hidden, true);
  assert.equal(log.el.querySelector(".gth-eventlog-mode[data-mode=list]").getAttribute("aria-pressed"), "true");
  click(window, log.el.querySelector(".gth-eventlog-mode[data-mode=diagram]"));
  assert.equal(log.el.dataset.mode, "diagram");
  assert.equal(log.exportButton.hidden, false);
});

test("Export SVG downloads the diagram as a file", () => {
  const { window, document } = makeDom();
  const queue = [];
  const log = new EventLog(document, new FrameScheduler((cb) => queue.push(cb)));
  document.body.append(log.el);
  for (const e of clientToolCycle()) log.handle(e);
  const made = [];
  window.Blob = class {
    constructor(parts, opts) {
      this.text = parts.join("");
      this.type = opts.type;
    }
  };
  window.URL = { createObjectURL: (b) => (made.push(b), "blob:x"), revokeObjectURL: () => {} };
  let clicked = null;
  const realCreate = document.createElement.bind(document);
  document.createElement = (tag) => {
    const n = realCreate(tag);
    if (tag === "a") n.click = () => (clicked = { href: n.href, download: n.download });
    return n;
  };
  click(window, log.exportButton);
  assert.deepEqual(clicked, { href: "blob:x", download: "gth-sequence.svg" });
  assert.equal(made[0].type, "image/svg+xml");
  assert.match(made[0].text, /POST run · resume: tool results/);
  assert.match(made[0].text, /RUN_FINISHED pending: capture_image/);
});
