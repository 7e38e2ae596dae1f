// The browser-tool round of a turn: which of a finished run's pending tool calls this browser
// answers (from this turn only, each at most once, only tools it has), the arguments each runs
// with (the server's, where it suspended the call with others than the model streamed: an
// approval the person edited), and running their handlers one after another into `tool`
// messages for the next run.

import { randomUUID } from "@ag-ui/client";
import { errorOf, toContent } from "../tools/registry.js";

/**
 * @typedef {import("../tools/registry.js").ToolRegistry} ToolRegistry
 * @typedef {import("../tools/registry.js").ToolUi} ToolUi
 * @typedef {import("./events.js").ChatEvent} ChatEvent
 * @typedef {{ id: string, type?: string, function: { name: string, arguments?: string } }} ToolCall
 * @typedef {{ id: string, role: "tool", toolCallId: string, content: string }} ToolMessage
 */

/**
 * The pending calls of `pendingIds` this browser can answer: made after the turn's user
 * message (`turnUserId`, else the last user message), not answered in the messages nor
 * before (`fulfilled`), of a tool the registry has.
 * @param {{ messages: any[], turnUserId: string | null, pendingIds: string[], fulfilled: Set<string>, registry: ToolRegistry }} opts
 * @returns {ToolCall[]}
 */
export function callsToAnswer({ messages, turnUserId, pendingIds, fulfilled, registry }) {
  let start = turnUserId ? messages.findIndex((m) => m.id === turnUserId) : -1;
  if (start < 0) start = findLastIndex(messages, (m) => m.role === "user");
  /** @type {Map<string, ToolCall>} */
  const calls = new Map();
  const answered = new Set();
  messages.forEach((m, i) => {
    if (m.role === "tool") answered.add(m.toolCallId);
    if (i > start && m.role === "assistant") for (const tc of m.toolCalls ?? []) calls.set(tc.id, tc);
  });
  return pendingIds
    .map((id) => calls.get(id))
    .filter(/** @returns {tc is ToolCall} */ (tc) => Boolean(tc && !fulfilled.has(tc.id) && !answered.has(tc.id) && registry.has(tc.function?.name)));
}

/**
 * The arguments the server suspended client tool calls with, by tool call id: the
 * `metadata.gth.args` of its `tool_call` interrupts (`GET gth/threads/{id}`, or a run that ended
 * on approvals too). An approval the person edited changes them there, not in the call the
 * model streamed, which the message history keeps.
 * @param {any[] | null | undefined} interrupts
 * @returns {Map<string, object>}
 */
export function suspendedArgs(interrupts) {
  /** @type {Map<string, object>} */
  const out = new Map();
  for (const i of Array.isArray(interrupts) ? interrupts : []) {
    const args = i?.metadata?.gth?.args;
    if (i?.reason !== "tool_call" || typeof i.toolCallId !== "string") continue;
    if (args && typeof args === "object" && !Array.isArray(args)) out.set(i.toolCallId, args);
  }
  return out;
}

/**
 * The id of the user message a turn began with (`turnUserId`, else the last user message): the
 * turn's stand-in id where the widget has none of its own (`%gth` alone, whose typed turns carry
 * no turn id), so what one turn does in the notebook stays together and is marked as its.
 * @param {any[]} messages @param {string | null} turnUserId
 */
export function turnMessageId(messages, turnUserId) {
  if (turnUserId) return turnUserId;
  const at = findLastIndex(messages, (m) => m.role === "user");
  return at < 0 ? "" : String(messages[at].id ?? "");
}

/**
 * Run the handlers one after another (a camera and a question at once would confuse), telling
 * `emit` how each goes. Stops at the first call after `stopped()` turns true; each answered
 * call's id is added to `fulfilled`. `argsOf` gives a call's arguments (by default those it was
 * streamed with; a throw answers the call with the error, unrun); `turnId` is the turn the
 * handlers are told they run in.
 * @param {ToolCall[]} calls
 * @param {{ registry: ToolRegistry, ui?: ToolUi, env?: any, signal: AbortSignal, fulfilled: Set<string>,
 *   stopped: () => boolean, emit: (e: ChatEvent) => void, argsOf?: (call: ToolCall) => any, turnId?: string }} opts
 * @returns {Promise<ToolMessage[]>}
 */
export async function runTools(calls, { registry, ui, env, signal, fulfilled, stopped, emit, argsOf = streamedArgs, turnId = "" }) {
  /** @type {ToolMessage[]} */
  const answers = [];
  for (const call of calls) {
    if (stopped()) break;
    const name = call.function.name;
    const toolCallId = call.id;
    emit({ type: "tool-run", toolCallId, name, status: "running" });
    let content;
    let status = /** @type {"done" | "error"} */ ("done");
    try {
      const args = argsOf(call);
      const log = (/** @type {unknown} */ line) => emit({ type: "tool-output", toolCallId, line: String(line) });
      const handler = /** @type {import("../tools/registry.js").ToolDef} */ (registry.get(name)).handler;
      content = toContent(await handler(args, { toolCallId, toolName: name, turnId, signal, ui, env, log }));
      if (errorOf(content) !== undefined) status = "error";
    } catch (err) {
      content = JSON.stringify({ error: /** @type {Error} */ (err)?.message || String(err) });
      status = "error";
    }
    if (stopped()) {
      emit({ type: "tool-run", toolCallId, name, status: "stopped" });
      break;
    }
    fulfilled.add(toolCallId);
    answers.push({ id: randomUUID(), role: "tool", toolCallId, content });
    emit({ type: "tool-run", toolCallId, name, status, content });
  }
  return answers;
}

/** The arguments a call was streamed with. @param {ToolCall} call */
export function streamedArgs(call) {
  return parseArgs(call.function.arguments);
}

/** @param {string | undefined} text */
function parseArgs(text) {
  if (!text || !text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`The tool arguments are not valid JSON: ${/** @type {Error} */ (err).message}`);
  }
}

/** @template T @param {T[]} arr @param {(x: T) => boolean} pred */
function findLastIndex(arr, pred) {
  for (let i = arr.length - 1; i >= 0; i--) if (pred(arr[i])) return i;
  return -1;
}
