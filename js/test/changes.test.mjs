// The Changes card (issue 20): a turn that inserted or edited cells ends with one line per cell,
// live and after a reload, each opening its diff and showing its cell.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChangesCards, changeLine, changeOf, turnsChanges } from "../src/view/changes.js";
import { makeDom } from "../test-support/dom.mjs";

const INSERT = { cell_id: "new-1", index: 8, status: "ok", execution_count: 12, stdout: "6\n" };
const EDIT = { cell_id: "c3", index: 3, added: 4, removed: 1, diff: ["  # Sales", "- old", "+ a", "+ b", "+ c", "+ d"] };

test("each change reads as one line", () => {
  assert.equal(changeLine(changeOf("i1", "insert_cell", { source: "x", run: true }, JSON.stringify(INSERT))), "+ cell 8 (code, ran as [12])");
  assert.equal(changeLine(changeOf("i2", "insert_cell", '{"source": "# T", "cell_type": "markdown"}', '{"cell_id": "n2", "index": 9}')), "+ cell 9 (markdown)");
  assert.equal(changeLine(changeOf("e1", "edit_cell", { cell_id: "c3", source: "a", cell_type: "markdown" }, JSON.stringify(EDIT))), "~ cell 3 (markdown, +4 −1)");
  // A call that failed, a read, or a result nobody can read changed nothing.
  assert.equal(changeOf("e2", "edit_cell", {}, '{"error": "No cell with id \\"x\\"."}'), null);
  assert.equal(changeOf("r1", "read_notebook", {}, '{"cells": []}'), null);
  assert.equal(changeOf("e3", "edit_cell", {}, "not json"), null);
});

test("a thread's turns each keep their own changes", () => {
  const messages = [
    { id: "u1", role: "user", content: "add a cell" },
    { id: "a1", role: "assistant", toolCalls: [{ id: "i1", function: { name: "insert_cell", arguments: '{"source": "x = 1", "run": true}' } }] },
    { id: "t1", role: "tool", toolCallId: "i1", content: JSON.stringify(INSERT) },
    { id: "a2", role: "assistant", content: "Done." },
    { id: "u2", role: "user", content: "what is x?" },
    { id: "a3", role: "assistant", content: "1" },
    { id: "u3", role: "user", content: "fix the title" },
    { id: "a4", role: "assistant", toolCalls: [{ id: "e1", function: { name: "edit_cell", arguments: '{"cell_id": "c3", "source": "a"}' } }] },
    { id: "t2", role: "tool", toolCallId: "e1", content: JSON.stringify(EDIT) },
  ];
  messages[8].undo = { before: "# Sales" }; // as the thread view gives it back
  const turns = turnsChanges(messages);
  assert.equal(turns[1].changes[0].before, "# Sales");
  assert.equal(turns[0].changes[0].before, null);
  assert.deepEqual(turns.map((t) => [t.userId, t.changes.map(changeLine)]), [["u1", ["+ cell 8 (code, ran as [12])"]], ["u3", ["~ cell 3 (code, +4 −1)"]]]);

  // After a reload: each card ends its own turn, before the next turn's first message.
  const { document, window } = makeDom();
  const list = document.createElement("div");
  const els = new Map(messages.map((m) => [m.id, Object.assign(document.createElement("div"), { id: m.id })]));
  for (const el of els.values()) list.append(el);
  const revealed = [];
  const cards = new ChangesCards(document, { list, append: (n) => list.append(n) });
  cards.reveal = (cellId) => revealed.push(cellId);
  cards.showHistory(messages, (id) => els.get(id));
  const order = [...list.children].map((n) => n.id || n.querySelector(".gth-changes-title").textContent);
  assert.deepEqual(order, ["u1", "a1", "t1", "a2", "Changes · 1 cell", "u2", "a3", "u3", "a4", "t2", "Changes · 1 cell"]);
  // A line opens its diff and shows its cell.
  const edit = list.querySelector(".gth-change-edited");
  assert.equal(edit.dataset.cellId, "c3");
  assert.deepEqual([...edit.querySelectorAll(".gth-diff-line")].map((n) => n.className), [
    "gth-diff-line gth-diff-same", "gth-diff-line gth-diff-del", "gth-diff-line gth-diff-add", "gth-diff-line gth-diff-add", "gth-diff-line gth-diff-add", "gth-diff-line gth-diff-add",
  ]);
  edit.open = true;
  edit.dispatchEvent(new window.Event("toggle"));
  assert.deepEqual(revealed, ["c3"]);
});

test("live: the turn's card follows its runs, once per call, and a turn with no change has none", () => {
  const { document } = makeDom();
  const list = document.createElement("div");
  const cards = new ChangesCards(document, { list, append: (n) => list.append(n) });
  cards.newTurn();
  cards.toolRan("i1", "insert_cell", '{"source": "<img src=x onerror=alert(1)>"}', JSON.stringify(INSERT));
  cards.runEnded(); // the run that suspended on the call
  cards.toolRan("i1", "insert_cell", "{}", JSON.stringify(INSERT)); // the same call again: once
  cards.toolRan("e1", "edit_cell", "{}", JSON.stringify(EDIT));
  cards.runEnded(); // the resumed run: one card, redrawn at the end
  assert.equal(list.querySelectorAll(".gth-changes").length, 1);
  assert.deepEqual([...list.querySelectorAll(".gth-change summary")].map((n) => n.textContent), ["+ cell 8 (code, ran as [12])", "~ cell 3 (code, +4 −1)"]);
  // The agent's source is shown as text, never as markup.
  assert.equal(list.querySelector(".gth-changes img"), null);
  assert.equal(list.querySelector(".gth-change-inserted pre").textContent, "<img src=x onerror=alert(1)>");
  cards.newTurn();
  cards.runEnded();
  assert.equal(list.querySelectorAll(".gth-changes").length, 1);
});
