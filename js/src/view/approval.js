// Interrupt cards. An approval (`reason: "confirmation"`) asks a plain question ("Run this code
// in your kernel?", "Run this command?", "Write this file?", "Call this tool?") with Approve /
// Edit / Reject; any other interrupt gets its message and Cancel. An approval for a tool call
// that has a card in the transcript is drawn inside that card, under the call's code or
// arguments, so the code shows once and the call's result lands in the same place after the
// decision; without such a card (no call id, or a call not shown) it is a card of its own that
// shows the command or code and the arguments. Edit edits the arguments as JSON, or, when the
// approval carries `code` (run_python), the code itself as text. Why the person is asked (the
// approvals mode, a rule) is a small muted line, never the headline.
// The interrupts a run stopped on form one batch: one card each, and the batch's `resume` is
// sent once, when every card has been answered (the client refuses a resume that leaves one out).
// When the server reads standing grants (its responseSchema lists `grant`), the card also offers
// "Always allow" for this thread or for the server session: `{approved: true, grant}`, after
// which the server runs such calls (the exact command or code, else the tool) without asking.
// A call the server says it will not grant (`grantable: false`, e.g. a shell command with a line
// break, which the shell runs as more than one command) gets no "Always allow" buttons; the card
// shows the server's `grantReason` instead.
// Buttons act only on a person's gesture (`event.isTrusted`), so agent-made UI or scripts in
// the page cannot approve anything.

import {
  approvalDetails,
  approve,
  approveEdited,
  cancel,
  isApproval,
  isExpired,
  parseEditedArgs,
  reject,
} from "../interrupts.js";
import { h } from "./dom.js";

/**
 * @typedef {import("../interrupts.js").Interrupt} Interrupt
 * @typedef {import("../interrupts.js").ResumeEntry} ResumeEntry
 * @typedef {{ el: any, refresh: () => void }} Card
 * @typedef {{ args: any, argsText: string, setArgs: (text: string) => void, setStatus: (status: any) => void,
 *   attachApproval: (el: any) => void }} HostCard the tool call's card (./toolcard.js)
 */

/** What a file tool's approval asks. */
const FILE_QUESTIONS = {
  write_file: "Write this file?",
  edit_file: "Change this file?",
  create_directory: "Create this folder?",
  move_file: "Move this file?",
  delete_file: "Delete this file?",
  delete_directory: "Delete this folder?",
};

const TITLE_TEXT = {
  approved: "Approved",
  thread: "Approved, always in this thread",
  session: "Approved, always this session",
  edited: "Approved, edited",
  rejected: "Rejected",
  cancelled: "Cancelled",
};

const DECISION_TEXT = {
  approved: "Approved.",
  thread: "Approved; the same call runs without asking in this conversation from now on.",
  session: "Approved; the same call runs without asking in every conversation until the server restarts.",
  edited: "Approved with your edits.",
  rejected: "Rejected.",
  cancelled: "Cancelled.",
};

/** Run `fn` only for a person's click or key press. */
const trusted = (/** @type {(ev: any) => void} */ fn) => (/** @type {any} */ ev) => {
  if (ev?.isTrusted) fn(ev);
};

/** The interrupts of one finished run, answered together. */
class Batch {
  /**
   * @param {Interrupt[]} interrupts
   * @param {(resume: ResumeEntry[]) => void} onResolve
   */
  constructor(interrupts, onResolve) {
    this.ids = interrupts.map((i) => i.id);
    this.onResolve = onResolve;
    /** @type {Map<string, ResumeEntry>} */
    this.answers = new Map();
    /** @type {Card[]} */
    this.cards = [];
    this.sent = false;
  }

  get waiting() {
    return this.ids.length - this.answers.size;
  }

  /** Record one answer; send them all once the last one is in. False when it came too late. */
  answer(/** @type {string} */ id, /** @type {ResumeEntry} */ entry) {
    if (this.sent || this.answers.has(id)) return false;
    this.answers.set(id, entry);
    if (!this.waiting) this.sent = true;
    for (const c of this.cards) c.refresh();
    if (this.sent) this.onResolve(this.ids.map((i) => /** @type {ResumeEntry} */ (this.answers.get(i))));
    return true;
  }

  /** Said under an answered card while others still wait. */
  note() {
    if (this.sent || !this.waiting) return "";
    return ` It is sent when the other ${this.waiting === 1 ? "request is" : `${this.waiting} requests are`} answered.`;
  }
}

export class InterruptCards {
  /**
   * @param {Document} doc
   * @param {{ append: (node: any) => void, onResolve: (resume: ResumeEntry[]) => void,
   *   cardFor?: (toolCallId: string) => HostCard | undefined }} opts `cardFor`: the transcript's
   *   card of a tool call, which then holds its approval
   */
  constructor(doc, opts) {
    this.doc = doc;
    this.opts = opts;
    /** @type {Batch[]} */
    this.batches = [];
  }

  /** One card per interrupt, appended in order; returns the cards' elements. */
  show(/** @type {Interrupt[]} */ interrupts) {
    const list = interrupts.filter((i) => i && typeof i.id === "string");
    if (!list.length) return [];
    const batch = new Batch(list, this.opts.onResolve);
    this.batches.push(batch);
    for (const i of list) {
      const host = isApproval(i) && i.toolCallId ? this.opts.cardFor?.(i.toolCallId) : undefined;
      const card = isApproval(i) ? this.#approvalCard(i, batch, host) : this.#genericCard(i, batch);
      batch.cards.push(card);
      if (host) host.attachApproval(card.el);
      else this.opts.append(card.el);
    }
    return batch.cards.map((c) => c.el);
  }

  /** Forget every batch (the transcript was rebuilt). */
  reset() {
    this.batches = [];
  }

  /** @param {Interrupt} i @param {Batch} batch @param {HostCard} [host] @returns {Card} */
  #approvalCard(i, batch, host) {
    const doc = this.doc;
    const d = approvalDetails(i);
    const code = codeOf(i);
    // In the call's card, the card shows the code and arguments; make sure it has them.
    if (host && !host.argsText.trim()) host.setArgs(stringify(d.args ?? {}));
    // The arguments are what is asked about when there is no command or code to read.
    if (host && !d.command && code === null) host.args.open = true;
    const argsText = stringify(d.args);
    // Code is edited as itself: a person should not have to escape Python into a JSON string.
    const editText = code ?? argsText;
    const approveBtn = h(doc, "button", { cls: "gth-approve", text: "Approve", attrs: { type: "button" } });
    const editBtn = h(doc, "button", { cls: "gth-edit", text: "Edit", attrs: { type: "button", "aria-expanded": "false" } });
    const rejectBtn = h(doc, "button", { cls: "gth-reject", text: "Reject", attrs: { type: "button" } });
    const once = onceOnly(i);
    const grants = offersGrants(i) && once === null;
    const covers = d.command ? "this exact command" : code !== null ? "this exact code" : `every ${d.toolName || "call of this tool"} call`;
    const threadBtn = grants
      ? h(doc, "button", {
          cls: "gth-approve-thread",
          text: "Always allow in this thread",
          attrs: { type: "button", title: `Approve, and run ${covers} without asking in this conversation` },
        })
      : null;
    const sessionBtn = grants
      ? h(doc, "button", {
          cls: "gth-approve-session",
          text: "Always allow this session",
          attrs: { type: "button", title: `Approve, and run ${covers} without asking in any conversation until the server restarts` },
        })
      : null;
    const input = h(doc, "textarea", {
      cls: "gth-approval-input",
      attrs: {
        rows: String(Math.min(12, Math.max(3, editText.split("\n").length))),
        spellcheck: "false",
        "aria-label": code === null ? "Edited arguments (JSON)" : "Edited code",
      },
    });
    input.value = editText;
    const error = h(doc, "p", { cls: "gth-approval-error", attrs: { role: "alert" } });
    error.hidden = true;
    const submitText = code === null ? "Approve with these arguments" : "Approve this code";
    const submitBtn = h(doc, "button", { cls: "gth-approval-submit", text: submitText, attrs: { type: "button" } });
    const backBtn = h(doc, "button", { cls: "gth-approval-back", text: "Back", attrs: { type: "button" } });
    const editor = h(doc, "div", { cls: "gth-approval-editor" }, [
      input,
      h(doc, "div", { cls: "gth-approval-editor-actions" }, [submitBtn, backBtn]),
    ]);
    editor.hidden = true;
    // Inside the call's card the arguments are the card's own; on a card of its own they fold here.
    const args = host
      ? null
      : h(doc, "details", { cls: "gth-approval-args" }, [
          h(doc, "summary", { text: "Arguments" }),
          h(doc, "pre", { cls: "gth-approval-args-text", text: argsText }),
        ]);
    if (args && !d.command && code === null) args.open = true;
    const decision = h(doc, "p", { cls: "gth-approval-decision", attrs: { role: "status" } });
    const question = approvalQuestion(d.toolName, { code: code !== null, command: Boolean(d.command), runs: Boolean(d.args?.run) });
    const title = h(doc, "span", { cls: "gth-approval-title", text: question });
    const why = whyAsked(i.message, d.toolName);
    decision.hidden = true;
    const el = h(
      doc,
      "div",
      {
        cls: host ? "gth-approval gth-approval-inline" : "gth-approval",
        data: { interruptId: i.id, state: "pending", toolName: d.toolName },
        attrs: { role: "group", "aria-label": question },
      },
      [
        h(doc, "div", { cls: "gth-approval-head" }, [
          title,
          d.toolName && !host ? h(doc, "span", { cls: "gth-approval-tool", text: d.toolName }) : null,
        ]),
        d.command ? h(doc, "pre", { cls: "gth-approval-command", text: d.command }) : null,
        // The code shows once: in the call's card when there is one, else here.
        code !== null && !host ? h(doc, "pre", { cls: "gth-approval-code", text: code, data: { language: languageOf(i) } }) : null,
        why ? h(doc, "p", { cls: "gth-approval-why", text: why }) : null,
        d.rating?.verdict
          ? h(doc, "p", {
              cls: "gth-approval-rating",
              data: { verdict: String(d.rating.verdict) },
              text: `Rated ${d.rating.verdict}${d.rating.reason ? `: ${d.rating.reason}` : ""}`,
            })
          : null,
        d.validationError ? h(doc, "p", { cls: "gth-approval-invalid", text: d.validationError }) : null,
        once !== null ? h(doc, "p", { cls: "gth-approval-once", text: once }) : null,
        args,
        editor,
        error,
        h(doc, "div", { cls: "gth-approval-actions" }, [approveBtn, threadBtn, sessionBtn, editBtn, rejectBtn]),
        decision,
      ],
    );

    /** @type {keyof typeof DECISION_TEXT | null} */
    let state = null;
    const controls = [approveBtn, editBtn, rejectBtn, submitBtn, backBtn, input, threadBtn, sessionBtn].filter(Boolean);
    const card = {
      el,
      refresh: () => {
        if (!state) return;
        decision.textContent = DECISION_TEXT[state] + batch.note();
      },
    };
    const decide = (/** @type {keyof typeof DECISION_TEXT} */ how, /** @type {ResumeEntry} */ entry) => {
      if (state || batch.sent) return;
      if (isExpired(i)) {
        // An expired request can only be cancelled (the server reads that as a rejection).
        if (how !== "rejected") return showError("This request has expired; it can only be rejected.");
        entry = cancel(i.id);
      }
      state = how;
      el.dataset.state = how;
      if (host && how !== "rejected") host.setStatus("running"); // its result comes into the same card
      title.textContent = TITLE_TEXT[how]; // the card no longer asks for anything
      for (const c of controls) c.disabled = true;
      decision.hidden = false;
      batch.answer(i.id, entry);
      card.refresh();
    };
    const openEditor = (/** @type {boolean} */ open) => {
      editor.hidden = !open;
      // What is being edited is not shown twice: the editor stands in for the code or arguments.
      if (args) args.hidden = open;
      if (host) host.args.hidden = open;
      editBtn.setAttribute("aria-expanded", String(open));
      if (!open) error.hidden = true;
      if (open) input.focus?.();
    };
    const showError = (/** @type {string} */ message) => {
      error.textContent = message;
      error.hidden = false;
    };
    const submitEdit = () => {
      const parsed = code === null ? parseEditedArgs(input.value) : editedCodeArgs(d.args, input.value, codeArgumentOf(i));
      if (!parsed.ok) {
        showError(parsed.error);
        input.setAttribute("aria-invalid", "true");
        return;
      }
      error.hidden = true;
      input.removeAttribute("aria-invalid");
      decide("edited", approveEdited(i.id, parsed.value));
      if (host && state === "edited") {
        host.setArgs(stringify(parsed.value)); // the card shows the code that runs
        host.args.hidden = false;
      }
    };
    approveBtn.addEventListener("click", trusted(() => decide("approved", approve(i.id))));
    rejectBtn.addEventListener("click", trusted(() => decide("rejected", reject(i.id))));
    threadBtn?.addEventListener("click", trusted(() => decide("thread", approveAlways(i.id, "thread"))));
    sessionBtn?.addEventListener("click", trusted(() => decide("session", approveAlways(i.id, "session"))));
    editBtn.addEventListener("click", trusted(() => openEditor(editor.hidden)));
    backBtn.addEventListener("click", trusted(() => openEditor(false)));
    submitBtn.addEventListener("click", trusted(submitEdit));
    input.addEventListener(
      "keydown",
      trusted((/** @type {KeyboardEvent} */ ev) => {
        if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
          ev.preventDefault();
          submitEdit();
        }
      }),
    );
    return card;
  }

  /** @param {Interrupt} i @param {Batch} batch @returns {Card} */
  #genericCard(i, batch) {
    const doc = this.doc;
    const cancelBtn = h(doc, "button", { cls: "gth-interrupt-cancel", text: "Cancel", attrs: { type: "button" } });
    const decision = h(doc, "p", { cls: "gth-interrupt-decision", attrs: { role: "status" } });
    decision.hidden = true;
    const el = h(doc, "div", { cls: "gth-interrupt", data: { interruptId: i.id, state: "pending", reason: String(i.reason ?? "") } }, [
      h(doc, "p", { cls: "gth-interrupt-message", data: { interruptId: i.id }, text: i.message || `The agent is waiting (${i.reason ?? "interrupt"}).` }),
      cancelBtn,
      decision,
    ]);
    let done = false;
    const card = {
      el,
      refresh: () => {
        if (done) decision.textContent = DECISION_TEXT.cancelled + batch.note();
      },
    };
    cancelBtn.addEventListener(
      "click",
      trusted(() => {
        if (done || batch.sent) return;
        done = true;
        cancelBtn.disabled = true;
        el.dataset.state = "cancelled";
        decision.hidden = false;
        batch.answer(i.id, cancel(i.id));
        card.refresh();
      }),
    );
    return card;
  }
}

/**
 * Approve, and let such calls run without asking from now on (in this thread, or this session).
 * @param {string} interruptId
 * @param {"thread" | "session"} grant
 * @returns {ResumeEntry}
 */
export const approveAlways = (interruptId, grant) => ({ interruptId, status: "resolved", payload: { approved: true, grant } });

/**
 * The question an approval asks, in plain words.
 * @param {string} toolName
 * @param {{ code?: boolean, command?: boolean, runs?: boolean }} what whether it carries code, a
 *   shell command, and whether the code runs now (insert_cell's `run`)
 */
export function approvalQuestion(toolName, { code = false, command = false, runs = false } = {}) {
  // Code written into the notebook runs later, at the next Run All; a module file when imported.
  if (code && toolName === "insert_cell" && !runs) return "Put this code in your notebook?";
  if (code && toolName === "edit_cell") return "Change this code cell?";
  if (code && toolName in FILE_QUESTIONS) return FILE_QUESTIONS[/** @type {keyof typeof FILE_QUESTIONS} */ (toolName)];
  if (code) return "Run this code in your kernel?";
  if (command) return "Run this command?";
  return FILE_QUESTIONS[/** @type {keyof typeof FILE_QUESTIONS} */ (toolName)] ?? "Call this tool?";
}

/**
 * Why the person is asked, in plain words, from the server's message ("The agent wants to <what>:
 * <reason>."), or "" when it does not say.
 * @param {unknown} message
 * @param {string} toolName
 */
export function whyAsked(message, toolName) {
  if (typeof message !== "string" || !message) return "";
  const mode = /approvals mode '([^']+)' asks you before/.exec(message);
  if (mode) return `You are asked because approvals are set to "${mode[1]}".`;
  const rule = /it matches the escalate rule (\{.*?\})(?:;|\.?$)/.exec(message);
  if (rule) return `You are asked because this approvals rule always asks: ${rule[1]}.`;
  // Otherwise the reason as the server gave it (an auto-rater's verdict, failed validation).
  const marks = [`(${toolName}): `, `call ${toolName}: `];
  const at = marks.map((m) => ({ m, k: toolName ? message.indexOf(m) : -1 })).find((x) => x.k >= 0);
  const reason = at ? message.slice(at.k + at.m.length) : message;
  return reason ? reason[0].toUpperCase() + reason.slice(1) : "";
}

/** Whether the server that asked reads standing grants (its response schema names `grant`). */
function offersGrants(/** @type {Interrupt} */ i) {
  const schema = /** @type {any} */ (i)?.responseSchema ?? i?.metadata?.gth?.value?.responseSchema;
  return Boolean(schema?.properties?.grant);
}

/** Why the server will not grant this call (it sent `grantable: false`), else null. */
function onceOnly(/** @type {Interrupt} */ i) {
  const value = i?.metadata?.gth?.value;
  if (value?.grantable !== false) return null;
  const reason = value.grantReason;
  return typeof reason === "string" && reason ? reason : "This call can be approved only this once, never always allowed.";
}

/** The code an approval shows (`code` beside the args, as run_python sends it), else null. */
function codeOf(/** @type {Interrupt} */ i) {
  const code = i?.metadata?.gth?.value?.code;
  return typeof code === "string" ? code : null;
}

function languageOf(/** @type {Interrupt} */ i) {
  const language = i?.metadata?.gth?.value?.language;
  return typeof language === "string" && language ? language : "text";
}

/** The argument holding the code (`codeArgument`: insert_cell's `source`), else `code`. */
function codeArgumentOf(/** @type {Interrupt} */ i) {
  const argument = i?.metadata?.gth?.value?.codeArgument;
  return typeof argument === "string" && argument ? argument : "code";
}

/**
 * The tool's arguments with the edited code in place of the old, in the argument that holds it
 * (so the card shows the arguments that run; the server also moves an edited `code` there).
 * @param {any} args
 * @param {string} text
 * @param {string} argument
 * @returns {{ ok: true, value: object } | { ok: false, error: string }}
 */
function editedCodeArgs(args, text, argument) {
  if (!String(text).trim()) return { ok: false, error: "The code is empty; reject the call instead." };
  const base = args && typeof args === "object" && !Array.isArray(args) ? args : {};
  return { ok: true, value: { ...base, [argument]: String(text) } };
}

/** Arguments as pretty JSON (a string argument is shown as it is). */
function stringify(/** @type {any} */ value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value ?? {}, null, 2) ?? "{}";
  } catch {
    return String(value);
  }
}
