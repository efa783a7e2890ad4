import { type EventOrigin, EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';

/** Commits one invocation's facts to the log, in the order they are written. */
export class InvocationWriter {
  readonly #log: EventLog;
  readonly #invocation: Invocation;
  readonly #origin: EventOrigin;

  constructor(log: EventLog, invocation: Invocation, origin: EventOrigin = {}) {
    this.#log = log;
    this.#invocation = invocation;
    this.#origin = origin;
  }

  /** Commits `fact` and resolves once it is durable. */
  async write(fact: Fact): Promise<number> {
    const stored = await this.#log.append(
      EventWrite.plain(RuntimeEvent.create(this.#invocation, fact, this.#origin)),
    );
    return stored.sequence;
  }
}
