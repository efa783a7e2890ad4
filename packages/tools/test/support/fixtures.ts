import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CommitError,
  type CommitReceipt,
  type EventSink,
  EventWrite,
  type Fact,
  type Invocation,
  type ModelToolCall,
  RuntimeEvent,
} from '@factum/agent-facts';
import { EventLog } from '@factum/event-log';
import { afterEach, beforeEach } from 'vitest';

export const bounds = { maxEvents: 32, maxBytes: 64 * 1024 };
export const wide = { maxEvents: 10_000, maxBytes: 16 << 20 };

export const invocation: Invocation = {
  sessionId: 'session',
  turnId: 'turn',
  runId: 'run',
  invocationId: 'invocation',
};

export function temporaryDirectory(): { path: string; file: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), 'factum-tools-'));
  return {
    path,
    file: join(path, 'events.sqlite'),
    [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }),
  };
}

/**
 * Gives every test of the calling file a log in a new directory, through `use` before
 * the test; the log is closed and its directory removed after it.
 */
export function logPerTest(use: (log: EventLog) => void): void {
  let opened: { dir: ReturnType<typeof temporaryDirectory>; log: EventLog } | undefined;
  beforeEach(async () => {
    const dir = temporaryDirectory();
    opened = { dir, log: await EventLog.open(dir.file) };
    use(opened.log);
  });
  afterEach(async () => {
    await opened?.log.close();
    opened?.dir[Symbol.dispose]();
  });
}

/** Appends what the engine would have written before the step's tools run. */
export async function seed(
  log: EventLog,
  at: Invocation,
  calls: ModelToolCall[],
  stepId = 'step',
): Promise<void> {
  const append = (fact: Fact) => log.append(EventWrite.plain(RuntimeEvent.create(at, fact)));
  await append({
    kind: 'invocation_opened',
    input: { kind: 'message', content: 'execute the fixture', sourceMessages: [] },
  });
  const prefix = await log.scopedPrefix({ session: at.sessionId }, bounds);
  await append({
    kind: 'model_requested',
    stepId,
    modelId: 'fixture',
    purpose: 'main',
    source: { scope: prefix.scope, highWater: prefix.highWater, digest: prefix.digest },
    inputDigest: 'fixture',
    routeIdentity: 'fixture',
  });
  await append({
    kind: 'model_completed',
    stepId,
    output: {
      parts: calls.map((call) => ({ kind: 'tool_call' as const, call })),
      finishReason: 'tool_calls',
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    },
  });
}

export type Boundary = 'child_dispatch' | 'child_settlement' | 'notification';

/** An EventSink in front of a real log that fails one chosen boundary, and records every attempt. */
export class FaultSink implements EventSink {
  readonly attempts: RuntimeEvent[] = [];
  faults = 0;
  readonly #log: EventLog;
  readonly #boundary: Boundary;
  readonly #parent: string;

  constructor(log: EventLog, boundary: Boundary, parent: string) {
    this.#log = log;
    this.#boundary = boundary;
    this.#parent = parent;
  }

  async commit(write: EventWrite): Promise<CommitReceipt> {
    const { fact } = write.event;
    this.attempts.push(write.event);
    const fail =
      (this.#boundary === 'notification' && fact.kind === 'tool_notified') ||
      (this.#boundary === 'child_dispatch' &&
        fact.kind === 'tool_dispatched' &&
        fact.call.origin.kind === 'code_mode') ||
      (this.#boundary === 'child_settlement' &&
        fact.kind === 'tool_settled' &&
        fact.operationId !== this.#parent);
    if (fail) {
      this.faults += 1;
      if (this.#boundary === 'child_dispatch') throw CommitError.rejected('injected child T1');
      throw CommitError.outcomeUnknown(
        this.#boundary === 'child_settlement' ? 'injected child T2' : 'injected notification commit',
      );
    }
    return this.#log.commit(write);
  }
}
