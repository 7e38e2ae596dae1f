// The event-log panel for the teaching notebook, in two views: a live sequence diagram of the
// page, the server and the graph (view/sequencesvg.js, exportable as SVG), and the list of
// AG-UI event types as they arrive, where runs of one type (a stream of TEXT_MESSAGE_CONTENT)
// share one row with a count. Both are fed all along; a toggle shows one or the other. Below
// them, the agent's shared state as STATE_SNAPSHOT / STATE_DELTA leave it (hidden until a run
// uses state).

import { applyPatch } from "../a2ui/patch.js";
import { h } from "./dom.js";
import { SequenceDiagram } from "./sequencesvg.js";

const MAX_ROWS = 1000;

export class EventLog {
  /** @param {Document} doc @param {import("./frame.js").FrameScheduler} frames */
  constructor(doc, frames) {
    this.doc = doc;
    this.frames = frames;
    this.list = h(doc, "ol", { cls: "gth-eventlog-list" });
    this.diagram = new SequenceDiagram(doc, frames);
    /** @type {Record<string, any>} */
    this.modeButtons = {};
    for (const [mode, text] of [["diagram", "Diagram"], ["list", "List"]]) {
      const b = h(doc, "button", { cls: "gth-eventlog-mode", text, attrs: { type: "button", "aria-pressed": "false" }, data: { mode } });
      b.addEventListener("click", () => this.setMode(mode));
      this.modeButtons[mode] = b;
    }
    this.exportButton = h(doc, "button", { cls: "gth-eventlog-export", text: "Export SVG", attrs: { type: "button", title: "Download the diagram as an SVG file" } });
    this.exportButton.addEventListener("click", () => this.diagram.download());
    this.el = h(doc, "div", { cls: "gth-eventlog", attrs: { "aria-label": "AG-UI events" } }, [
      h(doc, "div", { cls: "gth-eventlog-head" }, [
        h(doc, "span", { cls: "gth-eventlog-title", text: "AG-UI events" }),
        this.modeButtons.diagram,
        this.modeButtons.list,
        this.exportButton,
      ]),
      this.diagram.el,
      this.list,
      (this.stateBox = h(doc, "details", { cls: "gth-eventlog-state", attrs: { open: "" } }, [
        h(doc, "summary", { text: "State" }),
        (this.stateView = h(doc, "pre", { cls: "gth-eventlog-state-json" })),
      ])),
    ]);
    this.stateBox.hidden = true;
    /** The shared state as the events left it; undefined until a run uses state. */
    this.state = undefined;
    this.el.hidden = true;
    this.setMode("diagram");
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

  /** Show the sequence diagram or the list of events. */
  setMode(/** @type {string} */ mode) {
    this.mode = mode === "list" ? "list" : "diagram";
    this.el.dataset.mode = this.mode;
    for (const [m, b] of Object.entries(this.modeButtons)) b.setAttribute("aria-pressed", String(m === this.mode));
    this.diagram.el.hidden = this.mode !== "diagram";
    this.list.hidden = this.mode !== "list";
    this.exportButton.hidden = this.mode !== "diagram";
  }

  /** One chat event (chat/controller.js `ChatEvent`): the diagram reads them all, the list AG-UI events. */
  handle(/** @type {any} */ e) {
    this.diagram.handle(e);
    if (e?.type === "agui" && !e.event?.gthDerived) {
      this.add(e.event);
      if (e.event?.type === "STATE_SNAPSHOT") this.setState(e.event.snapshot);
      else if (e.event?.type === "STATE_DELTA") {
        try {
          this.setState(applyPatch(this.state ?? {}, e.event.delta));
        } catch (err) {
          console.warn("gth: could not apply STATE_DELTA", err);
        }
      }
    }
  }

  /** Show `state` (a JSON value) in the state view. */
  setState(/** @type {any} */ state) {
    this.state = state;
    this.stateBox.hidden = false;
    this.frames.mark("eventlog-state", () => {
      this.stateView.textContent = JSON.stringify(this.state ?? {}, null, 2);
    });
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
