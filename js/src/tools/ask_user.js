// ask_user: the model asks the person a question; the view shows it with buttons (for choices)
// or a text box, and the answer string is the tool result.

import tools from "../../../gth_jupyter/contract/spec/browser_tools.json" with { type: "json" };

/** @type {import("./registry.js").ToolDef} */
export const askUserTool = {
  // Its spec is a headless turn's too (contract/spec/browser_tools.json).
  name: "ask_user",
  ...tools.builtin.ask_user,
  handler: async (args, ctx) => {
    const question = typeof args?.question === "string" ? args.question.trim() : "";
    if (!question) throw new Error("ask_user needs a non-empty 'question'.");
    const choices = Array.isArray(args?.choices)
      ? args.choices.filter((/** @type {unknown} */ c) => typeof c === "string" || typeof c === "number").map(String).slice(0, 20)
      : [];
    if (!ctx?.ui?.ask) throw new Error("This view cannot ask questions.");
    const answer = await ctx.ui.ask({ toolCallId: ctx.toolCallId, question, choices, signal: ctx.signal });
    return String(answer);
  },
};
