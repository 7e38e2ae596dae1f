// A2UI surfaces that arrive as AG-UI activity (ACTIVITY_SNAPSHOT / ACTIVITY_DELTA), one content
// per activity message id. The transcript renders operations; this store says which operations
// an event adds, so a delta is drawn as the operations it appended (its surface repaints in
// place, A2uiHost dedupes by surfaceId), and a snapshot seen again adds nothing new.

import { applyPatch } from "./patch.js";

export const A2UI_ACTIVITY = "a2ui-surface";

export class ActivityStore {
  constructor() {
    /** @type {Map<string, any>} messageId -> content */
    this.contents = new Map();
  }

  /** Remember the activity messages of a rebuilt history. @param {any[]} messages */
  load(messages) {
    this.contents.clear();
    for (const m of messages ?? []) if (m?.role === "activity") this.contents.set(m.id, m.content ?? {});
  }

  /**
   * Apply an ACTIVITY_SNAPSHOT or ACTIVITY_DELTA. Returns the A2UI operations to render now
   * (`[]` when nothing is new), or null for an event that is not an A2UI surface's.
   * @param {any} event
   * @returns {any[] | null}
   */
  apply(event) {
    if (event?.activityType !== A2UI_ACTIVITY) return null;
    const id = event.messageId;
    const before = this.contents.get(id);
    let after;
    if (event.type === "ACTIVITY_DELTA") {
      if (before === undefined) return null; // a delta for a message we never saw: nothing to patch
      after = applyPatch(before, event.patch);
    } else if (event.replace === false && before !== undefined) {
      return [];
    } else after = event.content ?? {};
    this.contents.set(id, after);
    return newOperations(before, after);
  }
}

/** The operations of `after` not already in `before` (all of them unless `after` only grew). */
function newOperations(/** @type {any} */ before, /** @type {any} */ after) {
  const next = Array.isArray(after?.a2ui_operations) ? after.a2ui_operations : [];
  const prev = Array.isArray(before?.a2ui_operations) ? before.a2ui_operations : [];
  const grew = prev.length <= next.length && prev.every((/** @type {unknown} */ op, /** @type {number} */ i) => JSON.stringify(op) === JSON.stringify(next[i]));
  return grew ? next.slice(prev.length) : next;
}
