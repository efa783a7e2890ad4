// turn_cpu_long_session: the client CPU of a durable turn deep into one long session
// (`Engine` + `EventLog` on a SQLite file) ÷ the same turn of an undurable loop whose
// conversation is just as long (our own `ModelExecutor`, the messages kept in an array).
// Both grow a session to `FACTUM_BENCH_LONG_TURNS` turns (400) and then measure the next
// 100 in alternating blocks of 25. Every request carries the whole conversation, so both
// sides pay for its length on the wire; what the measure guards is the durable side's
// own work per turn, which must not grow with the session's history (admission once
// scanned the whole history several times a run: 5 ms a turn after 1,000 turns).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import type { ModelExecutor, ModelMessage } from '@factum/model';
import { report } from '../../../tooling/bench/harness.ts';
import { catalog, configOf, cpuMs, startServer, undurableTurn } from './turn-cpu.ts';

const BLOCK = 25;

export async function turnCpuLongSession(models: ModelExecutor, code: CodeExecutor): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'factum-long-session-'));
  const server = await startServer();
  const config = configOf(server);
  const log = await EventLog.open(join(root, 'long.sqlite'));
  const engine = new Engine({ log, models, code });
  const grown = Number(process.env.FACTUM_BENCH_LONG_TURNS ?? 400);
  let turn = 0;
  const durable = async (turns: number) => {
    for (let n = 0; n < turns; n += 1, turn += 1) {
      const result = await engine.run({
        invocation: { sessionId: 'long', turnId: `t${turn}`, runId: `r${turn}`, invocationId: `i${turn}` },
        provider: config,
        configuration: { cwd: '/', toolMode: 'direct' },
        work: { kind: 'message', message: 'go', tools: catalog },
      });
      if (result.outcome.kind !== 'completed') throw new Error(`a bench turn ended ${result.outcome.kind}`);
    }
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
  } finally {
    await engine.close();
    await log.close();
    server.child.send('close');
    rmSync(root, { recursive: true, force: true });
  }
}
