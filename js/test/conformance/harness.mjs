// Test harness for the AG-UI conformance suite: real `gth-jupyter serve` processes driven by the
// official @ag-ui/client HttpAgent.
//
// - startServer(responses) runs a server on a free port with a scripted fake model (its own temp
//   dir, config file, record file and random token) and resolves once it prints its ready line.
// - server.agent(threadId) builds an HttpAgent pointed at it, with the token header.
// - runRecorded(agent, params) runs the agent with a subscriber that records every event, the
//   RUN_FINISHED/RUN_ERROR callbacks and onRunFailed, and fails (throws) when the client's
//   pipeline rejects the stream (enforce/verify) or logs a warning about it.
// - server.calls() reads what the model was sent (one entry per model call).
//
// Importing this module has no side effects: `node --test` may treat it as a test file.

import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

import { HttpAgent } from "@ag-ui/client";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The `js/` directory. */
export const JS_DIR = path.resolve(HERE, "..", "..");

/** The server executable: $GTH_JUPYTER_BIN, else the project venv's. */
export function serverBin() {
  return process.env.GTH_JUPYTER_BIN || path.resolve(JS_DIR, "..", ".venv", "bin", "gth-jupyter");
}

const READY = /gth-jupyter AG-UI server on http:\/\/\S+/;
const START_TIMEOUT_MS = Number(process.env.GTH_CONFORMANCE_START_TIMEOUT_MS || 90_000);
// Python start-up is CPU-bound (imports); more parallel starts than cores only thrash.
const START_CONCURRENCY = Math.max(2, (os.availableParallelism?.() ?? os.cpus().length) + 1);
// Bytecode for the servers' imports, kept between runs. The environment may set
// PYTHONDONTWRITEBYTECODE and the venv may ship without .pyc files, which makes every start
// compile langchain from source (~3 s of CPU instead of ~1 s).
const PYCACHE =
  process.env.PYTHONPYCACHEPREFIX ||
  process.env.GTH_CONFORMANCE_PYCACHE ||
  path.join(os.tmpdir(), "gth-jupyter-conformance-pycache");

// Servers still running when this process goes away are killed with it.
const live = new Set();
let cleanupInstalled = false;
function killLive() {
  for (const child of live) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
}
function installCleanup() {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once("exit", killLive);
  for (const [sig, number] of [["SIGINT", 2], ["SIGTERM", 15], ["SIGHUP", 1]]) {
    process.once(sig, () => {
      killLive();
      process.exit(128 + number);
    });
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// A small semaphore so that a file's servers start a few at a time. The first start runs alone,
// so that a cold bytecode cache is filled once rather than by every server at the same time.
let starting = 0;
let firstStarted = false;
const waiters = [];
async function acquireStartSlot() {
  if (starting < (firstStarted ? START_CONCURRENCY : 1)) {
    starting += 1;
    return;
  }
  await new Promise((resolve) => waiters.push(resolve));
}
function releaseStartSlot() {
  starting -= 1;
  firstStarted = true;
  while (starting < START_CONCURRENCY && waiters.length) {
    starting += 1;
    waiters.shift()();
  }
}

export class GthServer {
  constructor({ dir, configPath, recordPath, token, port, child, log, name }) {
    Object.assign(this, { dir, configPath, recordPath, token, port, child, log, name });
    this.base = `http://127.0.0.1:${port}`;
    this.runUrl = `${this.base}/agents/default/run`;
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
  }

  /** Headers carrying the token (plus JSON content type), for plain fetch calls. */
  headers(extra = {}) {
    return { Authorization: `token ${this.token}`, "Content-Type": "application/json", ...extra };
  }

  /**
   * An HttpAgent for this server. Its fetch is wrapped so that the last HTTP response (status
   * and headers) is visible as `agent.lastResponse`, e.g. to read Retry-After on a 409.
   */
  agent(threadId = `thread-${randomUUID()}`, config = {}) {
    const holder = { lastResponse: undefined };
    const agent = new HttpAgent({
      url: this.runUrl,
      headers: { Authorization: `token ${this.token}` },
      threadId,
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        holder.lastResponse = { status: response.status, headers: response.headers };
        return response;
      },
      ...config,
    });
    Object.defineProperty(agent, "lastResponse", { get: () => holder.lastResponse });
    return agent;
  }

  /** Every model call so far: `[{messages: [<LangChain message model_dump()>...], tools}]`. */
  async calls() {
    if (!existsSync(this.recordPath)) return [];
    const text = await readFile(this.recordPath, "utf8");
    return text
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line));
  }

  /** The messages of the last model call. */
  async lastCall() {
    const calls = await this.calls();
    if (!calls.length) throw new Error(`The model of server ${this.name} was never called.`);
    return calls[calls.length - 1];
  }

  /** The server's stdout and stderr so far, for failure messages. */
  output() {
    return this.log.join("");
  }

  async stop() {
    const child = this.child;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killed = await Promise.race([this.exited.then(() => false), sleep(5000, true)]);
      if (killed) {
        child.kill("SIGKILL");
        await this.exited;
      }
    }
    live.delete(child);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Starts `gth-jupyter serve` with a scripted fake model.
 *
 * @param {Array<string|object>} responses the fake model's script, one entry per model call
 * @param {{name?: string, builtInTools?: unknown, tokenDelayMs?: number, config?: object,
 *   command?: string}} [options] `config` is merged into the file; `command` picks the
 *   configuration command the server runs as (default Gaunt Sloth's `api`)
 * @returns {Promise<GthServer>}
 */
export async function startServer(responses, options = {}) {
  const bin = serverBin();
  if (!existsSync(bin)) {
    throw new Error(`gth-jupyter not found at ${bin}; set GTH_JUPYTER_BIN.`);
  }
  installCleanup();
  await acquireStartSlot();
  try {
    let lastError;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        return await startOnce(bin, responses, options);
      } catch (error) {
        lastError = error;
        // A port taken between probing and binding: try another one.
        if (!/address already in use|EADDRINUSE|Errno 98/i.test(String(error.message))) break;
      }
    }
    throw lastError;
  } finally {
    releaseStartSlot();
  }
}

async function startOnce(bin, responses, options) {
  const name = options.name ?? "server";
  const dir = await mkdtemp(path.join(os.tmpdir(), "gth-agui-conformance-"));
  const recordPath = path.join(dir, "calls.jsonl");
  const configPath = path.join(dir, ".gsloth.config.json");
  const config = {
    llm: {
      type: "fake",
      tokenDelayMs: options.tokenDelayMs ?? 0,
      recordPath,
      responses,
    },
    builtInTools: options.builtInTools ?? ["gth_status_update", "gth_checklist"],
    ...(options.config ?? {}),
  };
  await writeFile(configPath, JSON.stringify(config, null, 2));
  // Hex, and passed as --token=T: a token starting with "-" would read as an option.
  const token = randomBytes(18).toString("hex");
  const port = await freePort();
  const env = { ...process.env, PYTHONUNBUFFERED: "1", PYTHONPYCACHEPREFIX: PYCACHE };
  delete env.GTH_JUPYTER_TOKEN;
  delete env.PYTHONDONTWRITEBYTECODE;
  const args = ["serve", "--host", "127.0.0.1", "--port", String(port)];
  args.push(`--token=${token}`, "--memory", "-c", configPath);
  if (options.command) args.push(`--command=${options.command}`);
  const child = spawn(bin, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  live.add(child);
  const log = [];
  const server = new GthServer({ dir, configPath, recordPath, token, port, child, log, name });

  await new Promise((resolve, reject) => {
    let stdout = "";
    let settled = false;
    const settle = (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(
      () => settle(new Error(`${name}: not ready after ${START_TIMEOUT_MS} ms:\n${log.join("")}`)),
      START_TIMEOUT_MS,
    );
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      log.push(chunk);
      stdout += chunk;
      if (READY.test(stdout)) settle();
    });
    child.stderr.on("data", (chunk) => log.push(chunk));
    child.once("error", (error) => settle(error));
    child.once("exit", (code, signal) =>
      settle(new Error(`${name}: exited (${code ?? signal}) before ready:\n${log.join("")}`)),
    );
  }).catch(async (error) => {
    await server.stop();
    throw error;
  });
  return server;
}

// -- console capture ------------------------------------------------------------------------

const captured = [];
let installed = false;

/**
 * Records console.warn/console.error calls (still printing them). The client reports stripped
 * or unknown stream material (`[ag-ui][enforce] ...`), deprecated shapes (`[ag-ui][compat]`),
 * version mismatches and reducer anomalies (`TOOL_CALL_ARGS: No message found ...`) this way.
 */
export function installConsoleCapture() {
  if (installed) return;
  installed = true;
  for (const level of ["warn", "error"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
      captured.push({
        level,
        text: args.map((a) => (a instanceof Error ? a.stack || a.message : String(a))).join(" "),
      });
      original(...args);
    };
  }
}

/** Console messages captured since the last call. */
export function takeConsole() {
  return captured.splice(0, captured.length);
}

// -- running ----------------------------------------------------------------------------------

/**
 * Runs `agent` and records what its subscriber saw.
 *
 * `onEvent(event, rec)` is called after each event is recorded (e.g. to abort the run).
 *
 * Throws when runAgent rejects or onRunFailed fires (the client's enforce or verify stage
 * rejected the stream, or the HTTP request failed), and when the client logged a warning during
 * the run, unless `allowFailure` is set (then the error is returned in `rec.error`).
 *
 * `rec.warnings` holds the console.warn/console.error calls made during the run.
 *
 * @returns {Promise<{input, events, finished, runErrors, failed, warnings, result, error,
 *   types: string[], of: (type: string) => object[]}>}
 */
export async function runRecorded(agent, params = {}, { allowFailure = false, onEvent } = {}) {
  installConsoleCapture();
  takeConsole();
  const rec = {
    input: undefined,
    events: [],
    finished: [],
    runErrors: [],
    failed: [],
    warnings: [],
    result: undefined,
    error: undefined,
  };
  const subscriber = {
    onRunInitialized: ({ input }) => {
      rec.input = structuredClone(input);
    },
    onEvent: ({ event }) => {
      rec.events.push(structuredClone(event));
      onEvent?.(event, rec);
    },
    onRunFinishedEvent: (params) => {
      rec.finished.push({
        outcome: params.outcome,
        pendingToolCallIds: params.pendingToolCallIds ? [...params.pendingToolCallIds] : undefined,
        interrupts: params.interrupts ? structuredClone(params.interrupts) : undefined,
        result: params.result,
        event: structuredClone(params.event),
      });
    },
    onRunErrorEvent: ({ event }) => {
      rec.runErrors.push(structuredClone(event));
    },
    onRunFailed: ({ error }) => {
      rec.failed.push(error);
    },
  };
  try {
    rec.result = await agent.runAgent(params, subscriber);
  } catch (error) {
    rec.error = error;
  }
  rec.warnings = takeConsole();
  rec.types = rec.events.map((e) => e.type);
  rec.of = (type) => rec.events.filter((e) => e.type === type);
  if (!allowFailure) assertClean(rec);
  return rec;
}

/**
 * Throws unless the run was clean: runAgent resolved, onRunFailed never fired, no subscriber
 * hook threw, and the client logged no warning (about stripped or unknown material, deprecated
 * shapes, reducer anomalies or the protocol version).
 */
export function assertClean(rec) {
  const failure = rec.error ?? rec.failed[0];
  if (failure) {
    const err = new Error(
      `The client rejected the run: ${failure.message ?? failure}\n` +
        `events: ${JSON.stringify(rec.types)}`,
    );
    err.cause = failure;
    throw err;
  }
  // The client swallows subscriber exceptions, logging them; a failing hook is a failure.
  const hookErrors = rec.warnings.filter((w) => w.text.startsWith("Subscriber error"));
  if (hookErrors.length) {
    throw new Error(`A subscriber hook threw:\n${hookErrors.map((w) => w.text).join("\n")}`);
  }
  const warnings = rec.warnings.filter((w) => w.level === "warn");
  if (warnings.length) {
    throw new Error(
      `The client warned about the stream:\n${warnings.map((w) => `  ${w.text}`).join("\n")}`,
    );
  }
}

/** A user message with a fresh id. */
export function userMessage(content) {
  return { id: `user-${randomUUID()}`, role: "user", content };
}

/** A tool message answering `toolCallId`. */
export function toolMessage(toolCallId, content) {
  return { id: `tool-${randomUUID()}`, role: "tool", toolCallId, content };
}

/** Fetches with the server's token (unless `auth: false`), returning status, headers and body. */
export async function request(server, options) {
  const { method = "POST", path: route, body, auth = true, headers } = options;
  const response = await fetch(`${server.base}${route ?? "/agents/default/run"}`, {
    method,
    headers: auth ? server.headers(headers) : { "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** A minimal valid RunAgentInput. */
export function runInput(overrides = {}) {
  return {
    threadId: `thread-${randomUUID()}`,
    runId: `run-${randomUUID()}`,
    messages: [userMessage("hello")],
    tools: [],
    context: [],
    forwardedProps: {},
    state: {},
    ...overrides,
  };
}
