// The model's display traits, followed in the view: `model_label` and `offline` in the header,
// `show_event_log` (`%gth --log`) for the event log (its header button still toggles it); and
// what the agent's info adds: the hosts whose images load at once, and the model's name when
// the kernel gave none.

/**
 * @typedef {import("../comm.js").AnyModel} AnyModel
 * @typedef {import("../transcript.js").TranscriptView} TranscriptView
 */

/**
 * Show the traits now and on each change, until `signal` aborts.
 * @param {AnyModel} model @param {TranscriptView} view @param {AbortSignal} signal
 */
export function followTraits(model, view, signal) {
  const showHeader = () => view.setHeader({ modelLabel: model.get("model_label") || "", offline: Boolean(model.get("offline")) });
  const showLog = () => view.showLog(Boolean(model.get("show_event_log")));
  showHeader();
  showLog();
  model.on("change:show_event_log", showLog);
  model.on("change:model_label", showHeader);
  model.on("change:offline", showHeader);
  signal.addEventListener(
    "abort",
    () => {
      model.off("change:model_label", showHeader);
      model.off("change:offline", showHeader);
      model.off("change:show_event_log", showLog);
    },
    { once: true },
  );
}

/**
 * Apply the agent's info: until it comes every remote image waits for a click (`a2ui.imageHosts`
 * lifts that for its hosts), and the header names the model when no `model_label` trait does.
 * @param {AnyModel} model @param {TranscriptView} view @param {any} info
 */
export function showAgentInfo(model, view, info) {
  view.setMediaHosts(info.a2ui?.imageHosts);
  view.approvalMode = typeof info.approvals?.mode === "string" ? info.approvals.mode : "";
  // The model the cells the agent writes record (none where jupyter.provenance.model is off).
  view.provenanceModel = info.provenance?.model === false || typeof info.model !== "string" ? "" : info.model;
  if (!model.get("model_label")) view.setHeader({ modelLabel: [info.provider, info.model].filter(Boolean).join(" · "), offline: Boolean(info.offline) });
}
