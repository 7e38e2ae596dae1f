// A tool whose call name was shortened (an MCP tool: mcp__<key>__<tool> over 64 characters) is
// shown by its server and real name; the call name stays in the card's data and tooltip.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TranscriptView } from "../src/transcript.js";
import { makeDom } from "../test-support/dom.mjs";

test("a shortened MCP tool's card shows its server and real name", () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const view = new TranscriptView({
    doc: document, el, raf: (cb) => cb(), onSend: () => true, onStop: () => {}, onAction: () => {}, onResolveInterrupts: () => {},
  });
  const call = "mcp__files__a_tool_whose_name_is_far_too_long_for_provid_1a2b3c4d";
  view.setToolLabels(new Map([[call, "files › a_tool_whose_name_is_far_too_long_for_providers"]]));
  view.handle({ type: "agui", event: { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: call } });
  view.handle({ type: "agui", event: { type: "TOOL_CALL_START", toolCallId: "c2", toolCallName: "gth_grep" } });
  const [first, second] = [...el.querySelectorAll(".gth-tool")];
  assert.equal(first.dataset.toolName, call);
  assert.equal(first.querySelector(".gth-tool-name").textContent, "files › a_tool_whose_name_is_far_too_long_for_providers");
  assert.equal(first.querySelector(".gth-tool-name").getAttribute("title"), call);
  assert.equal(second.querySelector(".gth-tool-name").textContent, "gth_grep");
  assert.equal(second.querySelector(".gth-tool-name").getAttribute("title"), null);
});
