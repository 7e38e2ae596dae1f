// What the transcript shows beside messages and tool cards, fed by the same controller events:
// live tool output (`CUSTOM gth.tool_output` into the tool's card), the `gth_checklist` panel
// above the composer, the `gth_status_update` line under the header, and the interrupt cards
// (approvals). The transcript hands every event here first (`TranscriptView.handle`).

import { isApproval } from "../interrupts.js";
import { InterruptCards } from "./approval.js";
import { CHECKLIST_TOOL, ChecklistPanel, itemsFromArgs, itemsFromResult } from "./checklist.js";
import { contentParts } from "./dom.js";
import { STATUS_TOOL, StatusLine, statusFromArgs } from "./status.js";

export const TOOL_OUTPUT_EVENT = "gth.tool_output";

/**
 * @typedef {import("../interrupts.js").ResumeEntry} ResumeEntry
 * @typedef {import("./checklist.js").ChecklistItem} ChecklistItem
 * @typedef {{ name: typeof CHECKLIST_TOOL | typeof STATUS_TOOL, args: string, seq: number }} LiveCall
 * @typedef {{ doc: Document, root: any, composer: { el: any }, frames: import("./frame.js").FrameScheduler,
 *   cards: Map<string, import("./toolcard.js").ToolCard>, append: (node: any) => void,
 *   cardFor: (id: string | undefined, name: string) => import("./toolcard.js").ToolCard }} Host
 */

export class LiveParts {
  /**
   * @param {Host} view the transcript view
   * @param {{ onResolveInterrupts?: (resume: ResumeEntry[]) => void }} handlers
   */
  constructor(view, handlers = {}) {
    this.view = view;
    const doc = view.doc;
    this.status = new StatusLine(doc);
    this.checklist = new ChecklistPanel(doc);
    const header = view.root.querySelector(".gth-header");
    view.root.insertBefore(this.status.el, header ? header.nextSibling : view.root.firstChild);
    view.root.insertBefore(this.checklist.el, view.composer.el);
    this.interrupts = new InterruptCards(doc, {
      append: (node) => view.append(node),
      onResolve: (resume) => handlers.onResolveInterrupts?.(resume),
      // An approval goes into its call's card: the code once, the result in the same place.
      cardFor: (id) => view.cards.get(id),
    });
    /** @type {Map<string, LiveCall>} calls to the checklist and status tools, by id */
    this.calls = new Map();
    this.seq = 0;
    /** The newest call shown, per tool: an older call's late paint must not win. */
    this.shown = { [CHECKLIST_TOOL]: -1, [STATUS_TOOL]: -1 };
    /** @type {ChecklistItem[] | null} the last list the tool accepted */
    this.accepted = null;
  }

  /** @param {import("../chat/controller.js").ChatEvent} e */
  handle(e) {
    switch (e.type) {
      case "agui":
        return this.onAgui(e.event);
      case "run-state":
        if (!e.running) this.status.clear();
        return;
      case "history":
        return this.fromHistory(e.messages);
    }
  }

  /** @param {any} ev an AG-UI event */
  onAgui(ev) {
    switch (ev?.type) {
      case "TOOL_CALL_START":
        if (ev.toolCallName === CHECKLIST_TOOL || ev.toolCallName === STATUS_TOOL) {
          this.calls.set(ev.toolCallId, { name: ev.toolCallName, args: "", seq: this.seq++ });
        }
        return;
      case "TOOL_CALL_ARGS": {
        const call = this.calls.get(ev.toolCallId);
        if (!call) return;
        call.args += ev.delta ?? "";
        // Parsed at most once a frame: the list shows as soon as its JSON is whole.
        this.view.frames.mark(`live:${ev.toolCallId}`, () => this.applyArgs(ev.toolCallId, call));
        return;
      }
      case "TOOL_CALL_END": {
        const call = this.calls.get(ev.toolCallId);
        if (call) this.applyArgs(ev.toolCallId, call);
        return;
      }
      case "TOOL_CALL_RESULT":
        return this.applyResult(ev.toolCallId, ev.content);
      case "CUSTOM":
        if (ev.name === TOOL_OUTPUT_EVENT) this.toolOutput(ev.value);
        return;
    }
  }

  applyArgs(/** @type {string} */ id, /** @type {LiveCall} */ call) {
    if (call.seq < this.shown[call.name]) return;
    if (call.name === CHECKLIST_TOOL) {
      const items = itemsFromArgs(call.args);
      if (!items) return;
      this.shown[call.name] = call.seq;
      this.checklist.set(items, id);
    } else {
      const text = statusFromArgs(call.args);
      if (text === null) return;
      this.shown[call.name] = call.seq;
      this.status.set(text);
    }
  }

  applyResult(/** @type {string} */ id, /** @type {any} */ content) {
    const call = this.calls.get(id);
    if (!call || call.name !== CHECKLIST_TOOL || call.seq < this.shown[call.name]) return;
    // The tool's answer is the list it kept; a rejected list leaves the last one standing.
    const items = itemsFromResult(contentParts(content).text);
    if (items) this.accepted = items;
    if (items || this.accepted) {
      this.shown[call.name] = call.seq;
      this.checklist.set(items ?? /** @type {ChecklistItem[]} */ (this.accepted), id);
    }
  }

  /** A chunk of a running tool's output, into that tool's card. */
  toolOutput(/** @type {any} */ value) {
    if (!value || typeof value.chunk !== "string") return;
    const name = typeof value.name === "string" && value.name ? value.name : "tool";
    const id = typeof value.toolCallId === "string" && value.toolCallId ? value.toolCallId : undefined;
    const card = id ? this.view.cardFor(id, name) : this.runningCard(name);
    card.appendOutput(value.chunk, { notice: Boolean(value.isNotice) });
  }

  /** Without a call id: the newest running card of that tool (a new card if there is none). */
  runningCard(/** @type {string} */ name) {
    const cards = [...this.view.cards.values()];
    for (let k = cards.length - 1; k >= 0; k--) if (cards[k].name === name && cards[k].status === "running") return cards[k];
    return this.view.cardFor(undefined, name);
  }

  /** Cards for interrupts; a tool call waiting for approval says so on its card. */
  showInterrupts(/** @type {any[]} */ interrupts) {
    const els = this.interrupts.show(interrupts);
    for (const i of interrupts) if (isApproval(i) && i.toolCallId) this.view.cards.get(i.toolCallId)?.setStatus("waiting");
    return els;
  }

  /** The transcript is rebuilt from the server's messages: the checklist is the last one kept. */
  fromHistory(/** @type {any[]} */ messages) {
    this.calls.clear();
    this.shown = { [CHECKLIST_TOOL]: -1, [STATUS_TOOL]: -1 };
    this.status.clear();
    this.interrupts.reset();
    /** @type {Set<string>} */
    const checklistCalls = new Set();
    /** @type {ChecklistItem[] | null} */
    let accepted = null;
    /** @type {{ id: string, items: ChecklistItem[] } | null} a call not answered (yet) */
    let open = null;
    let lastId = "";
    for (const m of messages ?? []) {
      if (m?.role === "assistant") {
        for (const tc of m.toolCalls ?? []) {
          if (tc?.function?.name !== CHECKLIST_TOOL) continue;
          checklistCalls.add(tc.id);
          const items = itemsFromArgs(tc.function.arguments ?? "");
          open = items ? { id: tc.id, items } : open;
        }
      } else if (m?.role === "tool" && checklistCalls.has(m.toolCallId)) {
        const items = itemsFromResult(contentParts(m.content).text);
        if (items) {
          accepted = items;
          lastId = m.toolCallId;
        }
        if (open?.id === m.toolCallId) open = null;
      }
    }
    this.accepted = accepted;
    if (open) this.checklist.set(open.items, open.id);
    else if (accepted) this.checklist.set(accepted, lastId);
    else this.checklist.clear();
  }
}
