// The event-log panel for the teaching notebook: each AG-UI event type as it arrives.
// Runs of the same type (a stream of TEXT_MESSAGE_CONTENT) share one row with a count.

import { h } from "./dom.js";

const MAX_ROWS = 1000;

export class EventLog {
  /** @param {Document} doc @param {import("./frame.js").FrameScheduler} frames */
  constructor(doc, frames) {
    this.doc = doc;
    this.frames = frames;
    this.list = h(doc, "ol", { cls: "gth-eventlog-list" });
    this.el = h(doc, "div", { cls: "gth-eventlog", attrs: { "aria-label": "AG-UI events" } }, [
      h(doc, "div", { cls: "gth-eventlog-title", text: "AG-UI events" }),
      this.list,
    ]);
    this.el.hidden = true;
    /** @type {{ type: string, count: number, detail: string, row: any }[]} */
    this.rows = [];
    this.total = 0;
  }

  get visible() {
    return !this.el.hidden;
  }

  toggle(/** @type {boolean} */ show = !this.visible) {
    this.el.hidden = !show;
    return show;
  }

  add(/** @type {any} */ event) {
    this.total += 1;
    const type = String(event?.type ?? "?");
    const last = this.rows[this.rows.length - 1];
    if (last && last.type === type) last.count += 1;
    else this.rows.push({ type, count: 1, detail: detailOf(event), row: null });
    if (this.rows.length > MAX_ROWS) this.rows.splice(0, this.rows.length - MAX_ROWS);
    this.frames.mark("eventlog", () => this.paint());
  }

  paint() {
    for (const r of this.rows) {
      if (!r.row) {
        r.row = h(this.doc, "li", { cls: "gth-event", data: { type: r.type } }, [
          h(this.doc, "span", { cls: "gth-event-type", text: r.type }),
          r.detail ? h(this.doc, "span", { cls: "gth-event-detail", text: r.detail }) : null,
          h(this.doc, "span", { cls: "gth-event-count" }),
        ]);
        this.list.append(r.row);
      }
      r.row.dataset.count = String(r.count);
      r.row.lastChild.textContent = r.count > 1 ? `×${r.count}` : "";
    }
    while (this.list.children.length > this.rows.length) this.list.firstChild?.remove();
  }
}

/** A few words about an event worth showing next to its type. */
function detailOf(/** @type {any} */ e) {
  switch (e?.type) {
    case "TOOL_CALL_START":
      return e.toolCallName;
    case "RUN_FINISHED":
      return e.outcome?.type ?? "success";
    case "RUN_ERROR":
      return e.code ?? "";
    case "STEP_STARTED":
    case "STEP_FINISHED":
      return e.stepName;
    case "ACTIVITY_SNAPSHOT":
      return e.activityType;
    case "CUSTOM":
      return e.name;
    default:
      return "";
  }
}
