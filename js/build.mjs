// Bundles the widget into the Python package's static folder (run by the Python build).
import { build } from "esbuild";

await build({
  entryPoints: ["src/widget.js"],
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2020",
  outfile: "../gth_jupyter/static/widget.js",
  logLevel: "warning",
});
