import { writeSync } from 'node:fs';

// Where a child dies. The driver picks one point per child: the n-th time a commit hook
// or a failpoint is reached, or a moment in time; a backstop timer makes sure every
// child dies by SIGKILL even when its chosen point is never reached.

/** @typedef {'batchStarted' | 'beforeCommit' | 'afterCommit'} HookName */
/**
 * effect_start: T1 is durable, the effect has not happened. effect_done: the effect is
 * in the ledger, T2 not written. stream: a model observation arrived. cell: a tool call
 * from inside a Code mode cell. handoff: the n-th commit hook (n = 1..3) after the first
 * handoff commit was asked for — inside the commit that seals it.
 * @typedef {'effect_start' | 'effect_done' | 'stream' | 'cell' | 'handoff'} FailpointName
 */
/**
 * `open`: the driver kills the child `delayMs` after it says it is opening a new log
 * (a kill the child cannot time itself: a SQLite open runs no timer until it is done).
 * @typedef {{ readonly kind: 'hook', readonly name: HookName, readonly count: number }
 *   | { readonly kind: 'failpoint', readonly name: FailpointName, readonly count: number }
 *   | { readonly kind: 'open', readonly delayMs: number }
 *   | { readonly kind: 'time' }} KillPoint
 * @typedef {{ readonly point: KillPoint, readonly backstopMs: number }} KillPlan
 */

/**
 * Kills this process at once; nothing after it runs. Says where first (synchronously,
 * on stderr), so the driver can tell a planned point from the backstop.
 * @param {string} where
 */
export function die(where) {
  writeSync(2, `${JSON.stringify({ died: where })}\n`);
  process.kill(process.pid, 'SIGKILL');
  // The signal is delivered before kill() returns on Linux; spin in case it is not.
  for (;;) {}
}

export class KillSwitch {
  /** @type {KillPlan} */
  #plan;
  /** @type {Map<string, number>} */
  #counts = new Map();
  /** Commit hooks still to pass before dying inside a handoff's commit, once armed. */
  #handoffHooks = 0;

  /** @param {KillPlan} plan */
  constructor(plan) {
    this.#plan = plan;
  }

  /** Whether the driver kills this child while it opens its log (an `open` plan). */
  get killedOpening() {
    return this.#plan.point.kind === 'open';
  }

  /** Starts the backstop timer (the only kill of a `time` plan). */
  arm() {
    const where = this.#plan.point.kind === 'time' ? 'time' : 'backstop';
    setTimeout(() => die(where), this.#plan.backstopMs);
  }

  /** @param {HookName} name */
  hook(name) {
    if (this.#handoffHooks > 0) {
      this.#handoffHooks -= 1;
      if (this.#handoffHooks === 0) die(`failpoint:handoff:${name}`);
      return;
    }
    if (this.#reached('hook', name)) die(`hook:${name}`);
  }

  /** @param {FailpointName} name */
  failpoint(name) {
    const point = this.#plan.point;
    if (name === 'handoff') {
      // The first handoff arms it: the plan's count says which hook of the commit that
      // seals the handoff (1 batchStarted, 2 beforeCommit, 3 afterCommit) is the last.
      if (point.kind === 'failpoint' && point.name === 'handoff' && this.#handoffHooks === 0) {
        this.#handoffHooks = point.count;
      }
      return;
    }
    if (this.#reached('failpoint', name)) die(`failpoint:${name}`);
  }

  /**
   * Counts one more arrival at a point; true when it is the plan's.
   * @param {'hook' | 'failpoint'} kind
   * @param {string} name
   */
  #reached(kind, name) {
    const id = `${kind}:${name}`;
    const count = (this.#counts.get(id) ?? 0) + 1;
    this.#counts.set(id, count);
    const point = this.#plan.point;
    return point.kind === kind && point.name === name && point.count === count;
  }
}
