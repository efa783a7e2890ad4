import { FaultProxy } from '@factum/event-log/testing';
import type { Random } from './child/random.js';

/** Lease time-to-live of the hosts of a partition round. */
export const PARTITION_TTL_MS = 3_000;

/** What the network did to a host: `stall`, `hold_answers`, `cut`, each also `t1:`-prefixed. */
export type FaultTally = Record<string, number>;

type Fault = 'stall' | 'hold_answers' | 'cut';

/**
 * The network between one host process and PostgreSQL: a `FaultProxy` the host connects
 * through, and a controller that, at random times and at the commits of the host's T1s,
 * stalls it (bytes held both ways, sockets open), holds the database's answers only, or
 * cuts every connection, then heals it. Most faults are short (under the host's bound on
 * a transaction); one in three outlasts the lease's time-to-live.
 */
export class PartitionedHost {
  readonly #proxy: FaultProxy;
  readonly #random: Random;
  readonly #faults: FaultTally;
  #next: NodeJS.Timeout | undefined;
  #heal: NodeJS.Timeout | undefined;
  #stopped = false;

  private constructor(proxy: FaultProxy, random: Random, faults: FaultTally) {
    this.#proxy = proxy;
    this.#random = random;
    this.#faults = faults;
  }

  /** A proxy to the server of `url`; the host is given `url` pointed at it (`url()`). */
  static async start(url: string, random: Random, faults: FaultTally): Promise<PartitionedHost> {
    const server = new URL(url);
    const proxy = await FaultProxy.start({ host: server.hostname, port: Number(server.port || 5432) });
    return new PartitionedHost(proxy, random, faults);
  }

  /** `url` through this host's proxy. */
  url(url: string): string {
    return this.#proxy.rewrite(url);
  }

  /** Starts the random faults: one every 0.3–2.5 s while the network is whole. */
  run(): void {
    if (this.#stopped) return;
    this.#next = setTimeout(
      () => {
        if (this.#proxy.mode === 'pass' && this.#heal === undefined) this.#fault('');
        this.run();
      },
      this.#random.int(300, 2_500),
    );
  }

  /** The host is about to commit a T1: fault that commit, unless a fault is on already. */
  atT1(): void {
    if (this.#stopped || this.#proxy.mode !== 'pass' || this.#heal !== undefined) return;
    this.#fault('t1:');
  }

  /** No more faults; what is held is delivered, and bytes pass from now on. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#next);
    clearTimeout(this.#heal);
    this.#heal = undefined;
    this.#proxy.heal();
  }

  async close(): Promise<void> {
    this.stop();
    await this.#proxy.close();
  }

  #fault(prefix: string): void {
    const roll = this.#random.next();
    const fault: Fault = roll < 0.4 ? 'stall' : roll < 0.8 ? 'hold_answers' : 'cut';
    const name = `${prefix}${fault}`;
    this.#faults[name] = (this.#faults[name] ?? 0) + 1;
    if (fault === 'cut') {
      this.#proxy.cut();
      return;
    }
    if (fault === 'stall') this.#proxy.stall();
    else this.#proxy.holdAnswers();
    const ms = this.#random.next() < 2 / 3 ? this.#random.int(100, 1_500) : this.#random.int(3_000, 5_000);
    this.#heal = setTimeout(() => {
      this.#heal = undefined;
      if (!this.#stopped) this.#proxy.heal();
    }, ms);
  }
}
