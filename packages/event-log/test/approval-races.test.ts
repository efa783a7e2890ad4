import { callInputDigest } from '@factum/agent-facts';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { approvalFacts as a, call, parkFor } from './support/approvals.ts';
import { bundleChild, type RunningChild, startChild } from './support/child-bundle.ts';
import { invocation, write } from './support/facts.ts';

let child = '';
beforeAll(async () => {
  child = await bundleChild(new URL('./support/decide-child.ts', import.meta.url), 'decide-child');
}, 60_000);

/** Starts a process that opens the log and decides once told to (a line on stdin). */
function startDecider(target: string, argument: object): RunningChild & { said: Promise<string> } {
  const run = startChild(child, [target, JSON.stringify(argument)]);
  const said = run.done.then(({ code, output }) =>
    code === 0 ? output.replace('ready\n', '').trim() : `exit ${code}: ${output}`,
  );
  return { ...run, said };
}

describe.each(testStores())('concurrent decisions on $name', (stores) => {
  it('two logs deciding the same approval at once: exactly one wins, every time', async () => {
    await using store = await stores.create();
    await using first = await EventLog.open(store.target);
    await using second = await EventLog.open(store.target);
    const rounds = 8;
    for (let round = 0; round < rounds; round += 1) {
      const at = invocation(`-${round}`, `race-${round}`);
      await parkFor(first, at, ['s:c']);
      const results = await Promise.allSettled([
        first.append(write(at, a.decided('s:c', 'approved', { by: 'first' }))),
        second.append(write(at, a.decided('s:c', 'denied', { by: 'second' }))),
      ]);
      const won = results.filter((result) => result.status === 'fulfilled');
      const lost = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(AppendRefusedError.isInstance(lost[0]) && lost[0].code).toBe('approval_decided_twice');
    }
    const decisions = (await first.pendingApprovals({ limit: 100 })).map((p) => p.decision?.by);
    expect(decisions).toHaveLength(rounds);
    expect(decisions.every((by) => by === 'first' || by === 'second')).toBe(true);
    const events = await second.read({ limit: 10_000 });
    expect(events.filter((stored) => stored.event.fact.kind === 'approval_decided')).toHaveLength(rounds);
  });

  it('four processes deciding the same approval at once: exactly one wins', async () => {
    await using store = await stores.create();
    const target = typeof store.target === 'string' ? store.target : store.target.postgres;
    const at = invocation('-1');
    {
      await using log = await EventLog.open(store.target);
      await parkFor(log, at, ['s:c']);
    }
    const argument = { invocation: at, operationId: 's:c', inputDigest: callInputDigest(call('s:c').input) };
    const deciders = [0, 1, 2, 3].map((n) => startDecider(target, { ...argument, by: `process-${n}` }));
    await Promise.all(deciders.map((decider) => decider.ready));
    for (const decider of deciders) decider.process.stdin?.write('go\n');
    const said = await Promise.all(deciders.map((decider) => decider.said));
    expect(said.filter((line) => line === 'won')).toHaveLength(1);
    expect(said.filter((line) => line === 'approval_decided_twice')).toHaveLength(3);
    await using log = await EventLog.open(store.target);
    const [pending] = await log.pendingApprovals();
    expect(pending?.decision?.by).toBe(`process-${said.indexOf('won')}`);
    expect(await log.verifyChain()).toMatchObject({ ok: true });
  }, 120_000);
});
