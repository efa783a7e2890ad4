import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog, type LogTarget } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/index.ts';
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
import { bundleChildren, nodeArgs } from './support/child-node.ts';
import { countingReads } from './support/session-writes.ts';

beforeAll(() => bundleChildren(approvalChild));

const operation = 'invocation-first/1:call-1';

/** A run parked on one `send` call, decided `approve` (unless `decide: false`): what a continuation starts from. */
async function decidedRun(target: LogTarget, options: { batchStarted?: () => void; decide?: boolean } = {}) {
  const dir = temporaryDirectory();
  const provider = await startScriptedProvider();
  const opened = await EventLog.open(
    target,
    options.batchStarted ? { hooks: { batchStarted: options.batchStarted } } : {},
  );
  const { log, wholeReads: reads, pages } = countingReads(opened);
  const engine = new Engine({
    log,
    models: new ModelExecutor({ timeoutMs: 10_000, retry: { maxAttempts: 1 } }),
    code: new CodeExecutor(),
    options: { lease: { hostId: 'host-a' } },
  });
  const ledger = join(dir.path, 'ledger');
  const tools = approvalCatalog(effectInto(ledger));
  const config = provider.config({ model: 'test', auth: { apiKey: 'k' } });
  provider.script(calls(['send', { to: 'ops' }]));
  const parked = await engine.run(approvalInput(config, 'first', tools));
  expect(parked.outcome).toEqual({ kind: 'approval_pending', operations: [operation] });
  const parkedReads = reads();
  if (options.decide !== false) await engine.decide(operation, { decision: 'approve', by: 'ops' });
  const source = (await engine.parkedRun('session'))!.source;
  return {
    log: opened,
    engine,
    provider,
    ledger,
    reads,
    pages,
    parkedReads,
    continuation: approvalInput(config, 'second', tools, { kind: 'continuation', source, tools }),
    async [Symbol.asyncDispose]() {
      await engine.close();
      await opened.close();
      await provider[Symbol.asyncDispose]();
      dir[Symbol.dispose]();
    },
  };
}

/**
 * A continuation carries out the decisions on the history its admission checked, and
 * does not read the session again: its opening rides with the first call carried out,
 * conditional on the session still ending where that history does. Another writer in
 * between makes that commit refuse, nothing runs, and the run starts over on the log.
 */
describe.each(testStores())(
  'a continuation builds on the history its admission checked, on $name',
  (stores) => {
    it('the session is read at most once, by admission: the parked run comes from what it checked', async () => {
      await using store = await stores.create();
      await using s = await decidedRun(store.target);
      s.provider.script(done);
      const before = s.reads();
      const continued = await s.engine.run(s.continuation);
      expect(continued.outcome).toEqual({ kind: 'completed' });
      expect(s.reads() - before, 'reads of the whole session during the continuation').toBeLessThanOrEqual(1);
      expect(effects(s.ledger).map((effect) => effect.input)).toEqual([{ to: 'ops' }]);
    }, 60_000);

    it('a person’s round trip on this engine — the decision, the parked run’s view, the continuation — reads no whole session: the engine’s history of it, checked against the head, serves', async () => {
      await using store = await stores.create();
      await using s = await decidedRun(store.target);
      s.provider.script(done);
      const continued = await s.engine.run(s.continuation);
      expect(continued.outcome).toEqual({ kind: 'completed' });
      expect(s.reads() - s.parkedReads, 'reads of the whole session after the run parked').toBe(0);
      expect(effects(s.ledger)).toHaveLength(1);
    }, 60_000);

    it('a decision another process recorded is seen: the head moved, and the history in memory takes the facts after it', async () => {
      await using store = await stores.create();
      await using s = await decidedRun(store.target, { decide: false });
      const before = await s.engine.parkedRun('session');
      expect(before?.ready).toBe(false);
      const [reads, pages] = [s.reads(), s.pages()];
      const decided = await runChild(store.target, ['decide', operation, 'deny', 'not now']);
      expect(JSON.parse(decided.lines[0]!)).toMatchObject({ operationId: operation, decision: 'denied' });
      const after = await s.engine.parkedRun('session');
      expect(after).toMatchObject({
        ready: true,
        operations: [{ operationId: operation, decision: 'denied' }],
      });
      expect(s.reads() - reads, 'no read of the whole session').toBe(0);
      expect(s.pages() - pages, 'one read of what came after the history').toBe(1);
    }, 60_000);

    it('another host continues the parked run between admission and the first call: that commit is refused with the opening, the effect runs once, and the run starts over to find nothing left to do', async () => {
      await using store = await stores.create();
      let armed = false;
      let other = '';
      let ledger = '';
      // Once admitted, the continuation's first batch (its opening and the approved call's
      // T1) starts only after another process has continued the same run to its end.
      const batchStarted = () => {
        if (!armed) return;
        armed = false;
        other = execFileSync(
          'node',
          nodeArgs(approvalChild, ['continue-alone', JSON.stringify(store.target), ledger]),
          {
            encoding: 'utf8',
          },
        ).trim();
      };
      await using s = await decidedRun(store.target, { batchStarted });
      ledger = s.ledger;
      s.provider.script(done);
      const requests = s.provider.requests.length;
      armed = true;
      const continued = await s.engine.run(s.continuation);
      expect(other, 'the other process continued the run').toBe('{"kind":"completed"}');
      expect(continued.outcome).toEqual({ kind: 'completed' });
      const ran = effects(ledger);
      expect(
        ran.map((effect) => effect.input),
        'the approved effect ran once',
      ).toEqual([{ to: 'ops' }]);
      expect(ran[0]!.pid, 'by the other process').not.toBe(process.pid);
      expect(s.provider.requests.length - requests, 'one model step: the run that started over').toBe(1);
      const events = (await s.log.prefix(bounds)).events.map((stored) => stored.event);
      const openings = events.filter((event) => event.fact.kind === 'invocation_opened');
      expect(openings.map((event) => event.invocation.invocationId)).toEqual([
        'invocation-first',
        'invocation-alone',
        'invocation-second',
      ]);
      expect(
        events
          .filter((event) => event.invocation.invocationId === 'invocation-second')
          .map((event) => event.fact.kind),
        'nothing of the refused start was written; the run that started over had nothing to carry out',
      ).toEqual([
        'invocation_opened',
        'model_requested',
        'model_observed',
        'model_completed',
        'invocation_ended',
      ]);
      expect(await s.log.verifyChain()).toMatchObject({ ok: true });
    }, 60_000);
  },
);
