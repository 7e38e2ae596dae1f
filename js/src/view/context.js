// "What the model saw" for one turn: a folded Context view under the turn's cost line. Opened,
// it asks the server for the turn's model calls (`GET gth/threads/{id}/context?turn=`) and
// shows each call as it was sent: the largest items first ("read_notebook result: 3,210 tokens
// · 41% of this call"), the tools offered, then every item (system prompt, history, tool
// results as the model got them, images as placeholders) folded, its text as plain text.

import { h } from "./dom.js";

/** @param {unknown} n */
const grouped = (n) => (typeof n === "number" && Number.isFinite(n) ? n.toLocaleString("en-US") : "?");
/** @param {unknown} share */
const percent = (share) => `${Math.round((typeof share === "number" ? share : 0) * 100)}%`;

/**
 * The Context view of a turn: folded; its calls are fetched the first time it opens.
 * @param {Document} doc
 * @param {() => Promise<any>} load resolves with the endpoint's body `{calls}`
 */
export function contextView(doc, load) {
  const body = h(doc, "div", { cls: "gth-context-body" });
  const el = h(doc, "details", { cls: "gth-context" }, [h(doc, "summary", { text: "Context" }), body]);
  let asked = false;
  el.addEventListener("toggle", () => {
    if (!el.hasAttribute("open") || asked) return; // `open` reflects the attribute
    asked = true;
    body.replaceChildren(h(doc, "div", { cls: "gth-note", text: "Loading what the model was sent…" }));
    load().then(
      (found) => body.replaceChildren(...renderCalls(doc, Array.isArray(found?.calls) ? found.calls : [])),
      (/** @type {any} */ err) => {
        asked = false; // open it again to retry
        body.replaceChildren(h(doc, "div", { cls: "gth-note gth-note-warning", text: `Could not load it: ${err?.message ?? err}` }));
      },
    );
  });
  return el;
}

/** @param {Document} doc @param {any[]} calls */
export function renderCalls(doc, calls) {
  if (!calls.length) return [h(doc, "div", { cls: "gth-note", text: "Nothing was kept of this turn's model calls." })];
  return calls.map((call, i) => {
    const usage = call?.usage && typeof call.usage === "object" ? call.usage : null;
    const counted = usage ? ` · ${grouped(usage.inputTokens)} in · ${grouped(usage.outputTokens)} out` : "";
    const head = h(doc, "div", { cls: "gth-context-call-head", text: `Call ${i + 1} · ${call?.model || "model"}${counted}` });
    const largest = h(
      doc,
      "ol",
      { cls: "gth-context-largest" },
      (Array.isArray(call?.largest) ? call.largest : []).map((/** @type {any} */ item) =>
        h(doc, "li", { text: `${item?.kind ?? "item"}: ${grouped(item?.tokens)} tokens · ${percent(item?.share)} of this call` }),
      ),
    );
    const tools = Array.isArray(call?.tools) && call.tools.length ? h(doc, "div", { cls: "gth-context-tools", text: `Tools offered: ${call.tools.join(", ")}` }) : null;
    const items = (Array.isArray(call?.messages) ? call.messages : []).map((/** @type {any} */ item) =>
      h(doc, "details", { cls: "gth-context-item", data: { role: String(item?.role ?? "") } }, [
        h(doc, "summary", { text: `${item?.role ?? "?"} · ${item?.kind ?? ""} · ${grouped(item?.tokens)} tokens${item?.cut ? ` · cut (${grouped(item?.chars)} characters)` : ""}` }),
        h(doc, "pre", { cls: "gth-context-text", text: String(item?.content ?? "") }),
      ]),
    );
    const cut = typeof call?.cut === "string" ? h(doc, "div", { cls: "gth-note gth-note-muted", text: call.cut }) : null;
    return h(doc, "div", { cls: "gth-context-call" }, [head, largest, ...(tools ? [tools] : []), ...items, ...(cut ? [cut] : [])]);
  });
}
