// A stand-in for anywidget's model: traits, change events, custom messages.

/**
 * @typedef {(...args: any[]) => void} Listener
 * @typedef {ReturnType<typeof fakeModel>} FakeModel
 */

/**
 * @param {Record<string, any>} [traits]
 * @param {{ onSend?: (msg: any, model: FakeModel) => void }} [opts] sees each message the widget sends
 */
export function fakeModel(traits = {}, { onSend } = {}) {
  /** @type {Map<string, Set<Listener>>} */
  const listeners = new Map();
  /** @type {any[]} */
  const sent = [];
  /** @type {Record<string, any>} */
  const state = { ...traits };
  const emit = (/** @type {string} */ name, /** @type {any[]} */ ...args) => {
    for (const cb of [...(listeners.get(name) ?? [])]) cb(...args);
  };
  const model = {
    sent,
    saved: 0,
    get: (/** @type {string} */ k) => state[k],
    /** @param {string} k @param {any} v */
    set(k, v) {
      state[k] = v;
      emit(`change:${k}`, v);
    },
    save_changes() {
      model.saved += 1;
    },
    /** @param {any} msg */
    send(msg) {
      sent.push(msg);
      onSend?.(msg, model);
    },
    /** @param {string} name @param {Listener} cb */
    on(name, cb) {
      if (!listeners.has(name)) listeners.set(name, new Set());
      listeners.get(name)?.add(cb);
    },
    /** @param {string} [name] @param {Listener} [cb] */
    off(name, cb) {
      if (!name) return listeners.clear();
      if (!cb) return void listeners.delete(name);
      listeners.get(name)?.delete(cb);
    },
    /** Deliver a custom message from the "kernel". @param {any} msg */
    deliver(msg) {
      emit("msg:custom", msg, []);
    },
    listenerCount: (/** @type {string} */ name) => listeners.get(name)?.size ?? 0,
  };
  return model;
}
