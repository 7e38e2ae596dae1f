// esbuild options for the two bundles, shared by build.mjs and the bundle smoke test.
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(here, "../gth_jupyter/static");

// @ag-ui/client validates events with zod/v4, whose index re-exports all 40+ message locales
// as a namespace that cannot be tree-shaken (~150 KB minified). Only English is ever used
// (zod configures it by default), so the locale index is replaced by one that has just that.
export const zodEnglishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]zod[\\/]v4[\\/]/.test(args.importer)) return undefined;
      const dir = path.resolve(path.dirname(args.importer), "../locales");
      return { path: path.join(dir, "index.js"), namespace: "zod-locales", pluginData: dir };
    });
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(path.join(args.pluginData, "en.js"))};`,
      resolveDir: args.pluginData,
    }));
  },
};

const common = {
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2020",
  logLevel: "warning",
  legalComments: "none",
  absWorkingDir: here,
};

/** widget.js: the whole front end (served by the server extension, or sent over the comm). */
export const widgetConfig = {
  ...common,
  entryPoints: ["src/widget.js"],
  outfile: path.join(out, "widget.js"),
  loader: { ".css": "text" },
  plugins: [zodEnglishOnly],
};

/** loader.js: the tiny `_esm` each widget instance carries; it imports widget.js. */
export const loaderConfig = {
  ...common,
  entryPoints: ["src/loader.js"],
  outfile: path.join(out, "loader.js"),
};
