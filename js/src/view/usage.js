// What each turn cost: one quiet line at the end of every turn ("1,204 in · 356 out · 812
// cached · $0.0041"), and the conversation's total in the header. Live, from the usage AG-UI
// 1.0 puts on RUN_FINISHED / RUN_ERROR (and gth's cost in their metadata); after a reload, from
// the thread view's `turns[].usage` and `usage`. The line reads as gth_jupyter/contract/usage.py
// writes it into the saved copy.

import { contextView } from "./context.js";
import { h } from "./dom.js";

/**
 * @typedef {{ provider?: string, model?: string, inputTokens?: number, outputTokens?: number,
 *   cachedInputTokens?: number }} TokenUsage
 * @typedef {{ usd: number | null, source?: string } | null} Cost
 */

/** @param {unknown} n */
const count = (n) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0);
/** @param {number} n */
const grouped = (n) => n.toLocaleString("en-US");

/** Dollars as a small bill reads: $0.0041, $0.127, $3.20. */
export function usdText(/** @type {number} */ usd) {
  if (usd === 0) return "$0.00";
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  if (usd < 1) return `$${usd.toFixed(3)}`;
  return `$${usd.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/**
 * The line for an account; "" when it counted nothing.
 * @param {TokenUsage[] | undefined} usage
 * @param {Cost | undefined} cost
 */
export function usageText(usage, cost) {
  let input = 0;
  let output = 0;
  let cached = 0;
  for (const u of Array.isArray(usage) ? usage : []) {
    input += count(u?.inputTokens);
    output += count(u?.outputTokens);
    cached += count(u?.cachedInputTokens);
  }
  if (!input && !output) return "";
  const parts = [`${grouped(input)} in`, `${grouped(output)} out`];
  if (cached) parts.push(`${grouped(cached)} cached`);
  if (cost && typeof cost === "object") parts.push(typeof cost.usd === "number" ? usdText(cost.usd) : "cost unknown");
  return parts.join(" · ");
}

/** A running sum of accounts: usage merged per provider and model, dollars added. */
export class Tally {
  constructor() {
    /** @type {Map<string, TokenUsage>} */
    this.byModel = new Map();
    /** @type {Cost} */
    this.cost = null;
  }

  /** @param {TokenUsage[] | undefined} usage @param {Cost | undefined} cost */
  add(usage, cost) {
    for (const u of Array.isArray(usage) ? usage : []) {
      if (!u || typeof u !== "object") continue;
      const key = `${u.provider ?? ""}\u0000${u.model ?? ""}`;
      const mine = this.byModel.get(key) ?? { provider: u.provider, model: u.model, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
      mine.inputTokens = count(mine.inputTokens) + count(u.inputTokens);
      mine.outputTokens = count(mine.outputTokens) + count(u.outputTokens);
      mine.cachedInputTokens = count(mine.cachedInputTokens) + count(u.cachedInputTokens);
      this.byModel.set(key, mine);
    }
    if (cost && typeof cost === "object") {
      const known = typeof cost.usd === "number" && (!this.cost || typeof this.cost.usd === "number");
      this.cost = { usd: known ? (this.cost?.usd ?? 0) + /** @type {number} */ (cost.usd) : null, source: cost.source };
    }
  }

  get usage() {
    return [...this.byModel.values()];
  }

  text() {
    return usageText(this.usage, this.cost);
  }
}

/** The run's usage and cost, from a RUN_FINISHED or RUN_ERROR event. @param {any} ev */
export function runAccount(ev) {
  const usage = Array.isArray(ev?.usage) ? ev.usage : [];
  const cost = ev?.metadata?.gth?.cost;
  return { usage, cost: cost && typeof cost === "object" ? cost : null };
}

/** The usage lines of one transcript, and the header's total. */
export class UsageLines {
  /** @param {Document} doc @param {{ list: any, append: (node: any) => void }} view */
  constructor(doc, view) {
    this.doc = doc;
    this.view = view;
    /** The header's total: what the conversation has cost so far. */
    this.totalEl = h(doc, "span", { cls: "gth-usage-total", attrs: { title: "What this conversation has cost so far (every branch)" } });
    this.totalEl.hidden = true;
    this.total = new Tally();
    this.turn = new Tally();
    /** @type {any} the line of the turn in progress, once it has one */
    this.line = null;
    /** The turn in progress as the server names it: the run that started it. */
    this.turnKey = "";
    /**
     * What the model was sent in a turn, where the backend serves it (set by the mount).
     * @type {((turnKey: string) => Promise<any>) | null}
     */
    this.contextOf = null;
  }

  /** A person's new turn starts: its runs add to a new line. */
  newTurn() {
    this.turn = new Tally();
    this.line = null;
    this.turnKey = "";
  }

  /** A run started: the turn's first names it. @param {string} runId */
  runStarted(runId) {
    if (!this.turnKey && runId) this.turnKey = runId;
  }

  /** A run ended: its account joins the turn's line (moved to the end) and the total. @param {any} ev */
  runEnded(ev) {
    const { usage, cost } = runAccount(ev);
    if (!usage.length) return;
    this.turn.add(usage, cost);
    this.total.add(usage, cost);
    this.line ??= this.#lineEl(this.turnKey);
    this.line.querySelector(".gth-usage").textContent = this.turn.text();
    this.view.append(this.line); // after whatever the run added
    this.#showTotal();
  }

  /**
   * After the transcript was rebuilt from the thread view: a line at the end of each turn shown
   * (before the next turn's first message), and the thread's total in the header.
   * @param {{ messageId?: string, runId?: string, turnId?: string | null, usage?: TokenUsage[], cost?: Cost }[]} turns
   * @param {(id: string) => any} elementOf the element of a message shown, if any
   * @param {{ usage?: TokenUsage[], cost?: Cost }} thread
   */
  showHistory(turns, elementOf, thread) {
    const starts = turns.map((t) => (t.messageId ? elementOf(t.messageId) : null));
    turns.forEach((t, i) => {
      const text = starts[i] ? usageText(t.usage, t.cost) : "";
      if (!text) return;
      const next = starts.slice(i + 1).find(Boolean) ?? null;
      const line = this.#lineEl(t.runId || t.turnId || "");
      line.querySelector(".gth-usage").textContent = text;
      this.view.list.insertBefore(line, next);
      this.turn = new Tally();
      this.turn.add(t.usage, t.cost);
      this.line = line; // a run that follows this turn (after a reload) adds to its line
    });
    this.total = new Tally();
    this.total.add(thread.usage, thread.cost);
    this.#showTotal();
  }

  /** The end of a turn: its cost line, and (where served) what the model was sent. */
  #lineEl(/** @type {string} */ turnKey) {
    const line = h(this.doc, "div", { cls: "gth-note gth-usage", attrs: { title: "What this turn's model calls counted, and cost" } });
    const load = this.contextOf;
    const context = load && turnKey ? [contextView(this.doc, () => load(turnKey))] : [];
    return h(this.doc, "div", { cls: "gth-turn-end" }, [line, ...context]);
  }

  #showTotal() {
    const text = this.total.text();
    this.totalEl.textContent = text ? `Σ ${text}` : "";
    this.totalEl.hidden = !text;
  }
}
