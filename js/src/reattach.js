// Runs that outlive their connection. Every HTTP run asks the server to go on without its
// client (`forwardedProps.detach: true`); each SSE frame the server sends carries `id: N`
// (from 1 per run), and `GET gth/runs/{runId}/events` with `Last-Event-ID: N` gives the frames
// after N, then follows the run live until it ends.
//
// - `resumableFetch`: a run's stream that breaks before RUN_FINISHED / RUN_ERROR (a network
//   blip, one server process of several restarting) is picked up again where it broke, a few
//   times with backoff, inside the Response body the AG-UI client reads: the client sees one
//   unbroken stream. Only whole frames are handed on, so a frame cut in half is read again
//   whole, never twice. (The client's SSE parser drops `id:` lines, hence `FrameTracker`.)
// - `ReplayFilter`: after a reload, the thread's history (the checkpoint) is shown first, then
//   the run's events from the start: events of messages and tool calls the history already
//   holds are skipped, so each is shown once; the message that was streaming comes whole.

/** Waits before each new try of a broken stream (ms); their number is the number of tries. */
export const REATTACH_DELAYS_MS = [250, 1000, 2000, 4000];

const NL = 10;
const TERMINAL = /RUN_FINISHED|RUN_ERROR/;

/**
 * Cuts an SSE byte stream at frame ends ("\n\n"), remembering the last `id:` seen and whether
 * the run's last frame (RUN_FINISHED or RUN_ERROR) went by.
 */
export class FrameTracker {
  constructor(lastId = 0) {
    /** The id of the last whole frame that carried one (0: none yet). */
    this.lastId = lastId;
    /** Whether any frame carried an id (a server that numbers frames can be re-attached to). */
    this.sawId = lastId > 0;
    /** Whole frames handed on. */
    this.frames = 0;
    /** The run's last event has been handed on. */
    this.ended = false;
    /** @type {Uint8Array} bytes of a frame not yet whole */
    this.pending = new Uint8Array(0);
    this.decoder = new TextDecoder();
  }

  /**
   * Take bytes; return the whole frames among them (with what was pending), possibly empty.
   * @param {Uint8Array} chunk
   */
  push(chunk) {
    let buf = chunk;
    if (this.pending.length) {
      buf = new Uint8Array(this.pending.length + chunk.length);
      buf.set(this.pending);
      buf.set(chunk, this.pending.length);
    }
    let end = -1;
    for (let i = buf.length - 1; i > 0; i--) {
      if (buf[i] === NL && buf[i - 1] === NL) {
        end = i + 1;
        break;
      }
    }
    if (end < 0) {
      this.pending = buf === chunk ? chunk.slice() : buf;
      return new Uint8Array(0);
    }
    this.pending = buf.slice(end);
    const whole = buf.subarray(0, end);
    // Whole frames end in "\n\n", so they decode on their own.
    for (const frame of this.decoder.decode(whole).split("\n\n")) this.#read(frame);
    return whole;
  }

  /** Bytes left of a frame that never ended (handed on when nothing more will come). */
  rest() {
    const rest = this.pending;
    this.pending = new Uint8Array(0);
    return rest;
  }

  /** @param {string} frame */
  #read(frame) {
    if (!frame.trim()) return;
    this.frames += 1;
    /** @type {string[]} */
    const data = [];
    for (let line of frame.split("\n")) {
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line.startsWith("id:")) {
        const id = line.slice(3).trim();
        if (/^\d+$/.test(id)) {
          this.lastId = Number(id);
          this.sawId = true;
        }
      } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    // Only a frame that names the end is parsed (the client parses every frame anyway).
    if (!data.length || !TERMINAL.test(frame)) return;
    try {
      const type = JSON.parse(data.join("\n"))?.type;
      if (type === "RUN_FINISHED" || type === "RUN_ERROR") this.ended = true;
    } catch {
      // An odd frame: the client's parser will say what is wrong with it.
    }
  }
}

/** The run a request is about: the POST body's `runId`, or the id in `gth/runs/{id}/events`. */
export function runIdOf(/** @type {string} */ url, /** @type {any} */ init = {}) {
  const m = /\/gth\/runs\/([^/?#]+)\/events(?:[?#]|$)/.exec(String(url));
  if (m) return decodeURIComponent(m[1]);
  if ((init.method || "GET").toUpperCase() !== "POST" || typeof init.body !== "string") return null;
  try {
    const runId = JSON.parse(init.body)?.runId;
    return typeof runId === "string" && runId ? runId : null;
  } catch {
    return null;
  }
}

/** The `Last-Event-ID` a request already carries (a re-attach that starts later), else 0. */
function lastIdOf(/** @type {any} */ headers) {
  if (!headers) return 0;
  let value;
  if (typeof headers.get === "function") value = headers.get("Last-Event-ID");
  else if (Array.isArray(headers)) value = headers.find(([k]) => k.toLowerCase() === "last-event-id")?.[1];
  else value = Object.entries(headers).find(([k]) => k.toLowerCase() === "last-event-id")?.[1];
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** @param {Response} res */
const isEventStream = (res) => res.ok && Boolean(res.body) && (res.headers.get("content-type") || "").includes("text/event-stream");

/** An AbortError, as fetch fails with when its signal aborts. */
function abortError(/** @type {AbortSignal} */ signal) {
  return signal.reason instanceof Error ? signal.reason : Object.assign(new Error("The run was stopped."), { name: "AbortError" });
}

/** Sleep `ms`; false when `signal` aborted first. */
function pause(/** @type {number} */ ms, /** @type {AbortSignal | undefined} */ signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * `fetch` whose run streams (`POST …/run` with a `runId`, `GET gth/runs/{id}/events`) survive a
 * broken connection: the body goes on from `GET {baseUrl}gth/runs/{runId}/events` with
 * `Last-Event-ID`, tried after each of `delaysMs`. A stream is picked up again only when its
 * server numbers frames (or before any frame came), never after Stop (the request's signal).
 * A run lost for good (the tries failed, or `404 run_not_found` / `410 events_expired`) ends
 * the stream with a RUN_ERROR frame naming why (`connection_lost`, or the refusal's code).
 * @param {(url: string, init?: any) => Promise<Response>} fetchFn
 * @param {{ baseUrl: string, delaysMs?: number[], onRetry?: (attempt: number, lastId: number) => void }} opts
 */
export function resumableFetch(fetchFn, { baseUrl, delaysMs = REATTACH_DELAYS_MS, onRetry }) {
  return async (/** @type {string} */ url, /** @type {any} */ init = {}) => {
    const runId = runIdOf(url, init);
    const res = await fetchFn(url, init);
    if (!runId || !isEventStream(res)) return res;
    const tracker = new FrameTracker(lastIdOf(init.headers));
    const signal = /** @type {AbortSignal | undefined} */ (init.signal || undefined);
    const eventsUrl = `${baseUrl}gth/runs/${encodeURIComponent(runId)}/events`;

    /** A new body after the stream broke, or null (the break stands); throws a refusal. */
    const reattach = async () => {
      /** @type {any} */
      let refusal = null;
      for (let attempt = 0; attempt < delaysMs.length; attempt++) {
        if (!(await pause(delaysMs[attempt], signal))) return null;
        onRetry?.(attempt + 1, tracker.lastId);
        /** @type {Record<string, string>} */
        const headers = { Accept: "text/event-stream" };
        if (tracker.lastId > 0) headers["Last-Event-ID"] = String(tracker.lastId);
        let next;
        try {
          next = await fetchFn(eventsUrl, { method: "GET", headers, signal });
        } catch {
          if (signal?.aborted) return null;
          continue; // still unreachable: try again
        }
        if (isEventStream(next)) return next.body;
        const type = next.headers.get("content-type") || "";
        const payload = type.includes("json") ? await next.json().catch(() => null) : null;
        if (payload?.code === "run_not_found" || payload?.code === "events_expired") {
          refusal = Object.assign(new Error(`HTTP ${next.status}: ${JSON.stringify(payload)}`), { status: next.status, payload });
          break;
        }
        // A proxy's 502 while a process restarts, and the like: try again.
      }
      if (refusal) throw refusal;
      return null;
    };

    /** @type {ReadableStreamDefaultReader<Uint8Array>} */
    let reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
    const body = new ReadableStream(
      {
        async pull(controller) {
          for (;;) {
            let step;
            try {
              step = await reader.read();
            } catch (err) {
              step = { done: true, error: err };
            }
            if (!step.done) {
              const whole = tracker.push(/** @type {Uint8Array} */ (step.value));
              if (whole.length) return controller.enqueue(whole);
              continue;
            }
            const error = /** @type {any} */ (step).error;
            if (signal?.aborted) return error !== undefined ? controller.error(error) : controller.close(); // Stop
            if (tracker.ended) return controller.close(); // what broke after the run's end is of no matter
            let next = null;
            /** @type {any} */
            let refusal = null;
            if (tracker.sawId || tracker.frames === 0) {
              try {
                next = await reattach();
              } catch (err) {
                refusal = err;
              }
            }
            if (next) {
              tracker.rest(); // half a frame: it comes again, whole
              reader = next.getReader();
              continue;
            }
            if (signal?.aborted) return controller.error(abortError(signal));
            // The run is lost to this page: said as the run's error (a frame cut in half is
            // dropped), rather than failing the stream, whose teardown the client reports
            // again as an unhandled rejection.
            tracker.rest();
            const why = error?.message ? `: ${error.message}` : "";
            const frame = {
              type: "RUN_ERROR",
              code: refusal?.payload?.code || "connection_lost",
              message: refusal?.payload?.message || `The connection to the agent was lost before the run ended${why}.`,
            };
            controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(frame)}\n\n`));
            return controller.close();
          }
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/**
 * Which events of a run replayed from its start the transcript already shows: those of
 * messages, tool calls and tool results the history (`messages`) holds, by id.
 */
export class ReplayFilter {
  /** @param {readonly any[]} messages the conversation as the history gave it */
  constructor(messages) {
    /** @type {Set<string>} */
    this.messages = new Set();
    /** @type {Set<string>} assistant messages, whose later text runs are `<id>-2`, `<id>-3`… */
    this.assistants = new Set();
    /** @type {Set<string>} */
    this.toolCalls = new Set();
    /** @type {Set<string>} tool calls whose result the history holds */
    this.answered = new Set();
    for (const m of messages) {
      if (typeof m?.id === "string" && m.id) this.messages.add(m.id);
      if (m?.role === "assistant") {
        if (m.id) this.assistants.add(m.id);
        for (const tc of m.toolCalls ?? []) if (tc?.id) this.toolCalls.add(tc.id);
      }
      if (m?.role === "tool" && m.toolCallId) this.answered.add(m.toolCallId);
    }
    this.skipped = 0;
  }

  /** Whether the history already holds the message `id` (or a text run of it). */
  known(/** @type {unknown} */ id) {
    if (typeof id !== "string") return false;
    if (this.messages.has(id)) return true;
    const m = /^(.+)-\d+$/.exec(id);
    return Boolean(m && this.assistants.has(m[1]));
  }

  /** True when `event` is about something the history already holds. @param {any} event */
  skip(event) {
    const hit = this.#skip(event);
    if (hit) this.skipped += 1;
    return hit;
  }

  /** @param {any} e */
  #skip(e) {
    switch (e?.type) {
      case "TEXT_MESSAGE_START":
      case "TEXT_MESSAGE_CONTENT":
      case "TEXT_MESSAGE_END":
      case "REASONING_START":
      case "REASONING_MESSAGE_START":
      case "REASONING_MESSAGE_CONTENT":
      case "REASONING_MESSAGE_END":
      case "REASONING_END":
      case "ACTIVITY_SNAPSHOT":
      case "ACTIVITY_DELTA":
        return this.known(e.messageId);
      case "TOOL_CALL_START":
      case "TOOL_CALL_ARGS":
      case "TOOL_CALL_END":
        return this.toolCalls.has(e.toolCallId);
      case "TOOL_CALL_RESULT":
        return this.answered.has(e.toolCallId) || this.messages.has(e.messageId);
      case "REASONING_ENCRYPTED_VALUE":
        return this.known(e.entityId) || this.toolCalls.has(e.entityId);
      default:
        return false;
    }
  }
}
