import type { ToolExecutor } from '@factum/agent-facts';
import { testStores } from '@factum/event-log/testing';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { RunError } from '../src/index.ts';
import { bounds, done, echoCatalog, input, oneCall } from './support/agent-loop.ts';
import { effectInto, effects } from './support/approvals.ts';
import { commitRecordingSetup } from './support/commit-log.ts';

/**
 * A run's `invocation_opened` is not waited for: it rides with the run's first waited-for
 * commit, so a sequential one-tool turn waits for three commits — unless the caller asks
 * for a durable start. Two engines that admit one session at the same moment cannot both
 * run it: the later opening is refused as it commits, before any effect.
 */
describe.each(testStores())('a riding opening on $name', (stores) => {
  async function setup() {
    const s = await commitRecordingSetup(stores, (_log, ledger) => echoCatalog(effectInto(ledger)));
    return Object.assign(s, { effect: effectInto(s.ledger) as ToolExecutor });
  }

  it('a sequential one-tool turn waits for three commits: [opening, step, T1], [T2], [step, end]', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'), done);
    const before = s.log.stats().commits;
    const result = await engine.run(input(provider, 'one', s.effect));
    expect(result.outcome).toEqual({ kind: 'completed' });
    expect(s.log.stats().commits - before).toBe(3);
    expect(await s.commits()).toEqual([
      ['invocation_opened', 'model_requested', 'model_observed', 'model_completed', 'tool_dispatched'],
      ['tool_settled'],
      ['model_requested', 'model_observed', 'model_completed', 'invocation_ended'],
    ]);
    expect(effects(s.ledger)).toHaveLength(1);
  }, 60_000);

  it('a new session’s first turn builds on its empty history: on PostgreSQL each of its commits is one message', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo'), done, oneCall('echo'), done);
    // A first turn, so that the log's cache knows the chain's head.
    expect((await engine.run(input(provider, 'first', s.effect))).outcome).toEqual({ kind: 'completed' });
    const before = s.log.stats();
    const fresh = input(provider, 'fresh', s.effect);
    const result = await engine.run({ ...fresh, invocation: { ...fresh.invocation, sessionId: 'new' } });
    expect(result.outcome).toEqual({ kind: 'completed' });
    const after = s.log.stats();
    expect(after.commits - before.commits).toBe(3);
    // The log took the session the engine found empty for new, its store checking that.
    expect(after.oneTrip - before.oneTrip).toBe(stores.name === 'postgres' ? 3 : 0);
    expect(effects(s.ledger)).toHaveLength(2);
    expect((await s.log.verifyChain()).ok).toBe(true);
  }, 60_000);

  it('durableStart: start() resolves once the opening is durable, in a commit of its own', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo', true), done);
    const running = await engine.start(input(provider, 'durable', s.effect), { durableStart: true });
    expect(await s.log.unfinishedInvocations(10)).toEqual([running.invocation]);
    expect(await s.commits()).toEqual([['invocation_opened']]);
    provider.release(0);
    expect((await running.wait()).outcome).toEqual({ kind: 'completed' });
  }, 60_000);

  it('a run that is admitted but has not committed yet is not in the log', async () => {
    await using s = await setup();
    await using engine = s.engine('host-a');
    await using provider = await startScriptedProvider();
    provider.script(oneCall('echo', true), done);
    const running = await engine.start(input(provider, 'riding', s.effect));
    expect(await s.log.unfinishedInvocations(10)).toEqual([]);
    expect((await s.log.prefix(bounds)).events).toEqual([]);
    // The same engine still refuses a second run in the session at once.
    await expect(engine.start(input(provider, 'second', s.effect))).rejects.toMatchObject({ code: 'busy' });
    provider.release(0);
    expect((await running.wait()).outcome).toEqual({ kind: 'completed' });
  }, 60_000);

  it('two engines admit one session at once: one runs, the other ends busy with nothing written', async () => {
    await using s = await setup();
    await using a = s.engine('host-a');
    await using b = s.engine('host-b');
    await using first = await startScriptedProvider();
    await using second = await startScriptedProvider();
    // Both runs are admitted and ask the model; A then runs its call and stays live
    // (its answer is held) while B's first commit, which carries B's opening, arrives.
    first.script(oneCall('echo', true), { ...done, hold: true });
    second.script(oneCall('echo', true), done);
    // Both hosts registered and swept already, so neither admission waits for the other.
    await a.recover();
    await b.recover();
    const runA = await a.start(input(first, 'by-a', s.effect));
    const runB = await b.start(input(second, 'by-b', s.effect));
    const results = Promise.allSettled([runA.wait(), runB.wait()]);
    await Promise.all([first.requestArrived(0), second.requestArrived(0)]);
    first.release(0);
    await first.requestArrived(1);
    second.release(0);
    await expect(runB.wait()).rejects.toMatchObject({ code: 'busy' });
    first.release(1);
    const settled = await results;
    const completed = settled.filter((result) => result.status === 'fulfilled');
    const refused = settled.flatMap((result) =>
      result.status === 'rejected' && RunError.isInstance(result.reason) ? [result.reason.code] : [],
    );
    expect(completed).toHaveLength(1);
    expect(refused).toEqual(['busy']);
    expect(effects(s.ledger), 'only the winner ran its effect').toHaveLength(1);
    const invocations = new Set(
      (await s.log.prefix(bounds)).events.map((stored) => stored.event.invocation.invocationId),
    );
    expect(invocations.size, 'nothing of the refused run was written').toBe(1);
    expect(await s.log.unfinishedInvocations(10)).toEqual([]);
    expect(await s.log.verifyChain()).toMatchObject({ ok: true });
  }, 60_000);
});
