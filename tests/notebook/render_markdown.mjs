// Renders Markdown as two JavaScript renderers a reader's front end may use, for
// test_static_copy.py: marked with its defaults (GFM on, autolinks included: what JupyterLab
// renders a Markdown output with) and markdown-it with raw HTML and linkify on. Reads a JSON
// array of strings on stdin; prints {"marked": [html, ...], "markdown-it": [html, ...]}.
// The packages are the ones installed for the project: the lab extension's marked (JupyterLab's
// own dependency) and the widget's markdown-it, imported by path from the repository's root.
import { readFileSync } from "node:fs";

const root = new URL("../../", import.meta.url);
const load = (path) => import(new URL(path, root).href);
const { marked } = await load("labextension/node_modules/marked/lib/marked.esm.js");
const { default: MarkdownIt } = await load("js/node_modules/markdown-it/dist/markdown-it.mjs");

const texts = JSON.parse(readFileSync(0, "utf8"));
const markdownIt = new MarkdownIt({ html: true, linkify: true });
process.stdout.write(
  JSON.stringify({
    marked: texts.map((text) => marked.parse(text, { async: false })),
    "markdown-it": texts.map((text) => markdownIt.render(text)),
  }),
);
