// The catalog functions: web_core's own basic-function test file run against ours (through
// a2ui_webcore/hooks.mjs), then what that file does not cover: locales, the `${…}` expression
// language, untrusted patterns and URLs, and how a surface shows a function it does not know.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { invoke, FUNCTIONS } from "../src/a2ui/functions.js";
import { parseTemplate } from "../src/a2ui/expression.js";
import { formatDate } from "../src/a2ui/dates.js";
import { normalize } from "../src/a2ui/normalize.js";
import { mountSurface } from "../src/a2ui/render.js";
import { makeDom, click } from "../test-support/dom.mjs";

const JS = dirname(dirname(fileURLToPath(import.meta.url)));
const V09 = dirname(fileURLToPath(import.meta.resolve("@a2ui/web_core/v0_9")));
const WEB_CORE_TESTS = join(V09, "basic_catalog", "functions", "basic_functions.test.js");
// Where we differ from web_core on purpose: it opens relative URLs against the page's address;
// we open absolute http(s) addresses only (media.js's link policy).
const EXPECTED_TO_DIFFER = ["openUrl"];

test("web_core's basic-function tests pass against our functions (all but the relative-URL openUrl case)", () => {
  const run = spawnSync(process.execPath, ["--import", "./test/a2ui_webcore/hooks.mjs", "--test", "--test-reporter=tap", WEB_CORE_TESTS], {
    cwd: JS,
    encoding: "utf8",
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "NODE_TEST_CONTEXT")), // a run of its own, in TAP
    timeout: 60_000,
  });
  const leaves = [...run.stdout.matchAll(/^ {8}(ok|not ok) \d+ - (.+)$/gm)].map((m) => ({ ok: m[1] === "ok", name: m[2].trim() }));
  const failed = leaves.filter((l) => !l.ok).map((l) => l.name);
  assert.ok(leaves.length >= 37, `web_core's file ran ${leaves.length} tests:\n${run.stdout}\n${run.stderr}`);
  assert.deepEqual(failed, EXPECTED_TO_DIFFER, run.stdout);
  assert.ok(leaves.filter((l) => l.ok).length >= 36);
});

test("openUrl: absolute http(s) only; javascript:, data:, file: and relative addresses are refused", () => {
  const opened = [];
  const env = { openUrl: (u) => opened.push(u) };
  invoke("openUrl", { url: "https://example.com" }, env);
  invoke("openUrl", { url: "http://example.com/path?q=1" }, env);
  assert.deepEqual(opened, ["https://example.com/", "http://example.com/path?q=1"]);
  for (const url of ["javascript:alert(1)", "  javascript:alert(1)", "data:text/html,<script>", "file:///etc/passwd", "/relative", "about:blank", "https://user:pw@example.com/"]) {
    assert.throws(() => invoke("openUrl", { url }, env), /Unsupported URL scheme/, url);
  }
  assert.equal(opened.length, 2);
  invoke("openUrl", { url: "https://example.com" }, {}); // evaluated outside a click: opens nothing
  assert.equal(opened.length, 2);
});

test("the whole v0.9 basic catalog and the minimal catalog's capitalize are implemented", () => {
  const catalog = ["required", "regex", "length", "numeric", "email", "formatString", "formatNumber", "formatCurrency", "formatDate", "pluralize", "openUrl", "and", "or", "not"];
  for (const name of [...catalog, "capitalize"]) assert.equal(typeof FUNCTIONS[name], "function", name);
});

test("numbers, currencies and plurals follow the locale (Intl)", () => {
  assert.equal(invoke("formatNumber", { value: 1234567.891, decimals: 2 }, { locale: "en-US" }), "1,234,567.89");
  assert.equal(invoke("formatNumber", { value: 1234567.891, decimals: 2 }, { locale: "de-DE" }), "1.234.567,89");
  assert.equal(invoke("formatNumber", { value: 1234567, grouping: false }, { locale: "en-US" }), "1234567");
  assert.equal(invoke("formatCurrency", { value: 1234.5, currency: "EUR" }, { locale: "de-DE" }).replace(/\s/g, " "), "1.234,50 €");
  assert.equal(invoke("formatCurrency", { value: 1234.5, currency: "JPY" }, { locale: "ja-JP" }), "￥1,235");
  assert.equal(invoke("formatCurrency", { value: 5, currency: "USD", decimals: 0 }, { locale: "en-US" }), "$5");
  assert.equal(invoke("formatNumber", { value: null }, {}), "");
  const forms = { one: "plik", few: "pliki", many: "plików", other: "pliku" };
  assert.equal(invoke("pluralize", { value: 1, ...forms }, { locale: "pl" }), "plik");
  assert.equal(invoke("pluralize", { value: 3, ...forms }, { locale: "pl" }), "pliki");
  assert.equal(invoke("pluralize", { value: 5, ...forms }, { locale: "pl" }), "plików");
  assert.equal(invoke("pluralize", { value: 0, zero: "no items", one: "item", other: "items" }, { locale: "en" }), "no items");
});

test("formatDate: TR35 patterns with names in the locale and the given time zone", () => {
  const at = "2026-01-16T14:30:05Z";
  const utc = { locale: "en-US", timeZone: "UTC" };
  assert.equal(formatDate(at, "MMM dd, yyyy", utc), "Jan 16, 2026");
  assert.equal(formatDate(at, "HH:mm", utc), "14:30");
  assert.equal(formatDate(at, "h:mm a", utc), "2:30 PM");
  assert.equal(formatDate(at, "EEEE, d MMMM", utc), "Friday, 16 January");
  assert.equal(formatDate(at, "yy-M-d 'at' H:mm:ss", utc), "26-1-16 at 14:30:05");
  assert.equal(formatDate(at, "HH:mm", { locale: "en-US", timeZone: "Asia/Tokyo" }), "23:30");
  assert.equal(formatDate(at, "EEEE d MMMM", { locale: "fr-FR", timeZone: "UTC" }), "vendredi 16 janvier");
  assert.equal(formatDate("2026-01-16", "EEEE", { locale: "en-US", timeZone: "Pacific/Honolulu" }), "Friday"); // a calendar date stays its day
  assert.equal(formatDate(Date.UTC(2026, 0, 16), "yyyy-MM-dd", utc), "2026-01-16");
  assert.equal(formatDate("not a date", "yyyy", utc), "");
});

test("the ${…} expression language: paths, calls with named arguments, literals, escapes, depth", () => {
  assert.deepEqual(parseTemplate("a ${/x} b ${rel/y}"), ["a ", { path: "/x" }, " b ", { path: "rel/y" }]);
  assert.deepEqual(parseTemplate("${formatDate(value: ${/d}, format: 'MM-dd')}"), [{ call: "formatDate", args: { value: { path: "/d" }, format: "MM-dd" } }]);
  assert.deepEqual(parseTemplate("${add(a: 1, b: -2.5)} ${true} ${null}"), [{ call: "add", args: { a: 1, b: -2.5 } }, " ", true, " ", null]);
  assert.deepEqual(parseTemplate("cost \\${x}"), ["cost ${x}"]);
  assert.throws(() => parseTemplate("${/x"), /Unclosed/);
  assert.throws(() => parseTemplate("${f(a: 1}"), /Expected '\)'/);
  assert.throws(() => parseTemplate(`\${${"f(a: ".repeat(50)}1${")".repeat(50)}}`), /nested too deeply/);
  assert.throws(() => parseTemplate(`${"${".repeat(4000)}x`), /nested too deeply/);
  assert.throws(() => parseTemplate(`${"${".repeat(50000)}x`), /longer than/);
  assert.throws(() => parseTemplate("${f(__proto__: 1)}"), /forbidden/);
});

test("regex: agent patterns with nested quantifiers or past the length cap are refused, not run", () => {
  assert.equal(invoke("regex", { value: "12345", pattern: "^\\d{5}$" }), true);
  assert.throws(() => invoke("regex", { value: "a".repeat(40) + "!", pattern: "^(a+)+$" }), /nests quantifiers/);
  assert.throws(() => invoke("regex", { value: "x", pattern: "(x*)*y" }), /nests quantifiers/);
  assert.throws(() => invoke("regex", { value: "x", pattern: "a".repeat(501) }), /longer than/);
  assert.equal(invoke("length", { value: "héllo", min: 5, max: 5 }), true);
  assert.equal(invoke("email", { value: "<script>@x.com" }), true === /^[^\s@]+@/.test("<script>@x.com")); // a string check, nothing more
});

function mount(components, data, opts = {}) {
  const { window, document } = makeDom();
  const { surfaces } = normalize([
    { version: "v0.9", createSurface: { surfaceId: "f", catalogId: "basic" } },
    { version: "v0.9", updateComponents: { surfaceId: "f", components } },
    ...(data ? [{ version: "v0.9", updateDataModel: { surfaceId: "f", path: "/", value: data } }] : []),
  ]);
  const view = mountSurface(surfaces[0], { doc: document, locale: "en-US", timeZone: "UTC", ...opts });
  document.body.append(view.el);
  return { window, el: view.el };
}

test("a function no catalog here has shows a labelled placeholder; the rest of the surface renders", () => {
  const { el } = mount([
    { id: "root", component: "Column", children: ["t", "u", "b"] },
    { id: "t", component: "Text", text: { call: "formatCurrency", args: { value: { path: "/price" }, currency: "USD" } } },
    { id: "u", component: "Text", text: { call: "shout", args: { value: "hi" } } },
    { id: "b", component: "Button", child: "bl", action: { event: { name: "go" } }, checks: [{ condition: { call: "mystery", args: {} }, message: "?" }] },
    { id: "bl", component: "Text", text: "Go" },
  ], { price: 1999.5 });
  assert.equal(el.querySelector("[data-component-id=t]").textContent, "$1,999.50");
  const u = el.querySelector(".gth-a2ui-unsupported[data-component-id=u]");
  assert.equal(u.dataset.function, "shout");
  assert.match(u.textContent, /Unsupported function: shout/);
  assert.equal(el.querySelector("button[data-component-id=b]").disabled, true); // a check that cannot run fails closed
});

test("a Button's openUrl functionCall opens only on a person's click, and sends the agent nothing", () => {
  const opened = [];
  const actions = [];
  const { window, el } = mount([
    { id: "root", component: "Button", child: "l", action: { functionCall: { call: "openUrl", args: { url: { path: "/u" } } } } },
    { id: "l", component: "Text", text: "Open" },
  ], { u: "https://example.com/docs" }, { openUrl: (u) => opened.push(u), onAction: (a) => actions.push(a) });
  const button = el.querySelector("button");
  click(window, button, { trusted: false });
  assert.deepEqual(opened, []);
  click(window, button);
  assert.deepEqual(opened, ["https://example.com/docs"]);
  assert.deepEqual(actions, []);
});
