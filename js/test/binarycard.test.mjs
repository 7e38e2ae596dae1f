// gth_read_binary's card: the image it read (only a PNG, JPEG, GIF or WebP as clean base64), or a
// chip with the file's name, type and size; live and after a reload (the placeholder the server
// leaves once the bytes went to the model). Never HTML from the content.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TranscriptView } from "../src/transcript.js";
import { binarySummary, parseBinaryResult, renderBinaryResult } from "../src/view/binarycard.js";
import { makeDom } from "../test-support/dom.mjs";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const enc = (p) => encodeURIComponent(p);
const full = (type, mime, data, path = "/work/pics/dot.png") => `gth_read_binary;type:${type};path:${enc(path)};data:${mime};base64,${data}`;
const omitted = (type, mime, size, path = "/work/pics/dot.png") =>
  `gth_read_binary;type:${type};path:${enc(path)};data:${mime};size:${size};omitted (the content is shown to you in the next message)`;

function setup() {
  const { document } = makeDom();
  const queue = [];
  const el = document.createElement("div");
  document.body.append(el);
  const view = new TranscriptView({
    doc: document, el, raf: (cb) => queue.push(cb), onSend: () => true, onStop: () => {}, onAction: () => {}, onResolveInterrupts: () => {},
  });
  const agui = (event) => view.handle({ type: "agui", event });
  const frame = () => queue.splice(0).forEach((cb) => cb());
  return { document, el, agui, frame };
}

function call(agui, id, args, result) {
  agui({ type: "TOOL_CALL_START", toolCallId: id, toolCallName: "gth_read_binary" });
  agui({ type: "TOOL_CALL_ARGS", toolCallId: id, delta: JSON.stringify(args) });
  agui({ type: "TOOL_CALL_END", toolCallId: id });
  agui({ type: "TOOL_CALL_RESULT", messageId: `r-${id}`, toolCallId: id, content: result });
}

test("parses Gaunt Sloth's string and the placeholder left after injection", () => {
  const r = parseBinaryResult(full("image", "image/png", PNG, "/w/a;b c.png"));
  assert.deepEqual(r, { type: "image", path: "/w/a;b c.png", name: "a;b c.png", mimeType: "image/png", data: PNG, size: 70 });
  const p = parseBinaryResult(omitted("file", "application/pdf", 1234, "/w/doc.pdf"));
  assert.deepEqual(p, { type: "file", path: "/w/doc.pdf", name: "doc.pdf", mimeType: "application/pdf", data: null, size: 1234 });
  assert.equal(binarySummary(p), "doc.pdf (file, application/pdf, 1.2 KB)");
  for (const bad of [
    "Path is not within allowed directories or is blocked by .aiignore",
    "gth_read_binary;type:script;path:x;data:text/html;base64,PHNjcmlwdD4=",
    "gth_read_binary;type:image;path:;data:image/png;base64,AA==",
    "gth_read_binary;type:image;path:x;data:image/png;size:big;omitted",
    "gth_read_binary;type:image;path:x;data:image/png;size:1",
    null,
  ]) {
    assert.equal(parseBinaryResult(bad), null, String(bad));
  }
  assert.equal(parseBinaryResult(full("image", "image/png", PNG, "%E0%A4%A")).name, "%E0%A4%A"); // malformed: as written
});

test("an image read live is shown, and the preview names it instead of the base64", () => {
  const { el, agui, frame } = setup();
  call(agui, "b1", { path: "pics/dot.png" }, full("image", "image/png", PNG));
  frame();
  const card = el.querySelector(".gth-tool[data-tool-name=gth_read_binary]");
  assert.equal(card.dataset.status, "done");
  const img = card.querySelector(".gth-binary img.gth-tool-image");
  assert.equal(img.getAttribute("src"), `data:image/png;base64,${PNG}`);
  assert.equal(card.querySelector(".gth-binary-caption").textContent, "dot.png (image, image/png, 70 B)");
  const preview = card.querySelector(".gth-tool-preview").textContent;
  assert.equal(preview, "dot.png (image, image/png, 70 B)");
  assert.ok(!card.textContent.includes(PNG));
});

test("a file, audio or unsafe image is a chip: name, type and size as text", () => {
  const { document } = setup();
  const pdf = renderBinaryResult(document, full("file", "application/pdf", "JVBERi0xLjQ=", "/w/<img src=x onerror=alert(1)>.pdf"));
  assert.equal(pdf.querySelector("img"), null);
  assert.equal(pdf.querySelector(".gth-binary-name").textContent, "<img src=x onerror=alert(1)>.pdf");
  assert.equal(pdf.querySelector(".gth-binary-type").textContent, " file, application/pdf");
  assert.equal(pdf.querySelector(".gth-binary-size").textContent, ", 8 B");
  assert.equal(pdf.dataset.type, "file");

  const svg = renderBinaryResult(document, full("image", "image/svg+xml", "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"));
  assert.equal(svg.querySelector("img"), null, "svg is never an image source");
  const dirty = renderBinaryResult(document, full("image", "image/png", `${PNG}"><script>`));
  assert.equal(dirty.querySelector("img"), null, "only clean base64");
  assert.equal(dirty.querySelector("script"), null);
  const audio = renderBinaryResult(document, full("audio", "audio/mpeg", "SUQz", "/w/song.mp3"));
  assert.equal(audio.querySelector(".gth-binary-name").textContent, "song.mp3");
  assert.equal(renderBinaryResult(document, "plain text"), null);
});

test("after a reload the placeholder draws a chip; an image restored by the server is shown", () => {
  const { el, agui, frame } = setup();
  call(agui, "b2", { path: "pics/dot.png" }, omitted("image", "image/png", 70));
  call(agui, "b3", { path: "pics/dot.png" }, full("image", "image/png", PNG));
  frame();
  const [kept, restored] = el.querySelectorAll(".gth-tool[data-tool-name=gth_read_binary]");
  assert.equal(kept.querySelector("img"), null);
  assert.equal(kept.querySelector(".gth-binary-name").textContent, "dot.png");
  assert.equal(kept.querySelector(".gth-binary-size").textContent, ", 70 B");
  assert.ok(restored.querySelector("img.gth-tool-image"));
});

test("an error result stays an error line", () => {
  const { el, agui, frame } = setup();
  call(agui, "b4", { path: "../x.png" }, "Path is not within allowed directories or is blocked by .aiignore");
  frame();
  const card = el.querySelector(".gth-tool[data-tool-name=gth_read_binary]");
  assert.equal(card.querySelector(".gth-binary"), null);
  assert.match(card.querySelector(".gth-tool-preview").textContent, /^Path is not within/);
});
