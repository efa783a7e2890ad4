import type { ChainAnchor, ChainReport, EventLog } from '@factum/event-log';
import type { CAC } from 'cac';
import { plural } from '../terminal/describe-call.js';
import { shownText } from '../terminal/terminal-text.js';
import { type CliContext, existingLogOf, type GlobalOptions } from './cli-context.js';
import { CliError } from './cli-error.js';
import { AnchorTextSchema, type VerifyOutput, VerifyOutputSchema } from './json-output-schemas.js';
import { openLogOf } from './open-runtime.js';
import { printJson } from './print-json.js';

type VerifyOptions = GlobalOptions & {
  readonly anchor?: unknown;
  readonly postgres?: string;
  readonly json?: boolean;
};

/** Exit 3: the log does not verify. */
export const EXIT_BROKEN = 3;

export const VERIFY_EXIT_CODES = [
  '0  every row parses, no sequence is missing, both chains match, every anchor holds',
  `${EXIT_BROKEN}  the log does not verify: the first break is printed`,
  '1  an error (printed on stderr)   2  a usage error',
];

/** `--anchor <sequence>:<digest>`, as `factum verify` prints its head. */
export function parseAnchor(text: string): ChainAnchor {
  const parsed = AnchorTextSchema.safeParse(text);
  if (parsed.success) return parsed.data;
  throw new CliError(
    'usage',
    `--anchor ${shownText(text.slice(0, 100))}: expected <sequence>:sha256:<64 hex digits>, as factum verify prints the head`,
  );
}

/** A log's `ChainReport` as `verify --json` and `GET /api/verify` give it. */
export function verifyOutputOf(report: ChainReport, anchors: readonly ChainAnchor[]): VerifyOutput {
  return {
    ok: report.ok,
    events: report.events,
    head: report.head ?? null,
    anchors: [...anchors],
    broken: report.ok ? null : { sequence: report.brokenAt, reason: report.reason },
  };
}

const anchorText = (anchor: ChainAnchor) => `${anchor.sequence}:${anchor.digest}`;

/**
 * `factum verify`: recomputes every digest of the log from its stored bytes — the log's
 * chain and each session's — and checks the chain passes through every `--anchor`, a
 * head printed earlier and kept where the log's writers cannot reach. The chains alone
 * catch a damaged or edited row; only an anchor kept elsewhere catches a log cut short,
 * or rewritten with its digests recomputed. Appends nothing and takes no lease.
 */
export function registerVerify(cli: CAC, context: CliContext): void {
  cli
    .command('verify', 'Check every digest of the log, and that it still holds the prefixes you anchored')
    .option('--anchor <sequence:digest>', 'a head printed by an earlier verify; repeat for several')
    .option('--postgres <url>', 'verify the log kept in PostgreSQL instead of <dir>/events.sqlite')
    .option('--json', 'print one JSON document (VerifyOutputSchema, see the README) instead of text')
    .action(async (options: VerifyOptions) => {
      const anchors = [options.anchor ?? []].flat().map((value) => parseAnchor(String(value)));
      await using log = await openForVerify(options, context);
      const report = await log.verifyChain({ anchors });
      const output = verifyOutputOf(report, anchors);
      if (options.json) printJson(context.terminal, VerifyOutputSchema, output);
      else printReport(output, context);
      return output.ok ? 0 : EXIT_BROKEN;
    });
}

async function openForVerify(options: VerifyOptions, context: CliContext): Promise<EventLog> {
  const log = existingLogOf(options, context, 'verify');
  if ('dataDir' in log) return openLogOf(log.dataDir);
  const { EventLog } = await import('@factum/event-log');
  return EventLog.open(log);
}

function printReport(output: VerifyOutput, context: CliContext): void {
  const { terminal } = context;
  const c = terminal.colors;
  const checked = plural(output.events, 'event');
  if (output.broken === null) {
    const held = output.anchors.length > 0 ? `, and ${plural(output.anchors.length, 'anchor')} held` : '';
    terminal.line(
      `${c.green('✔')} ${checked} ${output.events === 1 ? 'checks' : 'check'} out: every row parses, no sequence is missing, both chains match${held}`,
    );
  } else {
    terminal.line(
      `${c.red('✖')} the log breaks at sequence ${output.broken.sequence}: ${shownText(output.broken.reason)}`,
    );
    terminal.line(c.dim(`  ${checked} before it ${output.events === 1 ? 'checks' : 'check'} out`));
  }
  if (output.head === null) return;
  terminal.line(`  head  ${anchorText(output.head)}`);
  if (output.broken === null)
    terminal.line(
      c.dim(
        '  keep it where the log’s writers cannot reach it; `factum verify --anchor <head>` later shows the log still holds this prefix',
      ),
    );
}
