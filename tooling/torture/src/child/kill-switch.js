import { writeSync } from 'node:fs';

// Where a child dies. The driver picks one point per child: the n-th time a commit hook
// or a failpoint is reached, or a moment in time; a backstop timer makes sure every
// child dies by SIGKILL even when its chosen point is never reached.

/** @typedef {'batchStarted' | 'beforeCommit' | 'afterCommit'} HookName */
/**
 * effect_start: T1 is durable, the effect has not happened. effect_done: the effect is
 * in the ledger, T2 not written. stream: a model observation arrived. cell: a tool call
 * from inside a Code mode cell. handoff: the n-th commit hook (n = 1..3) after the first
 * handoff commit was asked for — inside the commit that seals it. Between a person's
 * decision and T2 of the approved call: approval_decided (the decision is durable, the
 * continuation not started), approval_t1 (T1 of the approved call is durable, no effect),
 * approval_mid (the effect is in the ledger, the call has not returned), approval_t2
 * (inside the next commit after the effect returned: usually its T2).
 * @typedef {'effect_start' | 'effect_done' | 'stream' | 'cell' | 'handoff' | 'approval_decided' | 'approval_t1' | 'approval_mid' | 'approval_t2'} FailpointName
 */
/**
 * Lease points, for hosts sharing one log: `takeover` dies inside a commit while one of
 * this host's recovering sweep's takeover writes is queued; `renewed` dies at the first
 * commit after the n-th renewal of its lease (between a renewal and the next write,
 * usually a T1); `sweep` dies inside the commit of a T1 while another host's
 * invocations wait, expired, for a survivor's sweep.
 * @typedef {'takeover' | 'renewed' | 'sweep'} LeasePointName
 */
/**
 * `open`: the driver kills the child `delayMs` after it says it is opening a new log
 * (a kill the child cannot time itself: a SQLite open runs no timer until it is done).
 * @typedef {{ readonly kind: 'hook', readonly name: HookName, readonly count: number }
 *   | { readonly kind: 'failpoint', readonly name: FailpointName, readonly count: number }
 *   | { readonly kind: 'open', readonly delayMs: number }
 *   | { readonly kind: 'lease', readonly name: LeasePointName, readonly count: number }
 *   | { readonly kind: 'pause', readonly count: number }
 *   | { readonly kind: 'none' }
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
  /** Takeover writes and T1 writes queued now (lease points die in their commits). */
  takeovers = 0;
  dispatches = 0;
  /** Whether another host's expired invocations await a sweep (the `sweep` point). */
  expiredSeen = false;
  #renewed = false;
  /** Batches between `batchStarted` and `afterCommit`, and a pause waiting for none. */
  #committing = 0;
  #pausePending = false;
  /** An approved effect returned: an `approval_t2` plan dies inside the next commit. */
  #t2Pending = false;

  /** @param {KillPlan} plan */
  constructor(plan) {
    this.#plan = plan;
  }

  /**
   * Whether a plan needs the `beforeCommit` hook: one that dies inside a commit. Without
   * it the writer thread never waits on the event loop holding the write lock, as in
   * production, where no hook is set.
   */
  get diesBeforeCommit() {
    const kind = this.#plan.point.kind;
    return kind === 'hook' || kind === 'lease' || kind === 'failpoint';
  }

  /** Whether the driver kills this child while it opens its log (an `open` plan). */
  get killedOpening() {
    return this.#plan.point.kind === 'open';
  }

  /** Starts the backstop timer (the only kill of a `time` plan). */
  arm() {
    // A host that must survive has a long backstop: reaching it is itself a violation.
    const where = this.#plan.point.kind === 'time' ? 'time' : 'backstop';
    setTimeout(() => die(where), this.#plan.backstopMs);
  }

  /** Whether this plan needs to know when another host's invocations expired. */
  get watchesExpiry() {
    const point = this.#plan.point;
    return point.kind === 'lease' && point.name === 'sweep';
  }

  /** The lease was renewed: a `renewed` plan dies at the next commit after its n-th. */
  renewed() {
    if (this.#reached('lease', 'renewed')) this.#renewed = true;
  }

  /** @param {HookName} name */
  hook(name) {
    const point = this.#plan.point;
    if (name === 'batchStarted') this.#committing += 1;
    if (name === 'afterCommit') {
      this.#committing = Math.max(0, this.#committing - 1);
      if (this.#pausePending && this.#committing === 0) this.#pause(true);
    }
    if (point.kind === 'lease') {
      if (point.name === 'renewed' && this.#renewed && name === 'batchStarted') die('lease:renewed');
      if (name !== 'beforeCommit') return;
      if (point.name === 'takeover' && this.takeovers > 0 && this.#reached('lease', 'takeover'))
        die('lease:takeover');
      if (
        point.name === 'sweep' &&
        this.expiredSeen &&
        this.dispatches > 0 &&
        this.#reached('lease', 'sweep')
      )
        die('lease:sweep');
      return;
    }
    if (this.#t2Pending && name === 'beforeCommit') die('failpoint:approval_t2');
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
    if (name === 'approval_t2') {
      if (this.#reached('failpoint', name)) this.#t2Pending = true;
      return;
    }
    if (point.kind === 'pause' && name === 'effect_done' && this.#reached('pause', name)) {
      // Mid-effect: the effect is in the ledger, T2 is not written. A commit of another
      // session in flight may hold SQLite's write lock: stopped, it would stall every
      // host; the pause then waits for that commit's end.
      if (this.#committing === 0) this.#pause(false);
      else this.#pausePending = true;
      return;
    }
    if (this.#reached('failpoint', name)) die(`failpoint:${name}`);
  }

  /**
   * Stops this process; the driver sends SIGCONT once a survivor took its runs over.
   * `deferred`: it waited for a commit, so the effect's T2 may be written already.
   * @param {boolean} deferred
   */
  #pause(deferred) {
    this.#pausePending = false;
    writeSync(2, `${JSON.stringify({ paused: true, deferred })}\n`);
    process.kill(process.pid, 'SIGSTOP');
  }

  /**
   * Counts one more arrival at a point; true when it is the plan's.
   * @param {'hook' | 'failpoint' | 'lease' | 'pause'} kind
   * @param {string} name
   */
  #reached(kind, name) {
    const id = `${kind}:${name}`;
    const count = (this.#counts.get(id) ?? 0) + 1;
    this.#counts.set(id, count);
    const point = this.#plan.point;
    if (point.kind === 'pause') return kind === 'pause' && point.count === count;
    return point.kind === kind && 'name' in point && point.name === name && point.count === count;
  }
}
