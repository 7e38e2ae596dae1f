// browser_context: facts about the user's browser the model cannot know from the kernel.

import tools from "../../../gth_jupyter/contract/spec/browser_tools.json" with { type: "json" };

/** @type {import("./registry.js").ToolDef} */
export const browserContextTool = {
  // Its spec is a headless turn's too (contract/spec/browser_tools.json).
  name: "browser_context",
  ...tools.builtin.browser_context,
  handler: async (_args, ctx) => JSON.stringify(readBrowserContext(ctx?.env)),
};

/** @param {{ window?: any, navigator?: any }} [env] */
export function readBrowserContext(env = {}) {
  const win = env.window ?? globalThis.window ?? globalThis;
  const nav = env.navigator ?? globalThis.navigator ?? {};
  let timeZone = "UTC";
  try {
    timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    // Intl without time zone data: keep UTC.
  }
  let dark = false;
  try {
    dark = Boolean(win.matchMedia?.("(prefers-color-scheme: dark)")?.matches);
  } catch {
    dark = false;
  }
  return {
    locale: nav.language || "en",
    languages: Array.isArray(nav.languages) ? [...nav.languages] : undefined,
    timeZone,
    viewport: { width: Number(win.innerWidth) || 0, height: Number(win.innerHeight) || 0 },
    colorScheme: dark ? "dark" : "light",
  };
}
