// The notebook tools' cards (src/view/notebookcards.js) and the "Insert as cell" button on
// run_python cards: the person's own action through the bridge, there only when the bridge
// finds this widget's notebook.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TranscriptView } from "../src/transcript.js";
import { linkNotebook } from "../src/tools/notebook.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { until } from "../test-support/mount.mjs";
import { fakeBridge } from "../test-support/notebook.mjs";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const CELLS = () => [
  { id: "c-load", cell_type: "code", source: "df = load()" },
  { id: "c-ask", cell_type: "code", source: "%gth plot it" },
];

/** A view linked to `global`'s bridge (or to none), as connect.js links it. */
function setup(global = {}) {
  const { window, document } = makeDom();
  const queue = [];
  const el = document.createElement("div");
  document.body.append(el);
  const view = new TranscriptView({
    doc: document, el, raf: (cb) => queue.push(cb), onSend: () => true, onStop: () => {}, onAction: () => {}, onResolveInterrupts: () => {},
  });
  linkNotebook({ model: fakeModel({ cell_id: "c-ask", kernel_id: "k1", turn_id: "turn-7" }), view, env: { global } });
  const agui = (event) => view.handle({ type: "agui", event });
  const frame = () => queue.splice(0).forEach((cb) => cb());
  return { window, document, el, view, agui, frame };
}

function call(agui, id, name, args, result) {
  agui({ type: "TOOL_CALL_START", toolCallId: id, toolCallName: name });
  agui({ type: "TOOL_CALL_ARGS", toolCallId: id, delta: JSON.stringify(args) });
  agui({ type: "TOOL_CALL_END", toolCallId: id });
  if (result !== undefined) agui({ type: "TOOL_CALL_RESULT", messageId: `r-${id}`, toolCallId: id, content: JSON.stringify(result) });
}

test("Insert as cell: the run_python code goes below the asking cell through the bridge, not run, nothing asked", async () => {
  const nb = fakeBridge(CELLS());
  const { el, agui, frame } = setup({ __gth_jupyter_notebook__: nb.bridge });
  call(agui, "p1", "run_python", { code: "df.plot()", justification: "plot" });
  frame();
  const button = el.querySelector(".gth-tool[data-tool-name=run_python] .gth-insert-cell");
  assert.equal(button.textContent, "Insert as cell");
  button.click();
  const status = el.querySelector(".gth-insert-cell-status");
  await until(() => status.dataset.state === "done", "inserted");
  assert.equal(status.textContent, "Inserted below the %gth cell.");
  assert.deepEqual(nb.calls.filter((c) => c.method === "insertCell").map((c) => c.args), [
    { source: "df.plot()", cellType: "code", askingCellId: "c-ask", turnId: "turn-7", run: false },
  ]);
  assert.deepEqual(nb.cells.map((c) => c.id), ["c-load", "c-ask", "new-1"]);
  assert.equal(nb.cells[2].source, "df.plot()");
  assert.equal(nb.cells[2].execution_count, null);

  // The notebook closed since: the button says why and inserts nothing.
  nb.close();
  button.click();
  await until(() => status.dataset.state === "error", "refused");
  assert.match(status.textContent, /^Not inserted: Notebook tools are off: this widget's notebook is not open/);
  assert.equal(button.disabled, false);
  assert.equal(nb.cells.length, 3);
});

test("no bridge, no Insert as cell button; other tools' cards have none either", () => {
  const { el, agui, frame } = setup({});
  call(agui, "p1", "run_python", { code: "1 + 1" });
  frame();
  assert.ok(el.querySelector(".gth-tool[data-tool-name=run_python] .gth-run-code"));
  assert.equal(el.querySelector(".gth-insert-cell"), null);
  const linked = setup({ __gth_jupyter_notebook__: fakeBridge(CELLS()).bridge });
  call(linked.agui, "d1", "describe_variable", { name: "df" });
  call(linked.agui, "i1", "insert_cell", { source: "x = 1" });
  linked.frame();
  assert.equal(linked.el.querySelector(".gth-insert-cell"), null);
});

test("a run_python card rebuilt from the history keeps its Insert as cell button", () => {
  const { el, view, frame } = setup({ __gth_jupyter_notebook__: fakeBridge(CELLS()).bridge });
  view.renderHistory([
    { id: "u1", role: "user", content: "plot it" },
    { id: "a1", role: "assistant", content: "", toolCalls: [{ id: "p1", type: "function", function: { name: "run_python", arguments: JSON.stringify({ code: "df.plot()" }) } }] },
    { id: "t1", role: "tool", toolCallId: "p1", content: JSON.stringify({ status: "ok", stdout: "", stderr: "", result: null, displays: [], images: [], error: null }) },
  ]);
  frame();
  assert.equal(el.querySelectorAll(".gth-insert-cell").length, 1);
});

test("read_notebook's card lists the cells read: the asking cell and a failed one marked, and what was left out", () => {
  const { el, agui, frame } = setup({});
  call(agui, "r1", "read_notebook", {}, {
    path: "analysis.ipynb", cell_count: 40, offset: 0, asking_cell: { id: "c-ask", index: 2 }, next_offset: 3,
    note: "37 more cell(s) from offset 3: call read_notebook with offset=3.",
    cells: [
      { index: 0, id: "c0", type: "markdown", source: "\n# Sales\nmore" },
      { index: 1, id: "c1", type: "code", source: "df['revenue']", execution_count: 2, outputs: [{ type: "error", ename: "KeyError", evalue: "'revenue'", traceback: "…" }] },
      { index: 2, id: "c-ask", type: "code", source: "%gth why?", asking: true, execution_count: 3, outputs: [] },
    ],
  });
  frame();
  const card = el.querySelector(".gth-tool[data-tool-name=read_notebook]");
  assert.equal(card.dataset.status, "done");
  assert.equal(card.querySelector(".gth-run-status").textContent, "Read 3 of 40 cells (cells 0–2) of analysis.ipynb.");
  const rows = [...card.querySelectorAll(".gth-nb-cell")].map((r) => r.textContent);
  assert.deepEqual(rows, ["[0]md# Sales", "[1]codedf['revenue']KeyError", "[2]code%gth why?asking"]);
  assert.equal(card.querySelector(".gth-nb-cell[data-error=true] .gth-nb-mark").textContent, "KeyError");
  assert.match(card.querySelector(".gth-kernel-note").textContent, /37 more cell/);
});

test("insert_cell's card: the source as code, where it went, and a run's output and plot", () => {
  const { el, agui, frame } = setup({});
  call(agui, "i1", "insert_cell", { source: "df.plot()", run: true, justification: "Keep the plot" }, {
    cell_id: "new-1", index: 2, status: "ok", execution_count: 4, stdout: "plotted\n", stderr: "", result: null, displays: ["<Figure>"],
    images: [{ mimeType: "image/png", data: PNG }],
  });
  frame();
  const card = el.querySelector(".gth-tool[data-tool-name=insert_cell]");
  assert.equal(card.querySelector(".gth-run-code").textContent, "df.plot()");
  assert.deepEqual([...card.querySelectorAll(".gth-run-justification")].map((p) => p.textContent), ["New code cell below the asking cell, run", "Keep the plot"]);
  assert.equal(card.querySelector(".gth-notebook-insert > .gth-run-status").textContent, "Inserted cell 2 (id new-1), ran as [4].");
  assert.equal(card.querySelector(".gth-run-stdout").textContent, "plotted\n");
  assert.equal(card.querySelector("img.gth-tool-image").getAttribute("src"), `data:image/png;base64,${PNG}`);

  call(agui, "i2", "insert_cell", { source: "x = 1", run: true }, {
    cell_id: "new-2", index: 3, status: "error", execution_count: 5, stdout: "", stderr: "", result: null, displays: [], images: [],
    error: { ename: "NameError", evalue: "name 'df' is not defined", traceback: "NameError: name 'df' is not defined" },
  });
  frame();
  const failed = el.querySelector(".gth-tool[data-tool-name=insert_cell][data-tool-call-id=i2]");
  assert.equal(failed.dataset.status, "error");
  assert.match(failed.querySelector(".gth-run-error").textContent, /^NameError: name 'df' is not defined/);
  assert.equal(failed.querySelector(".gth-notebook-insert > .gth-run-status").textContent, "Inserted cell 3 (id new-2), ran as [5]: error.");
  assert.equal(failed.querySelectorAll(".gth-run-status").length, 1);

  call(agui, "i3", "insert_cell", { source: "x" }, { error: "No cell nope in analysis.ipynb." });
  frame();
  const refused = el.querySelector(".gth-tool[data-tool-call-id=i3]");
  assert.equal(refused.dataset.status, "error");
  assert.equal(refused.querySelector(".gth-tool-error").textContent, "No cell nope in analysis.ipynb.");
});

test("edit_cell's card shows the change as a diff, lines marked added, removed, or left out", () => {
  const { el, agui, frame } = setup({});
  call(agui, "e1", "edit_cell", { cell_id: "c1", source: "df['Revenue']" }, {
    cell_id: "c1", added: 1, removed: 1, diff: ["@@ … @@", "  import pandas", "- df['revenue']", "+ df['Revenue']"],
  });
  frame();
  const card = el.querySelector(".gth-tool[data-tool-name=edit_cell]");
  // No notebook at hand (no bridge): the cell is named by its id, the new source shown whole.
  assert.equal(card.querySelector(".gth-run-justification").textContent, "Edit cell c1");
  assert.equal(card.querySelector(".gth-run-args .gth-run-code").textContent, "df['Revenue']");
  assert.equal(card.querySelector(".gth-notebook-edit .gth-run-status").textContent, "Edited cell c1: +1 −1 lines.");
  assert.deepEqual([...card.querySelectorAll(".gth-diff-line")].map((l) => [l.className.replace("gth-diff-line gth-diff-", ""), l.textContent]), [
    ["gap", "@@ … @@\n"], ["same", "  import pandas\n"], ["del", "- df['revenue']\n"], ["add", "+ df['Revenue']\n"],
  ]);
});

test("before anything changed, an edit's card shows the cell's diff (old → new) and an insert's names where it goes", async () => {
  const { renderNotebookArgs } = await import("../src/view/notebookcards.js");
  const { document: doc } = makeDom();
  const cells = {
    c3: { index: 3, type: "code", source: "import pandas as pd\nsales = pd.read_csv('s.csv')\nsales.groupby('month').sum()" },
    "": { index: 7, type: "code", source: "%gth put that in a cell" },
  };
  const actions = { cellAt: (/** @type {string} */ id) => cells[id] ?? null };
  const edit = renderNotebookArgs(doc, "edit_cell", JSON.stringify({ cell_id: "c3", source: "import pandas as pd\nsales = pd.read_csv('s.csv')\nsales.groupby('region').sum()" }), actions);
  assert.equal(edit.querySelector(".gth-run-justification").textContent, "Edit cell 3 (code) · import pandas as pd: +1 −1 lines");
  assert.deepEqual([...edit.querySelectorAll(".gth-diff-line")].map((l) => l.textContent), [
    "  import pandas as pd\n", "  sales = pd.read_csv('s.csv')\n", "- sales.groupby('month').sum()\n", "+ sales.groupby('region').sum()\n",
  ]);
  // The whole new source is there too (what Edit edits), folded under the diff.
  assert.match(edit.querySelector(".gth-notebook-new .gth-run-code").textContent, /region/);

  const insert = renderNotebookArgs(doc, "insert_cell", JSON.stringify({ source: "agent_total = 1" }), actions);
  assert.equal(insert.querySelector(".gth-run-justification").textContent, "New code cell below cell 7 (code) · %gth put that in a cell");
  const after = renderNotebookArgs(doc, "insert_cell", JSON.stringify({ source: "## Notes", cell_type: "markdown", after: "c3" }), actions);
  assert.equal(after.querySelector(".gth-run-justification").textContent, "New markdown cell below cell 3 (code) · import pandas as pd");
});
