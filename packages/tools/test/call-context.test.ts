import { idempotencyKeyOf, type ToolCallContext, ToolError } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { RunTools, ToolCatalog, ToolHandler } from '../src/index.ts';
import { FaultSink, invocation, seed, temporaryDirectory, wide } from './support/fixtures.ts';

/** A tool that keeps the context it was given and reports progress twice. */
function contextCatalog(seen: ToolCallContext[]): ToolCatalog {
  return new ToolCatalog([
    {
      definition: { name: 'note', description: 'reports progress', inputSchema: { type: 'object' } },
      handler: ToolHandler.immediate({
        names: () => ['note'],
        async invoke(_name, _input, context) {
          seen.push(context);
          await context.notify('halfway');
          await context.notify('done');
          return { key: context.idempotencyKey };
        },
      }),
      nesting: 'nestable',
      semantics: 'parallel',
    },
  ]);
}

const code = new CodeExecutor();

describe('the call context', () => {
  it('every effect is told its operation, a key derived from it, its attempt, and records progress', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const calls = [{ id: 'c1', name: 'note', input: {} }];
    await seed(log, invocation, calls);
    const seen: ToolCallContext[] = [];
    const run = new RunTools({ sink: log, invocation, catalog: contextCatalog(seen), mode: 'direct', code });
    const step = (await run.capture('.')).intoStep('step');
    const result = await step.invoke(calls[0]!);
    await run.shutdown();
    const [context] = seen;
    expect(context).toMatchObject({
      operationId: 'step:c1',
      attempt: 1,
      sessionId: invocation.sessionId,
      invocationId: invocation.invocationId,
    });
    expect(context!.idempotencyKey).toBe(idempotencyKeyOf(invocation.sessionId, 'step:c1'));
    expect(context!.idempotencyKey).toMatch(/^factum-[0-9a-f]{32}$/);
    expect(context!.idempotencyKey).not.toBe(idempotencyKeyOf('another-session', 'step:c1'));
    expect(result.json()).toEqual({ key: context!.idempotencyKey });
    const facts = (await log.prefix(wide)).events.map(({ event }) => event.fact);
    expect(facts.slice(-4).map((fact) => fact.kind)).toEqual([
      'tool_dispatched',
      'tool_notified',
      'tool_notified',
      'tool_settled',
    ]);
    expect(facts.filter((fact) => fact.kind === 'tool_notified').map((fact) => fact.message)).toEqual([
      'halfway',
      'done',
    ]);
    await expect(context!.notify('late')).rejects.toThrow(/has ended/);
  });

  it('a cell child gets its own operation and key, and its notifications are its own', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const calls = [{ id: 'p', name: 'exec', input: { code: 'text(await tools.note({}))' } }];
    await seed(log, invocation, calls);
    const seen: ToolCallContext[] = [];
    const run = new RunTools({
      sink: log,
      invocation,
      catalog: contextCatalog(seen),
      mode: 'code_mode',
      code,
    });
    await (await run.capture('.')).intoStep('step').invoke(calls[0]!);
    await run.shutdown();
    expect(seen.map((context) => context.operationId)).toEqual(['step:p#cell/c0']);
    const notified = (await log.prefix(wide)).events.filter(
      ({ event }) => event.fact.kind === 'tool_notified',
    );
    expect(notified.map(({ event }) => 'operationId' in event.fact && event.fact.operationId)).toEqual([
      'step:p#cell/c0',
      'step:p#cell/c0',
    ]);
  });

  it('a progress note that cannot be recorded leaves the call uncertain even if the tool swallows the error', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const calls = [{ id: 'c1', name: 'swallow', input: {} }];
    await seed(log, invocation, calls);
    const catalog = new ToolCatalog([
      {
        definition: { name: 'swallow', description: 'ignores failed notes', inputSchema: { type: 'object' } },
        handler: ToolHandler.immediate({
          names: () => ['swallow'],
          async invoke(_name, _input, context) {
            await context.notify('lost').catch(() => undefined);
            return { ok: true };
          },
        }),
        nesting: 'nestable',
        semantics: 'parallel',
      },
    ]);
    const sink = new FaultSink(log, 'notification', 'step:c1');
    const run = new RunTools({ sink, invocation, catalog, mode: 'direct', code });
    const error = await (await run.capture('.'))
      .intoStep('step')
      .invoke(calls[0]!)
      .catch((e: unknown) => e);
    expect(ToolError.isInstance(error) && error.code).toBe('persistence');
    await expect(run.shutdown()).rejects.toMatchObject({ code: 'persistence' });
    const recovery = await log.invocationRecovery(invocation, wide);
    expect(recovery.uncertainOperations).toEqual(['step:c1']);
  });
});
