import { type EventLog, expireApprovals, type RecoveryReport, recoverExpired } from '@factum/event-log';

/**
 * One sweep: ends the runs of hosts whose lease expired, then denies as `expired` the
 * approvals whose deadline passed (by the database's clock).
 */
export async function sweepOnce(log: EventLog): Promise<RecoveryReport> {
  const report = await recoverExpired(log);
  await expireApprovals(log);
  return report;
}

/**
 * Recovers, every `everyMs`, the invocations whose owner's lease has expired: on a
 * fleet, a dead host's runs are ended by whichever survivor sweeps first, within its
 * time-to-live plus one sweep, with no person involved. A live owner's runs are never
 * touched (the log checks the lease by the database's clock in the takeover's own
 * transaction). It also expires approvals past their deadline. A failed sweep is tried
 * again at the next tick.
 */
export class RecoverySweeper {
  readonly #log: EventLog;
  readonly #timer: NodeJS.Timeout;
  #running: Promise<RecoveryReport | undefined> | undefined;
  #lastError: unknown;
  #stopped = false;

  constructor(log: EventLog, everyMs: number) {
    this.#log = log;
    this.#timer = setInterval(() => void this.sweep(), everyMs);
    // A sweeper never keeps a process alive on its own.
    this.#timer.unref();
  }

  /** Sweeps now (one sweep at a time); `undefined` when it failed or was stopped. */
  sweep(): Promise<RecoveryReport | undefined> {
    if (this.#stopped) return Promise.resolve(undefined);
    this.#running ??= sweepOnce(this.#log)
      .then(
        (report) => {
          this.#lastError = undefined;
          return report;
        },
        (error: unknown) => {
          this.#lastError = error;
          return undefined;
        },
      )
      .finally(() => {
        this.#running = undefined;
      });
    return this.#running;
  }

  /** Why the last sweep failed, if it did. */
  get lastError(): unknown {
    return this.#lastError;
  }

  /** Stops sweeping and waits for a sweep in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running;
  }
}
