import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { EventLogError } from './event-log-error.js';
import { checkHostId, type WriterStamp } from './invocation-owner.js';
import { registerHost, releaseLease, renewLease } from './lease-queries.js';
import { sqliteBusy } from './log-dialect.js';
import type { LogDatabase } from './log-schema.js';

/** A monotonic clock in milliseconds: when this host last knew its lease was live. */
export type LeaseClock = { now(): number };

/** Options of a host's lease. */
export type LeaseOptions = {
  /** The host's id (default: a new random one per process). Unique among live processes. */
  readonly hostId?: string;
  /** How long a lease lasts past its last renewal, by the database's clock (default 10 s). */
  readonly ttlMs?: number;
  /** How often it is renewed in the background (default ttlMs / 3). */
  readonly renewEveryMs?: number;
  /** The host's own clock, for deciding when to stop starting effects (tests pass theirs). */
  readonly clock?: LeaseClock;
};

/** Where a host's lease stands, as this process knows it. */
export type LeaseStatus = {
  readonly hostId: string;
  readonly epoch: number;
  /** False once the lease could not be renewed in time: no new effect starts. */
  readonly canDispatch: boolean;
  /** How many times the lease was lost and registered again under a new epoch. */
  readonly lost: number;
};

type Store = {
  readonly db: Kysely<LogDatabase>;
  readonly dialect: 'sqlite' | 'postgres';
  /** `db` is the lease's own connection: destroyed once the lease is released. */
  readonly closesWithLease?: boolean;
};

/** How long a registration or a release tries while another connection holds the lock. */
const BUSY_BUDGET_MS = 10_000;

const monotonic: LeaseClock = { now: () => performance.now() };

/**
 * A host's lease on a log: registered with a new epoch, renewed in the background, and
 * released on close. Expiry is the database's: this host keeps only a conservative
 * local deadline (the time it sent its last successful renewal, plus four fifths of the
 * time-to-live) past which it starts no new effect, so it never dispatches under a
 * lease that may already be gone. A lease found lost is registered again under a new
 * epoch: the invocations of the old epoch are then fenced, and recovered by whoever
 * sweeps first.
 *
 * On a SQLite file the lease has a connection of its own that never waits for the write
 * lock blocking the event loop: a statement that finds the lock held is tried again on
 * a timer (`untilFree`). The lock may be this process's own writer thread's, waiting on
 * the event loop for a `beforeCommit` hook; a wait that blocked the loop would hold both
 * for SQLite's busy timeout (10 s), and every host's writes with them.
 */
export class HostLease {
  readonly #store: Store;
  readonly #ttlMs: number;
  readonly #renewEveryMs: number;
  readonly #clock: LeaseClock;
  readonly #hostId: string;
  #epoch = 0;
  #deadline = Number.NEGATIVE_INFINITY;
  #lost = 0;
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #closed = false;

  private constructor(store: Store, options: LeaseOptions) {
    this.#store = store;
    this.#hostId = options.hostId ?? `${hostname().replace(/[^A-Za-z0-9._:@-]/g, '-')}-${randomUUID()}`;
    checkHostId(this.#hostId);
    this.#ttlMs = options.ttlMs ?? 10_000;
    this.#renewEveryMs = options.renewEveryMs ?? Math.max(1, Math.floor(this.#ttlMs / 3));
    if (!(this.#ttlMs >= 1 && Number.isSafeInteger(this.#ttlMs))) {
      throw new TypeError(`lease ttlMs must be a whole number of milliseconds ≥ 1, not ${this.#ttlMs}`);
    }
    if (!(this.#renewEveryMs > 0 && this.#renewEveryMs < this.#ttlMs)) {
      throw new TypeError(`lease renewEveryMs must be above 0 and under ttlMs (${this.#ttlMs})`);
    }
    this.#clock = options.clock ?? monotonic;
  }

  /** Registers a host on `store` and starts renewing its lease. */
  static async hold(store: Store, options: LeaseOptions = {}): Promise<HostLease> {
    try {
      const lease = new HostLease(store, options);
      await lease.#register();
      lease.#schedule();
      return lease;
    } catch (error) {
      // Bad options, a host row not to be trusted, a store out of reach: no lease is held.
      if (store.closesWithLease) await store.db.destroy();
      throw error;
    }
  }

  /** The host id and epoch this process writes under now. */
  get stamp(): WriterStamp {
    return { hostId: this.#hostId, epoch: this.#epoch };
  }

  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** Where the lease stands. */
  status(): LeaseStatus {
    return { ...this.stamp, canDispatch: this.canDispatch(), lost: this.#lost };
  }

  /**
   * True while the lease is surely live — for `marginMs` more at least: only then may a
   * new effect or run start.
   */
  canDispatch(marginMs = 0): boolean {
    return !this.#closed && this.#clock.now() + marginMs < this.#deadline;
  }

  /**
   * Whether an effect whose T1 has just committed may start: the lease must stay surely
   * live for a tenth of its time-to-live more. A T1 whose answer the network held past
   * the lease finds it lapsed here, and the effect does not start.
   */
  mayStartEffect(): boolean {
    return this.canDispatch(this.#ttlMs / 10);
  }

  /** Renews now (the background timer does it on its own); re-registers a lost lease. */
  renew(): Promise<void> {
    this.#renewing ??= this.#renewOnce().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  /** Stops renewing and ends the lease now: what it still owns may be recovered at once. */
  async release(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#renewing?.catch(() => undefined);
    const { db, closesWithLease } = this.#store;
    const stamp = this.stamp;
    await untilFree(() => releaseLease(db, stamp), BUSY_BUDGET_MS).catch(() => undefined);
    if (closesWithLease) await db.destroy();
  }

  async #register(): Promise<void> {
    const sent = this.#clock.now();
    const info = {
      hostId: this.#hostId,
      pid: process.pid,
      hostname: hostname(),
      startedAt: new Date().toISOString(),
      ttlMs: this.#ttlMs,
    };
    const { db, dialect } = this.#store;
    const { epoch } = await untilFree(() => registerHost(db, dialect, info), BUSY_BUDGET_MS);
    this.#epoch = epoch;
    this.#deadline = sent + (this.#ttlMs * 4) / 5;
  }

  async #renewOnce(): Promise<void> {
    if (this.#closed) return;
    const sent = this.#clock.now();
    const { db, dialect } = this.#store;
    const stamp = this.stamp;
    const renewed = await withinTtl(
      untilFree(() => renewLease(db, dialect, stamp, this.#ttlMs), this.#ttlMs),
      this.#ttlMs,
    );
    if (this.#closed) return;
    if (renewed !== undefined) {
      this.#deadline = sent + (this.#ttlMs * 4) / 5;
      return;
    }
    // Lost: it expired (this process stalled past the time-to-live) or the id registered
    // again elsewhere. The old epoch's invocations are no longer this process's to write.
    this.#lost += 1;
    this.#deadline = Number.NEGATIVE_INFINITY;
    await this.#register();
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      // A failed renewal (the store unreachable) is tried again at the next tick; the
      // local deadline lapses meanwhile and stops new effects.
      this.renew()
        .catch(() => undefined)
        .finally(() => this.#schedule());
    }, this.#renewEveryMs);
    this.#timer.unref();
  }
}

/**
 * `work`, or a rejection once `ms` have passed: a store that answers slowly forever
 * must not hold the renewal, and with it every later one, after the connection heals.
 */
function withinTtl<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new EventLogError('store_unreachable', `the lease renewal had no answer within ${ms} ms`)),
      ms,
    );
  });
  work.catch(() => undefined);
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * `work`, tried again while SQLite answers `SQLITE_BUSY` (another connection holds the
 * write lock), for up to `budgetMs`: between tries this thread waits on a timer, free to
 * run whatever the lock's holder waits for.
 */
async function untilFree<T>(work: () => Promise<T>, budgetMs: number): Promise<T> {
  const until = performance.now() + budgetMs;
  for (let wait = 1; ; wait = Math.min(wait * 2, 16)) {
    try {
      return await work();
    } catch (error) {
      if (!sqliteBusy(error) || performance.now() + wait >= until) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, wait * (1 + Math.random())));
  }
}
