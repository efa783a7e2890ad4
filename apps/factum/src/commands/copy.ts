import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CopyProgress, CopyReport, LogTarget } from '@factum/event-log';
import type { CAC } from 'cac';
import { LOG_FILE, prepareDataDirectory } from '../data-directory.js';
import { plural } from '../terminal/describe-call.js';
import type { Spinner } from '../terminal/terminal.js';
import { shownText } from '../terminal/terminal-text.js';
import { type CliContext, existingLogOf, type GlobalOptions } from './cli-context.js';
import { CliError } from './cli-error.js';
import { type CopyOutput, CopyOutputSchema } from './json-output-schemas.js';
import { printJson } from './print-json.js';
import { EXIT_BROKEN, verifyOutputOf } from './verify.js';

type CopyOptions = GlobalOptions & {
  readonly to?: string;
  readonly postgres?: string;
  readonly json?: boolean;
};

export const COPY_EXIT_CODES = [
  '0  the log was copied, and the copy verifies through the source’s head',
  `${EXIT_BROKEN}  the log was copied as stored, and the copy does not verify: neither does the source`,
  '1  an error, nothing copied (the target not empty, a store unreachable)   2  a usage error',
];

const POSTGRES_URL = /^postgres(ql)?:\/\//;

type Target = { readonly target: LogTarget; readonly name: string; readonly created?: string };

/**
 * Where `--to` points: a PostgreSQL database, or a data directory (created private; a
 * directory this command created is removed again if the copy fails).
 */
function targetOf(to: string, context: CliContext): Target {
  if (POSTGRES_URL.test(to)) return { target: { postgres: to }, name: 'PostgreSQL' };
  const dataDir = resolve(context.cwd, to);
  const created = existsSync(dataDir) ? undefined : dataDir;
  prepareDataDirectory(dataDir);
  return { target: join(dataDir, LOG_FILE), name: shownText(dataDir), ...(created ? { created } : {}) };
}

/**
 * `factum copy --to <dir | postgresql://…>`: copies the whole log — the workspace's, or
 * `--postgres`'s — into a new one, as stored (see `EventLog.copy`), so that a log kept
 * in one SQLite file can move to PostgreSQL when a second host joins, or back. The copy
 * is checked as `factum verify` checks a log, through the source's head.
 */
export function registerCopy(cli: CAC, context: CliContext): void {
  cli
    .command(
      'copy',
      'Copy the whole log into a new one (a data directory, or PostgreSQL), and verify the copy',
    )
    .option('--to <dir|url>', 'the new log: a data directory, or a postgresql:// URL of an empty database')
    .option('--postgres <url>', 'copy the log kept in PostgreSQL instead of <dir>/events.sqlite')
    .option('--json', 'print one JSON document (CopyOutputSchema, see the README) instead of text')
    .action(async (options: CopyOptions) => {
      if (typeof options.to !== 'string' || options.to === '')
        throw new CliError('usage', 'copy needs --to <dir|postgresql://…>: where the new log goes');
      const from = sourceOf(options, context);
      const to = targetOf(options.to, context);
      const { EventLog } = await import('@factum/event-log');
      // On a terminal, how far the copy has come; a pipe gets the final line alone.
      const progress = options.json ? undefined : context.terminal.spinner(`copying to ${to.name}`);
      const onProgress = ({ table, rows }: CopyProgress) =>
        progress?.update(`copying to ${to.name}: ${plural(rows, 'row')} of ${table.replace('_', ' ')}`);
      const copied = await EventLog.copy(from, to.target, { onProgress }).catch((error: unknown) => {
        progress?.clear();
        if (to.created !== undefined) rmSync(to.created, { recursive: true, force: true });
        throw error;
      });
      const output = copyOutputOf(copied);
      if (progress === undefined) printJson(context.terminal, CopyOutputSchema, output);
      else printCopy(output, to.name, progress, context);
      return output.verified.ok ? 0 : EXIT_BROKEN;
    });
}

function sourceOf(options: CopyOptions, context: CliContext): LogTarget {
  const log = existingLogOf(options, context, 'copy');
  return 'dataDir' in log ? join(log.dataDir, LOG_FILE) : log;
}

function copyOutputOf({ rows, head, report }: CopyReport): CopyOutput {
  return { rows: { ...rows }, verified: verifyOutputOf(report, head === undefined ? [] : [head]) };
}

function printCopy(output: CopyOutput, where: string, progress: Spinner, context: CliContext): void {
  const { terminal } = context;
  const c = terminal.colors;
  const { rows, verified } = output;
  const carried = [
    plural(rows.invocations, 'invocation'),
    plural(rows.operations, 'operation'),
    plural(rows.tool_results, 'stored result'),
    plural(rows.hosts, 'host'),
  ].join(', ');
  progress.succeed(`copied ${plural(rows.events, 'event')} to ${where} (${carried})`);
  if (verified.broken !== null) {
    terminal.line(
      `${c.red('✖')} the copy breaks at sequence ${verified.broken.sequence}, as the source does: ${shownText(verified.broken.reason)}`,
    );
    return;
  }
  terminal.line(
    `${c.green('✔')} the copy checks out: every digest recomputed from its bytes, through the source’s head`,
  );
  if (verified.head !== null) terminal.line(`  head  ${verified.head.sequence}:${verified.head.digest}`);
}
