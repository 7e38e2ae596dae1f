// Keeping a view when the notebook draws its widget again. Refreshing a cell's output (its
// static copy, src/app/static.js) makes the notebook draw the widget anew: the widget
// manager either detaches the old view's element without ending the view, or ends the view and
// draws a new one. Either way the new view takes the old one over, its transcript, its chat and
// a run in flight, rather than load it all again beside a hidden view that would still answer
// the kernel's prompts, or after one whose end stopped its run.
//
// anywidget hands each view a model of its own (its listeners are dropped with that view), so a
// view listens through a `rebindable` model that moves its listeners to the new view's model.

/**
 * @typedef {import("../comm.js").AnyModel} AnyModel
 * @typedef {{ el: HTMLElement, model: ReturnType<typeof rebindable>, ready: () => boolean,
 *   destroy: () => void, parked?: ReturnType<typeof setTimeout>, focus?: HTMLElement | null }} Hosted
 *   A view on this page: the element hosting it now, its model, whether it has loaded, how it
 *   ends, the timer that ends it when it was let go and no new view took it over, and the
 *   element of it that has the focus (kept across a detach, which drops the focus unsaid).
 */

/** How long a view that was let go waits for the notebook to draw its widget again. */
export const PARK_MS = 3000;

/** The views on this page, by the output they show (the widget's display id). */
/** @type {Map<string, Set<Hosted>>} */
const byOutput = new Map();

/** @param {AnyModel} model */
const keyOf = (model) => String(model.get("display_id") || "");

/**
 * A model whose listeners can move to another view's model of the same widget.
 * @param {AnyModel} first
 */
export function rebindable(first) {
  let current = first;
  /** @type {[string, (...args: any[]) => void][]} */
  let listeners = [];
  /** @type {AnyModel} */
  const model = {
    get: (name) => current.get(name),
    set: (name, value) => current.set?.(name, value),
    save_changes: () => current.save_changes?.(),
    send: (content, callbacks, buffers) => current.send(content, callbacks, buffers),
    on(name, cb) {
      listeners.push([name, cb]);
      current.on(name, cb);
    },
    off(name, cb) {
      listeners = listeners.filter(([n, c]) => !(n === name && (!cb || c === cb)));
      current.off(name, cb);
    },
  };
  return {
    model,
    /** The view is shown through `next` from now on. @param {AnyModel} next */
    moveTo(next) {
      for (const [name, cb] of listeners) current.off(name, cb);
      current = next;
      for (const [name, cb] of listeners) next.on(name, cb);
    },
  };
}

/**
 * The view of this widget that the notebook let go or detached, now moved into `el` and shown
 * through `model`; its cleanup. Null when there is none (the view to make is a new one).
 * @param {AnyModel} model this view's model @param {HTMLElement} el @param {number} parkMs
 */
export function takeOver(model, el, parkMs) {
  const views = byOutput.get(keyOf(model));
  // Let go, or detached once it had loaded. (A view of another output of the same widget that
  // is still loading is not detached for good, and stays its own.)
  const previous = [...(views ?? [])].find((h) => h.parked !== undefined || (!h.el.isConnected && h.ready()));
  if (!previous) return null;
  clearTimeout(previous.parked);
  previous.parked = undefined;
  el.append(...previous.el.childNodes);
  previous.el = el;
  previous.model.moveTo(model);
  followFocus(previous, el);
  refocus(previous, el);
  return release(previous, el, parkMs);
}

/**
 * Keeps a new view on the page's list; its cleanup.
 * @param {{ el: HTMLElement, model: ReturnType<typeof rebindable>, ready: () => boolean, end: () => void }} view
 * @param {number} parkMs
 */
export function host({ el, model, ready, end }, parkMs) {
  const key = keyOf(model.model);
  /** @type {Hosted} */
  const entry = {
    el,
    model,
    ready,
    destroy: () => {
      clearTimeout(entry.parked);
      entry.parked = undefined;
      const views = byOutput.get(key);
      views?.delete(entry);
      if (views && !views.size) byOutput.delete(key);
      end();
    },
  };
  if (key) byOutput.set(key, (byOutput.get(key) ?? new Set()).add(entry));
  followFocus(entry, el);
  return release(entry, el, parkMs);
}

/**
 * The cleanup of the view hosted in `el`: it acts only while `el` still hosts the view, and a
 * view that had loaded waits `parkMs` (0: not at all) to be taken over before it ends.
 * @param {Hosted} entry @param {HTMLElement} el @param {number} parkMs
 */
function release(entry, el, parkMs) {
  return () => {
    if (entry.el !== el || entry.parked !== undefined) return;
    if (parkMs > 0 && entry.ready() && byOutput.has(keyOf(entry.model.model))) {
      entry.parked = setTimeout(entry.destroy, parkMs);
    } else {
      entry.destroy();
    }
  };
}

/**
 * Keeps `entry.focus`: the element of the view the person is in (typing, say), until they
 * move the focus elsewhere. @param {Hosted} entry @param {HTMLElement} el
 */
function followFocus(entry, el) {
  el.addEventListener("focusin", (e) => {
    if (entry.el === el) entry.focus = /** @type {HTMLElement} */ (e.target);
  });
  el.addEventListener("focusout", (e) => {
    // Focus moved to another element (not a detach, which names none): the person left.
    if (entry.el === el && e.relatedTarget) entry.focus = null;
  });
}

/**
 * A view moved into `el`: the moved nodes lost the focus, so the element the person was in gets
 * it back, caret and all, unless they are elsewhere by now.
 * @param {Hosted} entry @param {HTMLElement} el @param {number} [tries] waits left for `el` to be attached
 */
function refocus(entry, el, tries = 40) {
  const target = /** @type {any} */ (entry.focus);
  const doc = el.ownerDocument ?? globalThis.document;
  if (!target || entry.el !== el || !el.contains(target)) return;
  // The notebook attaches the new element once its view is made: until then, wait for it.
  if (!el.isConnected) {
    if (tries > 0) setTimeout(() => refocus(entry, el, tries - 1), 25);
    return;
  }
  const active = doc?.activeElement;
  if (active && active !== doc.body && active !== target) return;
  const range = typeof target.selectionStart === "number" ? [target.selectionStart, target.selectionEnd] : null;
  target.focus({ preventScroll: true });
  if (range) target.setSelectionRange?.(range[0], range[1]);
}
