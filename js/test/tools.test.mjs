import { test } from "node:test";
import assert from "node:assert/strict";
import { captureImage, fitLongEdge, FRAME_ERROR } from "../src/tools/capture_image.js";
import { readBrowserContext } from "../src/tools/browser_context.js";
import { askUserTool } from "../src/tools/ask_user.js";
import { compileUserTool, createRegistry, toContent } from "../src/tools/registry.js";

function camera({ deny, ready = true, width = 1280, height = 720 } = {}) {
  const track = { stopped: false, stop() { this.stopped = true; } };
  const drawn = [];
  const env = {
    window: { isSecureContext: true },
    navigator: {
      mediaDevices: {
        getUserMedia: async (constraints) => {
          env.constraints = constraints;
          if (deny) throw Object.assign(new Error("denied"), { name: deny });
          return { getTracks: () => [track] };
        },
      },
    },
    document: {
      createElement(tag) {
        if (tag === "video") {
          return {
            readyState: 0, videoWidth: 0, videoHeight: 0, srcObject: null,
            setAttribute() {},
            play() { if (ready) Object.assign(this, { readyState: 4, videoWidth: width, videoHeight: height }); return Promise.resolve(); },
            pause() {},
          };
        }
        return {
          width: 0, height: 0,
          getContext: () => ({ drawImage: (...a) => drawn.push(a.slice(1)) }),
          toDataURL: (type, q) => { env.encoded = [type, q]; return "data:image/jpeg;base64,QUJD"; },
        };
      },
    },
    frameTimeoutMs: 50,
  };
  return { env, track, drawn };
}

test("capture_image: one JPEG frame, long edge 640, camera released", async () => {
  const { env, track, drawn } = camera();
  const thumbs = [];
  const out = await captureImage({ toolCallId: "c1", ui: { showImage: (id, url) => thumbs.push([id, url]) } }, env);
  assert.deepEqual(JSON.parse(out), { mimeType: "image/jpeg", data: "QUJD" });
  assert.deepEqual(env.constraints, { video: { width: { ideal: 640 }, height: { ideal: 480 } } });
  assert.deepEqual(drawn, [[0, 0, 640, 360]]);
  assert.deepEqual(env.encoded, ["image/jpeg", 0.8]);
  assert.equal(track.stopped, true);
  assert.deepEqual(thumbs, [["c1", "data:image/jpeg;base64,QUJD"]]);
  assert.deepEqual(fitLongEdge(480, 1000, 640), { width: 307, height: 640 });
  assert.deepEqual(fitLongEdge(320, 240, 640), { width: 320, height: 240 }); // never upscaled
});

test("capture_image: errors are results, and the camera is always released", async () => {
  const denied = camera({ deny: "NotAllowedError" });
  assert.match(JSON.parse(await captureImage({}, denied.env)).error, /permission was denied/);
  const none = camera({ deny: "NotFoundError" });
  assert.match(JSON.parse(await captureImage({}, none.env)).error, /No camera/);
  const stuck = camera({ ready: false });
  assert.equal(JSON.parse(await captureImage({}, stuck.env)).error, FRAME_ERROR);
  assert.equal(stuck.track.stopped, true);
  const insecure = camera();
  insecure.env.window.isSecureContext = false;
  assert.match(JSON.parse(await captureImage({}, insecure.env)).error, /secure page/);
  assert.match(JSON.parse(await captureImage({}, { window: {}, navigator: {}, document: {} })).error, /No camera is available/);
  const stopped = camera({ ready: false });
  const ac = new AbortController();
  const pending = captureImage({ signal: ac.signal }, { ...stopped.env, frameTimeoutMs: 5000 });
  setTimeout(() => ac.abort(), 10);
  assert.match(JSON.parse(await pending).error, /cancelled/);
  assert.equal(stopped.track.stopped, true);
});

test("browser_context: locale, time zone, viewport, colour scheme", () => {
  const ctx = readBrowserContext({
    window: { innerWidth: 1200, innerHeight: 800, matchMedia: (q) => ({ matches: q.includes("dark") }) },
    navigator: { language: "de-DE", languages: ["de-DE", "en"] },
  });
  assert.equal(ctx.locale, "de-DE");
  assert.equal(typeof ctx.timeZone, "string");
  assert.deepEqual(ctx.viewport, { width: 1200, height: 800 });
  assert.equal(ctx.colorScheme, "dark");
});

test("ask_user: validates the question and asks through the view", async () => {
  await assert.rejects(askUserTool.handler({}, { ui: { ask: async () => "x" } }), /non-empty 'question'/);
  const asked = [];
  const answer = await askUserTool.handler({ question: "Pick", choices: ["a", 2, { bad: 1 }] }, {
    toolCallId: "q", ui: { ask: async (q) => (asked.push(q), "a") },
  });
  assert.equal(answer, "a");
  assert.deepEqual(asked[0].choices, ["a", "2"]);
});

test("registry: built-ins plus user tools compiled from source; bad ones reported", async () => {
  const reg = createRegistry([
    { name: "add", description: "Add", parameters: { type: "object", properties: { a: { type: "number" } } }, js: "async ({a, b}) => a + b" },
    { name: "capture_image", description: "mine", js: "async () => 'custom camera'" },
    { name: "bad name!", js: "async () => 1" },
    { name: "syntax", js: "async () => {" },
    { name: "notfn", js: "42" },
  ]);
  assert.deepEqual(reg.names().sort(), ["add", "ask_user", "browser_context", "capture_image"]);
  assert.equal(await reg.get("add").handler({ a: 2, b: 3 }, {}), 5);
  assert.equal(await reg.get("capture_image").handler({}, {}), "custom camera"); // user tool wins
  assert.deepEqual(reg.errors.map((e) => e.name), ["bad name!", "syntax", "notfn"]);
  const decl = reg.declarations().find((d) => d.name === "add");
  assert.deepEqual(decl.parameters, { type: "object", properties: { a: { type: "number" } } });
  assert.deepEqual(reg.declarations().find((d) => d.name === "capture_image").parameters, { type: "object", properties: {}, required: [] });
  assert.throws(() => compileUserTool({ name: "x" }), /no 'js'/);
  assert.equal(toContent({ a: 1 }), '{"a":1}');
  assert.equal(toContent("s"), "s");
  assert.equal(toContent(undefined), "null");
});
