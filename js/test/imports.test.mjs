// src/ imports one way: no module reaches back to one that imports it, however far round.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src");

/** Every .js module under `dir`. */
function modules(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? modules(p) : p.endsWith(".js") ? [p] : [];
  });
}

/** The relative .js modules `file` imports (type-only JSDoc imports are not imports). */
function importsOf(file) {
  const source = readFileSync(file, "utf8");
  return [...source.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+\.js)"/gms)].map((m) => path.resolve(path.dirname(file), m[1]));
}

test("src/ has no import cycles", () => {
  const graph = new Map(modules(SRC).map((f) => [f, importsOf(f)]));
  assert.ok(graph.size > 40, `found ${graph.size} modules`);
  const cycles = [];
  const state = new Map(); // 1: on the current path, 2: done
  const visit = (file, trail) => {
    state.set(file, 1);
    for (const next of graph.get(file) ?? []) {
      assert.ok(graph.has(next), `${path.relative(SRC, file)} imports a missing ${path.relative(SRC, next)}`);
      if (state.get(next) === 1) cycles.push([...trail.slice(trail.indexOf(next)), next].map((f) => path.relative(SRC, f)).join(" → "));
      else if (!state.has(next)) visit(next, [...trail, next]);
    }
    state.set(file, 2);
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file, [file]);
  assert.deepEqual(cycles, []);
});

// The folders stand in floors, lowest first: a2ui/ (surfaces) and tools/ (the browser tools, no
// DOM of the view's), view/ (the transcript's parts), chat/ (the controller, no DOM), app/ (the
// wiring of one view, which only widget.js imports). A folder imports nothing of one above it.
const ABOVE = {
  a2ui: ["tools", "view", "chat", "app"],
  tools: ["view", "chat", "app"],
  view: ["chat", "app"],
  chat: ["view", "app"],
};

test("src/ folders import nothing of a folder above them", () => {
  const folderOf = (/** @type {string} */ file) => path.relative(SRC, file).split(path.sep).slice(0, -1)[0] ?? "";
  const upward = [];
  for (const file of modules(SRC)) {
    const from = folderOf(file);
    for (const next of importsOf(file)) {
      const to = folderOf(next);
      const top = to === "app" && from !== "app" && path.relative(SRC, file) !== "widget.js";
      if ((ABOVE[from] ?? []).includes(to) || top) upward.push(`${path.relative(SRC, file)} → ${path.relative(SRC, next)}`);
    }
  }
  assert.deepEqual(upward, []);
});
