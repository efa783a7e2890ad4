import { type FactOf, terminalStatusOf } from '@factum/agent-facts';
import type { CAC } from 'cac';
import { hasLog } from '../data-directory.js';
import { oneLine, plural } from '../terminal/describe-call.js';
import { forkText } from '../terminal/render-timeline.js';
import { shownText } from '../terminal/terminal-text.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { CliError } from './cli-error.js';
import { type InvocationSummary, indexInvocations } from './invocation-index.js';
import { type LogOutput, LogOutputSchema } from './json-output-schemas.js';
import { describeOutcome } from './live-run.js';
import { openLogOf } from './open-runtime.js';
import { ownershipText } from './ownership-text.js';
import { printJson } from './print-json.js';

type LogOptions = GlobalOptions & {
  readonly session?: string;
  readonly limit?: number;
  readonly page?: number;
  readonly json?: boolean;
};

function positive(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new CliError('usage', `${name} must be a whole number ≥ 1`);
  return number;
}

/** `factum log`: sessions and their invocations with how each ended, newest last, in pages. */
export function registerLog(cli: CAC, context: CliContext): void {
  cli
    .command('log', 'List sessions and invocations with their status (newest last)')
    .option('--session <id>', 'only this session')
    .option('--limit <n>', 'invocations per page (default 20)')
    .option('--page <n>', 'page to show, 1 = newest (default 1)')
    .option('--json', 'print one JSON document (LogOutputSchema, see the README) instead of text')
    .action(async (options: LogOptions) => {
      const limit = positive(options.limit, '--limit', 20);
      const page = positive(options.page, '--page', 1);
      const { terminal } = context;
      const c = terminal.colors;
      const dataDir = dataDirOf(options, context);
      await using log = hasLog(dataDir) ? await openLogOf(dataDir) : undefined;
      const sessionId = options.session === undefined ? undefined : String(options.session);
      const forks = new Map<string, FactOf<'session_forked'>>();
      const all =
        log === undefined
          ? []
          : await indexInvocations(log, sessionId === undefined ? { forks } : { sessionId, forks });
      const end = all.length - (page - 1) * limit;
      const shown = all.slice(Math.max(0, end - limit), Math.max(0, end));
      if (shown.length === 0 && all.length > 0)
        throw new CliError('usage', `--page ${page} is past the oldest invocation`);
      // A fork whose first turn has not run (the web's "Fork from here") has no invocation
      // yet: the newest page lists it after the invocations.
      const withTurns = new Set(all.map((summary) => summary.invocation.sessionId));
      const waiting = page === 1 ? [...forks].filter(([forked]) => !withTurns.has(forked)) : [];
      if (options.json) {
        const listed = new Set([
          ...shown.map((summary) => summary.invocation.sessionId),
          ...waiting.map(([forked]) => forked),
        ]);
        printJson(terminal, LogOutputSchema, {
          invocations: shown.map(logEntryOf),
          forks: [...forks]
            .filter(([session]) => listed.has(session))
            .map(([session, fact]) => ({
              session,
              source: fact.source,
              ...(fact.step ? { step: fact.step } : {}),
            })),
          total: all.length,
          page,
          limit,
        });
        return 0;
      }
      if (all.length === 0 && waiting.length === 0) {
        terminal.line(
          sessionId
            ? `no invocations in session ${shownText(sessionId)}`
            : 'the log is empty: try `factum demo`',
        );
        return 0;
      }
      let session: string | undefined;
      for (const summary of shown) {
        if (summary.invocation.sessionId !== session) {
          session = summary.invocation.sessionId;
          terminal.line();
          terminal.line(c.bold(shownText(session)));
          const fork = forks.get(session);
          if (fork !== undefined) terminal.line(c.dim(`  ${shownText(forkText(fork))}`));
        }
        terminal.line(`  ${row(summary, context)}`);
        if (summary.outcome === undefined && log !== undefined) {
          const ownership = await log.invocationOwnership(summary.invocation);
          terminal.line(c.dim(`      ${ownershipText(ownership)}`));
        }
      }
      for (const [forked, fork] of waiting) {
        terminal.line();
        terminal.line(c.bold(shownText(forked)));
        terminal.line(c.dim(`  ${shownText(forkText(fork))}`));
        terminal.line(c.dim(`  no turn yet: factum run --session ${shownText(forked)} "…"`));
      }
      terminal.line();
      if (all.length === 0) return 0;
      const first = Math.max(0, end - limit) + 1;
      terminal.line(c.dim(`${first}–${end} of ${plural(all.length, 'invocation')}, newest last`));
      if (first > 1) terminal.line(c.dim(`older: factum log --page ${page + 1}`));
      return 0;
    });
}

/** One invocation as `log --json` prints it. */
export function logEntryOf(summary: InvocationSummary): LogOutput['invocations'][number] {
  return {
    invocation: summary.invocation,
    openedSequence: summary.openedSequence,
    openedAt: summary.openedAt,
    status: statusName(summary),
    input: summary.input,
    outcome: summary.outcome ?? null,
    steps: summary.steps,
    toolCalls: summary.dispatched,
    uncertainOperations: [...summary.open.keys()],
    continuedBy: summary.continuedBy ?? null,
  };
}

/** `unfinished` until the invocation ends, then how it ended. */
export function statusName(summary: InvocationSummary): LogOutput['invocations'][number]['status'] {
  if (summary.outcome === undefined) return 'unfinished';
  return terminalStatusOf(summary.outcome);
}

function row(summary: InvocationSummary, context: CliContext): string {
  const c = context.terminal.colors;
  const time = summary.openedAt.replace('T', ' ').slice(0, 19);
  const status = summary.outcome === undefined ? c.yellow('unfinished') : statusOf(summary, context);
  const what =
    summary.input.kind === 'message'
      ? JSON.stringify(oneLine(summary.input.content, 48))
      : `${summary.input.kind} of ${shownText(summary.input.source.invocation.runId)}`;
  const uncertain = summary.open.size > 0 ? ` ${c.yellow(`⚠ ${summary.open.size} uncertain`)}` : '';
  return `${c.dim(shownText(time))}  ${shownText(summary.invocation.invocationId)}  ${c.dim(shownText(summary.invocation.runId))}  ${status}  ${what} ${c.dim(`· ${plural(summary.dispatched, 'tool call')}`)}${uncertain}`;
}

function statusOf(summary: InvocationSummary, context: CliContext): string {
  const c = context.terminal.colors;
  const outcome = summary.outcome!;
  const text =
    outcome.kind === 'failed' ? shownText(`failed {${outcome.error.code}}`) : describeOutcome(outcome);
  if (outcome.kind === 'completed') return c.green(text);
  if (outcome.kind === 'approval_pending') {
    // Its approvals were decided and another invocation took the run on from there.
    if (summary.continuedBy !== undefined)
      return c.dim(`parked for approval, continued in ${shownText(summary.continuedBy)}`);
    return c.yellow(`${text} (factum approvals)`);
  }
  return outcome.kind === 'failed' ? c.red(text) : c.yellow(text);
}
