// Interrupts without the DOM: reading the server's copy of a thread, telling approvals from
// other interrupts, and building the `resume` entries the answers become.
//
// An approval is an interrupt with `reason: "confirmation"`; its `metadata.gth.value` is the raw
// value Gaunt Sloth's approvals middleware raised: `{type: "gth.approval", toolName, args,
// command?, rating?, validationError?}`. The answer is `{approved}` or `{approved: true,
// editedArgs}`. A client tool the run stopped on is `reason: "tool_call"`.

import approvals from "../../gth_jupyter/contract/spec/approvals.json" with { type: "json" };

// The reasons, and the answer's shape, are the server's too (contract/spec/approvals.json).
export const APPROVAL_REASON = approvals.reason;
export const CLIENT_TOOL_REASON = approvals.clientToolReason;

/**
 * @typedef {{ id: string, reason?: string, message?: string, toolCallId?: string,
 *   responseSchema?: any, expiresAt?: string, metadata?: any }} Interrupt
 * @typedef {{ interruptId: string, status: "resolved" | "cancelled", payload?: any }} ResumeEntry
 * @typedef {{ toolName: string, args: any, command?: string, rating?: { verdict?: string, reason?: string },
 *   validationError?: string }} ApprovalDetails
 */

/**
 * The server's copy of a thread (`GET gth/threads/{id}`, or the comm `history` reply): its
 * messages, the interrupts it waits on, and its shared state (null when it has none).
 * @param {any} body
 * @returns {{ messages: any[], interrupts: Interrupt[], turns: { turnId: string, done?: boolean }[], busy: boolean,
 *   run: { runId: string, turnId?: string } | null, state: object | null, currentBranch: boolean,
 *   usageTurns: any[], usage: any[], cost: any }}
 */
export function threadOf(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const interrupts = Array.isArray(body?.interrupts) ? body.interrupts.filter(isInterrupt) : [];
  // Widget turns in order, each `{turnId, done}` (src/order.js); absent from old servers.
  const turns = Array.isArray(body?.turns) ? body.turns.filter((/** @type {any} */ t) => typeof t?.turnId === "string") : [];
  // The run in flight, to re-attach to (`GET gth/runs/{runId}/events`); absent from old servers.
  const runId = body?.run?.runId;
  const run = typeof runId === "string" && runId ? { ...body.run, runId } : null;
  // The shared state (AG-UI STATE_SNAPSHOT), for the event log's state view after a reload.
  const state = body?.state && typeof body.state === "object" ? body.state : null;
  // Whether what is shown is on the thread's current branch (a turn a re-run cell above left
  // behind is not); old servers have no branches.
  const currentBranch = body?.currentBranch !== false;
  // What each turn (also one its client named none for) and the whole thread cost; absent from
  // old servers.
  const usageTurns = Array.isArray(body?.turns) ? body.turns.filter((/** @type {any} */ t) => t && typeof t === "object") : [];
  const usage = Array.isArray(body?.usage) ? body.usage : [];
  const cost = body?.cost && typeof body.cost === "object" ? body.cost : null;
  return { messages, interrupts, turns, busy: Boolean(body?.busy), run, state, currentBranch, usageTurns, usage, cost };
}

/** @returns {i is Interrupt} */
export function isInterrupt(/** @type {any} */ i) {
  return Boolean(i) && typeof i === "object" && typeof i.id === "string" && i.id !== "";
}

/** Whether an interrupt asks a person to approve a tool call. */
export function isApproval(/** @type {any} */ i) {
  return i?.reason === APPROVAL_REASON;
}

/**
 * Whether these interrupts hold the thread: the server refuses a new turn while any interrupt
 * other than a client tool call waits (pending client tools alone are dropped when the user
 * moves on).
 */
export function blocksThread(/** @type {any[]} */ interrupts) {
  return interrupts.some((i) => isInterrupt(i) && i.reason !== CLIENT_TOOL_REASON);
}

/**
 * What an approval is about, from `metadata.gth.value` (falling back to the interrupt itself).
 * @param {Interrupt} i
 * @returns {ApprovalDetails}
 */
export function approvalDetails(i) {
  const raw = i?.metadata?.gth?.value;
  const value = raw && typeof raw === "object" && !Array.isArray(raw) ? raw : {};
  const toolName = typeof value.toolName === "string" ? value.toolName : "";
  const args = value.args !== undefined ? value.args : {};
  /** @type {ApprovalDetails} */
  const out = { toolName, args };
  if (typeof value.command === "string" && value.command) out.command = value.command;
  if (value.rating && typeof value.rating === "object") out.rating = value.rating;
  if (typeof value.validationError === "string" && value.validationError) out.validationError = value.validationError;
  return out;
}

/** Whether an interrupt's `expiresAt` has passed: the client then only lets it be cancelled. */
export function isExpired(/** @type {any} */ i, now = Date.now()) {
  const at = typeof i?.expiresAt === "string" ? Date.parse(i.expiresAt) : NaN;
  return Number.isFinite(at) && at <= now;
}

/** @returns {ResumeEntry} */
export const approve = (/** @type {string} */ interruptId) => ({ interruptId, status: "resolved", payload: { approved: true } });

/** @returns {ResumeEntry} */
export const approveEdited = (/** @type {string} */ interruptId, /** @type {object} */ editedArgs) => ({
  interruptId,
  status: "resolved",
  payload: { approved: true, editedArgs },
});

/** @returns {ResumeEntry} */
export const reject = (/** @type {string} */ interruptId) => ({ interruptId, status: "resolved", payload: { approved: false } });

/** @returns {ResumeEntry} */
export const cancel = (/** @type {string} */ interruptId) => ({ interruptId, status: "cancelled" });

/**
 * Edited arguments as typed by the user: they must be one JSON object.
 * @param {string} text
 * @returns {{ ok: true, value: object } | { ok: false, error: string }}
 */
export function parseEditedArgs(text) {
  let value;
  try {
    value = JSON.parse(String(text ?? ""));
  } catch (err) {
    return { ok: false, error: `Not valid JSON: ${/** @type {Error} */ (err).message}` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, error: "The arguments must be a JSON object ({ … })." };
  }
  return { ok: true, value };
}
