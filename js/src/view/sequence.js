// What the sequence diagram shows, without the DOM: the chat's events (AG-UI events included)
// become arrows between three lanes: the page (this widget), the server (the AG-UI endpoint)
// and the graph (the LangGraph agent behind it). view/sequencesvg.js draws them.
//
// The cycle of a client tool reads top to bottom: POST run (page → server), RUN_STARTED, the
// graph's text and tool-call events, the suspend (RUN_FINISHED with pendingToolCallIds, or an
// interrupt outcome), the page fulfilling the tool, and the next POST that resumes the graph.
// Consecutive events of one group (the deltas of one message, the args of one tool call) share
// one arrow with a count, so a long answer stays one arrow and adding an event costs O(1).

/** @typedef {"page" | "server" | "graph"} Lane */
/** @typedef {"request" | "event" | "graph" | "suspend" | "fulfil" | "finish" | "error" | "note"} ArrowKind */
/**
 * @typedef {{ seq: number, kind: ArrowKind, from: Lane, to: Lane, type: string, key: string,
 *   title: string, parts: string[], count: number, detail: string, version: number }} Arrow
 */

export const LANES = /** @type {Lane[]} */ (["page", "server", "graph"]);
export const LANE_TITLES = { page: "page (browser)", server: "server (AG-UI)", graph: "graph (LangGraph)" };
const MAX_NAME = 24;

export class SequenceModel {
  constructor() {
    /** @type {Arrow[]} */
    this.arrows = [];
    /** Arrows dropped from the front (see `trim`). */
    this.dropped = 0;
    this.seq = 0;
    /** The POST for the next run was drawn and its RUN_STARTED has not come yet. */
    this.requested = false;
    /** Between RUN_STARTED and the run's end. */
    this.inRun = false;
    /** What the next request carries: tool results the page produced, or interrupt answers. */
    this.resumeWith = /** @type {"" | "tools" | "interrupts"} */ ("");
    /** What the last request carried. */
    this.requestResume = "";
    this.runs = 0;
    /** @type {Map<string, string>} tool names by call id, for the suspend's label */
    this.toolNames = new Map();
    /** @type {Map<string, Arrow>} the fulfil arrow of each client tool call */
    this.fulfils = new Map();
  }

  get last() {
    return this.arrows[this.arrows.length - 1];
  }

  /**
   * One chat event (see chat/controller.js `ChatEvent`).
   * @param {any} e
   */
  handle(e) {
    switch (e?.type) {
      case "agui":
        return this.agui(e.event ?? {});
      case "request":
        return this.request();
      case "user":
        return this.push("note", "page", "page", "user message", "user", clip(textOf(e.message?.content), 28));
      case "tool-run":
        return this.fulfil(e);
      case "interrupt": {
        const n = Array.isArray(e.interrupts) ? e.interrupts.length : 0;
        this.resumeWith = "interrupts";
        return this.push("fulfil", "page", "page", "ask you", "interrupt", `${n} interrupt${n === 1 ? "" : "s"}`);
      }
      case "error":
        return this.error(String(e.code || "error"));
      case "stopped":
        this.requested = false;
        this.inRun = false;
        return this.push("note", "page", "page", "Stop", "stopped", "request aborted");
    }
  }

  /** The page POSTs a run: a new turn, or a resume carrying tool results or answers. */
  request() {
    const how = this.resumeWith;
    this.resumeWith = "";
    this.requested = true;
    const label = how === "tools" ? "POST run · resume: tool results" : how === "interrupts" ? "POST run · resume[] answers" : "POST run";
    this.requestResume = how;
    this.push("request", "page", "server", label, "request", "");
  }

  /** @param {any} ev an AG-UI event */
  agui(ev) {
    if (ev.gthDerived) return; // drawn by the page from a delta it applied: not on the wire
    const type = String(ev.type ?? "?");
    switch (type) {
      case "RUN_STARTED": {
        // Without a `request` event (an older controller), the POST is drawn now.
        if (!this.requested) this.request();
        this.requested = false;
        this.inRun = true;
        this.runs += 1;
        this.push("event", "server", "page", "RUN_STARTED", type, `run ${this.runs}`);
        return this.push("graph", "server", "graph", this.requestResume ? "resume the graph" : "start the graph", "graph", "");
      }
      case "RUN_FINISHED":
        return this.finish(ev);
      case "RUN_ERROR":
        this.inRun = false;
        this.push("graph", "graph", "server", "graph fails", "graph", "");
        return this.push("error", "server", "page", "RUN_ERROR", type, clip(ev.code ?? "", MAX_NAME));
      case "TEXT_MESSAGE_START":
      case "TEXT_MESSAGE_CONTENT":
      case "TEXT_MESSAGE_END":
      case "TEXT_MESSAGE_CHUNK":
        return this.group(`text:${ev.messageId ?? ""}`, "TEXT_MESSAGE", type, "");
      case "REASONING_START":
      case "REASONING_END":
      case "REASONING_MESSAGE_START":
      case "REASONING_MESSAGE_CONTENT":
      case "REASONING_MESSAGE_END":
      case "REASONING_MESSAGE_CHUNK":
        return this.group(`reasoning:${ev.messageId ?? ""}`, "REASONING", type.replace("REASONING_MESSAGE", "MESSAGE"), "");
      case "TOOL_CALL_START":
      case "TOOL_CALL_ARGS":
      case "TOOL_CALL_END":
      case "TOOL_CALL_CHUNK": {
        const id = String(ev.toolCallId ?? "");
        if (ev.toolCallName) this.toolNames.set(id, String(ev.toolCallName));
        return this.group(`tool:${id}`, "TOOL_CALL", type, clip(this.toolNames.get(id) ?? "", MAX_NAME));
      }
      case "TOOL_CALL_RESULT":
        return this.merge(type, "event", "graph", "page", type, "");
      case "STEP_STARTED":
      case "STEP_FINISHED":
      case "ACTIVITY_SNAPSHOT":
      case "ACTIVITY_DELTA":
        return this.merge(type, "event", "graph", "page", type, "");
      case "CUSTOM":
        return this.merge(`CUSTOM:${ev.name}`, "event", "graph", "page", type, clip(String(ev.name ?? ""), MAX_NAME));
      default:
        return this.merge(type, "event", "server", "page", type, "");
    }
  }

  /** RUN_FINISHED: the graph ended, or suspended on client tools or interrupts. */
  finish(/** @type {any} */ ev) {
    this.inRun = false;
    const outcome = ev.outcome ?? {};
    const pending = Array.isArray(outcome.pendingToolCallIds) ? outcome.pendingToolCallIds : [];
    if (outcome.type === "interrupt") {
      const reasons = [...new Set((outcome.interrupts ?? []).map((/** @type {any} */ i) => String(i?.reason ?? "interrupt")))];
      this.push("graph", "graph", "server", "graph suspends (interrupt)", "graph", "");
      return this.push("suspend", "server", "page", "RUN_FINISHED", "RUN_FINISHED", clip(`interrupt: ${reasons.join(", ")}`, 40));
    }
    if (pending.length) {
      const names = pending.map((/** @type {string} */ id) => this.toolNames.get(id) ?? id);
      this.push("graph", "graph", "server", "graph suspends (client tool)", "graph", "");
      return this.push("suspend", "server", "page", "RUN_FINISHED", "RUN_FINISHED", clip(`pending: ${names.join(", ")}`, 40));
    }
    this.push("graph", "graph", "server", "graph ends", "graph", "");
    return this.push("finish", "server", "page", "RUN_FINISHED", "RUN_FINISHED", clip(String(outcome.type ?? "success"), MAX_NAME));
  }

  /** The page runs a client tool (capture_image, ask_user, ...): one arrow, updated in place. */
  fulfil(/** @type {any} */ e) {
    const id = String(e.toolCallId ?? "");
    const name = clip(String(e.name ?? "tool"), MAX_NAME);
    const status = String(e.status ?? "");
    let arrow = this.fulfils.get(id);
    if (!arrow || status === "running") {
      arrow = this.push("fulfil", "page", "page", "fulfil", "fulfil", name);
      this.fulfils.set(id, arrow);
    }
    arrow.parts = [status === "running" ? "running…" : status === "done" ? "done ✓" : status];
    arrow.version += 1;
    if (status === "done" || status === "error") this.resumeWith = "tools";
    return arrow;
  }

  /** A controller error: a refused request (HTTP status, no stream), or a note on the page. */
  error(/** @type {string} */ code) {
    if (this.requested) {
      this.requested = false;
      return this.push("error", "server", "page", "refused", "error", clip(code, MAX_NAME));
    }
    if (this.last?.type === "RUN_ERROR") return this.last; // the same failure, already drawn
    return this.push("error", "page", "page", "error", "error", clip(code, MAX_NAME));
  }

  /** Events of one group (a message, a tool call) share the arrow while they come in a row. */
  group(/** @type {string} */ key, /** @type {string} */ title, /** @type {string} */ type, /** @type {string} */ detail) {
    const part = type.replace(`${title}_`, "");
    let arrow = this.last;
    if (!arrow || arrow.key !== key) {
      arrow = this.push("event", "graph", "page", title, type, detail);
      arrow.key = key;
      arrow.parts = [];
      arrow.count = 0;
    }
    arrow.count += 1;
    const tail = arrow.parts[arrow.parts.length - 1];
    if (tail && tail.split(" ×")[0] === part) {
      const n = Number(tail.split(" ×")[1] ?? 1) + 1;
      arrow.parts[arrow.parts.length - 1] = `${part} ×${n}`;
    } else arrow.parts.push(part);
    if (detail) arrow.detail = detail;
    arrow.version += 1;
    return arrow;
  }

  /** Consecutive events of one key share an arrow with a count. */
  merge(/** @type {string} */ key, /** @type {ArrowKind} */ kind, /** @type {Lane} */ from, /** @type {Lane} */ to, /** @type {string} */ type, /** @type {string} */ detail) {
    const last = this.last;
    if (last && last.key === key) {
      last.count += 1;
      last.version += 1;
      return last;
    }
    const arrow = this.push(kind, from, to, type, type, detail);
    arrow.key = key;
    return arrow;
  }

  /** @returns {Arrow} */
  push(/** @type {ArrowKind} */ kind, /** @type {Lane} */ from, /** @type {Lane} */ to, /** @type {string} */ title, /** @type {string} */ type, /** @type {string} */ detail) {
    /** @type {Arrow} */
    const arrow = { seq: ++this.seq, kind, from, to, type, key: `#${this.seq}`, title, parts: [], count: 1, detail, version: 0 };
    this.arrows.push(arrow);
    return arrow;
  }

  /** Keep at most `max` arrows: drop the oldest `chunk` at a time. Returns how many went. */
  trim(/** @type {number} */ max, /** @type {number} */ chunk) {
    if (this.arrows.length <= max) return 0;
    const n = Math.min(this.arrows.length, this.arrows.length - max + chunk);
    const gone = this.arrows.splice(0, n);
    this.dropped += n;
    for (const a of gone) for (const [id, f] of this.fulfils) if (f === a) this.fulfils.delete(id);
    return n;
  }
}

/** The words an arrow shows: its title, its parts (or count) and a detail. */
export function labelOf(/** @type {Arrow} */ a) {
  const parts = a.parts.length ? ` ${a.parts.join(" · ")}` : a.count > 1 ? ` ×${a.count}` : "";
  const detail = a.detail ? ` ${a.detail}` : "";
  return clip(a.kind === "event" && a.parts.length ? `${a.title}${detail}:${parts}` : `${a.title}${detail}${parts}`, 60);
}

/** @param {string} text @param {number} max */
export function clip(text, max) {
  const t = String(text ?? "").replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

function textOf(/** @type {any} */ content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p?.type === "text" ? String(p.text ?? "") : `[${p?.type ?? "part"}]`)).join(" ");
}
