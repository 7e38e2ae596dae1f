// capture_image: one webcam frame as a JPEG, Gaunt Sloth's frozen contract.
//
// Result: the JSON string {"mimeType":"image/jpeg","data":"<base64>"} or {"error":"..."}.
// Errors are results, not exceptions, so the model can tell the user what went wrong.
// The camera is released in every case: a light left on is the bug users remember.

import tools from "../../../gth_jupyter/contract/spec/browser_tools.json" with { type: "json" };

const LONG_EDGE = 640;
const FRAME_TIMEOUT_MS = 10000;
// The permission prompt waits for a person, so it gets longer than the frame itself.
const PERMISSION_TIMEOUT_MS = 60000;
export const FRAME_ERROR = "Failed to capture frame. Is the camera active?";

/** @type {import("./registry.js").ToolDef} */
export const captureImageTool = {
  // Its spec is a headless turn's too (contract/spec/browser_tools.json).
  name: "capture_image",
  ...tools.builtin.capture_image,
  handler: async (_args, ctx) => captureImage(ctx, ctx?.env),
};

/**
 * @param {{ toolCallId?: string, signal?: AbortSignal, ui?: any, log?: (line: string) => void }} [ctx]
 * @param {{ window?: any, navigator?: any, document?: any, frameTimeoutMs?: number }} [env]
 * @returns {Promise<string>}
 */
export async function captureImage(ctx = {}, env = {}) {
  const win = env.window ?? globalThis.window;
  const nav = env.navigator ?? globalThis.navigator;
  const doc = env.document ?? globalThis.document;
  if (win && win.isSecureContext === false) {
    return errorJson("The camera needs a secure page (https or localhost); this page is not one.");
  }
  if (!nav?.mediaDevices?.getUserMedia) {
    return errorJson("No camera is available here: this browser or view gives no access to getUserMedia.");
  }
  /** @type {MediaStream | undefined} */
  let stream;
  /** @type {any} */
  let video;
  try {
    ctx.log?.("Asking for the camera…");
    stream = await bounded(
      nav.mediaDevices.getUserMedia({ video: { width: { ideal: 640 }, height: { ideal: 480 } } }),
      PERMISSION_TIMEOUT_MS,
      ctx.signal,
      (late) => stopTracks(late),
    );
    video = doc.createElement("video");
    video.muted = true;
    video.playsInline = true;
    video.setAttribute("playsinline", "");
    video.srcObject = stream;
    await bounded(waitForFrame(video), env.frameTimeoutMs ?? FRAME_TIMEOUT_MS, ctx.signal);
    const { width, height } = fitLongEdge(video.videoWidth, video.videoHeight, LONG_EDGE);
    const canvas = doc.createElement("canvas");
    canvas.width = width;
    canvas.height = height;
    canvas.getContext("2d").drawImage(video, 0, 0, width, height);
    const dataUrl = String(canvas.toDataURL("image/jpeg", 0.8));
    const comma = dataUrl.indexOf(",");
    if (!dataUrl.startsWith("data:image/jpeg") || comma < 0) return errorJson(FRAME_ERROR);
    ctx.log?.(`Captured ${width}×${height} JPEG.`);
    ctx.ui?.showImage?.(ctx.toolCallId, dataUrl);
    return JSON.stringify({ mimeType: "image/jpeg", data: dataUrl.slice(comma + 1) });
  } catch (err) {
    return errorJson(describe(err));
  } finally {
    stopTracks(stream);
    if (video) {
      try {
        video.pause?.();
        video.srcObject = null;
      } catch {
        // Nothing more to release.
      }
    }
  }
}

/** Scale (w, h) so the long edge is at most `max`. @param {number} w @param {number} h @param {number} max */
export function fitLongEdge(w, h, max) {
  const long = Math.max(w, h) || 1;
  const k = Math.min(1, max / long);
  return { width: Math.max(1, Math.round(w * k)), height: Math.max(1, Math.round(h * k)) };
}

/** @param {MediaStream | undefined} stream */
function stopTracks(stream) {
  for (const track of stream?.getTracks?.() ?? []) {
    try {
      track.stop();
    } catch {
      // Already stopped.
    }
  }
}

/** @param {string} message */
function errorJson(message) {
  return JSON.stringify({ error: message });
}

/** @param {any} err */
function describe(err) {
  switch (err?.name) {
    case "NotAllowedError":
    case "PermissionDeniedError":
    case "SecurityError":
      return "Camera permission was denied. Allow camera access for this page and try again.";
    case "NotFoundError":
    case "DevicesNotFoundError":
    case "OverconstrainedError":
      return "No camera was found.";
    case "NotReadableError":
    case "TrackStartError":
      return "The camera could not be started; another application may be using it.";
    case "AbortError":
      return "The capture was cancelled.";
    case "TimeoutError":
      return FRAME_ERROR;
    default:
      return `Could not capture an image: ${err?.message || String(err)}`;
  }
}

/** Resolve once the video element has a decoded frame with a size. @param {HTMLVideoElement} video */
function waitForFrame(video) {
  return new Promise((resolve) => {
    const ready = () => video.readyState >= 2 && video.videoWidth > 0 && video.videoHeight > 0;
    Promise.resolve(video.play?.()).catch(() => {});
    const poll = () => {
      if (ready()) resolve(undefined);
      else if (video.srcObject) setTimeout(poll, 50); // released in `finally`: stop polling
    };
    poll();
  });
}

/**
 * Race `promise` against a timeout and an abort signal. A value that arrives too late is
 * handed to `onLate` (to stop a camera that opened after the user gave up).
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {AbortSignal | undefined} signal
 * @param {(late: T) => void} [onLate]
 * @returns {Promise<T>}
 */
function bounded(promise, ms, signal, onLate) {
  return new Promise((resolve, reject) => {
    let over = false;
    const end = (/** @type {() => void} */ fn) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      fn();
    };
    const named = (/** @type {string} */ name, /** @type {string} */ msg) => Object.assign(new Error(msg), { name });
    const timer = setTimeout(() => end(() => reject(named("TimeoutError", FRAME_ERROR))), ms);
    const onAbort = () => end(() => reject(named("AbortError", "aborted")));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort);
    promise.then(
      (value) => (over ? onLate?.(value) : end(() => resolve(value))),
      (err) => end(() => reject(err)),
    );
  });
}
