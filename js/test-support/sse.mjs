// Fakes for the run endpoint: SSE frames replayed through a fetch-compatible function.

/** @typedef {Record<string, any>} AguiEvent an AG-UI event, as the server sends it */

export const sse = (/** @type {AguiEvent[]} */ events) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");

/** @param {AguiEvent[]} events @param {{ status?: number }} [opts] */
export function sseResponse(events, { status = 200 } = {}) {
  const bytes = new TextEncoder().encode(sse(events));
  const body = new ReadableStream({
    start(c) {
      // Split mid-frame on purpose: the client must reassemble.
      const mid = Math.floor(bytes.length / 2);
      c.enqueue(bytes.slice(0, mid));
      c.enqueue(bytes.slice(mid));
      c.close();
    },
  });
  return new Response(body, { status, headers: { "Content-Type": "text/event-stream" } });
}

/**
 * A fetch that answers the n-th request with scripts[n](body) -> events | Response.
 * @param {((body: any, init: RequestInit) => AguiEvent[] | Response | Promise<AguiEvent[] | Response>)[]} scripts
 */
export function scriptedFetch(scripts) {
  /** @type {{ url: string, init: RequestInit, body: any }[]} */
  const requests = [];
  const fetch = async (/** @type {string} */ url, /** @type {RequestInit} */ init) => {
    const body = JSON.parse(String(init.body));
    requests.push({ url, init, body });
    const script = scripts[requests.length - 1];
    if (!script) throw new Error(`unexpected request #${requests.length}`);
    const out = await script(body, init);
    return out instanceof Response ? out : sseResponse(out);
  };
  return { fetch, requests };
}

/** @typedef {{ threadId: string, runId: string }} RunBody the RunAgentInput a run was posted with */

export const started = (/** @type {RunBody} */ b) => ({ type: "RUN_STARTED", threadId: b.threadId, runId: b.runId });
/** @param {RunBody} b @param {object} [outcome] */
export const finished = (b, outcome) => ({ type: "RUN_FINISHED", threadId: b.threadId, runId: b.runId, ...(outcome ? { outcome } : {}) });
export const text = (/** @type {string} */ id, /** @type {string} */ s) => [
  { type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" },
  { type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: s },
  { type: "TEXT_MESSAGE_END", messageId: id },
];
/** @param {string} id @param {string} name @param {unknown} args @param {string} [parentMessageId] */
export const toolCall = (id, name, args, parentMessageId) => [
  { type: "TOOL_CALL_START", toolCallId: id, toolCallName: name, ...(parentMessageId ? { parentMessageId } : {}) },
  { type: "TOOL_CALL_ARGS", toolCallId: id, delta: JSON.stringify(args) },
  { type: "TOOL_CALL_END", toolCallId: id },
];
