import { ToolError } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { RunTools, ToolCatalog, ToolHandler } from '../src/index.ts';
import { invocation, seed, temporaryDirectory, wide } from './support/fixtures.ts';

/** A tool whose server went away mid-call: it cannot say whether the effect happened. */
const lost = new ToolCatalog([
  {
    definition: { name: 'lost', description: 'loses its server', inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate({
      names: () => ['lost'],
      invoke: async () => {
        throw new ToolError('outcome_unknown', 'the server closed the connection mid-call');
      },
    }),
    nesting: 'nestable',
    semantics: 'parallel',
  },
]);

const code = new CodeExecutor();

describe('an effect whose outcome is unknown', () => {
  it('is never settled: the operation stays uncertain and the caller is told outcome_unknown', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const call = { id: 'c1', name: 'lost', input: {} };
    await seed(log, invocation, [call]);
    const run = new RunTools({ sink: log, invocation, catalog: lost, mode: 'direct', code });
    const error = await (await run.capture('.'))
      .intoStep('step')
      .invoke(call)
      .catch((e: unknown) => e);
    expect(ToolError.isInstance(error) && error.code).toBe('outcome_unknown');
    await run.shutdown();
    const kinds = (await log.prefix(wide)).events.map(({ event }) => event.fact.kind);
    expect(kinds).not.toContain('tool_settled');
    expect((await log.invocationRecovery(invocation, wide)).uncertainOperations).toEqual(['step:c1']);
  });

  it('inside a cell it stops the cell before JS catch sees it, and nothing above it is settled', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const call = {
      id: 'p',
      name: 'exec',
      input: { code: "try { await tools.lost({}); } catch (_) { text('caught'); }" },
    };
    await seed(log, invocation, [call]);
    const run = new RunTools({ sink: log, invocation, catalog: lost, mode: 'code_mode', code });
    const error = await (await run.capture('.'))
      .intoStep('step')
      .invoke(call)
      .catch((e: unknown) => e);
    expect(ToolError.isInstance(error) && [error.code, error.message]).toEqual([
      'outcome_unknown',
      expect.any(String),
    ]);
    await run.shutdown();
    const recovery = await log.invocationRecovery(invocation, wide);
    expect(recovery.uncertainOperations.sort()).toEqual(['step:p', 'step:p#cell', 'step:p#cell/c0']);
  });
});
