import { factNeedsResult, type JsonValue } from '@factum/agent-facts';
import type { CAC } from 'cac';
import { hasLog } from '../data-directory.js';
import { forkText, renderTimeline } from '../terminal/render-timeline.js';
import { shownText } from '../terminal/terminal-text.js';
import { type CliContext, dataDirOf, type GlobalOptions } from './cli-context.js';
import { findInvocation, indexInvocations } from './invocation-index.js';
import { ShowOutputSchema } from './json-output-schemas.js';
import { statusName } from './log.js';
import { openLogOf } from './open-runtime.js';
import { printJson } from './print-json.js';

type ShowOptions = GlobalOptions & {
  readonly session?: string;
  readonly full?: boolean;
  readonly json?: boolean;
};

const bounds = { maxEvents: 100_000, maxBytes: 256 * 1024 * 1024 };

/**
 * `factum show <invocation-id>`: one invocation's facts as a readable timeline, with
 * the model's text and reasoning and each tool's result (an excerpt; `--full` for all),
 * or as one JSON document with `--json`.
 */
export function registerShow(cli: CAC, context: CliContext): void {
  cli
    .command(
      'show <invocation-id>',
      'Show one invocation as a timeline: each T1 joined to its T2, with results',
    )
    .option('--session <id>', 'the session the invocation is in (faster on a large log)')
    .option('--full', 'print tool results, text and reasoning whole (default: an excerpt of each)')
    .option('--json', 'print one JSON document (ShowOutputSchema, see the README) with every fact and result')
    .action(async (id: string, options: ShowOptions) => {
      const { terminal } = context;
      const c = terminal.colors;
      const dataDir = dataDirOf(options, context);
      // No log here: nothing to show, and nothing is created to say so.
      if (!hasLog(dataDir)) findInvocation([], String(id));
      await using log = await openLogOf(dataDir);
      const index = await indexInvocations(
        log,
        options.session === undefined ? {} : { sessionId: String(options.session) },
      );
      const summary = findInvocation(index, String(id));
      const { invocation } = summary;
      const events = await log.invocationEvents(invocation, bounds);
      // A fork's first fact names where its history comes from.
      const [first] = await log.read({ scope: { session: invocation.sessionId }, limit: 1 });
      const fork = first?.event.fact.kind === 'session_forked' ? first.event.fact : undefined;
      const readResult = async (eventId: string) =>
        (await log.resolveToolResult(invocation.sessionId, eventId)).json();
      if (options.json) {
        printJson(terminal, ShowOutputSchema, {
          invocation,
          status: statusName(summary),
          ...(fork === undefined
            ? {}
            : {
                forkedFrom: {
                  session: invocation.sessionId,
                  source: fork.source,
                  ...(fork.step === undefined ? {} : { step: fork.step }),
                },
              }),
          events: await Promise.all(
            events.map(async ({ sequence, event }) => ({
              sequence,
              eventId: event.id,
              timestamp: event.timestamp,
              fact: event.fact,
              ...(factNeedsResult(event.fact) ? { result: (await readResult(event.id)) as JsonValue } : {}),
            })),
          ),
        });
        return 0;
      }
      terminal.line(
        `${c.bold(shownText(invocation.invocationId))} ${c.dim(shownText(`session ${invocation.sessionId} · turn ${invocation.turnId} · run ${invocation.runId}`))}`,
      );
      if (fork !== undefined) terminal.line(c.dim(shownText(forkText(fork))));
      const lines = await renderTimeline(events, { colors: c, readResult, full: options.full === true });
      for (const line of lines) terminal.line(line);
      return 0;
    });
}
