import { EventWrite, RuntimeEvent } from '@factum/agent-facts';
import { EventLog, recoverInvocations } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import {
  RecoveryPolicy,
  reconcileUncertain,
  renderToolResult,
  ToolCatalog,
  ToolCatalogError,
  ToolHandler,
  type ToolRegistration,
} from '../src/index.ts';
import { invocation, temporaryDirectory, wide } from './support/fixtures.ts';

const executor = (runs: string[]) => ({
  names: () => ['a', 'b', 'c'],
  invoke: async (name: string, input: unknown) => {
    runs.push(name);
    return { reran: name, input };
  },
});

function tool(name: string, recovery?: RecoveryPolicy, runs: string[] = []): ToolRegistration {
  return {
    definition: { name, description: name, inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate(executor(runs)),
    nesting: 'nestable',
    semantics: 'parallel',
    ...(recovery ? { recovery } : {}),
  };
}

describe('ToolCatalog', () => {
  it('refuses duplicate names, the reserved exec name and invalid schemas with typed errors', () => {
    const codeOf = (build: () => unknown) => {
      try {
        build();
      } catch (error) {
        return ToolCatalogError.isInstance(error) ? error.code : 'other';
      }
      return 'none';
    };
    expect(codeOf(() => new ToolCatalog([tool('a'), tool('a')]))).toBe('duplicate_tool');
    expect(codeOf(() => new ToolCatalog([tool('exec')]))).toBe('reserved_tool_name');
    const broken = {
      ...tool('bad'),
      definition: { name: 'bad', description: '', inputSchema: { type: 'no-such-type' } },
    };
    expect(codeOf(() => new ToolCatalog([broken]))).toBe('invalid_schema');
    expect(codeOf(() => new ToolCatalog([tool('has space')]))).toBe('invalid_registration');
  });

  it('fingerprints what the model is told: a changed description changes it', () => {
    const first = new ToolCatalog([tool('a')]).fingerprint();
    expect(new ToolCatalog([tool('a')]).fingerprint()).toBe(first);
    const changed = { ...tool('a'), definition: { ...tool('a').definition, description: 'other' } };
    expect(new ToolCatalog([changed]).fingerprint()).not.toBe(first);
  });
});

describe('results for the model', () => {
  it('small results render as their exact JSON; large ones are cut with a marker', () => {
    expect(JSON.parse(renderToolResult({ value: 42 }))).toEqual({ value: 42 });
    const big = renderToolResult({ text: 'é'.repeat(10_000) }, 100);
    expect(Buffer.byteLength(big.split('\n')[0]!)).toBeLessThanOrEqual(100);
    expect(big).toMatch(/\[truncated: showing \d+ of 20011 bytes; the full result is in the log\]$/);
  });
});

describe('recovery policies', () => {
  it('never_auto_retry leaves, idempotent re-runs, reconcile decides — each decision recorded as a fact', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const append = (fact: Parameters<typeof RuntimeEvent.create>[1]) =>
      log.append(EventWrite.plain(RuntimeEvent.create(invocation, fact)));
    await append({ kind: 'invocation_opened', input: { kind: 'message', content: 'x', sourceMessages: [] } });
    for (const name of ['a', 'b', 'c', 'd']) {
      await append({
        kind: 'tool_dispatched',
        operationId: `s:${name}`,
        call: {
          id: name,
          name: name === 'd' ? 'c' : name,
          input: { name },
          origin: { kind: 'provider', stepId: 's' },
        },
      });
    }
    expect(await recoverInvocations(log)).toBe(1);
    const runs: string[] = [];
    const seen: string[] = [];
    const catalog = new ToolCatalog([
      tool('a'),
      tool('b', RecoveryPolicy.idempotent(), runs),
      tool(
        'c',
        RecoveryPolicy.reconcile(async (operation) => {
          seen.push(operation.operationId);
          return operation.operationId === 's:c'
            ? { kind: 'failed', error: { code: 'not_applied', message: 'the change is not in the world' } }
            : { kind: 'unknown', note: 'the service does not answer' };
        }),
      ),
    ]);
    const outcomes = await reconcileUncertain(log, invocation, { catalog });
    expect(outcomes.map((outcome) => [outcome.operationId, outcome.decision])).toEqual([
      ['s:a', 'left_uncertain'],
      ['s:b', 'succeeded'],
      ['s:c', 'failed'],
      ['s:d', 'unknown'],
    ]);
    expect(runs).toEqual(['b']);
    expect(seen).toEqual(['s:c', 's:d']);
    const recovery = await log.invocationRecovery(invocation, wide);
    expect(recovery.uncertainOperations.sort()).toEqual(['s:a', 's:d']);
    const reconciled = (await log.prefix(wide)).events.filter(
      (stored) => stored.event.fact.kind === 'tool_reconciled',
    );
    expect(reconciled).toHaveLength(3);
    expect((await log.resolveToolResult('session', reconciled[0]!.event.id)).json()).toEqual({
      reran: 'b',
      input: { name: 'b' },
    });
    // A second pass re-runs nothing already closed.
    await reconcileUncertain(log, invocation, { catalog });
    expect(runs).toEqual(['b']);
    await log.close();
  });
});
