// How the widget reaches the agent: HTTP to the Jupyter server extension, or the widget's comm
// to the kernel where no server page exists (VS Code, Colab, JupyterLite).
//
// Both transports are `fetch`-compatible functions, so the official `HttpAgent` runs unchanged
// over either: `commFetch` turns the kernel's chunk messages into a Response body stream.

import { abortError, commRequest, listen, newRequestId } from "./comm.js";

/** @typedef {import("./comm.js").AnyModel} AnyModel */
/** @typedef {(url: string, init?: RequestInit) => Promise<Response>} FetchFn */

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

/**
 * Everything the widget asks of a server, for one transport.
 * @param {"http" | "comm"} kind
 * @param {{ model: AnyModel, baseUrl: string, fetchImpl?: FetchFn, doc?: any }} opts
 */
export function createBackend(kind, { model, baseUrl, fetchImpl, doc }) {
  if (kind === "comm") {
    return {
      kind,
      fetch: commFetch(model),
      runUrl: (/** @type {string} */ agent) => `comm:gth/agents/${encodeURIComponent(agent)}/run`,
      /** @param {string} _threadId */
      async history(_threadId) {
        const reply = await commRequest(model, "history");
        return Array.isArray(reply.messages) ? reply.messages : [];
      },
      async info() {
        return null;
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
    fetch: f,
    runUrl: (/** @type {string} */ agent) => `${baseUrl}gth/agents/${encodeURIComponent(agent)}/run`,
    /** @param {string} threadId */
    async history(threadId) {
      const body = await getJson(`gth/threads/${encodeURIComponent(threadId)}`);
      return Array.isArray(body?.messages) ? body.messages : [];
    },
    async info() {
      return getJson("gth/info");
    },
  };
}
