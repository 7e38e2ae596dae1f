import { test } from "node:test";
import assert from "node:assert/strict";
import { StreamedText } from "../src/streamtext.js";

const content = (messageId, delta, type = "TEXT_MESSAGE_CONTENT") => ({ type, messageId, delta });

test("content deltas are kept, and the client is told not to apply them", () => {
  const s = new StreamedText();
  const hooks = s.subscriber();
  assert.deepEqual(hooks.onTextMessageContentEvent({ event: content("a", "Hel") }), { stopPropagation: true });
  assert.deepEqual(hooks.onReasoningMessageContentEvent({ event: content("r", "think", "REASONING_MESSAGE_CONTENT") }), { stopPropagation: true });
  hooks.onTextMessageContentEvent({ event: content("a", "lo") });
  assert.deepEqual([...s.open.keys()], ["a", "r"]);
});

test("at a message's end its text goes into a new list; other messages are the same objects", () => {
  const s = new StreamedText();
  const hooks = s.subscriber();
  hooks.onTextMessageContentEvent({ event: content("a", "Hel") });
  hooks.onTextMessageContentEvent({ event: content("a", "lo") });
  const user = { id: "u", role: "user", content: "hi" };
  const before = [user, { id: "a", role: "assistant", content: "" }];
  const { messages } = hooks.onTextMessageEndEvent({ event: { type: "TEXT_MESSAGE_END", messageId: "a" }, messages: before });
  assert.notEqual(messages, before);
  assert.equal(messages[0], user);
  assert.deepEqual(messages[1], { id: "a", role: "assistant", content: "Hello" });
  assert.equal(before[1].content, ""); // the client's list is not changed in place
  // Nothing kept for that message any more: a second end changes nothing.
  assert.equal(hooks.onTextMessageEndEvent({ event: { type: "TEXT_MESSAGE_END", messageId: "a" }, messages }), undefined);
});

test("flush puts the text of messages that never ended into the agent's list", () => {
  const s = new StreamedText();
  s.take(content("a", "partial"));
  const agent = { messages: [{ id: "a", role: "assistant", content: "" }], setMessages(m) { this.messages = m; } };
  s.flush(agent);
  assert.equal(agent.messages[0].content, "partial");
  const same = agent.messages;
  s.flush(agent); // nothing left
  assert.equal(agent.messages, same);
});

test("events that carry no text to keep are left to the client", () => {
  const s = new StreamedText();
  assert.equal(s.take({ type: "TOOL_CALL_ARGS", toolCallId: "c", delta: "{" }), false);
  assert.equal(s.take({ type: "TEXT_MESSAGE_CONTENT", delta: "no id" }), false);
});
