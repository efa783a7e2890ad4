import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CommitReceipt,
  type EventSink,
  EventWrite,
  type Fact,
  type Invocation,
  type ModelToolCall,
  RuntimeEvent,
} from '@factum/agent-facts';
import type { CodeExecutor } from '@factum/code-runtime';
import type { EventLog } from '@factum/event-log';
import { RunTools, ToolCatalog } from '@factum/tools';
import type { McpToolSource } from '../../src/index.ts';

export const wide = { maxEvents: 100_000, maxBytes: 64 << 20 };

export const invocation: Invocation = {
  sessionId: 'session',
  turnId: 'turn',
  runId: 'run',
  invocationId: 'invocation',
};

export function temporaryDirectory(): { path: string; file: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), 'factum-mcp-'));
  return {
    path,
    file: join(path, 'events.sqlite'),
    [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** Appends what the engine would have written before the step's tools run. */
export async function seed(
  log: EventLog,
  at: Invocation,
  calls: ModelToolCall[],
  stepId = 'step',
): Promise<void> {
  const append = (fact: Fact) => log.append(EventWrite.plain(RuntimeEvent.create(at, fact)));
  await append({ kind: 'invocation_opened', input: { kind: 'message', content: 'mcp', sourceMessages: [] } });
  const prefix = await log.scopedPrefix({ session: at.sessionId }, wide);
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

/** A sink in front of a log that calls `after` once each write is durable. */
export class WatchingSink implements EventSink {
  readonly #log: EventLog;
  readonly #after: (fact: Fact) => void;
  constructor(log: EventLog, after: (fact: Fact) => void) {
    this.#log = log;
    this.#after = after;
  }
  async commit(write: EventWrite): Promise<CommitReceipt> {
    const receipt = await this.#log.commit(write);
    this.#after(write.event.fact);
    return receipt;
  }
}

/** The facts of one operation, in log order. */
export async function factsOf(log: EventLog, operationId: string): Promise<Fact[]> {
  return (await log.prefix(wide)).events
    .map(({ event }) => event.fact)
    .filter((fact) => 'operationId' in fact && fact.operationId === operationId);
}

/** A run of the fixture invocation over `sink` offering `source`'s tools, as the engine would make it. */
export function runOver(
  sink: EventSink,
  source: McpToolSource,
  code: CodeExecutor,
  mode: 'direct' | 'code_mode' = 'direct',
): RunTools {
  return new RunTools({ sink, invocation, catalog: new ToolCatalog(source.registrations()), mode, code });
}
