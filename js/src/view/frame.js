// Coalesce DOM work to one paint per animation frame. Streaming sends a delta per token;
// painting (and re-rendering Markdown) per token would make long replies quadratic and janky.
// Each key keeps only its latest job, so a message is painted at most once per frame.

const defaultRaf = (/** @type {() => void} */ cb) =>
  typeof globalThis.requestAnimationFrame === "function" ? globalThis.requestAnimationFrame(cb) : setTimeout(cb, 16);

export class FrameScheduler {
  /** @param {(cb: () => void) => any} [raf] */
  constructor(raf = defaultRaf) {
    this.raf = raf;
    /** @type {Map<string, () => void>} */
    this.jobs = new Map();
    this.pending = false;
    this.frames = 0;
    /** @type {(() => void) | null} runs after every frame's jobs (auto-scroll) */
    this.after = null;
    this.closed = false;
  }

  /** Run `fn` in the next frame; a later job for the same key replaces it. */
  mark(/** @type {string} */ key, /** @type {() => void} */ fn) {
    if (this.closed) return;
    this.jobs.set(key, fn);
    if (!this.pending) {
      this.pending = true;
      this.raf(() => this.flush());
    }
  }

  /** Paint now (also used when a frame fires). */
  flush() {
    this.pending = false;
    if (!this.jobs.size) return;
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    this.frames += 1;
    for (const fn of jobs) {
      try {
        fn();
      } catch (err) {
        console.error("gth: a paint failed", err);
      }
    }
    this.after?.();
  }

  close() {
    this.closed = true;
    this.jobs.clear();
  }
}
