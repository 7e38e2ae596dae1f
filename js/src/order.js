// Cell order and busy threads: how a `%gth <prompt>` widget waits its turn.
//
// The kernel gives each prompt widget the turn it follows (`after_turn`): the widget sends only
// once the server says that turn is done (it ran, and nothing of it still waits for a browser
// tool or an approval), however the page happened to render the cells. Widgets of one page
// wake each other when a run ends, and poll the server meanwhile. A `409 run_busy` from
// anywhere else (another tab, `Session` in the kernel, another client) is waited out using the
// response's `Retry-After`.

/** In-page news: a run on a thread ended, or a turn was given up (its prompt cancelled). */
const bus = new EventTarget();
/** Turns whose widget gave up its prompt in this page: the next cell need not wait for them. */
const givenUp = new Set();
/** Turns a view of this page has started sending (two views of one widget send once). */
const claimed = new Set();

/**
 * Tell waiting widgets of this page that something changed on `threadId`.
 * @param {string} threadId @param {unknown} [source] the widget it comes from
 */
export function announce(threadId, source) {
  bus.dispatchEvent(new CustomEvent("turn", { detail: { threadId, source } }));
}

/**
 * Call `fn` whenever a run on `threadId` ends in this page in another widget than `self`.
 * @param {string} threadId @param {() => void} fn @param {unknown} [self]
 * @returns {() => void} stop listening
 */
export function onNews(threadId, fn, self) {
  const listener = (/** @type {any} */ e) => {
    if (e.detail?.threadId === threadId && (self === undefined || e.detail?.source !== self)) fn();
  };
  bus.addEventListener("turn", listener);
  return () => bus.removeEventListener("turn", listener);
}

/** The prompt of `turnId` will never be sent: the cell after it may go. */
export function giveUp(/** @type {string} */ threadId, /** @type {string} */ turnId) {
  if (turnId) givenUp.add(turnId);
  announce(threadId);
}

/** Whether this view may send `turnId`'s prompt: only the first view that asks. */
export function claim(/** @type {string} */ turnId) {
  if (!turnId) return true;
  if (claimed.has(turnId)) return false;
  claimed.add(turnId);
  return true;
}

/** An AbortError, as fetch rejects with. */
function aborted(/** @type {AbortSignal} */ signal) {
  return signal.reason instanceof Error ? signal.reason : Object.assign(new Error("Aborted"), { name: "AbortError", reason: signal.reason });
}

/**
 * Sleep `ms`, ending early on news about `threadId` (or any news, without one); rejects when
 * `signal` aborts.
 * @param {number} ms @param {AbortSignal | undefined} signal @param {string} [threadId]
 */
export function pause(ms, signal, threadId) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal));
    const done = () => {
      clearTimeout(timer);
      bus.removeEventListener("turn", onNews);
      signal?.removeEventListener("abort", onAbort);
    };
    const onNews = (/** @type {any} */ e) => {
      if (threadId && e.detail?.threadId !== threadId) return;
      done();
      resolve(undefined);
    };
    const onAbort = () => {
      done();
      reject(aborted(/** @type {AbortSignal} */ (signal)));
    };
    const timer = setTimeout(() => {
      done();
      resolve(undefined);
    }, ms);
    bus.addEventListener("turn", onNews);
    signal?.addEventListener("abort", onAbort);
  });
}

/**
 * Wait until `afterTurn` is done on the server. `turnsOf(turnId)` returns the thread's turn
 * list (`[{turnId, done}]`); `onWait(state)` is called once, when waiting starts ("not-started":
 * the cell before has not sent yet; "running": its turn runs or waits on a tool or approval).
 * @param {{ threadId: string, afterTurn: string, turnsOf: (turnId: string) => Promise<any[] | null>,
 *   signal: AbortSignal, onWait: (state: "not-started" | "running") => void, pollMs?: number }} opts
 */
export async function waitForTurn({ threadId, afterTurn, turnsOf, signal, onWait, pollMs = 1500 }) {
  let waiting = false;
  while (afterTurn && !givenUp.has(afterTurn)) {
    if (signal.aborted) throw aborted(signal);
    const turns = await turnsOf(afterTurn).catch(() => null);
    const found = Array.isArray(turns) ? turns.find((t) => t?.turnId === afterTurn) : undefined;
    if (found?.done) return;
    if (!waiting) {
      waiting = true;
      onWait(found ? "running" : "not-started");
    }
    await pause(pollMs, signal, threadId);
  }
}

/** Longest wait between two tries of a busy thread, whatever `Retry-After` says. */
export const MAX_BUSY_WAIT_S = 30;

/**
 * `fetch` that waits out `409 run_busy`: it tries again after the response's `Retry-After`
 * (seconds; 2 when absent), until the run is accepted or `init.signal` aborts (the Stop button).
 * `onWait(seconds)` is called before each wait and `onDone()` once the request settles.
 * @param {(url: string, init?: any) => Promise<Response>} fetchFn
 * @param {{ onWait?: (seconds: number) => void, onDone?: () => void, threadId?: string }} [hooks]
 */
export function waitOutBusy(fetchFn, hooks = {}) {
  return async (/** @type {string} */ url, /** @type {any} */ init = {}) => {
    let waited = false;
    try {
      for (;;) {
        const res = await fetchFn(url, init);
        if (res.status !== 409) return res;
        const body = await res.clone().json().catch(() => null);
        if (body?.code !== "run_busy") return res;
        const seconds = Math.min(MAX_BUSY_WAIT_S, Math.max(0.2, Number(res.headers.get("Retry-After")) || 2));
        waited = true;
        hooks.onWait?.(seconds);
        await pause(seconds * 1000, init.signal, hooks.threadId);
      }
    } finally {
      if (waited) hooks.onDone?.();
    }
  };
}
