// MCP notices and sign-in (src/app/mcp.js), in a mounted view: a skipped server is said once,
// also when learnt after the first run; a server waiting for OAuth gets a sign-in button.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mount } from "../src/app/mount.js";
import { signInUrl } from "../src/app/mcp.js";
import { makeDom } from "../test-support/dom.mjs";
import { fakeModel } from "../test-support/model.mjs";
import { fakeServer, testEnv, until } from "../test-support/mount.mjs";
import { started, finished, text } from "../test-support/sse.mjs";

test("an MCP server the agent skipped is a notice, also when it is learnt after the first run", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", model_label: "x", pending_prompt: "" });
  let infoCalls = 0;
  const base = fakeServer([(b) => [started(b), ...text("m1", "hi"), finished(b)]]);
  const fetch = async (url, init = {}) => {
    if (url === "/base/gth/info") {
      infoCalls += 1;
      // Before the first run the servers are still connecting; after it one has failed.
      const status = infoCalls === 1 ? "pending" : "error";
      const notices = infoCalls === 1 ? [] : ["MCP server 'files' was skipped: <b>boom</b>"];
      return Response.json({ a2ui: { imageHosts: [] }, mcp: { servers: { files: { status } }, notices } });
    }
    return base.fetch(url, init);
  };
  const cleanup = mount({ model, el, css: "", env: testEnv(fetch) });
  await until(() => !el.querySelector(".gth-send").disabled, "ready");
  assert.equal([...el.querySelectorAll(".gth-note-warning")].length, 0);
  model.set("pending_prompt", "hello");
  await until(() => el.querySelector(".gth-note-warning"), "notice");
  const notes = [...el.querySelectorAll(".gth-note-warning")];
  assert.equal(notes.length, 1);
  assert.equal(notes[0].textContent.includes("<b>boom</b>"), true); // shown as text, never as HTML
  assert.equal(notes[0].querySelector("b"), null);
  cleanup();
});

test("an MCP server waiting for OAuth gets a sign-in button (http(s) pages only)", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  document.body.append(el);
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", model_label: "x", pending_prompt: "" });
  const base = fakeServer([]);
  const fetch = async (url, init = {}) => {
    if (url === "/base/gth/info") {
      return Response.json({ mcp: { notices: [], servers: {
        docs: { status: "needs_authorization", authorizationUrl: "https://auth.example/authorize?state=s1" },
        evil: { status: "needs_authorization", authorizationUrl: "javascript:alert(1)" },
      } } });
    }
    return base.fetch(url, init);
  };
  const cleanup = mount({ model, el, css: "", env: testEnv(fetch) });
  await until(() => el.querySelector(".gth-oauth-button"), "sign-in button");
  const buttons = [...el.querySelectorAll(".gth-oauth-button")];
  assert.equal(buttons.length, 1);
  assert.equal(buttons[0].getAttribute("href"), "https://auth.example/authorize?state=s1");
  assert.equal(buttons[0].getAttribute("target"), "_blank");
  assert.equal(buttons[0].getAttribute("rel"), "noopener noreferrer");
  assert.match(buttons[0].textContent, /docs/);
  cleanup();
});

test("signInUrl: the page of a server waiting for OAuth, http(s) only", () => {
  const waiting = (authorizationUrl) => ({ status: "needs_authorization", authorizationUrl });
  assert.equal(signInUrl(waiting("https://auth.example/a?state=1")), "https://auth.example/a?state=1");
  assert.equal(signInUrl(waiting("http://localhost:9/cb")), "http://localhost:9/cb");
  for (const url of ["javascript:alert(1)", "data:text/html,x", "not a url", 42]) assert.equal(signInUrl(waiting(url)), null, String(url));
  assert.equal(signInUrl({ status: "connected", authorizationUrl: "https://auth.example/" }), null);
  assert.equal(signInUrl(null), null);
});

test("a shortened MCP tool name is shown as its server and real name", async () => {
  const { document } = makeDom();
  const el = document.createElement("div");
  const model = fakeModel({ thread_id: "t1", agent: "default", transport: "auto", base_url: "/base/", pending_prompt: "" });
  const base = fakeServer([(b) => [started(b), { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "mcp__files__a1b2" }, { type: "TOOL_CALL_END", toolCallId: "c1" }, finished(b)]]);
  const fetch = async (url, init = {}) => {
    if (url === "/base/gth/info") {
      const names = { mcp__files__a1b2: "read_a_very_long_file_name", mcp__files__ls: "ls" };
      return Response.json({ mcp: { notices: ["MCP server 'web' was skipped"], servers: { files: { status: "connected", names } } } });
    }
    return base.fetch(url, init);
  };
  const cleanup = mount({ model, el, env: testEnv(fetch) });
  await until(() => el.querySelector(".gth-root").dataset.ready === "true", "ready");
  await until(() => el.querySelector(".gth-note-warning"), "the info applied (its notice shown)");
  model.set("pending_prompt", "list");
  await until(() => el.querySelector(".gth-tool[data-tool-name]"), "tool card");
  assert.equal(el.querySelector(".gth-tool-name").textContent, "files › read_a_very_long_file_name");
  cleanup();
});
