import {
  CommitError,
  type CommitReceipt,
  type EventSink,
  EventWrite,
  type Fact,
  type Invocation,
  idempotencyKeyOf,
  RuntimeEvent,
  type ToolCallContext,
} from '@factum/agent-facts';
import { EventLog, recoverInvocations } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { describe, expect, it } from 'vitest';
import {
  type ReconcileOutcome,
  RecoveryPolicy,
  reconcileUncertain,
  ToolCatalog,
  ToolHandler,
} from '../src/index.ts';
import { invocation, wide } from './support/fixtures.ts';

/** A crashed invocation: the given operations dispatched and never settled, then ended by recovery. */
async function crashed(log: EventLog, at: Invocation, names: string[]): Promise<void> {
  const append = (fact: Fact) => log.append(EventWrite.plain(RuntimeEvent.create(at, fact)));
  await append({ kind: 'invocation_opened', input: { kind: 'message', content: 'x', sourceMessages: [] } });
  for (const name of names) {
    await append({
      kind: 'tool_dispatched',
      operationId: `s:${name}`,
      call: { id: name, name, input: { name }, origin: { kind: 'provider', stepId: 's' } },
    });
  }
  await recoverInvocations(log);
}

/** An idempotent tool that keeps each context it ran with and what the log held then. */
function idempotentTool(log: EventLog, seen: { context: ToolCallContext; last: Fact | undefined }[]) {
  return {
    definition: { name: 'put', description: 'put', inputSchema: { type: 'object' } },
    handler: ToolHandler.immediate({
      names: () => ['put'],
      async invoke(_name, input, context) {
        const last = (await log.prefix(wide)).events.at(-1)?.event.fact;
        seen.push({ context, last });
        await context.notify(`attempt ${context.attempt}`);
        return { put: input };
      },
    }),
    nesting: 'nestable' as const,
    semantics: 'parallel' as const,
    recovery: RecoveryPolicy.idempotent(),
  };
}

/** Passes writes to a log, but loses the outcome of every `tool_reconciled` (as a crash would). */
class LosesDecisions implements EventSink {
  readonly #log: EventLog;
  constructor(log: EventLog) {
    this.#log = log;
  }
  commit(write: EventWrite): Promise<CommitReceipt> {
    if (write.event.fact.kind === 'tool_reconciled') {
      return Promise.reject(
        CommitError.outcomeUnknown('the process stopped before the decision was durable'),
      );
    }
    return this.#log.commit(write);
  }
  invocationEvents(at: Invocation, bounds: { maxEvents: number; maxBytes: number }) {
    return this.#log.invocationEvents(at, bounds);
  }
}

describe.each(testStores())('recorded re-dispatch on $name', (stores) => {
  it('an idempotent re-run is recorded as its attempt before the effect, and settled like a dispatch', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    await crashed(log, invocation, ['put']);
    const seen: { context: ToolCallContext; last: Fact | undefined }[] = [];
    const catalog = new ToolCatalog([idempotentTool(log, seen)]);
    const [outcome] = await reconcileUncertain(log, invocation, { catalog });
    expect(outcome).toMatchObject({ operationId: 's:put', decision: 'succeeded', attempt: 2 });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.last).toMatchObject({ kind: 'tool_redispatched', operationId: 's:put', attempt: 2 });
    expect(seen[0]!.context).toMatchObject({ operationId: 's:put', attempt: 2 });
    const facts = (await log.invocationEvents(invocation, wide)).map(({ event }) => event.fact);
    expect(facts.slice(-3).map((fact) => fact.kind)).toEqual([
      'tool_redispatched',
      'tool_notified',
      'tool_reconciled',
    ]);
    expect(facts.at(-1)).toMatchObject({ policy: 'idempotent', attempt: 2, decision: { kind: 'succeeded' } });
  });

  it('a re-run whose outcome is lost stays uncertain at its attempt, and attempts are bounded', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    await crashed(log, invocation, ['put']);
    const seen: { context: ToolCallContext; last: Fact | undefined }[] = [];
    const catalog = new ToolCatalog([idempotentTool(log, seen)]);
    const lost = await reconcileUncertain(new LosesDecisions(log), invocation, { catalog }).catch((e) => e);
    expect(lost).toMatchObject({ code: 'persistence' });
    const recovery = await log.invocationRecovery(invocation, wide);
    expect(recovery.uncertainOperations).toEqual(['s:put']);
    expect(recovery.attempts).toEqual({ 's:put': 2 });

    const bounded = await reconcileUncertain(log, invocation, { catalog, maxAttempts: 2 });
    expect(bounded).toEqual([
      expect.objectContaining({
        decision: 'left_uncertain',
        attempt: 2,
        reason: expect.stringMatching(/exhausted/),
      }),
    ]);
    expect(seen.map(({ context }) => context.attempt)).toEqual([2]);

    const third = await reconcileUncertain(log, invocation, { catalog, maxAttempts: 3 });
    expect(third).toEqual([expect.objectContaining({ decision: 'succeeded', attempt: 3 })]);
    expect(seen.map(({ context }) => context.attempt)).toEqual([2, 3]);
    expect(new Set(seen.map(({ context }) => context.idempotencyKey)).size).toBe(1);
  });

  it('a reconciler that inspects the world gets the context the effect had, and its progress is recorded', async () => {
    await using store = await stores.create();
    await using log = await EventLog.open(store.target);
    await crashed(log, invocation, ['look']);
    const keys: string[] = [];
    const catalog = new ToolCatalog([
      {
        definition: { name: 'look', description: 'look', inputSchema: { type: 'object' } },
        handler: ToolHandler.immediate({ names: () => ['look'], invoke: async () => ({}) }),
        nesting: 'nestable',
        semantics: 'parallel',
        recovery: RecoveryPolicy.reconcile(async (operation, context) => {
          keys.push(context.idempotencyKey);
          await context.notify(`looking up ${operation.operationId}`);
          return { kind: 'succeeded', value: { found: context.operationId } };
        }),
      },
    ]);
    const outcomes = await reconcileUncertain(log, invocation, { catalog });
    expect(outcomes).toEqual([expect.objectContaining({ decision: 'succeeded', attempt: 1 })]);
    expect(keys).toEqual([idempotencyKeyOf(invocation.sessionId, 's:look')]);
    const kinds = (await log.invocationEvents(invocation, wide)).map(({ event }) => event.fact.kind);
    expect(kinds.slice(-2)).toEqual(['tool_notified', 'tool_reconciled']);
  });

  it('two reconcilers of one invocation: the loser reports who closed each operation and goes on', async () => {
    await using store = await stores.create();
    await using first = await EventLog.open(store.target);
    await using second = await EventLog.open(store.target);
    await crashed(first, invocation, ['check', 'put']);
    // Both reconcilers read the history before either writes: each reconcile call waits
    // until both have reached it.
    let arrived = 0;
    let bothIn: () => void = () => {};
    const barrier = new Promise<void>((resolve) => {
      bothIn = resolve;
    });
    const effects: number[] = [];
    const catalogFor = (log: EventLog) =>
      new ToolCatalog([
        {
          definition: { name: 'check', description: 'check', inputSchema: { type: 'object' } },
          handler: ToolHandler.immediate({ names: () => ['check'], invoke: async () => ({}) }),
          nesting: 'nestable',
          semantics: 'parallel',
          recovery: RecoveryPolicy.reconcile(async () => {
            arrived += 1;
            if (arrived === 2) bothIn();
            await barrier;
            return { kind: 'failed', error: { code: 'not_applied', message: 'not in the world' } };
          }),
        },
        {
          ...idempotentTool(log, []),
          handler: ToolHandler.immediate({
            names: () => ['put'],
            async invoke(_name, _input, context) {
              effects.push(context.attempt);
              return { ok: true };
            },
          }),
        },
      ]);
    const [a, b] = await Promise.all([
      reconcileUncertain(first, invocation, { catalog: catalogFor(first) }),
      reconcileUncertain(second, invocation, { catalog: catalogFor(second) }),
    ]);
    const byOperation = (operationId: string) =>
      [...a!, ...b!].filter((outcome) => outcome.operationId === operationId);
    for (const operationId of ['s:check', 's:put']) {
      const outcomes = byOperation(operationId);
      expect(outcomes.map((outcome) => outcome.decision).sort()).toEqual(
        operationId === 's:check' ? ['failed', 'lost_race'] : ['lost_race', 'succeeded'],
      );
      const loser = outcomes.find((outcome) => outcome.decision === 'lost_race') as ReconcileOutcome;
      const events = await first.invocationEvents(invocation, wide);
      const winner = events.find(({ event }) => event.id === loser.closedBy?.eventId);
      expect(winner, `the loser names the event that beat it on ${operationId}`).toBeDefined();
      expect(loser.reason).toMatch(/another reconciler got there first/);
    }
    expect(effects).toEqual([2]);
    const recovery = await first.invocationRecovery(invocation, wide);
    expect(recovery.uncertainOperations).toEqual([]);
  });
});
