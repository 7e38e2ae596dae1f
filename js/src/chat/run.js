// One run's request and how it ended, without the controller's state: the `forwardedProps`
// every run sends, and what a failed run is reported as.

/**
 * The `gth` props every run sends (first runs and resumes alike); undefined when there are none.
 * `cellId`: the notebook cell a `%gth <prompt>` turn runs for; the server replaces that cell's
 * earlier turn with it (it branches from just before it: docs/http-contract.md).
 * @param {{ turnId: string, kernelId: string, detach: boolean, cellId?: string }} opts
 */
export function forwardedProps({ turnId, kernelId, detach, cellId = "" }) {
  /** @type {{ turnId?: string, kernelId?: string, cellId?: string }} */
  const gth = {};
  if (turnId) gth.turnId = turnId;
  if (kernelId) gth.kernelId = kernelId;
  if (cellId && turnId) gth.cellId = cellId;
  /** @type {{ gth?: object, detach?: true }} */
  const props = {};
  if (Object.keys(gth).length) props.gth = gth;
  if (detach) props.detach = true; // the run goes on if the connection drops (reattach.js)
  return Object.keys(props).length ? props : undefined;
}

/**
 * The `code` of a refusal the server answered a run with (`409 run_busy`, `404 run_not_found`,
 * …), from the error the AG-UI client rejected with.
 * @param {any} failure
 * @returns {string | undefined}
 */
export function refusalCode(failure) {
  const code = failure?.payload?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * How a run that failed is said: the server's `{code, message}` when it answered with one,
 * else `http_<status>`, the client's own code, or `client_error`.
 * @param {any} failure
 * @returns {{ type: "error", code: string, message: string }}
 */
export function failureEvent(failure) {
  const payload = failure.payload && typeof failure.payload === "object" ? failure.payload : null;
  return {
    type: "error",
    code: payload?.code || (failure.status ? `http_${failure.status}` : failure.code || "client_error"),
    message: payload?.message || failure.message || String(failure),
  };
}

/** Whether a failure is an aborted request (our own Stop). @param {any} err */
export function isAbort(err) {
  return err?.name === "AbortError" || err?.code === "abort";
}
