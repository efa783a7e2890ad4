import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { approvalInputDigest } from '@factum/tools';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine, RunError } from '../src/index.ts';
import { bounds, done, temporaryDirectory } from './support/agent-loop.ts';
import {
  approvalCatalog,
  approvalChild,
  approvalInput,
  calls,
  effectInto,
  effects,
  runChild,
} from './support/approvals.ts';
import { bundleChildren } from './support/child-node.ts';

const refusedCode = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    if (RunError.isInstance(error)) return error.code;
    throw error;
  }
  return 'accepted';
};

beforeAll(() => bundleChildren(approvalChild));

describe.each(testStores())('approvals on $name', (stores) => {
  async function setup(hostId = `parent-${stores.name}`) {
    const store = await stores.create();
    const dir = temporaryDirectory();
    const provider = await startScriptedProvider();
    const log = await EventLog.open(store.target);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 10_000, retry: { maxAttempts: 1 } }),
      code: new CodeExecutor(),
      options: { lease: { hostId } },
    });
    const ledger = join(dir.path, 'ledger');
    const tools = approvalCatalog(effectInto(ledger));
    const config = provider.config({ model: 'test', auth: { apiKey: 'k' } });
    const count = async () =>
      (await log.prefix({ maxEvents: 10_000, maxBytes: 64 * 1024 * 1024 })).events.length;
    return {
      store,
      provider,
      log,
      engine,
      ledger,
      tools,
      config,
      count,
      continuation: async (suffix: string) => {
        const parked = await engine.parkedRun('session');
        expect(parked).toBeDefined();
        return approvalInput(config, suffix, tools, { kind: 'continuation', source: parked!.source, tools });
      },
      async [Symbol.asyncDispose]() {
        await engine.close();
        await log.close();
        await provider[Symbol.asyncDispose]();
        dir[Symbol.dispose]();
        await store[Symbol.asyncDispose]();
      },
    };
  }

  it('request → park → decide in another process → the continuation runs the approved input once', async () => {
    await using s = await setup();
    s.provider.script(calls(['echo', { value: 1 }], ['send', { to: 'ops', body: 'deploy' }]), done);
    const parked = await s.engine.run(approvalInput(s.config, 'first', s.tools));
    const operation = 'invocation-first/1:call-2';
    expect(parked.outcome).toEqual({ kind: 'approval_pending', operations: [operation] });
    expect(
      effects(s.ledger).map((effect) => effect.input),
      'the call needing none ran',
    ).toEqual([{ value: 1 }]);
    const pending = await s.engine.pendingApprovals();
    expect(pending).toMatchObject([
      {
        sessionId: 'session',
        operationId: operation,
        toolName: 'send',
        input: { to: 'ops', body: 'deploy' },
      },
    ]);
    expect(pending[0]!.inputDigest).toBe(approvalInputDigest({ to: 'ops', body: 'deploy' }));
    // Nothing continues while undecided.
    const before = await s.count();
    expect(await refusedCode(s.engine.run(await s.continuation('early')))).toBe('approval_pending');
    expect(await refusedCode(s.engine.run(approvalInput(s.config, 'other', s.tools)))).toBe(
      'approval_pending',
    );
    expect(await s.count()).toBe(before);

    const decided = await runChild(s.store.target, ['decide', operation, 'approve', 'ship it']);
    expect(decided.lines).toHaveLength(1);
    expect(JSON.parse(decided.lines[0]!)).toMatchObject({ operationId: operation, decision: 'approved' });

    s.provider.script(done);
    const continued = await s.engine.run(await s.continuation('continued'));
    expect(continued.outcome).toEqual({ kind: 'completed' });
    const ran = effects(s.ledger).map((effect) => effect.input);
    expect(ran).toEqual([{ value: 1 }, { to: 'ops', body: 'deploy' }]);
    // The model's request after the continuation carries the approved call's result.
    const last = JSON.stringify(s.provider.requests.at(-1));
    expect(last).toContain('deploy');
    expect(await s.engine.pendingApprovals()).toEqual([]);
    expect(await s.engine.parkedRun('session')).toBeUndefined();
    // Deciding again, or continuing the parked run again, runs nothing.
    expect(await refusedCode(s.engine.decide(operation, { decision: 'approve', by: 'me' }))).toBe(
      'approval_decided_twice',
    );
    expect(effects(s.ledger)).toHaveLength(2);
    expect(await s.log.verifyChain()).toMatchObject({ ok: true });
  }, 60_000);

  it('a denial is a rejection the model reads as a sentence, with the note', async () => {
    await using s = await setup();
    s.provider.script(calls(['send', { to: 'all' }]), done);
    await s.engine.run(approvalInput(s.config, 'first', s.tools));
    await s.engine.decide('invocation-first/1:call-1', {
      decision: 'deny',
      by: 'ana',
      note: 'not on a Friday',
    });
    s.provider.script(done);
    const continued = await s.engine.run(await s.continuation('continued'));
    expect(continued.outcome).toEqual({ kind: 'completed' });
    expect(effects(s.ledger)).toEqual([]);
    expect(JSON.stringify(s.provider.requests.at(-1))).toContain(
      'did not run: a person denied this call: not on a Friday',
    );
  }, 60_000);

  it('typed refusals write nothing: twice, unknown, already executed, another input', async () => {
    await using s = await setup();
    s.provider.script(calls(['echo', { value: 1 }], ['send', { to: 'a' }]), done);
    await s.engine.run(approvalInput(s.config, 'first', s.tools));
    const before = await s.count();
    const by = 'ana';
    expect(await refusedCode(s.engine.decide('nope:call-9', { decision: 'approve', by }))).toBe(
      'approval_unknown',
    );
    expect(await refusedCode(s.engine.decide('invocation-first/1:call-1', { decision: 'approve', by }))).toBe(
      'already_executed',
    );
    expect(
      await refusedCode(
        s.engine.decide('invocation-first/1:call-2', {
          decision: 'approve',
          by,
          inputDigest: approvalInputDigest({ to: 'everyone' }),
        }),
      ),
    ).toBe('approval_input_mismatch');
    expect(
      await refusedCode(s.engine.decide('invocation-first/1:call-2', { decision: 'approve', by: '' })),
    ).toBe('invalid_input');
    expect(await s.count()).toBe(before);
    await s.engine.decide('invocation-first/1:call-2', {
      decision: 'approve',
      by,
      inputDigest: approvalInputDigest({ to: 'a' }),
    });
    const after = await s.count();
    expect(after).toBe(before + 1);
    expect(await refusedCode(s.engine.decide('invocation-first/1:call-2', { decision: 'deny', by }))).toBe(
      'approval_decided_twice',
    );
    expect(await s.count()).toBe(after);
  }, 60_000);

  it('two processes deciding at once: exactly one wins', async () => {
    await using s = await setup();
    s.provider.script(calls(['send', { to: 'a' }]));
    await s.engine.run(approvalInput(s.config, 'first', s.tools));
    const operation = 'invocation-first/1:call-1';
    const [a, b] = await Promise.all([
      runChild(s.store.target, ['decide', operation, 'approve']),
      runChild(s.store.target, ['decide', operation, 'deny']),
    ]);
    const lines = [...a.lines, ...b.lines];
    expect(
      lines.filter((line) => line.startsWith('{')),
      lines.join('\n'),
    ).toHaveLength(1);
    expect(lines.filter((line) => line === 'refused approval_decided_twice')).toHaveLength(1);
    const facts = (await s.log.prefix(bounds)).events.map(({ event }) => event.fact);
    expect(facts.filter((fact) => fact.kind === 'approval_decided')).toHaveLength(1);
  }, 60_000);

  it('an approval past its deadline is expired by the sweep, and the model reads so', async () => {
    await using s = await setup();
    s.provider.script(calls(['send', { to: 'a' }]));
    const tools = s.tools;
    await s.engine.run(
      approvalInput(s.config, 'first', tools, { kind: 'message', message: 'q', tools, approvalTtlMs: 1 }),
    );
    const [pending] = await s.engine.pendingApprovals();
    expect(pending?.expiresAt).toBeDefined();
    // The database's clock decides; sweep until it has passed the deadline.
    for (;;) {
      await s.engine.sweep();
      const [now] = await s.engine.pendingApprovals();
      if (now?.decision?.decision === 'expired') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    s.provider.script(done);
    const continued = await s.engine.run(await s.continuation('continued'));
    expect(continued.outcome).toEqual({ kind: 'completed' });
    expect(effects(s.ledger)).toEqual([]);
    expect(JSON.stringify(s.provider.requests.at(-1))).toContain(
      'did not run: no one approved this call before its deadline',
    );
  }, 60_000);

  it.each([
    ['succeeded', 'checked by hand: value 7 was written'],
    ['not_run', 'did not run: a person recorded that this call never took effect: the target has no 7'],
  ] as const)(
    'a %s resolution unblocks a session a SIGKILLed process left uncertain; the model reads it',
    async (outcome, said) => {
      await using s = await setup('child-crash');
      s.provider.script(calls(['echo', { value: 7 }]));
      const crashed = await runChild(s.store.target, ['crash', s.provider.baseUrl, s.ledger]);
      expect(crashed.signal).toBe('SIGKILL');
      expect(effects(s.ledger)).toHaveLength(1);
      const operation = 'invocation-crash/1:call-1';
      // The restarted host (same id, new epoch) ends the dead epoch's run; the session stays blocked.
      await s.engine.sweep();
      expect(await refusedCode(s.engine.run(approvalInput(s.config, 'next', s.tools)))).toBe(
        'uncertain_operations',
      );
      expect(
        await refusedCode(s.engine.resolve(operation, { outcome, by: 'ana', note: '' })),
        'a resolution says why',
      ).toBe('invalid_input');
      const before = await s.count();
      await s.engine.resolve(
        operation,
        outcome === 'succeeded'
          ? {
              outcome,
              result: 'checked by hand: value 7 was written',
              by: 'ana',
              note: 'I looked at the target',
            }
          : { outcome, by: 'ana', note: 'the target has no 7' },
      );
      expect(await s.count()).toBe(before + 1);
      expect(
        await refusedCode(s.engine.resolve(operation, { outcome: 'not_run', by: 'ana', note: 'again' })),
      ).toBe('not_uncertain');
      s.provider.script(done);
      const next = await s.engine.run(approvalInput(s.config, 'next', s.tools));
      expect(next.outcome).toEqual({ kind: 'completed' });
      expect(JSON.stringify(s.provider.requests.at(-1))).toContain(said);
      expect(effects(s.ledger), 'nothing ran again').toHaveLength(1);
    },
    60_000,
  );
});
