// ask_user: the model asks the person a question; the view shows it with buttons (for choices)
// or a text box, and the answer string is the tool result.

/** @type {import("./registry.js").ToolDef} */
export const askUserTool = {
  name: "ask_user",
  description:
    "Ask the user a question in the chat and wait for the answer. Give `choices` for a " +
    "multiple-choice question (shown as buttons); leave it out for a free-text answer.",
  parameters: {
    type: "object",
    properties: {
      question: { type: "string", description: "The question to show." },
      choices: { type: "array", items: { type: "string" }, description: "Optional answers to pick from." },
    },
    required: ["question"],
  },
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
