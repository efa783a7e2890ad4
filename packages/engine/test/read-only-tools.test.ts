import type { ToolExecutor } from '@factum/agent-facts';
import type { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { type ToolApproval, ToolCatalog, ToolHandler } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { done } from './support/agent-loop.ts';
import { approvalInput, calls, effectInto, effects } from './support/approvals.ts';
import { commitRecordingSetup } from './support/commit-log.ts';

const wide = { maxEvents: 10_000, maxBytes: 64 * 1024 * 1024 };
const step = ['model_requested', 'model_observed', 'model_completed'];

/** `read` declares itself read-only; `write` does not, and checks its own T1 is durable. */
function catalog(log: EventLog, ledger: string, readApproval?: ToolApproval): ToolCatalog {
  const recorded = effectInto(ledger);
  const write: ToolExecutor = {
    names: () => ['write'],
    async invoke(name, value, context) {
      const last = (await log.prefix(wide)).events.at(-1)!.event.fact;
      if (last.kind !== 'tool_dispatched' || last.operationId !== context.operationId) {
        throw new Error('a writing effect ran before its own T1 was durable');
      }
      return recorded.invoke(name, value, context);
    },
  };
  const tool = (name: string, executor: ToolExecutor, extra: object) => ({
    definition: { name, description: name, inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate(executor),
    nesting: 'nestable' as const,
    semantics: 'parallel' as const,
    ...extra,
  });
  return new ToolCatalog([
    tool('read', recorded, {
      readOnly: true,
      ...(readApproval === undefined ? {} : { approval: readApproval }),
    }),
    tool('write', write, {}),
  ]);
}

/**
 * A read-only tool has no effect for a T1 to guard: its `tool_dispatched` rides with its
 * `tool_settled`, so a sequential turn with one read waits for two commits, not three.
 * A writing tool beside it keeps its T1 before its effect, and a read a person approved
 * waits for its T1, in whose transaction the log checks the approval.
 */
describe.each(testStores())('read-only tools on $name', (stores) => {
  const setup = (readApproval?: ToolApproval) =>
    commitRecordingSetup(stores, (log, ledger) => catalog(log, ledger, readApproval));

  it('a turn with one read waits for two commits: [opening, step, T1, T2], [step, end]', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    s.provider.script(calls(['read', { path: 'a' }]), done);
    const before = s.log.stats().commits;
    const result = await engine.run(approvalInput(s.config, 'one', s.tools));
    expect(result.outcome).toEqual({ kind: 'completed' });
    expect(s.log.stats().commits - before).toBe(2);
    expect(await s.commits()).toEqual([
      ['invocation_opened', ...step, 'tool_dispatched', 'tool_settled'],
      [...step, 'invocation_ended'],
    ]);
    expect(effects(s.ledger).map((effect) => effect.input)).toEqual([{ path: 'a' }]);
    expect(await s.log.verifyChain()).toMatchObject({ ok: true });
  }, 60_000);

  it('a step that reads, writes and reads: only the write waits for its T1 before it runs', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    s.provider.script(calls(['read', { n: 1 }], ['write', { n: 2 }], ['read', { n: 3 }]), done);
    const result = await engine.run(approvalInput(s.config, 'mixed', s.tools));
    expect(result.outcome).toEqual({ kind: 'completed' });
    // A step of three calls streams three observations, one per call.
    const threeCalls = ['model_requested', ...Array(3).fill('model_observed'), 'model_completed'];
    expect(await s.commits()).toEqual([
      ['invocation_opened', ...threeCalls, 'tool_dispatched', 'tool_settled'],
      ['tool_dispatched'],
      ['tool_settled'],
      ['tool_dispatched', 'tool_settled'],
      [...step, 'invocation_ended'],
    ]);
    expect(effects(s.ledger).map((effect) => effect.input)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  }, 60_000);

  it('a read a person approved waits for its T1, which carries the continuation’s opening', async () => {
    await using s = await setup('always');
    await using engine = s.engine('host-a');
    s.provider.script(calls(['read', { path: 'secret' }]), done);
    const parked = await engine.run(approvalInput(s.config, 'first', s.tools));
    const operation = 'invocation-first/1:call-1';
    expect(parked.outcome).toEqual({ kind: 'approval_pending', operations: [operation] });
    await engine.decide(operation, { decision: 'approve', by: 'ops' });
    const source = (await engine.parkedRun('session'))!.source;
    const continued = await engine.run(
      approvalInput(s.config, 'second', s.tools, { kind: 'continuation', source, tools: s.tools }),
    );
    expect(continued.outcome).toEqual({ kind: 'completed' });
    expect((await s.commits()).slice(2, 4)).toEqual([
      ['invocation_opened', 'tool_dispatched'],
      ['tool_settled'],
    ]);
    expect(effects(s.ledger)).toHaveLength(1);
  }, 60_000);
});
