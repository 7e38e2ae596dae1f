// How the widget reaches the agent: HTTP to the Jupyter server extension, or the widget's comm
// to the kernel where no server page exists (VS Code, Colab, JupyterLite).
//
// Both transports are `fetch`-compatible functions, so the official `HttpAgent` runs unchanged
// over either: `commFetch` turns the kernel's chunk messages into a Response body stream.

import { abortError, commRequest, listen, newRequestId } from "./comm.js";
import { threadOf } from "./interrupts.js";
import { resumableFetch } from "./reattach.js";

/** @typedef {import("./comm.js").AnyModel} AnyModel */
/** @typedef {(url: string, init?: RequestInit) => Promise<Response>} FetchFn */
/**
 * A thread as the server gives it (`threadOf`), and the turn's static copy when it was asked.
 * @typedef {ReturnType<typeof threadOf> & { copy?: Record<string, string> | null }} Thread
 */

/** Parse `<script id="jupyter-config-data">` (JupyterLab / Notebook 7 page config), or null. */
export function readPageConfig(doc = globalThis.document) {
  try {
    const node = doc?.getElementById?.("jupyter-config-data");
    return node?.textContent ? JSON.parse(node.textContent) : null;
  } catch {
    return null;
  }
}

/**
 * The server's base URL, always ending in "/": the model's `base_url` trait when set, else the
 * page config's `baseUrl`, else "/".
 * @param {string | undefined | null} fromModel
 */
export function resolveBaseUrl(fromModel, doc = globalThis.document) {
  let base = (fromModel || "").trim();
  if (!base) base = readPageConfig(doc)?.baseUrl || "/";
  return base.endsWith("/") ? base : `${base}/`;
}

/** The `_xsrf` cookie value, if any (same regex as JupyterLab's ServerConnection). */
export function xsrfToken(doc = globalThis.document) {
  let cookie = "";
  try {
    cookie = doc?.cookie || "";
  } catch {
    // Sandboxed iframes throw on document.cookie.
  }
  const match = cookie.match(/\b_xsrf=([^;]*)\b/);
  return match ? match[1] : undefined;
}

/** Headers JupyterLab itself sends: XSRF from the cookie, and the token when the page has one. */
export function authHeaders(doc = globalThis.document) {
  /** @type {Record<string, string>} */
  const headers = {};
  const xsrf = xsrfToken(doc);
  if (xsrf) headers["X-XSRFToken"] = xsrf;
  const token = readPageConfig(doc)?.token;
  if (token) headers.Authorization = `token ${token}`;
  return headers;
}

/**
 * `fetch` with Jupyter's credentials and auth headers added to every call.
 * @param {{ fetchImpl?: FetchFn, doc?: any }} [opts]
 * @returns {FetchFn}
 */
export function httpFetch({ fetchImpl, doc } = {}) {
  const base = fetchImpl || ((url, init) => globalThis.fetch(url, init));
  return (url, init = {}) => {
    const headers = { ...headerObject(init.headers), ...authHeaders(doc) };
    return base(url, { ...init, headers, credentials: "same-origin", cache: "no-store" });
  };
}

/** @param {HeadersInit | undefined} h */
function headerObject(h) {
  if (!h) return {};
  if (typeof Headers !== "undefined" && h instanceof Headers) return Object.fromEntries(h.entries());
  if (Array.isArray(h)) return Object.fromEntries(h);
  return /** @type {Record<string, string>} */ ({ ...h });
}

/**
 * A `fetch` that carries the run over the widget's comm. The request body (RunAgentInput JSON)
 * goes out as `{type: "run", requestId, body}`; the kernel answers with `chunk` messages of SSE
 * text, then `end`, or an `error` with an HTTP-like status. Aborting the signal sends `abort`.
 * @param {AnyModel} model
 * @returns {FetchFn}
 */
export function commFetch(model) {
  return (_url, init = {}) =>
    new Promise((resolve, reject) => {
      const requestId = newRequestId();
      const signal = init.signal || undefined;
      const encoder = new TextEncoder();
      /** @type {ReadableStreamDefaultController<Uint8Array> | null} */
      let controller = null;
      let settled = false; // the Response has been handed over
      let done = false;

      const stream = new ReadableStream({
        start(c) {
          controller = c;
        },
        cancel() {
          cleanup();
          if (!done) model.send({ type: "abort", requestId });
        },
      });
      const respond = () => {
        if (settled) return;
        settled = true;
        resolve(new Response(stream, { status: 200, headers: { "Content-Type": "text/event-stream" } }));
      };
      const cleanup = () => {
        done = true;
        stop();
        signal?.removeEventListener("abort", onAbort);
      };
      const stop = listen(model, requestId, (msg) => {
        if (msg.type === "chunk") {
          respond();
          if (typeof msg.data === "string" && msg.data) controller?.enqueue(encoder.encode(msg.data));
        } else if (msg.type === "end") {
          respond();
          cleanup();
          controller?.close();
        } else if (msg.type === "error") {
          cleanup();
          const body = msg.body && typeof msg.body === "object" ? msg.body : { code: "comm_error", message: String(msg.body || "") };
          if (!settled) {
            // Before any data: answer like the HTTP endpoint's refusals, so HttpAgent reports
            // `HTTP <status>: {code, message}` for both transports alike.
            settled = true;
            resolve(new Response(JSON.stringify(body), {
              status: msg.status || 500,
              headers: { "Content-Type": "application/json" },
            }));
          } else {
            controller?.error(Object.assign(new Error(body.message || "The kernel stream failed."), { code: body.code }));
          }
        }
      });
      const onAbort = () => {
        if (done) return;
        cleanup();
        model.send({ type: "abort", requestId });
        const err = abortError();
        if (!settled) {
          settled = true;
          reject(err);
        } else {
          controller?.error(err);
        }
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort);

      let body = init.body;
      try {
        body = typeof body === "string" ? JSON.parse(body) : body;
      } catch {
        // Leave a non-JSON body as it is; the kernel refuses it with invalid_json.
      }
      model.send({ type: "run", requestId, body });
    });
}

/**
 * Whether `value` is a cell's static copy as the server renders it: its text/html,
 * text/markdown and text/plain, each text.
 * @returns {value is Record<string, string>}
 */
export function isCopy(/** @type {any} */ value) {
  return Boolean(value) && typeof value === "object" && ["text/html", "text/markdown", "text/plain"].every((mime) => typeof value[mime] === "string");
}

/** Resolve in a later task (not a microtask), so the browser may paint in between. */
export function nextTask() {
  return new Promise((resolve) => {
    if (typeof MessageChannel === "function") {
      // Unlike nested setTimeout(0), not clamped to 4 ms.
      const { port1, port2 } = new MessageChannel();
      port1.onmessage = () => {
        port1.close();
        resolve(undefined);
      };
      port2.postMessage(null);
    } else setTimeout(resolve, 0);
  });
}

/**
 * Hand a streamed body on in pieces, one piece per task. The AG-UI client parses every chunk
 * it reads and applies all of its events in one chain of microtasks, and applying an event
 * costs more as the reply grows (the client copies the conversation after each one), so a
 * burst (a fast model, the kernel's coalesced comm chunks) would block the page for as long as
 * thousands of events take. Pieces end at a line break where possible; their size adapts so
 * that each task (handling one piece, and any paint due) stays near `budgetMs`.
 * @param {ReadableStream<Uint8Array>} body
 * @param {{ budgetMs?: number, minBytes?: number, maxBytes?: number, now?: () => number,
 *   yieldTask?: () => Promise<unknown> }} [opts]
 * @returns {ReadableStream<Uint8Array>}
 */
export function sliceStream(body, opts = {}) {
  const { budgetMs = 10, minBytes = 256, maxBytes = 65536, now = () => performance.now(), yieldTask = nextTask } = opts;
  const reader = body.getReader();
  /** @type {Uint8Array | null} */
  let chunk = null;
  let offset = 0;
  let size = 1024; // small at first: the first events of a run meet cold code
  let sentAt = -1;
  return new ReadableStream(
    {
      async pull(controller) {
        if (sentAt >= 0) {
          // The piece handed on last has been handled by the time this task runs.
          await yieldTask();
          const took = now() - sentAt;
          if (took > budgetMs) size = Math.max(minBytes, size >> 1);
          else if (took < budgetMs / 4) size = Math.min(maxBytes, size << 1);
        }
        if (!chunk || offset >= chunk.length) {
          const { done, value } = await reader.read();
          if (done) {
            controller.close();
            return;
          }
          chunk = value;
          offset = 0;
        }
        let end = Math.min(chunk.length, offset + size);
        if (end < chunk.length) {
          const newline = chunk.lastIndexOf(10, end - 1);
          if (newline >= offset) end = newline + 1;
        }
        controller.enqueue(chunk.subarray(offset, end));
        offset = end;
        sentAt = now();
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * `fetch` whose event-stream responses are read through `sliceStream`.
 * @param {FetchFn} fetchFn
 * @returns {FetchFn}
 */
export function slicedFetch(fetchFn) {
  return async (url, init) => {
    const res = await fetchFn(url, init);
    if (!res.ok || !res.body || !(res.headers.get("content-type") || "").includes("text/event-stream")) return res;
    return new Response(sliceStream(res.body), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/**
 * Pick the transport: "http" when `GET {base}gth/health` answers 200 JSON within `timeoutMs`,
 * else "comm". Explicit "http" or "comm" is returned as is.
 * @param {{ transport?: string, baseUrl: string, fetchImpl?: FetchFn, timeoutMs?: number, location?: any }} opts
 * @returns {Promise<"http" | "comm">}
 */
export async function chooseTransport({ transport = "auto", baseUrl, fetchImpl, timeoutMs = 1500, location }) {
  if (transport === "http" || transport === "comm") return transport;
  const loc = location ?? globalThis.location;
  if (loc && !/^https?:$/.test(loc.protocol || "")) return "comm"; // vscode-webview:, blob:, file:
  const doFetch = fetchImpl || httpFetch();
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const res = await doFetch(`${baseUrl}gth/health`, { method: "GET", signal: abort.signal });
    if (!res.ok || !(res.headers.get("content-type") || "").includes("json")) return "comm";
    await res.json();
    return "http";
  } catch {
    return "comm";
  } finally {
    clearTimeout(timer);
  }
}

/** How long the comm backend waits for the kernel's answer to an info request. */
export const COMM_INFO_TIMEOUT_MS = 10000;

/**
 * Everything the widget asks of a server, for one transport.
 * @param {"http" | "comm"} kind
 * @param {{ model: AnyModel, baseUrl: string, fetchImpl?: FetchFn, doc?: any, infoTimeoutMs?: number }} opts
 */
export function createBackend(kind, { model, baseUrl, fetchImpl, doc, infoTimeoutMs = COMM_INFO_TIMEOUT_MS }) {
  if (kind === "comm") {
    return {
      kind,
      fetch: slicedFetch(commFetch(model)),
      runUrl: (/** @type {string} */ agent) => `comm:gth/agents/${encodeURIComponent(agent)}/run`,
      /** The run lives in the kernel, and ends with it: nothing to detach or re-attach to. */
      detach: false,
      eventsUrl: null,
      cancelRun: null,
      /**
       * @param {string} threadId @param {string} [turnId] only that widget turn's messages
       * @param {{ copy?: boolean }} [_opts] no copy: over the comm the kernel ran the turn and
       *   renders its copy itself
       * @returns {Promise<Thread>}
       */
      async history(threadId, turnId, _opts = {}) {
        const reply = await commRequest(model, "history", { extra: turnId ? { threadId, turnId } : { threadId } });
        return threadOf(reply); // {messages, interrupts, turns, busy}
      },
      /**
       * The agent's info over the comm, the body `GET gth/info` answers: `{type: "info",
       * requestId}` is answered by `{type: "info", requestId, info}`. A kernel that does not
       * know the request stays silent, so the wait is short and its end is "no info" (null).
       * @param {AbortSignal} [signal] ends the wait early (the view is gone)
       */
      async info(signal) {
        const reply = await commRequest(model, "info", { timeoutMs: infoTimeoutMs, signal }).catch(() => null);
        const info = reply?.info;
        return info && typeof info === "object" && !Array.isArray(info) ? info : null;
      },
      /** Standing approvals are listed over HTTP only: over the comm there are none to show. */
      async grants(/** @type {string} */ _threadId) {
        return null;
      },
      /** What the model was sent is served over HTTP only (the kernel keeps no such view). */
      context: null,
      async revokeGrant(/** @type {string} */ _grantId) {
        return false;
      },
    };
  }
  const f = httpFetch({ fetchImpl, doc });
  const getJson = async (/** @type {string} */ path) => {
    const res = await f(`${baseUrl}${path}`, { method: "GET" });
    if (res.status === 404) return null;
    if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status} for ${path}`), { status: res.status });
    return res.json();
  };
  return {
    kind,
    // A run's stream that breaks is picked up again where it broke (src/reattach.js).
    fetch: slicedFetch(resumableFetch(f, { baseUrl })),
    runUrl: (/** @type {string} */ agent) => `${baseUrl}gth/agents/${encodeURIComponent(agent)}/run`,
    /** Runs over HTTP go on when their connection drops (`forwardedProps.detach`). */
    detach: true,
    /** Where a run in flight is followed from (after a reload). @param {string} runId */
    eventsUrl: (runId) => `${baseUrl}gth/runs/${encodeURIComponent(runId)}/events`,
    /**
     * Stop a run on the server (Stop: a detached run outlives its connection). A server
     * without the route answers 404/405, which is ignored.
     * @param {string} runId
     */
    async cancelRun(runId) {
      await f(`${baseUrl}gth/runs/${encodeURIComponent(runId)}`, { method: "DELETE" }).catch(() => null);
    },
    /**
     * @param {string} threadId @param {string} [turnId] only that widget turn's messages
     * @param {{ copy?: boolean }} [opts] `copy`: with the turn's static copy, which the server
     *   renders from this same read (null when nothing of the turn is on the thread)
     * @returns {Promise<Thread>}
     */
    async history(threadId, turnId, { copy = false } = {}) {
      const query = [turnId ? `turn=${encodeURIComponent(turnId)}` : "", copy ? "copy=1" : ""].filter(Boolean).join("&");
      const body = await getJson(`gth/threads/${encodeURIComponent(threadId)}${query ? `?${query}` : ""}`);
      const thread = threadOf(body); // {messages, interrupts, turns, busy}
      return copy ? { ...thread, copy: isCopy(body?.copy) ? body.copy : null } : thread;
    },
    async info() {
      return getJson("gth/info");
    },
    /**
     * What each model call of a turn was sent (`GET gth/threads/{id}/context?turn=`): `{calls}`.
     * @param {string} threadId @param {string} turn its turn id, or the run that started it
     */
    async context(threadId, turn) {
      return getJson(`gth/threads/${encodeURIComponent(threadId)}/context?turn=${encodeURIComponent(turn)}`);
    },
    /**
     * The standing approvals a run on this thread uses (the thread's and the server session's):
     * `[{id, scope, kind, label, createdAt}]`, or null when the server has no such route.
     * @param {string} threadId
     */
    async grants(threadId) {
      const body = await getJson(`gth/threads/${encodeURIComponent(threadId)}/grants`);
      return Array.isArray(body?.grants) ? body.grants : null;
    },
    /** Revokes one; false when the server no longer has it. @param {string} grantId */
    async revokeGrant(grantId) {
      const res = await f(`${baseUrl}gth/grants/${encodeURIComponent(grantId)}`, { method: "DELETE" });
      if (res.status === 404) return false;
      if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status} revoking a grant`), { status: res.status });
      return true;
    },
  };
}
