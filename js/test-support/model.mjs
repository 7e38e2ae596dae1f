// A stand-in for anywidget's model: traits, change events, custom messages.

export function fakeModel(traits = {}, { onSend } = {}) {
  const listeners = new Map();
  const sent = [];
  const state = { ...traits };
  const emit = (name, ...args) => {
    for (const cb of [...(listeners.get(name) ?? [])]) cb(...args);
  };
  const model = {
    sent,
    saved: 0,
    get: (k) => state[k],
    set(k, v) {
      state[k] = v;
      emit(`change:${k}`, v);
    },
    save_changes() {
      model.saved += 1;
    },
    send(msg) {
      sent.push(msg);
      onSend?.(msg, model);
    },
    on(name, cb) {
      if (!listeners.has(name)) listeners.set(name, new Set());
      listeners.get(name).add(cb);
    },
    off(name, cb) {
      if (!name) return listeners.clear();
      if (!cb) return listeners.delete(name);
      listeners.get(name)?.delete(cb);
    },
    /** Deliver a custom message from the "kernel". */
    deliver(msg) {
      emit("msg:custom", msg, []);
    },
    listenerCount: (name) => listeners.get(name)?.size ?? 0,
  };
  return model;
}
