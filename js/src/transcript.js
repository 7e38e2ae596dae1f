// The chat's DOM view. It turns the controller's events (AG-UI events included) into a
// transcript: user and assistant messages, collapsed reasoning, tool-call cards, A2UI
// surfaces, errors and interrupts, plus the header, the input row and the event log.
// Streamed text is buffered and painted at most once per animation frame.

import { A2uiHost } from "./a2ui/host.js";
import { messagesFromActivity } from "./a2ui/normalize.js";
import { MarkdownStream } from "./markdown.js";
import { MediaPolicy, upgradeMedia } from "./media.js";
import { askInto } from "./view/ask.js";
import { Composer } from "./view/composer.js";
import { contentParts, h } from "./view/dom.js";
import { EventLog } from "./view/eventlog.js";
import { FrameScheduler } from "./view/frame.js";
import { LiveParts } from "./view/live.js";
import { ToolCard } from "./view/toolcard.js";
import { UsageLines } from "./view/usage.js";
import { ChangesCards } from "./view/changes.js";
import { WaitingLine } from "./view/waiting.js";

export const A2UI_TOOL = "show_a2ui_surface";

/**
 * @typedef {{ onSend: (text: string) => boolean, onStop: () => void, onAction: (action: object) => void,
 *   onResolveInterrupts: (resume: import("./interrupts.js").ResumeEntry[]) => void }} ViewHandlers
 */

/** Said when a run starts from before this cell's earlier turn (the cell ran again). */
export const REPLACED_TEXT = "Replaced this cell's earlier turn (an approval or a browser tool it waited on is cancelled): the agent goes on from the conversation before it.";
/** Said over a turn no longer in the conversation (a cell above it ran again since). */
export const EARLIER_RUN_TEXT = "From an earlier run: a cell above ran again since, so the agent no longer sees this turn. Run this cell again to bring it back.";

export class TranscriptView {
  /** @param {{ doc: Document, el: any, raf?: (cb: () => void) => any } & ViewHandlers} opts */
  constructor(opts) {
    const doc = (this.doc = opts.doc);
    this.handlers = opts;
    this.frames = new FrameScheduler(opts.raf);
    this.stats = { markdownRenders: 0 };
    /** @type {Map<string, { el: any, body: any, text: string, role: string, markdown?: MarkdownStream }>} */
    this.messages = new Map();
    /** @type {Map<string, ToolCard>} */
    this.cards = new Map();
    /** @type {Map<string, string>} */
    this.toolLabels = new Map();
    /** @type {Map<string, any>} */
    this.activities = new Map();
    /** Which agent media load without a click (media.js); the agent's info sets its hosts. */
    this.media = new MediaPolicy();
    /** The agent's approvals mode, from its info ("" until it comes): `bypass` alone lets the
     * notebook tools rewrite a `%gth` cell. */
    this.approvalMode = "";
    /** The model written into a cell's provenance ("" for none). */
    this.provenanceModel = "";
    this.host = new A2uiHost({ doc, onAction: (a) => opts.onAction(a), media: this.media });

    this.model = h(doc, "span", { cls: "gth-model" });
    this.offline = h(doc, "span", { cls: "gth-badge gth-badge-offline", text: "offline" });
    this.offline.hidden = true;
    this.transport = h(doc, "span", { cls: "gth-transport" });
    this.logToggle = h(doc, "button", { cls: "gth-log-toggle", text: "Events", attrs: { type: "button", "aria-pressed": "false" } });
    this.log = new EventLog(doc, this.frames);
    this.logToggle.addEventListener("click", () => this.showLog(!this.log.visible));
    this.list = h(doc, "div", { cls: "gth-transcript", attrs: { role: "log", "aria-live": "polite" } });
    /** Each turn's cost line, and the conversation's total in the header (src/view/usage.js). */
    this.usage = new UsageLines(doc, this);
    /** Each turn's Changes card: the cells it inserted or edited (view/changes.js). */
    this.changes = new ChangesCards(doc, this);
    this.composer = new Composer(doc, { onSend: opts.onSend, onStop: opts.onStop });
    /** Why a prompt has not gone out yet: cell order, or a busy thread (src/order.js). */
    this.waiting = new WaitingLine(doc);
    this.root = h(doc, "div", { cls: "gth-root", data: { state: "idle" } }, [
      h(doc, "div", { cls: "gth-header" }, [h(doc, "span", { cls: "gth-title", text: "gth" }), this.model, this.offline, this.transport, this.usage.totalEl, this.logToggle]),
      h(doc, "div", { cls: "gth-body" }, [this.list, this.log.el]),
      this.waiting.el,
      this.composer.el,
    ]);
    opts.el.append(this.root);
    /** Tool output, the checklist, the status line, interrupt cards (src/view/live.js). */
    this.live = new LiveParts(this, { onResolveInterrupts: (resume) => opts.onResolveInterrupts(resume) });
    // Follow the stream unless the reader scrolled up.
    this.stick = true;
    this.list.addEventListener("scroll", () => {
      this.stick = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 40;
    });
    this.frames.after = () => {
      if (this.stick) this.list.scrollTop = this.list.scrollHeight;
    };
    // An image (a plot, a photo) gets its height only once it has loaded, after the frame that
    // scrolled: follow it, so the answer after it stays in view. `load` does not bubble.
    this.list.addEventListener(
      "load",
      () => {
        if (this.stick) this.list.scrollTop = this.list.scrollHeight;
      },
      true,
    );
    /**
     * What a person can do from a tool card (Insert as cell, set by ./tools/notebook.js's linkNotebook).
     * @type {import("./view/kernelcards.js").CardActions}
     */
    this.cardActions = {};
    /** Hooks the browser tools use (ask_user, capture_image's thumbnail). */
    this.toolUi = {
      ask: (/** @type {any} */ q) => askInto(doc, this.cardFor(q.toolCallId, "ask_user").body, q),
      showImage: (/** @type {string | undefined} */ id, /** @type {string} */ url) => this.cardFor(id, "capture_image").showImage(url),
    };
  }

  /** Add a block at the end of the transcript; the next frame scrolls to it. */
  append(/** @type {any} */ node) {
    this.list.append(node);
    this.frames.mark("scroll", () => {});
  }

  setHeader(/** @type {{ modelLabel?: string, offline?: boolean, transport?: string }} */ info) {
    if (info.modelLabel !== undefined) this.model.textContent = info.modelLabel;
    if (info.offline !== undefined) this.offline.hidden = !info.offline;
    if (info.transport !== undefined) {
      this.transport.textContent = info.transport;
      this.root.dataset.transport = info.transport;
    }
  }

  /** Trust these hosts' media (`a2ui.imageHosts`); placeholders from them load now. */
  setMediaHosts(/** @type {unknown} */ hosts) {
    this.media.setHosts(hosts);
    upgradeMedia(this.root, this.media);
  }

  /** Show or hide the AG-UI event log (the header toggle, or the `show_event_log` trait). */
  showLog(/** @type {boolean} */ show) {
    this.logToggle.setAttribute("aria-pressed", String(this.log.toggle(show)));
  }

  /** Ready once the history has loaded (browser tests wait for `.gth-root[data-ready=true]`). */
  setReady(/** @type {boolean} */ ready, /** @type {string} */ threadId = "") {
    this.root.dataset.ready = String(ready);
    if (threadId) this.root.dataset.threadId = threadId;
    this.composer.setReady(ready);
  }

  /** @param {{ text: string, actions?: { label: string, run: () => void }[] } | null} state */
  setWaiting(state) {
    this.waiting.set(state);
    this.root.dataset.waiting = String(Boolean(state));
  }

  setRunning(/** @type {boolean} */ running) {
    this.root.dataset.state = running ? "running" : "idle";
    this.composer.setRunning(running);
  }

  /** Handle one controller event. @param {import("./chat/controller.js").ChatEvent} e */
  handle(e) {
    this.live.handle(e);
    this.log.handle(e); // its sequence diagram reads every event, its list the AG-UI ones
    switch (e.type) {
      case "agui":
        return this.onAgui(e.event);
      case "user":
        this.usage.newTurn();
        this.changes.newTurn();
        return this.addUser(e.message);
      case "run-state":
        return this.setRunning(e.running);
      case "tool-run": {
        const card = this.cardFor(e.toolCallId, e.name);
        if (e.content !== undefined) {
          card.setResult(e.content);
          this.changes.toolRan(e.toolCallId, e.name, card.argsText, e.content);
        }
        return card.setStatus(e.status);
      }
      case "tool-output":
        return this.cardFor(e.toolCallId, "tool").addOutput(e.line);
      case "interrupt":
        return this.addInterrupts(e.interrupts);
      case "error":
        return this.addError(e.code, e.message);
      case "stopped":
        return this.addNote("Stopped.", "stopped");
      case "history":
        return this.renderHistory(e.messages);
    }
  }

  /** @param {any} ev an AG-UI event */
  onAgui(ev) {
    switch (ev.type) {
      case "TEXT_MESSAGE_START":
        this.message(ev.messageId, ev.role || "assistant");
        return;
      case "TEXT_MESSAGE_CONTENT":
        return this.appendText(ev.messageId, ev.delta, "assistant");
      case "REASONING_MESSAGE_START":
        this.message(ev.messageId, "reasoning");
        return;
      case "REASONING_MESSAGE_CONTENT":
        return this.appendText(ev.messageId, ev.delta, "reasoning");
      case "TOOL_CALL_START":
        this.cardFor(ev.toolCallId, ev.toolCallName);
        return;
      case "TOOL_CALL_ARGS":
        return this.cardFor(ev.toolCallId, "tool").appendArgs(ev.delta);
      case "TOOL_CALL_END": {
        const card = this.cardFor(ev.toolCallId, "tool");
        return card.setArgs(card.argsText);
      }
      case "TOOL_CALL_RESULT":
        return this.applyResult(ev.toolCallId, ev.content);
      case "ACTIVITY_SNAPSHOT":
        return this.addActivity(ev.messageId, ev);
      case "RUN_STARTED":
        this.usage.runStarted(ev.runId);
        // The server branched: this cell ran again and its new turn replaces the earlier one.
        if (ev.parentRunId) this.addNote(REPLACED_TEXT, "muted");
        return;
      case "RUN_FINISHED":
      case "RUN_ERROR":
        this.changes.runEnded(); // then the cost line, which ends the turn
        return this.usage.runEnded(ev);
    }
  }

  /** The message block for `id`, created at the end of the transcript when new. */
  message(/** @type {string} */ id, /** @type {string} */ role) {
    let m = this.messages.get(id);
    if (m) return m;
    const kind = role === "reasoning" ? "reasoning" : role === "user" ? "user" : "assistant";
    if (kind === "reasoning") {
      const body = h(this.doc, "div", { cls: "gth-reasoning-text" });
      const el = h(this.doc, "details", { cls: "gth-reasoning", data: { messageId: id } }, [h(this.doc, "summary", { text: "Reasoning" }), body]);
      m = { el, body, text: "", role: kind };
    } else {
      const body = h(this.doc, "div", { cls: `gth-msg-content${kind === "assistant" ? " gth-markdown" : ""}` });
      const el = h(this.doc, "div", { cls: `gth-msg gth-msg-${kind}`, data: { messageId: id } }, [body]);
      m = { el, body, text: "", role: kind };
    }
    this.messages.set(id, m);
    this.append(m.el);
    return m;
  }

  appendText(/** @type {string} */ id, /** @type {string} */ delta, /** @type {string} */ role) {
    const m = this.message(id, role);
    m.text += delta ?? "";
    this.frames.mark(`msg:${id}`, () => this.paintMessage(m));
  }

  /** @param {{ el: any, body: any, text: string, role: string, markdown?: MarkdownStream }} m */
  paintMessage(m) {
    if (m.role === "assistant") {
      m.markdown ??= new MarkdownStream(m.body, this.media);
      m.markdown.set(m.text);
      this.stats.markdownRenders += 1;
    } else m.body.textContent = m.text;
  }

  /** @param {any} message an AG-UI user message */
  addUser(message) {
    const m = this.message(message.id, "user");
    const { text, images } = contentParts(message.content);
    const action = parseAction(text);
    if (action) {
      m.el.classList.add("gth-msg-action");
      m.text = `▶ ${action.actionName}`;
      m.body.title = text;
    } else m.text = text;
    this.paintMessage(m);
    for (const url of images) m.el.append(h(this.doc, "img", { cls: "gth-thumb", attrs: { src: url, alt: "attached image" } }));
  }

  /** How tools whose call names were shortened are shown (an MCP tool: `server › tool`). */
  setToolLabels(/** @type {Map<string, string>} */ labels) {
    this.toolLabels = labels;
  }

  /** The card for a tool call, created when the call is first seen. */
  cardFor(/** @type {string | undefined} */ id, /** @type {string} */ name) {
    const key = id || `anon-${this.cards.size}`;
    let card = this.cards.get(key);
    if (!card) {
      card = new ToolCard(this.doc, this.frames, { toolCallId: key, name, label: this.toolLabels.get(name), actions: this.cardActions });
      this.cards.set(key, card);
      this.append(card.el);
    }
    return card;
  }

  applyResult(/** @type {string} */ toolCallId, /** @type {any} */ content) {
    const card = this.cardFor(toolCallId, "tool");
    const isSurface = card.name === A2UI_TOOL;
    const text = card.setResult(content, { preview: !isSurface });
    if (isSurface && card.status !== "error") this.host.ingest(text, card.body);
  }

  addActivity(/** @type {string} */ id, /** @type {any} */ ev) {
    if (ev.activityType !== "a2ui-surface") return;
    let block = this.activities.get(id);
    if (!block) {
      block = h(this.doc, "div", { cls: "gth-activity", data: { messageId: id } });
      this.activities.set(id, block);
      this.append(block);
    }
    const ops = messagesFromActivity(ev);
    block.querySelector(".gth-note")?.remove();
    if (ops.length) this.host.ingest(ops, block);
    else if (ev.content?.status) block.append(h(this.doc, "div", { cls: "gth-note", text: `Building the form… (${ev.content.status})` }));
  }

  addError(/** @type {string} */ code, /** @type {string} */ message) {
    this.append(
      h(this.doc, "div", { cls: "gth-error", data: { code: code || "error" }, attrs: { role: "alert" } }, [
        h(this.doc, "strong", { cls: "gth-error-code", text: code || "error" }),
        h(this.doc, "span", { cls: "gth-error-message", text: ` ${message || ""}` }),
      ]),
    );
  }

  addNote(/** @type {string} */ text, /** @type {string} */ kind = "info") {
    this.append(h(this.doc, "div", { cls: `gth-note gth-note-${kind}`, text }));
  }

  /** One card per interrupt: Approve / Edit / Reject for approvals, Cancel for the rest. */
  addInterrupts(/** @type {any[]} */ interrupts) {
    this.live.showInterrupts(interrupts);
  }

  /** Rebuild the transcript from the server's messages (every render rehydrates). */
  renderHistory(/** @type {any[]} */ messages) {
    this.list.replaceChildren();
    this.messages.clear();
    this.cards.clear();
    this.activities.clear();
    this.host.reset();
    for (const msg of messages) {
      if (msg.role === "user") this.addUser(msg);
      else if (msg.role === "assistant") {
        if (msg.content) {
          const m = this.message(msg.id, "assistant");
          m.text = String(msg.content);
          this.paintMessage(m);
        }
        for (const tc of msg.toolCalls ?? []) {
          const card = this.cardFor(tc.id, tc.function?.name ?? "tool");
          card.setArgs(tc.function?.arguments ?? "");
          card.setStatus("pending");
        }
      } else if (msg.role === "tool") this.applyResult(msg.toolCallId, msg.content);
      else if (msg.role === "reasoning") {
        const m = this.message(msg.id, "reasoning");
        m.text = String(msg.content ?? "");
        this.paintMessage(m);
      } else if (msg.role === "activity") this.addActivity(msg.id, msg);
    }
    this.changes.newTurn();
    this.changes.showHistory(messages, (id) => this.messages.get(id)?.el);
    this.frames.flush();
  }

  destroy() {
    this.frames.close();
    this.root.remove();
  }
}

/** A user message that is an A2UI action we sent, or null. */
function parseAction(/** @type {string} */ text) {
  if (!text.startsWith("{") || !text.includes('"actionName"')) return null;
  try {
    const v = JSON.parse(text);
    return v && typeof v.actionName === "string" ? v : null;
  } catch {
    return null;
  }
}
