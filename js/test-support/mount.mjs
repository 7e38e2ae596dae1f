// What the tests of a mounted widget share: waiting on a condition, and a server with one
// thread ("t1", two messages) whose runs follow scripts.

import { sse } from "./sse.mjs";

/** Resolve once `cond()` is truthy; fail after about a second. @param {() => unknown} cond */
export async function until(cond, what = "condition", tries = 500) {
  for (let i = 0; i < tries; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A fetch for `/base/`: health ok, thread t1 with an earlier question and answer (plus `extra`
 * fields of the thread's body), runs answered by `runScripts` in order, 404 for the rest.
 * @param {((body: any) => Record<string, any>[])[]} runScripts
 * @param {Record<string, any>} [extra]
 */
export function fakeServer(runScripts, extra = {}) {
  /** @type {{ url: string, init: RequestInit }[]} */
  const requests = [];
  const fetch = async (/** @type {string} */ url, /** @type {RequestInit} */ init = {}) => {
    requests.push({ url, init });
    if (url === "/base/gth/health") return Response.json({ status: "ok" });
    if (url === "/base/gth/threads/t1") {
      return Response.json({
        threadId: "t1",
        messages: [
          { id: "u0", role: "user", content: "earlier question" },
          { id: "a0", role: "assistant", content: "earlier answer" },
        ],
        ...extra,
      });
    }
    if (url === "/base/gth/agents/default/run") {
      const body = JSON.parse(String(init.body));
      const script = runScripts.shift();
      if (!script) return new Response("no run expected", { status: 500 });
      return new Response(sse(script(body)), { headers: { "Content-Type": "text/event-stream" } });
    }
    return new Response("not found", { status: 404 });
  };
  return { fetch, requests };
}

/** The env a test mounts with: its fetch, an http page, frames on timers. @param {(url: string, init?: any) => Promise<Response>} fetch */
export const testEnv = (fetch) => ({ fetch, location: { protocol: "http:" }, raf: (/** @type {() => void} */ cb) => setTimeout(cb, 0) });
