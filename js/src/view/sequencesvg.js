// The live sequence diagram in the event-log panel: an SVG built with DOM calls (every label
// goes in through textContent: tool names and codes come from the agent), painted at most once
// per animation frame. Only new arrows are created and only changed labels rewritten, and at
// most MAX_ARROWS are kept, so a long run stays cheap. Colours come from styles.css (JupyterLab's
// theme variables); the SVG export writes the colours in use into the file.

import { LANES, LANE_TITLES, SequenceModel, labelOf } from "./sequence.js";

const SVG = "http://www.w3.org/2000/svg";
const XMLNS = "http://www.w3.org/2000/xmlns/";
export const WIDTH = 400;
const LANE_X = { page: 50, server: 200, graph: 350 };
const HEAD = 34;
const ROW = 26;
const MAX_ARROWS = 600;
const TRIM_CHUNK = 100;
/** Computed properties copied into an exported file, per element. */
const EXPORTED = ["fill", "stroke", "stroke-width", "stroke-dasharray", "opacity", "font-family", "font-size", "font-weight", "paint-order"];

export class SequenceDiagram {
  /** @param {Document} doc @param {import("./frame.js").FrameScheduler} frames */
  constructor(doc, frames) {
    this.doc = doc;
    this.frames = frames;
    this.model = new SequenceModel();
    /** @type {Map<number, { g: any, text: any, version: number }>} */
    this.drawn = new Map();
    this.svg = this.node("svg", { class: "gth-seq-svg", width: String(WIDTH), role: "img", "aria-label": "Sequence diagram of the AG-UI run" });
    this.lanes = this.node("g", { class: "gth-seq-lanes" });
    this.body = this.node("g", { class: "gth-seq-body" });
    this.droppedNote = this.node("text", { class: "gth-seq-dropped", x: "4", y: String(HEAD - 4) });
    this.svg.append(this.lanes, this.body, this.droppedNote);
    for (const lane of LANES) {
      const x = String(LANE_X[lane]);
      const title = this.node("text", { class: "gth-seq-lane-title", x, y: "14", "text-anchor": "middle" });
      title.textContent = LANE_TITLES[lane];
      this.lanes.append(title, this.node("line", { class: "gth-seq-lane", x1: x, x2: x, y1: "20", y2: "20", "data-lane": lane }));
    }
    this.el = this.doc.createElement("div");
    this.el.className = "gth-seq";
    this.el.append(this.svg);
    this.resize();
  }

  /** One chat event; drawn in the next frame. @param {any} e */
  handle(e) {
    const before = this.model.seq;
    const arrow = this.model.handle(e);
    if (arrow || this.model.seq !== before) this.frames.mark("sequence", () => this.paint());
  }

  get arrows() {
    return this.model.arrows;
  }

  paint() {
    const follow = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < 40;
    const gone = this.model.trim(MAX_ARROWS, TRIM_CHUNK);
    if (gone) {
      const keep = new Set(this.model.arrows.map((a) => a.seq));
      for (const [seq, d] of this.drawn) {
        if (!keep.has(seq)) {
          d.g.remove();
          this.drawn.delete(seq);
        }
      }
      this.droppedNote.textContent = `… ${this.model.dropped} earlier arrows not shown`;
    }
    // At most MAX_ARROWS Map look-ups a frame; only new arrows and changed labels touch the DOM.
    this.model.arrows.forEach((a, i) => {
      let d = this.drawn.get(a.seq);
      if (!d) {
        d = this.draw(a);
        this.drawn.set(a.seq, d);
        this.body.append(d.g);
        d.g.setAttribute("transform", rowAt(i));
        return;
      }
      if (gone) d.g.setAttribute("transform", rowAt(i));
      if (d.version !== a.version) {
        d.text.textContent = labelOf(a);
        d.g.setAttribute("data-count", String(a.count));
        d.version = a.version;
      }
    });
    this.resize();
    if (follow) this.el.scrollTop = this.el.scrollHeight;
  }

  /** The SVG of one arrow, at y = 0 (its group is translated to its row). @param {import("./sequence.js").Arrow} a */
  draw(a) {
    const g = this.node("g", { class: "gth-seq-arrow", "data-kind": a.kind, "data-type": a.type, "data-from": a.from, "data-to": a.to });
    const x1 = LANE_X[a.from];
    const x2 = LANE_X[a.to];
    const y = ROW - 8;
    const text = this.node("text", { class: "gth-seq-label", y: String(y - 5) });
    if (x1 === x2) {
      // A step on one lane (the page fulfilling a tool): a small loop, the label beside it.
      g.append(this.node("path", { class: "gth-seq-line", d: `M${x1} ${y - 8} h18 v10 h-14`, fill: "none" }));
      g.append(this.node("path", { class: "gth-seq-head", d: `M${x1 + 4} ${y + 2} l6 -4 v8 z` }));
      text.setAttribute("x", String(x1 + 24));
      text.setAttribute("y", String(y - 1));
    } else {
      const dir = Math.sign(x2 - x1);
      g.append(this.node("line", { class: "gth-seq-line", x1: String(x1), x2: String(x2 - dir * 6), y1: String(y), y2: String(y) }));
      g.append(this.node("path", { class: "gth-seq-head", d: `M${x2} ${y} l${-dir * 8} -4 v8 z` }));
      text.setAttribute("x", String(Math.min(x1, x2) + 6));
    }
    text.textContent = labelOf(a);
    g.append(text);
    g.setAttribute("data-count", String(a.count));
    return { g, text, version: a.version };
  }

  resize() {
    const height = HEAD + this.model.arrows.length * ROW + 8;
    this.svg.setAttribute("height", String(height));
    this.svg.setAttribute("viewBox", `0 0 ${WIDTH} ${height}`);
    for (const line of this.lanes.querySelectorAll("line")) line.setAttribute("y2", String(height));
  }

  /** The diagram as a standalone SVG file, with the colours in use written into it. */
  svgText() {
    this.frames.flush();
    const copy = /** @type {typeof this.svg} a deep clone is an element like it */ (this.svg.cloneNode(true));
    copy.setAttributeNS?.(XMLNS, "xmlns", SVG);
    const win = this.doc.defaultView;
    if (win?.getComputedStyle) {
      const from = [this.svg, ...this.svg.querySelectorAll("*")];
      const to = [copy, ...copy.querySelectorAll("*")];
      /** @type {Map<any, any>} */
      const computed = new Map(from.map((node) => [node, win.getComputedStyle(node)]));
      from.forEach((node, i) => {
        // Each element gets the properties it does not inherit as they are: a small file.
        const cs = computed.get(node);
        const parent = i ? computed.get(node.parentNode) : null;
        const own = EXPORTED.filter((p) => !parent || cs.getPropertyValue(p) !== parent.getPropertyValue(p));
        if (own.length) to[i].setAttribute("style", own.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(";"));
      });
      const bg = this.node("rect", { width: "100%", height: "100%", fill: backgroundOf(win, this.el) });
      copy.insertBefore(bg, copy.firstChild);
    }
    const text = win?.XMLSerializer ? new win.XMLSerializer().serializeToString(copy) : copy.outerHTML;
    return text.includes("xmlns=") ? text : text.replace("<svg", `<svg xmlns="${SVG}"`);
  }

  /** Download the diagram as `gth-sequence.svg`. */
  download() {
    const win = /** @type {any} */ (this.doc.defaultView);
    if (!win?.Blob || !win.URL?.createObjectURL) return false;
    const url = win.URL.createObjectURL(new win.Blob([this.svgText()], { type: "image/svg+xml" }));
    const a = this.doc.createElement("a");
    a.href = url;
    a.download = "gth-sequence.svg";
    a.hidden = true;
    this.el.append(a);
    a.click();
    a.remove();
    const timer = setTimeout(() => win.URL.revokeObjectURL(url), 10_000);
    /** @type {any} */ (timer)?.unref?.(); // never keeps a Node test alive
    return true;
  }

  /** @param {string} tag @param {Record<string, string>} attrs */
  node(tag, attrs = {}) {
    const n = this.doc.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
    return n;
  }
}

const rowAt = (/** @type {number} */ i) => `translate(0 ${HEAD + i * ROW})`;

/** The first opaque background colour from `el` up (the panel is usually transparent). */
function backgroundOf(/** @type {any} */ win, /** @type {any} */ el) {
  for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
    const c = win.getComputedStyle(node).backgroundColor;
    if (c && c !== "transparent" && !/rgba\(.*,\s*0\)$/.test(c)) return c;
  }
  return "#ffffff";
}
