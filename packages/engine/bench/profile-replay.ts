// A replay only, for a CPU profile of the built packages: records a session through the
// engine, then profiles `rounds` verify replays of it with the inspector (the recording
// stays out of the profile). `tsx bench/profile-replay.ts [turns] [rounds] [out]` writes
// a .cpuprofile that Chrome's DevTools open.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { recordLongSession } from './replay-verify.ts';

const turns = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 5);
const out = process.argv[4] ?? 'replay.cpuprofile';
const dir = mkdtempSync(join(tmpdir(), 'factum-replay-profile-'));
const code = new CodeExecutor();
const log = await EventLog.open(join(dir, 'events.sqlite'));
const engine = new Engine({
  log,
  models: new ModelExecutor({ timeoutMs: 10_000 }),
  code,
  options: { lease: false, recoverOnStart: false },
});
try {
  const { replay } = await recordLongSession(engine, log, turns);
  await replay();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const started = performance.now();
  for (let round = 0; round < rounds; round += 1) await replay();
  const ms = (performance.now() - started) / rounds;
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(out, JSON.stringify(profile));
  console.log(`${ms.toFixed(1)} ms per replay of ${turns} turns; profile in ${out}`);
} finally {
  await engine.close();
  await log.close();
  await code.close();
  rmSync(dir, { recursive: true, force: true });
}
