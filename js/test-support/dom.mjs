import { parseHTML } from "linkedom";

export function makeDom() {
  const { window, document } = parseHTML("<!doctype html><html><head></head><body></body></html>");
  return { window, document };
}

/**
 * Dispatch a click as a person would (isTrusted true) or as a script would.
 * @param {{ Event: typeof Event }} window @param {EventTarget} node @param {{ trusted?: boolean }} [opts]
 */
export function click(window, node, { trusted = true } = {}) {
  const ev = new window.Event("click", { bubbles: true });
  if (trusted) Object.defineProperty(ev, "isTrusted", { value: true });
  node.dispatchEvent(ev);
}

/** @param {{ Event: typeof Event }} window @param {EventTarget} node @param {string} type */
export function fire(window, node, type) {
  node.dispatchEvent(new window.Event(type, { bubbles: true }));
}
