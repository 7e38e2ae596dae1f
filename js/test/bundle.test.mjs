// The built bundles, not the sources: the esbuild config (CSS as text, zod trimmed to English)
// must still give a widget that streams a run through the official client, and a loader that
// falls back to the kernel when the static route cannot be imported.
import { test } from "node:test";
import assert from "node:assert/strict";
import { build } from "esbuild";
import { loaderConfig, widgetConfig } from "../build.config.mjs";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { sse, started, finished, text } from "../test-support/sse.mjs";

const bundle = async (config) => {
  const r = await build({ ...config, write: false, logLevel: "silent" });
  return r.outputFiles[0].text;
};
const dataUrl = (code) => `data:text/javascript;base64,${Buffer.from(code).toString("base64")}`;
const until = async (cond, what) => {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
};

function kernelModel() {
  return fakeModel({ thread_id: "tb", transport: "comm", client_tools: [], model_label: "demo", offline: false }, {
    onSend: (msg, m) => {
      if (msg.type === "history") setTimeout(() => m.deliver({ type: "history", requestId: msg.requestId, messages: [] }));
      if (msg.type === "run") {
        setTimeout(() => {
          m.deliver({ type: "chunk", requestId: msg.requestId, data: sse([started(msg.body), ...text("b1", "bundled **ok**"), finished(msg.body)]) });
          m.deliver({ type: "end", requestId: msg.requestId });
        });
      }
    },
  });
}

test("the minified widget bundle renders and runs a turn over the comm", async () => {
  const code = await bundle(widgetConfig);
  assert.ok(code.length < 700_000, `widget.js is ${code.length} bytes`);
  const widget = (await import(dataUrl(code))).default;
  const { window, document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = kernelModel();
  const cleanup = widget.render({ model, el });
  assert.match(el.querySelector("style").textContent, /\.gth-root/);
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  el.querySelector(".gth-input").value = "hi";
  el.querySelector(".gth-send").dispatchEvent(new window.Event("click"));
  await until(() => el.querySelector("[data-message-id=b1] strong"), "streamed answer");
  assert.equal(el.querySelector("[data-message-id=b1] strong").textContent, "ok");
  cleanup();
});

test("the loader falls back to the kernel's copy of the bundle", async () => {
  const [loaderCode, widgetCode] = await Promise.all([bundle(loaderConfig), bundle(widgetConfig)]);
  assert.ok(loaderCode.length < 4000, `loader.js is ${loaderCode.length} bytes`);
  const { document } = makeDom();
  const saved = { document: globalThis.document, create: URL.createObjectURL, revoke: URL.revokeObjectURL };
  // Node cannot import http: or blob: URLs: the first import fails as in VS Code, and the
  // kernel's copy is imported from a data: URL standing in for the Blob URL.
  globalThis.document = { baseURI: "http://localhost:8888/lab" };
  URL.createObjectURL = () => dataUrl(widgetCode);
  URL.revokeObjectURL = () => {};
  try {
    const loader = (await import(dataUrl(loaderCode))).default;
    const model = kernelModel();
    const inner = model.send;
    model.send = (msg) => {
      if (msg.type === "esm") setTimeout(() => model.deliver({ type: "esm", requestId: msg.requestId, code: widgetCode }));
      inner(msg);
    };
    const el = document.createElement("div");
    const cleanup = await loader.render({ model, el });
    assert.ok(model.sent.some((m) => m.type === "esm"));
    assert.ok(el.querySelector(".gth-root"));
    assert.equal(typeof cleanup, "function");
    cleanup();
  } finally {
    globalThis.document = saved.document;
    URL.createObjectURL = saved.create;
    URL.revokeObjectURL = saved.revoke;
  }
});
