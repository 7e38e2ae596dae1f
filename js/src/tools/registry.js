// The browser tools this widget declares in RunAgentInput.tools and fulfils itself.
//
// Built-ins (capture_image, ask_user, browser_context), the notebook tools (read_notebook,
// insert_cell, edit_cell) while the notebook bridge finds this widget's notebook (./notebook.js),
// plus the user's own from the `client_tools` trait, whose `js` is the source of
// `async (args, ctx) => result`. That source comes from the notebook user's own kernel, the
// same trust as any code they run in a cell.

import { askUserTool } from "./ask_user.js";
import { browserContextTool } from "./browser_context.js";
import { captureImageTool } from "./capture_image.js";
import { notebookTools } from "./notebook.js";

/**
 * @typedef {{ ask?: (q: {toolCallId: string, question: string, choices: string[], signal?: AbortSignal}) => Promise<string>,
 *   showImage?: (toolCallId: string | undefined, dataUrl: string) => void }} ToolUi
 * @typedef {{ toolCallId: string, toolName: string, signal: AbortSignal, log: (line: string) => void,
 *   ui?: ToolUi, env?: any, turnId?: string }} ToolContext
 *   `turnId`: the turn the call belongs to (the widget's own, else its user message's id)
 * @typedef {{ name: string, description: string, parameters?: object,
 *   handler: (args: any, ctx: ToolContext) => Promise<any> }} ToolDef
 * @typedef {{ name: string, description?: string, parameters?: object, js: string }} UserToolSpec
 */

export const BUILTIN_TOOLS = [captureImageTool, askUserTool, browserContextTool];
const EMPTY_SCHEMA = { type: "object", properties: {}, required: [] };
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * Compile one user-defined tool. Throws with a readable message when it cannot be used.
 * @param {UserToolSpec} spec
 * @returns {ToolDef}
 */
export function compileUserTool(spec) {
  const name = spec?.name;
  if (typeof name !== "string" || !NAME_RE.test(name)) {
    throw new Error(`'${String(name)}' is not a valid tool name (letters, digits, _ and -, at most 64).`);
  }
  if (typeof spec.js !== "string" || !spec.js.trim()) throw new Error(`Tool '${name}' has no 'js' source.`);
  let fn;
  try {
    fn = new Function(`"use strict";\nreturn (${spec.js}\n);`)();
  } catch (err) {
    throw new Error(`Tool '${name}' does not compile: ${/** @type {Error} */ (err).message}`);
  }
  if (typeof fn !== "function") throw new Error(`Tool '${name}': 'js' must evaluate to a function.`);
  const parameters = spec.parameters && typeof spec.parameters === "object" ? spec.parameters : EMPTY_SCHEMA;
  return {
    name,
    description: typeof spec.description === "string" ? spec.description : "",
    parameters,
    handler: async (args, ctx) => fn(args, ctx),
  };
}

/**
 * @param {UserToolSpec[] | undefined | null} userSpecs
 * @param {{ builtins?: ToolDef[], notebook?: import("./notebook.js").NotebookLink | null }} [opts]
 *   `notebook`: this widget's link to its notebook; its tools are there only while it is found
 */
export function createRegistry(userSpecs, { builtins = BUILTIN_TOOLS, notebook = null } = {}) {
  /** @type {Map<string, ToolDef>} */
  const tools = new Map(builtins.map((t) => [t.name, t]));
  // Looked up at each use (each run declares again): a notebook closed since is not offered.
  /** @type {Set<string>} */
  const whileLinked = new Set();
  for (const tool of notebook ? notebookTools(notebook) : []) {
    tools.set(tool.name, tool);
    whileLinked.add(tool.name);
  }
  /** @type {{ name: string, message: string }[]} */
  const errors = [];
  for (const spec of Array.isArray(userSpecs) ? userSpecs : []) {
    try {
      const tool = compileUserTool(spec);
      tools.set(tool.name, tool); // a user tool may replace a built-in of the same name
      whileLinked.delete(tool.name);
    } catch (err) {
      errors.push({ name: String(spec?.name ?? "?"), message: /** @type {Error} */ (err).message });
    }
  }
  const offered = () => {
    const linked = whileLinked.size > 0 && Boolean(notebook?.handle());
    return [...tools.values()].filter((t) => linked || !whileLinked.has(t.name));
  };
  return {
    errors,
    // A call made while the notebook was there is answered even if it went since (with an
    // {error} saying so), so the run is never left waiting for it.
    /** @param {string} name */
    get: (name) => tools.get(name),
    /** @param {string} name */
    has: (name) => tools.has(name),
    names: () => offered().map((t) => t.name),
    /** The `tools` entries of RunAgentInput: JSON Schema passed through as given. */
    declarations: () => offered().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters ?? EMPTY_SCHEMA })),
  };
}

/** @typedef {ReturnType<typeof createRegistry>} ToolRegistry */

/** Turn a handler's return value into a tool message's content string. */
export function toContent(/** @type {any} */ value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "null";
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** The `error` of a `{"error": ...}` result, else undefined. */
export function errorOf(/** @type {unknown} */ content) {
  if (typeof content !== "string" || !content.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(content);
    return value && typeof value === "object" && !Array.isArray(value) && "error" in value ? value.error : undefined;
  } catch {
    return undefined;
  }
}
