// The notebook tools (src/tools/notebook.js) with a fake bridge: declared only when the bridge
// finds this widget's notebook (else one quiet note per page), read_notebook's summary and caps,
// insert_cell and edit_cell's results, and a whole insert_cell round trip through a mounted view.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mount } from "../src/app/mount.js";
import { showAgentInfo } from "../src/app/traits.js";
import { linkNotebook, notebookLink, NOTEBOOK_TOOLS } from "../src/tools/notebook.js";
import { capText, lineDiff, MAX_OUTPUT_TEXT, runResult, stripAnsi, summarizeNotebook } from "../src/tools/notebook_summary.js";
import { createRegistry } from "../src/tools/registry.js";
import { click, makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { fakeServer, testEnv, until } from "../test-support/mount.mjs";
import { fakeBridge } from "../test-support/notebook.mjs";
import { finished, started, text, toolCall } from "../test-support/sse.mjs";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const RED_TB = ["\x1b[0;31m---------------------------------------------------------------------------\x1b[0m", "\x1b[0;31mKeyError\x1b[0m: 'revenue'"];

/** A notebook whose middle cell failed, with the %gth cell asking last. */
const notebook = () => [
  { id: "c-load", cell_type: "code", source: ["import pandas as pd\n", "df = pd.read_csv('sales.csv')"], execution_count: 1, outputs: [] },
  { id: "c-md", cell_type: "markdown", source: "# Revenue" },
  {
    id: "c-fail", cell_type: "code", source: "df['revenue'].sum()", execution_count: 2,
    outputs: [
      { output_type: "stream", name: "stdout", text: "loading\n" },
      { output_type: "stream", name: "stdout", text: "done\n" },
      { output_type: "error", ename: "KeyError", evalue: "'revenue'", traceback: RED_TB },
    ],
  },
  {
    id: "c-ask", cell_type: "code", source: "%gth why did this fail?", execution_count: 3,
    outputs: [{ output_type: "display_data", data: { "application/vnd.jupyter.widget-view+json": { model_id: "m" }, "text/plain": "waiting for the agent…" }, metadata: { gth_jupyter: { display: "d1" } } }],
  },
];

const traits = (extra = {}) => ({ cell_id: "c-ask", kernel_id: "k1", turn_id: "turn-1", thread_id: "t-9", ...extra });
const linkTo = (nb, model = fakeModel(traits())) => notebookLink(model, { global: { __gth_jupyter_notebook__: nb.bridge } });
const tool = (registry, name) => registry.get(name).handler;
// As the registry runs a call: with its id and tool name (a written cell's provenance).
const call = async (registry, name, args) => JSON.parse(await tool(registry, name)(args, { toolCallId: "call-1", toolName: name }));

test("the notebook tools are declared only while the bridge finds this widget's notebook", () => {
  const nb = fakeBridge(notebook());
  const names = (reg) => reg.declarations().map((t) => t.name);
  assert.deepEqual(names(createRegistry([], { notebook: linkTo(nb) })).slice(-3), NOTEBOOK_TOOLS);
  assert.deepEqual(nb.calls.find((c) => c.method === "find").args, { cellId: "c-ask", kernelId: "k1" });
  // No bridge on the page (VS Code, no extension), no cell id from the kernel, another kernel:
  const noBridge = notebookLink(fakeModel(traits()), { global: {} });
  assert.equal(names(createRegistry([], { notebook: noBridge })).some((n) => NOTEBOOK_TOOLS.includes(n)), false);
  assert.match(noBridge.why(), /^Notebook tools are off: this page has no JupyterLab\/Notebook 7 notebook/);
  const noCell = linkTo(nb, fakeModel(traits({ cell_id: undefined })));
  assert.equal(names(createRegistry([], { notebook: noCell })).includes("read_notebook"), false);
  assert.match(noCell.why(), /did not say which cell/);
  assert.equal(names(createRegistry([], { notebook: linkTo(nb, fakeModel(traits({ kernel_id: "other" }))) })).includes("insert_cell"), false);
  // Declared again at each run: a notebook closed since is no longer offered, and a call it
  // still gets is answered with an error rather than left pending.
  const registry = createRegistry([], { notebook: linkTo(nb) });
  nb.close();
  assert.deepEqual(names(registry), ["capture_image", "ask_user", "browser_context"]);
  assert.equal(registry.has("insert_cell"), true);
});

test("read_notebook: cells summarised, the asking cell marked, tracebacks ANSI-free, streams joined", async () => {
  const nb = fakeBridge(notebook());
  const v = await call(createRegistry([], { notebook: linkTo(nb) }), "read_notebook", {});
  assert.equal(v.path, "analysis.ipynb");
  assert.equal(v.cell_count, 4);
  assert.deepEqual(v.asking_cell, { id: "c-ask", index: 3 });
  assert.equal(v.next_offset, null);
  assert.equal(v.note, undefined);
  assert.deepEqual(v.cells.map((c) => [c.index, c.id, c.type]), [[0, "c-load", "code"], [1, "c-md", "markdown"], [2, "c-fail", "code"], [3, "c-ask", "code"]]);
  assert.equal(v.cells[0].source, "import pandas as pd\ndf = pd.read_csv('sales.csv')");
  assert.equal(v.cells[1].execution_count, undefined); // markdown has none
  const failed = v.cells[2];
  assert.deepEqual(failed.outputs, [
    { type: "stream", name: "stdout", text: "loading\ndone\n" },
    { type: "error", ename: "KeyError", evalue: "'revenue'", traceback: `${"-".repeat(75)}\nKeyError: 'revenue'` },
  ]);
  assert.equal(JSON.stringify(v).includes("\x1b"), false);
  assert.equal(v.cells[3].asking, true);
  assert.match(v.cells[3].outputs[0].gth, /gth chat widget/);
  assert.equal(JSON.stringify(v.cells[3]).includes("waiting for the agent"), false);

  const bare = await call(createRegistry([], { notebook: linkTo(nb) }), "read_notebook", { include_outputs: false });
  assert.equal(bare.cells[2].outputs, undefined);
  assert.equal(bare.cells[2].output_count, 3);
});

test("read_notebook: text capped head and tail, images counted, other mimetypes named", async () => {
  const long = `${"a".repeat(5000)}MIDDLE${"z".repeat(5000)}`;
  const cells = [{
    id: "c1", cell_type: "code", source: "plot()", execution_count: 4,
    outputs: [
      { output_type: "stream", name: "stderr", text: long },
      { output_type: "display_data", data: { "image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>" }, metadata: {} },
      { output_type: "execute_result", data: { "text/html": "<table/>", "text/plain": "   a\n0  1" }, execution_count: 4, metadata: {} },
    ],
  }];
  const v = await call(createRegistry([], { notebook: linkTo(fakeBridge(cells), fakeModel(traits({ cell_id: "c1" }))) }), "read_notebook", {});
  const [stream, figure, value] = v.cells[0].outputs;
  assert.ok(stream.text.length < MAX_OUTPUT_TEXT + 60, `capped to ${stream.text.length}`);
  assert.ok(stream.text.startsWith("aaaa") && stream.text.endsWith("zzzz"));
  assert.match(stream.text, /\[\d+ characters cut\]/);
  assert.equal(stream.text.includes("MIDDLE"), false);
  assert.deepEqual(figure, { type: "display_data", text: "<Figure size 640x480 with 1 Axes>", images: 1 });
  assert.equal(JSON.stringify(v).includes(PNG), false); // counted, never sent
  assert.deepEqual(value, { type: "execute_result", text: "   a\n0  1", mimetypes: ["text/html"] });
  assert.equal(capText("short", 10), "short");
  assert.equal(stripAnsi("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b[1;32mok\x1b[0m"), "link ok");
});

test("read_notebook pages: offset and limit, a total size cap that says what it left out, the asking cell found off the page", async () => {
  const cells = Array.from({ length: 30 }, (_, i) => ({ id: `c${i}`, cell_type: "code", source: `x${i} = ${i}\n`, outputs: [] }));
  const nb = fakeBridge(cells);
  const registry = createRegistry([], { notebook: linkTo(nb, fakeModel(traits({ cell_id: "c29" }))) });
  const first = await call(registry, "read_notebook", { limit: 10 });
  assert.equal(first.cells.length, 10);
  assert.equal(first.next_offset, 10);
  assert.deepEqual(first.asking_cell, { id: "c29", index: 29 }); // looked up past the page
  assert.match(first.note, /20 more cell\(s\) from offset 10: call read_notebook with offset=10/);
  const last = await call(registry, "read_notebook", { offset: 25, limit: 10 });
  assert.deepEqual(last.cells.map((c) => c.index), [25, 26, 27, 28, 29]);
  assert.equal(last.next_offset, null);
  assert.equal(last.cells.at(-1).asking, true);

  // A page cut by size: as many cells as fit, the rest named, the next offset where it stopped.
  for (const c of cells) c.source = c.source.repeat(500);
  const page = nb.handle.read({ offset: 0, limit: 30 });
  const cut = summarizeNotebook(page, { offset: 0, includeOutputs: true, askingCellId: "c29", maxChars: 9000 });
  assert.equal(cut.cells.length, 2);
  assert.equal(cut.next_offset, 2);
  assert.match(cut.note, /cells 2–29 were left out to keep this answer short/);
  assert.ok(JSON.stringify(cut.cells).length <= 9000);
  // One cell larger than the cap is still given (capped itself).
  assert.equal(summarizeNotebook(page, { offset: 0, includeOutputs: true, askingCellId: "", maxChars: 10 }).cells.length, 1);
});

test("insert_cell: below the asking cell, marked with the turn; with run, the outputs as run_python gives them", async () => {
  const nb = fakeBridge(notebook(), {
    ran: () => ({
      executionCount: 5,
      outputs: [
        { output_type: "stream", name: "stdout", text: "\x1b[1mtotal\x1b[0m 42\n" },
        { output_type: "display_data", data: { "image/png": PNG, "text/plain": "<Figure>" }, metadata: {} },
        { output_type: "execute_result", data: { "image/png": `${PNG}\n`, "text/plain": "<Figure>" }, execution_count: 5, metadata: {} },
      ],
    }),
  });
  const registry = createRegistry([], { notebook: linkTo(nb) });
  const plain = await call(registry, "insert_cell", { source: "df.head()" });
  assert.deepEqual(plain, { cell_id: "new-1", index: 4 });
  assert.deepEqual(nb.calls.find((c) => c.method === "insertCell").args, {
    source: "df.head()", cellType: "code", after: undefined, askingCellId: "c-ask", turnId: "turn-1", run: false, imageHosts: [],
    provenance: { threadId: "t-9", toolCallId: "call-1", tool: "insert_cell" },
  });
  assert.deepEqual(nb.cells[4].metadata, { gth: { turnId: "turn-1", change: "inserted", threadId: "t-9", toolCallId: "call-1", tool: "insert_cell" } });

  const ran = await call(registry, "insert_cell", { source: "plot()", run: true, after: "c-fail" });
  assert.equal(nb.cells[3].id, "new-2");
  assert.deepEqual(ran, {
    cell_id: "new-2", index: 3, status: "ok", execution_count: 5, stdout: "total 42\n", stderr: "",
    result: "<Figure>", displays: ["<Figure>"], images: [{ mimeType: "image/png", data: PNG }],
  }); // the same figure displayed and returned is one image

  const md = await call(registry, "insert_cell", { source: "## Notes", cell_type: "markdown", run: true });
  assert.deepEqual(md, { cell_id: "new-3", index: 6 }); // after the cells this turn inserted below the asking cell
  // Rejected arguments and a bridge that throws are {error} results; nothing was inserted.
  const count = nb.cells.length;
  assert.match((await call(registry, "insert_cell", {})).error, /needs 'source'/);
  assert.match((await call(registry, "insert_cell", { source: "x", cell_type: "raw" })).error, /"code" or "markdown"/);
  assert.deepEqual(await call(registry, "insert_cell", { source: "x", after: "nope" }), { error: "No cell nope in analysis.ipynb." });
  assert.equal(nb.cells.length, count);
  nb.close();
  assert.match((await call(registry, "insert_cell", { source: "x" })).error, /not open on this page/);
});

test("insert_cell runs the cell for every run value the server's gate asks about as code (JavaScript truthiness)", async () => {
  const nb = fakeBridge(notebook(), { ran: () => ({ executionCount: 9, outputs: [] }) });
  const registry = createRegistry([], { notebook: linkTo(nb) });
  // tools/kinds.py gates these as code: asked at `assisted`, and once approved, run.
  for (const run of [true, "yes", 1, "false", [], {}]) {
    const v = await call(registry, "insert_cell", { source: "x", run });
    assert.equal(v.execution_count, 9, `run: ${JSON.stringify(run)}`);
    assert.equal(nb.calls.at(-1).args.run, true);
  }
  // What it takes for false is a write, not code: inserted, not run.
  for (const run of [false, 0, "", null, undefined]) {
    assert.deepEqual(Object.keys(await call(registry, "insert_cell", { source: "x", run })), ["cell_id", "index"]);
    assert.equal(nb.calls.at(-1).args.run, false);
  }
});

test("%gth alone (no turn of its own): the call's turn marks its cells and keeps them together below the asking cell", async () => {
  const nb = fakeBridge(notebook());
  const registry = createRegistry([], { notebook: linkTo(nb, fakeModel(traits({ turn_id: "" }))) });
  const insert = async (source, turnId) => JSON.parse(await tool(registry, "insert_cell")({ source }, { turnId }));
  await insert("a = 1", "u-first");
  await insert("b = 2", "u-first");
  assert.deepEqual(nb.cells.slice(4).map((c) => [c.source, c.metadata.gth.turnId]), [["a = 1", "u-first"], ["b = 2", "u-first"]]);
  assert.equal(nb.calls.filter((c) => c.method === "insertCell").at(-1).args.turnId, "u-first");
  await tool(registry, "edit_cell")({ cell_id: "c-fail", source: "x" }, { turnId: "u-first" });
  assert.equal(nb.calls.at(-1).args.turnId, "u-first");
  // A widget with its own turn keeps it (the chat tells its handlers the same one).
  const own = createRegistry([], { notebook: linkTo(nb) });
  await tool(own, "insert_cell")({ source: "c = 3" }, {});
  assert.equal(nb.calls.at(-1).args.turnId, "turn-1");
});

test("insert_cell's run result: an error with its ANSI-free traceback, images capped at four", () => {
  const images = Array.from({ length: 6 }, (_, i) => ({ output_type: "display_data", data: { "image/png": `${PNG.slice(0, -4)}${i}AAA=` }, metadata: {} }));
  const v = runResult({ status: "error", executionCount: 7, outputs: [...images, { output_type: "error", ename: "ValueError", evalue: "\x1b[31mbad\x1b[0m", traceback: RED_TB }] });
  assert.equal(v.status, "error");
  assert.deepEqual(v.error, { ename: "ValueError", evalue: "bad", traceback: `${"-".repeat(75)}\nKeyError: 'revenue'` });
  assert.equal(v.images.length, 4);
  assert.equal(v.note, "2 more image(s) left out");
});

test("edit_cell: the cell's new source, and the change as a line diff", async () => {
  const nb = fakeBridge(notebook());
  const registry = createRegistry([], { notebook: linkTo(nb) });
  const v = await call(registry, "edit_cell", { cell_id: "c-fail", source: "df['Revenue'].sum()" });
  assert.deepEqual(v, { cell_id: "c-fail", added: 1, removed: 1, diff: ["- df['revenue'].sum()", "+ df['Revenue'].sum()"], undo: { before: "df['revenue'].sum()" } });
  assert.equal(nb.cells[2].source, "df['Revenue'].sum()");
  // The cell type the server gated the call as, which the bridge holds it to; a %gth cell is
  // rewritten only when the agent's approvals mode is bypass.
  assert.deepEqual(nb.calls.find((c) => c.method === "editCell").args, {
    cellId: "c-fail", source: "df['Revenue'].sum()", turnId: "turn-1", imageHosts: [], cellType: "code", allowMagic: false,
    provenance: { threadId: "t-9", toolCallId: "call-1", tool: "edit_cell" },
  });
  // The edited cell says so, and does not pull the turn's next insert below it.
  assert.equal(nb.cells.find((c) => c.id === "c-fail").metadata.gth.change, "edited");
  assert.deepEqual(await call(registry, "edit_cell", { cell_id: "gone", source: "" }), { error: "No cell gone in analysis.ipynb." });
  assert.match((await call(registry, "edit_cell", { source: "x" })).error, /needs 'cell_id'/);
  assert.match((await call(registry, "edit_cell", { cell_id: "c-md", source: "x", cell_type: "raw" })).error, /'cell_type' must be/);
  // What the bridge refuses (a code cell edited as markdown, a %gth cell) comes back as the error.
  assert.match((await call(registry, "edit_cell", { cell_id: "c-fail", source: "x", cell_type: "markdown" })).error, /is a code cell, not markdown/);
  assert.match((await call(registry, "edit_cell", { cell_id: "c-ask", source: "import os" })).error, /is a %gth cell/);
  assert.equal(nb.cells[3].source, "%gth why did this fail?");
  const bypass = notebookLink(fakeModel(traits()), { global: { __gth_jupyter_notebook__: nb.bridge } });
  bypass.approvalMode = () => "bypass";
  const rewritten = await call(createRegistry([], { notebook: bypass }), "edit_cell", { cell_id: "c-ask", source: "%gth why, exactly?" });
  assert.equal(rewritten.added, 1);

  const before = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n");
  const after = before.replace("line 10", "line ten").replace("line 19", "line 19\nline 20");
  assert.deepEqual(lineDiff(before, after), {
    added: 2, removed: 1,
    lines: ["@@ … @@", "  line 7", "  line 8", "  line 9", "- line 10", "+ line ten", "  line 11", "  line 12", "  line 13", "@@ … @@", "  line 17", "  line 18", "  line 19", "+ line 20"],
  });
  assert.deepEqual(lineDiff("same", "same"), { added: 0, removed: 0, lines: [] });
  // Past the size limit of the line table, a rewrite: all old lines out, all new in.
  assert.deepEqual(lineDiff("a\nb\nc", "x\ny", { maxCells: 4 }).lines, ["- a", "- b", "- c", "+ x", "+ y"]);
});

test("a page without the bridge: no notebook tools, and one quiet note for the whole page", () => {
  const { document } = makeDom();
  const page = {};
  const views = [0, 1].map(() => {
    const root = document.createElement("div");
    root.append(document.createElement("div"));
    root.firstChild.className = "gth-body";
    return { doc: document, root, cardActions: {} };
  });
  for (const view of views) linkNotebook({ model: fakeModel(traits()), view, env: { global: page } });
  const notes = views.map((v) => v.root.querySelector(".gth-notebook-off"));
  assert.match(notes[0].textContent, /Notebook tools are off: this page has no JupyterLab\/Notebook 7 notebook/);
  assert.equal(notes[0].nextSibling.className, "gth-body"); // under the header, not in the transcript
  assert.equal(notes[1], null);
  assert.equal(views[0].cardActions.insertCell, undefined);
});

test("mount: an insert_cell round trip through the bridge, and the tools declared to the agent", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const nb = fakeBridge(notebook(), {
    ran: () => ({ executionCount: 4, outputs: [{ output_type: "display_data", data: { "image/png": PNG, "text/plain": "<Figure>" }, metadata: {} }] }),
  });
  const model = fakeModel({ thread_id: "t1", transport: "auto", base_url: "/base/", client_tools: [], ...traits() });
  const { fetch, requests } = fakeServer([
    (b) => [started(b), ...toolCall("i1", "insert_cell", { source: "df.plot()", run: true }), finished(b, { type: "success", pendingToolCallIds: ["i1"] })],
    (b) => [started(b), ...text("m1", "Plotted in a new cell."), finished(b)],
  ]);
  const cleanup = mount({ model, el, env: { ...testEnv(fetch), toolEnv: { global: { __gth_jupyter_notebook__: nb.bridge } } } });
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  assert.equal(el.querySelector(".gth-notebook-off"), null);
  el.querySelector(".gth-input").value = "put that in a cell";
  el.querySelector(".gth-send").click();
  await until(() => el.querySelector("[data-message-id=m1]"), "answer");

  const runs = requests.filter((r) => r.url.endsWith("/run")).map((r) => JSON.parse(r.init.body));
  assert.deepEqual(runs[0].tools.map((t) => t.name).filter((n) => NOTEBOOK_TOOLS.includes(n)), NOTEBOOK_TOOLS);
  const answer = runs[1].messages.at(-1);
  assert.equal(answer.toolCallId, "i1");
  const result = JSON.parse(answer.content);
  assert.equal(result.cell_id, "new-1");
  assert.deepEqual(result.images, [{ mimeType: "image/png", data: PNG }]);
  assert.equal(nb.cells[4].source, "df.plot()");
  const card = el.querySelector(".gth-tool[data-tool-name=insert_cell]");
  assert.equal(card.dataset.status, "done");
  assert.match(card.querySelector(".gth-notebook-insert .gth-run-status").textContent, /Inserted cell 4 \(id new-1\), ran as \[4\]/);
  assert.ok(card.querySelector("img.gth-tool-image").getAttribute("src").startsWith("data:image/png;base64,"));
  cleanup();
});

test("mount without a bridge: the notebook tools are not declared and the view says why", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", transport: "auto", base_url: "/base/", client_tools: [], ...traits() });
  const { fetch, requests } = fakeServer([(b) => [started(b), ...text("m1", "hi"), finished(b)]]);
  const cleanup = mount({ model, el, env: { ...testEnv(fetch), toolEnv: { global: {} } } });
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  assert.match(el.querySelector(".gth-notebook-off").textContent, /VS Code, the standalone server and headless runs/);
  el.querySelector(".gth-input").value = "hello";
  el.querySelector(".gth-send").click();
  await until(() => el.querySelector("[data-message-id=m1]"), "answer");
  const run = JSON.parse(requests.find((r) => r.url.endsWith("/run")).init.body);
  assert.deepEqual(run.tools.map((t) => t.name), ["capture_image", "ask_user", "browser_context"]);
  cleanup();
});

test("mount, %gth alone: an insert_cell approved with edited code inserts and runs the edited code, marked with the turn", async () => {
  const { window, document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const nb = fakeBridge(notebook(), { ran: () => ({ executionCount: 4, outputs: [{ output_type: "stream", name: "stdout", text: "edited ran\n" }] }) });
  const model = fakeModel({ thread_id: "t1", transport: "auto", base_url: "/base/", client_tools: [], ...traits({ turn_id: "", thread_id: "t1" }) });
  const asked = { source: "print('model')", run: true };
  const approval = {
    id: "int-1", reason: "confirmation", toolCallId: "i1", message: "The agent wants to run Python code in the notebook's kernel (insert_cell).",
    responseSchema: { type: "object", properties: { approved: { type: "boolean" }, editedArgs: { type: "object" } }, required: ["approved"] },
    metadata: { gth: { value: { type: "gth.approval", toolName: "insert_cell", args: asked, code: asked.source, language: "python", codeArgument: "source" } } },
  };
  /** The server's copy of the thread: after the edited approval, the call waits with the edit. */
  let suspended = [];
  const { fetch, requests } = fakeServer(
    [
      (b) => [started(b), ...toolCall("i1", "insert_cell", asked), finished(b, { type: "interrupt", interrupts: [approval] })],
      (b) => {
        // The card edits the argument holding the code (codeArgument), and the card shows it.
        assert.deepEqual(b.resume[0].payload.editedArgs, { source: "print('edited')", run: true });
        suspended = [{ id: "tc-1", reason: "tool_call", toolCallId: "i1", metadata: { gth: { clientTool: "insert_cell", args: b.resume[0].payload.editedArgs } } }];
        return [started(b), finished(b, { type: "success", pendingToolCallIds: ["i1"] })];
      },
      (b) => [started(b), ...text("m1", "Done."), finished(b)],
    ],
    { get interrupts() { return suspended; } },
  );
  const cleanup = mount({ model, el, env: { ...testEnv(fetch), toolEnv: { global: { __gth_jupyter_notebook__: nb.bridge } } } });
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  el.querySelector(".gth-input").value = "put that in a cell";
  el.querySelector(".gth-send").click();
  const card = await (async () => { await until(() => el.querySelector(".gth-approval[data-interrupt-id=int-1]"), "approval card"); return el.querySelector(".gth-approval[data-interrupt-id=int-1]"); })();
  click(window, card.querySelector(".gth-edit"));
  card.querySelector("textarea.gth-approval-input").value = "print('edited')";
  click(window, card.querySelector(".gth-approval-submit"));
  await until(() => el.querySelector("[data-message-id=m1]"), "answer");

  const inserted = nb.cells[4];
  assert.equal(inserted.source, "print('edited')"); // not the model's print('model')
  assert.equal(inserted.execution_count, 4);
  const runs = requests.filter((r) => r.url.endsWith("/run")).map((r) => JSON.parse(r.init.body));
  const user = runs[0].messages.findLast((m) => m.role === "user");
  // The turn's stand-in id, the thread, the call and its tool.
  assert.deepEqual(inserted.metadata, { gth: { turnId: user.id, change: "inserted", threadId: "t1", toolCallId: "i1", tool: "insert_cell" } });
  assert.equal(JSON.parse(runs[2].messages.at(-1).content).stdout, "edited ran\n");
  cleanup();
});

test("a written cell records the agent's model unless the server's jupyter.provenance.model is off", async () => {
  const view = { setMediaHosts() {}, setHeader() {}, approvalMode: "", provenanceModel: "" };
  const model = fakeModel(traits({ model_label: "x" }));
  showAgentInfo(model, view, { model: "claude-x", provenance: { model: true, approvedBy: true } });
  assert.equal(view.provenanceModel, "claude-x");
  const nb = fakeBridge(notebook());
  const dom = makeDom();
  const link = linkNotebook({ model, view: { doc: dom.document, root: dom.document.body, cardActions: {}, ...view }, env: { global: { __gth_jupyter_notebook__: nb.bridge } } });
  const registry = createRegistry([], { notebook: link });
  await call(registry, "insert_cell", { source: "x = 1" });
  assert.equal(nb.cells.find((c) => c.source === "x = 1").metadata.gth.model, "claude-x");
  showAgentInfo(model, view, { model: "claude-x", provenance: { model: false, approvedBy: false } });
  assert.equal(view.provenanceModel, "");
});
