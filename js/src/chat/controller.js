// The chat controller: one official `HttpAgent`, the client-tool loop, and an event stream
// for the view. It knows nothing of the DOM, so it runs (and is tested) in Node.
//
// A turn: the user's message goes out with the browser tools declared in RunAgentInput.tools.
// When a run finishes with pending tool calls (outcome success + pendingToolCallIds), the
// matching browser handlers run, one `tool` message per call is appended, and the agent runs
// again, up to `maxRounds` times. Stop aborts the request and latches, so nothing is resumed.

import { HttpAgent, randomUUID } from "@ag-ui/client";
import { ActivityStore } from "../a2ui/activity.js";
import { ChatEvents } from "./events.js";
import { failureEvent, forwardedProps, isAbort, refusalCode } from "./run.js";
import { callsToAnswer, runTools, streamedArgs, suspendedArgs, turnMessageId } from "./tools.js";
import { blocksThread, isInterrupt } from "../interrupts.js";
import { ReplayFilter } from "../reattach.js";
import { StreamedText } from "../streamtext.js";

/**
 * @typedef {import("../tools/registry.js").ToolRegistry} ToolRegistry
 * @typedef {import("../tools/registry.js").ToolUi} ToolUi
 * @typedef {import("./events.js").ChatEvent} ChatEvent
 * @typedef {{ outcome?: string, pendingToolCallIds: string[], interrupts: any[] }} Finished
 */

export const MAX_ROUNDS = 64;

export class ChatController extends ChatEvents {
  /**
   * @param {{ url: string, threadId: string, registry: ToolRegistry, fetch?: any, ui?: ToolUi,
   *   maxRounds?: number, agent?: any, env?: any, turnId?: string, kernelId?: string, cellId?: string,
   *   detach?: boolean, eventsUrl?: (runId: string) => string, cancelRun?: (runId: string) => Promise<unknown>,
   *   suspended?: () => Promise<any[]> }} opts
   *   `suspended`: the interrupts the server's copy of the thread waits on (`GET gth/threads/{id}`),
   *   read for the arguments of client tool calls whose approval the person edited
   */
  constructor(opts) {
    super();
    this.registry = opts.registry;
    this.ui = opts.ui;
    this.env = opts.env;
    this.maxRounds = opts.maxRounds ?? MAX_ROUNDS;
    /** The widget turn every run of this chat belongs to (a `%gth` cell), sent to the server. */
    this.turnId = opts.turnId || "";
    /** The notebook's kernel, so the server's kernel tools reach this notebook's variables. */
    this.kernelId = opts.kernelId || "";
    /** The notebook cell this chat's turn runs for: running the cell again replaces the turn. */
    this.cellId = opts.cellId || "";
    /** Runs go on on the server when the connection drops (HTTP; src/reattach.js). */
    this.detach = Boolean(opts.detach);
    /** `gth/runs/{runId}/events`: where a run in flight is re-attached to (HTTP only). */
    this.eventsUrl = opts.eventsUrl ?? null;
    /** Tells the server to stop a run (a detached run outlives its connection). */
    this.cancelRun = opts.cancelRun ?? null;
    /** The run in flight, and the URL its events are read from when it is re-attached. */
    /** @type {string | null} */
    this.runId = null;
    /** @type {string | null} */
    this.attachUrl = null;
    const post = opts.fetch ?? ((/** @type {string} */ u, /** @type {any} */ i) => globalThis.fetch(u, i));
    // A re-attach reads the run's events (GET) instead of posting a new run; the official
    // client runs it like any other, so its events are applied and shown the same way.
    const fetch = (/** @type {string} */ url, /** @type {any} */ init = {}) =>
      this.attachUrl
        ? post(this.attachUrl, { method: "GET", headers: { Accept: "text/event-stream" }, signal: init.signal })
        : post(url, init);
    this.agent = opts.agent ?? new HttpAgent({ url: opts.url, threadId: opts.threadId, fetch });
    this.running = false;
    this.stopped = false;
    /** @type {Set<string>} Tool call ids already answered here: a returnDirect tool must not loop. */
    this.fulfilled = new Set();
    /** @type {string | null} */
    this.turnUserId = null;
    /** @type {AbortController | null} */
    this.toolAbort = null;
    this.suspended = opts.suspended ?? null;
    /** @type {Set<string>} Tool calls whose approval was answered here with edited arguments. */
    this.editedCalls = new Set();
    /** A2UI activity contents by message id, so an ACTIVITY_DELTA can be drawn (a2ui/activity.js). */
    this.activities = new ActivityStore();
  }

  get messages() {
    return this.agent.messages;
  }

  get pendingInterrupts() {
    return this.agent.pendingInterrupts ?? [];
  }

  /** Replace the conversation with the server's copy (rehydration). */
  setHistory(/** @type {any[]} */ messages) {
    this.agent.setMessages(messages);
    this.activities.load(messages);
    this.emit({ type: "history", messages: this.agent.messages });
  }

  /**
   * Whether `send(content)` would start a turn now. Says why not (as an error event) when an
   * interrupt is waiting, since the user can act on that.
   * @param {string | any[]} content
   */
  accepts(content) {
    if (this.running) return false;
    if (typeof content === "string" && !content.trim()) return false;
    if (this.pendingInterrupts.length) {
      this.emit({
        type: "error",
        code: "interrupt_pending",
        message: "The agent is waiting for an answer to its last request; answer or cancel it first.",
      });
      return false;
    }
    return true;
  }

  /**
   * Send a user message and run the turn to its end. Resolves false when it could not start.
   * @param {string | any[]} content text, or AG-UI content parts
   */
  async send(content) {
    if (!this.accepts(content)) return false;
    const message = { id: randomUUID(), role: "user", content };
    this.agent.addMessage(message);
    this.turnUserId = message.id;
    this.emit({ type: "user", message });
    await this.#loop({});
    return true;
  }

  /** Send an A2UI user action as the next user message (its content is the action's JSON). */
  sendAction(/** @type {object} */ action) {
    return this.send(JSON.stringify(action));
  }

  /**
   * Answer the pending interrupts (AG-UI `resume[]`) and run on.
   * @param {{ interruptId: string, status: "resolved" | "cancelled", payload?: any }[]} resume
   */
  async resolveInterrupts(resume) {
    if (this.running) return false;
    const asked = this.agent.pendingInterrupts;
    // An edited approval of a client tool (insert_cell's code card) changes the arguments the
    // server hands the browser, not the call in the history: those are read from the server.
    for (const entry of resume) {
      if (entry?.payload?.editedArgs === undefined) continue;
      const callId = this.pendingInterrupts.find((/** @type {any} */ i) => i?.id === entry.interruptId)?.toolCallId;
      if (typeof callId === "string" && callId) this.editedCalls.add(callId);
    }
    await this.#loop({ resume });
    // Only a finished run replaces the pending interrupts. When the answers did not get through
    // (a refusal, a failed request, Stop), ask again, or the thread could not go on.
    if (this.agent.pendingInterrupts === asked && this.pendingInterrupts.length) {
      this.emit({ type: "interrupt", interrupts: this.pendingInterrupts });
    }
    return true;
  }

  /**
   * The interrupts the server's copy of the thread waits on (after a reload), so they can be
   * answered again. Pending client tool calls alone do not hold the thread: the server drops
   * them when the user moves on, so they are not restored.
   * @param {any[]} interrupts
   */
  restoreInterrupts(interrupts) {
    if (this.running || !Array.isArray(interrupts) || !blocksThread(interrupts)) return false;
    this.agent.pendingInterrupts = interrupts.filter(isInterrupt);
    this.emit({ type: "interrupt", interrupts: this.pendingInterrupts });
    return true;
  }

  /**
   * Follow the run `runId` that is in flight on the server (after a reload): its events from
   * the start, minus those of what the history already shows (`setHistory` first), then on
   * as after any run: interrupts get their cards, browser tools run and the thread resumes.
   * Resolves "gone" when the server no longer has the run's events (`404 run_not_found`,
   * `410 events_expired`; nothing is shown then), else true; false when it could not start.
   * @param {string} runId
   * @returns {Promise<boolean | "gone">}
   */
  async reattach(runId) {
    if (this.running || !this.eventsUrl || !runId) return false;
    this.turnUserId = null;
    const gone = await this.#loop({ attach: runId });
    return gone ? "gone" : true;
  }

  /** Stop the run in flight; latches so no tool result is sent after it. */
  stop() {
    if (!this.running) return;
    this.stopped = true;
    this.toolAbort?.abort();
    // A detached run outlives its connection: the server is told to stop it.
    if (this.runId && this.cancelRun) void this.cancelRun(this.runId).catch(() => {});
    this.agent.abortRun();
  }

  /**
   * @param {{ attach?: string, resume?: any[] }} params
   * @returns {Promise<boolean>} whether the run to re-attach to was gone
   */
  async #loop(params) {
    this.running = true;
    this.stopped = false;
    let gone = false;
    this.emit({ type: "run-state", running: true });
    try {
      /** @type {any} */
      let next = params;
      for (let round = 1; ; round++) {
        if (round > this.maxRounds) {
          this.emit({
            type: "error",
            code: "too_many_rounds",
            message: `Stopped after ${this.maxRounds} rounds of browser tool calls in one turn.`,
          });
          break;
        }
        const finished = await this.#runOnce(next);
        next = {};
        if (finished === "gone") gone = true;
        if (this.stopped || !finished || finished === "gone") break;
        if (finished.outcome === "interrupt") {
          this.emit({ type: "interrupt", interrupts: finished.interrupts });
          break;
        }
        if (finished.outcome !== "success") break;
        const calls = this.#callsToAnswer(finished.pendingToolCallIds);
        if (!calls.length) break;
        // A re-attached run's calls may have been approved with edits before the page loaded.
        const argsOf = await this.#argsOf(calls, finished.interrupts, round === 1 && Boolean(params.attach));
        if (this.stopped) break;
        const answers = await this.#runTools(calls, argsOf);
        if (this.stopped) break;
        this.agent.addMessages(answers);
      }
    } finally {
      this.running = false;
      this.toolAbort = null;
      if (this.stopped) this.emit({ type: "stopped" });
      this.emit({ type: "run-state", running: false });
    }
    return gone;
  }

  /**
   * One HTTP (or comm) run, or a re-attach to one (`params.attach`: its runId). Resolves with
   * how it finished, null after a failure, "gone" when the run to re-attach to is not kept.
   * @param {{ attach?: string, resume?: any[] }} params
   */
  async #runOnce(params) {
    const { attach, ...input } = params;
    this.emit({ type: "request" }); // one run's POST goes out (the event log's diagram draws it)
    const runId = attach || randomUUID();
    this.runId = runId;
    this.attachUrl = attach && this.eventsUrl ? this.eventsUrl(attach) : null;
    // What the history shows already is not shown again when the run is replayed.
    const replay = attach ? new ReplayFilter(this.agent.messages) : null;
    /** @type {any} */
    let finished = null;
    /** @type {any} */
    let failure = null;
    // Streamed text stays out of the client's list until its message ends (src/streamtext.js).
    const streamed = new StreamedText();
    const subscriber = {
      ...streamed.subscriber(),
      onEvent: (/** @type {any} */ { event }) => {
        if (replay?.skip(event)) return { stopPropagation: true };
        this.emit({ type: "agui", event });
        if (event.type === "ACTIVITY_SNAPSHOT" || event.type === "ACTIVITY_DELTA") this.#onActivity(event);
      },
      onRunFinishedEvent: (/** @type {any} */ p) => {
        finished = { outcome: p.outcome, pendingToolCallIds: p.pendingToolCallIds ?? [], interrupts: p.interrupts ?? [] };
      },
      onRunErrorEvent: (/** @type {any} */ { event }) => {
        // An aborted request surfaces as RUN_ERROR{code:"abort"}: that is our own Stop.
        if (event.code !== "abort") this.emit({ type: "error", code: event.code || "run_error", message: event.message });
      },
      onRunFailed: (/** @type {any} */ { error }) => {
        failure = error;
        return { stopPropagation: true }; // we report it ourselves, without console noise
      },
    };
    try {
      const props = forwardedProps({ turnId: this.turnId, kernelId: this.kernelId, detach: this.detach, cellId: this.cellId });
      await this.agent.runAgent({ ...input, runId, tools: this.registry.declarations(), forwardedProps: props }, subscriber);
    } catch (err) {
      failure = err;
    } finally {
      this.attachUrl = null;
      this.runId = null;
    }
    streamed.flush(this.agent);
    const refused = refusalCode(failure);
    if (attach && !this.stopped && (refused === "run_not_found" || refused === "events_expired")) return "gone";
    if (failure && !this.stopped && !isAbort(failure)) {
      this.emit(failureEvent(failure));
      return null;
    }
    return failure ? null : finished;
  }

  /**
   * Track an A2UI activity; an ACTIVITY_DELTA is drawn as a snapshot of the operations it added
   * (marked `gthDerived`, so the event log lists only what came over the wire). The view dedupes
   * surfaces by surfaceId, so a surface also shown by its tool result is drawn once.
   * @param {any} event
   */
  #onActivity(event) {
    let ops;
    try {
      ops = this.activities.apply(event);
    } catch (err) {
      console.warn(`gth: could not apply ${event.type} for ${event.messageId}:`, err);
      return;
    }
    if (event.type !== "ACTIVITY_DELTA" || !ops?.length) return;
    this.emit({
      type: "agui",
      event: { type: "ACTIVITY_SNAPSHOT", messageId: event.messageId, activityType: event.activityType, content: { a2ui_operations: ops }, replace: false, gthDerived: true },
    });
  }

  /** Pending calls this browser can answer, from this turn only, each at most once. */
  #callsToAnswer(/** @type {string[]} */ pendingIds) {
    const { fulfilled, registry, turnUserId } = this;
    return callsToAnswer({ messages: this.agent.messages, turnUserId, pendingIds, fulfilled, registry });
  }

  /**
   * How each call gets its arguments: as the server suspended it (the interrupts a run ended
   * with, else the server's copy of the thread, read only for calls approved here with edits or
   * re-attached to), else as streamed. An edited call whose arguments cannot be read is answered
   * with an error, unrun: it never runs with the arguments the person changed.
   * @param {import("./tools.js").ToolCall[]} calls @param {any[]} interrupts @param {boolean} reattached
   */
  async #argsOf(calls, interrupts, reattached) {
    const given = suspendedArgs(interrupts);
    const unsure = calls.some((c) => !given.has(c.id) && (reattached || this.editedCalls.has(c.id)));
    if (unsure && this.suspended) {
      const onServer = await this.suspended().catch(() => null);
      for (const [id, args] of suspendedArgs(onServer)) if (!given.has(id)) given.set(id, args);
    }
    return (/** @type {import("./tools.js").ToolCall} */ call) => {
      const args = given.get(call.id);
      if (args !== undefined) return args;
      if (this.editedCalls.has(call.id)) {
        throw new Error("The person approved this call with edits, which could not be read from the server, so it was not run.");
      }
      return streamedArgs(call);
    };
  }

  /** Run the handlers of `calls`; Stop aborts the one running and answers none after it. */
  async #runTools(
    /** @type {import("./tools.js").ToolCall[]} */ calls,
    /** @type {(call: import("./tools.js").ToolCall) => any} */ argsOf,
  ) {
    const abort = new AbortController();
    this.toolAbort = abort;
    return runTools(calls, {
      registry: this.registry,
      ui: this.ui,
      env: this.env,
      signal: abort.signal,
      fulfilled: this.fulfilled,
      stopped: () => this.stopped,
      emit: (e) => this.emit(e),
      argsOf,
      // The widget's turn, else the turn's user message (`%gth` alone tags no typed turn).
      turnId: this.turnId || turnMessageId(this.agent.messages, this.turnUserId),
    });
  }
}
