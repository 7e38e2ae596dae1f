// A tool-call card: name, arguments (streamed), status, live output lines, a result preview,
// and a body for what the tool shows (a photo thumbnail, an ask_user prompt, an A2UI surface,
// the kernel tools' tables and plots from ./kernelcards.js, the notebook tools' cells and diffs
// from ./notebookcards.js, gth_read_binary's image or file chip from ./binarycard.js).

import { errorOf } from "../tools/registry.js";
import { binarySummary, parseBinaryResult, READ_BINARY, renderBinaryResult } from "./binarycard.js";
import { inlineImageUrl } from "../media.js";
import { contentParts, h, imageSize } from "./dom.js";
import { errorMessage, isKernelTool, parseResult, renderKernelArgs, renderKernelResult } from "./kernelcards.js";
import { renderNotebookArgs, renderNotebookResult } from "./notebookcards.js";

/** The browser tool whose card says what became of the photo (../tools/capture_image.js). */
const CAPTURE_IMAGE = "capture_image";
const STATUS_TEXT = { running: "running…", done: "done", error: "error", stopped: "stopped", pending: "no result", waiting: "awaiting approval" };
const PREVIEW_CHARS = 600;
const MAX_LINES = 200;
const MAX_LINE_CHARS = 2000;

/** A line as a terminal leaves it: text before a carriage return is drawn over. */
const overwrite = (/** @type {string} */ text) => text.replace(/^[^]*\r(?=[^\r\n])/, "");

export class ToolCard {
  /**
   * @param {Document} doc
   * @param {import("./frame.js").FrameScheduler} frames
   * @param {{ toolCallId: string, name: string, label?: string, actions?: import("./kernelcards.js").CardActions }} call
   *   `label`: what to show for `name` (an MCP tool's server and real name, when its call name
   *   had to be shortened); `actions`: what the person can do from it (Insert as cell)
   */
  constructor(doc, frames, { toolCallId, name, label, actions }) {
    this.doc = doc;
    this.actions = actions ?? {};
    this.frames = frames;
    this.id = toolCallId;
    this.name = name;
    this.argsText = "";
    this.statusEl = h(doc, "span", { cls: "gth-tool-status" });
    this.argsPre = h(doc, "pre", { cls: "gth-tool-args-text" });
    this.args = h(doc, "details", { cls: "gth-tool-args" }, [h(doc, "summary", { text: "Arguments" }), this.argsPre]);
    this.output = h(doc, "div", { cls: "gth-tool-output" });
    this.output.hidden = true;
    this.body = h(doc, "div", { cls: "gth-tool-body" });
    /** What became of the call, in a sentence (a photo: taken, its size, sent), once it ended. */
    this.summary = h(doc, "p", { cls: "gth-tool-summary", attrs: { role: "status" } });
    this.summary.hidden = true;
    /** @type {any} a kernel tool's drawn result (./kernelcards.js), replaced when the result comes again */
    this.kernelEl = null;
    this.preview = h(doc, "pre", { cls: "gth-tool-preview" });
    this.result = h(doc, "details", { cls: "gth-tool-result" }, [h(doc, "summary", { text: "Result" }), this.preview]);
    this.result.hidden = true;
    this.el = h(doc, "div", { cls: "gth-tool", data: { toolCallId, toolName: name } }, [
      h(doc, "div", { cls: "gth-tool-head" }, [
        h(doc, "span", { cls: "gth-tool-name", text: label || name, attrs: label ? { title: name } : {} }),
        this.statusEl,
      ]),
      this.args,
      this.output,
      this.summary,
      this.body,
      this.result,
    ]);
    /** @type {{ text: string, notice?: boolean }[]} complete output lines (the last MAX_LINES) */
    this.lines = [];
    /** Streamed output after the last line break (shown as the last line). */
    this.partial = "";
    this.setStatus("running");
  }

  setStatus(/** @type {keyof typeof STATUS_TEXT} */ status) {
    this.status = status;
    this.el.dataset.status = status;
    this.statusEl.textContent = STATUS_TEXT[status] ?? status;
  }

  appendArgs(/** @type {string} */ delta) {
    this.argsText += delta;
    this.frames.mark(`args:${this.id}`, () => (this.argsPre.textContent = this.argsText));
  }

  /** The complete arguments (pretty-printed when they are JSON). */
  setArgs(/** @type {string} */ text) {
    this.argsText = text ?? "";
    let shown = this.argsText;
    try {
      shown = JSON.stringify(JSON.parse(this.argsText), null, 2);
    } catch {
      // Not JSON: show as sent.
    }
    const code = renderKernelArgs(this.doc, this.name, this.argsText, this.actions) ?? renderNotebookArgs(this.doc, this.name, this.argsText, this.actions);
    this.frames.mark(`args:${this.id}`, () => {
      this.argsPre.textContent = shown;
      // run_python's code reads as code, not as an escaped JSON string; open, since it is the call.
      this.args.querySelector(".gth-run-args")?.remove();
      this.argsPre.hidden = Boolean(code);
      if (code) {
        this.args.append(code);
        this.args.open = true;
      }
    });
  }

  /**
   * An approval of this call (./approval.js), under its code or arguments and above its output
   * and result, so the question and then the result show in one place. A new approval of the
   * same call (asked again after a refused resume) replaces the last.
   */
  attachApproval(/** @type {any} */ el) {
    this.el.querySelector(":scope > .gth-approval")?.remove();
    this.args.after(el);
  }

  /** One whole line of output (a browser tool's `ctx.log`). */
  addOutput(/** @type {string} */ line) {
    this.#flushPartial();
    this.lines.push({ text: String(line) });
    this.#paintOutput();
  }

  /**
   * Streamed output (`gth.tool_output` chunks): split on line breaks, a line may span chunks. A
   * notice (the server's own note, such as a truncation) is a line of its own.
   */
  appendOutput(/** @type {string} */ chunk, { notice = false } = {}) {
    if (notice) {
      this.#flushPartial();
      for (const text of String(chunk).replace(/\r?\n$/, "").split(/\r?\n/)) this.lines.push({ text, notice: true });
    } else {
      const parts = (this.partial + String(chunk)).split(/\r?\n/);
      // A carriage return redraws its line (progress bars): keep what comes after the last one.
      this.partial = overwrite(/** @type {string} */ (parts.pop())).slice(-MAX_LINE_CHARS);
      for (const text of parts) this.lines.push({ text: overwrite(text) });
    }
    this.#paintOutput();
  }

  #flushPartial() {
    if (this.partial) this.lines.push({ text: this.partial });
    this.partial = "";
  }

  #paintOutput() {
    if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
    this.frames.mark(`out:${this.id}`, () => {
      const shown = this.partial ? [...this.lines, { text: this.partial }] : this.lines;
      this.output.hidden = shown.length === 0;
      this.output.replaceChildren(
        ...shown.slice(-MAX_LINES).map((l) =>
          h(this.doc, "div", {
            cls: l.notice ? "gth-tool-line gth-tool-notice" : "gth-tool-line",
            text: l.text.length > MAX_LINE_CHARS ? `${l.text.slice(0, MAX_LINE_CHARS)}…` : l.text,
          }),
        ),
      );
      this.output.scrollTop = this.output.scrollHeight;
    });
  }

  /** Show the tool's result; returns its text. `{error}` results mark the card as failed. */
  setResult(/** @type {any} */ content, { preview = true } = {}) {
    const { text, images } = contentParts(content);
    // `"error": null` (a run_python that went fine) is no error.
    const err = errorOf(text) ?? undefined;
    const binary = this.name === READ_BINARY ? parseBinaryResult(text) : null;
    const drawn = renderKernelResult(this.doc, this.name, text) ?? renderNotebookResult(this.doc, this.name, text) ?? (binary && renderBinaryResult(this.doc, text));
    // A run_python that raised or timed out failed (the server reports it as an error result too);
    // its drawing shows why, so no "[object Object]" error line is added for it.
    const failed = err !== undefined || ["error", "timeout"].includes(drawn?.dataset.status);
    this.setStatus(failed ? "error" : "done");
    for (const url of images) this.showImage(url);
    let shown = text;
    try {
      const value = JSON.parse(text);
      const url = inlineImageUrl(value?.mimeType, value?.data);
      if (url) {
        this.showImage(url);
        shown = `${value.mimeType} image, ${Math.round((value.data.length * 3) / 4 / 1024)} KB`;
        if (this.name === CAPTURE_IMAGE) this.#ended(photoSummary(value.mimeType, value.data));
      }
    } catch {
      // Plain text result.
    }
    if (binary) shown = binarySummary(binary); // the name and size, not the base64
    if (drawn) this.#showKernelResult(drawn);
    // An edit's result is its diff as made: the diff asked over, under the arguments, folds away.
    if (drawn && this.name === "edit_cell") this.frames.mark(`fold:${this.id}`, () => (this.args.open = false));
    if (!drawn && err !== undefined) this.showError((isKernelTool(this.name) && errorMessage(parseResult(text))) || errorText(err));
    if (err !== undefined && this.name === CAPTURE_IMAGE) this.#ended(`No photo: ${errorText(err)}`);
    if (preview) {
      this.result.hidden = false;
      this.preview.textContent = shown.length > PREVIEW_CHARS ? `${shown.slice(0, PREVIEW_CHARS)}…` : shown;
    }
    return text;
  }

  /**
   * The call ended: its progress lines ("Asking for the camera…") give way to what happened.
   * A later result of the same call (the server's placeholder for the model) leaves it standing.
   */
  #ended(/** @type {string} */ text) {
    this.lines = [];
    this.partial = "";
    this.#paintOutput();
    this.summary.textContent = text;
    this.summary.hidden = false;
  }

  /** A kernel tool's result drawn in the body, replacing an earlier drawing of it. */
  #showKernelResult(/** @type {any} */ drawn) {
    this.kernelEl?.remove();
    this.kernelEl = drawn;
    this.body.append(drawn);
  }

  showError(/** @type {string} */ message) {
    this.body.querySelector(".gth-tool-error")?.remove();
    this.body.append(h(this.doc, "div", { cls: "gth-tool-error", text: message }));
  }

  showImage(/** @type {string} */ dataUrl) {
    // Only a URL inlineImageUrl makes: an inline type, clean base64.
    const found = typeof dataUrl === "string" ? /^data:([^;,]+);base64,(.*)$/s.exec(dataUrl) : null;
    if (!found || inlineImageUrl(found[1], found[2]) !== dataUrl) return;
    if (this.body.querySelector("img.gth-thumb")) return; // one thumbnail per call
    this.body.append(h(this.doc, "img", { cls: "gth-thumb", attrs: { src: dataUrl, alt: `Image from ${this.name}` } }));
  }
}

/** "Photo taken: 640×480 JPEG, 38 KB, sent to the agent." (the size when the header says it). */
export function photoSummary(/** @type {string} */ mimeType, /** @type {string} */ data) {
  const size = imageSize(mimeType, data);
  const kind = mimeType.replace(/^image\//, "").toUpperCase();
  const kb = Math.max(1, Math.round((data.replace(/\s+/g, "").length * 3) / 4 / 1024));
  return `Photo taken: ${size ? `${size.width}×${size.height} ` : ""}${kind}, ${kb} KB, sent to the agent.`;
}

/** An `{error}` value as a line of text (an object as JSON, not "[object Object]"). */
function errorText(/** @type {unknown} */ err) {
  if (typeof err !== "object" || err === null) return String(err);
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
