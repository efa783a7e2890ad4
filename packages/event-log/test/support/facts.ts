import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventWrite, type Fact, type Invocation, RuntimeEvent, ToolResult } from '@factum/agent-facts';

export const bounds = { maxEvents: 10_000, maxBytes: 16 * 1024 * 1024 };

export function invocation(suffix = '', sessionId = 'session'): Invocation {
  return { sessionId, turnId: `turn${suffix}`, runId: `run${suffix}`, invocationId: `invocation${suffix}` };
}

export function write(at: Invocation, fact: Fact): EventWrite {
  return EventWrite.plain(RuntimeEvent.create(at, fact));
}

export const facts = {
  opened(content = 'hello'): Fact {
    return {
      kind: 'invocation_opened',
      configuration: { cwd: '/work', toolMode: 'direct' },
      input: { kind: 'message', content, sourceMessages: [] },
    };
  },
  completed(stepId: string, calls: { id: string; input?: unknown }[]): Fact {
    return {
      kind: 'model_completed',
      stepId,
      output: {
        parts: calls.map((call) => ({
          kind: 'tool_call' as const,
          call: { id: call.id, name: 'echo', input: (call.input ?? {}) as never },
        })),
        finishReason: 'tool_calls',
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      },
    };
  },
  dispatched(
    operationId: string,
    origin: Extract<Fact, { kind: 'tool_dispatched' }>['call']['origin'],
  ): Fact {
    return {
      kind: 'tool_dispatched',
      operationId,
      call: { id: operationId, name: 'echo', input: {}, origin },
    };
  },
  failed(operationId: string): Fact {
    return {
      kind: 'tool_settled',
      operationId,
      outcome: { kind: 'failed', error: { code: 'x', message: 'no' } },
    };
  },
  ended(): Fact {
    return { kind: 'invocation_ended', outcome: { kind: 'completed' } };
  },
};

/** A successful settlement with its result stored out of line. */
export function settled(at: Invocation, operationId: string, value: unknown): EventWrite {
  const result = ToolResult.of(value);
  const event = RuntimeEvent.create(at, {
    kind: 'tool_settled',
    operationId,
    outcome: { kind: 'succeeded', result: result.reference() },
  });
  return EventWrite.withResult(event, result);
}

/** A temporary directory removed after the test. */
export function temporaryDirectory(): { path: string; file: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), 'factum-log-'));
  return {
    path,
    file: join(path, 'events.sqlite'),
    [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }),
  };
}
