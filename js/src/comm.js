// Request/reply over an anywidget model's custom messages.
//
// The kernel answers every request with messages carrying the same `requestId`, so one
// listener per request is enough: it ignores everything that is not addressed to it.
// Kept free of other imports because the tiny loader bundles it too.

/** @typedef {{ send(content: any, callbacks?: any, buffers?: any[]): void,
 *   on(name: string, cb: (msg: any, buffers?: any[]) => void): void,
 *   off(name: string, cb?: (msg: any, buffers?: any[]) => void): void,
 *   get(name: string): any, set?(name: string, value: any): void, save_changes?(): void }} AnyModel */

let counter = 0;

/** A request id unique within this page. */
export function newRequestId() {
  counter += 1;
  const rand = Math.random().toString(36).slice(2, 10);
  return `gth-${Date.now().toString(36)}-${counter}-${rand}`;
}

/**
 * Listen for messages addressed to `requestId` until `stop()` is called.
 * @param {AnyModel} model
 * @param {string} requestId
 * @param {(msg: any) => void} onMessage
 */
export function listen(model, requestId, onMessage) {
  const handler = (/** @type {any} */ msg) => {
    if (msg && typeof msg === "object" && msg.requestId === requestId) onMessage(msg);
  };
  model.on("msg:custom", handler);
  let stopped = false;
  return function stop() {
    if (stopped) return;
    stopped = true;
    model.off("msg:custom", handler);
  };
}

/**
 * Send `{type, requestId, ...extra}` and resolve with the first reply of type `replyType`
 * (or reject on a reply of type "error", on `signal` abort, or after `timeoutMs`).
 * @param {AnyModel} model
 * @param {string} type
 * @param {{ replyType?: string, extra?: object, timeoutMs?: number, signal?: AbortSignal }} [opts]
 * @returns {Promise<any>}
 */
export function commRequest(model, type, opts = {}) {
  const { replyType = type, extra = {}, timeoutMs = 30000, signal } = opts;
  const requestId = newRequestId();
  return new Promise((resolve, reject) => {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const finish = () => {
      stop();
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const stop = listen(model, requestId, (msg) => {
      if (msg.type === replyType) {
        finish();
        resolve(msg);
      } else if (msg.type === "error") {
        finish();
        const body = msg.body || {};
        const err = /** @type {Error & {status?: number, code?: string}} */ (
          new Error(body.message || `The kernel refused the '${type}' request.`)
        );
        err.status = msg.status;
        err.code = body.code;
        reject(err);
      }
    });
    const onAbort = () => {
      finish();
      reject(abortError());
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort);
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        finish();
        const err = /** @type {Error & {code?: string}} */ (
          new Error(`The kernel did not answer the '${type}' request within ${timeoutMs / 1000} s.`)
        );
        err.code = "comm_timeout";
        reject(err);
      }, timeoutMs);
    }
    model.send({ type, requestId, ...extra });
  });
}

/** An error shaped like the one `fetch` throws when aborted. */
export function abortError() {
  if (typeof DOMException === "function") return new DOMException("The run was stopped.", "AbortError");
  const err = new Error("The run was stopped.");
  err.name = "AbortError";
  return err;
}
