import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InvocationConfiguration, ToolExecutor, ToolMode } from '@factum/agent-facts';
import type { ScriptedProvider, ScriptedReply } from '@factum/model/testing';
import { ToolCatalog, ToolHandler } from '@factum/tools';
import type { RunInput } from '../../src/index.ts';

export const SECRET = 'do-not-persist-this-secret';
export const bounds = { maxEvents: 100, maxBytes: 128 * 1024 };

export function temporaryDirectory(): { path: string; file: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), 'factum-engine-'));
  return {
    path,
    file: join(path, 'events.sqlite'),
    [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }),
  };
}

export function configuration(toolMode: ToolMode = 'direct'): InvocationConfiguration {
  return { cwd: '/workspace', toolMode };
}

/** Two parallel echo calls, as the seeds' `respond(socket, true)`. */
export const twoEchoCalls: ScriptedReply = {
  toolCalls: [
    { id: 'call-1', name: 'echo', arguments: '{"value":42}' },
    { id: 'call-2', name: 'echo', arguments: '{"value":43}' },
  ],
  finishReason: 'tool_calls',
  usage: { inputTokens: 4, outputTokens: 3 },
};

/** A step whose two calls share one call id: the second must be rejected, never run. */
export const repeatedCallId: ScriptedReply = {
  toolCalls: [
    { id: 'call-1', name: 'echo', arguments: '{"value":1}' },
    { id: 'call-1', name: 'echo', arguments: '{"value":2}' },
  ],
  finishReason: 'tool_calls',
  usage: { inputTokens: 4, outputTokens: 3 },
};

/** A final text answer, as the seeds' `respond(socket, false)`. */
export const done: ScriptedReply = {
  text: 'done',
  finishReason: 'stop',
  usage: { inputTokens: 4, outputTokens: 3 },
};

/** One tool call by name, as the seeds' `respond_tool`. */
export function oneCall(name: string, hold = false): ScriptedReply {
  return {
    toolCalls: [{ id: 'call-1', name, arguments: '{"value":42}' }],
    finishReason: 'tool_calls',
    usage: { inputTokens: 4, outputTokens: 3 },
    hold,
  };
}

/** One `echo` tool over `effect`; `readOnly` declares it read-only (its T1 rides with its T2). */
export function echoCatalog(effect: ToolExecutor, { readOnly = false } = {}): ToolCatalog {
  return new ToolCatalog([
    {
      definition: { name: 'echo', description: 'echo', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate(effect),
      nesting: 'nestable',
      semantics: 'parallel',
      readOnly,
    },
  ]);
}

/** The seeds' `input(base, suffix, effect)`: a message run in session `session`. */
export function input(provider: ScriptedProvider, suffix: string, effect: ToolExecutor): RunInput {
  return {
    invocation: {
      sessionId: 'session',
      turnId: `turn-${suffix}`,
      runId: `run-${suffix}`,
      invocationId: `invocation-${suffix}`,
    },
    provider: provider.config({ model: 'test', auth: { apiKey: SECRET } }),
    providerOptions: {},
    configuration: configuration(),
    work: { kind: 'message', message: `question ${suffix}`, tools: echoCatalog(effect) },
  };
}

/** Resolves the next time `notify` is called. */
export class Signal {
  #waiters: (() => void)[] = [];
  #pending = 0;

  notify(): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter();
    else this.#pending += 1;
  }

  notified(): Promise<void> {
    if (this.#pending > 0) {
      this.#pending -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
