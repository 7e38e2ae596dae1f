// Our catalog functions (src/a2ui/functions.js) in the shape web_core's test file expects of
// its own `basic_functions.js`: `{name, schema, execute(args, dataContext)}` entries for its
// `Catalog`. The schema passes arguments through untouched, so the checking is ours; our errors
// are re-thrown as web_core's A2uiExpressionError, the type its tests expect. formatString reads
// the test's DataModel, and is a computed signal over it as web_core's is, so a data change
// re-evaluates it.

import { A2uiExpressionError } from "../../node_modules/@a2ui/web_core/src/v0_9/errors.js";
import { computed } from "../../node_modules/@a2ui/web_core/src/v0_9/reactivity/signals.js";
import { FUNCTIONS, invoke } from "../../src/a2ui/functions.js";
import { callFunction } from "../../src/a2ui/resolve.js";

const passThrough = { parse: (/** @type {any} */ x) => x };

function run(name, fn) {
  try {
    return fn();
  } catch (err) {
    throw new A2uiExpressionError(err.message, name);
  }
}

export function createBasicCatalogFunctions({ locale } = {}) {
  return Object.keys(FUNCTIONS).map((name) => ({
    name,
    returnType: "any",
    schema: passThrough,
    execute(args, ctx) {
      if (name === "formatString") {
        return computed(() =>
          run(name, () => {
            const data = ctx.dataModel.getSignal("/").value;
            const scope = { surface: { data }, base: ctx.path === "/" ? "" : ctx.path, env: { locale } };
            return callFunction({ call: name, args }, scope);
          }),
        );
      }
      const env = { locale, openUrl: (url) => globalThis.window?.open(url, "_blank", "noopener,noreferrer") };
      return run(name, () => invoke(name, args, env));
    },
  }));
}

export const BASIC_FUNCTIONS = createBasicCatalogFunctions();
