// Runs @a2ui/web_core's own basic-function tests against our functions: loaded with
// `node --import`, it registers a module hook that hands that test file our adapter
// (./adapter.mjs) wherever it imports web_core's `./basic_functions.js`.

import { register } from "node:module";
import { isMainThread } from "node:worker_threads";

const ADAPTER = new URL("./adapter.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === "./basic_functions.js" && context.parentURL?.endsWith("/basic_functions.test.js")) {
    return { url: ADAPTER, shortCircuit: true };
  }
  return next(specifier, context);
}

if (isMainThread) register(import.meta.url);
