// browser_context: facts about the user's browser the model cannot know from the kernel.

/** @type {import("./registry.js").ToolDef} */
export const browserContextTool = {
  name: "browser_context",
  description:
    "Read the user's browser settings: locale, time zone, viewport size and light/dark colour scheme. " +
    "Use it before formatting dates, numbers or layouts for this user.",
  parameters: { type: "object", properties: {}, required: [] },
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
