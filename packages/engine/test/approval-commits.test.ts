import type { FactOf } from '@factum/agent-facts';
import { testStores } from '@factum/event-log/testing';
import { describe, expect, it } from 'vitest';
import { RunError } from '../src/index.ts';
import { done } from './support/agent-loop.ts';
import { approvalCatalog, approvalInput, calls, effectInto, effects } from './support/approvals.ts';
import { commitRecordingSetup } from './support/commit-log.ts';

const bounds = { maxEvents: 10_000, maxBytes: 64 * 1024 * 1024 };
const operation = 'invocation-first/1:call-1';

/**
 * A person's round trip adds the fewest commits the promise allows: the request rides
 * with the run's parking end (nobody can act on it before the run parks), and a
 * continuation that carries out decisions opens in the transaction of its first T1 or
 * rejection — so a crash keeps both or neither, and two hosts continuing one parked run
 * still run its effect once.
 */
describe.each(testStores())('the commits of an approval on $name', (stores) => {
  const setup = () => commitRecordingSetup(stores, (_log, ledger) => approvalCatalog(effectInto(ledger)));

  it('the request rides with the parking end, the opening with the approved T1', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    s.provider.script(calls(['send', { to: 'ops' }]), done);
    const parked = await engine.run(approvalInput(s.config, 'first', s.tools));
    expect(parked.outcome).toEqual({ kind: 'approval_pending', operations: [operation] });
    expect(await s.commits()).toEqual([
      [
        'invocation_opened',
        'model_requested',
        'model_observed',
        'model_completed',
        'approval_requested',
        'invocation_ended',
      ],
    ]);
    await engine.decide(operation, { decision: 'approve', by: 'ops' });
    const source = (await engine.parkedRun('session'))!.source;
    const continued = await engine.run(
      approvalInput(s.config, 'second', s.tools, { kind: 'continuation', source, tools: s.tools }),
    );
    expect(continued.outcome).toEqual({ kind: 'completed' });
    const after = (await s.commits()).slice(1);
    expect(after[0]).toEqual(['approval_decided']);
    expect(after[1], "the continuation's opening commits with the approved call's T1").toEqual([
      'invocation_opened',
      'tool_dispatched',
    ]);
    expect(after).toHaveLength(4);
    expect(effects(s.ledger).map((effect) => effect.input)).toEqual([{ to: 'ops' }]);
    expect(await s.log.verifyChain()).toMatchObject({ ok: true });
  }, 60_000);

  it('a denied call: the opening rides with its rejection', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    s.provider.script(calls(['send', { to: 'ops' }]), done);
    await engine.run(approvalInput(s.config, 'first', s.tools));
    await engine.decide(operation, { decision: 'deny', by: 'ops', note: 'not today' });
    const source = (await engine.parkedRun('session'))!.source;
    await engine.run(
      approvalInput(s.config, 'second', s.tools, { kind: 'continuation', source, tools: s.tools }),
    );
    expect((await s.commits())[2]).toEqual(['invocation_opened', 'tool_rejected']);
    expect(effects(s.ledger)).toEqual([]);
  }, 60_000);

  it('two hosts continuing one decided run at once: one effect, the other refused busy', async () => {
    await using s = await setup();
    await using a = s.engine('host-a');
    await using b = s.engine('host-b');
    s.provider.script(calls(['send', { to: 'ops' }]), done);
    await a.run(approvalInput(s.config, 'first', s.tools));
    await a.decide(operation, { decision: 'approve', by: 'ops' });
    const source = (await a.parkedRun('session'))!.source;
    s.provider.script(done, done);
    // Both hosts registered and swept already, so their admissions race evenly.
    await b.recover();
    const continuation = (suffix: string) =>
      approvalInput(s.config, suffix, s.tools, { kind: 'continuation', source, tools: s.tools });
    const results = await Promise.allSettled([a.run(continuation('by-a')), b.run(continuation('by-b'))]);
    const completed = results.filter((result) => result.status === 'fulfilled');
    const refused = results.flatMap((result) =>
      result.status === 'rejected' && RunError.isInstance(result.reason) ? [result.reason.code] : [],
    );
    // Admitted together, the later opening is refused when it commits with its T1; one
    // admitted after the other's end is a second continuation with nothing left to do.
    expect(completed.length + refused.length).toBe(2);
    expect(
      refused.every((code) => code === 'busy'),
      'the loser learns the session was taken',
    ).toBe(true);
    expect(effects(s.ledger), 'the approved effect ran once').toHaveLength(1);
    const opened = (await s.log.prefix(bounds)).events.flatMap((stored) =>
      stored.event.fact.kind === 'invocation_opened'
        ? [stored.event.fact as FactOf<'invocation_opened'>]
        : [],
    );
    expect(
      opened.filter((fact) => fact.input.kind === 'continuation'),
      'nothing of a refused run was written',
    ).toHaveLength(completed.length);
    expect(await s.log.unfinishedInvocations(10)).toEqual([]);
    expect(await s.log.verifyChain()).toMatchObject({ ok: true });
  }, 60_000);
});
