// turn_cpu_long_session: the client CPU of a durable turn deep into one long session
// (`Engine` + `EventLog` on a SQLite file) ÷ the same turn of an undurable loop whose
// conversation is just as long (our own `ModelExecutor`, the messages kept in an array).
// Both grow a session to `FACTUM_BENCH_LONG_TURNS` turns (400) and then measure the next
// 100 in alternating blocks of 25. Every request carries the whole conversation, so both
// sides pay for its length on the wire; what the measure guards is the durable side's
// own work per turn, which must not grow with the session's history (admission once
// scanned the whole history several times a run: 5 ms a turn after 1,000 turns).
//
// approval_round_trip_long_session: then, in the same session, a person's round trip —
// a run that parks on a call, the decision, the parked run's view, the continuation that
// makes the call and answers — against a plain turn of the same session, alternating.
// Each read of the whole session costs what the session's length costs; the round trip
// once read it four times (0.75–1 s at 1,000 turns).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import type { ModelExecutor, ModelMessage } from '@factum/model';
import { report } from '../../../tooling/bench/harness.ts';
import { catalog, configOf, cpuMs, noopCatalog, startServer, undurableTurn } from './turn-cpu.ts';

const BLOCK = 25;
/** Round trips measured, each beside a plain turn. */
const TRIPS = 10;

export async function turnCpuLongSession(models: ModelExecutor, code: CodeExecutor): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-long-session-'));
  const server = await startServer();
  const config = configOf(server);
  const log = await EventLog.open(join(root, 'long.sqlite'));
  const engine = new Engine({ log, models, code });
  const grown = Number(process.env.FACTUM_BENCH_LONG_TURNS ?? 400);
  let turn = 0;
  const next = () => {
    turn += 1;
    return {
      invocation: { sessionId: 'long', turnId: `t${turn}`, runId: `r${turn}`, invocationId: `i${turn}` },
      provider: config,
      configuration: { cwd: '/', toolMode: 'direct' as const },
    };
  };
  const durable = async (turns: number) => {
    for (let n = 0; n < turns; n += 1) {
      const result = await engine.run({
        ...next(),
        work: { kind: 'message', message: 'go', tools: catalog },
      });
      if (result.outcome.kind !== 'completed') throw new Error(`a bench turn ended ${result.outcome.kind}`);
    }
  };
  const gated = noopCatalog(true);
  const roundTrip = async () => {
    const parked = await engine.run({ ...next(), work: { kind: 'message', message: 'go', tools: gated } });
    if (parked.outcome.kind !== 'approval_pending') throw new Error(`not parked: ${parked.outcome.kind}`);
    await engine.decide(parked.outcome.operations[0]!, { decision: 'approve', by: 'bench' });
    const view = await engine.parkedRun('long');
    const source = view!.source;
    const done = await engine.run({ ...next(), work: { kind: 'continuation', source, tools: gated } });
    if (done.outcome.kind !== 'completed') throw new Error(`a continuation ended ${done.outcome.kind}`);
  };
  const messages: ModelMessage[] = [];
  const undurable = async (turns: number) => {
    for (let n = 0; n < turns; n += 1) await undurableTurn(models, config, messages);
  };
  try {
    await durable(grown);
    await undurable(grown);
    const total = { durable: 0, undurable: 0 };
    for (let block = 0; block < 100 / BLOCK; block += 1) {
      total.durable += await cpuMs(BLOCK, () => durable(BLOCK));
      total.undurable += await cpuMs(BLOCK, () => undurable(BLOCK));
    }
    report({
      measure: 'turn_cpu_long_session',
      unit: 'ms of client CPU per turn (all threads)',
      value: total.durable / (100 / BLOCK),
      baseline: `the same turn by an undurable loop with a conversation as long (turns ${grown + 1}–${grown + 100} of one session)`,
      baselineValue: total.undurable / (100 / BLOCK),
      goal: '<= 1.5',
      note: 'Engine + EventLog on a SQLite file against ModelExecutor with the messages in an array; model server in a child process',
    });
    const trips = { roundTrip: 0, plain: 0 };
    for (let n = 0; n < TRIPS; n += 1) {
      trips.plain += await cpuMs(1, () => durable(1));
      trips.roundTrip += await cpuMs(1, roundTrip);
    }
    report({
      measure: 'approval_round_trip_long_session',
      unit: 'ms of client CPU per round trip (park, decide, view, continue)',
      value: trips.roundTrip / TRIPS,
      baseline: `a plain turn of the same session (after turn ${grown + 100}, alternating)`,
      baselineValue: trips.plain / TRIPS,
      goal: '<= 4',
      note: 'two runs (the step that parks; the call and the answer) and the decision and the view between them, on the history in memory',
    });
  } finally {
    await engine.close();
    await log.close();
    server.child.send('close');
    rmSync(root, { recursive: true, force: true });
  }
}
