import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  type ConversationEvent,
  type ConversationTimeouts,
  OpenCodeBackend,
  openSqlitePromptStore,
  type PromptRequest,
  type PromptStream,
  promptKey,
} from '../../src/index.js';
import { FakeOpenCodeServer, type FakePromptMode } from '../../src/testing.js';
import { eventually } from './deferred.js';
import { PromptFaultStore, type Snapshot } from './prompt-fault-store.js';
import { TrackingClock } from './tracking-clock.js';

const watched = ['TCPSocketWrap', 'TCPServerWrap', 'Timeout'] as const;

function resourceCounts(): Record<(typeof watched)[number], number> {
  const info = process.getActiveResourcesInfo();
  return {
    TCPSocketWrap: info.filter((name) => name === 'TCPSocketWrap').length,
    TCPServerWrap: info.filter((name) => name === 'TCPServerWrap').length,
    Timeout: info.filter((name) => name === 'Timeout').length,
  };
}

/**
 * One conversation against a real loopback fake server, over a real SQLite file in a
 * temp directory wrapped by the fault store, with a clock that counts its timers.
 */
export class OpenCodeStreamCase {
  readonly server: FakeOpenCodeServer;
  readonly faults: PromptFaultStore;
  readonly conversation: OpenCodeBackend;
  readonly clock: TrackingClock;
  readonly #dir: string;
  readonly #baseline: ReturnType<typeof resourceCounts>;

  private constructor(parts: {
    server: FakeOpenCodeServer;
    faults: PromptFaultStore;
    conversation: OpenCodeBackend;
    clock: TrackingClock;
    dir: string;
    baseline: ReturnType<typeof resourceCounts>;
  }) {
    this.server = parts.server;
    this.faults = parts.faults;
    this.conversation = parts.conversation;
    this.clock = parts.clock;
    this.#dir = parts.dir;
    this.#baseline = parts.baseline;
  }

  static async start(
    options: { timeouts?: Partial<ConversationTimeouts>; promptMode?: FakePromptMode } = {},
  ): Promise<OpenCodeStreamCase> {
    const baseline = resourceCounts();
    const dir = mkdtempSync(join(tmpdir(), 'factum-conversation-'));
    const server = await FakeOpenCodeServer.start({ promptMode: options.promptMode ?? 'held' });
    const faults = new PromptFaultStore(await openSqlitePromptStore(join(dir, 'prompts.sqlite')));
    const clock = new TrackingClock();
    const conversation = await OpenCodeBackend.open({
      baseUrl: server.url,
      store: faults,
      clock,
      retryDelayMs: 5,
      timeouts: {
        promptMs: 5000,
        abortMs: 5000,
        requestMs: 3000,
        settleMs: 200,
        cleanupMs: 2000,
        ...options.timeouts,
      },
    });
    return new OpenCodeStreamCase({ server, faults, conversation, clock, dir, baseline });
  }

  static request(): PromptRequest {
    return { text: 'reply with one word' };
  }

  get key(): string {
    return promptKey(this.conversation.id());
  }

  /** Opens a prompt stream and waits until the server has its message. */
  async stream(): Promise<{ stream: PromptStream; events: AsyncIterator<ConversationEvent> }> {
    const stream = this.conversation.prompt(OpenCodeStreamCase.request());
    const events = stream[Symbol.asyncIterator]();
    await this.server.waitForMessages(this.server.stats.messages + 1);
    return { stream, events };
  }

  /** A stream whose admission transaction conflicts once before it lands; the answer stays held. */
  async streamWithAdmissionFault() {
    this.faults.setPersistenceFault('admission');
    const opened = await this.stream();
    this.server.beginText();
    return opened;
  }

  /** The next delta of `events`, skipping status and part events. */
  static async nextDelta(events: AsyncIterator<ConversationEvent>) {
    for (;;) {
      const next = await events.next();
      if (next.done) throw new Error('stream ended before a delta');
      if (next.value.kind === 'delta') return next.value;
    }
  }

  /** Drains `events` up to its terminal error and returns it. */
  static async terminalError(events: AsyncIterator<ConversationEvent>): Promise<unknown> {
    for (;;) {
      try {
        const next = await events.next();
        if (next.done) throw new Error('stream ended without a terminal');
        if (next.value.kind === 'terminal')
          throw new Error(`stream ended with ${JSON.stringify(next.value)}`);
      } catch (error) {
        return error;
      }
    }
  }

  snapshot(): Promise<Snapshot | undefined> {
    return this.faults.snapshot(this.key);
  }

  async waitForAdmission(): Promise<Snapshot> {
    return eventually('admission', () => this.snapshot());
  }

  /** Bookkeeping attempts do not go on in the background. */
  async assertPersistenceRetriesStopped(): Promise<void> {
    const attempts = this.faults.persistenceAttempts;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(this.faults.persistenceAttempts).toBe(attempts);
  }

  /** Waits until the original prompt holds nothing: no HTTP exchange, no timer. */
  async waitForQuiescence(): Promise<void> {
    await eventually('the prompt to release its requests and timers', async () =>
      this.server.stats.active === 0 && this.clock.pending === 0 ? true : undefined,
    );
  }

  /** Closes everything and proves that no socket, request or timer outlives the case. */
  async revoke(): Promise<void> {
    this.faults.disarm();
    this.faults.release();
    this.faults.releaseReconciliationObserver();
    await this.conversation.close();
    expect(this.clock.pending).toBe(0);
    await eventually('the server to see every exchange end', async () =>
      this.server.stats.active === 0 && this.server.stats.connections === 0 ? true : undefined,
    );
    await this.server.close();
    await this.faults.close();
    rmSync(this.#dir, { recursive: true, force: true });
    await eventually('process handles to return to their baseline', async () => {
      const now = resourceCounts();
      return watched.every((name) => now[name] <= this.#baseline[name]) ? true : undefined;
    });
  }
}
