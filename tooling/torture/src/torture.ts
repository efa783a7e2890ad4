// `pnpm torture -- --kills 1000 [--workers 2] [--hosts n] [--seed n] [--sessions 2] [--keep]
//   [--store sqlite|postgres] [--postgres-url url] [--partition]`: prints one JSON summary line on
// stdout; every violation goes to stderr. On PostgreSQL without a URL it uses
// FACTUM_TEST_POSTGRES_URL, or the tests' shared embedded server.
import { parseArgs } from 'node:util';
import { runTorture } from './run-torture.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    kills: { type: 'string', default: '100' },
    workers: { type: 'string', default: '2' },
    hosts: { type: 'string' },
    seed: { type: 'string' },
    sessions: { type: 'string', default: '2' },
    'rotate-every': { type: 'string', default: '10' },
    keep: { type: 'boolean', default: false },
    store: { type: 'string' },
    'postgres-url': { type: 'string' },
    partition: { type: 'boolean', default: false },
  },
});
// The partition mode: hosts (3 unless named, at least 2) on PostgreSQL, each behind a proxy.
const partition = values.partition;
const hosts = Number(values.hosts ?? (partition ? 3 : 1));
if (!(hosts >= (partition ? 2 : 1) && Number.isInteger(hosts))) {
  process.stderr.write(
    partition
      ? `--partition runs --hosts 2 or more on one log, not ${values.hosts}\n`
      : `--hosts is a whole number ≥ 1 (2 or more share one log), not ${values.hosts}\n`,
  );
  process.exit(2);
}
const store = values.store ?? (partition ? 'postgres' : 'sqlite');
if (store !== 'sqlite' && store !== 'postgres') {
  process.stderr.write(`--store is sqlite or postgres, not ${store}\n`);
  process.exit(2);
}
if (partition && store !== 'postgres') {
  process.stderr.write(
    '--partition runs on PostgreSQL (a proxy per host before the server), not --store sqlite\n',
  );
  process.exit(2);
}
const postgres = store === 'postgres' ? await postgresServer(values['postgres-url']) : undefined;

const summary = await runTorture({
  kills: Number(values.kills),
  workers: Number(values.workers),
  hosts,
  partition,
  sessions: Number(values.sessions),
  rotateEvery: Number(values['rotate-every']),
  keep: values.keep,
  store,
  ...(postgres === undefined ? {} : { postgresUrl: postgres.url }),
  onProgress: ({ kills, violations, seconds }) => {
    // A round of several hosts takes seconds: say where a run stands more often.
    if (kills % (hosts >= 2 ? 10 : 100) === 0)
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
    ...(summary.partition ? { partition: true, faults: summary.faults } : {}),
    effects_judged: summary.effectsJudged,
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
