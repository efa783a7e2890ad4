// `pnpm torture -- --kills 1000 [--workers 2] [--hosts n] [--seed n] [--sessions 2] [--keep]
//   [--store sqlite|postgres] [--postgres-url url]`: prints one JSON summary line on
// stdout; every violation goes to stderr. On PostgreSQL without a URL it uses
// FACTUM_TEST_POSTGRES_URL, or the tests' shared embedded server.
import { parseArgs } from 'node:util';
import { runTorture } from './run-torture.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    kills: { type: 'string', default: '100' },
    workers: { type: 'string', default: '2' },
    hosts: { type: 'string', default: '1' },
    seed: { type: 'string' },
    sessions: { type: 'string', default: '2' },
    'rotate-every': { type: 'string', default: '10' },
    keep: { type: 'boolean', default: false },
    store: { type: 'string', default: 'sqlite' },
    'postgres-url': { type: 'string' },
  },
});
if (!(Number(values.hosts) >= 1 && Number.isInteger(Number(values.hosts)))) {
  process.stderr.write(`--hosts is a whole number ≥ 1 (2 or more share one log), not ${values.hosts}\n`);
  process.exit(2);
}
if (values.store !== 'sqlite' && values.store !== 'postgres') {
  process.stderr.write(`--store is sqlite or postgres, not ${values.store}\n`);
  process.exit(2);
}
const store = values.store;
const postgres = store === 'postgres' ? await postgresServer(values['postgres-url']) : undefined;

const summary = await runTorture({
  kills: Number(values.kills),
  workers: Number(values.workers),
  hosts: Number(values.hosts),
  sessions: Number(values.sessions),
  rotateEvery: Number(values['rotate-every']),
  keep: values.keep,
  store,
  ...(postgres === undefined ? {} : { postgresUrl: postgres.url }),
  onProgress: ({ kills, violations, seconds }) => {
    if (kills % 100 === 0)
      process.stderr.write(`${kills} kills, ${violations} violations, ${seconds.toFixed(0)} s\n`);
  },
  ...(values.seed === undefined ? {} : { seed: Number(values.seed) }),
});
for (const violation of summary.violations)
  process.stderr.write(`violation ${violation.rule}: ${violation.detail}\n`);
if (summary.violations.length > 0) process.stderr.write(`logs and ledgers kept in ${summary.directory}\n`);
postgres?.release();
process.stdout.write(
  `${JSON.stringify({
    store: summary.store,
    kills: summary.kills,
    invariants_checked: summary.invariantsChecked,
    violations: summary.violations.length,
    seconds: Number(summary.seconds.toFixed(1)),
    seed: summary.seed,
    workers: summary.workers,
    hosts: summary.hosts,
    reconciled: summary.reconciled,
    planned: summary.byPoint,
    died_at: summary.diedAt,
    child_errors: summary.childErrors,
  })}\n`,
);
process.exitCode = summary.violations.length === 0 ? 0 : 1;

/** The PostgreSQL server to make logs on: the one named, or the tests' shared one. */
async function postgresServer(url: string | undefined): Promise<{ url: string; release(): void }> {
  const named = url ?? process.env.FACTUM_TEST_POSTGRES_URL;
  if (named) return { url: named, release: () => {} };
  // Plain JavaScript shared with the vitest setup; imported by URL, outside type checking.
  const shared = new URL('../../test-postgres/shared-postgres.mjs', import.meta.url).href;
  const { acquireSharedPostgres } = (await import(shared)) as {
    acquireSharedPostgres(): Promise<{ url: string; release(): void }>;
  };
  return acquireSharedPostgres();
}
