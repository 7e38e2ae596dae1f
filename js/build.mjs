// Bundles the widget into the Python package's static folder (run by the Python build):
// gth_jupyter/static/widget.js (the front end) and gth_jupyter/static/loader.js (the `_esm`).
import { build } from "esbuild";
import { loaderConfig, widgetConfig } from "./build.config.mjs";

await Promise.all([build(widgetConfig), build(loaderConfig)]);
