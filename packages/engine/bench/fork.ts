// fork: forking at the end of a 10,000-fact session ÷ opening a new session (one durable
// `invocation_opened` in a fresh session), on one SQLite log, alternating rounds. The
// prefix is referenced, not copied, so a fork costs a few indexed reads more than an
// opening, whatever the source's length.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventWrite, type Fact, type Invocation, RuntimeEvent } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { percentile, report } from '../../../tooling/bench/harness.ts';

const FACTS = 10_000;
const ROUNDS = 200;

async function sourceSession(log: EventLog): Promise<void> {
  const at: Invocation = { sessionId: 'source', turnId: 't', runId: 'r', invocationId: 'i' };
  const facts: Fact[] = [
    { kind: 'invocation_opened', input: { kind: 'message', content: 'go', sourceMessages: [] } },
  ];
  for (let n = 0; facts.length < FACTS - 1; n += 1) {
    facts.push({
      kind: 'model_observed',
      stepId: 'i/1',
      observation: { kind: 'text_delta', text: `chunk ${n}` },
    });
  }
  facts.push({ kind: 'invocation_ended', outcome: { kind: 'completed' } });
  for (let start = 0; start < facts.length; start += 250) {
    const writes = facts
      .slice(start, start + 250)
      .map((fact) => EventWrite.plain(RuntimeEvent.create(at, fact)));
    await Promise.all(log.commitTogether(writes));
  }
}

export async function forkBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-fork-bench-'));
  const log = await EventLog.open(join(root, 'events.sqlite'));
  const engine = new Engine({
    log,
    models: new ModelExecutor({ timeoutMs: 1_000 }),
    code: new CodeExecutor(),
    options: { lease: false, recoverOnStart: false },
  });
  try {
    await sourceSession(log);
    const opened: Fact = {
      kind: 'invocation_opened',
      input: { kind: 'message', content: 'go', sourceMessages: [] },
    };
    const open = async (n: number) => {
      const at = { sessionId: `opened-${n}`, turnId: 't', runId: 'r', invocationId: 'i' };
      const started = performance.now();
      await log.append(EventWrite.plain(RuntimeEvent.create(at, opened)));
      return performance.now() - started;
    };
    const fork = async (n: number) => {
      const started = performance.now();
      await engine.fork({ session: 'source' }, { newSession: `forked-${n}` });
      return performance.now() - started;
    };
    for (let n = 0; n < 20; n += 1) {
      await open(-n - 1);
      await fork(-n - 1);
    }
    const opens: number[] = [];
    const forks: number[] = [];
    // ABBA order, so a drift of the machine hits both sides alike; medians, so one stall moves neither.
    for (let round = 0; round < ROUNDS; round += 1) {
      if (round % 4 === 1 || round % 4 === 2) {
        forks.push(await fork(round));
        opens.push(await open(round));
      } else {
        opens.push(await open(round));
        forks.push(await fork(round));
      }
    }
    const history = await log.scopedPrefix(
      { session: `forked-${ROUNDS - 1}` },
      { maxEvents: FACTS + 10, maxBytes: 64 << 20 },
    );
    if (history.events.length !== FACTS + 1)
      throw new Error(`a fork reads ${history.events.length} events, not ${FACTS + 1}`);
    report({
      measure: 'fork',
      unit: 'ms',
      value: percentile(forks, 0.5),
      baseline: 'opening a new session (one durable invocation_opened)',
      baselineValue: percentile(opens, 0.5),
      goal: '<= 2',
      note: `median of ${ROUNDS} forks at the end of a ${FACTS}-fact session, SQLite, the prefix referenced not copied`,
    });
  } finally {
    await engine.close();
    await log.close();
    rmSync(root, { recursive: true, force: true });
  }
}
