// Where a child dies. The driver picks one point per child: the n-th time a commit hook
// or a failpoint is reached, or a moment in time; a backstop timer makes sure every
// child dies by SIGKILL even when its chosen point is never reached.

/** @typedef {'batchStarted' | 'beforeCommit' | 'afterCommit'} HookName */
/**
 * effect_start: T1 is durable, the effect has not happened. effect_done: the effect is
 * in the ledger, T2 not written. stream: a model observation arrived. cell: a tool call
 * from inside a Code mode cell. handoff: the next commit hook after a handoff commit
 * was asked for.
 * @typedef {'effect_start' | 'effect_done' | 'stream' | 'cell' | 'handoff'} FailpointName
 */
/**
 * @typedef {{ readonly kind: 'hook', readonly name: HookName, readonly count: number }
 *   | { readonly kind: 'failpoint', readonly name: FailpointName, readonly count: number }
 *   | { readonly kind: 'time' }} KillPoint
 * @typedef {{ readonly point: KillPoint, readonly backstopMs: number }} KillPlan
 */

/** Kills this process at once; nothing after it runs. */
export function die() {
  process.kill(process.pid, 'SIGKILL');
  // The signal is delivered before kill() returns on Linux; spin in case it is not.
  for (;;) {}
}

export class KillSwitch {
  /** @type {KillPlan} */
  #plan;
  /** @type {Map<string, number>} */
  #counts = new Map();
  #handoffArmed = false;

  /** @param {KillPlan} plan */
  constructor(plan) {
    this.#plan = plan;
  }

  /** Starts the backstop timer (the only kill of a `time` plan). */
  arm() {
    setTimeout(die, this.#plan.backstopMs);
  }

  /** @param {HookName} name */
  hook(name) {
    if (this.#handoffArmed) die();
    this.#hit('hook', name);
  }

  /** @param {FailpointName} name */
  failpoint(name) {
    if (name === 'handoff' && this.#matches('failpoint', name)) {
      // Dies inside the commit that seals the handoff (whichever hook comes next).
      this.#handoffArmed = true;
      return;
    }
    this.#hit('failpoint', name);
  }

  /**
   * @param {'hook' | 'failpoint'} kind
   * @param {string} name
   */
  #hit(kind, name) {
    const id = `${kind}:${name}`;
    const count = (this.#counts.get(id) ?? 0) + 1;
    this.#counts.set(id, count);
    const point = this.#plan.point;
    if (point.kind === kind && point.name === name && point.count === count) die();
  }

  /**
   * @param {'hook' | 'failpoint'} kind
   * @param {string} name
   */
  #matches(kind, name) {
    const id = `${kind}:${name}`;
    const count = (this.#counts.get(id) ?? 0) + 1;
    this.#counts.set(id, count);
    const point = this.#plan.point;
    return point.kind === kind && point.name === name && point.count === count;
  }
}
