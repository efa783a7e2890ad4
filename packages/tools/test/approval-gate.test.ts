import type { ModelToolCall } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import type { EventLog } from '@factum/event-log';
import { describe, expect, it, vi } from 'vitest';
import {
  ApprovalRequested,
  approvalInputDigest,
  approvalReason,
  RunTools,
  type ToolApproval,
  ToolCatalog,
  ToolHandler,
} from '../src/index.ts';
import { invocation, logPerTest, seed, wide } from './support/fixtures.ts';
import { RecordingTool } from './support/recording-tool.ts';

let log: EventLog;
logPerTest((opened) => {
  log = opened;
});

function catalogOf(tool: RecordingTool, approval?: ToolApproval, approvalTtlMs?: number) {
  return new ToolCatalog([
    {
      definition: { name: 'send', description: 'send', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate(tool),
      nesting: 'nestable',
      semantics: 'parallel',
      ...(approval === undefined ? {} : { approval }),
      ...(approvalTtlMs === undefined ? {} : { approvalTtlMs }),
    },
  ]);
}

/** A run over `send` (needing approval) with `calls` seeded as its model's step. */
async function stepOf(tool: RecordingTool, calls: ModelToolCall[], ttlMs?: number) {
  await seed(log, invocation, calls);
  const run = new RunTools({
    sink: log,
    invocation,
    catalog: catalogOf(tool, 'always', ttlMs),
    mode: 'direct',
    code: new CodeExecutor(),
  });
  return { run, step: (await run.capture('.')).intoStep('step') };
}

describe('approval rules', () => {
  it('always, a function of the input, a reason, a run-level demand; a throwing rule fails closed', () => {
    const tool = new RecordingTool(log, 'send');
    const entry = (approval?: ToolApproval) => catalogOf(tool, approval).get('send')!;
    expect(approvalReason(entry(), {}, {})).toBeUndefined();
    expect(approvalReason(entry('always'), {}, {})).toContain('always');
    const big = (input: unknown) => ((input as { n: number }).n > 10 ? 'more than ten' : false);
    expect(approvalReason(entry(big), { n: 3 }, {})).toBeUndefined();
    expect(approvalReason(entry(big), { n: 30 }, {})).toBe('more than ten');
    expect(
      approvalReason(
        entry(() => true),
        {},
        {},
      ),
    ).toContain('send');
    expect(approvalReason(entry(), {}, { requireApproval: ['send'] })).toContain('every call of send');
    const broken = () => {
      throw new Error('boom');
    };
    expect(approvalReason(entry(broken), {}, {})).toContain('failed');
    expect(
      approvalReason(
        entry(() => 'x'.repeat(5000)),
        {},
        {},
      ),
    ).toHaveLength(1024);
  });
});

describe('a call that needs approval', () => {
  it('records approval_requested with the exact input and digest, and never runs', async () => {
    const tool = new RecordingTool(log, 'send');
    const call = { id: 'call-1', name: 'send', input: { to: 'all' } };
    const { run, step } = await stepOf(tool, [call], 60_000);
    const error = await step.invoke(call).catch((caught: unknown) => caught);
    expect(ApprovalRequested.isInstance(error)).toBe(true);
    expect(step.awaitingApproval).toEqual(['step:call-1']);
    await run.shutdown();
    expect(tool.calls).toEqual([]);
    const facts = (await log.prefix(wide)).events.map(({ event }) => event.fact);
    const requested = facts.find((fact) => fact.kind === 'approval_requested');
    expect(requested).toMatchObject({
      operationId: 'step:call-1',
      call: {
        id: 'call-1',
        name: 'send',
        input: { to: 'all' },
        origin: { kind: 'provider', stepId: 'step' },
      },
      inputDigest: approvalInputDigest({ to: 'all' }),
    });
    expect(requested?.kind === 'approval_requested' && Date.parse(requested.expiresAt!)).toBeGreaterThan(
      Date.now(),
    );
    expect(facts.some((fact) => fact.kind === 'tool_dispatched')).toBe(false);
  });

  it('a host whose clock is an hour behind counts the deadline from the log’s clock, never writing one already past', async () => {
    const tool = new RecordingTool(log, 'send');
    const call = { id: 'call-1', name: 'send', input: { to: 'all' } };
    const { run, step } = await stepOf(tool, [call], 60_000);
    const truth = Date.now();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(truth - 3_600_000);
      await expect(step.invoke(call)).rejects.toSatisfy(ApprovalRequested.isInstance);
    } finally {
      vi.useRealTimers();
    }
    await run.shutdown();
    const facts = (await log.prefix(wide)).events.map(({ event }) => event.fact);
    const requested = facts.find((fact) => fact.kind === 'approval_requested');
    const deadline = requested?.kind === 'approval_requested' ? Date.parse(requested.expiresAt!) : 0;
    expect(deadline).toBeGreaterThan(truth);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it('an invalid input is rejected as such before any approval is asked for', async () => {
    const tool = new RecordingTool(log, 'send');
    const call = { id: 'call-1', name: 'send', input: 'not an object' };
    const { run, step } = await stepOf(tool, [call]);
    await expect(step.invoke(call)).rejects.toMatchObject({ code: 'invalid_input' });
    expect(step.awaitingApproval).toEqual([]);
    await run.shutdown();
  });

  it('withdrawn when its step fails: a tool_rejected closes the request, and it no longer awaits', async () => {
    const tool = new RecordingTool(log, 'send');
    const calls = [
      { id: 'call-1', name: 'send', input: { to: 'all' } },
      { id: 'call-2', name: 'send', input: { to: 'ops' } },
    ];
    const { run, step } = await stepOf(tool, calls);
    for (const call of calls) await step.invoke(call).catch(() => undefined);
    expect(step.awaitingApproval).toEqual(['step:call-1', 'step:call-2']);
    expect(await step.withdrawAwaiting({ kind: 'cancelled' })).toEqual(['step:call-1', 'step:call-2']);
    expect(step.awaitingApproval).toEqual([]);
    // Withdrawing again writes nothing more.
    expect(await step.withdrawAwaiting({ kind: 'cancelled' })).toEqual([]);
    await run.shutdown();
    expect(tool.calls).toEqual([]);
    const facts = (await log.prefix(wide)).events.map(({ event }) => event.fact);
    expect(facts.filter((fact) => fact.kind === 'tool_rejected')).toMatchObject([
      { operationId: 'step:call-1', reason: { kind: 'cancelled' } },
      { operationId: 'step:call-2', reason: { kind: 'cancelled' } },
    ]);
  });
});
