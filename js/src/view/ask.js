// The ask_user prompt: the question with a button per choice, or a text box.
// Resolves with the answer string; an aborted run (Stop) rejects it.

import { h } from "./dom.js";

/**
 * @param {Document} doc
 * @param {any} container
 * @param {{ question: string, choices: string[], signal?: AbortSignal }} q
 * @returns {Promise<string>}
 */
export function askInto(doc, container, { question, choices, signal }) {
  return new Promise((resolve, reject) => {
    const box = h(doc, "div", { cls: "gth-ask" }, [h(doc, "p", { cls: "gth-ask-question", text: question })]);
    const finish = (/** @type {string} */ answer) => {
      signal?.removeEventListener("abort", onAbort);
      box.replaceChildren(
        h(doc, "p", { cls: "gth-ask-question", text: question }),
        h(doc, "p", { cls: "gth-ask-answer", text: answer }),
      );
      box.dataset.state = "answered";
      resolve(answer);
    };
    const onAbort = () => {
      box.dataset.state = "cancelled";
      for (const el of box.querySelectorAll("button, textarea")) /** @type {any} */ (el).disabled = true;
      reject(Object.assign(new Error("The question was cancelled."), { name: "AbortError" }));
    };
    if (choices.length) {
      const row = h(doc, "div", { cls: "gth-ask-choices" });
      for (const choice of choices) {
        const b = h(doc, "button", { cls: "gth-ask-choice", text: choice, attrs: { type: "button" } });
        b.addEventListener("click", () => finish(choice));
        row.append(b);
      }
      box.append(row);
    } else {
      const input = h(doc, "textarea", { cls: "gth-ask-input", attrs: { rows: "2", "aria-label": question } });
      const submit = h(doc, "button", { cls: "gth-ask-submit", text: "Answer", attrs: { type: "button" } });
      const send = () => {
        const answer = String(input.value ?? "").trim();
        if (answer) finish(answer);
      };
      submit.addEventListener("click", send);
      input.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
        if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          send();
        }
      });
      box.append(input, submit);
    }
    container.append(box);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort);
  });
}
