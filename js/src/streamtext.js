// Streamed text kept out of the AG-UI client's message list until its message ends.
//
// `@ag-ui/client` 1.0 applies every TEXT_MESSAGE_CONTENT / REASONING_MESSAGE_CONTENT event by
// appending the delta to the message in its list and then emitting the whole list as a state
// mutation, which it deep-copies (`structuredClone`) for every event (`defaultApplyEvents`,
// src/apply/default.ts: `applyMutation({ messages })` then `emitUpdates()`). A streamed answer
// therefore costs work proportional to its length on every token: quadratic in all. The view
// never reads the client's copy while a message streams (it paints from the events), so this
// subscriber takes the deltas itself (`stopPropagation` on the content events: the client then
// neither appends nor copies) and puts the whole text into the client's list once, when the
// message ends — or, when a run stops mid-message, as soon as the run is over (`flush`), so
// the history sent with the next run is the same as the client would have kept.

/** Content events whose deltas are kept here, and the end events that hand the text back. */
const CONTENT = new Set(["TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"]);

export class StreamedText {
  constructor() {
    /** @type {Map<string, string[]>} the deltas of each message still streaming, by id */
    this.open = new Map();
  }

  /** Keep a content event's delta; true when the client must not apply it. */
  take(/** @type {any} */ event) {
    if (!CONTENT.has(event?.type) || typeof event.messageId !== "string") return false;
    let parts = this.open.get(event.messageId);
    if (!parts) this.open.set(event.messageId, (parts = []));
    parts.push(event.delta ?? "");
    return true;
  }

  /**
   * `messages` with the kept text of `ids` (all open messages when omitted) appended to their
   * content, or null when there is nothing to add. The kept text is forgotten.
   * @param {readonly any[]} messages @param {string[]} [ids]
   */
  settle(messages, ids = [...this.open.keys()]) {
    /** @type {Map<string, string>} */
    const texts = new Map();
    for (const id of ids) {
      const parts = this.open.get(id);
      this.open.delete(id);
      if (parts?.length) texts.set(id, parts.join(""));
    }
    if (!texts.size) return null;
    return messages.map((m) => {
      const text = texts.get(m?.id);
      if (text === undefined) return m;
      return { ...m, content: `${typeof m.content === "string" ? m.content : ""}${text}` };
    });
  }

  /** Subscriber hooks for `runAgent`: content is kept here, and returned at the message's end. */
  subscriber() {
    const keep = (/** @type {any} */ { event }) => (this.take(event) ? { stopPropagation: true } : undefined);
    const end = (/** @type {any} */ { event, messages }) => {
      const settled = this.settle(messages, [event.messageId]);
      return settled ? { messages: settled } : undefined;
    };
    return {
      onTextMessageContentEvent: keep,
      onReasoningMessageContentEvent: keep,
      onTextMessageEndEvent: end,
      onReasoningMessageEndEvent: end,
    };
  }

  /** After a run: text of messages that never ended (Stop, an error) goes into the client's list. */
  flush(/** @type {{ messages: any[], setMessages: (m: any[]) => void }} */ agent) {
    const settled = this.settle(agent.messages);
    if (settled) agent.setMessages(settled);
  }
}
