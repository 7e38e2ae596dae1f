// Split A2UI text into JSON messages. Agents write JSONL, but also objects run together with
// no newline, or pretty-printed objects across lines, so this scans for balanced top-level
// objects (string-aware) instead of splitting on newlines. A bad object is reported and the
// scan goes on: one broken line must not lose the others.

export const MAX_TEXT = 1_000_000;
export const MAX_MESSAGES = 500;

/**
 * @param {unknown} input text, a parsed array, or one message object
 * @returns {{ messages: any[], errors: { index: number, message: string }[] }}
 */
export function parseMessages(input) {
  if (Array.isArray(input)) return { messages: unwrap(input), errors: [] };
  if (input && typeof input === "object") return { messages: unwrap([input]), errors: [] };
  const text = String(input ?? "");
  if (text.length > MAX_TEXT) {
    return { messages: [], errors: [{ index: 0, message: `The surface is ${text.length} characters; the limit is ${MAX_TEXT}.` }] };
  }
  // A whole-document array (or a wrapper object) is common enough to try first.
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    try {
      const value = JSON.parse(trimmed);
      if (Array.isArray(value)) return { messages: unwrap(value), errors: [] };
    } catch {
      // Fall through to the scanner.
    }
  }
  /** @type {any[]} */
  const messages = [];
  const errors = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (depth === 0 && ch !== "{") {
      // Between objects: commas, brackets, whitespace, or stray text (a chat model's ```json
      // fence, say), all skipped quietly up to the next object.
      const next = text.indexOf("{", i);
      if (next < 0) break;
      i = next - 1;
    } else if (ch === '"') {
      inString = true;
    } else if (ch === "{") {
      if (depth === 0) start = i;
      depth += 1;
    } else if (ch === "}") {
      depth -= 1;
      if (depth === 0) {
        const chunk = text.slice(start, i + 1);
        try {
          messages.push(...unwrap([JSON.parse(chunk)]));
        } catch (err) {
          errors.push({ index: messages.length + errors.length, message: `Invalid JSON: ${/** @type {Error} */ (err).message}` });
        }
      }
    }
  }
  if (depth > 0) errors.push({ index: messages.length + errors.length, message: "The last JSON object is not closed." });
  if (!messages.length && !errors.length && trimmed) errors.push({ index: 0, message: "No A2UI messages were found in the text." });
  if (messages.length > MAX_MESSAGES) {
    errors.push({ index: MAX_MESSAGES, message: `Only the first ${MAX_MESSAGES} messages are used.` });
    messages.length = MAX_MESSAGES;
  }
  return { messages, errors };
}

/** Flatten CopilotKit's `{a2ui_operations: [...]}` and `{messages: [...]}` wrappers. */
function unwrap(/** @type {any[]} */ list) {
  const out = [];
  for (const item of list) {
    if (item && typeof item === "object" && Array.isArray(item.a2ui_operations)) out.push(...item.a2ui_operations);
    else if (item && typeof item === "object" && Array.isArray(item.messages) && Object.keys(item).length === 1) out.push(...item.messages);
    else out.push(item);
  }
  return out;
}
