// "Allowed without asking": the standing approvals a person granted from an approval card
// ("Always allow…"), one row per grant with a Revoke button. The server keeps them (in memory,
// never in the configuration); this list is refreshed after each run and hidden while there are
// none, or when the transport cannot list them (the comm). Revoke acts only on a person's click.

import { h } from "./dom.js";

/**
 * @typedef {{ id: string, scope: "thread" | "session", kind: string, label: string, createdAt?: number }} Grant
 * @typedef {{ grants: (threadId: string) => Promise<Grant[] | null>, revokeGrant: (grantId: string) => Promise<boolean> }} GrantsBackend
 */

const SCOPE_TEXT = { thread: "this conversation", session: "every conversation, until the server restarts" };
const KIND_TEXT = { shell: "Command", code: "Code", tool: "Tool", mcpTool: "MCP tool" };

export class GrantsPanel {
  /**
   * @param {Document} doc
   * @param {GrantsBackend} backend
   * @param {string} threadId
   */
  constructor(doc, backend, threadId) {
    this.doc = doc;
    this.backend = backend;
    this.threadId = threadId;
    this.summary = h(doc, "summary", { cls: "gth-grants-summary", text: "Allowed without asking" });
    this.list = h(doc, "ul", { cls: "gth-grants-list" });
    this.error = h(doc, "p", { cls: "gth-grants-error", attrs: { role: "alert" } });
    this.error.hidden = true;
    this.el = h(doc, "details", { cls: "gth-grants" }, [this.summary, this.list, this.error]);
    this.el.hidden = true;
    /** @type {Grant[]} */
    this.grants = [];
  }

  /** Ask the server again; a failure leaves the list as it was. */
  async refresh() {
    /** @type {Grant[] | null} */
    let grants = null;
    try {
      grants = await this.backend.grants(this.threadId);
    } catch {
      return;
    }
    this.show(grants);
  }

  /** Draw `grants` (null: this transport has none to show). @param {Grant[] | null} grants */
  show(grants) {
    this.grants = Array.isArray(grants) ? grants.filter((g) => g && typeof g.id === "string") : [];
    this.list.replaceChildren(...this.grants.map((g) => this.#row(g)));
    this.summary.textContent = `Allowed without asking (${this.grants.length})`;
    this.el.hidden = !this.grants.length;
  }

  /** @param {Grant} g */
  #row(g) {
    const doc = this.doc;
    const revoke = h(doc, "button", {
      cls: "gth-grant-revoke",
      text: "Revoke",
      attrs: { type: "button", "aria-label": `Revoke: ${g.label}` },
    });
    const row = h(doc, "li", { cls: "gth-grant", data: { grantId: g.id, scope: String(g.scope), kind: String(g.kind) } }, [
      h(doc, "span", { cls: "gth-grant-kind", text: KIND_TEXT[/** @type {keyof typeof KIND_TEXT} */ (g.kind)] || "Call" }),
      h(doc, "code", { cls: "gth-grant-label", text: String(g.label ?? "") }),
      h(doc, "span", { cls: "gth-grant-scope", text: SCOPE_TEXT[g.scope] || String(g.scope) }),
      revoke,
    ]);
    revoke.addEventListener("click", (/** @type {any} */ ev) => {
      if (!ev?.isTrusted || revoke.disabled) return;
      revoke.disabled = true;
      void this.#revoke(g);
    });
    return row;
  }

  /** @param {Grant} g */
  async #revoke(g) {
    this.error.hidden = true;
    try {
      await this.backend.revokeGrant(g.id); // false: already gone, which is what was wanted
    } catch (err) {
      this.error.textContent = `Could not revoke it: ${/** @type {Error} */ (err).message}`;
      this.error.hidden = false;
    }
    await this.refresh();
  }
}

/**
 * A grants panel for `threadId` appended to `parent`, refreshed now and after each run of `chat`.
 * Returns the panel and a function that stops the refreshing.
 * @param {{ doc: Document, backend: GrantsBackend, chat: { on: (fn: (e: any) => void) => any }, threadId: string, parent: any }} opts
 */
export function wireGrants({ doc, backend, chat, threadId, parent }) {
  const panel = new GrantsPanel(doc, backend, threadId);
  parent.append(panel.el);
  void panel.refresh();
  const off = chat.on((e) => {
    if (e?.type === "run-state" && !e.running) void panel.refresh();
  });
  return { panel, stop: () => void (typeof off === "function" && off()) };
}
