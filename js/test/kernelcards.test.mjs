// The data-agent tools' results (list_variables, describe_variable, run_python) drawn in their
// tool cards, live and after a reload; kernel output is untrusted, so it stays text and only a
// base64 raster image becomes an <img>.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TranscriptView } from "../src/transcript.js";
import { inlineImageUrl } from "../src/media.js";
import { humanBytes, renderDescribe, renderKernelResult, renderRunPython, renderVariables } from "../src/view/kernelcards.js";
import { readFileSync } from "node:fs";
import { makeDom } from "../test-support/dom.mjs";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const VARIABLES = {
  variables: [
    {
      name: "sales", type: "pandas.DataFrame", shape: [12, 3], size_bytes: 1234,
      columns: [{ name: "month", dtype: "object" }, { name: "revenue", dtype: "float64" }, { name: "units", dtype: "int64" }],
    },
    { name: "n", type: "int", size_bytes: 28 },
    { name: "xs", type: "list", length: 3, size_bytes: 88 },
  ],
  total: 3, offset: 0, limit: 50, next_offset: null, ranOn: "subshell",
};

const DESCRIBE_DF = {
  name: "sales", type: "pandas.DataFrame", data_context: "sample", size_bytes: 1234, shape: [12, 3],
  columns: [{ name: "month", dtype: "object" }, { name: "revenue", dtype: "float64" }, { name: "units", dtype: "int64" }],
  null_counts: { month: 0, revenue: 1, units: 0 },
  describe: { columns: ["revenue", "units"], index: ["count", "mean", "max"], data: [[11, 12], [1050.5, 31.2], [2000, 60]] },
  head: { columns: ["month", "revenue", "units"], index: [0, 1], data: [["Jan", 1000.0, 30], ["Feb", null, 28]] },
  ranOn: "subshell",
};

const RUN_OK = {
  status: "ok", stdout: "rows: 12\n", stderr: "", result: "month\nJan    1000.0", displays: ["<Figure size 640x480 with 1 Axes>"],
  images: [{ mimeType: "image/png", data: PNG }], error: null, note: "", elapsed: 0.12, ranOn: "subshell",
};

function setup() {
  const { window, document } = makeDom();
  const queue = [];
  const el = document.createElement("div");
  document.body.append(el);
  const view = new TranscriptView({
    doc: document, el, raf: (cb) => queue.push(cb), onSend: () => true, onStop: () => {}, onAction: () => {}, onResolveInterrupts: () => {},
  });
  const agui = (event) => view.handle({ type: "agui", event });
  const frame = () => queue.splice(0).forEach((cb) => cb());
  return { window, document, el, view, agui, frame };
}

/** A tool call streamed and answered, as the run sends it. */
function call(agui, id, name, args, result) {
  agui({ type: "TOOL_CALL_START", toolCallId: id, toolCallName: name });
  agui({ type: "TOOL_CALL_ARGS", toolCallId: id, delta: JSON.stringify(args) });
  agui({ type: "TOOL_CALL_END", toolCallId: id });
  agui({ type: "TOOL_CALL_RESULT", messageId: `r-${id}`, toolCallId: id, content: typeof result === "string" ? result : JSON.stringify(result) });
}

const cells = (row) => [...row.querySelectorAll("th, td")].map((c) => c.textContent);

test("list_variables: a table of name, type, shape, size and columns", () => {
  const { el, agui } = setup();
  call(agui, "v1", "list_variables", {}, VARIABLES);
  const card = el.querySelector(".gth-tool[data-tool-name=list_variables]");
  assert.equal(card.dataset.status, "done");
  const t = card.querySelector(".gth-tool-body table.gth-variables");
  assert.deepEqual(cells(t.querySelector("thead tr")), ["Name", "Type", "Shape", "Size", "Columns"]);
  const rows = [...t.querySelectorAll("tbody tr")].map(cells);
  assert.deepEqual(rows, [
    ["sales", "pandas.DataFrame", "12×3", "1.2 KB", "month: object, revenue: float64, units: int64"],
    ["n", "int", "", "28 B", ""],
    ["xs", "list", "len 3", "88 B", ""],
  ]);
  assert.equal(card.querySelector(".gth-variables-result").dataset.ranOn, "subshell");
  assert.equal(card.querySelector(".gth-variables-total").textContent, "3 variables");
  assert.equal(card.querySelector(".gth-kernel-note"), null);
});

test("list_variables: more pages, a note, many columns cut short, markup as text", () => {
  const { document } = makeDom();
  const columns = Array.from({ length: 9 }, (_, i) => ({ name: `<b>c${i}</b>`, dtype: "float64" }));
  const el = renderVariables(document, {
    variables: [{ name: "<img src=x onerror=alert(1)>", type: "pandas.DataFrame", shape: [5, 9], size_bytes: 5 * 1024 * 1024, columns }],
    total: 120, offset: 50, limit: 50, next_offset: 100, note: "Private names (_x) are hidden.",
  });
  assert.equal(el.querySelector("img, b"), null);
  const row = cells(el.querySelector("tbody tr"));
  assert.equal(row[0], "<img src=x onerror=alert(1)>");
  assert.equal(row[3], "5.0 MB");
  assert.match(row[4], /^<b>c0<\/b>: float64, .*… \+3 more$/);
  assert.equal(el.querySelector(".gth-var-columns").getAttribute("title").split(", ").length, 9);
  assert.match(el.querySelector(".gth-variables-total").textContent, /Showing 51–51 of 120 variables; more from offset 100/);
  assert.equal(el.querySelector(".gth-kernel-note").textContent, "Private names (_x) are hidden.");
  assert.equal(renderVariables(document, { variables: [], total: 0, next_offset: null }).querySelector(".gth-kernel-empty").textContent, "No variables.");
});

test("describe_variable: a DataFrame's header, schema, statistics and first rows", () => {
  const { el, agui } = setup();
  call(agui, "d1", "describe_variable", { name: "sales" }, DESCRIBE_DF);
  const d = el.querySelector(".gth-tool[data-tool-name=describe_variable] .gth-describe");
  assert.equal(d.dataset.context, "sample");
  assert.equal(d.querySelector(".gth-describe-header").textContent, "sales · pandas.DataFrame · 12×3 · 1.2 KB · data context: sample");
  const schema = [...d.querySelectorAll("table.gth-describe-schema tbody tr")].map(cells);
  assert.deepEqual(schema, [["month", "object", "0"], ["revenue", "float64", "1"], ["units", "int64", "0"]]);
  const stats = d.querySelector("table.gth-describe-stats");
  assert.deepEqual(cells(stats.querySelector("thead tr")), ["", "revenue", "units"]);
  assert.deepEqual([...stats.querySelectorAll("tbody tr")].map(cells)[1], ["mean", "1050.5", "31.2"]);
  const head = d.querySelector("table.gth-describe-head");
  assert.deepEqual([...head.querySelectorAll("tbody tr")].map(cells), [["0", "Jan", "1000", "30"], ["1", "Feb", "null", "28"]]);
  assert.equal(head.querySelector("caption").textContent, "First rows");
});

test("describe_variable: schema only, a Series, an ndarray and a plain object", () => {
  const { document } = makeDom();
  const { describe, head, ...schemaOnly } = DESCRIBE_DF;
  const s = renderDescribe(document, { ...schemaOnly, data_context: "schema" });
  assert.equal(s.querySelector(".gth-describe-stats, .gth-describe-head"), null);
  assert.ok(s.querySelector("table.gth-describe-schema"));
  assert.match(s.querySelector(".gth-describe-schema-only").textContent, /schema/);

  const series = renderDescribe(document, {
    name: "rev", type: "pandas.Series", data_context: "sample", shape: [12], dtype: "float64", null_count: 1,
    describe: { index: ["count", "mean"], data: [11, 1050.5] }, head: { index: [0, 1], data: [1000, null] },
  });
  assert.deepEqual(cells(series.querySelector(".gth-describe-schema tbody tr")), ["rev", "float64", "1"]);
  assert.deepEqual([...series.querySelectorAll(".gth-describe-stats tbody tr")].map(cells), [["count", "11"], ["mean", "1050.5"]]);
  assert.deepEqual(cells(series.querySelector(".gth-describe-head thead tr")), ["", "rev"]);

  const arr = renderDescribe(document, {
    name: "a", type: "numpy.ndarray", data_context: "sample", shape: [1000, 3], dtype: "float64", size: 3000,
    stats: { min: -1.5, max: 2.25, mean: 0.01, std: 1 }, head: ["[ 0.1 -0.2  0.3]", "[ 1.  2.  3. ]"],
  });
  assert.deepEqual(cells(arr.querySelector(".gth-describe-stats thead tr")), ["min", "max", "mean", "std"]);
  assert.deepEqual(cells(arr.querySelector(".gth-describe-stats tbody tr")), ["-1.5", "2.25", "0.01", "1"]);
  assert.equal(arr.querySelector("pre.gth-describe-values").textContent, "[ 0.1 -0.2  0.3]\n[ 1.  2.  3. ]");

  const obj = renderDescribe(document, { name: "cfg", type: "dict", data_context: "sample", length: 2, repr: "{'a': '<script>x</script>'}" });
  assert.equal(obj.querySelector(".gth-describe-header").textContent, "cfg · dict · len 2 · data context: sample");
  assert.equal(obj.querySelector("pre.gth-describe-repr").textContent, "{'a': '<script>x</script>'}");
  assert.equal(obj.querySelector("script"), null);
});

test("describe_variable: a cell that looks like a DOM node is still just text", () => {
  const { document } = makeDom();
  const d = renderDescribe(document, {
    ...DESCRIBE_DF, head: { columns: ["x"], index: [0], data: [[{ nodeType: 1, tagName: "SCRIPT" }]] },
  });
  assert.deepEqual(cells(d.querySelector(".gth-describe-head tbody tr")), ["0", '{"nodeType":1,"tagName":"SCRIPT"}']);
});

test("run_python: the code in the arguments, then stdout, result, display and the plot", () => {
  const { el, agui, frame } = setup();
  const code = "print('rows:', len(sales))\nsales.plot()";
  call(agui, "p1", "run_python", { code, justification: "look at the trend" }, RUN_OK);
  frame();
  const card = el.querySelector(".gth-tool[data-tool-name=run_python]");
  assert.equal(card.dataset.status, "done"); // "error": null is no error
  assert.equal(card.querySelector(".gth-tool-error"), null);
  assert.equal(card.querySelector(".gth-tool-args pre.gth-run-code").textContent, code);
  assert.equal(card.querySelector(".gth-tool-args-text").hidden, true);
  assert.equal(card.querySelector(".gth-run-justification").textContent, "look at the trend");
  const r = card.querySelector(".gth-run-python");
  assert.equal(r.dataset.status, "ok");
  assert.equal(r.querySelector(".gth-run-status").textContent, "ok in 0.12 s");
  assert.equal(r.querySelector("pre.gth-run-stdout").textContent, "rows: 12\n");
  assert.equal(r.querySelector("pre.gth-run-stderr"), null); // empty streams are left out
  assert.equal(r.querySelector("pre.gth-run-result").textContent, "month\nJan    1000.0");
  assert.equal(r.querySelector("pre.gth-run-display").textContent, "<Figure size 640x480 with 1 Axes>");
  const img = r.querySelector("img.gth-tool-image");
  assert.equal(img.getAttribute("src"), `data:image/png;base64,${PNG}`);
  assert.equal(img.getAttribute("alt"), "Plot from run_python");
});

test("run_python: an exception, stderr and a timeout, with ANSI colours and links stripped", () => {
  const { document } = makeDom();
  const err = renderRunPython(document, {
    status: "error", stdout: "", stderr: "warning: <careful>\n", result: null, displays: [], images: [],
    error: { ename: "KeyError", evalue: "'revenue'", traceback: ["\x1b[0;31mKeyError\x1b[0m Traceback", "----> 1 \x1b]8;;file:///a.py\x07sales['revenue']"] },
    elapsed: 0.02,
  });
  assert.equal(err.dataset.status, "error");
  assert.equal(err.querySelector("pre.gth-run-stderr").textContent, "warning: <careful>\n");
  assert.equal(err.querySelector("pre.gth-run-error").textContent, "KeyError: 'revenue'\nKeyError Traceback\n----> 1 sales['revenue']");
  assert.equal(err.querySelector(".gth-run-result"), null);
  const slow = renderRunPython(document, { status: "timeout", stdout: "", stderr: "", result: null, error: null, note: "Interrupted after 30 s.", elapsed: 30.0 });
  assert.equal(slow.querySelector(".gth-run-status").textContent, "timed out in 30 s");
  assert.equal(slow.querySelector(".gth-kernel-note").textContent, "Interrupted after 30 s.");
});

test("image policy: only base64 PNG / JPEG / GIF / WebP become an img src", () => {
  assert.equal(inlineImageUrl("image/png", PNG), `data:image/png;base64,${PNG}`);
  assert.equal(inlineImageUrl("image/jpeg", "QUJD\nREVG"), "data:image/jpeg;base64,QUJDREVG"); // line-wrapped base64
  for (const [mime, data] of [
    ["image/png", "javascript:alert(1)"],
    ["image/png", "https://evil.example/x.png"],
    ["image/png", "data:image/png;base64,QUJD"],
    ["image/png", "QU=JD"],
    ["image/png", ""],
    ["image/png", null],
    ["image/svg+xml", "PHN2Zz48L3N2Zz4="],
    ["text/html", "PGI+aGk8L2I+"],
    ["image/png;charset=x", "QUJD"],
    ["IMAGE/PNG", "QUJD"],
    ["image/bmp", "QUJD"],
    ["image/avif", "QUJD"],
    ["image/png", "QUJD\u00a0REVG"], // wrapped with other than ASCII white space
  ]) assert.equal(inlineImageUrl(mime, data), null, `${mime} ${data}`);

  const { document } = makeDom();
  const r = renderRunPython(document, {
    status: "ok", stdout: "<script>alert(1)</script>", stderr: "", result: null, error: null,
    images: [
      { mimeType: "image/png", data: "javascript:alert(1)" },
      { mimeType: "image/png", data: "https://evil.example/x.png" },
      { mimeType: "image/svg+xml", data: "PHN2Zz48L3N2Zz4=" },
      { mimeType: "image/gif", data: "R0lGODlhAQABAAAAACw=" },
    ],
  });
  const imgs = [...r.querySelectorAll("img")];
  assert.deepEqual(imgs.map((i) => i.getAttribute("src")), ["data:image/gif;base64,R0lGODlhAQABAAAAACw="]);
  assert.equal(r.querySelectorAll(".gth-run-image-omitted[data-reason=refused]").length, 3);
  assert.equal(r.querySelector("script"), null);
  assert.equal(r.querySelector(".gth-run-stdout").textContent, "<script>alert(1)</script>");
});

test("after a reload: history results render the same, images whose bytes were dropped show a placeholder", () => {
  const { el, view } = setup();
  const kept = { ...RUN_OK, images: [{ mimeType: "image/png", data: null, omitted: true }] };
  view.renderHistory([
    { id: "u", role: "user", content: "plot sales" },
    {
      id: "a", role: "assistant", toolCalls: [
        { id: "v", type: "function", function: { name: "list_variables", arguments: "{}" } },
        { id: "p", type: "function", function: { name: "run_python", arguments: JSON.stringify({ code: "sales.plot()" }) } },
        { id: "x", type: "function", function: { name: "describe_variable", arguments: '{"name":"x"}' } },
      ],
    },
    { id: "t1", role: "tool", toolCallId: "v", content: JSON.stringify(VARIABLES) },
    { id: "t2", role: "tool", toolCallId: "p", content: JSON.stringify(kept) },
    { id: "t3", role: "tool", toolCallId: "x", content: '{"error":"variable_not_found","message":"no variable named \'x\'"}', error: "variable_not_found" },
  ]);
  assert.equal(el.querySelectorAll("[data-tool-call-id=v] table.gth-variables tbody tr").length, 3);
  const p = el.querySelector("[data-tool-call-id=p]");
  assert.equal(p.querySelector(".gth-run-code").textContent, "sales.plot()");
  assert.equal(p.querySelector("img"), null);
  assert.equal(p.querySelector(".gth-run-image-omitted[data-reason=omitted]").textContent, "Image not kept after reload.");
  const x = el.querySelector("[data-tool-call-id=x]");
  assert.equal(x.dataset.status, "error");
  assert.equal(x.querySelector(".gth-tool-error").textContent, "no variable named 'x'");
  assert.equal(x.querySelector(".gth-describe"), null);
});

test("a result of another shape keeps the plain preview; the same result twice is drawn once", () => {
  const { el, agui } = setup();
  call(agui, "q", "list_variables", {}, "kernel busy, try later");
  const q = el.querySelector("[data-tool-call-id=q]");
  assert.equal(q.querySelector(".gth-kernel"), null);
  assert.equal(q.querySelector(".gth-tool-preview").textContent, "kernel busy, try later");
  call(agui, "w", "describe_variable", { name: "y" }, { unexpected: true });
  assert.equal(el.querySelector("[data-tool-call-id=w] .gth-kernel"), null);
  call(agui, "r", "run_python", { code: "1" }, RUN_OK);
  agui({ type: "TOOL_CALL_RESULT", messageId: "again", toolCallId: "r", content: JSON.stringify(RUN_OK) });
  assert.equal(el.querySelectorAll("[data-tool-call-id=r] .gth-run-python").length, 1);
  const { document } = makeDom();
  assert.equal(renderKernelResult(document, "read_file", JSON.stringify(VARIABLES)), null); // only the kernel tools
  assert.equal(humanBytes(1536), "1.5 KB");
  assert.equal(humanBytes(undefined), "");
});

test("a run_python that raised or timed out marks its card failed and shows the error in the drawing", () => {
  const { el, agui } = setup();
  const raised = {
    status: "error", stdout: "", stderr: "", result: null, displays: [], images: [],
    error: { ename: "NameError", evalue: "name 'sales2' is not defined", traceback: [] }, elapsed: 0.01,
  };
  call(agui, "e", "run_python", { code: "sales2" }, raised);
  const e = el.querySelector("[data-tool-call-id=e]");
  assert.equal(e.dataset.status, "error");
  assert.equal(e.querySelector(".gth-tool-error"), null); // no "[object Object]" line
  assert.equal(e.querySelector(".gth-run-error").textContent, "NameError: name 'sales2' is not defined");
  call(agui, "t", "run_python", { code: "while True: pass" }, { ...raised, status: "timeout", error: null, note: "Interrupted." });
  assert.equal(el.querySelector("[data-tool-call-id=t]").dataset.status, "error");
  assert.equal(el.querySelector("[data-tool-call-id=t] .gth-run-python").dataset.status, "timeout");
  call(agui, "k", "run_python", { code: "1" }, { error: "no_kernel", message: "No notebook kernel is attached to this run." });
  assert.equal(el.querySelector("[data-tool-call-id=k] .gth-tool-error").textContent, "No notebook kernel is attached to this run.");
});

/** The declarations of the rule for exactly `selector` in the widget's stylesheet. */
function cssRule(selector) {
  const css = readFileSync(new URL("../src/styles.css", import.meta.url), "utf8").replace(/\/\*[^]*?\*\//g, "");
  const rules = [...css.matchAll(/([^{}]+)\{([^}]*)\}/g)].filter((m) => m[1].split(",").map((s) => s.trim()).includes(selector));
  assert.equal(rules.length, 1, `one rule for ${selector}`);
  return Object.fromEntries(
    rules[0][2]
      .split(";")
      .map((d) => d.split(":").map((p) => p.trim()))
      .filter((d) => d[0])
      .map(([k, ...v]) => [k, v.join(":")]),
  );
}

test("a plot is at most its natural size: not stretched to the card, its height capped", () => {
  const plot = cssRule(".gth-tool-image");
  // The drawing is a flex column that stretches its items: the plot must not be one of them.
  assert.equal(cssRule(".gth-kernel")["flex-direction"], "column");
  assert.equal(plot["align-self"], "flex-start");
  assert.equal(plot.width, "auto");
  assert.equal(plot.height, "auto");
  assert.equal(plot["max-width"], "100%"); // shrinks to a narrow card, never grows past its pixels
  assert.match(plot["max-height"], /^\d+px$/);
  assert.ok(Number.parseInt(plot["max-height"], 10) <= 320, "room left for the answer in the 520 px transcript");
  assert.equal(cssRule(".gth-transcript")["max-height"], "520px");
  assert.equal(plot["object-fit"], "contain");
  assert.equal(cssRule('.gth-tool-image[data-enlarged="true"]')["max-height"], "none");
});

test("a click on a plot enlarges it, another shrinks it; Enter does the same", () => {
  const { window, el, agui, frame } = setup();
  call(agui, "p1", "run_python", { code: "sales.plot()" }, RUN_OK);
  frame();
  const img = el.querySelector("img.gth-tool-image");
  assert.equal(img.dataset.enlarged, "false");
  assert.equal(img.getAttribute("title"), "Click to enlarge");
  img.dispatchEvent(new window.Event("click", { bubbles: true }));
  assert.equal(img.dataset.enlarged, "true");
  assert.equal(img.getAttribute("aria-pressed"), "true");
  assert.equal(img.getAttribute("title"), "Click to shrink");
  img.dispatchEvent(new window.Event("click", { bubbles: true }));
  assert.equal(img.dataset.enlarged, "false");
  const enter = new window.Event("keydown", { bubbles: true });
  enter.key = "Enter";
  img.dispatchEvent(enter);
  assert.equal(img.dataset.enlarged, "true");
});

test("a plot that loads after the scroll keeps the transcript at its end, unless the reader scrolled up", () => {
  const { window, el, view, agui, frame } = setup();
  call(agui, "p1", "run_python", { code: "sales.plot()" }, RUN_OK);
  frame();
  const list = view.list;
  let height = 300;
  Object.defineProperty(list, "scrollHeight", { get: () => height, configurable: true });
  Object.defineProperty(list, "clientHeight", { value: 200, configurable: true });
  list.scrollTop = 100;
  // The image decodes: the transcript grows by its height, without a scroll event.
  height = 640;
  // `load` does not bubble; the transcript hears it in the capture phase, which linkedom does
  // not have, so a bubbling event stands in for it here (the browser suite checks the real one).
  el.querySelector("img.gth-tool-image").dispatchEvent(new window.Event("load", { bubbles: true }));
  assert.equal(list.scrollTop, 640);
  // A reader who scrolled up stays where they are.
  list.scrollTop = 0;
  list.dispatchEvent(new window.Event("scroll"));
  height = 900;
  el.querySelector("img.gth-tool-image").dispatchEvent(new window.Event("load", { bubbles: true }));
  assert.equal(list.scrollTop, 0);
});
