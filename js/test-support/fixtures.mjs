// The form Gaunt Sloth's show_a2ui_surface tool description teaches (v0.8, Button.label).
export const GS_FORM = [
  JSON.stringify({ surfaceUpdate: { surfaceId: "email", components: [
    { id: "col", component: { Column: { children: { explicitList: ["title", "to", "send"] } } } },
    { id: "title", component: { Text: { text: { literalString: "New email" }, usageHint: "h2" } } },
    { id: "to", component: { TextField: { label: { literalString: "To" } } } },
    { id: "send", component: { Button: { label: { literalString: "Send" }, action: { name: "send_email" } } } },
  ] } }),
  JSON.stringify({ beginRendering: { surfaceId: "email", root: "col" } }),
].join("\n");

