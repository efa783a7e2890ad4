// `pnpm torture -- --kills 1000 [--workers 2] [--seed n] [--sessions 2] [--keep]`:
// prints one JSON summary line on stdout; every violation goes to stderr.
import { parseArgs } from 'node:util';
import { runTorture } from './run-torture.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    kills: { type: 'string', default: '100' },
    workers: { type: 'string', default: '2' },
    seed: { type: 'string' },
    sessions: { type: 'string', default: '2' },
    'rotate-every': { type: 'string', default: '10' },
    keep: { type: 'boolean', default: false },
  },
});

const summary = await runTorture({
  kills: Number(values.kills),
  workers: Number(values.workers),
  sessions: Number(values.sessions),
  rotateEvery: Number(values['rotate-every']),
  keep: values.keep,
  onProgress: ({ kills, violations, seconds }) => {
    if (kills % 100 === 0)
      process.stderr.write(`${kills} kills, ${violations} violations, ${seconds.toFixed(0)} s\n`);
  },
  ...(values.seed === undefined ? {} : { seed: Number(values.seed) }),
});
for (const violation of summary.violations)
  process.stderr.write(`violation ${violation.rule}: ${violation.detail}\n`);
if (summary.violations.length > 0) process.stderr.write(`logs and ledgers kept in ${summary.directory}\n`);
process.stdout.write(
  `${JSON.stringify({
    kills: summary.kills,
    invariants_checked: summary.invariantsChecked,
    violations: summary.violations.length,
    seconds: Number(summary.seconds.toFixed(1)),
    seed: summary.seed,
    workers: summary.workers,
    reconciled: summary.reconciled,
    planned: summary.byPoint,
    died_at: summary.diedAt,
    child_errors: summary.childErrors,
  })}\n`,
);
process.exitCode = summary.violations.length === 0 ? 0 : 1;
