// Durable turns only, for a CPU profile of the whole turn (engine, tools, log, the log's
// writer thread), of the built packages: `node --cpu-prof --cpu-prof-dir=<dir> --import
// tsx bench/profile-turns.ts [turns]` writes one profile a thread. With
// FACTUM_PROFILE_POSTGRES=<url of an empty database> the log is on PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { configOf, durableTurns, startServer } from './turn-cpu.ts';

const turns = Number(process.argv[2] ?? 500);
const root = mkdtempSync(join(tmpdir(), 'factum-turn-profile-'));
const server = await startServer();
const code = new CodeExecutor();
const postgres = process.env.FACTUM_PROFILE_POSTGRES;
const log = await EventLog.open(postgres ? { postgres } : join(root, 'turns.sqlite'));
const engine = new Engine({ log, models: new ModelExecutor({ timeoutMs: 10_000 }), code });
try {
  const before = process.cpuUsage();
  await durableTurns(engine, configOf(server), turns);
  const spent = process.cpuUsage(before);
  console.log(`${((spent.user + spent.system) / 1000 / turns).toFixed(3)} ms of CPU per durable turn`);
} finally {
  await engine.close();
  await log.close();
  await code.close();
  server.child.send('close');
  rmSync(root, { recursive: true, force: true });
}
