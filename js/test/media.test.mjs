// The one policy for agent URLs (src/media.js), through both renderers: Markdown replies and
// A2UI surfaces. Remote media wait for a click unless their host is trusted; links are http(s)
// (or mailto:) only, open without an opener, and say where they go.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MediaPolicy, mediaHtml, safeLinkUrl, upgradeMedia } from "../src/media.js";
import { MarkdownStream, renderMarkdown } from "../src/markdown.js";
import { normalize } from "../src/a2ui/normalize.js";
import { mountSurface } from "../src/a2ui/render.js";
import { createBackend } from "../src/transport.js";
import { TranscriptView } from "../src/transcript.js";
import { makeDom, click } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";

const SECRET = "https://attacker.example/p.png?d=sk-live-123";
const PNG = "data:image/png;base64,iVBORw0KGgo=";

function host() {
  const { window, document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  return { window, document, el };
}

const v9 = (components) => normalize([
  { version: "v0.9", createSurface: { surfaceId: "s", catalogId: "basic" } },
  { version: "v0.9", updateComponents: { surfaceId: "s", components } },
]).surfaces[0];

function surface(components, media) {
  const { window, document, el } = host();
  const opened = [];
  const view = mountSurface(v9(components), { doc: document, media, openUrl: (u) => opened.push(u) });
  el.append(view.el);
  return { window, el: view.el, opened };
}

test("policy: what renders, what waits for a click, what never renders", () => {
  const p = new MediaPolicy();
  for (const ok of [PNG, "data:image/jpeg;base64,/9j/", "DATA:IMAGE/WEBP;base64,UklG", "  data:image/gif;base64,R0lG"]) {
    assert.equal(p.judge(ok)?.kind, "inline", ok);
  }
  assert.equal(p.judge("DATA:IMAGE/WEBP;base64,UklG").url, "data:image/webp;base64,UklG");
  // Only what the static copy shows inline (contract/spec/media.json): its four types, in base64.
  for (const refused of ["data:image/gif,GIF89a", "data:image/avif;base64,AAAA", "data:image/bmp;base64,Qk0=", "data:image/x-icon;base64,AAAB",
    "data:image/jpg;base64,/9j/", "data:image/png;charset=x;base64,iVBO", "data:image/png;base64,<b>"]) {
    assert.equal(p.judge(refused), null, refused);
  }
  assert.deepEqual(p.judge(SECRET), { kind: "remote", url: SECRET, host: "attacker.example", load: false });
  const never = [
    "javascript:alert(1)", " JaVaScRiPt:alert(1)", "java\tscript:alert(1)", "vbscript:x",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "data:image/svg+xml,<svg onload=alert(1)>",
    "data:image/svg+xml;base64,PHN2Zz4=", "data:image/png ;base64,x", "data:,x", "data:application/octet-stream;base64,AA",
    "//attacker.example/p.png", "/files/secret.png", "p.png", "https:p.png", "https:/attacker.example/p.png",
    "https://user:pw@attacker.example/p.png", "https://bank.example@attacker.example/p.png",
    "file:///etc/passwd", "blob:https://x/1", "ftp://attacker.example/p.png", "", null, 42, { url: SECRET },
  ];
  for (const bad of never) assert.equal(p.judge(bad), null, String(bad));
  // Video and audio: remote only, never inline data.
  assert.equal(p.judge(PNG, "video"), null);
  assert.equal(p.judge("data:audio/mpeg;base64,AA", "audio"), null);
  assert.equal(p.judge("https://media.example/a.mp3", "audio").load, false);
});

test("policy: imageHosts entries, exact, *. subdomains, * and canonical address forms", () => {
  const p = new MediaPolicy(["cdn.example.com", "*.images.example.org", "127.0.0.1", "::1", "BÜCHER.example", 7, "https://bad/"]);
  const loads = (url) => p.judge(url).load;
  assert.equal(loads("https://cdn.example.com/a.png"), true);
  assert.equal(loads("https://CDN.EXAMPLE.COM./a.png"), true);
  assert.equal(loads("https://evil-cdn.example.com/a.png"), false);
  assert.equal(loads("https://cdn.example.com.attacker.example/a.png"), false);
  assert.equal(loads("https://a.images.example.org/x.png"), true);
  assert.equal(loads("https://b.a.images.example.org/x.png"), true);
  assert.equal(loads("https://images.example.org/x.png"), false); // *. means subdomains
  assert.equal(loads("https://xyimages.example.org/x.png"), false);
  assert.equal(loads("http://2130706433/x.png"), true); // the same address as 127.0.0.1
  assert.equal(loads("http://[::1]:8080/x.png"), true);
  assert.equal(loads("https://xn--bcher-kva.example/x.png"), true); // IDN entry, punycode URL
  assert.equal(loads("http://127.0.0.2/x.png"), false);
  assert.equal(new MediaPolicy(["*"]).judge(SECRET).load, true);
  assert.equal(new MediaPolicy().judge(SECRET).load, false);
  const q = new MediaPolicy();
  q.approve(SECRET);
  assert.equal(q.judge(SECRET).load, true);
  assert.equal(q.judge(`${SECRET}x`).load, false); // one click approves one URL
});

test("placeholder HTML names the host and cannot be broken out of", () => {
  const { document, el } = host();
  el.innerHTML = mediaHtml('https://attacker.example/a.png?q="><img src=x onerror=alert(1)>', { alt: '"><script>alert(2)</script>' });
  assert.equal(el.querySelectorAll("img, script").length, 0);
  const button = el.querySelector("button.gth-media-placeholder");
  assert.equal(el.children.length, 1);
  assert.match(button.textContent, /Image from attacker\.example/);
  assert.match(button.textContent, /<script>alert\(2\)<\/script>/); // the alt text, as text
  assert.ok(!button.dataset.gthSrc.includes('"'));
  assert.equal(document.querySelectorAll("[onerror]").length, 0);
});

test("Markdown: a remote image loads nothing until a person clicks it, then exactly it loads", () => {
  const { window, el } = host();
  const policy = new MediaPolicy();
  const stream = new MarkdownStream(el, policy);
  stream.set(`Here:\n\n![chart](${SECRET})\n\nand ![inline](${PNG})`);
  assert.deepEqual([...el.querySelectorAll("img")].map((i) => i.getAttribute("src")), [PNG]);
  const button = el.querySelector(".gth-media-placeholder");
  assert.match(button.textContent, /attacker\.example/);

  click(window, button, { trusted: false }); // a script's click is not a choice
  assert.equal(el.querySelectorAll("img").length, 1);
  click(window, button);
  const img = [...el.querySelectorAll("img")].find((i) => i.getAttribute("src") === SECRET);
  assert.ok(img);
  assert.equal(img.getAttribute("referrerpolicy"), "no-referrer");
  assert.equal(img.getAttribute("alt"), "chart");
  assert.equal(el.querySelector(".gth-media-placeholder"), null);

  // Painted again (streaming), the approved image stays loaded; another URL still waits.
  stream.set(`Here:\n\n![chart](${SECRET})\n\nand ![inline](${PNG})\n\n![other](https://attacker.example/q.png)`);
  assert.ok([...el.querySelectorAll("img")].some((i) => i.getAttribute("src") === SECRET));
  assert.equal(el.querySelectorAll(".gth-media-placeholder").length, 1);
});

test("Markdown: an image inside a link loads on click instead of following the link", () => {
  const { window, el } = host();
  new MarkdownStream(el, new MediaPolicy()).set(`[![x](${SECRET})](https://example.com/page)`);
  const button = el.querySelector("a .gth-media-placeholder");
  assert.ok(button);
  const ev = new window.Event("click", { bubbles: true, cancelable: true });
  Object.defineProperty(ev, "isTrusted", { value: true });
  button.dispatchEvent(ev);
  assert.equal(ev.defaultPrevented, true);
  assert.equal(el.querySelector("a img").getAttribute("src"), SECRET);
});

test("Markdown: trusted hosts load at once, and placeholders load when the hosts arrive later", () => {
  const trusted = new MediaPolicy(["attacker.example"]);
  assert.match(renderMarkdown(`![c](${SECRET})`, trusted), /<img class="gth-media" src="https:\/\/attacker\.example\/p\.png\?d=sk-live-123"/);

  const { el } = host();
  const policy = new MediaPolicy();
  new MarkdownStream(el, policy).set(`![a](${SECRET})\n\n![b](https://other.example/b.png)`);
  assert.equal(el.querySelectorAll("img").length, 0);
  policy.setHosts(["attacker.example"]);
  upgradeMedia(el, policy);
  assert.deepEqual([...el.querySelectorAll("img")].map((i) => i.getAttribute("src")), [SECRET]);
  assert.equal(el.querySelectorAll(".gth-media-placeholder").length, 1);
});

test("Markdown: SVG, HTML and script data URLs never become images or links", () => {
  for (const bad of ["data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+", "data:text/html,<script>alert(1)</script>", "javascript:alert(1)"]) {
    const { el } = host();
    el.innerHTML = renderMarkdown(`![x](${bad}) [y](${bad})`);
    assert.equal(el.querySelectorAll("img, button, a[href]").length, 0, bad);
  }
});

test("Markdown links: http(s) and mailto only, no credentials or relative tricks, no opener, the real host shown", () => {
  const { el } = host();
  el.innerHTML = renderMarkdown(
    "[a](https:evil) [b](https://bank.example@attacker.example/login) [c](data:image/png;base64,iVBORw0KGgo=) " +
    "[https://bank.example/login](https://attacker.example/login) [docs](https://docs.example.org/x) " +
    "[mail](mailto:me@example.com) https://plain.example/",
  );
  const hrefs = [...el.querySelectorAll("a[href]")].map((a) => a.getAttribute("href"));
  assert.deepEqual(hrefs, ["https://attacker.example/login", "https://docs.example.org/x", "mailto:me@example.com", "https://plain.example/"]);
  for (const a of el.querySelectorAll("a[href^=http]")) {
    assert.equal(a.getAttribute("target"), "_blank");
    assert.equal(a.getAttribute("rel"), "noopener noreferrer");
    assert.equal(a.getAttribute("title"), a.getAttribute("href"));
  }
  // The text claims bank.example; the link says it goes to attacker.example. Honest links do not.
  const badges = [...el.querySelectorAll(".gth-link-host")].map((b) => b.textContent);
  assert.deepEqual(badges, ["(attacker.example)"]);
  // The refused ones keep their text, with nothing to follow.
  assert.match(el.textContent, /\ba\b.*\bb\b.*\bc\b/s);
});

test("A2UI: Image, Video and AudioPlayer from an untrusted host wait for a click that names the host", () => {
  const { window, el } = surface([
    { id: "root", component: "Column", children: ["img", "vid", "aud", "ok"] },
    { id: "img", component: "Image", url: SECRET, description: "chart" },
    { id: "vid", component: "Video", url: "https://media.example/v.mp4" },
    { id: "aud", component: "AudioPlayer", url: "https://media.example/a.mp3", description: "intro" },
    { id: "ok", component: "Image", url: PNG },
  ]);
  assert.equal(el.querySelectorAll("video, audio").length, 0);
  assert.deepEqual([...el.querySelectorAll("img")].map((i) => i.getAttribute("src")), [PNG]);
  const names = [...el.querySelectorAll(".gth-media-placeholder .gth-media-host")].map((n) => n.textContent);
  assert.deepEqual(names, ["Image from attacker.example", "Video from media.example", "Audio from media.example"]);

  click(window, el.querySelector("[data-component-id=img] button"));
  assert.equal(el.querySelector("[data-component-id=img] img").getAttribute("src"), SECRET);
  click(window, el.querySelector("[data-component-id=vid] button"));
  assert.equal(el.querySelector("[data-component-id=vid] video").getAttribute("src"), "https://media.example/v.mp4");
  assert.equal(el.querySelectorAll("audio").length, 0); // one click loads one thing
});

test("A2UI: a trusted host's image loads at once; a data-bound URL follows the same rule", () => {
  const media = new MediaPolicy(["*.example.com"]);
  const surf = v9([
    { id: "root", component: "Column", children: ["a", "b"] },
    { id: "a", component: "Image", url: "https://cdn.example.com/a.png" },
    { id: "b", component: "Image", url: { path: "/pic" } },
  ]);
  surf.data = { pic: SECRET };
  const { document } = makeDom();
  const view = mountSurface(surf, { doc: document, media });
  assert.equal(view.el.querySelector("[data-component-id=a] img").getAttribute("src"), "https://cdn.example.com/a.png");
  assert.equal(view.el.querySelector("[data-component-id=b] img"), null);
  assert.match(view.el.querySelector("[data-component-id=b] button").textContent, /attacker\.example/);
});

test("A2UI openUrl: the button shows where it goes; only http(s) without credentials opens, without an opener", () => {
  const btn = (id, url) => ({ id, component: "Button", label: "Continue", action: { functionCall: { call: "openUrl", args: { url } } } });
  const { window, el, opened } = surface([
    { id: "root", component: "Row", children: ["good", "js", "data", "cred", "idn"] },
    btn("good", "https://docs.example.org/guide"),
    btn("js", "javascript:alert(document.cookie)"),
    btn("data", "data:text/html,<script>alert(1)</script>"),
    btn("cred", "https://bank.example@attacker.example/"),
    btn("idn", "https://аpple.example/"), // Cyrillic "а"
  ]);
  const b = (id) => el.querySelector(`[data-component-id=${id}]`);
  assert.equal(b("good").querySelector(".gth-link-host").textContent, "↗ docs.example.org");
  assert.match(b("good").title, /https:\/\/docs\.example\.org\/guide/);
  assert.equal(b("idn").querySelector(".gth-link-host").textContent, "↗ xn--pple-43d.example");
  for (const id of ["js", "data", "cred"]) assert.equal(b(id).querySelector(".gth-link-host").textContent, "(link refused)", id);
  for (const id of ["good", "js", "data", "cred"]) click(window, b(id));
  assert.deepEqual(opened, ["https://docs.example.org/guide"]);
  assert.equal(safeLinkUrl("https://bank.example@attacker.example/"), null);
});

test("A2UI openUrl: the default opener passes noopener and noreferrer", () => {
  const calls = [];
  const saved = globalThis.open;
  globalThis.open = (...args) => calls.push(args);
  try {
    const { window, document } = makeDom();
    const view = mountSurface(v9([{ id: "root", component: "Button", label: "Go", action: { functionCall: { call: "openUrl", args: { url: "https://docs.example.org/" } } } }]), { doc: document });
    click(window, view.el.querySelector("button"));
  } finally {
    globalThis.open = saved;
  }
  assert.deepEqual(calls, [["https://docs.example.org/", "_blank", "noopener,noreferrer"]]);
});

test("comm backend: info() asks the kernel and returns its info body; silence or refusal is null", async () => {
  const model = fakeModel({}, {
    onSend: (msg, m) => {
      if (msg.type === "info") setTimeout(() => m.deliver({ type: "info", requestId: msg.requestId, info: { provider: "fake", a2ui: { imageHosts: ["cdn.example.com"] } } }));
    },
  });
  const backend = createBackend("comm", { model, baseUrl: "/" });
  assert.deepEqual(await backend.info(), { provider: "fake", a2ui: { imageHosts: ["cdn.example.com"] } });
  assert.deepEqual(model.sent.map((m) => m.type), ["info"]);

  const refusing = fakeModel({}, { onSend: (msg, m) => setTimeout(() => m.deliver({ type: "error", requestId: msg.requestId, status: 404, body: { code: "not_found" } })) });
  assert.equal(await createBackend("comm", { model: refusing, baseUrl: "/" }).info(), null);
  const silent = fakeModel({});
  assert.equal(await createBackend("comm", { model: silent, baseUrl: "/", infoTimeoutMs: 20 }).info(), null);
});

test("the transcript applies imageHosts from the agent's info to what it already shows", () => {
  const { el, document } = host();
  const view = new TranscriptView({ doc: document, el, onSend: () => true, onStop() {}, onAction() {}, onResolveInterrupts() {} });
  view.handle({ type: "history", messages: [{ id: "a1", role: "assistant", content: `![x](${SECRET}) ![y](https://other.example/y.png)` }] });
  assert.equal(el.querySelectorAll(".gth-msg img").length, 0);
  view.setMediaHosts(["attacker.example"]);
  assert.deepEqual([...el.querySelectorAll(".gth-msg img")].map((i) => i.getAttribute("src")), [SECRET]);
  assert.equal(el.querySelectorAll(".gth-media-placeholder").length, 1);
  view.destroy();
});

test("mount: the hosts in the agent's info (GET gth/info) reach the view's policy", async () => {
  const { mount } = await import("../src/app/mount.js");
  const { el } = host();
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "http", base_url: "/base/", model_label: "", client_tools: [] });
  const fetch = async (url) => {
    if (url === "/base/gth/threads/t1") {
      return Response.json({ threadId: "t1", messages: [{ id: "a0", role: "assistant", content: `![x](https://cdn.example.com/x.png) ![y](${SECRET})` }] });
    }
    if (url === "/base/gth/info") return Response.json({ provider: "fake", model: "m", a2ui: { imageHosts: ["cdn.example.com"] } });
    return new Response("not found", { status: 404 });
  };
  const cleanup = mount({ model, el, env: { fetch, location: { protocol: "http:" }, raf: (cb) => setTimeout(cb, 0) } });
  for (let i = 0; i < 500 && !el.querySelector(".gth-msg img"); i++) await new Promise((r) => setTimeout(r, 2));
  assert.deepEqual([...el.querySelectorAll(".gth-msg img")].map((i) => i.getAttribute("src")), ["https://cdn.example.com/x.png"]);
  assert.equal(el.querySelectorAll(".gth-media-placeholder").length, 1);
  assert.equal(el.querySelector(".gth-model").textContent, "fake · m");
  cleanup();
});

test("A2UI: loading an image inside a Button does not press the button", () => {
  const actions = [];
  const { window, document } = makeDom();
  const view = mountSurface(v9([
    { id: "root", component: "Button", child: "pic", action: { event: { name: "pick" } } },
    { id: "pic", component: "Image", url: SECRET },
  ]), { doc: document, onAction: (a) => actions.push(a) });
  document.body.append(view.el);
  click(window, view.el.querySelector(".gth-media-placeholder"));
  assert.equal(view.el.querySelector("button img").getAttribute("src"), SECRET);
  assert.deepEqual(actions, []);
  click(window, view.el.querySelector("[data-component-id=root]"));
  assert.equal(actions.length, 1);
});
